//! Obtaining by polling: what [`LockFactory::obtain_timeout`] and (for the factories that have
//! no kernel wait) [`LockFactory::obtain_blocking`] do by default, with the poll interval
//! exposed for callers who want Lucene's `SleepingLockWrapper` behaviour (it polls every
//! second).
//!
//! Polling is the only way to bound a wait on a file lock: the kernel has no timed
//! `F_SETLKW`/`flock`. Between two attempts another waiter may get the lock first (no
//! fairness), as with Lucene.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{Lock, LockError, LockFactory};

/// How often the default [`LockFactory::obtain_timeout`] and [`LockFactory::obtain_blocking`]
/// try again while a lock is held. Each attempt of a native factory is a handful of system
/// calls (about 10 µs): 100 attempts a second cost nothing measurable, and a released lock is
/// taken within 10 ms.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Tries to obtain the lock, retrying every `poll_interval` while it is held (by this or
/// another process), for at most `timeout`. It tries at least once, so `Duration::ZERO` means
/// "try once"; a timeout too large to represent waits forever.
///
/// Only "held" errors ([`LockError::is_held`]) are retried: a bad name, a broken directory or
/// an unsupported filesystem will not heal by waiting, and is returned at once.
///
/// # Errors
/// [`LockError::TimedOut`] carrying the last "held" error (with whatever it knew about the
/// holder), or the first error that is not a "held" error.
pub fn obtain_with_timeout<F: LockFactory + ?Sized>(
    factory: &F,
    dir: &Path,
    name: &str,
    timeout: Duration,
    poll_interval: Duration,
) -> Result<Lock, LockError> {
    obtain_polling(factory, dir, name, Some(timeout), poll_interval)
}

/// [`obtain_with_timeout`] with an optional timeout: `None` polls until the lock is obtained
/// or a non-"held" error comes.
///
/// # Errors
/// As [`obtain_with_timeout`]; never [`LockError::TimedOut`] without a timeout.
pub fn obtain_polling<F: LockFactory + ?Sized>(
    factory: &F,
    dir: &Path,
    name: &str,
    timeout: Option<Duration>,
    poll_interval: Duration,
) -> Result<Lock, LockError> {
    let start = Instant::now();
    // No timeout, or one too large to represent: no deadline.
    let deadline = timeout.and_then(|t| start.checked_add(t));
    loop {
        let err = match factory.try_obtain(dir, name) {
            Ok(lock) => return Ok(lock),
            Err(e) if e.is_held() => e,
            Err(e) => return Err(e),
        };
        let now = Instant::now();
        let remaining = match deadline {
            Some(d) if now >= d => {
                let path = err.path().map_or_else(|| dir.join(name), Path::to_path_buf);
                return Err(LockError::TimedOut {
                    path,
                    waited: now - start,
                    last: Box::new(err),
                });
            }
            Some(d) => d - now,
            None => Duration::MAX,
        };
        let nap = poll_interval.min(remaining);
        if nap.is_zero() {
            std::thread::yield_now();
        } else {
            std::thread::sleep(nap);
        }
    }
}
