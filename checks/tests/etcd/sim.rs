//! A simulated etcd for shuttle: the [`Etcd`] interface answered by the model's own
//! semantics (`lockwright_model::etcd::Server`: revisions, lease ids, keys, expiry by ticks),
//! so the real recipe runs on exactly the server the model checks. It supports the requests
//! the recipe sends and panics on any other (a finding: the recipe changed).

use std::sync::Arc;
use std::time::{Duration, Instant};

use lockwright::etcd::client::{
    Etcd, Grant, KeyValue, LeaseId, Op, OpResponse, Range, RangeResponse, Revision, Txn,
    TxnResponse, WatchEnd,
};
use lockwright::etcd::EtcdError;
use lockwright_model::etcd::{Server, TTL};
use shuttle::sync::Mutex;

/// The lock prefix the simulated clients use.
pub const PREFIX: &str = "/sim";
/// The counter key of the guarded writes.
pub const COUNTER: &[u8] = b"/sim-counter";
/// One tick of the model's clock, in the recipe's time.
pub const TICK: Duration = Duration::from_secs(1);

#[derive(Debug)]
struct SimState {
    server: Server,
    ticks: u32,
}

/// The simulated etcd.
#[derive(Debug, Clone)]
pub struct Sim {
    state: Arc<Mutex<SimState>>,
    base: Instant,
}

fn lease_of(key: &[u8]) -> Option<u8> {
    let rest = key.strip_prefix(format!("{PREFIX}/").as_bytes())?;
    u8::from_str_radix(std::str::from_utf8(rest).ok()?, 16).ok()
}

fn lock_key(lease: u8) -> Vec<u8> {
    format!("{PREFIX}/{lease:x}").into_bytes()
}

fn kv(k: lockwright_model::etcd::LockKey) -> KeyValue {
    KeyValue {
        key: lock_key(k.lease),
        value: Vec::new(),
        create_revision: i64::from(k.create),
        mod_revision: i64::from(k.create),
        lease: i64::from(k.lease),
    }
}

impl Sim {
    pub fn new() -> Sim {
        Sim {
            state: Arc::new(Mutex::new(SimState {
                server: Server::new(u8::MAX),
                ticks: 0,
            })),
            base: Instant::now(),
        }
    }

    /// One tick of the server's clock: the leases in `kept` were kept alive this tick; the
    /// others lose a tick and are revoked with their keys when they run out.
    pub fn tick(&self, kept: &[LeaseId]) {
        let mut s = self.state.lock().expect("sim");
        s.server
            .tick(TTL, |l| kept.contains(&LeaseId(i64::from(l))));
        s.ticks += 1;
    }

    /// A plain put of the counter (no compare): a write outside etcd's fence.
    pub fn put_counter_plain(&self, value: u8) {
        let mut s = self.state.lock().expect("sim");
        s.server.rev += 1;
        let rev = s.server.rev;
        s.server.counter = lockwright_model::etcd::Counter {
            value,
            modified: rev,
        };
    }

    /// Revokes `lease` (its key deleted, as its expiry does) if its key waits behind an older
    /// one, in one step: true if it did. (A check then a revoke would let the waiter be
    /// granted in between and revoke a legitimate holder instead.)
    pub fn revoke_if_waiting(&self, lease: LeaseId) -> bool {
        let mut s = self.state.lock().expect("sim");
        let Ok(id) = u8::try_from(lease.0) else {
            return false;
        };
        let waits = s
            .server
            .key(id)
            .is_some_and(|k| s.server.keys.iter().any(|o| o.create < k.create));
        if waits {
            s.server.leases.retain(|l| l.id != id);
            let _ = s.server.delete(id);
        }
        waits
    }

    /// The counter's value (the oracle reads etcd, not the lock).
    pub fn counter(&self) -> u8 {
        self.state.lock().expect("sim").server.counter.value
    }

    fn range_locked(s: &SimState, r: &Range) -> RangeResponse {
        let header_revision = i64::from(s.server.rev);
        let kvs = if r.key == COUNTER && !r.prefix {
            (s.server.counter.modified > 0)
                .then(|| KeyValue {
                    key: COUNTER.to_vec(),
                    value: s.server.counter.value.to_string().into_bytes(),
                    create_revision: 1,
                    mod_revision: i64::from(s.server.counter.modified),
                    lease: 0,
                })
                .into_iter()
                .collect()
        } else if !r.prefix {
            let lease = lease_of(&r.key).expect("a lock key");
            s.server.key(lease).map(kv).into_iter().collect()
        } else if r.by_create == Some(true) && r.limit == 1 {
            s.server
                .keys
                .iter()
                .min_by_key(|k| k.create)
                .copied()
                .map(kv)
                .into_iter()
                .collect()
        } else if r.by_create == Some(false) && r.limit == 1 && r.max_create_revision > 0 {
            let max = u8::try_from(r.max_create_revision + 1).unwrap_or(u8::MAX);
            s.server
                .last_before(max)
                .map(|(k, _)| kv(k))
                .into_iter()
                .collect()
        } else {
            panic!("the simulated etcd does not answer this range: {r:?}")
        };
        RangeResponse {
            header_revision,
            kvs,
        }
    }
}

impl Etcd for Sim {
    fn grant(&self, ttl: Duration) -> Result<Grant, EtcdError> {
        assert_eq!(ttl, TICK * u32::from(TTL), "sessions use the model's TTL");
        let mut s = self.state.lock().expect("sim");
        let id = s.server.grant(TTL).expect("a model lease id left");
        Ok(Grant {
            id: LeaseId(i64::from(id)),
            ttl: TICK * u32::from(TTL),
        })
    }

    fn keepalive(&self, lease: LeaseId) -> Result<Option<Duration>, EtcdError> {
        let mut s = self.state.lock().expect("sim");
        let id = u8::try_from(lease.0).expect("a model lease id");
        Ok(s.server
            .keepalive(id, TTL)
            .ok()
            .map(|()| TICK * u32::from(TTL)))
    }

    fn revoke(&self, lease: LeaseId) -> Result<(), EtcdError> {
        let mut s = self.state.lock().expect("sim");
        let id = u8::try_from(lease.0).expect("a model lease id");
        if s.server.lease(id).is_none() {
            return Err(EtcdError::LeaseNotFound);
        }
        s.server.leases.retain(|l| l.id != id);
        let _ = s.server.delete(id);
        Ok(())
    }

    fn txn(&self, txn: &Txn) -> Result<TxnResponse, EtcdError> {
        let mut s = self.state.lock().expect("sim");
        let lease = lease_of(&txn.compare_key).expect("the recipe compares its lock key");
        let header = |s: &SimState| i64::from(s.server.rev);
        match (txn.compare_create, txn.success.as_slice()) {
            // The lock transaction.
            (0, [Op::Put { .. }, Op::Get(_)]) => {
                let existed = s.server.key(lease).is_some();
                let t = s.server.lock_txn(lease).map_err(|e| match e {
                    lockwright_model::etcd::EtcdError::LeaseNotFound => EtcdError::LeaseNotFound,
                    other => panic!("the simulated etcd ran out: {other:?}"),
                })?;
                let ops = if existed { &txn.failure } else { &txn.success };
                let mut responses = Vec::new();
                for op in ops {
                    responses.push(match op {
                        Op::Put { .. } => OpResponse::Put,
                        Op::Get(r) => OpResponse::Get(Sim::range_locked(&s, r)),
                        Op::Delete { .. } => panic!("no delete in the lock transaction"),
                    });
                }
                let _ = t;
                Ok(TxnResponse {
                    succeeded: !existed,
                    header_revision: header(&s),
                    responses,
                })
            }
            // A guarded write of the counter, or the unlock on the own create revision.
            (rev, [op]) => {
                let rev = u8::try_from(rev).expect("a model revision");
                let done = match op {
                    Op::Put { key, value, .. } if key == COUNTER => {
                        let v: u8 = std::str::from_utf8(value)
                            .ok()
                            .and_then(|t| t.parse().ok())
                            .expect("a counter value");
                        s.server.put_counter_if_owner(lease, rev, v).expect("room")
                    }
                    Op::Delete { .. } => s.server.delete_if_owner(lease, rev).expect("room"),
                    other => panic!("the simulated etcd does not answer {other:?}"),
                };
                Ok(TxnResponse {
                    succeeded: done,
                    header_revision: header(&s),
                    responses: vec![],
                })
            }
            other => panic!("the simulated etcd does not answer this transaction: {other:?}"),
        }
    }

    fn range(&self, range: &Range) -> Result<RangeResponse, EtcdError> {
        let s = self.state.lock().expect("sim");
        Ok(Sim::range_locked(&s, range))
    }

    fn wait_delete(
        &self,
        key: &[u8],
        from: Revision,
        _timeout: Duration,
    ) -> Result<WatchEnd, EtcdError> {
        let lease = lease_of(key).expect("a lock key");
        // A bounded wait: the recipe looks again after a timeout, as with a real watch.
        for _ in 0..8 {
            {
                let s = self.state.lock().expect("sim");
                let from = u8::try_from(from).expect("a model revision");
                if s.server.watch(from).is_err() {
                    return Err(EtcdError::Compacted {
                        compact_revision: i64::from(s.server.compacted),
                    });
                }
                if s.server.key(lease).is_none_or(|k| k.create > from) {
                    return Ok(WatchEnd::Deleted);
                }
            }
            shuttle::thread::yield_now();
        }
        Ok(WatchEnd::TimedOut)
    }

    fn now(&self) -> Instant {
        self.base + TICK * self.state.lock().expect("sim").ticks
    }

    fn sleep(&self, _d: Duration) {
        shuttle::thread::yield_now();
    }
}
