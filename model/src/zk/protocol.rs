//! The ZooKeeper mutex — Curator's `InterProcessMutex` and the lockwright recipe that follows
//! it — as a Stateright model, with sessions, expiry, lost replies and a re-created parent.
//!
//! `clients` clients loop forever: acquire (create an ephemeral-sequential lock node, list the
//! children, hold if lowest, else watch the predecessor and list again when it goes), write to
//! the protected resource while holding (`c0` may re-enter), release (delete the node). The
//! recipe variants are the ways it has gone wrong (`docs/zookeeper.md` has the verdict table):
//!
//! | variant | differs from `curator` | incident |
//! |---|---|---|
//! | `curator` | — (protected create; after a lost reply, search our uuid in our session) | Curator 5.x, lockwright |
//! | `no-protection` | plain names; a lost create is simply retried | ZooKeeper recipes "Recoverable Errors and the GUID", CURATOR-79 |
//! | `release-forgets` | a lost delete reply drops the hold and leaves the node | CURATOR-486, CURATOR-678 |
//! | `adopt-old-session` | the search takes our uuid's node from any session | CURATOR-498, CURATOR-604 |
//! | `delete-by-name-retry` | plain names; the retried delete may hit a newer node of the same name | the release ABA |
//! | `release-cancel-unsafe` | a release dropped after a lost delete reply leaves the node | CURATOR-486 class |
//! | `give-up-cancel-unsafe` | an acquire dropped while giving up leaves the node | cancel safety |
//! | `search-without-sync` | no `sync` before the protected search: a lagging server misses our create | lockwright before the fix |
//! | `abandon-without-delete` | a listing that does not recognize our node starts over without deleting it | lockwright before the fix |
//! | `drop-own-on-session-swap` | a mutex whose shared client renewed the session drops a node the new session owns, and stops a search that would find one | lockwright before the fix |
//! | `protection-id-per-client` | one protection id for all of a client's attempts: a cleanup and the next attempt take each other's node | a model finding (the recipe's uuid is per `acquire`) |
//! | `text-order` | across the counter's top (`--sequence-width`) a node takes the place its suffix gives (`curator` refuses a suffix at the top or below 0) | issue #33; Curator 5.4; python-zk/kazoo#730 |
//!
//! A hold's work is updates of the protected resource: read, compute, write (`Read`, then the
//! write of the mode). Writes (`WriteMode`): `unfenced`, `check-then-write`, `fenced` (token =
//! the lock node's czxid; Kleppmann 2016, Chubby's sequencer), `fenced-claim` (`fenced` plus
//! claim-at-acquire: the holder writes its token before its first read), `fenced-by-sequence`
//! (token = the suffix: unsafe), `guarded` (a ZooKeeper `multi`). "no lost update" and "fenced
//! writes are exclusive" are judged from the model's own grant history (`Client::grant`), not
//! from the token the resource compares. What a holder does on learning its session is gone
//! (`Guard`): lockwright reports `LockLost`; Curator itself keeps believing (tech note 10: "both
//! client A and client B will believe they are the lock holder").
//!
//! Faults, each with a budget: `ExpireSession(c)` (the server decides; the client learns on
//! its next reply or from the session event, a separate step), `LoseReply(c, applied?)` on
//! any request (create, delete, search, listing, watch, check, `multi`), `RestartClient(c)` (a new session while the server still has the old
//! one), `RecreateParent` (the container, reaped when empty, is made again; suffixes restart),
//! `Abandon(c)` (the caller drops c's acquire at any await point — after a lost create reply,
//! with a create queued behind a dropped connection, waiting with a node — or its release
//! after a lost delete reply; what the future had goes to the client's cleanup slot, whose
//! steps `CleanupFind`, `CleanupDelete` and `LoseCleanupReply` run beside its next acquire), `Suspend(c)` (the connection drops while the session lives: a queued
//! create or delete may be applied later, `ApplySent`, until `Reconnect`), `LaggedSearch(c)`
//! (a lagging server answers the search, only without `sync`: `search-without-sync`),
//! `MisreadOwnNode(c)` (the listing shows c's node under a name c does not read as a lock
//! participant: the recipe deletes it before starting over). With `--shared-client` (two
//! mutexes of one process share one ZooKeeper client and its session renewals) a mutex learns
//! of a renewal it did not make only at its next step, `NoticeSessionChange(c)`.
//! A paused client is simply one that is not scheduled.
//!
//! All ZooKeeper semantics come from [`crate::zk::server`], shared with the simulated server
//! of the checks. Each client step is one call of the recipe's coordination interface; see
//! [`Action`] (in `action.rs`) for the mapping, and `docs/zookeeper.md` for the step table.

use stateright::{Model, Property};

use crate::checker::Checkable;
pub use crate::zk::action::Action;
use crate::zk::scenario::{ClientId, Scenario, WriteMode};
use crate::zk::server::{SessionId, Uuid};
use crate::zk::state::{Cleanup, Client, Event, Pc, Resource, State, PREVIOUS_ATTEMPT};

// ---------------------------------------------------------------------------------------------
// Properties (names used verbatim in tests, CLI output and docs).
// ---------------------------------------------------------------------------------------------

pub const AT_MOST_ONE_HOLDER: &str = "at most one holder";
pub const AT_MOST_ONE_LIVE_HOLDER: &str = "at most one live holder";
pub const FENCED_WRITES_ARE_EXCLUSIVE: &str = "fenced writes are exclusive";
pub const NO_LOST_UPDATE: &str = "no lost update";
pub const NO_ORPHAN_NODE: &str = "no orphan node";
pub const GRANTS_IN_REQUEST_ORDER: &str = "grants in request order";
pub const HOLDER_EXISTS: &str = "holder exists";
pub const HANDOFF_AFTER_EXPIRY: &str = "handoff after expiry";
pub const CONTENTION_SEEN: &str = "contention seen";
pub const WAITER_WOKEN_BY_WATCH: &str = "waiter woken by watch";
pub const REENTRANT_HOLD: &str = "reentrant hold";
pub const LOCK_LOST_REPORTED: &str = "lock lost reported";
pub const UPDATE_COMPLETED: &str = "update completed";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 6] = [
    AT_MOST_ONE_HOLDER,
    AT_MOST_ONE_LIVE_HOLDER,
    FENCED_WRITES_ARE_EXCLUSIVE,
    NO_LOST_UPDATE,
    NO_ORPHAN_NODE,
    GRANTS_IN_REQUEST_ORDER,
];

/// The `sometimes` properties, in report order.
pub const SOMETIMES: [&str; 7] = [
    HOLDER_EXISTS,
    HANDOFF_AFTER_EXPIRY,
    CONTENTION_SEEN,
    WAITER_WOKEN_BY_WATCH,
    REENTRANT_HOLD,
    LOCK_LOST_REPORTED,
    UPDATE_COMPLETED,
];

impl Scenario {
    /// "no orphan node": every node of a session some client still uses is a node that client
    /// holds, waits with, is deleting, or may have created with a lost reply it will search
    /// for — in its acquire or in the cleanup task of a dropped one (a node its cleanup will
    /// delete, or one with the dropped attempt's protection id while that cleanup searches). Any other node blocks everyone behind it for as long as the client keeps its
    /// session alive (liveness stated as safety). Nodes of abandoned sessions are not
    /// orphans: the server times those sessions out.
    ///
    /// With a shared client, the node is accounted for if either mutex of the client does (a
    /// search looks for its own uuid only).
    pub fn no_orphan_node(&self, s: &State) -> bool {
        self.orphans(s).next().is_none()
    }

    /// The nodes "no orphan node" finds unaccounted for (see [`Scenario::no_orphan_node`]).
    pub fn orphans<'a>(
        &'a self,
        s: &'a State,
    ) -> impl Iterator<Item = &'a crate::zk::server::Znode> + 'a {
        s.server.children().iter().filter(move |z| {
            !(0..self.clients)
                .filter(|&c| self.process(c) == z.owner.client)
                .any(|c| {
                    let cl = &s.clients[c as usize];
                    z.owner.epoch != cl.session
                        || (cl.pc == Pc::CreateLost
                            && self.uuid(c).is_none_or(|u| z.name.uuid == Some(u)))
                        || match cl.cleanup {
                            Some(Cleanup::Search) => {
                                self.previous_uuid(c).is_none_or(|u| z.name.uuid == Some(u))
                            }
                            Some(Cleanup::Delete(n)) => n == z.name,
                            None => false,
                        }
                        || (cl.awaiting
                            && cl.pc == Pc::Idle
                            && self.variant.rules().search_after_lost_create)
                        || (cl.pc.has_node() && cl.own.is_some_and(|o| o.name == z.name))
                })
        })
    }

    /// "grants in request order": every live holder's node is the first-created node there
    /// is (lowest `czxid`: the server's own order, which the recipe never reads; below the
    /// counter's top it is also the lowest suffix).
    pub fn grants_in_request_order(&self, s: &State) -> bool {
        let first = s.server.children().iter().min_by_key(|z| z.czxid);
        s.live_holders().all(|c| {
            let own = s.clients[c as usize].own;
            first.is_some_and(|z| own.is_some_and(|o| o.name == z.name && o.czxid == z.czxid))
        })
    }

    /// The names of the `always` properties that `s` violates (a replayer checks every state
    /// of a recorded run with this).
    pub fn violated(&self, s: &State) -> Vec<&'static str> {
        self.properties()
            .into_iter()
            .filter(|p| p.expectation == stateright::Expectation::Always && !(p.condition)(self, s))
            .map(|p| p.name)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// The client's steps: which request comes next in each state (the same for every variant;
// `Variant::rules` holds what differs), and what each outcome leads to.
// ---------------------------------------------------------------------------------------------

impl Scenario {
    /// The protection id of `c`'s current attempt (`None`: plain names).
    pub(crate) fn uuid(&self, c: ClientId) -> Option<Uuid> {
        self.variant.rules().protected_names.then_some(c)
    }

    /// The protection id of `c`'s dropped attempt, which its cleanup searches for (the same
    /// as the current one's in `protection-id-per-client`).
    pub(crate) fn previous_uuid(&self, c: ClientId) -> Option<Uuid> {
        let fresh = self.variant.rules().fresh_id_per_attempt;
        self.uuid(c)
            .map(|u| if fresh { u + PREVIOUS_ATTEMPT } else { u })
    }

    /// What `c`'s cleanup search finds: the dropped attempt's node in the session it runs in
    /// (any session for `adopt-old-session`; plain names: the first child of our session,
    /// which may be the next attempt's).
    pub(crate) fn cleanup_search(
        &self,
        s: &State,
        c: ClientId,
    ) -> Option<crate::zk::server::Znode> {
        let session = s.session(c);
        let any = self.variant.rules().search_any_session;
        s.server
            .children()
            .iter()
            .copied()
            .find(|z| match self.previous_uuid(c) {
                Some(u) => z.name.uuid == Some(u) && (any || z.owner == session),
                None => z.owner == session,
            })
    }

    /// What the protected search finds on current data: the first child with our uuid owned
    /// by our current session (any session for `adopt-old-session`; plain names: the first
    /// child of our session).
    pub(crate) fn search(&self, s: &State, c: ClientId) -> Option<crate::zk::server::Znode> {
        let session = s.session(c);
        let any = self.variant.rules().search_any_session;
        s.server
            .children()
            .iter()
            .copied()
            .find(|z| match self.uuid(c) {
                Some(u) => z.name.uuid == Some(u) && (any || z.owner == session),
                None => z.owner == session,
            })
    }

    /// The enabled steps of client `c`.
    pub fn client_steps(&self, s: &State, c: ClientId, out: &mut Vec<Action>) {
        let cl = s.clients[c as usize];
        if !cl.suspended {
            return self.connected_steps(s, c, out);
        }
        // Suspended: no request until the connection is back (`Reconnect`, or the
        // `Expired` event if the session ended meanwhile); the resource is not ZooKeeper.
        let from = out.len();
        self.connected_steps(s, c, out);
        let mut k = from;
        while k < out.len() {
            if out[k].needs_connection() {
                out.remove(k);
            } else {
                k += 1;
            }
        }
        if s.server.is_alive(s.session(c)) {
            out.push(Action::Reconnect(c));
        }
    }

    /// Client `c`'s steps while its connection is up.
    fn connected_steps(&self, s: &State, c: ClientId, out: &mut Vec<Action>) {
        self.acquire_steps(s, c, out);
        self.cleanup_steps(s, c, out);
    }

    /// The steps of `c`'s cleanup task, beside its acquire: the request, or its lost reply.
    fn cleanup_steps(&self, s: &State, c: ClientId, out: &mut Vec<Action>) {
        use Action::*;
        let Some(cleanup) = s.clients[c as usize].cleanup else {
            return;
        };
        let lose = s.budget.lose_reply > 0 && s.server.is_alive(s.session(c));
        match cleanup {
            Cleanup::Search => out.push(CleanupFind(c)),
            Cleanup::Delete(_) => out.push(CleanupDelete(c)),
        }
        if lose {
            if matches!(cleanup, Cleanup::Delete(_)) {
                out.push(LoseCleanupReply(c, true));
            }
            out.push(LoseCleanupReply(c, false));
        }
    }

    /// The steps of `c`'s acquire, hold and release.
    fn acquire_steps(&self, s: &State, c: ClientId, out: &mut Vec<Action>) {
        use Action::*;
        let cl = s.clients[c as usize];
        let alive = s.server.is_alive(s.session(c));
        if cl.pc == Pc::Failed {
            return;
        }
        if !alive {
            out.push(ReceiveSessionEvent(c));
            // The re-open of an acquire refused for good (no cleanup of its own pending: that
            // task would need the session too).
            if s.budget.refuse_session > 0
                && cl.cleanup.is_none()
                && matches!(
                    cl.pc,
                    Pc::Idle | Pc::CreateLost | Pc::Created | Pc::MustWatch | Pc::Waiting
                )
            {
                out.push(RefuseSession(c));
            }
        }
        if cl.known != cl.session {
            out.push(NoticeSessionChange(c));
        }
        let lose = alive && s.budget.lose_reply > 0;
        // A request whose reply may be lost: a write (create, delete, the watch `getData`
        // leaves, the `multi`) applied or not; a read only "not applied" (nothing to apply).
        let request = |out: &mut Vec<Action>, step: Action, writes: bool| {
            out.push(step);
            if lose && writes {
                out.extend([LoseReply(c, true), LoseReply(c, false)]);
            } else if lose {
                out.push(LoseReply(c, false));
            }
        };
        let release = |out: &mut Vec<Action>| request(out, DeleteLockNode(c), true);
        match cl.pc {
            Pc::Idle => {
                request(out, CreateLockNode(c), true);
                if alive && s.server.can_create_behind_last() {
                    out.push(CreateBehindLast(c));
                }
            }
            Pc::CreateLost => {
                request(out, FindOwnNode(c), false);
                if alive
                    && s.budget.lag > 0
                    && !self.variant.rules().sync_before_search
                    && self.search(s, c).is_some()
                {
                    out.push(LaggedSearch(c));
                }
            }
            Pc::Created => {
                request(out, ListChildren(c), false);
                let own = cl.own.expect("a listing client has a node");
                if alive
                    && s.budget.misread > 0
                    && s.server
                        .node(own.name)
                        .is_some_and(|z| z.czxid == own.czxid)
                {
                    out.push(MisreadOwnNode(c));
                }
            }
            Pc::MustWatch => request(out, WatchPredecessor(c), true),
            Pc::Waiting => {
                if s.server.has_watch_event(s.session(c)) {
                    out.push(ReceiveWatchEvent(c));
                }
            }
            Pc::Granted => out.push(Claim(c)),
            Pc::Holding => {
                out.push(Read(c));
                match cl.count {
                    1 if self.is_reentrant(c) => out.push(Reenter(c)),
                    2 => out.push(ReleaseInner(c)),
                    _ => {}
                }
                if cl.count == 1 {
                    release(out);
                }
            }
            Pc::Updating => match self.writes {
                WriteMode::Unfenced => out.push(Write(c)),
                WriteMode::CheckThenWrite => request(out, CheckLockNode(c), false),
                WriteMode::Fenced | WriteMode::FencedClaim | WriteMode::FencedBySequence => {
                    out.push(FencedWrite(c))
                }
                WriteMode::Guarded => request(out, GuardedWrite(c), true),
            },
            Pc::Checked => out.push(Write(c)),
            Pc::Releasing => release(out),
            Pc::Failed => {}
        }
    }

    /// The enabled faults and server steps.
    fn fault_steps(&self, s: &State, out: &mut Vec<Action>) {
        use Action::*;
        // Session faults are the client's: once per shared client (named after `c0`).
        for c in (0..self.clients).filter(|&c| self.process(c) == c) {
            if s.budget.expire > 0 && s.server.is_alive(s.session(c)) {
                out.push(ExpireSession(c));
            }
            if s.budget.restart > 0 {
                out.push(RestartClient(c));
            }
            if self.old_session(s, c).is_some() {
                out.push(ExpireOldSession(c));
            }
        }
        if s.budget.abandon > 0 {
            for c in 0..self.clients {
                let cl = s.clients[c as usize];
                let at_await = match cl.pc {
                    // Idle: only with the create's answer awaited behind a dropped connection
                    // (queued, or applied by `ApplySent`). A drop while a create's reply is
                    // awaited on a live connection is `LoseReply` on the create, then this
                    // step at CreateLost: the reply is never read either way.
                    Pc::Idle => cl.suspended && cl.awaiting,
                    Pc::CreateLost | Pc::Created | Pc::MustWatch | Pc::Waiting | Pc::Releasing => {
                        true
                    }
                    _ => false,
                };
                // One cleanup per client at a time (and no dropped attempt's node left from an
                // earlier one: two dropped attempts would share the model's second id).
                let fresh = self.variant.rules().fresh_id_per_attempt;
                let free = cl.cleanup.is_none()
                    && (!fresh
                        || self.previous_uuid(c).is_none_or(|u| {
                            s.server.children().iter().all(|z| z.name.uuid != Some(u))
                        }));
                if at_await && free {
                    out.push(Abandon(c));
                }
            }
        }
        for c in 0..self.clients {
            let cl = s.clients[c as usize];
            let alive = s.server.is_alive(s.session(c));
            // Not modelled with a shared client (docs/zookeeper.md §9).
            if s.budget.suspend > 0 && alive && !cl.suspended && !self.shares_client(c) {
                out.push(Suspend(c));
            }
            if cl.queued.is_some() && alive {
                out.push(ApplySent(c));
            }
        }
        if s.budget.recreate_parent > 0 && s.server.children().is_empty() {
            out.push(RecreateParent);
        }
    }

    /// The oldest live session `c` abandoned, if any.
    pub(crate) fn old_session(&self, s: &State, c: ClientId) -> Option<SessionId> {
        let current = s.session(c);
        s.server
            .sessions()
            .iter()
            .copied()
            .find(|&x| x.client == self.process(c) && x != current)
    }

    /// `next_state` for the replayer: `None` if `action` is not enabled in `s`.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        let mut enabled = Vec::new();
        self.actions(s, &mut enabled);
        enabled.contains(&action).then(|| {
            let mut next = s.clone();
            self.apply(&mut next, action);
            next
        })
    }
}

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.copy_from(s);
        self.apply(out, action);
        true
    }

    /// Symmetry: the non-reentrant clients are interchangeable (`Scenario::canonical`).
    fn representative(&self, s: &State) -> Option<State> {
        self.canonical(s)
    }

    /// What a step did, in the numbering of the state before it (`c1 ListChildren:
    /// getChildren /locks → [_c_c0-lock-0, _c_c1-lock-1]: predecessor _c_c0-lock-0`).
    fn describe_step(&self, before: &State, action: &Action, _after: &State) -> String {
        self.describe(before, *action)
    }

    /// With stable zxids and suffixes ([`Scenario::describe_path`]).
    fn describe_path(&self, path: &[Action]) -> Option<Vec<String>> {
        Scenario::describe_path(self, path)
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let mut s = State {
            server: crate::zk::server::Server::with_sequence_width(self.sequence_width),
            clients: vec![Client::NEW; self.clients as usize],
            resource: Resource::default(),
            budget: self.faults,
            expired_holder: false,
            last: Event::None,
        };
        for c in 0..self.clients {
            let cl = &mut s.clients[c as usize];
            cl.process = self.process(c);
            if self.process(c) == c {
                let session = s.session(c);
                s.server.open_session(session);
            }
        }
        s.compact();
        vec![s]
    }

    /// Every client's steps (client order), then faults and server steps.
    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        for c in 0..self.clients {
            self.client_steps(s, c, actions);
        }
        self.fault_steps(s, actions);
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        let mut next = s.clone();
        self.apply(&mut next, action);
        Some(next)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn format_step(&self, s: &State, action: Action) -> Option<String> {
        let after = self.step(s, action)?;
        Some(format!("{}\n\n{after:?}", self.describe(s, action)))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(AT_MOST_ONE_HOLDER, |_, s: &State| s.holders().count() <= 1),
            Property::always(AT_MOST_ONE_LIVE_HOLDER, |_, s: &State| {
                s.live_holders().count() <= 1
            }),
            Property::always(FENCED_WRITES_ARE_EXCLUSIVE, |_, s: &State| {
                !matches!(s.last, Event::Accepted { stale: true, .. })
            }),
            Property::always(NO_LOST_UPDATE, |_, s: &State| {
                !matches!(
                    s.last,
                    Event::Accepted {
                        lost_update: true,
                        ..
                    }
                )
            }),
            Property::always(NO_ORPHAN_NODE, |m: &Scenario, s: &State| {
                m.no_orphan_node(s)
            }),
            Property::always(GRANTS_IN_REQUEST_ORDER, |m: &Scenario, s: &State| {
                m.grants_in_request_order(s)
            }),
            Property::sometimes(HOLDER_EXISTS, |_, s: &State| s.holders().next().is_some()),
            Property::sometimes(HANDOFF_AFTER_EXPIRY, |_, s: &State| {
                s.last == Event::HandoffAfterExpiry
            }),
            Property::sometimes(CONTENTION_SEEN, |_, s: &State| s.last == Event::Contention),
            Property::sometimes(WAITER_WOKEN_BY_WATCH, |_, s: &State| {
                s.last == Event::WokenByWatch
            }),
            Property::sometimes(REENTRANT_HOLD, |_, s: &State| {
                s.clients.iter().any(|c| c.count == 2)
            }),
            Property::sometimes(LOCK_LOST_REPORTED, |_, s: &State| s.last == Event::LockLost),
            Property::sometimes(UPDATE_COMPLETED, |_, s: &State| {
                matches!(s.last, Event::Accepted { update: true, .. })
            }),
        ]
    }
}
