//! The mutex: a [`Session`] (a lease kept alive every TTL/3, with a client-side deadline
//! measured from each keepalive's *send*), [`EtcdMutex`] (etcd 3.5's `concurrency.Mutex`
//! recipe) and [`EtcdGuard`] (the fencing token, lock-lost detection, guarded writes and an
//! unlock that cannot delete a newer key).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::client::{Etcd, LeaseId, Op, Range, Revision, Txn, WatchEnd};
use super::error::{EtcdError, EtcdLockError, LostReason};

#[derive(Debug)]
struct SessionState {
    /// The last answered keepalive's send time + the TTL it answered.
    deadline: Instant,
    /// The TTL etcd last answered (the grant's, then each keepalive's): the keepalive period
    /// is a third of it.
    ttl: Duration,
    gone: bool,
}

#[derive(Debug)]
struct SessionInner<E> {
    etcd: Arc<E>,
    lease: LeaseId,
    state: Mutex<SessionState>,
    /// The lock keys this session is acquiring or holding: a second lock of the same key
    /// (`<prefix>/<lease>`) is refused while one is in use.
    in_use: Mutex<Vec<Vec<u8>>>,
    stop: AtomicBool,
    wake: Condvar,
}

impl<E: Etcd> SessionInner<E> {
    /// One keepalive; the deadline counts from its send, never from the answer's arrival
    /// (Go's `Session` counts from the arrival: late by the answer's delay; docs/etcd.md rows
    /// 3–4).
    fn keepalive_once(&self) {
        let sent = self.etcd.now();
        match self.etcd.keepalive(self.lease) {
            Ok(Some(ttl)) => {
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                s.deadline = s.deadline.max(sent + ttl);
                s.ttl = ttl;
            }
            Ok(None) | Err(EtcdError::LeaseNotFound) => {
                self.state.lock().unwrap_or_else(|e| e.into_inner()).gone = true;
            }
            // No answer: the deadline runs down; try again at the next beat.
            Err(_) => {}
        }
    }

    /// Marks `key` in use; false if it already is.
    fn claim(&self, key: &[u8]) -> bool {
        let mut keys = self.in_use.lock().unwrap_or_else(|e| e.into_inner());
        if keys.iter().any(|k| k == key) {
            return false;
        }
        keys.push(key.to_vec());
        true
    }

    fn release(&self, key: &[u8]) {
        self.in_use
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| k != key);
    }

    fn lost(&self) -> Option<LostReason> {
        // The clock first: never call into the interface with the state locked (a simulated
        // etcd may switch threads there).
        let now = self.etcd.now();
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.gone {
            Some(LostReason::LeaseGone)
        } else if now >= s.deadline {
            Some(LostReason::DeadlinePassed)
        } else {
            None
        }
    }
}

/// A session: one lease, kept alive by a background thread every TTL/3 until dropped (then
/// revoked, which deletes its keys).
#[derive(Debug)]
pub struct Session<E: Etcd + 'static> {
    inner: Arc<SessionInner<E>>,
    keeper: Option<JoinHandle<()>>,
}

impl<E: Etcd + 'static> Session<E> {
    /// Grants a lease of `ttl` and starts keeping it alive every third of the TTL etcd
    /// answers (etcd may grant another TTL than the one asked for: it raises a TTL below its
    /// minimum). The deadline counts from the grant's send with the granted TTL.
    ///
    /// # Errors
    /// The grant failed.
    pub fn new(etcd: Arc<E>, ttl: Duration) -> Result<Session<E>, EtcdError> {
        let mut session = Session::without_keeper(etcd, ttl)?;
        session.inner.stop.store(false, Ordering::SeqCst);
        let beat = session.inner.clone();
        session.keeper = std::thread::Builder::new()
            .name("lockwright-etcd-keepalive".into())
            .spawn(move || {
                let mut guard = beat.state.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    // Checked under the state lock, which `Drop` takes to notify: a drop during
                    // a keepalive is seen here, not after a whole beat's wait.
                    if beat.stop.load(Ordering::SeqCst) || guard.gone {
                        return;
                    }
                    // A TTL of zero (a custom `Etcd` may answer one) must not spin the thread.
                    let every = (guard.ttl / 3).max(MIN_BEAT);
                    guard = beat
                        .wake
                        .wait_timeout(guard, every)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    if beat.stop.load(Ordering::SeqCst) || guard.gone {
                        return;
                    }
                    drop(guard);
                    beat.keepalive_once();
                    guard = beat.state.lock().unwrap_or_else(|e| e.into_inner());
                }
            })
            .ok();
        Ok(session)
    }

    /// A session whose keepalives the caller sends: no thread is started, and the lease
    /// lives only as long as the caller calls [`Session::keepalive_once`] at least once per
    /// [`Session::ttl`] (a third of it, as [`Session::new`]'s thread does, leaves room for
    /// two lost ones). For callers that drive their own runtime or scheduler (the checks'
    /// simulated etcd under shuttle is one). Everything else is as [`Session::new`]: the
    /// deadline counts from the grant's send with the granted TTL, and dropping the session
    /// revokes the lease.
    ///
    /// # Errors
    /// The grant failed.
    pub fn without_keeper(etcd: Arc<E>, ttl: Duration) -> Result<Session<E>, EtcdError> {
        let sent = etcd.now();
        let grant = etcd.grant(ttl)?;
        Ok(Session {
            inner: Arc::new(SessionInner {
                etcd,
                lease: grant.id,
                state: Mutex::new(SessionState {
                    deadline: sent + grant.ttl,
                    ttl: grant.ttl,
                    gone: false,
                }),
                in_use: Mutex::new(Vec::new()),
                stop: AtomicBool::new(true),
                wake: Condvar::new(),
            }),
            keeper: None,
        })
    }

    /// Sends one keepalive now, as [`Session::new`]'s thread does every third of the TTL:
    /// an answer moves the deadline to this call's start + the TTL answered; an answer that
    /// the lease is gone ends the session; no answer changes nothing.
    pub fn keepalive_once(&self) {
        self.inner.keepalive_once();
    }

    /// The TTL etcd last answered for the lease (the grant's, then each keepalive's).
    pub fn ttl(&self) -> Duration {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ttl
    }

    /// The session's lease.
    pub fn lease(&self) -> LeaseId {
        self.inner.lease
    }

    /// Why the session is over, or `None` while its deadline has not passed.
    pub fn lost(&self) -> Option<LostReason> {
        self.inner.lost()
    }

    /// The etcd interface.
    pub fn etcd(&self) -> &Arc<E> {
        &self.inner.etcd
    }
}

impl<E: Etcd + 'static> Drop for Session<E> {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        {
            // Under the state lock: the keepalive thread is either before its check of `stop`
            // or waiting, never between them, so the wake-up is not lost.
            let _state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            self.inner.wake.notify_all();
        }
        if let Some(t) = self.keeper.take() {
            let _ = t.join();
        }
        let _ = self.inner.etcd.revoke(self.inner.lease);
    }
}

/// etcd's `concurrency.Mutex` on `prefix`, one key per session: `<prefix>/<lease in hex>` —
/// the names etcd's Go Mutex, `etcdctl lock` and the lock service use, so they exclude one
/// another. Two `EtcdMutex` of one session on one prefix share that key, so they cannot hold
/// at once: the second `lock` is refused ([`EtcdLockError::AlreadyLocked`]); holders that must
/// exclude each other need a session each.
#[derive(Debug)]
pub struct EtcdMutex<E: Etcd + 'static> {
    session: Arc<Session<E>>,
    prefix: Vec<u8>,
    key: Vec<u8>,
}

impl<E: Etcd + 'static> EtcdMutex<E> {
    /// The mutex on `prefix` for `session`: its keys are `prefix + "/" + <lease hex>`, exactly
    /// as Go's `concurrency.NewMutex(session, prefix)` names them (a prefix that already ends
    /// in `/` gets a second one there too), so both exclude each other on the same prefix.
    pub fn new(session: Arc<Session<E>>, prefix: &str) -> EtcdMutex<E> {
        let prefix = format!("{prefix}/").into_bytes();
        let mut key = prefix.clone();
        key.extend_from_slice(format!("{:x}", session.lease().0).as_bytes());
        EtcdMutex {
            session,
            prefix,
            key,
        }
    }

    /// The own key.
    pub fn key(&self) -> String {
        String::from_utf8_lossy(&self.key).into_owned()
    }

    fn err(&self, source: EtcdError) -> EtcdLockError {
        EtcdLockError::Etcd {
            key: self.key(),
            source,
        }
    }

    fn lost(&self, reason: LostReason) -> EtcdLockError {
        EtcdLockError::LockLost {
            key: self.key(),
            reason,
        }
    }

    /// Locks, waiting at most `timeout`: the lock transaction, then the wait for every older
    /// key's delete, then (3.5) a re-read of the own key — a waiter whose lease expired while
    /// it waited is told so (etcd-io/etcd#11456), never that it holds.
    ///
    /// One session holds a key once: a second `lock` of this mutex, or of another
    /// `EtcdMutex` of the same session and prefix (the same key, `<prefix>/<lease>`), is
    /// refused with [`EtcdLockError::AlreadyLocked`] while the first is acquiring or held.
    /// (Go's `concurrency.Mutex` has the same key sharing and no such check: its second
    /// `Lock` finds the key, returns at once, and the first `Unlock` deletes the key under
    /// both.)
    ///
    /// When it fails after its key was created, the key is deleted again (if it is still
    /// this attempt's), so no other client waits behind it; if that delete gets no answer
    /// either, the key stays as long as the session lives — its keepalives keep the lease —
    /// so other clients on the prefix wait until the next `lock` on this session finds and
    /// reuses it, or the session is dropped (which revokes the lease). A lock transaction
    /// whose answer was lost is followed by a delete of the key by name (safe: no guard of
    /// this session owns it meanwhile).
    ///
    /// # Errors
    /// [`EtcdLockError::AlreadyLocked`], [`EtcdLockError::TimedOut`],
    /// [`EtcdLockError::LockLost`] (the session ended or the key is gone),
    /// [`EtcdLockError::Etcd`].
    pub fn lock(&self, timeout: Duration) -> Result<EtcdGuard<'_, E>, EtcdLockError> {
        if !self.session.inner.claim(&self.key) {
            return Err(EtcdLockError::AlreadyLocked { key: self.key() });
        }
        match self.lock_claimed(timeout) {
            Ok(my_rev) => Ok(EtcdGuard {
                mutex: self,
                my_rev,
                released: false,
            }),
            Err(e) => {
                self.session.inner.release(&self.key);
                Err(e)
            }
        }
    }

    /// [`EtcdMutex::lock`] once the key is claimed: the own key's create revision.
    fn lock_claimed(&self, timeout: Duration) -> Result<Revision, EtcdLockError> {
        let etcd = self.session.etcd();
        // A timeout past what the clock can carry (`Duration::MAX`: no timeout) waits about
        // 136 years (it panicked before: `Instant + Duration` overflowed).
        let now = etcd.now();
        let until = now
            .checked_add(timeout)
            .unwrap_or_else(|| now + Duration::from_secs(1 << 32));
        let lease = self.session.lease();
        let t = etcd
            .txn(&Txn {
                compare_key: self.key.clone(),
                compare_create: 0,
                success: vec![
                    Op::Put {
                        key: self.key.clone(),
                        value: Vec::new(),
                        lease: Some(lease),
                    },
                    Op::Get(Range::oldest(&self.prefix)),
                ],
                failure: vec![
                    Op::Get(Range::key(&self.key)),
                    Op::Get(Range::oldest(&self.prefix)),
                ],
            })
            .map_err(|e| match e {
                EtcdError::LeaseNotFound => self.lost(LostReason::LeaseGone),
                e => {
                    // No answer: the transaction may have made the key. While this session's
                    // claim on the key is held no guard of it owns the key, so it is deleted by
                    // name (best effort) rather than left for the session's life.
                    let _ = self.delete_by_name();
                    self.err(e)
                }
            })?;
        let my_rev = if t.succeeded {
            t.header_revision
        } else {
            t.range(0)
                .and_then(|r| r.kvs.first())
                .map(|kv| kv.create_revision)
                .ok_or_else(|| self.lost(LostReason::KeyGone))?
        };
        let owner = t
            .range(1)
            .and_then(|r| r.kvs.first())
            .map(|kv| kv.create_revision);
        // From here the key exists: every failure deletes it again.
        self.acquire(my_rev, owner, until).inspect_err(|_| {
            let _ = self.delete_own(my_rev);
        })?;
        Ok(my_rev)
    }

    /// The wait and the re-check, once the own key (created at `my_rev`) exists.
    fn acquire(
        &self,
        my_rev: Revision,
        owner: Option<Revision>,
        until: Instant,
    ) -> Result<(), EtcdLockError> {
        if owner != Some(my_rev) {
            self.wait_older(my_rev, until)?;
        }
        // Re-read the own key (3.5's check; 3.4 returned here, #11456).
        let mine = self
            .session
            .etcd()
            .range(&Range::key(&self.key))
            .map_err(|e| self.err(e))?;
        if mine.kvs.first().map(|kv| kv.create_revision) != Some(my_rev) {
            return Err(self.lost(LostReason::KeyGone));
        }
        if let Some(reason) = self.session.lost() {
            return Err(self.lost(reason));
        }
        Ok(())
    }

    /// `waitDeletes`: until no key created before `my_rev` is left.
    fn wait_older(&self, my_rev: Revision, until: Instant) -> Result<(), EtcdLockError> {
        let etcd = self.session.etcd();
        loop {
            let r = etcd
                .range(&Range::youngest_up_to(&self.prefix, my_rev - 1))
                .map_err(|e| self.err(e))?;
            let Some(older) = r.kvs.first() else {
                return Ok(());
            };
            let now = etcd.now();
            if now >= until {
                return Err(EtcdLockError::TimedOut { key: self.key() });
            }
            if let Some(reason) = self.session.lost() {
                return Err(self.lost(reason));
            }
            let wait = (until - now).min(Duration::from_secs(1));
            match etcd.wait_delete(&older.key, r.header_revision, wait) {
                Ok(WatchEnd::Deleted | WatchEnd::TimedOut) => {}
                // Compacted past the start: the next range reads the current state again.
                Err(EtcdError::Compacted { .. }) => {}
                // Cancelled otherwise (the member shut down, lost its leader, the stream
                // ended): read the current state again and watch again, after a pause so a
                // member that cancels at once is not asked in a tight loop.
                Err(EtcdError::WatchCanceled { .. }) => {
                    etcd.sleep(RECHECK_PAUSE.min(until.saturating_duration_since(etcd.now())));
                }
                Err(e) => return Err(self.err(e)),
            }
        }
    }

    /// `If(CreateRevision(key) == my_rev) Then(Delete(key))`: an unlock (or a retry of one)
    /// never deletes a newer key of the same session (etcd-io/etcd#22082). Whether it deleted.
    /// Deletes the own key whatever its create revision: only while the session's claim on
    /// the key is held by a lock attempt that has no guard yet (no guard owns the key then).
    fn delete_by_name(&self) -> Result<bool, EtcdError> {
        self.session
            .etcd()
            .txn(&Txn {
                compare_key: self.key.clone(),
                compare_create: 0,
                success: Vec::new(),
                failure: vec![Op::Delete {
                    key: self.key.clone(),
                }],
            })
            .map(|t| !t.succeeded)
    }

    fn delete_own(&self, my_rev: Revision) -> Result<bool, EtcdError> {
        self.session
            .etcd()
            .txn(&Txn {
                compare_key: self.key.clone(),
                compare_create: my_rev,
                success: vec![Op::Delete {
                    key: self.key.clone(),
                }],
                failure: Vec::new(),
            })
            .map(|t| t.succeeded)
    }
}

/// The shortest pause between two keepalives of a session's thread.
const MIN_BEAT: Duration = Duration::from_millis(10);

/// The pause before watching again after a watch the server cancelled (not for compaction).
const RECHECK_PAUSE: Duration = Duration::from_millis(100);

/// A held lock: unlocks on drop.
#[must_use = "the lock is released when the guard is dropped"]
#[derive(Debug)]
pub struct EtcdGuard<'a, E: Etcd + 'static> {
    mutex: &'a EtcdMutex<E>,
    my_rev: Revision,
    released: bool,
}

impl<E: Etcd + 'static> EtcdGuard<'_, E> {
    /// The fencing token: the own key's create revision (ordered across holders and leaders;
    /// a lease id is not).
    pub fn token(&self) -> Revision {
        self.my_rev
    }

    /// Whether the session's deadline has not passed. A `false` is final; a `true` says
    /// nothing about a write already in flight: fence it ([`EtcdGuard::guarded_put`],
    /// [`EtcdGuard::claim`]).
    pub fn is_held(&self) -> bool {
        self.mutex.session.lost().is_none()
    }

    /// # Errors
    /// [`EtcdLockError::LockLost`] once the session's deadline passed or its lease is gone.
    pub fn check(&self) -> Result<(), EtcdLockError> {
        match self.mutex.session.lost() {
            Some(reason) => Err(self.mutex.lost(reason)),
            None => Ok(()),
        }
    }

    /// Writes `key = value` in etcd only if the lock key is still this hold's
    /// (`IsOwner()`: `CreateRevision(lock key) == token`), in one transaction.
    ///
    /// # Errors
    /// [`EtcdLockError::LockLost`] if it is not (nothing written); [`EtcdLockError::Etcd`].
    pub fn guarded_put(&self, key: &[u8], value: &[u8]) -> Result<(), EtcdLockError> {
        let m = self.mutex;
        let t = m
            .session
            .etcd()
            .txn(&Txn {
                compare_key: m.key.clone(),
                compare_create: self.my_rev,
                success: vec![Op::Put {
                    key: key.to_vec(),
                    value: value.to_vec(),
                    lease: None,
                }],
                failure: Vec::new(),
            })
            .map_err(|e| m.err(e))?;
        if t.succeeded {
            Ok(())
        } else {
            Err(m.lost(LostReason::KeyGone))
        }
    }

    /// Claims this hold's token at `resource` before any read of it: from then on the
    /// resource refuses every older token.
    ///
    /// # Errors
    /// [`EtcdLockError::LockLost`] if the resource already saw a newer token.
    pub fn claim(&self, resource: &HighWaterMark) -> Result<(), EtcdLockError> {
        resource
            .claim(self.my_rev)
            .map_err(|_| self.mutex.lost(LostReason::KeyGone))
    }

    /// Unlocks: deletes the own key only if it is still this hold's.
    ///
    /// # Errors
    /// [`EtcdLockError::LockLost`] if the key was already gone (the lock was lost while held);
    /// [`EtcdLockError::Etcd`].
    pub fn unlock(mut self) -> Result<(), EtcdLockError> {
        let m = self.mutex;
        // No answer: `released` stays false, so the drop at the end of this call sends the
        // conditional delete once more (a key left behind would block every other client for
        // as long as the session lives).
        let t = m
            .session
            .etcd()
            .txn(&Txn {
                compare_key: m.key.clone(),
                compare_create: self.my_rev,
                success: vec![Op::Delete { key: m.key.clone() }],
                failure: Vec::new(),
            })
            .map_err(|e| m.err(e))?;
        self.released = true;
        if t.succeeded {
            Ok(())
        } else {
            Err(m.lost(LostReason::KeyGone))
        }
    }
}

impl<E: Etcd + 'static> Drop for EtcdGuard<'_, E> {
    fn drop(&mut self) {
        if !self.released {
            let _ = self.mutex.delete_own(self.my_rev);
        }
        self.mutex.session.inner.release(&self.mutex.key);
    }
}

/// A resource's fence for create-revision tokens: it remembers the highest token claimed and
/// refuses older ones.
#[derive(Debug, Default)]
pub struct HighWaterMark {
    highest: Mutex<Revision>,
}

impl HighWaterMark {
    /// A fence that has seen no token.
    pub fn new() -> HighWaterMark {
        HighWaterMark::default()
    }

    /// # Errors
    /// The highest token seen, if `token` is older.
    pub fn claim(&self, token: Revision) -> Result<(), Revision> {
        let mut h = self.highest.lock().unwrap_or_else(|e| e.into_inner());
        if token < *h {
            return Err(*h);
        }
        *h = token;
        Ok(())
    }

    /// Runs `f` if `token` is still the highest.
    ///
    /// # Errors
    /// The highest token, if `token` is older.
    pub fn write<T>(&self, token: Revision, f: impl FnOnce() -> T) -> Result<T, Revision> {
        let h = self.highest.lock().unwrap_or_else(|e| e.into_inner());
        if token < *h {
            return Err(*h);
        }
        Ok(f())
    }
}
