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
    gone: bool,
}

#[derive(Debug)]
struct SessionInner<E> {
    etcd: Arc<E>,
    lease: LeaseId,
    ttl: Duration,
    state: Mutex<SessionState>,
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
            }
            Ok(None) | Err(EtcdError::LeaseNotFound) => {
                self.state.lock().unwrap_or_else(|e| e.into_inner()).gone = true;
            }
            // No answer: the deadline runs down; try again at the next beat.
            Err(_) => {}
        }
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
    /// Grants a lease of `ttl` and starts keeping it alive.
    ///
    /// # Errors
    /// The grant failed.
    pub fn new(etcd: Arc<E>, ttl: Duration) -> Result<Session<E>, EtcdError> {
        let sent = etcd.now();
        let lease = etcd.grant(ttl)?;
        let inner = Arc::new(SessionInner {
            etcd,
            lease,
            ttl,
            state: Mutex::new(SessionState {
                deadline: sent + ttl,
                gone: false,
            }),
            stop: AtomicBool::new(false),
            wake: Condvar::new(),
        });
        let beat = inner.clone();
        let keeper = std::thread::Builder::new()
            .name("lockwright-etcd-keepalive".into())
            .spawn(move || {
                let every = beat.ttl / 3;
                let mut guard = beat.state.lock().unwrap_or_else(|e| e.into_inner());
                loop {
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
        Ok(Session { inner, keeper })
    }

    /// A session without its keepalive thread: the caller sends each keepalive
    /// ([`Session::keepalive_once`]) — for a simulated etcd whose clock and scheduler the test
    /// drives (shuttle).
    ///
    /// # Errors
    /// The grant failed.
    #[cfg(feature = "test-util")]
    pub fn without_keeper(etcd: Arc<E>, ttl: Duration) -> Result<Session<E>, EtcdError> {
        let sent = etcd.now();
        let lease = etcd.grant(ttl)?;
        Ok(Session {
            inner: Arc::new(SessionInner {
                etcd,
                lease,
                ttl,
                state: Mutex::new(SessionState {
                    deadline: sent + ttl,
                    gone: false,
                }),
                stop: AtomicBool::new(true),
                wake: Condvar::new(),
            }),
            keeper: None,
        })
    }

    /// One keepalive, as the keepalive thread sends them.
    #[cfg(feature = "test-util")]
    pub fn keepalive_once(&self) {
        self.inner.keepalive_once();
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
        self.inner.wake.notify_all();
        if let Some(t) = self.keeper.take() {
            let _ = t.join();
        }
        let _ = self.inner.etcd.revoke(self.inner.lease);
    }
}

/// etcd's `concurrency.Mutex` on `prefix`, one key per session: `<prefix>/<lease in hex>` —
/// the names etcd's Go Mutex, `etcdctl lock` and the lock service use, so they exclude one
/// another.
#[derive(Debug)]
pub struct EtcdMutex<E: Etcd + 'static> {
    session: Arc<Session<E>>,
    prefix: Vec<u8>,
    key: Vec<u8>,
    #[cfg(feature = "test-util")]
    defect: Option<EtcdDefect>,
}

/// Known etcd recipe defects, re-created in the shipped code for the checks that must catch
/// them (`test-util` only).
#[cfg(feature = "test-util")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtcdDefect {
    /// etcd 3.4's Mutex: no re-read of the own key after waiting (etcd-io/etcd#11456), and no
    /// look at the session's deadline before returning.
    NoRecheck,
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
            #[cfg(feature = "test-util")]
            defect: None,
        }
    }

    /// The same mutex with a known defect switched on.
    #[cfg(feature = "test-util")]
    #[must_use]
    pub fn with_defect(mut self, defect: EtcdDefect) -> EtcdMutex<E> {
        self.defect = Some(defect);
        self
    }

    fn rechecks(&self) -> bool {
        #[cfg(feature = "test-util")]
        if self.defect == Some(EtcdDefect::NoRecheck) {
            return false;
        }
        true
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
    /// # Errors
    /// [`EtcdLockError::TimedOut`] (the own key is deleted again), [`EtcdLockError::LockLost`]
    /// (the session ended or the key is gone), [`EtcdLockError::Etcd`].
    pub fn lock(&self, timeout: Duration) -> Result<EtcdGuard<'_, E>, EtcdLockError> {
        let etcd = self.session.etcd();
        let until = etcd.now() + timeout;
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
                e => self.err(e),
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
        if owner != Some(my_rev) {
            self.wait_older(my_rev, until)?;
        }
        if !self.rechecks() {
            return Ok(EtcdGuard {
                mutex: self,
                my_rev,
                released: false,
            });
        }
        // Re-read the own key (3.5's check; 3.4 returned here, #11456).
        let mine = etcd
            .range(&Range::key(&self.key))
            .map_err(|e| self.err(e))?;
        if mine.kvs.first().map(|kv| kv.create_revision) != Some(my_rev) {
            return Err(self.lost(LostReason::KeyGone));
        }
        if let Some(reason) = self.session.lost() {
            return Err(self.lost(reason));
        }
        Ok(EtcdGuard {
            mutex: self,
            my_rev,
            released: false,
        })
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
                self.delete_own(my_rev);
                return Err(EtcdLockError::TimedOut { key: self.key() });
            }
            if let Some(reason) = self.session.lost() {
                return Err(self.lost(reason));
            }
            let wait = (until - now).min(Duration::from_secs(1));
            match etcd.wait_delete(&older.key, r.header_revision, wait) {
                Ok(WatchEnd::Deleted | WatchEnd::TimedOut) => {}
                // Compacted past the range: the next range reads the current state again.
                Err(EtcdError::Compacted { .. }) => {}
                Err(e) => return Err(self.err(e)),
            }
        }
    }

    /// `If(CreateRevision(key) == my_rev) Then(Delete(key))`: an unlock (or a retry of one)
    /// never deletes a newer key of the same session (etcd-io/etcd#22082).
    fn delete_own(&self, my_rev: Revision) -> bool {
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
            .is_ok_and(|t| t.succeeded)
    }
}

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
            self.mutex.delete_own(self.my_rev);
        }
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
