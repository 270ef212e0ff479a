//! etcd's semantics for one lock prefix, one counter key and the leases behind them: what the
//! model's steps do at the server, and what the simulated etcd of the checks answers (both
//! call these functions, so the two cannot drift apart).
//!
//! What is modelled (etcd 3.4/3.5, `server/mvcc`, `server/lease`):
//! - one revision counter for the whole store, bumped once by every transaction that writes
//!   (a put, a delete, a lease revoke that deletes keys); a key keeps the revision that
//!   created it (`create_revision`) until it is deleted. The counter has a small width here
//!   ([`Server::top`]): a write that would pass the top is refused ([`EtcdError::RevisionTop`]).
//! - leases: granted with a TTL by the leader, whose member id forms the id's top bits (so ids
//!   are not ordered in time across leaders); kept alive to the full TTL by a keepalive;
//!   refreshed to the full TTL on a leader change; revoked when their time runs out, which
//!   deletes their keys in one transaction.
//! - watches from a revision: cancelled when the revision is older than the compacted one.

/// A revision of the store (`0`: none; the first write is revision 1).
pub type Rev = u8;
/// A lease id: `member << 3 | n`, `n` the store's grant counter (never reset, never wrapped:
/// see [`Server::grant`]).
pub type LeaseId = u8;

/// One key under the lock prefix: `pfx/<lease id in hex>`, attached to that lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockKey {
    pub lease: LeaseId,
    pub create: Rev,
}

/// A lease and its time left on the server's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lease {
    pub id: LeaseId,
    /// Ticks until the server revokes it.
    pub left: u8,
}

/// The counter key of guarded writes (`value`, and the revision that last wrote it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Counter {
    pub value: u8,
    pub modified: Rev,
}

/// What etcd answers instead of success, for the requests the recipe makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EtcdError {
    /// `etcdserver: requested lease not found` (a put with, or a keepalive of, a revoked lease).
    LeaseNotFound,
    /// `mvcc: required revision has been compacted` (a watch from before the compaction).
    Compacted,
    /// The model's revision counter is at its top (no real etcd answers this).
    RevisionTop,
    /// The model's lease ids are used up ([`LEASE_IDS`] grants; no real etcd answers this).
    LeaseIdTop,
}

/// How many leases a model run can grant: the width of the grant counter in a lease id.
pub const LEASE_IDS: u8 = 8;

/// The result of the Mutex's lock transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockTxn {
    /// The own key's create revision (new or found).
    pub my_rev: Rev,
    /// The create revision of the oldest key on the prefix (the owner).
    pub owner_rev: Rev,
    /// The store's revision after the transaction (the header revision).
    pub header: Rev,
}

/// The store: lock keys, the counter, leases, the revision and the compaction point.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Server {
    pub rev: Rev,
    /// The highest revision the counter can hold.
    pub top: Rev,
    /// Keys under the prefix, in create-revision order.
    pub keys: Vec<LockKey>,
    pub counter: Counter,
    pub leases: Vec<Lease>,
    /// The leader's member id (the top bits of the lease ids it grants).
    pub leader: u8,
    /// The next lease number (shared by the members: each member's own numbers then only
    /// grow, as etcd's do).
    pub next_lease: u8,
    /// Revisions before this one are compacted away.
    pub compacted: Rev,
}

impl Server {
    /// An empty store at revision 0 with a counter of `top` revisions.
    pub fn new(top: Rev) -> Server {
        Server {
            rev: 0,
            top,
            keys: Vec::new(),
            counter: Counter::default(),
            leases: Vec::new(),
            leader: 1,
            next_lease: 0,
            compacted: 0,
        }
    }

    /// Whether `n` more revisions fit below the top.
    pub fn room(&self, n: u8) -> bool {
        u16::from(self.rev) + u16::from(n) <= u16::from(self.top)
    }

    fn bump(&mut self) -> Result<Rev, EtcdError> {
        if !self.room(1) {
            return Err(EtcdError::RevisionTop);
        }
        self.rev += 1;
        Ok(self.rev)
    }

    pub fn lease(&self, id: LeaseId) -> Option<&Lease> {
        self.leases.iter().find(|l| l.id == id)
    }

    /// `LeaseGrant(ttl)`: a new lease of the leader's.
    ///
    /// Real lease ids never repeat: the leader draws one from its request-id generator (the
    /// member id in the top 16 bits, then a counter started from the clock that only grows),
    /// and etcd refuses an id that is in use. The model's ids keep that at a small width: the
    /// member's id in the top bits and a counter that is never reset (not by a leader change
    /// either) and never wraps — the grant after the last id is refused, as a write past the
    /// revision counter's top is.
    ///
    /// # Errors
    /// [`EtcdError::LeaseIdTop`] once [`LEASE_IDS`] leases were granted.
    pub fn grant(&mut self, ttl: u8) -> Result<LeaseId, EtcdError> {
        if self.next_lease >= LEASE_IDS {
            return Err(EtcdError::LeaseIdTop);
        }
        let id = (self.leader << 3) | self.next_lease;
        self.next_lease += 1;
        self.leases.push(Lease { id, left: ttl });
        Ok(id)
    }

    /// `LeaseKeepAlive(id)`: back to the full TTL.
    ///
    /// # Errors
    /// [`EtcdError::LeaseNotFound`] once the lease is revoked.
    pub fn keepalive(&mut self, id: LeaseId, ttl: u8) -> Result<(), EtcdError> {
        match self.leases.iter_mut().find(|l| l.id == id) {
            Some(l) => {
                l.left = ttl;
                Ok(())
            }
            None => Err(EtcdError::LeaseNotFound),
        }
    }

    /// The key `pfx/<lease>`, if it exists.
    pub fn key(&self, lease: LeaseId) -> Option<LockKey> {
        self.keys.iter().copied().find(|k| k.lease == lease)
    }

    /// The Mutex's lock transaction: `If(CreateRevision(pfx/lease) == 0) Then(Put(pfx/lease,
    /// lease), Get(pfx, FirstCreate)) Else(Get(pfx/lease), Get(pfx, FirstCreate))`.
    ///
    /// # Errors
    /// [`EtcdError::LeaseNotFound`] for a put with a revoked lease; [`EtcdError::RevisionTop`].
    pub fn lock_txn(&mut self, lease: LeaseId) -> Result<LockTxn, EtcdError> {
        let my_rev = match self.key(lease) {
            Some(k) => k.create,
            None => {
                if self.lease(lease).is_none() {
                    return Err(EtcdError::LeaseNotFound);
                }
                let rev = self.bump()?;
                self.keys.push(LockKey { lease, create: rev });
                rev
            }
        };
        let owner_rev = self.keys.iter().map(|k| k.create).min().unwrap_or(my_rev);
        Ok(LockTxn {
            my_rev,
            owner_rev,
            header: self.rev,
        })
    }

    /// `waitDeletes`' range: the youngest key created before `max_create` (with the header
    /// revision to watch from), or `None` when no older key is left.
    pub fn last_before(&self, max_create: Rev) -> Option<(LockKey, Rev)> {
        self.keys
            .iter()
            .copied()
            .filter(|k| k.create < max_create)
            .max_by_key(|k| k.create)
            .map(|k| (k, self.rev))
    }

    /// `Watch(key, WithRev(from))`: whether the watch can start.
    ///
    /// # Errors
    /// [`EtcdError::Compacted`] when `from` is older than the compaction point.
    pub fn watch(&self, from: Rev) -> Result<(), EtcdError> {
        if from < self.compacted {
            Err(EtcdError::Compacted)
        } else {
            Ok(())
        }
    }

    /// Whether a watch on `key` (the key as it was when the watch started) has seen its delete.
    pub fn deleted(&self, key: LockKey) -> bool {
        self.key(key.lease) != Some(key)
    }

    /// `Delete(pfx/lease)` by name; true if a key was deleted.
    ///
    /// # Errors
    /// [`EtcdError::RevisionTop`].
    pub fn delete(&mut self, lease: LeaseId) -> Result<bool, EtcdError> {
        if self.key(lease).is_none() {
            return Ok(false);
        }
        self.bump()?;
        self.keys.retain(|k| k.lease != lease);
        Ok(true)
    }

    /// `If(CreateRevision(pfx/lease) == my_rev) Then(Delete(pfx/lease))`: lockwright's unlock.
    ///
    /// # Errors
    /// [`EtcdError::RevisionTop`].
    pub fn delete_if_owner(&mut self, lease: LeaseId, my_rev: Rev) -> Result<bool, EtcdError> {
        if self.key(lease).map(|k| k.create) != Some(my_rev) {
            return Ok(false);
        }
        self.delete(lease)
    }

    /// A guarded write: `If(CreateRevision(pfx/lease) == my_rev) Then(Put(counter, value))`;
    /// true if it was applied.
    ///
    /// # Errors
    /// [`EtcdError::RevisionTop`].
    pub fn put_counter_if_owner(
        &mut self,
        lease: LeaseId,
        my_rev: Rev,
        value: u8,
    ) -> Result<bool, EtcdError> {
        if self.key(lease).map(|k| k.create) != Some(my_rev) {
            return Ok(false);
        }
        let rev = self.bump()?;
        self.counter = Counter {
            value,
            modified: rev,
        };
        Ok(true)
    }

    /// One tick of the server's clock: every lease not kept alive this tick loses a tick, and
    /// those that run out are revoked (each revoke that deletes a key is one revision).
    /// `kept(id)`: whether someone kept the lease alive this tick. Returns the revoked ids.
    pub fn tick(&mut self, ttl: u8, kept: impl Fn(LeaseId) -> bool) -> Vec<LeaseId> {
        let mut revoked = Vec::new();
        for l in &mut self.leases {
            if kept(l.id) {
                l.left = ttl;
            } else {
                l.left = l.left.saturating_sub(1);
                if l.left == 0 {
                    revoked.push(l.id);
                }
            }
        }
        self.leases.retain(|l| l.left > 0);
        for &id in &revoked {
            if self.key(id).is_some() && self.room(1) {
                self.rev += 1;
            }
            self.keys.retain(|k| k.lease != id);
        }
        revoked
    }

    /// A leader change: every lease back to the full TTL (etcd's lessor `Promote`), and the
    /// new leader (another member id) grants the next leases.
    pub fn leader_change(&mut self, ttl: u8) {
        for l in &mut self.leases {
            l.left = ttl;
        }
        self.leader ^= 1;
    }

    /// `Compact(rev)` at the current revision.
    pub fn compact(&mut self) {
        self.compacted = self.rev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock transaction creates a key once per lease and names the oldest as the owner;
    /// the key's create revision survives other writes, and a revoked lease's put is refused.
    #[test]
    fn lock_transaction_orders_keys_by_create_revision() {
        let mut s = Server::new(15);
        let a = s.grant(3).expect("an id");
        let b = s.grant(3).expect("an id");
        let ta = s.lock_txn(a).expect("put");
        let tb = s.lock_txn(b).expect("put");
        assert_eq!((ta.my_rev, ta.owner_rev), (1, 1));
        assert_eq!((tb.my_rev, tb.owner_rev), (2, 1));
        // Again: the existing key, no new revision.
        assert_eq!(s.lock_txn(b).expect("get").my_rev, 2);
        assert_eq!(s.rev, 2);
        assert_eq!(s.last_before(2).map(|(k, _)| k.lease), Some(a));
        // A lease that runs out is revoked with its key.
        let revoked = s.tick(3, |id| id == b);
        assert!(revoked.is_empty());
        s.tick(3, |id| id == b);
        assert_eq!(s.tick(3, |id| id == b), vec![a]);
        assert!(s.key(a).is_none() && s.rev == 3);
        assert_eq!(s.lock_txn(a), Err(EtcdError::LeaseNotFound));
    }

    /// Lease ids carry the leader's member id in their top bits: after a leader change a later
    /// lease has a smaller id (why `contrib/lock`'s lease-id token is no fencing token).
    #[test]
    fn lease_ids_are_not_ordered_across_leaders() {
        let mut s = Server::new(15);
        let first = s.grant(3).expect("an id");
        s.leader_change(3);
        let second = s.grant(3).expect("an id");
        assert!(second < first, "{second} < {first}");
    }

    /// Lease ids never repeat, across any number of leader changes: the grant after the last
    /// id is refused instead (the model's width), as etcd's ids never come back.
    #[test]
    fn lease_ids_never_repeat_across_leader_changes() {
        let mut s = Server::new(15);
        let mut seen = Vec::new();
        for i in 0..LEASE_IDS {
            let id = s.grant(3).expect("an id left");
            assert!(!seen.contains(&id), "grant {i}: {id} again after {seen:?}");
            seen.push(id);
            s.leader_change(3);
        }
        assert_eq!(s.grant(3), Err(EtcdError::LeaseIdTop));
    }

    /// At the top the counter refuses a write instead of wrapping; a watch from before the
    /// compaction point is cancelled.
    #[test]
    fn revision_top_and_compaction() {
        let mut s = Server::new(1);
        let a = s.grant(3).expect("an id");
        let b = s.grant(3).expect("an id");
        s.lock_txn(a).expect("revision 1");
        assert_eq!(s.lock_txn(b), Err(EtcdError::RevisionTop));
        assert_eq!(s.rev, 1);
        s.compact();
        assert_eq!(s.watch(0), Err(EtcdError::Compacted));
        assert_eq!(s.watch(1), Ok(()));
    }
}
