//! [`RedisLock`] (the public lock: one instance, or Redlock over N) and [`RedisGuard`].

use std::time::Duration;

use super::backend::{Backend, Command};
use super::error::{classify, Answer, RedisLockError};

/// Switches that put a known defect back into the recipe, for the checks that must catch it
/// (`test-util` only; never in production).
#[cfg(feature = "test-util")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedisDefect {
    /// Release with a plain `DEL key` (no token check): the model's `single-unchecked`.
    UncheckedRelease,
    /// Hold a majority for the full TTL, however long acquiring took: the model's
    /// `redlock-no-recheck`.
    NoRecheck,
}

/// A lock on one key over the backend's instances: the single-instance lock when the backend
/// has one instance, Redlock (a majority of N) otherwise.
///
/// Acquire: `SET key token NX PX ttl` on each instance in turn (with fencing: the script that
/// also `INCR`s the counter key), then held if a majority granted and the validity `ttl −
/// elapsed − drift` is still positive (the re-check after acquiring); otherwise released on
/// every instance. Release: the compare-and-delete script on every instance. What it
/// guarantees and under which assumptions: `docs/redis.md` (the model's `single` and
/// `redlock` rows).
#[derive(Debug)]
pub struct RedisLock<B: Backend> {
    backend: B,
    key: String,
    ttl: Duration,
    counter: Option<String>,
    retry: Duration,
    #[cfg(feature = "test-util")]
    defect: Option<RedisDefect>,
}

impl<B: Backend> RedisLock<B> {
    /// A lock on `key` whose keys expire after `ttl`.
    pub fn new(backend: B, key: impl Into<String>, ttl: Duration) -> Self {
        RedisLock {
            backend,
            key: key.into(),
            ttl,
            counter: None,
            retry: Duration::from_millis(10),
            #[cfg(feature = "test-util")]
            defect: None,
        }
    }

    /// Fencing tokens from the counter key `counter`, incremented in the acquire script: each
    /// guard's [`RedisGuard::fence`] is the highest counter among the granting instances. On
    /// one instance without restarts or fail-overs the tokens grow with the holds; across
    /// Redlock's instances they need not (`docs/redis.md`, row 15).
    pub fn with_fencing(mut self, counter: impl Into<String>) -> Self {
        self.counter = Some(counter.into());
        self
    }

    /// The pause between two attempts of a blocking acquire (default 10 ms).
    pub fn with_retry_delay(mut self, d: Duration) -> Self {
        self.retry = d;
        self
    }

    /// Puts a known defect back (tests only).
    #[cfg(feature = "test-util")]
    pub fn with_defect(mut self, defect: RedisDefect) -> Self {
        self.defect = Some(defect);
        self
    }

    /// Whether the `UncheckedRelease` test switch is on.
    fn unchecked_release(&self) -> bool {
        #[cfg(feature = "test-util")]
        return self.defect == Some(RedisDefect::UncheckedRelease);
        #[cfg(not(feature = "test-util"))]
        false
    }

    /// Whether the `NoRecheck` test switch is on.
    fn no_recheck(&self) -> bool {
        #[cfg(feature = "test-util")]
        return self.defect == Some(RedisDefect::NoRecheck);
        #[cfg(not(feature = "test-util"))]
        false
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The TTL of the lock's keys.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The majority needed: `N/2 + 1`.
    pub fn quorum(&self) -> usize {
        self.backend.instances() / 2 + 1
    }

    /// The clock-drift allowance subtracted from the validity: 1% of the TTL plus 2 ms (the
    /// Redlock page's figure).
    pub fn drift(&self) -> Duration {
        self.ttl / 100 + Duration::from_millis(2)
    }

    /// One attempt.
    ///
    /// # Errors
    /// [`RedisLockError::Held`] (another client holds it), `Unavailable`, `TooSlow`, `Refused`.
    pub fn try_lock(&self) -> Result<RedisGuard<'_, B>, RedisLockError> {
        let token = self.backend.token();
        let start = self.backend.now();
        let ttl_ms = self.ttl.as_millis() as u64;
        let n = self.backend.instances();
        let (mut granted, mut refused, mut fence) = (0usize, 0usize, None::<u64>);
        let mut first_failure: Option<(String, Option<super::backend::NoAnswer>)> = None;
        let mut fatal = None;
        for i in 0..n {
            let command = match &self.counter {
                Some(counter) => Command::SetNxFenced {
                    key: &self.key,
                    token: &token,
                    ttl_ms,
                    counter,
                },
                None => Command::SetNx {
                    key: &self.key,
                    token: &token,
                    ttl_ms,
                },
            };
            let reply = self.backend.call(i, command);
            match classify(&reply, true) {
                Answer::Granted(f) => {
                    granted += 1;
                    if let Some(f) = f {
                        fence = Some(fence.map_or(f, |g| g.max(f)));
                    }
                }
                Answer::Refused | Answer::Done => refused += 1,
                Answer::Unavailable(why) => {
                    if first_failure.is_none() {
                        first_failure = Some((format!("instance {i}: {why}"), reply.err()));
                    }
                }
                Answer::Fatal { code, detail } => {
                    fatal.get_or_insert((code, detail));
                }
            }
        }
        let elapsed = self.backend.now().saturating_sub(start);
        let needed = self.quorum();
        // Checked arithmetic: an acquisition slower than the TTL leaves no validity (the
        // `redlock` crate's unsigned subtraction wraps here instead: docs/redis.md, row 22).
        let validity = if self.no_recheck() {
            Some(self.ttl)
        } else {
            self.ttl
                .checked_sub(elapsed)
                .and_then(|v| v.checked_sub(self.drift()))
                .filter(|v| !v.is_zero())
        };
        if granted >= needed && fatal.is_none() {
            if let Some(validity) = validity {
                // Redlock's validity counts from now (`ttl − elapsed − drift` is what is left
                // of the earliest key's TTL, which started at the first SET): the guard is
                // valid until `start + ttl − drift`. (It counted from `start` before, so the
                // acquisition time was taken off twice: a lock acquired in 60 ms of a 100 ms
                // TTL came back already expired.) Without the re-check, validity is the whole
                // TTL from now, as if acquiring took no time.
                return Ok(RedisGuard {
                    lock: self,
                    token,
                    fence,
                    valid_until: start + elapsed + validity,
                    released: false,
                });
            }
        }
        // Not held: undo every grant, including ones whose reply was lost.
        self.release_everywhere(&token);
        let key = self.key.clone();
        Err(if let Some((code, detail)) = fatal {
            RedisLockError::Refused { key, code, detail }
        } else if granted >= needed {
            RedisLockError::TooSlow {
                key,
                elapsed,
                ttl: self.ttl,
            }
        } else if let Some((first, source)) = first_failure.filter(|_| refused <= n - needed) {
            // The refusals alone would have left a majority possible: the failures kept it.
            RedisLockError::Unavailable {
                key,
                granted,
                needed,
                first,
                source,
            }
        } else {
            RedisLockError::Held {
                key,
                granted,
                needed,
            }
        })
    }

    /// Attempts until one succeeds or `timeout` has passed, sleeping the retry delay between
    /// attempts.
    ///
    /// # Errors
    /// [`RedisLockError::TimedOut`] with the last attempt's error, or at once an error that
    /// retrying cannot fix (`Refused`).
    pub fn lock_timeout(&self, timeout: Duration) -> Result<RedisGuard<'_, B>, RedisLockError> {
        let start = self.backend.now();
        loop {
            match self.try_lock() {
                Ok(g) => return Ok(g),
                Err(e @ RedisLockError::Refused { .. }) => return Err(e),
                Err(e) => {
                    let waited = self.backend.now().saturating_sub(start);
                    if waited >= timeout {
                        return Err(RedisLockError::TimedOut {
                            key: self.key.clone(),
                            waited,
                            last: Box::new(e),
                        });
                    }
                    self.backend.sleep(self.retry);
                }
            }
        }
    }

    /// Waits until the lock is acquired (or an error that retrying cannot fix).
    ///
    /// # Errors
    /// `Refused`.
    pub fn lock(&self) -> Result<RedisGuard<'_, B>, RedisLockError> {
        self.lock_timeout(Duration::MAX)
    }

    fn release_everywhere(&self, token: &str) -> usize {
        (0..self.backend.instances())
            .filter(|&i| {
                let command = if self.unchecked_release() {
                    Command::Del { key: &self.key }
                } else {
                    Command::Release {
                        key: &self.key,
                        token,
                    }
                };
                let reply = self.backend.call(i, command);
                classify(&reply, false) == Answer::Done
            })
            .count()
    }
}

/// A held Redis lock. Released on drop (best effort); [`RedisGuard::release`] says whether the
/// lock was still this guard's.
#[must_use = "the lock is released when the guard is dropped"]
#[derive(Debug)]
pub struct RedisGuard<'a, B: Backend> {
    lock: &'a RedisLock<B>,
    token: String,
    fence: Option<u64>,
    /// The backend's clock reading until which the lock is valid.
    valid_until: Duration,
    released: bool,
}

impl<B: Backend> RedisGuard<'_, B> {
    /// This hold's random token (the key's value).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The fencing token (with [`RedisLock::with_fencing`]).
    pub fn fence(&self) -> Option<u64> {
        self.fence
    }

    /// The validity left, by the backend's clock (`None`: run out).
    pub fn validity_left(&self) -> Option<Duration> {
        self.valid_until
            .checked_sub(self.lock.backend.now())
            .filter(|d| !d.is_zero())
    }

    /// Checks the validity before a write: call it right before each use of the resource.
    ///
    /// # Errors
    /// [`RedisLockError::Expired`]: stop writing.
    pub fn ensure_valid(&self) -> Result<(), RedisLockError> {
        match self.validity_left() {
            Some(_) => Ok(()),
            None => Err(RedisLockError::Expired {
                key: self.lock.key.clone(),
                overdue: self.lock.backend.now().saturating_sub(self.valid_until),
            }),
        }
    }

    /// Resets the TTL on every instance that still holds this token (the extend script) and
    /// the validity with it, if a majority did and the validity had not run out before.
    ///
    /// # Errors
    /// `Expired` (too late: the keys may be someone else's), `NotOwner`.
    pub fn extend(&mut self) -> Result<(), RedisLockError> {
        self.ensure_valid()?;
        let start = self.lock.backend.now();
        let ttl_ms = self.lock.ttl.as_millis() as u64;
        let confirmed = (0..self.lock.backend.instances())
            .filter(|&i| {
                let reply = self.lock.backend.call(
                    i,
                    Command::Extend {
                        key: &self.lock.key,
                        token: &self.token,
                        ttl_ms,
                    },
                );
                classify(&reply, false) == Answer::Done
            })
            .count();
        let needed = self.lock.quorum();
        if confirmed < needed {
            return Err(RedisLockError::NotOwner {
                key: self.lock.key.clone(),
                confirmed,
                needed,
            });
        }
        let elapsed = self.lock.backend.now().saturating_sub(start);
        match self
            .lock
            .ttl
            .checked_sub(elapsed)
            .and_then(|v| v.checked_sub(self.lock.drift()))
        {
            Some(v) if !v.is_zero() => {
                // From now, as at acquire: `start + ttl − drift`.
                self.valid_until = start + elapsed + v;
                Ok(())
            }
            _ => Err(RedisLockError::TooSlow {
                key: self.lock.key.clone(),
                elapsed,
                ttl: self.lock.ttl,
            }),
        }
    }

    /// Releases on every instance.
    ///
    /// # Errors
    /// [`RedisLockError::NotOwner`]: fewer than a majority still held this token (the lock was
    /// lost while held: writes made under it may have interleaved with another holder's).
    pub fn release(mut self) -> Result<(), RedisLockError> {
        self.released = true;
        let confirmed = self.lock.release_everywhere(&self.token);
        let needed = self.lock.quorum();
        if confirmed >= needed {
            Ok(())
        } else {
            Err(RedisLockError::NotOwner {
                key: self.lock.key.clone(),
                confirmed,
                needed,
            })
        }
    }
}

impl<B: Backend> Drop for RedisGuard<'_, B> {
    fn drop(&mut self) {
        if !self.released {
            self.lock.release_everywhere(&self.token);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::time::Duration;

    use super::RedisLock;
    use crate::redis::{Backend, Command, NoAnswer, Reply};

    /// Three instances that grant every `SET NX` and take 20 ms per command on one clock.
    struct Slow {
        now: Cell<Duration>,
    }

    impl Backend for Slow {
        fn instances(&self) -> usize {
            3
        }
        fn call(&self, _i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
            self.now.set(self.now.get() + Duration::from_millis(20));
            Ok(match command {
                Command::SetNx { .. } => Reply::Ok,
                _ => Reply::Int(1),
            })
        }
        fn now(&self) -> Duration {
            self.now.get()
        }
        fn sleep(&self, d: Duration) {
            self.now.set(self.now.get() + d);
        }
        fn token(&self) -> String {
            "t".to_string()
        }
    }

    /// Redlock's validity counts from the end of the acquisition: 3 SETs of 20 ms against a
    /// 100 ms TTL (drift 3 ms) leave 37 ms, and the guard holds until start + 97 ms. It counted
    /// from the start before (the acquisition time taken off twice): the guard came back with
    /// no validity left at all.
    #[test]
    fn validity_counts_from_the_end_of_the_acquisition() {
        let lock = RedisLock::new(
            Slow {
                now: Cell::new(Duration::from_secs(1)),
            },
            "k",
            Duration::from_millis(100),
        );
        let g = lock.try_lock().expect("a majority in 60 ms of 100");
        assert_eq!(g.validity_left(), Some(Duration::from_millis(37)));
        g.ensure_valid().expect("valid right after the acquisition");
    }
}
