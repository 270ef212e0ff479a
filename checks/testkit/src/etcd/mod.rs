//! etcd 3.4's `concurrency.Mutex` for the checks, without a switch in the shipped code: an
//! [`Etcd`] wrapper, [`Etcd34`], under which the shipped [`EtcdMutex`](lockwright::etcd::EtcdMutex)
//! behaves as the 3.4 Mutex does after its wait.
//!
//! Why a wrapper is faithful. The 3.4 and 3.5 Mutexes differ by one step: after
//! `waitDeletes`, 3.5 reads its own key again (`Get(myKey)`) and returns `ErrSessionExpired`
//! when it is gone or was re-created; 3.4 returns "held" at once (etcd-io/etcd#11456). The
//! shipped recipe's only range of one key under the lock prefix is that re-read (the lock
//! transaction reads the own key inside the transaction, not through `range`), and a range
//! changes nothing in the store. [`Etcd34`] answers it as if the key were there with the
//! create revision the lock transaction gave it, so the recipe passes its re-check exactly
//! where 3.4 has none, and everything else (the transaction, the wait, the unlock) goes to
//! the real store unchanged.
//!
//! What it does not remove: lockwright's own look at the session's deadline (after the wait
//! and before returning). Go's 3.4 Mutex has none, so a twin that wants the 3.4 Mutex to fail
//! must lose the lease where the client's clock cannot see it — etcd revoking it (an
//! operator's `etcdctl lease revoke`, or the server's expiry running ahead of the client's
//! deadline) — as `checks/tests/etcd/shuttle_sim.rs` does.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use lockwright::etcd::client::{
    Etcd, Grant, KeyValue, LeaseId, Op, Range, RangeResponse, Revision, Txn, TxnResponse, WatchEnd,
};
use lockwright::etcd::EtcdError;

/// The [`Etcd`] `inner`, with the post-wait re-read of a lock key answered as etcd 3.4's
/// Mutex would behave (it never reads): the key exists at the create revision its lock
/// transaction gave it.
#[derive(Debug)]
pub struct Etcd34<E> {
    inner: E,
    /// Lock key → the create revision its last lock transaction answered.
    mine: Mutex<HashMap<Vec<u8>, Revision>>,
}

impl<E: Etcd> Etcd34<E> {
    /// Wraps `inner`.
    pub fn new(inner: E) -> Etcd34<E> {
        Etcd34 {
            inner,
            mine: Mutex::new(HashMap::new()),
        }
    }

    /// The wrapped interface.
    pub fn inner(&self) -> &E {
        &self.inner
    }
}

/// Whether `txn` is the Mutex's lock transaction: `If(CreateRevision(k) == 0) Then(Put(k,
/// lease), …) Else(Get(k), …)`.
fn is_lock_txn(txn: &Txn) -> bool {
    txn.compare_create == 0
        && matches!(txn.success.first(), Some(Op::Put { key, lease: Some(_), .. }) if *key == txn.compare_key)
}

impl<E: Etcd> Etcd for Etcd34<E> {
    fn grant(&self, ttl: Duration) -> Result<Grant, EtcdError> {
        self.inner.grant(ttl)
    }

    fn keepalive(&self, lease: LeaseId) -> Result<Option<Duration>, EtcdError> {
        self.inner.keepalive(lease)
    }

    fn revoke(&self, lease: LeaseId) -> Result<(), EtcdError> {
        self.inner.revoke(lease)
    }

    fn txn(&self, txn: &Txn) -> Result<TxnResponse, EtcdError> {
        let t = self.inner.txn(txn)?;
        if is_lock_txn(txn) {
            let create = if t.succeeded {
                Some(t.header_revision)
            } else {
                t.range(0)
                    .and_then(|r| r.kvs.first())
                    .map(|kv| kv.create_revision)
            };
            if let Some(create) = create {
                self.mine
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(txn.compare_key.clone(), create);
            }
        }
        Ok(t)
    }

    fn range(&self, range: &Range) -> Result<RangeResponse, EtcdError> {
        let r = self.inner.range(range)?;
        if range.prefix {
            return Ok(r);
        }
        let mine = self
            .mine
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&range.key)
            .copied();
        match mine {
            // 3.4 never asks: the recipe sees its key as it left it.
            Some(create) => Ok(RangeResponse {
                header_revision: r.header_revision,
                kvs: vec![KeyValue {
                    key: range.key.clone(),
                    value: Vec::new(),
                    create_revision: create,
                    mod_revision: create,
                    lease: 0,
                }],
            }),
            None => Ok(r),
        }
    }

    fn wait_delete(
        &self,
        key: &[u8],
        from: Revision,
        timeout: Duration,
    ) -> Result<WatchEnd, EtcdError> {
        self.inner.wait_delete(key, from, timeout)
    }

    fn now(&self) -> Instant {
        self.inner.now()
    }

    fn sleep(&self, d: Duration) {
        self.inner.sleep(d);
    }
}
