//! The Redis lock's broken variants, as [`Backend`] wrappers around any backend (the simulated
//! Redis of the shuttle suite, real servers), so that the checks drive the SAME production
//! [`lockwright::redis::RedisLock`] — the library has no switch for them (issue #32).
//!
//! - [`UncheckedRelease`](struct@UncheckedRelease): the release of a key the instance granted
//!   goes out as a plain `DEL key` — the model's `single-unchecked`.
//! - [`NoRecheck`]: the client's clock stands still while it acquires and for the drift
//!   allowance after, so the recipe reads an acquisition as taking no time and holds a
//!   majority for the full TTL from the end of the acquisition — the model's
//!   `redlock-no-recheck` (`validity = ttl`, however long acquiring took).

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use lockwright::redis::{Backend, Command, NoAnswer, Reply};

/// `inner`, with the release of a key the instance granted sent as `DEL key` (the model's
/// `single-unchecked`: a holder deletes the key by name, whoever's token it holds by then).
///
/// Only a token the instance answered `SET` with a grant (`OK`, or the fenced script's
/// counter) is released by name; the cleanup release of an attempt the instance refused
/// (`nil`) or did not answer goes out as the real compare-and-delete. A contender's failed
/// attempt deleting the live holder's key at once would be a larger defect than the one the
/// model's row names (`single-unchecked` releases no failed attempt): the twins must be
/// caught by the holder's stale `DEL`, after its key expired.
#[derive(Debug)]
pub struct UncheckedRelease<B> {
    inner: B,
    granted: Mutex<HashSet<(usize, String)>>,
}

/// [`UncheckedRelease`](struct@UncheckedRelease) around `inner` (a function, so it can be passed where a wrapper is
/// expected: `slow_release_then_third_client(UncheckedRelease)`).
#[allow(non_snake_case)]
pub fn UncheckedRelease<B>(inner: B) -> UncheckedRelease<B> {
    UncheckedRelease {
        inner,
        granted: Mutex::new(HashSet::new()),
    }
}

impl<B: Backend> Backend for UncheckedRelease<B> {
    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
        let mut granted = self.granted.lock().unwrap_or_else(|p| p.into_inner());
        match command {
            Command::Release { key, token } if granted.remove(&(i, token.to_string())) => {
                drop(granted);
                self.inner.call(i, Command::Del { key })
            }
            Command::SetNx { token, .. } | Command::SetNxFenced { token, .. } => {
                let token = token.to_string();
                drop(granted);
                let reply = self.inner.call(i, command);
                if matches!(reply, Ok(Reply::Ok | Reply::Int(_))) {
                    self.granted
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert((i, token));
                }
                reply
            }
            other => {
                drop(granted);
                self.inner.call(i, other)
            }
        }
    }

    fn now(&self) -> Duration {
        self.inner.now()
    }

    fn sleep(&self, d: Duration) {
        self.inner.sleep(d);
    }

    fn token(&self) -> String {
        self.inner.token()
    }
}

/// Where [`NoRecheck`]'s clock is in an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Outside an acquisition.
    Idle,
    /// A token was drawn: the next reading is the attempt's start.
    Drawn,
    /// The start was read (at this inner reading): the next reading is the attempt's end.
    Started(Duration),
}

#[derive(Debug)]
struct Clock {
    phase: Phase,
    /// How far this clock is behind the inner one.
    behind: Duration,
    /// The last reading given (the clock never runs backwards).
    last: Duration,
}

/// `inner`, with a client clock that loses each acquisition's duration plus `drift`.
///
/// It relies on the order in which `RedisLock::try_lock` reads the backend: a token, the
/// start, the `SET`s, the end. The end reading then equals the start (elapsed 0: no attempt
/// is refused as too slow), and the guard's validity `start + ttl − drift` ends, by the inner
/// clock, a full `ttl` after the acquisition ended — what the model's `redlock-no-recheck`
/// believes. The shuttle and real-server twins that catch it fail if that order changes.
#[derive(Debug)]
pub struct NoRecheck<B> {
    inner: B,
    drift: Duration,
    clock: Mutex<Clock>,
}

impl<B> NoRecheck<B> {
    /// `inner` with the lock's drift allowance `drift` (`RedisLock::drift()`).
    pub fn new(inner: B, drift: Duration) -> Self {
        NoRecheck {
            inner,
            drift,
            clock: Mutex::new(Clock {
                phase: Phase::Idle,
                behind: Duration::ZERO,
                last: Duration::ZERO,
            }),
        }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: Backend> Backend for NoRecheck<B> {
    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
        self.inner.call(i, command)
    }

    fn now(&self) -> Duration {
        let real = self.inner.now();
        let mut c = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        match c.phase {
            Phase::Idle => {}
            Phase::Drawn => c.phase = Phase::Started(real),
            Phase::Started(start) => {
                c.behind += real.saturating_sub(start) + self.drift;
                c.phase = Phase::Idle;
            }
        }
        let reading = real.saturating_sub(c.behind).max(c.last);
        c.last = reading;
        reading
    }

    fn sleep(&self, d: Duration) {
        self.inner.sleep(d);
    }

    fn token(&self) -> String {
        self.clock.lock().unwrap_or_else(|p| p.into_inner()).phase = Phase::Drawn;
        self.inner.token()
    }
}
