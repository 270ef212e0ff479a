//! The coordination interface: the one gate between the ZooKeeper recipe and ZooKeeper.
//!
//! The recipe ([`crate::zk::ZkMutex`]) is written once, generic over [`Coordination`], exactly as
//! the file locks are written over [`crate::file::sys::System`]. Production plugs in
//! [`crate::zk::ZkClient`] (zookeeper-client on a real server); the checks plug in a simulated
//! ZooKeeper built on the model's server semantics and run the very same recipe under shuttle.
//!
//! # Contract
//!
//! - **One step method = one ZooKeeper request = one model action** (`docs/zookeeper.md`,
//!   `model/src/zk/protocol.rs`). The recipe never combines two of them into what the model
//!   treats as one step, and never talks to ZooKeeper except through this trait. A recorded run
//!   is therefore a sequence of calls that maps step for step onto a model path:
//!
//!   | method | ZooKeeper request | model action |
//!   |---|---|---|
//!   | [`create_lock_node`](Coordination::create_lock_node) | `create2(prefix, EPHEMERAL_SEQUENTIAL)` | `CreateLockNode`; a [`CoordError::ConnectionLoss`] answer is `LoseReply(applied)` or `LoseReply(not applied)` |
//!   | [`sync`](Coordination::sync) then [`find_own_node`](Coordination::find_own_node) | `sync(dir)`, then `getChildren(dir)` + `exists` of the candidates (reads only) | `FindOwnNode` (the `sync` makes its reads current: no `lag` answer) |
//!   | [`list_children`](Coordination::list_children) | `getChildren(dir)` | `ListChildren` |
//!   | [`watch_node`](Coordination::watch_node) | `getData(path, watch)` | `WatchPredecessor` |
//!   | [`wait_watch_event`](Coordination::wait_watch_event) | none: the watch fires | `ReceiveWatchEvent`, or `ReceiveSessionEvent` when it returns [`WatchOutcome::SessionExpired`] |
//!   | [`session_event`](Coordination::session_event) returning [`SessionEvent::Expired`] | none: the session-event stream | `ReceiveSessionEvent` |
//!   | [`delete_node`](Coordination::delete_node) | `delete(path, -1)` | `DeleteLockNode`; a lost reply is `LoseReply` |
//!   | [`sync`](Coordination::sync) then [`check_node`](Coordination::check_node) | `sync(dir)`, then `exists(path)` | `CheckLockNode` (`ensure_valid`; current, as above) |
//!   | [`guarded_write`](Coordination::guarded_write) | `multi(check(lock node, 0), ops…)` | `GuardedWrite` (`Write` when the unfenced defect drops the check) |
//!
//!   Not steps (the model has no action for them): [`session`](Coordination::session),
//!   [`session_event`](Coordination::session_event) answering `Connected`/`Suspended`, the clock
//!   and sleeps, [`spawn`](Coordination::spawn), [`new_protection_id`](Coordination::new_protection_id);
//!   [`new_session`](Coordination::new_session), which is the second half of the model's "learn"
//!   (a client that learns its session is gone opens a new one at once, inside the same action);
//!   [`ensure_dir`](Coordination::ensure_dir) (the model's lock directory always exists: a create
//!   in a reaped container parent makes it again); and [`read_node`](Coordination::read_node),
//!   which only words an error after the recipe has given up.
//! - **Issue order.** A step's request is issued no later than the first poll of its future,
//!   and the recipe awaits each step before it issues the next, so requests reach the server in
//!   the model's order.
//! - **Learning.** Every method that reports [`CoordError::SessionExpired`] or
//!   [`WatchOutcome::SessionExpired`] reports the truth about the session the request ran in;
//!   [`new_session`](Coordination::new_session) then replaces it. Nothing else replaces a session.
//! - **Time.** The recipe reads the clock, sleeps and spawns only through this trait, so a
//!   simulated clock and executor can drive it. The recipe itself depends on no async runtime.

use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

/// A ZooKeeper session id (`Stat.ephemeralOwner` of the ephemeral nodes it owns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub i64);

impl fmt::Display for SessionId {
    /// `0x100004a3b2c0001`, as ZooKeeper's logs print session ids.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// The parts of a znode's `Stat` the recipe uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeStat {
    /// The zxid of the transaction that created the node: the fencing token of a lock node.
    pub czxid: i64,
    /// The zxid of the last change to its data.
    pub mzxid: i64,
    /// The data version (0 for a lock node: its data is never written).
    pub version: i32,
    /// The session owning an ephemeral node; `SessionId(0)` for a persistent one.
    pub ephemeral_owner: SessionId,
}

/// A lock node the create made: its full path and its Stat (from `create2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockNode {
    /// `dir/_c_<uuid>-lock-0000000007`.
    pub path: String,
    /// Its Stat at creation: `czxid` is the fencing token, `ephemeral_owner` the session.
    pub stat: NodeStat,
}

/// What a protected search found: the session it ran in and the candidate children with their
/// Stat (a candidate that vanished between the listing and its `exists` is left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// The session the reads ran in ("our current session" of the model's `FindOwnNode`).
    pub session: SessionId,
    /// `(child name, Stat)`, in the order the server listed them.
    pub candidates: Vec<(String, NodeStat)>,
}

/// What a listing answered: the session it ran in and the children's names, in the server's
/// order. With a shared client another mutex may have renewed the session since the caller
/// last looked; the recipe then sets the listing aside (it says nothing about a node of the
/// session the caller knew).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The session the `getChildren` ran in.
    pub session: SessionId,
    /// The children's names, in the order the server listed them.
    pub children: Vec<String>,
}

/// How a wait for a watch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchOutcome {
    /// The watched node was deleted or changed (`ReceiveWatchEvent`).
    Fired,
    /// The session expired (or the client was closed) while waiting (`ReceiveSessionEvent`).
    SessionExpired,
}

/// The session's state as the client sees it now (Curator's connection states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEvent {
    /// Connected: requests are answered.
    Connected,
    /// Disconnected (Curator's SUSPENDED): the session may still be alive at the server, or may
    /// have expired there already. It comes back (same session) or turns into `Expired`.
    Suspended,
    /// The session is gone (expired, closed, or declared expired by the client after 1.4× the
    /// session timeout without hearing from the server). Terminal for this session; a new
    /// session can be opened.
    Expired,
    /// The server refused the session's authentication (ZooKeeper's `AuthFailed` state). Terminal
    /// for the client: a new session would be refused too, so no step opens one. The session
    /// itself may live on at the server until its timeout, and its nodes with it.
    AuthFailed,
    /// The client was closed (ZooKeeper's `Closed` state): its session was closed, and no new one
    /// is opened through it.
    Closed,
}

/// An error answered by a coordination step.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CoordError {
    /// `NONODE`.
    NoNode,
    /// `NODEEXISTS`.
    NodeExists,
    /// `BADVERSION`.
    BadVersion,
    /// `NOTEMPTY`.
    NotEmpty,
    /// The request's session is gone; nothing was applied. Call
    /// [`Coordination::new_session`] to go on.
    SessionExpired,
    /// The connection was lost with the request in flight: it may or may not have been applied.
    ConnectionLoss {
        /// What the client said.
        detail: String,
    },
    /// No server could be reached to open a session.
    Unreachable {
        /// The connect string tried.
        connect: String,
        /// What the client said.
        detail: String,
    },
    /// The server refused the session's authentication (`AUTHFAILED`; a SASL failure reaches
    /// the client as this too). Terminal for the session, and a new session with the same
    /// credentials fails the same way: never read as an expiry.
    AuthFailed {
        /// What the client said.
        detail: String,
    },
    /// The client handle was closed: nothing sent through it is answered again. Never read as
    /// an expiry (a new session would not make the caller's handle usable).
    ClientClosed,
    /// The server or client refused the request for good (bad arguments, no auth, ...).
    Rejected {
        /// What the client said.
        detail: String,
    },
}

impl CoordError {
    /// Whether the request may have been applied although no reply came
    /// ([`CoordError::ConnectionLoss`]).
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, CoordError::ConnectionLoss { .. })
    }
}

impl fmt::Display for CoordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordError::NoNode => f.write_str("no such node (NONODE)"),
            CoordError::NodeExists => f.write_str("node exists (NODEEXISTS)"),
            CoordError::BadVersion => f.write_str("version mismatch (BADVERSION)"),
            CoordError::NotEmpty => f.write_str("node has children (NOTEMPTY)"),
            CoordError::SessionExpired => f.write_str("session expired (SESSIONEXPIRED)"),
            CoordError::ConnectionLoss { detail } => {
                write!(f, "connection lost with the request in flight ({detail})")
            }
            CoordError::Unreachable { connect, detail } => {
                write!(f, "no ZooKeeper server reachable at {connect} ({detail})")
            }
            CoordError::AuthFailed { detail } => {
                write!(f, "authentication failed (AUTHFAILED: {detail})")
            }
            CoordError::ClientClosed => f.write_str("the client was closed"),
            CoordError::Rejected { detail } => write!(f, "request rejected: {detail}"),
        }
    }
}

impl std::error::Error for CoordError {}

/// Whether a node a guarded write creates is persistent or ephemeral.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Stays until deleted.
    Persistent,
    /// Goes with the session that created it.
    Ephemeral,
}

/// One write in a [`Coordination::guarded_write`] (a ZooKeeper `multi` operation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardedOp {
    /// `create(path, data)`.
    Create {
        /// The node to create.
        path: String,
        /// Its data.
        data: Vec<u8>,
        /// Persistent or ephemeral.
        kind: NodeKind,
    },
    /// `setData(path, data, version)`; `None` = any version.
    SetData {
        /// The node to write.
        path: String,
        /// Its new data.
        data: Vec<u8>,
        /// The version it must have, if any.
        version: Option<i32>,
    },
    /// `delete(path, version)`; `None` = any version.
    Delete {
        /// The node to delete.
        path: String,
        /// The version it must have, if any.
        version: Option<i32>,
    },
    /// `check(path, version)`; version `-1` = "exists".
    Check {
        /// The node that must exist.
        path: String,
        /// The version it must have (`-1`: any).
        version: i32,
    },
}

impl GuardedOp {
    /// `setData(path, data)` at any version.
    pub fn set_data(path: impl Into<String>, data: impl Into<Vec<u8>>) -> GuardedOp {
        GuardedOp::SetData {
            path: path.into(),
            data: data.into(),
            version: None,
        }
    }

    /// `create(path, data)`, persistent.
    pub fn create(path: impl Into<String>, data: impl Into<Vec<u8>>) -> GuardedOp {
        GuardedOp::Create {
            path: path.into(),
            data: data.into(),
            kind: NodeKind::Persistent,
        }
    }

    /// `delete(path)` at any version.
    pub fn delete(path: impl Into<String>) -> GuardedOp {
        GuardedOp::Delete {
            path: path.into(),
            version: None,
        }
    }

    /// The path the operation is on.
    pub fn path(&self) -> &str {
        match self {
            GuardedOp::Create { path, .. }
            | GuardedOp::SetData { path, .. }
            | GuardedOp::Delete { path, .. }
            | GuardedOp::Check { path, .. } => path,
        }
    }
}

/// The result of one [`GuardedOp`], in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpResult {
    /// A [`GuardedOp::Create`] made this node.
    Created {
        /// Its full path.
        path: String,
    },
    /// The node's Stat after the write.
    SetData {
        /// The Stat.
        stat: NodeStat,
    },
    /// A [`GuardedOp::Delete`] succeeded.
    Deleted,
    /// A [`GuardedOp::Check`] held.
    Checked,
}

/// A failed `multi`: nothing of it was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MultiError {
    /// The operation that failed (0 = the lock-node check when there is one); `None` when the
    /// request as a whole failed (session expired, connection lost).
    pub index: Option<usize>,
    /// Why it failed.
    pub error: CoordError,
}

/// The coordination interface the recipe runs on. See the module docs for the contract.
///
/// One value is one ZooKeeper client handle: one current session.
pub trait Coordination: Send + Sync + 'static {
    /// A registered one-shot watch, waited for with [`Coordination::wait_watch_event`].
    /// Dropping it unfired abandons the wait (a real client removes the watch).
    type Watch: Send + 'static;

    // ---- the steps: one request each ----

    /// `CreateLockNode`: `create(prefix, data, EPHEMERAL_SEQUENTIAL, open ACL)` returning the
    /// new node's path (prefix + the server's sequence suffix) and Stat (`create2`).
    ///
    /// # Errors
    /// [`CoordError::NoNode`] when the lock directory is missing; `SessionExpired`;
    /// `ConnectionLoss` (applied or not: the model's `LoseReply`); anything else is fatal.
    fn create_lock_node<'a>(
        &'a self,
        prefix: &'a str,
        data: &'a [u8],
    ) -> impl Future<Output = Result<LockNode, CoordError>> + Send + 'a;

    /// `FindOwnNode`: the protected search after a lost create reply. Lists `dir` and returns
    /// the Stat of every child whose name starts with `prefix` (with `None`: of every lock
    /// participant, for plain names). Reads only; the recipe decides which candidate, if any,
    /// is its own.
    ///
    /// # Errors
    /// `SessionExpired`, `ConnectionLoss`; a missing `dir` is an empty search, not an error.
    fn find_own_node<'a>(
        &'a self,
        dir: &'a str,
        prefix: Option<&'a str>,
    ) -> impl Future<Output = Result<Search, CoordError>> + Send + 'a;

    /// `ListChildren`: `getChildren(dir)`, names only, in the server's order, with the session
    /// it ran in.
    ///
    /// # Errors
    /// `NoNode` if `dir` is missing (the recipe reads it as "no children"), `SessionExpired`,
    /// `ConnectionLoss`.
    fn list_children<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Future<Output = Result<Listing, CoordError>> + Send + 'a;

    /// `WatchPredecessor`: `getData(path, watch = true)`. On a missing node it answers
    /// `NoNode` and leaves no watch behind (why Curator uses `getData`, not `exists`).
    ///
    /// # Errors
    /// `NoNode`, `SessionExpired`, `ConnectionLoss`.
    fn watch_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Self::Watch, CoordError>> + Send + 'a;

    /// `ReceiveWatchEvent` / `ReceiveSessionEvent`: waits until the watch fires or the session
    /// expires. Never times out by itself (the recipe races it against [`Coordination::sleep`]).
    fn wait_watch_event(
        &self,
        watch: Self::Watch,
    ) -> impl Future<Output = WatchOutcome> + Send + '_;

    /// `DeleteLockNode`: `delete(path, -1)`.
    ///
    /// # Errors
    /// `NoNode` (already gone: fine for a release), `SessionExpired`, `ConnectionLoss`.
    fn delete_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a;

    /// `sync(path)`: the server this session reads from catches up with the leader before it
    /// answers the session's next read. Sent before the protected search and before
    /// `ensure_valid`'s `exists`: a follower that has not applied our own create (its reply was
    /// lost, so the session never saw its zxid) would answer the search without it, and one
    /// that has not applied a delete would still show our node. Not a model step of its own:
    /// it makes the model's `FindOwnNode` and `CheckLockNode` read current data (the model's
    /// `lag` fault answers them from a lagging server only without it, in the
    /// `search-without-sync` variant).
    ///
    /// # Errors
    /// `SessionExpired`, `ConnectionLoss`.
    fn sync<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a;

    /// `CheckLockNode`: `exists(path)`: its Stat, or `None`.
    ///
    /// # Errors
    /// `SessionExpired`, `ConnectionLoss`.
    fn check_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Option<NodeStat>, CoordError>> + Send + 'a;

    /// `GuardedWrite`: one `multi`: `check(lock_node, 0)` first when `lock_node` is given (a
    /// lock node's data is never written, so version 0 means "still there"), then `ops`.
    /// Atomic: all or nothing.
    ///
    /// # Errors
    /// [`MultiError`] with the failing index (0 = the check: the lock node is gone).
    fn guarded_write<'a>(
        &'a self,
        lock_node: Option<&'a str>,
        ops: &'a [GuardedOp],
    ) -> impl Future<Output = Result<Vec<OpResult>, MultiError>> + Send + 'a;

    // ---- observations and the rest: not model steps ----

    /// The current session (the one requests issued now run in).
    fn session(&self) -> SessionId;

    /// The session's state now, without a request. Acting on [`SessionEvent::Expired`] is the
    /// model's `ReceiveSessionEvent`.
    fn session_event(&self) -> SessionEvent;

    /// The second half of "learn": replaces the session `expired` with a new one and returns
    /// it. If the current session is no longer `expired` (someone renewed it already), returns
    /// the current one without opening another.
    ///
    /// # Errors
    /// [`CoordError::Unreachable`] when no new session can be opened.
    fn new_session(
        &self,
        expired: SessionId,
    ) -> impl Future<Output = Result<SessionId, CoordError>> + Send + '_;

    /// Makes `dir` and its missing ancestors (as containers, like Curator's
    /// `creatingParentContainersIfNeeded`), after a create answered `NoNode`.
    ///
    /// # Errors
    /// As the creates.
    fn ensure_dir<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a;

    /// `getData(path)` without a watch, to name a holder in an error.
    ///
    /// # Errors
    /// As `getData`.
    fn read_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(Vec<u8>, NodeStat), CoordError>> + Send + 'a;

    /// A fresh protection id (Curator's `_c_<uuid>-` prefix): a random UUID in production, a
    /// deterministic name in a simulation.
    fn new_protection_id(&self) -> String;

    /// The current time.
    fn now(&self) -> Instant;

    /// Completes after `duration`.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + '_;

    /// Runs `task` in the background (the release of a dropped guard, the cleanup of a
    /// cancelled acquire). It may outlive every handle the caller has.
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static);
}
