//! The one interface the Redis lock speaks through ([`Backend`]): the four commands of the
//! recipe, a monotonic clock, a sleep and a random token. The real servers implement it in
//! [`super::RedisServers`]; the checks' simulated Redis (on the model's instance semantics,
//! `lockwright_model::redis::server`) implements it too, so shuttle runs this crate's recipe.

use std::fmt;
use std::time::Duration;

/// The release script: delete the key only if it still holds this client's token.
pub const RELEASE_SCRIPT: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
     return redis.call('del', KEYS[1]) else return 0 end";

/// The extend script: reset the key's TTL only if it still holds this client's token.
pub const EXTEND_SCRIPT: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then \
     return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/// The fenced acquire script: `SET NX PX` and, only if it set the key, `INCR` the fencing
/// counter in the same step, answering the counter (or nil).
pub const FENCED_ACQUIRE_SCRIPT: &str = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', \
     ARGV[2]) then return redis.call('incr', KEYS[2]) else return false end";

/// A command of the recipe, to one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// `SET key token NX PX ttl_ms`: `Ok` if set, `Nil` if the key exists.
    SetNx {
        /// The lock key.
        key: &'a str,
        /// This hold's random token.
        token: &'a str,
        /// The TTL in milliseconds.
        ttl_ms: u64,
    },
    /// [`FENCED_ACQUIRE_SCRIPT`]: `Int(counter)` if set, `Nil` if the key exists.
    SetNxFenced {
        /// The lock key.
        key: &'a str,
        /// This hold's random token.
        token: &'a str,
        /// The TTL in milliseconds.
        ttl_ms: u64,
        /// The fencing counter key.
        counter: &'a str,
    },
    /// [`RELEASE_SCRIPT`]: `Int(1)` if deleted, `Int(0)` if not this token's key.
    Release {
        /// The lock key.
        key: &'a str,
        /// This hold's random token.
        token: &'a str,
    },
    /// `DEL key`, whoever's key it is. The lock never sends it; the test kit's
    /// `UncheckedRelease` wrapper turns the release into it (the model's `single-unchecked`).
    Del {
        /// The lock key.
        key: &'a str,
    },
    /// [`EXTEND_SCRIPT`]: `Int(1)` if extended, `Int(0)` if not this token's key.
    Extend {
        /// The lock key.
        key: &'a str,
        /// This hold's random token.
        token: &'a str,
        /// The TTL in milliseconds.
        ttl_ms: u64,
    },
}

/// What an instance answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`.
    Ok,
    /// A nil bulk string or a script's `false`.
    Nil,
    /// An integer.
    Int(i64),
    /// An error reply: its code (`LOADING`, `READONLY`, …) and the rest of the line.
    Error {
        /// The error code (`LOADING`, `WRONGTYPE`, ...).
        code: String,
        /// The rest of the error line.
        detail: String,
    },
    /// Any other answer (the recipe expects none), as text.
    Other(String),
}

/// An instance that gave no answer: refused, reset, timed out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoAnswer {
    /// The instance's address (`127.0.0.1:6379`), or its index for a simulated one.
    pub instance: String,
    /// What the connection reported.
    pub reason: String,
}

impl fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} did not answer: {}", self.instance, self.reason)
    }
}

impl std::error::Error for NoAnswer {}

/// The instances, the clock and the token source the lock runs on.
pub trait Backend {
    /// How many independent instances (1: the single-instance lock; N: Redlock).
    fn instances(&self) -> usize;

    /// Sends `command` to instance `i` and waits for its answer (bounded by the backend's
    /// per-instance timeout).
    ///
    /// # Errors
    /// The instance gave no answer.
    fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer>;

    /// A monotonic clock (any origin).
    fn now(&self) -> Duration;

    /// Waits `d` (a retry's back-off).
    fn sleep(&self, d: Duration);

    /// A fresh random token, unique among every client of the key.
    fn token(&self) -> String;
}
