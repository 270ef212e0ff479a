//! Obtaining with a timeout: [`obtain_with_timeout`] and [`SleepingLockFactory`] (Lucene's
//! `SleepingLockWrapper`).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::LockError;
use crate::{Lock, LockFactory};

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
    let start = Instant::now();
    let deadline = start.checked_add(timeout);
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

/// A factory whose [`LockFactory::try_obtain`] waits up to a timeout for a held lock, via
/// [`obtain_with_timeout`]. Lucene's `SleepingLockWrapper`; its default poll interval there is
/// one second.
#[derive(Clone, Debug)]
pub struct SleepingLockFactory<F> {
    inner: F,
    timeout: Duration,
    poll_interval: Duration,
}

impl<F: LockFactory> SleepingLockFactory<F> {
    /// Wraps `inner`: obtains retry every `poll_interval` for up to `timeout`.
    pub fn new(inner: F, timeout: Duration, poll_interval: Duration) -> Self {
        SleepingLockFactory {
            inner,
            timeout,
            poll_interval,
        }
    }

    /// The wrapped factory.
    pub fn inner(&self) -> &F {
        &self.inner
    }
}

impl<F: LockFactory> LockFactory for SleepingLockFactory<F> {
    /// # Errors
    /// As [`obtain_with_timeout`].
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        obtain_with_timeout(&self.inner, dir, name, self.timeout, self.poll_interval)
    }
}
