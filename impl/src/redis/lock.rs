//! [`RedisLock`] (the public lock: one instance, or Redlock over N) and [`RedisGuard`].

use std::time::Duration;

use super::backend::{Backend, Command};
use super::error::{classify, Answer, RedisLockError};

/// The longest TTL the lock sends: 2^62 ms (about 146 million years). A Redis server refuses
/// a `PX` whose expiry (its clock in ms plus the TTL) overflows an `i64`; any clock reading
/// below 2^62 ms leaves room for this one.
pub const MAX_TTL: Duration = Duration::from_millis(1 << 62);

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
        }
    }

    /// Fencing tokens from the counter key `counter`, incremented in the acquire script: the
    /// guard's [`RedisGuard::fence`]. On one instance without restarts or fail-overs the
    /// tokens grow with the holds. Over Redlock (more than one instance) they need not: the
    /// highest counter of one granting majority can be below an earlier hold's (`docs/redis.md`,
    /// row 15), so every acquisition of a fenced Redlock is refused with
    /// [`RedisLockError::FencingOnRedlock`] before a command is sent.
    pub fn with_fencing(mut self, counter: impl Into<String>) -> Self {
        self.counter = Some(counter.into());
        self
    }

    /// The pause between two attempts of a blocking acquire (default 10 ms).
    pub fn with_retry_delay(mut self, d: Duration) -> Self {
        self.retry = d;
        self
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

    /// The TTL as `PX` milliseconds: rounded up (a lease never shorter than asked, never
    /// `PX 0`); zero or past [`MAX_TTL`] refused.
    fn ttl_ms(&self) -> Result<u64, RedisLockError> {
        if self.ttl.is_zero() || self.ttl > MAX_TTL {
            return Err(RedisLockError::BadTtl {
                key: self.key.clone(),
                ttl: self.ttl,
            });
        }
        let ms = self.ttl.as_millis();
        let whole = Duration::from_millis(ms as u64) == self.ttl;
        Ok(ms as u64 + u64::from(!whole))
    }

    /// What a caller must fix before any acquisition can succeed: a TTL `PX` cannot carry,
    /// fencing asked of Redlock.
    fn check_config(&self) -> Result<u64, RedisLockError> {
        let ttl_ms = self.ttl_ms()?;
        // A TTL within the drift allowance leaves no validity: every attempt would come back
        // `TooSlow`, and `lock()` would send SETs forever.
        if self.ttl <= self.drift() {
            return Err(RedisLockError::BadTtl {
                key: self.key.clone(),
                ttl: self.ttl,
            });
        }
        // No instance: no majority can ever grant.
        if self.backend.instances() == 0 {
            return Err(RedisLockError::NoInstances {
                key: self.key.clone(),
            });
        }
        if self.counter.is_some() && self.backend.instances() > 1 {
            return Err(RedisLockError::FencingOnRedlock {
                key: self.key.clone(),
                instances: self.backend.instances(),
            });
        }
        Ok(ttl_ms)
    }

    /// One attempt.
    ///
    /// An instance that answers an error reply counts as not granting, as one that does not
    /// answer: on Redlock a majority of the others still holds the lock (`REPLY_TABLE` says
    /// which replies mean "try again" and which "refused for good"). `Refused` only when the
    /// instances that refused for good leave no majority possible.
    ///
    /// # Errors
    /// [`RedisLockError::Held`] (another client holds it), `Unavailable`, `TooSlow`, `Refused`;
    /// the caller's errors `BadTtl`, `NoInstances` and `FencingOnRedlock`, before any command is
    /// sent.
    pub fn try_lock(&self) -> Result<RedisGuard<'_, B>, RedisLockError> {
        let ttl_ms = self.check_config()?;
        let token = self.backend.token();
        let start = self.backend.now();
        let n = self.backend.instances();
        let (mut granted, mut refused, mut fence) = (0usize, 0usize, None::<u64>);
        let mut first_failure: Option<(String, Option<super::backend::NoAnswer>)> = None;
        let (mut fatal, mut fatals) = (None, 0usize);
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
                    // This instance does not grant; the others may still give a majority.
                    fatals += 1;
                    if first_failure.is_none() {
                        first_failure = Some((format!("instance {i}: -{code} {detail}"), None));
                    }
                    fatal.get_or_insert((code, detail));
                }
            }
        }
        let elapsed = self.backend.now().saturating_sub(start);
        let needed = self.quorum();
        // Checked arithmetic: an acquisition slower than the TTL leaves no validity (the
        // `redlock` crate's unsigned subtraction wraps here instead: docs/redis.md, row 22).
        let validity = self
            .ttl
            .checked_sub(elapsed)
            .and_then(|v| v.checked_sub(self.drift()))
            .filter(|v| !v.is_zero());
        if granted >= needed {
            if let Some(validity) = validity {
                // Redlock's validity counts from now (`ttl − elapsed − drift` is what is left
                // of the earliest key's TTL, which started at the first SET): the guard is
                // valid until `start + ttl − drift`. (It counted from `start` before, so the
                // acquisition time was taken off twice: a lock acquired in 60 ms of a 100 ms
                // TTL came back already expired.)
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
        Err(
            if let Some((code, detail)) = fatal.filter(|_| fatals > n - needed) {
                // Refused for good by so many instances that no majority is possible.
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
            },
        )
    }

    /// Attempts until one succeeds or `timeout` has passed, sleeping the retry delay between
    /// attempts.
    ///
    /// # Errors
    /// [`RedisLockError::TimedOut`] with the last attempt's error, or at once an error that
    /// retrying cannot fix (`Refused`, `BadTtl`, `NoInstances`, `FencingOnRedlock`).
    pub fn lock_timeout(&self, timeout: Duration) -> Result<RedisGuard<'_, B>, RedisLockError> {
        let start = self.backend.now();
        loop {
            match self.try_lock() {
                Ok(g) => return Ok(g),
                Err(
                    e @ (RedisLockError::Refused { .. }
                    | RedisLockError::BadTtl { .. }
                    | RedisLockError::NoInstances { .. }
                    | RedisLockError::FencingOnRedlock { .. }),
                ) => return Err(e),
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
    /// `Refused`, and the caller's errors `BadTtl`, `NoInstances` and `FencingOnRedlock`.
    pub fn lock(&self) -> Result<RedisGuard<'_, B>, RedisLockError> {
        self.lock_timeout(Duration::MAX)
    }

    /// The release script on every instance.
    fn release_everywhere(&self, token: &str) -> Outcomes {
        let mut o = Outcomes::default();
        for i in 0..self.backend.instances() {
            let reply = self.backend.call(
                i,
                Command::Release {
                    key: &self.key,
                    token,
                },
            );
            o.add(i, &reply, classify(&reply, false));
        }
        o
    }
}

/// What the instances answered to a release or an extend.
#[derive(Debug, Default)]
struct Outcomes {
    /// Applied (1).
    done: usize,
    /// No answer, or an error reply: the script may or may not have run.
    unknown: usize,
    /// The first unknown one, and its no-answer.
    first: Option<(String, Option<super::backend::NoAnswer>)>,
}

impl Outcomes {
    fn add(
        &mut self,
        i: usize,
        reply: &Result<super::backend::Reply, super::backend::NoAnswer>,
        a: Answer,
    ) {
        match a {
            Answer::Done => self.done += 1,
            // 0 (or nil): the key is gone or another token's.
            Answer::Refused | Answer::Granted(_) => {}
            Answer::Unavailable(why) => {
                self.unknown += 1;
                self.first.get_or_insert_with(|| {
                    (
                        format!("instance {i}: {why}"),
                        reply.as_ref().err().cloned(),
                    )
                });
            }
            Answer::Fatal { code, detail } => {
                self.unknown += 1;
                self.first
                    .get_or_insert_with(|| (format!("instance {i}: -{code} {detail}"), None));
            }
        }
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
    /// `Expired` (too late: the keys may be someone else's), `NotOwner` (a majority answered
    /// the key is not this token's), `Unavailable` (too few answered to tell: not extended,
    /// the validity stands), `TooSlow`.
    pub fn extend(&mut self) -> Result<(), RedisLockError> {
        self.ensure_valid()?;
        let ttl_ms = self.lock.ttl_ms()?;
        let start = self.lock.backend.now();
        let mut o = Outcomes::default();
        for i in 0..self.lock.backend.instances() {
            let reply = self.lock.backend.call(
                i,
                Command::Extend {
                    key: &self.lock.key,
                    token: &self.token,
                    ttl_ms,
                },
            );
            o.add(i, &reply, classify(&reply, false));
        }
        let (confirmed, needed) = (o.done, self.lock.quorum());
        if confirmed < needed {
            let key = self.lock.key.clone();
            return Err(match o.first {
                // Instances that did not answer may still hold this token: not known lost,
                // but not extended either (the validity stands as it was).
                Some((first, source)) if confirmed + o.unknown >= needed => {
                    RedisLockError::Unavailable {
                        key,
                        granted: confirmed,
                        needed,
                        first,
                        source,
                    }
                }
                _ => RedisLockError::NotOwner {
                    key,
                    confirmed,
                    needed,
                },
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

    /// Releases on every instance (each is asked, whatever the others answered).
    ///
    /// # Errors
    /// - [`RedisLockError::NotOwner`]: a majority answered that the key is gone or another
    ///   token's (the lock was lost while held: writes made under it may have interleaved with
    ///   another holder's).
    /// - [`RedisLockError::ReleaseUnknown`]: fewer than a majority confirmed, but with the
    ///   instances that did not answer (or answered an error) a majority may still have held
    ///   this token; their keys stay until the TTL runs out.
    pub fn release(mut self) -> Result<(), RedisLockError> {
        self.released = true;
        let o = self.lock.release_everywhere(&self.token);
        let (confirmed, needed) = (o.done, self.lock.quorum());
        let key = self.lock.key.clone();
        match o.first {
            _ if confirmed >= needed => Ok(()),
            Some((first, source)) if confirmed + o.unknown >= needed => {
                Err(RedisLockError::ReleaseUnknown {
                    key,
                    confirmed,
                    unknown: o.unknown,
                    needed,
                    first,
                    source,
                })
            }
            _ => Err(RedisLockError::NotOwner {
                key,
                confirmed,
                needed,
            }),
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
    use crate::redis::{Backend, Command, NoAnswer, RedisLockError, Reply};

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

    /// A backend of `n` instances whose answers a closure gives, recording every command sent
    /// (`(instance, command name, ttl_ms)`): the oracle of what reached which instance.
    struct Scripted<F: Fn(usize, &Command<'_>) -> Result<Reply, NoAnswer>> {
        n: usize,
        answer: F,
        sent: std::cell::RefCell<Vec<(usize, &'static str, Option<u64>)>>,
        now: Cell<Duration>,
    }

    fn scripted<F: Fn(usize, &Command<'_>) -> Result<Reply, NoAnswer>>(
        n: usize,
        answer: F,
    ) -> Scripted<F> {
        Scripted {
            n,
            answer,
            sent: std::cell::RefCell::new(Vec::new()),
            now: Cell::new(Duration::from_secs(1)),
        }
    }

    impl<F: Fn(usize, &Command<'_>) -> Result<Reply, NoAnswer>> std::fmt::Debug for Scripted<F> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Scripted").field("n", &self.n).finish()
        }
    }

    impl<F: Fn(usize, &Command<'_>) -> Result<Reply, NoAnswer>> Scripted<F> {
        fn sent(&self, name: &str) -> Vec<usize> {
            let sent = self.sent.borrow();
            sent.iter()
                .filter(|(_, n, _)| *n == name)
                .map(|(i, _, _)| *i)
                .collect()
        }
    }

    impl<F: Fn(usize, &Command<'_>) -> Result<Reply, NoAnswer>> Backend for Scripted<F> {
        fn instances(&self) -> usize {
            self.n
        }
        fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
            let (name, ttl) = match command {
                Command::SetNx { ttl_ms, .. } => ("set", Some(ttl_ms)),
                Command::SetNxFenced { ttl_ms, .. } => ("set-fenced", Some(ttl_ms)),
                Command::Release { .. } => ("release", None),
                Command::Del { .. } => ("del", None),
                Command::Extend { ttl_ms, .. } => ("extend", Some(ttl_ms)),
            };
            self.sent.borrow_mut().push((i, name, ttl));
            self.now.set(self.now.get() + Duration::from_millis(1));
            (self.answer)(i, &command)
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

    /// An instance that grants and deletes: `OK` to a SET, 1 to a release or extend.
    fn grants(command: &Command<'_>) -> Result<Reply, NoAnswer> {
        Ok(match command {
            Command::SetNx { .. } => Reply::Ok,
            Command::SetNxFenced { .. } => Reply::Int(1),
            _ => Reply::Int(1),
        })
    }

    fn unreachable(i: usize) -> Result<Reply, NoAnswer> {
        Err(NoAnswer {
            instance: format!("instance {i}"),
            reason: "connection refused".into(),
        })
    }

    /// `extend` reads a majority as acquire and release do (Redlock over three; each command
    /// takes 1 ms of the scripted clock): all three extend — the validity is `ttl − drift`
    /// from the extend's start; two of three unreached — `Unavailable`, not lost, and the
    /// validity stands as it was; a majority answering 0 (the key gone or another token's) —
    /// `NotOwner`, lost. (No test drove `extend` before.)
    #[test]
    fn extend_reads_a_majority_as_acquire_and_release_do() {
        let ttl = Duration::from_secs(1);
        let lock = RedisLock::new(scripted(3, |_, c| grants(c)), "k", ttl);
        let drift = lock.drift();
        let mut g = lock.try_lock().unwrap();
        lock.backend().sleep(Duration::from_millis(300));
        g.extend().unwrap();
        assert_eq!(
            g.validity_left(),
            Some(ttl - drift - Duration::from_millis(3))
        );

        let lock = RedisLock::new(
            scripted(3, |i, c| match c {
                Command::Extend { .. } if i > 0 => unreachable(i),
                _ => grants(c),
            }),
            "k",
            ttl,
        );
        let mut g = lock.try_lock().unwrap();
        let before = g.validity_left().unwrap();
        let e = g.extend().unwrap_err();
        assert!(
            matches!(
                e,
                RedisLockError::Unavailable {
                    granted: 1,
                    needed: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(!e.is_lost(), "{e}");
        assert_eq!(
            g.validity_left(),
            Some(before - Duration::from_millis(3)),
            "not extended: the validity stands"
        );

        let lock = RedisLock::new(
            scripted(3, |i, c| match c {
                Command::Extend { .. } if i > 0 => Ok(Reply::Int(0)),
                _ => grants(c),
            }),
            "k",
            ttl,
        );
        let mut g = lock.try_lock().unwrap();
        let e = g.extend().unwrap_err();
        assert!(
            matches!(
                e,
                RedisLockError::NotOwner {
                    confirmed: 1,
                    needed: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.is_lost(), "{e}");
    }

    /// One fatal reply among three instances does not refuse a majority: instance 1 answers
    /// `-WRONGTYPE` (its key is used by something else) to everything; instances 0 and 2
    /// grant. The acquisition holds with 2 of 3, and the release still reaches all three.
    /// (It failed before: one `Fatal` answer made the whole acquisition `Refused`.)
    #[test]
    fn one_fatal_instance_of_three_does_not_refuse_a_majority() {
        let backend = scripted(3, |i, c| {
            if i == 1 {
                Ok(Reply::Error {
                    code: "WRONGTYPE".into(),
                    detail: "Operation against a key holding the wrong kind of value".into(),
                })
            } else {
                grants(c)
            }
        });
        let lock = RedisLock::new(backend, "k", Duration::from_millis(1000));
        let g = lock.try_lock().expect("2 of 3 granted: a majority");
        assert_eq!(lock.backend().sent("set"), vec![0, 1, 2]);
        g.release().expect("a majority released");
        assert_eq!(lock.backend().sent("release"), vec![0, 1, 2]);
    }

    /// Two fatal instances of three leave no majority possible: `Refused`, at once (not
    /// retried by `lock_timeout`), with the grant undone everywhere.
    #[test]
    fn a_majority_of_fatal_instances_is_refused() {
        let backend = scripted(3, |i, c| {
            if i > 0 {
                Ok(Reply::Error {
                    code: "NOPERM".into(),
                    detail: "no permission".into(),
                })
            } else {
                grants(c)
            }
        });
        let lock = RedisLock::new(backend, "k", Duration::from_millis(1000));
        let e = lock.lock_timeout(Duration::from_secs(5)).unwrap_err();
        assert!(matches!(e, RedisLockError::Refused { .. }), "{e}");
        assert_eq!(lock.backend().sent("set"), vec![0, 1, 2], "one attempt");
        assert_eq!(lock.backend().sent("release"), vec![0, 1, 2]);
    }

    /// Release: every instance reached and deleted — `Ok`.
    #[test]
    fn release_everywhere_deleted_is_ok() {
        let lock = RedisLock::new(scripted(3, |_, c| grants(c)), "k", Duration::from_secs(1));
        lock.try_lock()
            .unwrap()
            .release()
            .expect("deleted everywhere");
    }

    /// Release on one instance that does not answer: the key may still be there until its
    /// TTL — the outcome is unknown, not "you were not the owner". (It failed before: the
    /// release said `NotOwner`, whose `is_lost()` told the caller its writes may have
    /// interleaved.)
    #[test]
    fn release_unreached_is_unknown_not_not_owner() {
        let released = Cell::new(false);
        let backend = scripted(1, |i, c| match c {
            Command::Release { .. } => {
                released.set(true);
                unreachable(i)
            }
            _ => grants(c),
        });
        let lock = RedisLock::new(backend, "k", Duration::from_secs(1));
        let e = lock.try_lock().unwrap().release().unwrap_err();
        assert!(released.get());
        assert!(
            matches!(e, RedisLockError::ReleaseUnknown { .. }),
            "not NotOwner: {e:?}"
        );
        assert!(!e.is_lost() && !e.is_held(), "{e}");
        assert!(e.advice().unwrap().contains("TTL"), "{:?}", e.advice());
        assert!(
            std::error::Error::source(&e).is_some(),
            "the no-answer is the source"
        );
    }

    /// Redlock: two of three unreached at release (one deleted) — unknown; one unreached
    /// (two deleted) — released (a majority confirmed).
    #[test]
    fn redlock_release_with_unreached_instances() {
        let lock = RedisLock::new(
            scripted(3, |i, c| match c {
                Command::Release { .. } if i > 0 => unreachable(i),
                _ => grants(c),
            }),
            "k",
            Duration::from_secs(1),
        );
        let e = lock.try_lock().unwrap().release().unwrap_err();
        assert!(matches!(e, RedisLockError::ReleaseUnknown { .. }), "{e:?}");
        let lock = RedisLock::new(
            scripted(3, |i, c| match c {
                Command::Release { .. } if i == 2 => unreachable(i),
                _ => grants(c),
            }),
            "k",
            Duration::from_secs(1),
        );
        lock.try_lock()
            .unwrap()
            .release()
            .expect("2 of 3 confirmed");
    }

    /// Release where the key is gone (every instance answers 0): really `NotOwner`, lost.
    #[test]
    fn release_of_a_gone_key_is_not_owner() {
        let lock = RedisLock::new(
            scripted(3, |_, c| match c {
                Command::Release { .. } => Ok(Reply::Int(0)),
                _ => grants(c),
            }),
            "k",
            Duration::from_secs(1),
        );
        let e = lock.try_lock().unwrap().release().unwrap_err();
        assert!(matches!(e, RedisLockError::NotOwner { .. }), "{e:?}");
        assert!(e.is_lost());
    }

    /// A TTL that is not a whole number of milliseconds is rounded up on the server, never
    /// truncated to a shorter lease (1.5 ms went out as `PX 1`, and 0.5 ms as `PX 0`, which the
    /// server refuses); a zero TTL, and one past what PX takes, are refused before anything
    /// is sent.
    #[test]
    fn ttl_is_never_truncated() {
        let lock = RedisLock::new(
            scripted(1, |_, c| grants(c)),
            "k",
            Duration::from_micros(2500),
        );
        let _ = lock.try_lock();
        let sent = lock.backend().sent.borrow().clone();
        assert_eq!(sent[0], (0, "set", Some(3)), "rounded up: {sent:?}");
        // The largest TTL `PX` carries is taken; one nanosecond more is refused.
        let lock = RedisLock::new(scripted(1, |_, c| grants(c)), "k", super::MAX_TTL);
        let _ = lock.try_lock();
        let sent = lock.backend().sent.borrow().clone();
        assert_eq!(sent[0].1, "set", "MAX_TTL is sent: {sent:?}");
        // Zero, past MAX_TTL, or within the drift allowance (1 % + 2 ms: no validity would be
        // left, and `lock()` would try forever): refused before anything is sent.
        for ttl in [
            Duration::ZERO,
            Duration::from_micros(500),
            Duration::from_micros(1500),
            Duration::from_millis(2),
            super::MAX_TTL + Duration::from_nanos(1),
        ] {
            let lock = RedisLock::new(scripted(1, |_, c| grants(c)), "k", ttl);
            let e = lock.lock_timeout(Duration::from_secs(1)).unwrap_err();
            assert!(matches!(e, RedisLockError::BadTtl { .. }), "{ttl:?}: {e:?}");
            assert!(lock.backend().sent.borrow().is_empty(), "nothing sent");
        }
    }

    /// No instance at all: refused at once, not `Held` on every attempt forever.
    #[test]
    fn no_instances_is_refused() {
        let lock = RedisLock::new(scripted(0, |_, c| grants(c)), "k", Duration::from_secs(1));
        let e = lock.lock_timeout(Duration::from_secs(1)).unwrap_err();
        assert!(matches!(e, RedisLockError::NoInstances { .. }), "{e:?}");
    }

    /// Fencing over Redlock is refused: the highest counter of a majority need not grow from
    /// one hold to the next (docs/redis.md, row 15), so a resource fenced by it would accept a
    /// stale holder. One instance keeps it. (It was offered before.)
    #[test]
    fn fencing_is_refused_on_redlock() {
        let lock = RedisLock::new(scripted(3, |_, c| grants(c)), "k", Duration::from_secs(1))
            .with_fencing("k:fence");
        let e = lock.try_lock().unwrap_err();
        assert!(
            matches!(e, RedisLockError::FencingOnRedlock { .. }),
            "{e:?}"
        );
        assert!(lock.backend().sent.borrow().is_empty(), "nothing sent");
        let lock = RedisLock::new(scripted(1, |_, c| grants(c)), "k", Duration::from_secs(1))
            .with_fencing("k:fence");
        assert_eq!(lock.try_lock().unwrap().fence(), Some(1));
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
