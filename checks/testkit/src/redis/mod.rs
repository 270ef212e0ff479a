//! The Redis lock's broken variants, as [`Backend`] wrappers around any backend (the simulated
//! Redis of the shuttle suite, real servers), so that the checks drive the SAME production
//! [`lockwright::redis::RedisLock`] — the library has no switch for them (issue #32).
//!
//! - [`UncheckedRelease`]: the compare-and-delete release goes out as a plain `DEL key` — the
//!   model's `single-unchecked`.
//! - [`NoRecheck`]: the client's clock stands still while it acquires and for the drift
//!   allowance after, so the recipe reads an acquisition as taking no time and holds a
//!   majority for the full TTL from the end of the acquisition — the model's
//!   `redlock-no-recheck` (`validity = ttl`, however long acquiring took).

use std::sync::Mutex;
use std::time::Duration;

use lockwright::redis::{Backend, Command, NoAnswer, Reply};

/// `inner`, with every release (the compare-and-delete script) sent as `DEL key`.
#[derive(Clone, Debug)]
pub struct UncheckedRelease<B>(pub B);

impl<B: Backend> Backend for UncheckedRelease<B> {
    fn instances(&self) -> usize {
        self.0.instances()
    }

    fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
        match command {
            Command::Release { key, .. } => self.0.call(i, Command::Del { key }),
            other => self.0.call(i, other),
        }
    }

    fn now(&self) -> Duration {
        self.0.now()
    }

    fn sleep(&self, d: Duration) {
        self.0.sleep(d);
    }

    fn token(&self) -> String {
        self.0.token()
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
