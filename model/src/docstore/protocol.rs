//! Pessimistic locks built on an Elasticsearch index, as a Stateright model: the three recipes
//! of the blog post "Elasticsearch系列---实现分布式锁" (mengyue, 2020) exactly
//! as written, and a corrected recipe with an owner, a lease, a compare-and-delete release and
//! fencing tokens (Kleppmann, "How to do distributed locking", 2016).
//!
//! `clients` clients share one lock document in the index `files-lock` and one protected data
//! document `files/1`. Every client loops forever: acquire; while holding, read and then write
//! the data document any number of times (readers of the read/write lock only hold); release. A refused acquire is retried
//! later; a timed-out request is retried. The step table ([`next`]) says, per recipe and
//! role, which request comes next at each program counter:
//!
//! | recipe / role | `Idle`, `Retrying` | `Claiming` | `Verifying` | `Holding` | `Computing` | `Writing` | `Releasing` |
//! |---|---|---|---|---|---|---|---|
//! | `global` | `CreateLock` | `ClaimData` | — | `ReadData`, `DeleteLock` | `WriteData` | — | `DeleteLock` |
//! | `document` | `UpsertLock` | `ClaimData` | — | `ReadData`, `DeleteLock` | `WriteData` | — | `DeleteLock` |
//! | `read-write`, reader | `UpsertLock` | — | — | `UpdateUnlock` | — | — | `UpdateUnlock` |
//! | `read-write`, writer | `CreateLock` | `ClaimData` | — | `ReadData`, `DeleteLock` | `WriteData` | — | `DeleteLock` |
//! | `leased-upsert`, `leased-noop` | `UpsertLock` | `ClaimData` | — | `ReadData`, `CompareAndDelete` | `CheckLease` | `WriteData` | `CompareAndDelete` |
//! | `leased` and three `leased-fix-*` twins | `UpdateLock` | `ClaimData` | `VerifyLock` | `ReadData`, `RenewLease`, `ReleaseLease` | `CheckLease` | `WriteData` | `ReleaseLease` |
//! | `leased-fix-upsert` | `UpsertLock` | `ClaimData` | `VerifyLock` | `ReadData`, `CompareAndDelete` | `CheckLease` | `WriteData` | `CompareAndDelete` |
//! | `document-bulk` | `BulkCreateLocks` (first item; the second at `Bulk`) | `ClaimData` | — | `ReadData`, `BulkDeleteLocks` | `WriteData` | — | `BulkDeleteLocks` |
//!
//! A writer's critical section is a read-then-write session on the data document: read it
//! (`ReadData`), compute, write (`WriteData`); then read again or release. A writer reaches
//! `Claiming` only with `--writes fenced-claim`: right after the grant, before its first read,
//! it writes its token into the data document (`ClaimData`, the `fence-claim` script with an
//! `upsert`), so that from then on the document refuses every older token. The fixed `leased`
//! then reads its lock document back (`VerifyLock`, at `Verifying`) and goes on only if it still
//! carries its token; its lock document is installed once (in the initial state), acquired
//! without `upsert` and released to a free lease, and its sessions check the fence and
//! condition their writes on their read (`docs/docstore.md` §6, "The store's own faults").
//!
//! and [`Scenario::request`] says what each request is (the HTTP call, its body and
//! parameters). Faults, each with a budget: `Crash(c)`, `Restart(c)`, an operator's
//! `StrayDelete` of the lock document, lost replies (a request applied with its reply lost,
//! or not applied; the client sees a timeout either way), `Pause(c)` (leased: a client that
//! passed its lease check is not scheduled until its lease has passed), `Failover` (the
//! lock index's primary term grows), `RecreateIndex` (the lock index deleted and created
//! again: its counters start over), `RecreateDoc` (the data document deleted and created
//! again: its fence is gone) and `Rollback` (a fail-over loses the last acknowledged write).
//! `Tick` advances the clock (leased only).
//!
//! Every store answer comes from [`crate::docstore::store`], the module the simulated store and
//! the loopback HTTP server of the checks reuse. `docs/docstore.md` has the verdict table.

use std::fmt;

use stateright::{Model, Property};

use crate::checker::Checkable;
use crate::docstore::requests::Index;
use crate::docstore::scenario::{Faults, Role, Scenario};
use crate::docstore::store::{Owner, Shard, Source, Time, Token};
pub use crate::docstore::table::{next, Step};

/// A client index (small and dense).
pub type ClientId = u8;
/// Ghost: the order in which exclusive grants happened (renumbered densely).
pub type Epoch = u8;
/// A document id.
pub type DocId = &'static str;

/// The index holding the lock document.
pub const LOCK_INDEX: &str = "files-lock";
/// The index holding the protected data document.
pub const DATA_INDEX: &str = "files";
/// The protected data document's id.
pub const DATA_ID: DocId = "1";

// ---------------------------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------------------------

/// Where a client is in its loop. The names say what the client is doing; [`next`] says which
/// step comes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    /// Not holding and not acquiring: the next step acquires (after a refusal too).
    Idle = 0,
    /// An acquire timed out: the next step sends the same request again (leased: the lease
    /// deadline counts from the first send).
    Retrying = 1,
    /// `fenced-claim`: the acquire succeeded; the next step claims the data document with the
    /// token (sent again after a timeout).
    Claiming = 2,
    /// The client believes it holds the lock: the next step reads the data document (a
    /// session begins) or releases.
    Holding = 3,
    /// The client read the data document and computes its write: the next step writes
    /// (leased: checks the lease first).
    Computing = 4,
    /// Leased: the lease check passed; the next step is the write.
    Writing = 5,
    /// A release timed out (or a fenced write or claim was refused): the next step is the
    /// release. (`document-bulk`: also after a bulk acquire that created only some of its
    /// documents: the release deletes those.)
    Releasing = 6,
    /// `document-bulk`: the acquiring `_bulk` is being processed: its first item has been
    /// applied, the next step applies the second and brings the answer.
    Bulk = 7,
    /// `leased` (the fix): the claim (or, without one, the acquire) succeeded; the next step
    /// reads the lock document back and stops unless it still carries the client's token.
    Verifying = 8,
}

/// Ghost (not known to the client): where the client's read-then-write session stands in its
/// current grant — what "no lost update" is judged by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Session {
    /// No access to the data document under the current grant yet.
    None = 0,
    /// The client has accessed the data document (claimed or read it) under its grant, and no
    /// write made under another grant has been accepted since.
    Open = 1,
    /// The client has accessed the data document, and since then the document accepted a
    /// write made under another grant: a write of this client accepted now loses that update.
    Overlapped = 2,
}

/// One client process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Client {
    pub alive: bool,
    /// Restarts so far: part of the client's `process_id`/`owner`.
    pub incarnation: u8,
    pub pc: Pc,
    /// The `_seq_no`/`_primary_term` of the acquiring write, when the client keeps it
    /// ([`Scenario::keeps_token`]): its fencing token and its compare-and-delete guard.
    pub token: Option<Token>,
    /// Leased: the client's own lease deadline on the model clock (now is always 0: see
    /// [`State`]); set when the acquire is first sent.
    pub deadline: Option<Time>,
    /// Ghost (not known to the client): the order of this client's exclusive grant.
    pub epoch: Option<Epoch>,
    /// Ghost: the client's read-then-write session under its current grant.
    pub session: Session,
    /// `document-bulk`: which lock documents (bit `i` for the `i`-th id of
    /// `Variant::lock_ids`) the client's bulk created — while the bulk is processed, as its
    /// answer said, or (holding) every one; what its release deletes.
    pub bulk: u8,
    /// `leased` (the fix, [`crate::docstore::Variant::conditions_writes`]): the data document's
    /// `_seq_no`/`_primary_term` as the session's read returned them, which its write
    /// carries as `if_seq_no`/`if_primary_term`.
    pub read: Option<Token>,
    /// `leased` (the fix): the lock document's `_seq_no`/`_primary_term` after the client's
    /// last answered renewal (`RenewLease`); `None` until it renews. Its release and its next
    /// renewal are conditioned on it ([`Client::lock_version`]); the fencing token stays
    /// [`Client::token`], the acquire's.
    pub renewed: Option<Token>,
}

impl Client {
    pub(crate) const START: Client = Client {
        alive: true,
        incarnation: 0,
        pc: Pc::Idle,
        token: None,
        deadline: None,
        epoch: None,
        session: Session::None,
        bulk: 0,
        read: None,
        renewed: None,
    };

    /// The client's `process_id`/`owner` in its current incarnation.
    pub fn owner(&self, c: ClientId) -> Owner {
        Owner {
            client: c,
            incarnation: self.incarnation,
        }
    }

    /// The lock document's version as this client last wrote it: its last renewal's, else its
    /// acquire's (the token). What its release and renewal are conditioned on.
    pub fn lock_version(&self) -> Option<Token> {
        self.renewed.or(self.token)
    }

    /// Back to idle with nothing held.
    pub(crate) fn forget(&mut self) {
        self.pc = Pc::Idle;
        self.token = None;
        self.deadline = None;
        self.epoch = None;
        self.session = Session::None;
        self.bulk = 0;
        self.read = None;
        self.renewed = None;
    }
}

/// The notable outcome of the last step, when a property needs to see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    None,
    /// An acquire was refused because the lock was held (409, or the script threw).
    Refused,
    /// An acquire succeeded after a client crashed while not idle, none in between.
    AcquiredAfterCrash,
    /// The data document accepted a write of an older grant after a newer grant's write.
    StaleWriteAccepted,
    /// The data document refused such a write (fencing).
    StaleWriteRejected,
}

/// The whole system. Times are relative: the model clock always reads 0 and a tick subtracts
/// one from every stored time (leases that have passed read 0); sequence numbers and epochs
/// are renumbered densely after every step (only their order is observable). `Hash` writes
/// every number as one `usize` (see `canon.rs`), so fingerprints stay short.
#[derive(PartialEq, Eq)]
pub struct State {
    /// The index `files-lock`.
    pub locks: Shard<DocId>,
    /// The index `files` (the protected data document `1`).
    pub files: Shard<DocId>,
    /// Indexed by client id.
    pub clients: Vec<Client>,
    /// Fault budgets left.
    pub budget: Faults,
    /// Ghost: the highest epoch whose write the data document accepted.
    pub written: Option<Epoch>,
    /// Ghost: a client crashed while not idle and no acquire succeeded since.
    pub orphaned: bool,
    pub last: Event,
    /// Ghost: the last step's data write was accepted although, since its writer's first
    /// access under its grant, the document had accepted a write made under another grant
    /// (judged from [`Client::session`], never from the tokens the document compares).
    pub lost_update: bool,
    /// With a `rollback` budget left: the index the last applied write went to and that
    /// index as it was before the write, if the write was acknowledged (its client got the
    /// success); what [`Action::Rollback`] restores.
    pub undo: Option<(Index, Shard<DocId>)>,
    /// `skew`: how far ahead of the true time the store's script clock (`ctx._now`) runs now.
    pub clock_offset: Time,
    /// `reinstall`: the lock index was lost (`LoseLockIndex`) and no client has installed the
    /// lock document again yet.
    pub reinstall_pending: bool,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            locks: self.locks.clone(),
            files: self.files.clone(),
            clients: self.clients.clone(),
            budget: self.budget,
            written: self.written,
            orphaned: self.orphaned,
            last: self.last,
            lost_update: self.lost_update,
            undo: self.undo.clone(),
            clock_offset: self.clock_offset,
            reinstall_pending: self.reinstall_pending,
        }
    }

    /// Field by field, so the tables reuse their allocations.
    fn clone_from(&mut self, source: &State) {
        self.locks.clone_from(&source.locks);
        self.files.clone_from(&source.files);
        self.clients.clone_from(&source.clients);
        self.budget = source.budget;
        self.written = source.written;
        self.orphaned = source.orphaned;
        self.last = source.last;
        self.lost_update = source.lost_update;
        self.clock_offset = source.clock_offset;
        self.reinstall_pending = source.reinstall_pending;
        match (&mut self.undo, &source.undo) {
            (Some((i, shard)), Some((j, other))) => {
                *i = *j;
                shard.clone_from(other);
            }
            (undo, other) => undo.clone_from(other),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Actions.
// ---------------------------------------------------------------------------------------------

/// How a request's exchange went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Delivery {
    /// The store applied it and the client got the answer.
    Answered,
    /// The store applied it; the reply was lost (the client times out).
    ReplyLost,
    /// The request never reached the store (the client times out).
    RequestLost,
}

/// One atomic step: a client step or a fault.
///
/// **Mapping a recorded run of the reference client** (phase 2: the simulated store records
/// every call): each request the client makes through its store interface is
/// `Call(c, step, delivery)` with the step named after the request in [`Step`]'s docs; the
/// delivery is `Answered` when the client got the store's answer, otherwise `ReplyLost` or
/// `RequestLost` as the simulated store applied it or not. Each clock read of the lease check
/// is `Call(c, CheckLease, Answered)`. Feed it to [`Scenario::step`]: `None` means the model
/// does not allow the call here (a refinement failure); [`Scenario::response`] gives the answer
/// the recorded one must equal. Faults are injected by the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Client `c` takes `step`.
    Call(ClientId, Step, Delivery),
    /// Client `c`'s process dies; its documents stay.
    Crash(ClientId),
    /// Crashed client `c` starts again: a new incarnation, a new `process_id`.
    Restart(ClientId),
    /// An operator deletes the lock document (`DELETE files-lock/_doc/<id>`).
    StrayDelete,
    /// The clock advances one tick (leased).
    Tick,
    /// Client `c`, between its lease check and its write, is not scheduled until its lease
    /// has passed (leased).
    Pause(ClientId),
    /// Another copy of the lock index's shard becomes primary.
    Failover,
    /// The lock index is deleted and created again (no documents, `_primary_term` 1,
    /// `_seq_no` from 0).
    RecreateIndex,
    /// The data document `files/1` is deleted and created again without its fence.
    RecreateDoc,
    /// A fail-over to a copy that lacked the last acknowledged write: that write's index goes
    /// back to its state before it, under a new `_primary_term`.
    Rollback,
    /// `reinstall`: the lock index is lost (deleted and created again: no documents,
    /// `_primary_term` 1, `_seq_no` from 0); a client will install the lock document again.
    LoseLockIndex,
    /// `reinstall`: a client installs the lost lock document again, at any time after the
    /// loss (the fix: guarded; `leased-fix-unguarded-install`: `PUT _create {}`).
    ReinstallLock,
    /// `skew`: the store's script clock now runs this many ticks ahead of the true time.
    SkewClock(u8),
}

impl Action {
    /// The acting client, for client steps.
    pub fn client(self) -> Option<ClientId> {
        match self {
            Action::Call(c, ..) => Some(c),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    /// `CreateLock(c0)`, `DeleteLock(c0, reply lost)`, `Crash(c1)`, `StrayDelete`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Call(c, step, Delivery::Answered) => write!(f, "{step:?}(c{c})"),
            Action::Call(c, step, Delivery::ReplyLost) => write!(f, "{step:?}(c{c}, reply lost)"),
            Action::Call(c, step, Delivery::RequestLost) => {
                write!(f, "{step:?}(c{c}, request lost)")
            }
            Action::Crash(c) => write!(f, "Crash(c{c})"),
            Action::Restart(c) => write!(f, "Restart(c{c})"),
            Action::StrayDelete => f.write_str("StrayDelete"),
            Action::Tick => f.write_str("Tick"),
            Action::Pause(c) => write!(f, "Pause(c{c})"),
            Action::Failover => f.write_str("Failover"),
            Action::RecreateIndex => f.write_str("RecreateIndex"),
            Action::RecreateDoc => f.write_str("RecreateDoc"),
            Action::Rollback => f.write_str("Rollback"),
            Action::LoseLockIndex => f.write_str("LoseLockIndex"),
            Action::ReinstallLock => f.write_str("ReinstallLock"),
            Action::SkewClock(o) => write!(f, "SkewClock(+{o})"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Properties (names used verbatim in tests, CLI output and docs).
// ---------------------------------------------------------------------------------------------

pub const AT_MOST_ONE_WRITER: &str = "at most one writer";
pub const READERS_AND_WRITER_EXCLUSIVE: &str = "readers and writer exclusive";
pub const NO_STALE_LOCK: &str = "no stale lock";
pub const FENCED_WRITES_ARE_EXCLUSIVE: &str = "fenced writes are exclusive";
pub const WRITER_EXISTS: &str = "writer exists";
pub const READERS_SHARE: &str = "readers share";
pub const CONTENTION_SEEN: &str = "contention seen";
pub const ACQUIRED_AFTER_CRASH: &str = "acquired after crash";
pub const STALE_WRITE_ATTEMPTED: &str = "stale write attempted";
pub const NO_LOST_UPDATE: &str = "no lost update";
pub const SESSIONS_OVERLAP: &str = "sessions overlap";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 5] = [
    AT_MOST_ONE_WRITER,
    READERS_AND_WRITER_EXCLUSIVE,
    NO_STALE_LOCK,
    FENCED_WRITES_ARE_EXCLUSIVE,
    NO_LOST_UPDATE,
];

/// The `sometimes` properties, in report order.
pub const SOMETIMES: [&str; 6] = [
    WRITER_EXISTS,
    READERS_SHARE,
    CONTENTION_SEEN,
    ACQUIRED_AFTER_CRASH,
    STALE_WRITE_ATTEMPTED,
    SESSIONS_OVERLAP,
];

// ---------------------------------------------------------------------------------------------
// The model.
// ---------------------------------------------------------------------------------------------

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.clone_from(s);
        self.apply_in_place(out, action);
        true
    }

    fn representative(&self, s: &State) -> Option<State> {
        self.symmetric_representative(s)
    }

    /// What a step did: who acts, the HTTP request, and its outcome
    /// (`c1 CreateLock: PUT files-lock/_create/global {} → 409 version_conflict_engine_exception`).
    fn describe_step(&self, before: &State, action: &Action, after: &State) -> String {
        self.describe(before, *action, after)
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let mut files = Shard::new();
        files
            .create(DATA_ID, Source::Data { fence: None })
            .expect("an empty index");
        let mut locks = Shard::new();
        if self.variant.installs_lock_once() {
            // The fix: the lock document is installed once, before any client runs
            // (`PUT files-lock/_create/1 {}`), as the stored scripts are.
            locks
                .create(self.variant.lock_id(), Source::Empty)
                .expect("an empty index");
        }
        let mut s = State {
            locks,
            files,
            clients: vec![Client::START; self.clients as usize],
            budget: self.faults,
            written: None,
            orphaned: false,
            last: Event::None,
            lost_update: false,
            undo: None,
            clock_offset: 0,
            reinstall_pending: false,
        };
        self.canonicalize(&mut s);
        vec![s]
    }

    /// Steps of every live client (client order), then faults and the clock.
    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        for c in 0..self.clients {
            if s.clients[c as usize].alive {
                self.client_actions(s, c, actions);
            }
        }
        self.fault_actions(s, actions);
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        self.step(s, action)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn format_step(&self, s: &State, action: Action) -> Option<String> {
        let after = self.step(s, action)?;
        Some(format!("{}\n\n{after:?}", self.describe(s, action, &after)))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(AT_MOST_ONE_WRITER, |m: &Scenario, s: &State| {
                m.count(|c| m.is_writer(s, c)) <= 1
            }),
            Property::always(READERS_AND_WRITER_EXCLUSIVE, |m: &Scenario, s: &State| {
                m.count(|c| m.is_reader(s, c)) == 0 || m.count(|c| m.is_writer(s, c)) == 0
            }),
            Property::always(NO_STALE_LOCK, |m: &Scenario, s: &State| {
                s.clients.iter().any(|cl| cl.alive && cl.pc != Pc::Idle)
                    || [Role::Reader, Role::Writer].into_iter().all(|role| {
                        m.count(|c| m.role(c) == role) == 0
                            || m.fresh_acquire_succeeds_eventually(s, role)
                    })
            }),
            Property::always(FENCED_WRITES_ARE_EXCLUSIVE, |_, s: &State| {
                s.last != Event::StaleWriteAccepted
            }),
            Property::always(NO_LOST_UPDATE, |_, s: &State| !s.lost_update),
            Property::sometimes(WRITER_EXISTS, |m: &Scenario, s: &State| {
                m.count(|c| m.is_writer(s, c)) > 0
            }),
            Property::sometimes(READERS_SHARE, |m: &Scenario, s: &State| {
                m.count(|c| m.is_reader(s, c)) >= 2
            }),
            Property::sometimes(CONTENTION_SEEN, |_, s: &State| s.last == Event::Refused),
            Property::sometimes(ACQUIRED_AFTER_CRASH, |_, s: &State| {
                s.last == Event::AcquiredAfterCrash
            }),
            Property::sometimes(STALE_WRITE_ATTEMPTED, |_, s: &State| {
                matches!(
                    s.last,
                    Event::StaleWriteAccepted | Event::StaleWriteRejected
                )
            }),
            Property::sometimes(SESSIONS_OVERLAP, |_, s: &State| {
                s.clients.iter().any(|cl| cl.session == Session::Overlapped)
            }),
        ]
    }
}
