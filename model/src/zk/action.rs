//! The model's actions: one per call of the recipe's coordination interface, plus the faults
//! and the server's own steps.

use std::fmt;

use crate::zk::scenario::ClientId;

/// One atomic step: a client's call, a fault, or a server step.
///
/// **Mapping a recorded run of the real recipe**: every call client `c` makes through the
/// coordination interface is the action of the same name — `create_lock_node` →
/// `CreateLockNode(c)` (a `ConnectionLoss` answer → `LoseReply(c, applied)` or
/// `LoseReply(c, not applied)`, whichever the simulated server did), the protected search →
/// `FindOwnNode`, `list_children` → `ListChildren`, `watch` (getData with watch) →
/// `WatchPredecessor`, `wait_watch_event` returning → `ReceiveWatchEvent`, the session-event
/// stream delivering `Expired` → `ReceiveSessionEvent`, `delete` → `DeleteLockNode`,
/// `exists` on the own node → `CheckLockNode`, `multi` → `GuardedWrite`; the resource's read
/// → `Read`, its claim → `Claim`, its write → `Write` or `FencedWrite`; a re-entrant acquire/release → `Reenter`/`ReleaseInner`;
/// the search and the delete of a dropped future's cleanup task → `CleanupFind`,
/// `CleanupDelete` (a lost reply → `LoseCleanupReply`). Feed
/// it to [`Scenario::step`](crate::zk::Scenario::step): `None` means the model does not allow the step there. Outcomes
/// (`SessionExpired`, `NoNode`, granted or not) follow from the state and are read from the
/// resulting client (`State::clients[c].pc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// `create("/locks/_c_<uuid>-lock-", EPHEMERAL_SEQUENTIAL)` with its Stat (create2).
    CreateLockNode(ClientId),
    /// The client's next create or delete, applied (`true`) or not, answered by
    /// `ConnectionLoss` (fault, budget `lose-reply`).
    LoseReply(ClientId, bool),
    /// Protected search: `getChildren`, our uuid's child, its Stat.
    FindOwnNode(ClientId),
    /// `getChildren("/locks")`, sorted by suffix: granted, predecessor, or own node missing.
    ListChildren(ClientId),
    /// `getData(predecessor, watch)`.
    WatchPredecessor(ClientId),
    /// The watch fired; the waiting client takes the event.
    ReceiveWatchEvent(ClientId),
    /// The `Expired` session event reaches the client.
    ReceiveSessionEvent(ClientId),
    /// A re-entrant acquire by the holding thread (no request).
    Reenter(ClientId),
    /// A re-entrant (inner) release (no request).
    ReleaseInner(ClientId),
    /// `delete(own node, -1)`: the release, retried until ok or NoNode.
    DeleteLockNode(ClientId),
    /// `fenced-claim`: right after the grant, the holder writes its token to the resource
    /// (accepted unless an older-than-accepted token; refused: `LockLost`).
    Claim(ClientId),
    /// The holder reads the resource: the first access of an update (read, compute, write).
    Read(ClientId),
    /// The resource's write without a token.
    Write(ClientId),
    /// `exists(own node)` just before writing (check-then-write).
    CheckLockNode(ClientId),
    /// The resource's write carrying the fencing token.
    FencedWrite(ClientId),
    /// `multi(check(own node, 0), setData("/resource"))`.
    GuardedWrite(ClientId),
    /// The server expires `c`'s current session (fault, budget `expire`).
    ExpireSession(ClientId),
    /// `c` opens a new session; the old one lives on at the server (fault, budget `restart`).
    RestartClient(ClientId),
    /// The server times out a session `c` abandoned (always happens eventually: no budget).
    ExpireOldSession(ClientId),
    /// The empty container `/locks` is reaped and made again (fault, budget
    /// `recreate-parent`).
    RecreateParent,
    /// The caller drops `c`'s acquire or its release at an await point (fault, budget
    /// `abandon`): an acquire searching or pausing after a lost create reply (a drop while the
    /// reply is awaited is that reply lost, then this step), awaiting a create queued behind a
    /// dropped connection, or waiting with a node; a release after a lost delete reply. What the dropped future had
    /// goes to the client's cleanup task (`Client::cleanup`: a search, or a node to delete)
    /// and the client is `Idle` at once, its next acquire free to run beside the cleanup; in
    /// the cancel-unsafe variants it goes to nobody. Enabled only while the client has no
    /// cleanup pending.
    Abandon(ClientId),
    /// `c`'s connection drops while its session lives on (fault, budget `suspend`): the
    /// client sees `Disconnected` (Curator's SUSPENDED) and makes no request until it is back.
    /// A create or delete it had sent stays queued: the server may still apply it
    /// (`ApplySent`), and its answer is lost either way.
    Suspend(ClientId),
    /// The server applies the create or delete `c` sent before its connection dropped; no
    /// answer reaches `c` (a server step: no budget).
    ApplySent(ClientId),
    /// `c` reconnects to the same, live session. A request still queued is dropped (it never
    /// reached the leader, or the leader refuses it as `SessionMoved`); the one `c` had in
    /// flight answers `ConnectionLoss`, and `c` goes on as after a lost reply.
    Reconnect(ClientId),
    /// `c`'s protected search is answered by a server that has not applied `c`'s create yet
    /// (its reply was lost, so the session never saw its zxid): no node found, though it
    /// exists (fault, budget `lag`; only without `sync` first, `search-without-sync`).
    LaggedSearch(ClientId),
    /// `c`'s listing (`getChildren`) shows its own node under a name `c`'s parser does not
    /// read as a lock participant (a suffix past 2^31 before the parser read signed ones): own
    /// node not recognized (fault, budget `misread`). The recipe deletes that node by its name
    /// (`Releasing`), then starts over; `abandon-without-delete` starts over at once.
    MisreadOwnNode(ClientId),
    /// `c`'s cleanup task (a dropped acquire's, `Client::cleanup`) searches for the dropped
    /// attempt's node: `getChildren`, the dropped attempt's protection id in the session
    /// (plain names: our session's node). Found: it deletes it next; none: done.
    CleanupFind(ClientId),
    /// `c`'s cleanup task deletes the dropped future's node (`delete(name, -1)`; ok or
    /// `NoNode`: done).
    CleanupDelete(ClientId),
    /// The reply to `c`'s cleanup's request is lost (`ConnectionLoss`; fault, budget
    /// `lose-reply`): a delete applied (`true`) or not, a search not; the task asks again.
    LoseCleanupReply(ClientId, bool),
    /// `--shared-client`: mutex `c` sees, before its next step, that its client runs another
    /// session than the one it knew (the other mutex renewed it, or the client restarted),
    /// and applies the session-change rules. Until then its requests already run in the new
    /// session (its look at the session came before the renewal).
    NoticeSessionChange(ClientId),
    /// `c` learned that its session is gone, during an acquire, and cannot open a new one
    /// (fault, budget `refuse-session`): the acquire ends with an error (`Failed`). The recipe
    /// returns `AuthFailed`, `Unreachable` or `SessionsKeepEnding` there, never loops.
    RefuseSession(ClientId),
    /// The same create, in flight together with the create before it (`--sequence-width`
    /// only, and only once the counter has reached its top): it takes the suffix that create
    /// left in the parent's pending change record, wrapped (`Server::create_behind_last`).
    /// A recorded run maps a create to this when its suffix is the pending one.
    CreateBehindLast(ClientId),
}

impl Action {
    /// The client the step is about (`None` for `RecreateParent`).
    pub fn client(self) -> Option<ClientId> {
        use Action::*;
        match self {
            CreateLockNode(c)
            | CreateBehindLast(c)
            | LoseReply(c, _)
            | FindOwnNode(c)
            | ListChildren(c)
            | WatchPredecessor(c)
            | ReceiveWatchEvent(c)
            | ReceiveSessionEvent(c)
            | Reenter(c)
            | ReleaseInner(c)
            | DeleteLockNode(c)
            | Claim(c)
            | Read(c)
            | Write(c)
            | CheckLockNode(c)
            | FencedWrite(c)
            | GuardedWrite(c)
            | ExpireSession(c)
            | RestartClient(c)
            | ExpireOldSession(c)
            | Abandon(c)
            | Suspend(c)
            | ApplySent(c)
            | Reconnect(c)
            | LaggedSearch(c)
            | MisreadOwnNode(c)
            | CleanupFind(c)
            | CleanupDelete(c)
            | LoseCleanupReply(c, _)
            | NoticeSessionChange(c)
            | RefuseSession(c) => Some(c),
            RecreateParent => None,
        }
    }

    /// The step's name without arguments (`"ListChildren"`).
    pub fn name(self) -> &'static str {
        use Action::*;
        match self {
            CreateLockNode(_) => "CreateLockNode",
            CreateBehindLast(_) => "CreateBehindLast",
            LoseReply(..) => "LoseReply",
            FindOwnNode(_) => "FindOwnNode",
            ListChildren(_) => "ListChildren",
            WatchPredecessor(_) => "WatchPredecessor",
            ReceiveWatchEvent(_) => "ReceiveWatchEvent",
            ReceiveSessionEvent(_) => "ReceiveSessionEvent",
            Reenter(_) => "Reenter",
            ReleaseInner(_) => "ReleaseInner",
            DeleteLockNode(_) => "DeleteLockNode",
            Claim(_) => "Claim",
            Read(_) => "Read",
            Write(_) => "Write",
            CheckLockNode(_) => "CheckLockNode",
            FencedWrite(_) => "FencedWrite",
            GuardedWrite(_) => "GuardedWrite",
            ExpireSession(_) => "ExpireSession",
            RestartClient(_) => "RestartClient",
            ExpireOldSession(_) => "ExpireOldSession",
            RecreateParent => "RecreateParent",
            Abandon(_) => "Abandon",
            Suspend(_) => "Suspend",
            ApplySent(_) => "ApplySent",
            Reconnect(_) => "Reconnect",
            LaggedSearch(_) => "LaggedSearch",
            MisreadOwnNode(_) => "MisreadOwnNode",
            NoticeSessionChange(_) => "NoticeSessionChange",
            RefuseSession(_) => "RefuseSession",
            CleanupFind(_) => "CleanupFind",
            CleanupDelete(_) => "CleanupDelete",
            LoseCleanupReply(..) => "LoseCleanupReply",
        }
    }

    /// Whether the step needs the client's connection: a request to ZooKeeper or an event it
    /// delivers. A suspended client takes only the others (its resource accesses, re-entry,
    /// and learning that its session expired).
    pub fn needs_connection(self) -> bool {
        use Action::*;
        matches!(
            self,
            CreateLockNode(_)
                | CreateBehindLast(_)
                | LoseReply(..)
                | FindOwnNode(_)
                | ListChildren(_)
                | WatchPredecessor(_)
                | ReceiveWatchEvent(_)
                | DeleteLockNode(_)
                | CheckLockNode(_)
                | GuardedWrite(_)
                | LaggedSearch(_)
                | MisreadOwnNode(_)
                | CleanupFind(_)
                | CleanupDelete(_)
                | LoseCleanupReply(..)
        )
    }
}

impl fmt::Display for Action {
    /// `ListChildren(c1)`, `LoseReply(c0, applied)`, `RecreateParent`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::LoseReply(c, applied) => write!(
                f,
                "LoseReply(c{c}, {})",
                if applied { "applied" } else { "not applied" }
            ),
            Action::LoseCleanupReply(c, applied) => write!(
                f,
                "LoseCleanupReply(c{c}, {})",
                if applied { "applied" } else { "not applied" }
            ),
            Action::RecreateParent => f.write_str("RecreateParent"),
            a => write!(f, "{}(c{})", a.name(), a.client().expect("a client step")),
        }
    }
}
