//! [`LeaseGuard`], a held lock: what it holds of its [`LeaseLock`] (a borrow or a share), its
//! token and deadline, the lease check and the renewal. Its session is in `session.rs`, its
//! claim in `claim.rs`, its release in `release.rs`.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::lock::LeaseLock;
use super::recipe::{Pc, Step};
use super::store::{DocStore, StoredScript, Token};
use super::DocLockError;

/// What a [`LeaseGuard`] holds of its lock: a borrow ([`LeaseLock::try_acquire`]) or a share
/// ([`LeaseLock::try_acquire_owned`]).
pub(super) enum LockRef<'a, S: DocStore> {
    Borrowed(&'a LeaseLock<S>),
    Shared(Arc<LeaseLock<S>>),
}

impl<S: DocStore> Clone for LockRef<'_, S> {
    fn clone(&self) -> Self {
        match self {
            LockRef::Borrowed(lock) => LockRef::Borrowed(lock),
            LockRef::Shared(lock) => LockRef::Shared(Arc::clone(lock)),
        }
    }
}

impl<S: DocStore> Deref for LockRef<'_, S> {
    type Target = LeaseLock<S>;

    fn deref(&self) -> &LeaseLock<S> {
        match self {
            LockRef::Borrowed(lock) => lock,
            LockRef::Shared(lock) => lock,
        }
    }
}

/// A held lease.
///
/// The safe way to use it is [`LeaseGuard::claim`] first: it writes the token into the data
/// document before anything reads it, and hands back the [`Claimed`](super::Claimed) handle
/// through which the session reads and writes. Without the claim ([`LeaseGuard::read`], then
/// [`LeaseGuard::fenced_write`]) the fence only refuses tokens older than one the document
/// has already seen, so a holder paused past its lease can still land a write between this
/// holder's read and its write: a lost update (`docs/docstore.md`).
///
/// # Your own resource
///
/// A resource of your own protected by this lock must do what the data document's scripts
/// do: keep the highest token it has accepted (`_primary_term` first, then `_seq_no`), refuse
/// any lower one, atomically with the write it guards; and accept the claim — a write of the
/// token alone — before the holder's first read. After the claim, read the lock document back
/// and go on only if it still carries this grant ([`LeaseGuard::claim`] does this for a data
/// document; for your own resource, claim it, then call [`LeaseGuard::read`] on any document
/// of the lock's store or `claim` a data document, which reads the grant back first: a
/// fail-over may have lost the acquire, and only the read-back after the claim finds that).
/// Condition each write on your own read of the same resource. Check
/// [`LeaseGuard::ensure_valid`] right before every write that carries [`LeaseGuard::token`];
/// the lease alone never suffices (a pause can outlast it).
///
/// Release with [`LeaseGuard::release`] or by dropping it.
///
/// A guard of [`LeaseLock::try_acquire`] or [`LeaseLock::acquire`] borrows its lock; one of
/// [`LeaseLock::try_acquire_owned`] or [`LeaseLock::acquire_owned`] (on an `Arc<LeaseLock>`)
/// holds a share of it instead, so it can be moved into a thread or kept in a struct. One
/// `LeaseLock` has at most one live guard (one holder per owner id): a second acquire through
/// it is refused with [`DocLockError::HeldByThisOwner`](super::DocLockError::HeldByThisOwner)
/// until the first guard is dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LeaseGuard<'a, S: DocStore> {
    pub(super) lock: LockRef<'a, S>,
    pub(super) pc: Pc,
    pub(super) token: Token,
    /// The lock document's `_seq_no`/`_primary_term` as this guard last wrote it: the
    /// acquire's (the token), then each renewal's. Release and renewal are conditioned on it;
    /// the fencing token stays `token`.
    pub(super) version: Token,
    pub(super) deadline: Option<u64>,
    pub(super) released: bool,
    /// Whether the holder has claimed, read or written the data document under this grant
    /// (the claim must come first).
    pub(super) accessed: bool,
    /// Whether the holder claimed the data document (the fixed recipe then finds its own
    /// token in the fence at every read).
    pub(super) claimed: bool,
    /// The fixed recipe: whether the lock document was read back and still carried the token.
    pub(super) verified: bool,
    /// The fixed recipe: the document the session's read was of (`index`, `id`) and its
    /// `_seq_no`/`_primary_term` as the read returned them (`None`: it found no document); a
    /// write of that document carries them as `if_seq_no`/`if_primary_term`, a write of any
    /// other document reads it first (issue #35: the write was conditioned on whatever the
    /// last read read).
    pub(super) read: Option<(String, String, Option<Token>)>,
    /// The clock read before a renewal that got no answer (it may have been applied): the
    /// next renewal, refused because the document moved on, reads the document back to tell
    /// its own applied renewal from a loss (issue #35: it reported `NotOwner`).
    pub(super) renew_unanswered: Option<u64>,
}

impl<S: DocStore> fmt::Debug for LeaseGuard<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeaseGuard")
            .field("lock", &self.lock.lock_name())
            .field("owner", &self.lock.owner)
            .field("token", &self.token)
            .field("deadline", &self.deadline)
            .field("pc", &self.pc)
            .finish()
    }
}

impl<S: DocStore> LeaseGuard<'_, S> {
    /// The fencing token: the `_primary_term`/`_seq_no` of the acquiring write.
    pub fn token(&self) -> Token {
        self.token
    }

    /// The lease deadline, in milliseconds on [`DocStore::now`]'s clock (the client's own,
    /// monotonic in `HttpStore`): the first send of the acquire plus the lease minus the clock
    /// margin ([`LeaseLock::with_clock_margin`]). The server starts its lease (`ctx._now` +
    /// lease) only when the request arrives, but `ctx._now` is a cached time, and another
    /// node's after a fail-over: the margin is what keeps the deadline before the lease's end
    /// as the server will judge it, as long as the server's clock is off by no more than it.
    /// `None` for the test-only recipes without a lease.
    pub fn valid_until(&self) -> Option<u64> {
        self.deadline
    }

    /// Checks the lease: one clock read; valid while now < the deadline. Call it right before
    /// every write that carries the token ([`LeaseGuard::fenced_write`] does).
    ///
    /// # Errors
    /// [`DocLockError::LeaseExpired`] (the guard is then lost: dropping it sends nothing,
    /// since the lease is anyone's to take); [`DocLockError::NotHolding`] after a refused
    /// fenced write.
    pub fn ensure_valid(&mut self) -> Result<(), DocLockError> {
        let lock = self.lock.clone();
        self.usable()?;
        // The as-written recipes have no lease and nothing to check.
        if (lock.rules)
            .step_where(lock.role, Pc::Computing, |s| s == Step::CheckLease)
            .is_none()
        {
            return Ok(());
        }
        let deadline = self.deadline.expect("a leased guard has a deadline");
        let now = lock.store.now();
        if now < deadline {
            if self.pc == Pc::Computing {
                self.pc = Pc::Writing;
            }
            Ok(())
        } else {
            self.pc = Pc::Idle;
            Err(DocLockError::LeaseExpired {
                lock: lock.lock_name(),
                deadline_ms: deadline,
                now_ms: now,
            })
        }
    }

    /// Extends the lease: the `lease-renew` script (it refuses a document another owner
    /// holds), sent only if the lock document is still the
    /// version this guard last wrote (`POST <index>/_update/<id>?if_seq_no=S&if_primary_term=T`
    /// with its acquire's or its last renewal's `_seq_no`/`_primary_term`; the server measures
    /// the new lease with `ctx._now`). The deadline counts from this send. **The fencing token
    /// does not change**: it stays the acquire's, so a data document claimed with it
    /// ([`LeaseGuard::claim`]) keeps accepting this holder's reads and writes. (A renewal is a
    /// write, so the lock document's version moves on; the guard keeps that version apart, for
    /// its release and its next renewal. Any later grant to another owner is a later write of
    /// the lock document and so a higher token than this one.) The model's step `RenewLease`
    /// (`docs/docstore.md` §6).
    ///
    /// # Errors
    /// [`DocLockError::LeaseExpired`] if the local deadline has passed (nothing sent: a lapsed
    /// lease is anyone's, a renewal cannot revive it); [`DocLockError::NotOwner`] if the lock
    /// document is no longer the version this guard wrote (409) or is gone (404) — the lock is
    /// lost; [`DocLockError::NotHolding`] on a lost guard or a recipe without a lease;
    /// [`DocLockError::Store`] otherwise (no answer: the lease may or may not be extended;
    /// the old deadline stands).
    pub fn renew(&mut self) -> Result<(), DocLockError> {
        let lock = self.lock.clone();
        self.usable()?;
        (lock.rules)
            .step_where(lock.role, Pc::Holding, |s| s == Step::RenewLease)
            .filter(|_| lock.rules.fixed)
            .ok_or_else(|| DocLockError::NotHolding {
                lock: lock.lock_name(),
                state: "only the leased recipe renews",
            })?;
        let deadline = self.deadline.expect("a leased guard has a deadline");
        let now = lock.store.now();
        if now >= deadline {
            self.pc = Pc::Idle;
            return Err(DocLockError::LeaseExpired {
                lock: lock.lock_name(),
                deadline_ms: deadline,
                now_ms: now,
            });
        }
        let script = StoredScript {
            id: super::scripts::script_id("lease-renew"),
            params: serde_json::json!({"owner": lock.owner, "lease": lock.lease_ms}),
            scripted_upsert: false,
        };
        let mut answer =
            lock.store
                .update_with_script_if(&lock.index, &lock.id, &script, self.version);
        // An earlier renewal got no answer and this one is refused as a conflict: if the lock
        // document is still ours, the lost renewal was applied (only this owner writes it while
        // its owner field is ours). Adopt that version, with the deadline the lost renewal
        // gave at the latest, and renew again on it.
        if let (Err(e), Some(then)) = (&answer, self.renew_unanswered) {
            if e.is_conflict() {
                if let Ok(Some(doc)) = lock.store.get(&lock.index, &lock.id) {
                    if doc.source.get("owner").and_then(|o| o.as_str()) == Some(lock.owner.as_str())
                    {
                        self.version = doc.token;
                        self.deadline = Some(lock.deadline_from(then));
                        answer = lock.store.update_with_script_if(
                            &lock.index,
                            &lock.id,
                            &script,
                            self.version,
                        );
                    }
                }
            }
        }
        match answer {
            Ok(w) => {
                self.renew_unanswered = None;
                self.version = w.token;
                self.deadline = Some(lock.deadline_from(now));
                Ok(())
            }
            Err(e) if e.no_answer() => {
                // Applied or not: the next renewal finds out. The deadline stays the last
                // known one, which holds either way.
                self.renew_unanswered.get_or_insert(now);
                Err(lock.store_error(e))
            }
            Err(e) if matches!(e.status(), Some(404 | 409)) => {
                self.pc = Pc::Idle;
                Err(DocLockError::NotOwner {
                    lock: lock.lock_name(),
                    answer: e,
                })
            }
            Err(e) => Err(lock.store_error(e)),
        }
    }

    /// Whether the guard may still read, check or write (not lost, not claiming).
    pub(super) fn usable(&self) -> Result<(), DocLockError> {
        let state = match self.pc {
            Pc::Holding | Pc::Computing | Pc::Writing => return Ok(()),
            Pc::Verifying => {
                "the lock document was not read back (no answer): the grant is unknown, \
                 release it"
            }
            Pc::Claiming => "the claim got no answer: the lock's state is unknown, release it",
            Pc::Releasing => "a fenced write or claim was refused: the lock is lost, release it",
            Pc::Idle | Pc::Retrying => "the lease has passed",
        };
        Err(DocLockError::NotHolding {
            lock: self.lock.lock_name(),
            state,
        })
    }

    /// Whether the recipe keeps this token as its fencing token (the model's `keeps_token`).
    pub fn keeps_token(&self) -> bool {
        self.lock.rules.keeps_token(self.lock.role)
    }
}
