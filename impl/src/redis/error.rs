//! [`RedisLockError`], and the one table of every answer the recipe can get
//! ([`classify`], [`REPLY_TABLE`]).

use std::fmt;
use std::time::Duration;

use super::backend::{NoAnswer, Reply};

/// What one instance's answer means to the recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The instance set the key (with the fencing counter, for the fenced script).
    Granted(Option<u64>),
    /// The key exists (another token's), or a release/extend found it is not this token's.
    Refused,
    /// A release or extend was applied.
    Done,
    /// The instance cannot serve the lock now (restarting, a replica, out of memory, busy,
    /// no answer): counted as not granted; trying again may work.
    Unavailable(String),
    /// The instance refuses this client or this key for good (wrong type, no permission):
    /// retrying fails the same way.
    Fatal {
        /// The error code (`LOADING`, `WRONGTYPE`, ...).
        code: String,
        /// The rest of the error line.
        detail: String,
    },
}

/// Every answer the recipe's commands can get, as `(answer, meaning)` — the table
/// `docs/redis.md` shows; [`classify`] implements it, and a test runs each row through it.
pub const REPLY_TABLE: &[(&str, &str)] = &[
    ("+OK to SET NX", "granted by this instance"),
    (
        "integer n to the fenced acquire script",
        "granted, fencing counter n",
    ),
    (
        "nil to SET NX or the fenced script",
        "refused: the key holds another token",
    ),
    ("integer 1 to release or extend", "done"),
    (
        "integer 0 to release or extend",
        "refused: the key is gone or another token's",
    ),
    (
        "-LOADING",
        "unavailable: the instance is loading its data after a restart",
    ),
    (
        "-READONLY",
        "unavailable: the instance is a replica (a fail-over demoted it)",
    ),
    (
        "-MASTERDOWN",
        "unavailable: a replica whose primary link is down",
    ),
    ("-OOM", "unavailable: maxmemory reached, the SET is refused"),
    ("-BUSY", "unavailable: a script has run past lua-time-limit"),
    (
        "-TRYAGAIN, -CLUSTERDOWN",
        "unavailable: the cluster is resharding or down",
    ),
    (
        "-MISCONF, -NOREPLICAS",
        "unavailable: writes stopped until a snapshot succeeds, or too few replicas are \
         connected (min-replicas-to-write)",
    ),
    (
        "-WRONGTYPE",
        "fatal: the key is used by something else (not a string)",
    ),
    (
        "-NOAUTH, -NOPERM, -WRONGPASS",
        "fatal: this client may not run the command",
    ),
    (
        "any other error reply",
        "fatal: an answer the recipe does not expect",
    ),
    ("no answer (refused, reset, timed out)", "unavailable"),
];

const UNAVAILABLE: [&str; 9] = [
    "LOADING",
    "READONLY",
    "MASTERDOWN",
    "OOM",
    "BUSY",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "MISCONF",
    "NOREPLICAS",
];

/// What `reply` (or no answer) means for a command that `acquires` (SET NX, the fenced
/// script) or not (release, extend).
pub fn classify(reply: &Result<Reply, NoAnswer>, acquires: bool) -> Answer {
    match reply {
        Err(e) => Answer::Unavailable(e.to_string()),
        Ok(Reply::Ok) if acquires => Answer::Granted(None),
        Ok(Reply::Int(n)) if acquires && *n > 0 => Answer::Granted(Some(*n as u64)),
        Ok(Reply::Nil) => Answer::Refused,
        Ok(Reply::Int(1)) if !acquires => Answer::Done,
        Ok(Reply::Int(0)) if !acquires => Answer::Refused,
        Ok(Reply::Error { code, detail }) if UNAVAILABLE.contains(&code.as_str()) => {
            Answer::Unavailable(format!("-{code} {detail}"))
        }
        Ok(Reply::Error { code, detail }) => Answer::Fatal {
            code: code.clone(),
            detail: detail.clone(),
        },
        Ok(other) => Answer::Fatal {
            code: "UNEXPECTED".into(),
            detail: format!("{other:?}"),
        },
    }
}

/// Everything that can go wrong acquiring, checking, extending or releasing a Redis lock.
/// Every message names the key. [`RedisLockError::is_held`] tells "someone else holds it"
/// from the rest; [`RedisLockError::is_lost`] tells "stop writing" from the rest.
#[derive(Debug)]
#[non_exhaustive]
pub enum RedisLockError {
    /// Too few instances granted: the key holds another token on the others.
    Held {
        /// The lock key.
        key: String,
        /// Instances that granted.
        granted: usize,
        /// The majority needed.
        needed: usize,
    },
    /// A blocking acquire gave up after `waited`.
    TimedOut {
        /// The lock key.
        key: String,
        /// How long the acquire tried.
        waited: Duration,
        /// The last attempt's error.
        last: Box<RedisLockError>,
    },
    /// Too few instances answered usably to reach a majority.
    Unavailable {
        /// The lock key.
        key: String,
        /// Instances that granted.
        granted: usize,
        /// The majority needed.
        needed: usize,
        /// The first instance that failed, and how.
        first: String,
        /// That failure, if the instance gave no answer.
        source: Option<NoAnswer>,
    },
    /// A majority granted, but acquiring took so long that no validity was left (`ttl −
    /// elapsed − drift` ≤ 0): released again.
    TooSlow {
        /// The lock key.
        key: String,
        /// How long acquiring took.
        elapsed: Duration,
        /// The lock's TTL.
        ttl: Duration,
    },
    /// The holder's validity has run out: another client may hold the lock now.
    Expired {
        /// The lock key.
        key: String,
        /// How long ago the validity ran out.
        overdue: Duration,
    },
    /// A release or extend found the key gone or another token's on a majority: the lock was
    /// lost (expired, or lost by a restart or a fail-over) while this guard held it.
    NotOwner {
        /// The lock key.
        key: String,
        /// Instances that still held this token.
        confirmed: usize,
        /// The majority needed.
        needed: usize,
    },
    /// A release that could not learn the outcome: fewer than a majority confirmed the
    /// delete, but enough instances did not answer (or answered an error) that they may still
    /// hold this token. Those keys stay until their TTL runs out; other clients wait at most
    /// that long. Not a lost lock: nothing says another client held it meanwhile.
    ReleaseUnknown {
        /// The lock key.
        key: String,
        /// Instances that confirmed the delete.
        confirmed: usize,
        /// Instances whose outcome is unknown (no answer, or an error reply).
        unknown: usize,
        /// The majority needed.
        needed: usize,
        /// The first instance whose outcome is unknown, and how.
        first: String,
        /// That failure, if the instance gave no answer.
        source: Option<NoAnswer>,
    },
    /// The lock's TTL leaves no validity: zero, more than [`super::MAX_TTL`] (`PX`
    /// milliseconds cannot carry it), or within the drift allowance (every attempt would be
    /// too slow). The caller's error: no command was sent.
    BadTtl {
        /// The lock key.
        key: String,
        /// The TTL asked for.
        ttl: Duration,
    },
    /// The backend has no instance: no majority can ever grant. The caller's error: no
    /// command was sent.
    NoInstances {
        /// The lock key.
        key: String,
    },
    /// Fencing (`with_fencing`) asked of Redlock (more than one instance): the highest counter
    /// of a granting majority need not grow from one hold to the next (`docs/redis.md`, row
    /// 15), so a resource fenced by it could accept a stale holder's write. No command was
    /// sent.
    FencingOnRedlock {
        /// The lock key.
        key: String,
        /// The instances of the lock.
        instances: usize,
    },
    /// Too few instances could still grant, because instances refused the command for good
    /// (wrong type, no permission, an unexpected reply). On Redlock one such instance of N
    /// only counts as not granting; this error means the refusals alone left no majority
    /// possible.
    Refused {
        /// The lock key.
        key: String,
        /// The error code (`LOADING`, `WRONGTYPE`, ...).
        code: String,
        /// The rest of the error line.
        detail: String,
    },
}

impl RedisLockError {
    /// Whether another client holds the lock (also while waiting for it): trying later may
    /// succeed.
    pub fn is_held(&self) -> bool {
        match self {
            RedisLockError::Held { .. } => true,
            RedisLockError::TimedOut { last, .. } => last.is_held(),
            _ => false,
        }
    }

    /// Whether a held lock was lost: stop writing under it.
    pub fn is_lost(&self) -> bool {
        matches!(
            self,
            RedisLockError::Expired { .. } | RedisLockError::NotOwner { .. }
        )
    }

    /// The lock's key.
    pub fn key(&self) -> &str {
        match self {
            RedisLockError::Held { key, .. }
            | RedisLockError::TimedOut { key, .. }
            | RedisLockError::Unavailable { key, .. }
            | RedisLockError::TooSlow { key, .. }
            | RedisLockError::Expired { key, .. }
            | RedisLockError::NotOwner { key, .. }
            | RedisLockError::ReleaseUnknown { key, .. }
            | RedisLockError::BadTtl { key, .. }
            | RedisLockError::FencingOnRedlock { key, .. }
            | RedisLockError::NoInstances { key }
            | RedisLockError::Refused { key, .. } => key,
        }
    }

    /// What to do about it, in one line.
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            RedisLockError::Held { .. } => "retry later, or wait for the lock with lock_timeout()",
            RedisLockError::TimedOut { .. } => {
                "the lock stayed held or unreachable: retry later or wait longer"
            }
            RedisLockError::Unavailable { .. } => {
                "check that the Redis instances are up and reachable; a majority must answer"
            }
            RedisLockError::TooSlow { .. } => {
                "acquiring took longer than the TTL: use a longer TTL or faster instances"
            }
            RedisLockError::Expired { .. } | RedisLockError::NotOwner { .. } => {
                "stop writing, since another client may hold the lock now, and acquire it again; \
                 fence the resource (with_fencing) to keep a late holder's writes out"
            }
            RedisLockError::ReleaseUnknown { .. } => {
                "nothing to undo: the keys not deleted expire after their TTL, and other clients \
                 wait at most that long; check the instances that did not answer"
            }
            RedisLockError::BadTtl { .. } => {
                "give the lock a TTL above 3 ms (the drift allowance is 1 % of it plus 2 ms) \
                 and at most MAX_TTL (it is sent as PX milliseconds, rounded up)"
            }
            RedisLockError::NoInstances { .. } => {
                "give the lock at least one Redis instance (Redlock: an odd number, such as 3 \
                 or 5, of independent primaries)"
            }
            RedisLockError::FencingOnRedlock { .. } => {
                "fence with a single Redis instance's counter, or use a lock whose tokens grow \
                 (the ZooKeeper mutex's zxid, etcd's revision)"
            }
            RedisLockError::Refused { .. } => {
                "check the key is not used for anything else and that this user may run SET, \
                 EVAL and INCR on it"
            }
        })
    }
}

impl fmt::Display for RedisLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisLockError::Held {
                key,
                granted,
                needed,
            } => write!(
                f,
                "Redis lock {key:?} is held by another client ({granted} of {needed} needed \
                 instances granted)"
            ),
            RedisLockError::TimedOut { key, waited, .. } => {
                write!(f, "gave up waiting for Redis lock {key:?} after {waited:?}")
            }
            // The first failure is the source when it was no answer (printed after this by a
            // chain printer); otherwise (a refusal) it is only here.
            RedisLockError::Unavailable {
                key,
                granted,
                needed,
                source: Some(_),
                ..
            } => write!(
                f,
                "too few Redis instances answered for lock {key:?} ({granted} granted, \
                 {needed} needed)"
            ),
            RedisLockError::Unavailable {
                key,
                granted,
                needed,
                first,
                source: None,
            } => write!(
                f,
                "too few Redis instances answered for lock {key:?} ({granted} granted, \
                 {needed} needed; first failure: {first})"
            ),
            RedisLockError::TooSlow { key, elapsed, ttl } => write!(
                f,
                "acquiring Redis lock {key:?} took {elapsed:?} of its {ttl:?} TTL: no validity \
                 left, released"
            ),
            RedisLockError::Expired { key, overdue } => write!(
                f,
                "Redis lock {key:?} expired {overdue:?} ago: another client may hold it"
            ),
            RedisLockError::NotOwner {
                key,
                confirmed,
                needed,
            } => write!(
                f,
                "Redis lock {key:?} is no longer this client's ({confirmed} of {needed} needed \
                 instances still held its token)"
            ),
            RedisLockError::ReleaseUnknown {
                key,
                confirmed,
                unknown,
                needed,
                source: Some(_),
                ..
            } => write!(
                f,
                "released Redis lock {key:?} with an unknown outcome ({confirmed} of {needed} \
                 needed instances confirmed, {unknown} did not answer)"
            ),
            RedisLockError::ReleaseUnknown {
                key,
                confirmed,
                unknown,
                needed,
                first,
                source: None,
            } => write!(
                f,
                "released Redis lock {key:?} with an unknown outcome ({confirmed} of {needed} \
                 needed instances confirmed, {unknown} did not answer usably; first: {first})"
            ),
            RedisLockError::BadTtl { key, ttl } => write!(
                f,
                "Redis lock {key:?} has a TTL of {ttl:?}, which leaves no validity: zero, past \
                 the server's limit, or within the drift allowance (1 % of the TTL plus 2 ms)"
            ),
            RedisLockError::NoInstances { key } => {
                write!(f, "Redis lock {key:?} has no instance to acquire on")
            }
            RedisLockError::FencingOnRedlock { key, instances } => write!(
                f,
                "Redis lock {key:?} asks for fencing tokens over {instances} instances: a \
                 Redlock majority's counters need not grow from one hold to the next"
            ),
            RedisLockError::Refused { key, code, detail } => {
                write!(
                    f,
                    "Redis refused a command on lock {key:?}: -{code} {detail}"
                )
            }
        }
    }
}

impl std::error::Error for RedisLockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RedisLockError::TimedOut { last, .. } => Some(last.as_ref()),
            RedisLockError::Unavailable {
                source: Some(s), ..
            }
            | RedisLockError::ReleaseUnknown {
                source: Some(s), ..
            } => Some(s),
            _ => None,
        }
    }
}
