//! The small interface the recipe runs on ([`Etcd`]): the handful of etcd requests the Mutex
//! makes, typed. [`Gateway`](super::Gateway) implements it over etcd's JSON gateway; the
//! checks' simulated etcd implements it on the model's semantics, so the same recipe code runs
//! against both.

use std::time::{Duration, Instant};

use super::error::EtcdError;

/// A revision of the store (a key's create revision is the lock's fencing token).
pub type Revision = i64;

/// A lease id as etcd grants it (the granting member's id in its top bits: not ordered in
/// time across leaders, so never a fencing token).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseId(pub i64);

/// What a `LeaseGrant` answered: the lease and the TTL etcd granted, which may differ from the
/// one asked for (etcd raises a TTL below its minimum, `1.5 × election timeout` rounded up
/// to a second; a gateway counts in whole seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The lease.
    pub id: LeaseId,
    /// The TTL granted.
    pub ttl: Duration,
}

/// A key and what etcd says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
    /// The revision that created it (the lock's fencing token).
    pub create_revision: Revision,
    /// The revision that last wrote it.
    pub mod_revision: Revision,
    /// `0`: no lease.
    pub lease: i64,
}

/// A range request: one key, or every key with a prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    /// The key, or the prefix.
    pub key: Vec<u8>,
    /// Every key starting with `key`.
    pub prefix: bool,
    /// Sort by create revision: `Some(true)` ascending, `Some(false)` descending.
    pub by_create: Option<bool>,
    /// `0`: no limit.
    pub limit: i64,
    /// Only keys created at or before this revision (`0`: no bound).
    pub max_create_revision: Revision,
}

impl Range {
    /// The one key `key`.
    pub fn key(key: &[u8]) -> Range {
        Range {
            key: key.to_vec(),
            prefix: false,
            by_create: None,
            limit: 0,
            max_create_revision: 0,
        }
    }

    /// The oldest key (by create revision) under `prefix`.
    pub fn oldest(prefix: &[u8]) -> Range {
        Range {
            key: prefix.to_vec(),
            prefix: true,
            by_create: Some(true),
            limit: 1,
            max_create_revision: 0,
        }
    }

    /// The youngest key under `prefix` created at or before `max`.
    pub fn youngest_up_to(prefix: &[u8], max: Revision) -> Range {
        Range {
            key: prefix.to_vec(),
            prefix: true,
            by_create: Some(false),
            limit: 1,
            max_create_revision: max,
        }
    }
}

/// What a range answered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeResponse {
    /// The store's revision when it answered.
    pub header_revision: Revision,
    /// The keys found.
    pub kvs: Vec<KeyValue>,
}

/// One operation of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `Put(key, value)`, attached to `lease` if given.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
        /// The lease the key is attached to.
        lease: Option<LeaseId>,
    },
    /// A range.
    Get(Range),
    /// `Delete(key)`.
    Delete {
        /// The key.
        key: Vec<u8>,
    },
}

/// `If(CreateRevision(compare_key) == compare_create) Then(success) Else(failure)`: the only
/// comparison the recipe needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    /// The key whose create revision is compared.
    pub compare_key: Vec<u8>,
    /// `0`: the key does not exist.
    pub compare_create: Revision,
    /// What runs if the comparison holds.
    pub success: Vec<Op>,
    /// What runs otherwise.
    pub failure: Vec<Op>,
}

/// What one operation of a transaction answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpResponse {
    /// A put's (nothing to report).
    Put,
    /// A range's.
    Get(RangeResponse),
    /// A delete's: how many keys it deleted.
    Delete {
        /// Keys deleted.
        deleted: i64,
    },
}

/// What a transaction answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnResponse {
    /// Whether the comparison held.
    pub succeeded: bool,
    /// The store's revision after the transaction.
    pub header_revision: Revision,
    /// The responses of the branch that ran, in order.
    pub responses: Vec<OpResponse>,
}

impl TxnResponse {
    /// The `i`-th response, if it is a range's.
    pub fn range(&self, i: usize) -> Option<&RangeResponse> {
        match self.responses.get(i) {
            Some(OpResponse::Get(r)) => Some(r),
            _ => None,
        }
    }
}

/// How a wait for a key's delete ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// The key was deleted (at or after the start revision).
    Deleted,
    /// Nothing happened within the timeout: look again.
    TimedOut,
}

/// The etcd requests the recipe makes. Every method is one request (a watch is one stream
/// that ends at the first delete); timeouts and time come through it too ([`Etcd::now`]) so a
/// simulated clock can drive them.
pub trait Etcd: Send + Sync {
    /// `LeaseGrant(ttl)`: the lease and the TTL etcd granted (its answer's, not `ttl`).
    ///
    /// # Errors
    /// See [`EtcdError`].
    fn grant(&self, ttl: Duration) -> Result<Grant, EtcdError>;

    /// One `LeaseKeepAlive`: the TTL the lease has again, or `None` if it is gone.
    ///
    /// # Errors
    /// See [`EtcdError`].
    fn keepalive(&self, lease: LeaseId) -> Result<Option<Duration>, EtcdError>;

    /// `LeaseRevoke`: the lease and its keys are deleted.
    ///
    /// # Errors
    /// See [`EtcdError`] ([`EtcdError::LeaseNotFound`] if it was already gone).
    fn revoke(&self, lease: LeaseId) -> Result<(), EtcdError>;

    /// A transaction.
    ///
    /// # Errors
    /// See [`EtcdError`].
    fn txn(&self, txn: &Txn) -> Result<TxnResponse, EtcdError>;

    /// A range.
    ///
    /// # Errors
    /// See [`EtcdError`].
    fn range(&self, range: &Range) -> Result<RangeResponse, EtcdError>;

    /// Watches `key` from revision `from` until it is deleted or `timeout` passes.
    ///
    /// # Errors
    /// [`EtcdError::Compacted`] if `from` is older than the compaction point;
    /// [`EtcdError::WatchCanceled`] if the watch ended for another reason (the member shut
    /// down or lost its leader, the stream ended); see [`EtcdError`].
    fn wait_delete(
        &self,
        key: &[u8],
        from: Revision,
        timeout: Duration,
    ) -> Result<WatchEnd, EtcdError>;

    /// The clock the recipe's deadlines run on.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Sleeps on that clock.
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}
