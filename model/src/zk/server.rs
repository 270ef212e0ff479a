//! ZooKeeper's semantics for one lock directory: the single source of truth.
//!
//! The Stateright model ([`crate::zk::protocol`]) and the simulated ZooKeeper that the checks
//! crate runs the real recipe on both call this module, so the two cannot drift. It is pure
//! and deterministic (sorted `Vec`s, small integers) and knows nothing about the lock recipe.
//!
//! What it keeps (ZooKeeper Programmer's Guide; Debian's ZooKeeper 3.8 behaves so; the
//! `checks/tests/zk_sim/` suites run against it):
//!
//! - the children of the lock directory `/locks`: name → creation zxid (`czxid`) and the
//!   session that owns the ephemeral node. All lock nodes are `EPHEMERAL_SEQUENTIAL`; their
//!   data is never written (data version 0), so `check(path, 0)` means "exists".
//! - the parent's sequence counter, its `cversion`. A sequential create appends the counter to
//!   the name and advances it (deletes do not: in ZooKeeper 3.8 only a create changes a
//!   parent's `cversion`). When the container parent is reaped (it is empty) and created
//!   again, the counter restarts at 0: names can repeat. Without a width
//!   ([`Server::with_sequence_width`]) the counter never reaches a top and only order and
//!   equality of suffixes matter (the model renumbers them). With a width `w` it is a signed
//!   `w`-bit counter that behaves at its top as ZooKeeper 3.8's signed 32-bit one does
//!   (verified on Debian's 3.8.0): `PrepRequestProcessor` takes a create's suffix from the
//!   parent's pending change record (while an earlier create is still in flight) or from the
//!   `DataTree`, and writes the incremented counter (wrapping) into the record;
//!   `DataTree.createNode` raises the parent's `cversion` only to a larger value. So creates
//!   applied one at a time stick at the top (`2^(w-1)-1` again and again), and a create in
//!   flight together with the one before it takes the wrapped value (`-2^(w-1)`, then up).
//!   [`Server::create_sequential`] is the first, [`Server::create_behind_last`] the second.
//! - the zxid counter: every write (create, delete, `multi`, session close) gets the next zxid.
//!   Zxids never restart.
//! - sessions: alive or gone. Expiry is the server's decision: it deletes the session's
//!   ephemerals (firing their watches) in the same transaction. A request of an expired session
//!   fails with `SessionExpired` and changes nothing; the client learns of the expiry only from
//!   such a reply or from the session event.
//! - one-shot data watches (`getData(path, watch)`; a missing node answers `NoNode` and leaves
//!   no watch behind — why Curator uses `getData` rather than `exists`). A delete fires every
//!   watch on the node once; the event waits, per session, until the client takes it.
//!
//! Not kept: ACLs (anyone may delete any node, as with the open ACL Curator uses), data,
//! persistent nodes other than the parent, the gap in which the parent is missing (a create in
//! it makes the parent again, a listing sees no children: the same as [`Server::recreate_parent`]
//! happening at once), reads served by a lagging follower.
//!
//! A lost reply (connection loss) is not the server's business: the request was applied or
//! not, and the caller decides which by calling the method or not.

use std::fmt;

/// A node's sequence suffix (the parent's counter at its creation): signed, as ZooKeeper's
/// `cversion` is. Without a width it is never negative.
pub type Seq = i8;

/// A ZooKeeper transaction id. Only order and equality matter; the model renumbers them densely.
pub type Zxid = u8;

/// The `<uuid>` of a protected name (`_c_<uuid>-lock-`). The model uses the client's index.
pub type Uuid = u8;

/// A session: the model names them by client and epoch (the client's n-th session). The
/// server treats it as an opaque id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId {
    pub client: u8,
    pub epoch: u8,
}

impl fmt::Display for SessionId {
    /// `c1.s0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}.s{}", self.client, self.epoch)
    }
}

/// A child's name under `/locks`: `_c_<uuid>-lock-<seq>` (protected) or `lock-<seq>` (plain).
/// Ordered as Curator and the lockwright recipe sort lock nodes: by the suffix's text (the part
/// after `lock-`, see [`suffix_text_order`]), then by the rest of the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Name {
    pub seq: Seq,
    pub uuid: Option<Uuid>,
}

/// Where a suffix sorts when suffixes are compared as text, as Curator does
/// (`StandardLockInternalsDriver.fixForSorting`, a string compare) and the lockwright recipe
/// follows: ZooKeeper writes the counter with `%010d`, so non-negative suffixes sort as
/// numbers, a negative one (`-2147483648`) before every non-negative one, and the negative
/// ones near `-2^31` (all eleven characters) by their digits: `-2147483647` before
/// `-2147483648`, later-created first. The model's small widths keep that shape: negatives
/// first, by magnitude; then the others, by value.
pub fn suffix_text_order(seq: Seq) -> (bool, u8) {
    (seq >= 0, seq.unsigned_abs())
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        (suffix_text_order(self.seq), self.uuid).cmp(&(suffix_text_order(other.seq), other.uuid))
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Name {
    /// `_c_c1-lock-3`, `_c_c1p-lock-3` (c1's dropped attempt) or `lock-3` (the real suffix
    /// has ten digits).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.uuid {
            // A dropped attempt's id (`state::PREVIOUS_ATTEMPT`): `_c_c1p-lock-3`.
            Some(u) if (8..16).contains(&u) => write!(f, "_c_c{}p-lock-{}", u - 8, self.seq),
            Some(u) => write!(f, "_c_c{u}-lock-{}", self.seq),
            None => write!(f, "lock-{}", self.seq),
        }
    }
}

/// One child of `/locks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Znode {
    pub name: Name,
    /// The zxid of the create: what a fencing token should be.
    pub czxid: Zxid,
    /// The session owning this ephemeral node (`Stat.ephemeralOwner`).
    pub owner: SessionId,
}

/// A ZooKeeper error code the server answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ZkError {
    /// `NONODE`.
    NoNode,
    /// `NOTEMPTY` (deleting the parent while it has children).
    NotEmpty,
    /// `SESSIONEXPIRED`: the request's session is gone; nothing was applied.
    SessionExpired,
    /// `NODEEXISTS`: a sequential create whose name (prefix and a repeated suffix) is taken;
    /// possible only once a counter of a given width is stuck at its top.
    NodeExists,
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ZkError::NoNode => "NoNode",
            ZkError::NotEmpty => "NotEmpty",
            ZkError::SessionExpired => "SessionExpired",
            ZkError::NodeExists => "NodeExists",
        })
    }
}

/// The server's state for the lock directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Server {
    /// Children of `/locks`, sorted by name (the recipe's order: suffix text, then name).
    children: Vec<Znode>,
    /// The parent's sequence counter in the `DataTree` (`cversion`): the suffix of a create
    /// applied after every earlier one.
    next_seq: Seq,
    /// The counter as the last create left it in the parent's pending change record: the
    /// suffix of a create in flight together with that one. Equal to `next_seq` below the top.
    pending_seq: Seq,
    /// The counter's width in bits (`None`: it never reaches a top).
    width: Option<u8>,
    /// The next transaction's zxid.
    next_zxid: Zxid,
    /// Live sessions, sorted.
    sessions: Vec<SessionId>,
    /// Registered one-shot watches: (watched node, watching session), sorted.
    watches: Vec<(Name, SessionId)>,
    /// Sessions with a fired watch event not yet taken, sorted.
    fired: Vec<SessionId>,
}

impl Server {
    /// An empty lock directory, no sessions.
    pub fn new() -> Server {
        Server::default()
    }

    /// An empty lock directory whose sequence counter is a signed `width`-bit one (2..=8),
    /// starting at 0 (see the module docs for its behaviour at the top).
    pub fn with_sequence_width(width: Option<u8>) -> Server {
        if let Some(w) = width {
            assert!((2..=8).contains(&w), "a sequence width of 2..=8 bits");
        }
        Server {
            width,
            ..Server::default()
        }
    }

    /// The counter's width in bits (`None`: unbounded).
    pub fn sequence_width(&self) -> Option<u8> {
        self.width
    }

    /// The counter's top, `2^(width-1) - 1` (`None` without a width).
    pub fn sequence_top(&self) -> Option<Seq> {
        self.width.map(|w| ((1i16 << (w - 1)) - 1) as Seq)
    }

    /// The counter after `seq`: `seq + 1`, wrapping past the top to `-2^(width-1)`.
    fn after(&self, seq: Seq) -> Seq {
        match self.width {
            None => seq.checked_add(1).expect("sequence space exhausted"),
            Some(w) => {
                let span = 1i16 << w;
                let half = span / 2;
                ((i16::from(seq) + 1 + half).rem_euclid(span) - half) as Seq
            }
        }
    }

    /// Whether a create in flight together with the last one would get another suffix than a
    /// create applied after it (only once the counter has reached its top).
    pub fn can_create_behind_last(&self) -> bool {
        self.pending_seq != self.next_seq
    }

    /// The suffix the pending change record holds (see [`Server::create_behind_last`]).
    pub fn pending_seq(&self) -> Seq {
        self.pending_seq
    }

    /// Every create so far has been applied: the next create takes the `DataTree`'s counter.
    /// The model calls this before every step that is not a create: a standalone server
    /// answers requests in the order it prepared them, so once any later request (or any
    /// other transaction) is through, the last create was applied too.
    pub fn settle(&mut self) {
        self.pending_seq = self.next_seq;
    }

    /// Children of `/locks` in sequence order.
    pub fn children(&self) -> &[Znode] {
        &self.children
    }

    /// The node named `name`, if it exists (a read that needs no session).
    pub fn node(&self, name: Name) -> Option<Znode> {
        self.children.iter().copied().find(|z| z.name == name)
    }

    /// The next create's sequence suffix.
    pub fn next_seq(&self) -> Seq {
        self.next_seq
    }

    /// The next transaction's zxid.
    pub fn next_zxid(&self) -> Zxid {
        self.next_zxid
    }

    /// Live sessions, sorted.
    pub fn sessions(&self) -> &[SessionId] {
        &self.sessions
    }

    /// Registered watches (watched node, watching session).
    pub fn watches(&self) -> &[(Name, SessionId)] {
        &self.watches
    }

    /// Whether session `s` is alive.
    pub fn is_alive(&self, s: SessionId) -> bool {
        self.sessions.binary_search(&s).is_ok()
    }

    fn live(&self, s: SessionId) -> Result<(), ZkError> {
        if self.is_alive(s) {
            Ok(())
        } else {
            Err(ZkError::SessionExpired)
        }
    }

    fn txn(&mut self) -> Zxid {
        let z = self.next_zxid;
        self.next_zxid = z.checked_add(1).expect("zxid space exhausted");
        z
    }

    /// A client connects and gets session `s` (a fresh id).
    pub fn open_session(&mut self, s: SessionId) {
        if let Err(i) = self.sessions.binary_search(&s) {
            self.sessions.insert(i, s);
            self.txn();
        }
    }

    /// `create("/locks/<prefix>", EPHEMERAL_SEQUENTIAL)` by session `s`, with `uuid` in the
    /// prefix for a protected name: the new node (its name, `czxid`, owner), as `create2`
    /// returns it.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone.
    /// The create is applied after every earlier create (none is in flight with it): its
    /// suffix is the `DataTree`'s counter, which sticks at the top.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone; `NodeExists` if the name is taken (a repeated suffix).
    pub fn create_sequential(
        &mut self,
        uuid: Option<Uuid>,
        s: SessionId,
    ) -> Result<Znode, ZkError> {
        self.create_at(self.next_seq, uuid, s)
    }

    /// The same create, in flight together with the last create (prepared before that one
    /// was applied): its suffix is the counter that create left in the parent's pending
    /// change record, wrapped past the top. Only right after a create, before anything else
    /// ([`Server::settle`]; `docs/zookeeper.md`, "The sequence counter at its top").
    ///
    /// # Errors
    /// As [`Server::create_sequential`].
    pub fn create_behind_last(
        &mut self,
        uuid: Option<Uuid>,
        s: SessionId,
    ) -> Result<Znode, ZkError> {
        self.create_at(self.pending_seq, uuid, s)
    }

    fn create_at(&mut self, seq: Seq, uuid: Option<Uuid>, s: SessionId) -> Result<Znode, ZkError> {
        self.live(s)?;
        let name = Name { seq, uuid };
        if self.node(name).is_some() {
            // `PrepRequestProcessor` refuses before it changes the parent's record.
            return Err(ZkError::NodeExists);
        }
        let next = self.after(seq);
        // `DataTree.createNode`: the parent's cversion is raised, never lowered.
        self.next_seq = self.next_seq.max(next);
        self.pending_seq = next;
        let z = Znode {
            name,
            czxid: self.txn(),
            owner: s,
        };
        // Without a width the counter only grows within one incarnation of the parent, and
        // the parent is only re-created empty: the new child sorts last.
        debug_assert!(self.width.is_some() || self.children.last().is_none_or(|l| l.name < name));
        let i = self.children.binary_search(&z).unwrap_or_else(|i| i);
        self.children.insert(i, z);
        Ok(z)
    }

    /// `getChildren("/locks")` by session `s`, in sequence order.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone.
    pub fn get_children(&self, s: SessionId) -> Result<&[Znode], ZkError> {
        self.live(s)?;
        Ok(&self.children)
    }

    /// `exists(path)` (no watch) by session `s`: the node's Stat, or `None`.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone.
    pub fn exists(&self, name: Name, s: SessionId) -> Result<Option<Znode>, ZkError> {
        self.live(s)?;
        Ok(self.node(name))
    }

    /// `getData(path, watch = true)` by session `s`: sets a one-shot watch on an existing node.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone; `NoNode` if the node does not exist (no watch is left).
    pub fn get_data_watch(&mut self, name: Name, s: SessionId) -> Result<Znode, ZkError> {
        self.live(s)?;
        let z = self.node(name).ok_or(ZkError::NoNode)?;
        if let Err(i) = self.watches.binary_search(&(name, s)) {
            self.watches.insert(i, (name, s));
        }
        Ok(z)
    }

    /// Whether a fired watch event waits for session `s`.
    pub fn has_watch_event(&self, s: SessionId) -> bool {
        self.fired.binary_search(&s).is_ok()
    }

    /// Takes the waiting watch event of session `s` (the client's "wait for a watch event"
    /// returns). Returns whether there was one.
    pub fn take_watch_event(&mut self, s: SessionId) -> bool {
        match self.fired.binary_search(&s) {
            Ok(i) => {
                self.fired.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// `delete(path, -1)` by session `s` (any node: no ACLs). Fires the node's watches.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone; `NoNode` if there is no such node.
    pub fn delete(&mut self, name: Name, s: SessionId) -> Result<Znode, ZkError> {
        self.live(s)?;
        let i = self
            .children
            .iter()
            .position(|z| z.name == name)
            .ok_or(ZkError::NoNode)?;
        let z = self.children.remove(i);
        self.txn();
        self.fire(name);
        Ok(z)
    }

    /// `multi(check(path, 0), setData("/resource", ..))` by session `s`: the guarded write.
    /// Atomic: the write happens only if the lock node still exists.
    ///
    /// # Errors
    /// `SessionExpired` if `s` is gone; `NoNode` if the checked node does not exist (nothing
    /// is written).
    pub fn multi_check_write(&mut self, name: Name, s: SessionId) -> Result<Znode, ZkError> {
        self.live(s)?;
        let z = self.node(name).ok_or(ZkError::NoNode)?;
        self.txn();
        Ok(z)
    }

    /// The server expires session `s` (its timeout passed without a heartbeat): one
    /// transaction that deletes its ephemerals (firing their watches) and its own watches.
    /// Returns how many nodes it deleted. No-op for a session that is already gone.
    pub fn expire_session(&mut self, s: SessionId) -> usize {
        let Ok(i) = self.sessions.binary_search(&s) else {
            return 0;
        };
        self.sessions.remove(i);
        self.txn();
        self.watches.retain(|&(_, w)| w != s);
        self.fired.retain(|&w| w != s);
        let mut deleted = 0;
        while let Some(i) = self.children.iter().position(|z| z.owner == s) {
            let z = self.children.remove(i);
            self.fire(z.name);
            deleted += 1;
        }
        deleted
    }

    /// The client closed the connection of session `s` without closing the session (it
    /// opened a new one): the session lives on until it expires, but nobody will receive its
    /// watch events any more, so they are dropped.
    pub fn disconnect(&mut self, s: SessionId) {
        self.watches.retain(|&(_, w)| w != s);
        self.fired.retain(|&w| w != s);
    }

    /// The container parent `/locks` is reaped (it is empty) and created again: the sequence
    /// counter restarts at 0.
    ///
    /// # Errors
    /// `NotEmpty` if it has children (containers are only reaped when empty).
    pub fn recreate_parent(&mut self) -> Result<(), ZkError> {
        if !self.children.is_empty() {
            return Err(ZkError::NotEmpty);
        }
        self.txn();
        self.txn();
        self.next_seq = 0;
        self.pending_seq = 0;
        Ok(())
    }

    fn fire(&mut self, name: Name) {
        let mut k = 0;
        while k < self.watches.len() {
            if self.watches[k].0 == name {
                let (_, w) = self.watches.remove(k);
                if let Err(i) = self.fired.binary_search(&w) {
                    self.fired.insert(i, w);
                }
            } else {
                k += 1;
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Renumbering, for a finite model: zxids, sequence suffixes and session ids are compared
    // only for order and equality, so a caller may rename them as long as it keeps those.
    // -----------------------------------------------------------------------------------------

    /// Every zxid the server holds (as a bit set: values below 128), besides the counter.
    pub fn zxid_mask(&self) -> u128 {
        self.children.iter().fold(0, |m, z| m | 1u128 << z.czxid)
    }

    /// Every sequence suffix the server holds in a name (as a bit set: values 0..128), besides
    /// the counter. Only without a width (suffixes are then never negative).
    pub fn seq_mask(&self) -> u128 {
        debug_assert!(
            self.width.is_none(),
            "suffixes of a counter with a width are kept"
        );
        let bit = |s: Seq| 1u128 << (s as u8);
        let m = self.children.iter().fold(0, |m, z| m | bit(z.name.seq));
        self.watches.iter().fold(m, |m, (n, _)| m | bit(n.seq))
    }

    /// Every session id the server holds.
    pub fn session_ids(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.sessions
            .iter()
            .copied()
            .chain(self.children.iter().map(|z| z.owner))
            .chain(self.watches.iter().map(|&(_, s)| s))
            .chain(self.fired.iter().copied())
    }

    /// Sets the zxid counter (to any value above every zxid held).
    pub fn set_next_zxid(&mut self, next_zxid: Zxid) {
        debug_assert!(self.zxid_mask() >> next_zxid == 0);
        self.next_zxid = next_zxid;
    }

    /// Renames zxids (`fz`, order-preserving; the counter becomes `next_zxid`), sequence
    /// suffixes (`fs`, order-preserving, counter included), session ids (`fsid`) and uuids
    /// (`fu`). With `resort`, restores the sorted orders afterwards (needed unless the
    /// renames keep the order of names and of session ids within each client).
    pub fn rename(
        &mut self,
        fz: impl Fn(Zxid) -> Zxid,
        next_zxid: Zxid,
        fs: impl Fn(Seq) -> Seq,
        fsid: impl Fn(SessionId) -> SessionId,
        fu: impl Fn(Uuid) -> Uuid,
        resort: bool,
    ) {
        let fname = |n: Name| Name {
            seq: fs(n.seq),
            uuid: n.uuid.map(&fu),
        };
        for z in &mut self.children {
            z.name = fname(z.name);
            z.czxid = fz(z.czxid);
            z.owner = fsid(z.owner);
        }
        if resort {
            self.children.sort_unstable();
        }
        self.next_seq = fs(self.next_seq);
        self.pending_seq = fs(self.pending_seq);
        self.next_zxid = next_zxid;
        for s in &mut self.sessions {
            *s = fsid(*s);
        }
        if resort {
            self.sessions.sort_unstable();
        }
        for (n, s) in &mut self.watches {
            *n = fname(*n);
            *s = fsid(*s);
        }
        if resort {
            self.watches.sort_unstable();
        }
        for s in &mut self.fired {
            *s = fsid(*s);
        }
        if resort {
            self.fired.sort_unstable();
        }
    }

    /// Field by field, so the vectors keep their allocations.
    pub fn clone_into_from(&mut self, source: &Server) {
        self.children.clone_from(&source.children);
        self.next_seq = source.next_seq;
        self.pending_seq = source.pending_seq;
        self.width = source.width;
        self.next_zxid = source.next_zxid;
        self.sessions.clone_from(&source.sessions);
        self.watches.clone_from(&source.watches);
        self.fired.clone_from(&source.fired);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: SessionId = SessionId {
        client: 0,
        epoch: 0,
    };
    const B: SessionId = SessionId {
        client: 1,
        epoch: 0,
    };

    fn server() -> Server {
        let mut s = Server::new();
        s.open_session(A);
        s.open_session(B);
        s
    }

    #[test]
    fn sequential_creates_sort_by_suffix_and_czxid_grows() {
        let mut s = server();
        let a = s.create_sequential(Some(0), A).unwrap();
        let b = s.create_sequential(Some(1), B).unwrap();
        assert_eq!((a.name.seq, b.name.seq), (0, 1));
        assert!(a.czxid < b.czxid);
        assert_eq!(s.get_children(A).unwrap(), &[a, b]);
        assert_eq!(a.name.to_string(), "_c_c0-lock-0");
    }

    #[test]
    fn expiry_deletes_ephemerals_fires_watches_and_fails_later_requests() {
        let mut s = server();
        let a = s.create_sequential(Some(0), A).unwrap();
        s.create_sequential(Some(1), B).unwrap();
        s.get_data_watch(a.name, B).unwrap();
        assert_eq!(s.expire_session(A), 1);
        assert!(s.has_watch_event(B));
        assert!(s.take_watch_event(B));
        assert!(!s.take_watch_event(B), "one-shot");
        assert_eq!(s.create_sequential(None, A), Err(ZkError::SessionExpired));
        assert_eq!(s.delete(a.name, A), Err(ZkError::SessionExpired));
    }

    #[test]
    fn get_data_on_a_missing_node_leaves_no_watch() {
        let mut s = server();
        let a = s.create_sequential(None, A).unwrap();
        s.delete(a.name, A).unwrap();
        assert_eq!(s.get_data_watch(a.name, B), Err(ZkError::NoNode));
        assert!(s.watches().is_empty());
    }

    #[test]
    fn anyone_may_delete_and_the_recreated_parent_repeats_names() {
        let mut s = server();
        let a = s.create_sequential(None, A).unwrap();
        assert_eq!(s.recreate_parent(), Err(ZkError::NotEmpty));
        s.delete(a.name, B).unwrap();
        s.recreate_parent().unwrap();
        let b = s.create_sequential(None, B).unwrap();
        assert_eq!(
            a.name, b.name,
            "plain names repeat after the parent is re-created"
        );
        assert!(b.czxid > a.czxid, "zxids never repeat");
        assert_eq!(
            s.delete(a.name, A).unwrap(),
            b,
            "a delete by name hits the newer node"
        );
    }

    /// ZooKeeper 3.8 at the top of its counter (DESIGN.md, verified on Debian's 3.8.0), at 3
    /// bits: one at a time the suffix sticks at the top; in flight together it wraps.
    #[test]
    fn the_counter_sticks_at_its_top_and_wraps_for_creates_in_flight_together() {
        let mut s = Server::with_sequence_width(Some(3));
        s.open_session(A);
        s.open_session(B);
        assert_eq!(s.sequence_top(), Some(3));
        let seqs: Vec<Seq> = (0..6)
            .map(|i| {
                s.settle();
                s.create_sequential(Some(i), A).unwrap().name.seq
            })
            .collect();
        assert_eq!(seqs, [0, 1, 2, 3, 3, 3], "one at a time: stuck at the top");
        assert!(!s.can_create_behind_last() || s.pending_seq() == -4);
        let behind: Vec<Seq> = (16..19)
            .map(|i| s.create_behind_last(Some(i), B).unwrap().name.seq)
            .collect();
        assert_eq!(behind, [-4, -3, -2], "in flight together: wrapped");
        s.settle();
        assert_eq!(s.create_sequential(Some(9), A).unwrap().name.seq, 3);
        // The same name at the stuck top: refused, nothing changes.
        assert_eq!(s.create_sequential(Some(9), B), Err(ZkError::NodeExists));
        // The recipe's (Curator's) text order: negatives first, by magnitude, then the rest.
        let order: Vec<String> = s.children().iter().map(|z| z.name.to_string()).collect();
        assert_eq!(
            &order[..5],
            [
                "_c_c18-lock--2",
                "_c_c17-lock--3",
                "_c_c16-lock--4",
                "_c_c0-lock-0",
                "_c_c1-lock-1"
            ]
        );
    }

    /// Below the top (and without a width) a create in flight together gets what a create
    /// after it would: the two are one behaviour, and the model offers only one.
    #[test]
    fn below_the_top_creates_in_flight_together_change_nothing() {
        for width in [None, Some(3)] {
            let mut s = Server::with_sequence_width(width);
            s.open_session(A);
            for _ in 0..3 {
                s.create_sequential(None, A).unwrap();
                assert!(!s.can_create_behind_last(), "{width:?}");
            }
        }
    }

    #[test]
    fn multi_check_writes_only_while_the_node_exists() {
        let mut s = server();
        let a = s.create_sequential(Some(0), A).unwrap();
        assert_eq!(s.multi_check_write(a.name, A), Ok(a));
        s.delete(a.name, A).unwrap();
        assert_eq!(s.multi_check_write(a.name, A), Err(ZkError::NoNode));
    }
}
