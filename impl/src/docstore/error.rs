//! [`DocLockError`]: the one error type of the document-store lock.

use std::fmt;
use std::time::Duration;

use super::store::{StoreError, Token};

/// Everything that can go wrong acquiring, checking, writing under or releasing a document
/// lock. Every message names the lock (`<index>/<id>`); where the store answered or failed to,
/// the source ([`StoreError`]) names the request (method and URL) and the status, and
/// [`DocLockError::advice`] says what to do. [`DocLockError::is_held`] tells "someone else holds
/// it, try later" from everything else.
#[derive(Debug)]
#[non_exhaustive]
pub enum DocLockError {
    /// Another owner holds the lock: the store refused the acquire (400 from the acquire
    /// script, or 409 from `_create`).
    Held {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// The store's refusal.
        answer: StoreError,
    },
    /// A blocking acquire gave up: the lock stayed held (or the store did not answer) for the
    /// whole timeout.
    TimedOut {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// How long the acquire tried.
        waited: Duration,
        /// The last attempt's error.
        last: Box<DocLockError>,
    },
    /// The lease has passed (or is about to): stop writing; another owner may hold the lock.
    LeaseExpired {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// The holder's deadline, milliseconds on its own clock ([`super::DocStore::now`]).
        deadline_ms: u64,
        /// The clock when checked.
        now_ms: u64,
    },
    /// The data document refused a fenced write: it has accepted a write of a newer grant, so
    /// this lock is lost. Release the guard (drop it) and acquire again.
    Fenced {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// This holder's token.
        token: Token,
        /// The data document's refusal.
        answer: StoreError,
    },
    /// The release found the lock document no longer ours (409 from compare-and-delete, 404):
    /// its lease passed and another owner took it, or someone deleted it. Writes made under
    /// this lock may have interleaved with another holder's (fencing refused the stale ones).
    NotOwner {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// The store's answer to the compare-and-delete.
        answer: StoreError,
    },
    /// The fixed recipe found its grant gone: the lock document read back after the claim no
    /// longer carries this guard's token (a fail-over lost the acquire, or a newer holder took
    /// the lock), or a session's read found another token in the data document's fence (a
    /// newer holder claimed it, or the store lost the claim: a re-created or rolled-back
    /// document). The lock is lost: release the guard and acquire again.
    Superseded {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// What was read: "the lock document" or "the data document's fence".
        what: &'static str,
        /// This holder's token.
        token: Token,
        /// The token found there (`None`: no document, or no fence).
        found: Option<Token>,
    },
    /// A fenced write's patch is not a JSON object, or names `fence` (the recipe's own field):
    /// nothing was sent.
    BadPatch {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// What is wrong with the patch.
        reason: &'static str,
    },
    /// The guard cannot do this now: a write on a reader lock, a write after the lease check
    /// failed or after a fenced write was refused.
    NotHolding {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// What the guard is doing instead.
        state: &'static str,
    },
    /// A stored script this client calls does not hold the source this client expects
    /// ([`super::LeaseLock::verify_scripts`]): another program stored something else under
    /// this client's versioned id, or nothing is stored there. Install the scripts
    /// ([`super::LeaseLock::install_scripts`]) or find who wrote the other source.
    ScriptMismatch {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// The stored script's id.
        id: String,
        /// The source this client expects.
        expected: String,
        /// The source stored under the id (`None`: nothing).
        found: Option<String>,
    },
    /// This `LeaseLock` already has a live guard: one holder per owner id. The lock document's
    /// script grants the lock again to its own owner, so a second guard would be a second
    /// holder. Release the first guard, or give each holder its own `LeaseLock` (its own
    /// owner id).
    HeldByThisOwner {
        /// `<index>/<id>` of the lock document.
        lock: String,
    },
    /// The guarded install of the lock document cannot start its tokens above a data
    /// document's fence: the fence's `_primary_term` is above the lock index's (the lock index
    /// was re-created after a fail-over had raised its term), and no number of writes raises
    /// a term. Every claim under the new lock document would be refused.
    InstallBelowFence {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// `<index>/<id>` of the data document.
        data: String,
        /// The fence found there.
        fence: Token,
        /// The installed lock document's version.
        installed: Token,
    },
    /// The store gave no usable answer (no answer after every attempt; an unexpected status;
    /// an unreadable body).
    Store {
        /// `<index>/<id>` of the lock document.
        lock: String,
        /// What went wrong with the request.
        source: StoreError,
    },
}

impl DocLockError {
    /// Whether someone else holds the lock (also [`DocLockError::TimedOut`] waiting for it), so
    /// trying again later may succeed.
    pub fn is_held(&self) -> bool {
        match self {
            DocLockError::Held { .. } => true,
            DocLockError::TimedOut { last, .. } => last.is_held(),
            _ => false,
        }
    }

    /// Whether this lock is lost ([`DocLockError::LeaseExpired`], [`DocLockError::Fenced`],
    /// [`DocLockError::NotOwner`], [`DocLockError::Superseded`]): stop writing.
    pub fn is_lost(&self) -> bool {
        matches!(
            self,
            DocLockError::LeaseExpired { .. }
                | DocLockError::Fenced { .. }
                | DocLockError::NotOwner { .. }
                | DocLockError::Superseded { .. }
        )
    }

    /// What to do about it, in one sentence (`None` where the message says all). Kept out of
    /// the message, as the std convention has it: `Display` says what happened, `source()`
    /// why, and this what to do; the `lockwright` CLI prints it on a line of its own.
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            DocLockError::Held { .. } => "retry later, or acquire with a timeout",
            DocLockError::TimedOut { .. } => {
                "the lock stayed held (or the store did not answer): retry later or wait longer; \
                 the source error is the last attempt's"
            }
            DocLockError::LeaseExpired { .. } => {
                "stop writing, since another owner may hold the lock now, and acquire it again"
            }
            DocLockError::Fenced { .. } | DocLockError::Superseded { .. } => {
                "release the guard without writing again, and acquire the lock again"
            }
            DocLockError::NotOwner { .. } => {
                "writes made under this lock may have interleaved with another holder's (fencing \
                 refused the stale ones): check them, and acquire again before writing"
            }
            DocLockError::BadPatch { .. } => {
                "pass the fields to write as a JSON object, without a `fence` field (the lock \
                 sets it)"
            }
            DocLockError::NotHolding { .. } => "acquire the lock (again) before using it",
            DocLockError::InstallBelowFence { .. } => {
                "move the protected data to a new document (or clear its fence once no old \
                 holder can write) before using this lock"
            }
            DocLockError::ScriptMismatch { found: Some(_), .. } => {
                "another program stored a different script under this client's id: find it \
                 (script ids name their version, so it is not another lockwright version), then \
                 install this client's scripts again"
            }
            DocLockError::ScriptMismatch { found: None, .. } => {
                "install the scripts first (`install_scripts`)"
            }
            DocLockError::HeldByThisOwner { .. } => {
                "release that guard first, or give each holder its own LeaseLock"
            }
            DocLockError::Store { source, .. } => return source.advice(),
        })
    }

    /// `<index>/<id>` of the lock document.
    pub fn lock(&self) -> &str {
        match self {
            DocLockError::Held { lock, .. }
            | DocLockError::TimedOut { lock, .. }
            | DocLockError::LeaseExpired { lock, .. }
            | DocLockError::Fenced { lock, .. }
            | DocLockError::NotOwner { lock, .. }
            | DocLockError::NotHolding { lock, .. }
            | DocLockError::Superseded { lock, .. }
            | DocLockError::BadPatch { lock, .. }
            | DocLockError::InstallBelowFence { lock, .. }
            | DocLockError::HeldByThisOwner { lock }
            | DocLockError::ScriptMismatch { lock, .. }
            | DocLockError::Store { lock, .. } => lock,
        }
    }

    /// The store error underneath, if any.
    pub fn store_error(&self) -> Option<&StoreError> {
        match self {
            DocLockError::Held { answer, .. }
            | DocLockError::Fenced { answer, .. }
            | DocLockError::NotOwner { answer, .. } => Some(answer),
            DocLockError::Store { source, .. } => Some(source),
            DocLockError::TimedOut { last, .. } => last.store_error(),
            _ => None,
        }
    }
}

impl fmt::Display for DocLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocLockError::Held { lock, .. } => {
                write!(f, "lock {lock} is held by another owner")
            }
            DocLockError::TimedOut { lock, waited, .. } => write!(
                f,
                "timed out after {:.3}s waiting for lock {lock}",
                waited.as_secs_f64()
            ),
            DocLockError::LeaseExpired {
                lock,
                deadline_ms,
                now_ms,
            } => write!(
                f,
                "lease on lock {lock} has passed (deadline {deadline_ms} ms, now {now_ms} ms on this client's clock)"
            ),
            DocLockError::Fenced { lock, token, .. } => write!(
                f,
                "fenced write under lock {lock} with token {token} was refused: a newer holder has written, so this lock is lost"
            ),
            DocLockError::NotOwner { lock, .. } => write!(
                f,
                "lock {lock} was no longer ours at release or renewal: its lease passed and another owner took it, or someone deleted the lock document"
            ),
            DocLockError::Superseded {
                lock,
                what,
                token,
                found,
            } => {
                let found = found.map_or("none".to_owned(), |t| t.to_string());
                write!(
                    f,
                    "lock {lock} is lost: {what} carries token {found}, not this holder's {token} (a newer holder took the lock, or the store lost this grant's write)"
                )
            }
            DocLockError::BadPatch { lock, reason } => write!(
                f,
                "fenced write under lock {lock} not sent: its patch must be a JSON object of fields other than `fence` ({reason})"
            ),
            DocLockError::NotHolding { lock, state } => {
                write!(f, "lock {lock} cannot be used for this: {state}")
            }
            DocLockError::InstallBelowFence {
                lock,
                data,
                fence,
                installed,
            } => write!(
                f,
                "lock {lock} was installed at {installed}, but the fence of {data} is {fence}, a higher _primary_term than the lock index has: every claim would be refused"
            ),
            DocLockError::ScriptMismatch {
                lock,
                id,
                expected,
                found,
            } => match found {
                Some(found) => write!(
                    f,
                    "lock {lock}: stored script {id} holds `{found}`, not this client's `{expected}`"
                ),
                None => write!(
                    f,
                    "lock {lock}: no stored script {id} (this client's `{expected}`)"
                ),
            },
            DocLockError::HeldByThisOwner { lock } => write!(
                f,
                "lock {lock} is already held through this LeaseLock (one holder per owner id)"
            ),
            DocLockError::Store { lock, .. } => write!(f, "a store request for lock {lock} failed"),
        }
    }
}

impl std::error::Error for DocLockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DocLockError::Held { answer, .. }
            | DocLockError::Fenced { answer, .. }
            | DocLockError::NotOwner { answer, .. } => Some(answer),
            DocLockError::Store { source, .. } => Some(source),
            DocLockError::TimedOut { last, .. } => Some(&**last),
            _ => None,
        }
    }
}
