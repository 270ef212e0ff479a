//! Refinement: every simulated run of the real ZooKeeper recipe is a path of the Stateright
//! model (`lockwright_model::zk`).
//!
//! [`Refinement::check`] (and, online, the simulated server as it records) feeds a recording
//! through the model's transition function with the shared [`Cursor`], one step at a time.
//! Linearization is trivial here: each call did its whole effect under the world lock, so the
//! recording's order is the model's order. Each step:
//!
//! 1. is re-executed on a **shadow** server (`Core`, the model's `Server`): the recorded
//!    answer must be the one ZooKeeper's semantics give (so the recording alone rebuilds the
//!    server's state);
//! 2. becomes its **model action** (the table in `lockwright_model::zk::Action`'s docs):
//!    `create` → `CreateLockNode` (a lost reply → `LoseReply(c, applied?)`), `find_own_node` →
//!    `FindOwnNode` (answered by a lagging server after an armed lag and no `sync` →
//!    `LaggedSearch`; `sync` itself is no action), `list_children` → `ListChildren` (a listing that showed the client its
//!    own node under a name it does not read, after an armed misread → `MisreadOwnNode`), `watch_node` → `WatchPredecessor`, a
//!    fired wait → `ReceiveWatchEvent`, the learned expiry → `ReceiveSessionEvent`,
//!    `delete_node` → `DeleteLockNode` (or `LoseReply`), a `release()` dropped after a lost
//!    delete reply, or an `acquire()` dropped while it waits for its predecessor → `Abandon`,
//!    a give-up's hand-off of its node (`GiveUp`) and a drop at a random `Pending` poll
//!    (`Drop`, at the model's place it names) → `Abandon`, a clock `Tick` → no action, `check_node` → `CheckLockNode`,
//!    `guarded_write` → `GuardedWrite` (without its check: `Write`), the resource's read →
//!    `Read`, its claim → `Claim`, its writes → `FencedWrite` / `Write`, re-entrancy → `Reenter` / `ReleaseInner`, the faults →
//!    `ExpireSession`, `RestartClient`, `ExpireOldSession`, `RecreateParent`; a suspension:
//!    the dropped connection → `Suspend` (what the server queued must be what the model's
//!    client queues), the server applying the queued request → `ApplySent`, the reconnect →
//!    `Reconnect`, an expiry learned while the connection is down → `ReceiveSessionEvent`
//!    (arming it is no action). The action must
//!    be enabled in the model's state (else the real client did what the model's client
//!    cannot), and where the answer tells the client where to go, the model's client must have
//!    gone there (a granted listing → `Holding`, a refused fenced write → `Releasing`, a
//!    guarded write's `NoNode` → `Idle`: nothing to delete, ...);
//! 3. the harness's observations must agree: `acquire` returned ⇔ the model's client holds
//!    (or the client restarted since its listing: then the model's guard reported the loss),
//!    a reported `LockLost` ⇔ the model's client no longer believes;
//! 4. the shadow server and the model's server must have the same shape — the children in
//!    order (protection id, owning client, owned by its current session or an older one), and
//!    per client: current session alive, live sessions, a fired watch event waiting, watches
//!    set — zxids, suffixes and epochs are compared only through that shape, since the model
//!    renumbers them;
//! 5. every enforced `always` property holds on the model's state.
//!
//! The first failure is a [`Divergence`] naming the step.

use lockwright_model::zk::{
    Action, ClientId, Pc, Scenario, Sent, Server, SessionId, PREVIOUS_ATTEMPT,
};

use crate::refine::Cursor;
pub use crate::refine::{Divergence, Summary};

mod cleanup;

use super::core::Core;
use super::record::{format_trace, Call, Outcome, Queued, Step};

/// The model instance a recording is checked against: the scenario's fault budgets are the
/// workload's (an upper bound on what a run injects).
pub type Refinement = crate::refine::Refinement<Scenario>;

impl Refinement {
    pub(crate) fn replay(&self) -> Replay {
        Replay::new(self.model, self.enforce.clone())
    }

    /// Replays `trace` through the model. See the module docs.
    ///
    /// # Errors
    /// The first step at which the recording is not a model path, or a state violates an
    /// enforced property.
    pub fn check(&self, trace: &[Step]) -> Result<Summary, Divergence> {
        let mut replay = self.replay();
        replay.initial()?;
        for (i, step) in trace.iter().enumerate() {
            replay.step(i, step)?;
        }
        Ok(replay.cur.summary)
    }

    /// [`Refinement::check`] with the recording in the message.
    ///
    /// # Errors
    /// The divergence and the recording, as one message.
    pub fn check_trace(&self, trace: &[Step]) -> Result<Summary, String> {
        self.check(trace)
            .map_err(|d| format!("{d}\nrecording:\n{}", format_trace(trace)))
    }
}

/// The server's shape, invariant under the model's renumbering.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    /// (protection id, owning client, owned by that client's current session).
    children: Vec<(Option<u8>, ClientId, bool)>,
    /// Per client: (current session alive, live sessions, fired event waiting for the
    /// current session, watches set).
    clients: Vec<(bool, usize, bool, usize)>,
}

fn shape(server: &Server, current: impl Fn(ClientId) -> SessionId, clients: u8) -> Shape {
    Shape {
        children: server
            .children()
            .iter()
            .map(|z| {
                (
                    // A dropped attempt's id is the model's `c + PREVIOUS_ATTEMPT`; the
                    // simulation names both attempts after the client.
                    z.name.uuid.map(|u| u % PREVIOUS_ATTEMPT),
                    z.owner.client,
                    z.owner == current(z.owner.client),
                )
            })
            .collect(),
        clients: (0..clients)
            .map(|c| {
                let s = current(c);
                (
                    server.is_alive(s),
                    server
                        .sessions()
                        .iter()
                        .filter(|x| x.client == s.client)
                        .count(),
                    server.has_watch_event(s),
                    server.watches().iter().filter(|(_, w)| *w == s).count(),
                )
            })
            .collect(),
    }
}

/// A replay in progress (online inside the simulated server, or offline over a recording).
pub(crate) struct Replay {
    pub(crate) cur: Cursor<Scenario>,
    shadow: Core,
    /// The client restarted since its last listing (a grant it is told of afterwards was
    /// already lost in the model).
    restarted: Vec<bool>,
    /// The protection id of each client's latest create (`cleanup`).
    attempt_uuid: Vec<Option<u8>>,
}

impl Replay {
    fn new(model: Scenario, enforce: Vec<&'static str>) -> Replay {
        Replay {
            shadow: Core::new(model.clients, model.shared_client),
            restarted: vec![false; usize::from(model.clients)],
            attempt_uuid: vec![None; usize::from(model.clients)],
            cur: Cursor::new(model, enforce),
        }
    }

    fn initial(&mut self) -> Result<(), Divergence> {
        self.cur.check_properties().map_err(|name| Divergence {
            step: 0,
            what: "initial state".into(),
            reason: format!("the model state violates \"{name}\""),
            property: Some(name),
        })
    }

    fn pc(&self, c: ClientId) -> Pc {
        self.cur.state.clients[usize::from(c)].pc
    }

    /// Whether the caller may drop client `c`'s future now: the model's `Abandon(c)` is
    /// enabled (its budget left, and `c` at a place where the model lets a caller drop it).
    pub(crate) fn may_abandon(&self, c: ClientId) -> Option<Pc> {
        self.cur.allows(&Action::Abandon(c)).then(|| self.pc(c))
    }

    /// Replays one recorded step. See the module docs.
    pub(crate) fn step(&mut self, i: usize, step: &Step) -> Result<(), Divergence> {
        let fail = |reason: String| Divergence {
            step: i,
            what: step.to_string(),
            reason,
            property: None,
        };
        // 1. The shadow server answers as the simulated one did.
        if let Some(o) = self.shadow.apply(step) {
            if o != step.outcome {
                return Err(fail(format!("the shadow server answers {o:?}")));
            }
        }
        // 2. The model action, and where the answer sends the client.
        use Action::*;
        let cleanup = step.client.and_then(|c| self.cleanup_action(c, step));
        self.note_attempt(step);
        let (action, expect): (Option<Action>, Option<&[Pc]>) = match (step.client, &step.call) {
            (None, _) if step.outcome == Outcome::Skipped => (None, None),
            (
                None,
                Call::Arm { .. }
                | Call::ArmMisread(_)
                | Call::ArmLag(_)
                | Call::ArmSuspend(_)
                | Call::Tick { .. },
            ) => (None, None),
            (None, Call::ApplySent(c)) => (Some(ApplySent(*c)), None),
            (None, Call::Reconnect(c)) => (Some(Reconnect(*c)), None),
            (None, Call::Expire(c)) => (Some(ExpireSession(*c)), None),
            (None, Call::Restart(c)) => {
                self.restarted[usize::from(*c)] = true;
                (Some(RestartClient(*c)), None)
            }
            (None, Call::ExpireOld(c)) => (Some(ExpireOldSession(*c)), None),
            (None, Call::RecreateParent) => (Some(RecreateParent), None),
            (None, call) => return Err(fail(format!("not an environment step: {call:?}"))),
            // The requests of the client's cleanup task (`cleanup`).
            (Some(_), _) if cleanup.is_some() => (cleanup, None),
            (Some(c), call) => match (call, step.outcome) {
                (Call::Create { .. } | Call::Delete { .. }, Outcome::ReplyLost { applied }) => {
                    (Some(LoseReply(c, applied)), None)
                }
                (Call::Create { .. }, Outcome::Ok) => {
                    (Some(CreateLockNode(c)), Some(&[Pc::Created][..]))
                }
                (Call::Create { .. }, _) => (Some(CreateLockNode(c)), None),
                (Call::FindOwnNode, Outcome::Lagged) => (Some(LaggedSearch(c)), None),
                (Call::FindOwnNode, _) => (Some(FindOwnNode(c)), None),
                (Call::CleanupFind { .. }, _) => (Some(CleanupFind(c)), None),
                (Call::Sync, _) => (None, None),
                (Call::Suspend { .. }, _) => (Some(Suspend(c)), None),
                (Call::Abandon, _) => (Some(Abandon(c)), None),
                (Call::DropAcquire, _) => (Some(Abandon(c)), Some(&[Pc::Releasing, Pc::Idle][..])),
                (Call::GiveUp, _) => (Some(Abandon(c)), None),
                (Call::Drop { at }, _) => {
                    let pc = self.pc(c);
                    if pc != *at {
                        return Err(fail(format!(
                            "the drop was offered at {at:?}, the model's client c{c} is at {pc:?}"
                        )));
                    }
                    (Some(Abandon(c)), None)
                }
                (Call::GaveUp { .. }, _) => {
                    let pc = self.pc(c);
                    if pc.believes() {
                        return Err(fail(format!(
                            "the acquire gave up, but the model's client c{c} holds ({pc:?})"
                        )));
                    }
                    self.cur.observed();
                    (None, None)
                }
                (Call::ListChildren, Outcome::Misread) => {
                    self.restarted[usize::from(c)] = false;
                    (Some(MisreadOwnNode(c)), None)
                }
                (Call::ListChildren, _) => {
                    self.restarted[usize::from(c)] = false;
                    (Some(ListChildren(c)), None)
                }
                (Call::Watch { .. }, Outcome::Ok) => {
                    (Some(WatchPredecessor(c)), Some(&[Pc::Waiting][..]))
                }
                (Call::Watch { .. }, Outcome::NoNode) => {
                    (Some(WatchPredecessor(c)), Some(&[Pc::Created][..]))
                }
                (Call::Watch { .. }, _) => (Some(WatchPredecessor(c)), None),
                (Call::WatchEvent, _) => (Some(ReceiveWatchEvent(c)), None),
                (Call::SessionEvent, _) => (Some(ReceiveSessionEvent(c)), None),
                (Call::NoticeSessionChange, _) => {
                    // Like a restart: a grant it is told of afterwards was already lost.
                    self.restarted[usize::from(c)] = true;
                    (Some(NoticeSessionChange(c)), None)
                }
                (Call::Delete { .. }, Outcome::Ok | Outcome::NoNode) => {
                    (Some(DeleteLockNode(c)), Some(&[Pc::Idle][..]))
                }
                (Call::Delete { .. }, _) => (Some(DeleteLockNode(c)), None),
                (Call::Check { .. }, _) => (Some(CheckLockNode(c)), None),
                (Call::GuardedWrite { check: None }, _) | (Call::Write, _) => {
                    (Some(Write(c)), None)
                }
                (Call::GuardedWrite { .. }, Outcome::Ok) => {
                    (Some(GuardedWrite(c)), Some(&[Pc::Holding][..]))
                }
                (Call::GuardedWrite { .. }, Outcome::NoNode) => {
                    (Some(GuardedWrite(c)), Some(&[Pc::Idle][..]))
                }
                (Call::GuardedWrite { .. }, _) => (Some(GuardedWrite(c)), None),
                (Call::FencedWrite { .. }, Outcome::Ok) => {
                    (Some(FencedWrite(c)), Some(&[Pc::Holding][..]))
                }
                (Call::FencedWrite { .. }, _) => (Some(FencedWrite(c)), Some(&[Pc::Releasing][..])),
                (Call::Read, _) => (Some(Read(c)), Some(&[Pc::Updating][..])),
                (Call::Claim { .. }, Outcome::Ok) => (Some(Claim(c)), Some(&[Pc::Holding][..])),
                (Call::Claim { .. }, _) => (Some(Claim(c)), Some(&[Pc::Releasing][..])),
                (Call::Reenter, _) => (Some(Reenter(c)), None),
                (Call::ReleaseInner, _) => (Some(ReleaseInner(c)), None),
                (Call::Acquired, _) => {
                    let pc = self.pc(c);
                    let restarted = self.restarted[usize::from(c)];
                    let granted = matches!(pc, Pc::Holding | Pc::Granted);
                    if !(granted || restarted && !pc.believes()) {
                        return Err(fail(format!(
                            "acquire returned a guard, but the model's client c{c} is at {pc:?}"
                        )));
                    }
                    self.cur.observed();
                    (None, None)
                }
                (Call::LockLost, _) => {
                    let pc = self.pc(c);
                    if pc.believes() {
                        return Err(fail(format!(
                            "the guard reported the lock lost, but the model's client c{c} \
                             still holds ({pc:?})"
                        )));
                    }
                    self.cur.observed();
                    (None, None)
                }
                (call, _) => return Err(fail(format!("not a client step: {call:?}"))),
            },
        };
        let Some(action) = action else {
            return Ok(());
        };
        if let Err(e) = self.cur.act(action) {
            let at = action
                .client()
                .map(|c| format!(" (model client c{c} is at {:?})", self.pc(c)))
                .unwrap_or_default();
            return Err(fail(format!("{e}{at}")));
        }
        if let (Call::Suspend { queued }, Some(c)) = (&step.call, step.client) {
            // The server queued what the model's client queues at its place.
            let model = self.cur.state.clients[usize::from(c)].queued;
            let same = matches!(
                (queued, model),
                (None, None)
                    | (Some(Queued::Create { .. }), Some(Sent::Create(_)))
                    | (Some(Queued::Delete { .. }), Some(Sent::Delete(_)))
            );
            if !same {
                return Err(fail(format!(
                    "the simulated server queued {queued:?}, the model's client c{c} queues \
                     {model:?} (at {:?})",
                    self.pc(c)
                )));
            }
            self.cur.observed();
        }
        if let (Some(c), Some(pcs)) = (action.client(), expect) {
            let pc = self.pc(c);
            if !pcs.contains(&pc) {
                return Err(fail(format!(
                    "the answer sends the client to {pcs:?}, the model's client c{c} is at {pc:?}"
                )));
            }
            self.cur.observed();
        }
        // 5. Properties (before the shape: a violation is the more useful report).
        self.cur.check_properties().map_err(|name| Divergence {
            step: i,
            what: step.to_string(),
            reason: format!("the model state violates \"{name}\""),
            property: Some(name),
        })?;
        // 4. The two servers have the same shape.
        let n = self.cur.model.clients;
        let model = shape(&self.cur.state.server, |c| self.cur.state.session(c), n);
        let sim = shape(&self.shadow.server, |c| self.shadow.session(c), n);
        if model != sim {
            return Err(fail(format!(
                "after this step the servers differ: simulated {sim:?}, model {model:?}"
            )));
        }
        self.cur.observed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockwright_model::zk::{Name, Variant, WriteMode};

    fn model(clients: u8) -> Refinement {
        Refinement::new(
            Scenario::new(Variant::Curator, WriteMode::Fenced)
                .with_clients(clients)
                .with_reentrant(false)
                .with_symmetry(false),
        )
    }

    fn step(c: u8, call: Call, outcome: Outcome) -> Step {
        Step {
            client: Some(c),
            call,
            outcome,
        }
    }

    const N0: Name = Name {
        seq: 0,
        uuid: Some(0),
    };

    fn one_round() -> Vec<Step> {
        vec![
            step(0, Call::Create { uuid: Some(0) }, Outcome::Ok),
            step(0, Call::ListChildren, Outcome::Ok),
            step(0, Call::Acquired, Outcome::Ok),
            step(0, Call::Read, Outcome::Ok),
            step(0, Call::FencedWrite { token: 1 }, Outcome::Ok),
            step(0, Call::Delete { name: N0 }, Outcome::Ok),
        ]
    }

    #[test]
    fn a_round_replays() {
        let s = model(1).check(&one_round()).expect("a model path");
        assert_eq!(s.actions, 5);
        assert!(s.observations >= 5);
    }

    #[test]
    fn a_call_the_model_does_not_allow_diverges() {
        let mut t = one_round();
        t.insert(1, step(0, Call::Create { uuid: Some(0) }, Outcome::Ok));
        let d = model(1).check(&t).expect_err("two creates in a row");
        assert_eq!(d.step, 1);
        assert!(
            d.reason.contains("does not allow CreateLockNode(c0)"),
            "{d}"
        );
    }

    #[test]
    fn an_answer_the_semantics_do_not_give_diverges() {
        let mut t = one_round();
        t[5].outcome = Outcome::NoNode;
        let d = model(1).check(&t).expect_err("the node exists");
        assert_eq!(d.step, 5);
        assert!(d.reason.contains("the shadow server answers Ok"), "{d}");
    }

    /// A listing answered `Misread` is `MisreadOwnNode`: the recipe deletes the node by the
    /// name it was shown (`Releasing`), then creates again. Its teeth: the same listing without
    /// the armed fault is an answer the shadow server does not give.
    #[test]
    fn a_misread_listing_replays_as_misread_own_node() {
        use lockwright_model::zk::Faults;
        let m = Refinement::new(
            Scenario::new(Variant::Curator, WriteMode::Fenced)
                .with_clients(1)
                .with_reentrant(false)
                .with_faults(Faults {
                    misread: 1,
                    ..Faults::NONE
                })
                .with_symmetry(false),
        );
        let env = |call| Step {
            client: None,
            call,
            outcome: Outcome::Ok,
        };
        let mut t = vec![
            env(Call::ArmMisread(0)),
            step(0, Call::Create { uuid: Some(0) }, Outcome::Ok),
            step(0, Call::ListChildren, Outcome::Misread),
            step(0, Call::Delete { name: N0 }, Outcome::Ok),
            step(0, Call::Create { uuid: Some(0) }, Outcome::Ok),
            step(0, Call::ListChildren, Outcome::Ok),
            step(0, Call::Acquired, Outcome::Ok),
        ];
        let s = m.check(&t).expect("a model path");
        assert_eq!(s.actions, 5);
        t.remove(0);
        let d = m.check(&t).expect_err("no misread armed");
        assert_eq!(d.step, 1);
        assert!(d.reason.contains("the shadow server answers Ok"), "{d}");
    }

    /// A clock tick is no model action; a drop at a `Pending` poll is `Abandon` at the place it
    /// names, and a drop naming another place than the model's diverges (its teeth); without an
    /// `abandon` budget the same drop is no model step.
    #[test]
    fn a_drop_replays_as_abandon_at_the_place_it_names() {
        use lockwright_model::zk::Faults;
        let with_budget = |abandon| {
            Refinement::new(
                Scenario::new(Variant::Curator, WriteMode::Fenced)
                    .with_clients(2)
                    .with_reentrant(false)
                    .with_faults(Faults {
                        abandon,
                        ..Faults::NONE
                    })
                    .with_symmetry(false),
            )
        };
        let n1 = Name {
            seq: 1,
            uuid: Some(1),
        };
        let tick = Step {
            client: None,
            call: Call::Tick { ms: 10 },
            outcome: Outcome::Ok,
        };
        let mut t = vec![
            step(0, Call::Create { uuid: Some(0) }, Outcome::Ok),
            step(1, Call::Create { uuid: Some(1) }, Outcome::Ok),
            step(1, Call::ListChildren, Outcome::Ok),
            step(1, Call::Watch { name: N0 }, Outcome::Ok),
            tick,
            step(1, Call::Drop { at: Pc::Waiting }, Outcome::Ok),
            step(1, Call::Delete { name: n1 }, Outcome::Ok),
        ];
        let s = with_budget(1).check(&t).expect("a model path");
        assert_eq!(s.actions, 6);
        let d = with_budget(0).check(&t).expect_err("no budget");
        assert_eq!(d.step, 5);
        assert!(d.reason.contains("does not allow Abandon(c1)"), "{d}");
        t[5].call = Call::Drop { at: Pc::MustWatch };
        let d = with_budget(1).check(&t).expect_err("the wrong place");
        assert!(
            d.reason.contains("the model's client c1 is at Waiting"),
            "{d}"
        );
    }

    /// A suspension: c0's connection drops as it creates (`Suspend`, the create queued), the
    /// server applies it (`ApplySent`), c0 reconnects (`Reconnect`: its answer is
    /// `ConnectionLoss`, so it searches) and finds its node. Its teeth: the same drop recorded
    /// with nothing queued is not what the model's `Idle` client queues, and without the
    /// `suspend` budget the drop is no model step.
    #[test]
    fn a_suspension_replays_and_must_queue_what_the_model_queues() {
        use lockwright_model::zk::Faults;
        let with_budget = |suspend| {
            Refinement::new(
                Scenario::new(Variant::Curator, WriteMode::Fenced)
                    .with_clients(1)
                    .with_reentrant(false)
                    .with_faults(Faults {
                        suspend,
                        ..Faults::NONE
                    })
                    .with_symmetry(false),
            )
        };
        let env = |call| Step {
            client: None,
            call,
            outcome: Outcome::Ok,
        };
        let mut t = vec![
            env(Call::ArmSuspend(0)),
            step(
                0,
                Call::Suspend {
                    queued: Some(Queued::Create { uuid: Some(0) }),
                },
                Outcome::Ok,
            ),
            env(Call::ApplySent(0)),
            env(Call::Reconnect(0)),
            step(0, Call::Sync, Outcome::Ok),
            step(0, Call::FindOwnNode, Outcome::Ok),
            step(0, Call::ListChildren, Outcome::Ok),
            step(0, Call::Acquired, Outcome::Ok),
        ];
        let s = with_budget(1).check(&t).expect("a model path");
        assert_eq!(s.actions, 5);
        let d = with_budget(0).check(&t).expect_err("no budget");
        assert_eq!(d.step, 1);
        assert!(d.reason.contains("does not allow Suspend(c0)"), "{d}");
        t[1].call = Call::Suspend { queued: None };
        let d = with_budget(1).check(&t).expect_err("nothing queued");
        assert_eq!(d.step, 1);
        assert!(d.reason.contains("the model's client c0 queues"), "{d}");
    }

    #[test]
    fn a_grant_the_model_does_not_give_diverges() {
        let t = vec![
            step(0, Call::Create { uuid: Some(0) }, Outcome::Ok),
            step(1, Call::Create { uuid: Some(1) }, Outcome::Ok),
            step(1, Call::ListChildren, Outcome::Ok),
            step(1, Call::Acquired, Outcome::Ok),
        ];
        let d = model(2).check(&t).expect_err("c1 is behind c0");
        assert_eq!(d.step, 3);
        assert!(d.reason.contains("MustWatch"), "{d}");
    }
}
