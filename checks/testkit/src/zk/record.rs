//! What a simulated run records: who made which call and what the simulated server answered,
//! in linearization order (the order in which calls took the world lock).

use std::fmt;

use lockwright_model::zk::{ClientId, Name, Pc};

/// A recorded call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    // ---- coordination calls of the real recipe (one model action each) ----
    /// `create_lock_node` (`CreateLockNode`, or `LoseReply` when the reply was lost).
    Create { uuid: Option<u8> },
    /// `find_own_node` (`FindOwnNode`; answered `Lagged`: `LaggedSearch`; while the model's
    /// client has only a cleanup search to make: `CleanupFind`).
    FindOwnNode,
    /// `find_own_node` for an older attempt's protection id `uuid` (with fresh ids per
    /// attempt): a dropped acquire's cleanup searching beside the next attempt (`CleanupFind`).
    CleanupFind { uuid: Option<u8> },
    /// `sync` of the lock directory (no model action: the model's `sync_before_search` rule;
    /// the client's next search reads current data).
    Sync,
    /// `list_children` (`ListChildren`; answered `Misread`: `MisreadOwnNode`).
    ListChildren,
    /// `watch_node` on `name` (`WatchPredecessor`).
    Watch { name: Name },
    /// `wait_watch_event` returned `Fired` (`ReceiveWatchEvent`).
    WatchEvent,
    /// The client learned from the session-event stream (or a wait that ended with it) that
    /// its session expired (`ReceiveSessionEvent`).
    SessionEvent,
    /// A mutex sharing its client was told a session another mutex renewed (`session()` or
    /// `new_session` answered a session it did not know: `NoticeSessionChange`).
    NoticeSessionChange,
    /// `delete_node` of `name` (`DeleteLockNode`, or `LoseReply`).
    Delete { name: Name },
    /// The caller dropped the client's `release()` after its delete lost a reply (`Abandon`).
    Abandon,
    /// The caller dropped the client's `acquire()` while it waited for its predecessor
    /// (`Abandon`).
    DropAcquire,
    /// `try_acquire` or `acquire_timeout` gave up holding a lock node and handed it to a
    /// cleanup task (the spawn is the hand-off; `Abandon`: the model has no give-up of its own).
    GiveUp,
    /// The caller dropped the client's `acquire()`, `acquire_timeout()` or `release()` at a
    /// `Pending` poll, chosen at random where the model's `Abandon` is enabled; `at` is the
    /// model's place then (`Abandon`).
    Drop { at: Pc },
    /// `check_node` of `name` (`CheckLockNode`).
    Check { name: Name },
    /// `guarded_write`: with the lock-node check (`GuardedWrite`), or without it under the
    /// unfenced-writes defect (`Write`: the model's resource outside ZooKeeper).
    GuardedWrite { check: Option<Name> },
    // ---- the protected resource (not ZooKeeper): the workload's reads and writes ----
    /// The holder reads the resource: the start of an update (`Read`).
    Read,
    /// Claim at acquire: the holder writes its token to the fenced resource before its first
    /// read (`Claim`; refused like a fenced write).
    Claim { token: i64 },
    /// A write carrying a fencing token, to a resource that keeps the highest it accepted
    /// (`FencedWrite`).
    FencedWrite { token: i64 },
    /// A write without a token after a passed `ensure_valid` (`Write`).
    Write,
    // ---- re-entrancy (no request) ----
    /// `ZkGuard::reenter` (`Reenter`).
    Reenter,
    /// The inner guard released (`ReleaseInner`).
    ReleaseInner,
    // ---- harness observations ----
    /// `acquire` returned a guard.
    Acquired,
    /// `try_acquire` or `acquire_timeout` returned `Held` or `TimedOut` after `waited_ms` of
    /// simulated time.
    GaveUp { waited_ms: u64 },
    /// The guard reported a final `LockLost`.
    LockLost,
    // ---- environment: faults and server steps ----
    /// The server expires the client's current session (`ExpireSession`).
    Expire(ClientId),
    /// The client replaces its handle: a new session, the old one abandoned (`RestartClient`).
    Restart(ClientId),
    /// The server times out a session the client abandoned (`ExpireOldSession`).
    ExpireOld(ClientId),
    /// The empty container parent is reaped and made again (`RecreateParent`).
    RecreateParent,
    /// The simulated clock jumps to `ms` milliseconds after the start, waking the sleeps due
    /// (no model action: the model has no time).
    Tick { ms: u64 },
    /// The client's next create or delete will lose its reply, `applied` or not.
    Arm { client: ClientId, applied: bool },
    /// The client's next create that is applied makes a node the server names to it under a
    /// name its parser does not read as a lock node (its first listing of it: `MisreadOwnNode`).
    ArmMisread(ClientId),
    /// The client's next search that would find its node, unless a `sync` came first, is
    /// answered by a server that has not applied its writes.
    ArmLag(ClientId),
    // ---- a suspended connection (`zk::suspend`) ----
    /// The client's connection will drop at its next request that can carry the drop (a
    /// create, a retried delete, a read) in a live session (no model action).
    ArmSuspend(ClientId),
    /// The connection dropped as the client made a request, its session alive (`Suspend`):
    /// a create or a retried delete stays `queued` at the server, a read is asked again after
    /// the reconnect. The client sees `Disconnected` until `Reconnect` or the expiry.
    Suspend { queued: Option<Queued> },
    /// The server applies the suspended client's queued request; no answer reaches the client
    /// (`ApplySent`).
    ApplySent(ClientId),
    /// The suspended client reconnects to its live session: a request still queued is dropped,
    /// the queued request's answer is `ConnectionLoss`, parked reads go on (`Reconnect`).
    Reconnect(ClientId),
}

/// A request sent as the connection dropped, which the server may still apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// `create_lock_node` with this protection id.
    Create { uuid: Option<u8> },
    /// `delete_node` of this node (a delete retried after a lost reply).
    Delete { name: Name },
}

/// What the simulated server (or resource) answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done / accepted / found.
    Ok,
    /// `NoNode` (a check found no node: `exists` answered `None`).
    NoNode,
    /// The request's session had expired: nothing applied; the client now runs a new one.
    SessionExpired,
    /// The request was applied or not, and answered `ConnectionLoss`.
    ReplyLost { applied: bool },
    /// The fenced resource refused a token lower than the highest it accepted.
    Rejected,
    /// A listing that showed the client its own node under a name it does not read as a lock
    /// node (`MisreadOwnNode`).
    Misread,
    /// A search answered by a server that had not applied the client's writes: its node is
    /// missing (`LaggedSearch`).
    Lagged,
    /// A fault that could not happen now (no effect).
    Skipped,
}

/// One recorded step: `client` is `None` for the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub client: Option<ClientId>,
    pub call: Call,
    pub outcome: Outcome,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.client {
            Some(c) => write!(f, "c{c} ")?,
            None => f.write_str("env ")?,
        }
        match &self.call {
            Call::Create { uuid: Some(u) } => write!(f, "create _c_c{u}-lock-")?,
            Call::Create { uuid: None } => f.write_str("create lock-")?,
            Call::Watch { name } => write!(f, "watch {name}")?,
            Call::Delete { name } => write!(f, "delete {name}")?,
            Call::Check { name } => write!(f, "check {name}")?,
            Call::GuardedWrite { check: Some(n) } => write!(f, "multi(check {n}, write)")?,
            Call::GuardedWrite { check: None } => f.write_str("multi(write) without check")?,
            c => write!(f, "{c:?}")?,
        }
        write!(f, " -> {:?}", self.outcome)
    }
}

/// Formats a recording, one numbered step a line.
pub fn format_trace(steps: &[Step]) -> String {
    let mut s = String::new();
    for (i, step) in steps.iter().enumerate() {
        s.push_str(&format!("  #{i:<3} {step}\n"));
    }
    s
}

/// How many requests of `trace` a dropped future's cleanup made after its client's next
/// acquire began, read from the recording alone (with fresh protection ids per attempt): a
/// search for an id older than the client's latest (`CleanupFind`), or a delete of a node
/// whose id is not the one of the client's latest create.
pub fn cleanup_beside_next_acquire(trace: &[Step]) -> usize {
    let mut latest: Vec<Option<Option<u8>>> = Vec::new();
    let mut n = 0;
    for step in trace {
        let Some(c) = step.client.map(usize::from) else {
            continue;
        };
        if latest.len() <= c {
            latest.resize(c + 1, None);
        }
        match &step.call {
            Call::Create { uuid } => latest[c] = Some(*uuid),
            Call::CleanupFind { .. } => n += 1,
            Call::Delete { name } if latest[c].is_some_and(|u| u.is_some() && u != name.uuid) => {
                n += 1
            }
            _ => {}
        }
    }
    n
}

/// Whether `trace` (two mutexes sharing one client) holds the case of the fix in
/// docs/zookeeper.md §9, read from the recording alone: a mutex's create is applied with its
/// reply lost after the OTHER mutex renewed the expired session (it learned the expiry: a
/// session event, or a request answered `SessionExpired`) and before this mutex noticed the
/// renewal; it notices afterwards, and a search of its own then finds a node.
pub fn search_after_lost_create_in_renewed_session(trace: &[Step]) -> bool {
    (0..2u8).any(|me| {
        let other = 1 - me;
        let (mut renewed, mut lost_create, mut noticed_after) = (false, false, false);
        for s in trace {
            match (s.client, &s.call, s.outcome) {
                (None, Call::Expire(_), Outcome::Ok) => {
                    (renewed, lost_create, noticed_after) = (false, false, false);
                }
                (Some(c), Call::SessionEvent, _) if c == other => renewed = true,
                (Some(c), _, Outcome::SessionExpired) if c == other => renewed = true,
                (Some(c), Call::NoticeSessionChange, _) if c == me => {
                    if lost_create {
                        noticed_after = true;
                    } else {
                        renewed = false;
                    }
                }
                (Some(c), Call::Create { .. }, Outcome::ReplyLost { applied: true })
                    if c == me && renewed =>
                {
                    lost_create = true;
                }
                (Some(c), Call::FindOwnNode, Outcome::Ok)
                    if c == me && lost_create && noticed_after =>
                {
                    return true;
                }
                _ => {}
            }
        }
        false
    })
}
