//! The replayer proper: each recorded step becomes a model action, an observation compared
//! with the model state, a fault, or a harness event (see the parent module's docs).

use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX, LOCK_INDEX};
use lockwright_model::docstore::store::{WriteOutcome, Written};
use lockwright_model::docstore::{next, Action, ClientId, Delivery, Pc, Scenario, Step as MStep};

use super::super::record::{Actor, Call, Outcome, Step, TICK_MS};
use super::super::service::{Answer, Req};
use super::shadow::{SeqMap, Shadow};
use super::Divergence;
use crate::refine::Cursor;

pub(super) struct Replay {
    /// The model side: scenario, current state, enforced properties, counts.
    pub(super) cur: Cursor<Scenario>,
    shadow: Shadow,
}

fn fail(i: usize, step: &Step, reason: String) -> Divergence {
    Divergence {
        step: i,
        what: step.to_string(),
        reason,
        property: None,
    }
}

/// Compares a recorded answer (absolute numbers) with the model's (model numbering), up to
/// the renumbering `map` of the lock index's numbers referenced before the step; `fresh` is
/// the model's next sequence number there. `None`: the data index, whose `_seq_no` nobody
/// reads (the model keeps it at 0).
fn same_answer(
    rec: &WriteOutcome,
    model: &WriteOutcome,
    lock_index: Option<(&SeqMap, u64)>,
) -> bool {
    match (rec, model) {
        (Err(a), Err(b)) => a == b,
        (Ok(a), Ok(b)) => {
            let Written { result, token } = *a;
            result == b.result
                && token.primary_term == b.token.primary_term
                && match lock_index {
                    None => true,
                    Some((map, fresh)) => match map.get(&token.seq_no) {
                        Some(&m) => m == b.token.seq_no,
                        None => b.token.seq_no >= fresh,
                    },
                }
        }
        _ => false,
    }
}

impl Replay {
    pub(super) fn new(scenario: Scenario, enforce: Vec<&'static str>) -> Self {
        let clients = scenario.clients;
        let lock = scenario
            .variant
            .installs_lock_once()
            .then(|| scenario.variant.lock_id());
        Replay {
            cur: Cursor::new(scenario, enforce),
            shadow: Shadow::new(clients, lock),
        }
    }

    pub(super) fn check_properties(
        &mut self,
        at: Option<(usize, &Step)>,
    ) -> Result<(), Divergence> {
        self.cur.check_properties().map_err(|name| {
            let (step, what) = match at {
                Some((i, s)) => (i, s.to_string()),
                None => (0, "initial state".to_owned()),
            };
            Divergence {
                step,
                what,
                reason: format!("the model state violates \"{name}\""),
                property: Some(name),
            }
        })
    }

    fn act(&mut self, i: usize, step: &Step, action: Action) -> Result<(), Divergence> {
        if let Err(e) = self.cur.act(action) {
            let pc = action
                .client()
                .filter(|&c| c < self.cur.model.clients)
                .map(|c| {
                    format!(
                        " (model client c{c} is at {:?})",
                        self.cur.state.clients[usize::from(c)].pc
                    )
                })
                .unwrap_or_default();
            return Err(fail(i, step, format!("{e}{pc}")));
        }
        self.check_properties(Some((i, step)))
    }

    /// Replays one recorded step, then compares the two sides.
    pub(super) fn step(&mut self, i: usize, step: &Step) -> Result<(), Divergence> {
        match step.actor {
            Actor::Env => self.env(i, step)?,
            Actor::Client { c, incarnation } => self.client(i, step, c, incarnation)?,
        }
        self.shadow
            .compare(&self.cur.state)
            .map_err(|e| fail(i, step, format!("after this step the states differ: {e}")))
    }

    fn env(&mut self, i: usize, step: &Step) -> Result<(), Divergence> {
        if step.outcome == Outcome::Skipped {
            return Ok(());
        }
        let lock_id = self.cur.model.variant.lock_id();
        match &step.call {
            Call::PutScript { id, source } => {
                self.shadow.service.put_script(id, source);
                Ok(())
            }
            Call::Arm(_) => Ok(()),
            Call::Crash(c) => {
                self.shadow.alive[usize::from(*c)] = false;
                self.act(i, step, Action::Crash(*c))
            }
            Call::Restart(c) => {
                self.shadow.alive[usize::from(*c)] = true;
                self.shadow.incarnation[usize::from(*c)] += 1;
                self.act(i, step, Action::Restart(*c))
            }
            Call::StrayDelete => {
                let ours = self.shadow.service.stray_delete(LOCK_INDEX, lock_id);
                if ours.as_ref().map(|a| Outcome::Answered(a.clone())) != Some(step.outcome.clone())
                {
                    return Err(fail(i, step, format!("the shadow store answers {ours:?}")));
                }
                self.act(i, step, Action::StrayDelete)
            }
            Call::Failover => {
                self.shadow.service.failover(LOCK_INDEX);
                self.act(i, step, Action::Failover)
            }
            Call::RecreateIndex => {
                self.shadow.service.recreate_index(LOCK_INDEX);
                self.act(i, step, Action::RecreateIndex)
            }
            Call::RecreateDoc => {
                self.shadow.service.recreate_doc(DATA_INDEX, DATA_ID);
                self.act(i, step, Action::RecreateDoc)
            }
            Call::Rollback { index } => {
                let ours = self.shadow.service.rollback();
                if ours.as_ref() != Some(index) {
                    return Err(fail(
                        i,
                        step,
                        format!("the shadow store rolls back {ours:?}"),
                    ));
                }
                self.act(i, step, Action::Rollback)
            }
            Call::Tick => {
                self.shadow.clock += TICK_MS;
                if self.cur.allows(&Action::Tick) {
                    return self.act(i, step, Action::Tick);
                }
                // The model's relative clock stops once every time has passed: nothing
                // changes, so the tick is no model step.
                let s = &self.cur.state;
                let all_passed = s
                    .locks
                    .docs()
                    .all(|(_, d)| d.source.times().unwrap_or(0) == 0)
                    && s.clients.iter().all(|cl| cl.deadline.unwrap_or(0) == 0);
                if all_passed {
                    self.cur.observed();
                    Ok(())
                } else {
                    Err(fail(
                        i,
                        step,
                        "the model does not allow this tick: it would pass the lease of a client \
                         between its lease check and its write"
                            .to_owned(),
                    ))
                }
            }
            Call::Pause { c, to } => {
                let deadline = self.cur.state.clients[usize::from(*c)].deadline;
                let jump = self
                    .shadow
                    .rel_saturating(*to)
                    .map_err(|e| fail(i, step, e))?;
                if deadline != Some(jump) {
                    return Err(fail(
                        i,
                        step,
                        format!("the pause jumps {jump} ticks, the model's c{c} deadline is {deadline:?}"),
                    ));
                }
                self.shadow.clock = *to;
                self.act(i, step, Action::Pause(*c))
            }
            other => Err(fail(i, step, format!("not an environment step: {other:?}"))),
        }
    }

    fn client(
        &mut self,
        i: usize,
        step: &Step,
        c: ClientId,
        incarnation: u8,
    ) -> Result<(), Divergence> {
        if c >= self.cur.model.clients {
            return Err(fail(i, step, format!("client c{c} is not in the model")));
        }
        let cl = self.cur.state.clients[usize::from(c)];
        if step.outcome == Outcome::Dead {
            if cl.alive && cl.incarnation == incarnation {
                return Err(fail(
                    i,
                    step,
                    format!("a call failed as dead, but c{c}-i{incarnation} is alive in the model"),
                ));
            }
            return Ok(());
        }
        if !cl.alive || cl.incarnation != incarnation {
            return Err(fail(
                i,
                step,
                format!(
                    "c{c}-i{incarnation} acts, the model's c{c} is {} in incarnation {}",
                    if cl.alive { "alive" } else { "dead" },
                    cl.incarnation
                ),
            ));
        }
        match &step.call {
            Call::Now { value } => {
                if *value != self.shadow.clock {
                    return Err(fail(
                        i,
                        step,
                        format!("the clock read {value}, the clock is {}", self.shadow.clock),
                    ));
                }
                match cl.pc {
                    // A holder's clock read after its read is its lease check.
                    Pc::Computing if self.cur.model.timed() => self.act(
                        i,
                        step,
                        Action::Call(c, MStep::CheckLease, Delivery::Answered),
                    ),
                    // Part of the acquire request that follows (its `now`).
                    Pc::Idle | Pc::Retrying => {
                        self.cur.observed();
                        Ok(())
                    }
                    pc => Err(fail(
                        i,
                        step,
                        format!("the client reads the clock at {pc:?}, where the model does not"),
                    )),
                }
            }
            Call::Request(Err(e)) => Err(fail(
                i,
                step,
                format!("the client sent a request the model has no vocabulary for: {e}"),
            )),
            Call::Request(Ok(req)) => self.request(i, step, c, req),
            Call::Get { index, id } => {
                let ours = self.shadow.service.get(index, id);
                if step.outcome != Outcome::Got(ours) {
                    return Err(fail(i, step, format!("the shadow store has {ours:?}")));
                }
                // A holder's read of the data document where the step table reads is the
                // session's `ReadData`; any other read (an operator's look at the lock
                // document, a second read of the same session) changes nothing.
                let sc = self.cur.model;
                let reads = index == DATA_INDEX
                    && next(sc.variant, sc.role(c), cl.pc).contains(&MStep::ReadData);
                if reads {
                    self.shadow.reads[usize::from(c)] = ours.map(|d| d.token());
                    return self.act(
                        i,
                        step,
                        Action::Call(c, MStep::ReadData, Delivery::Answered),
                    );
                }
                // The fixed `leased`: the holder's read-back of the lock document.
                let verifies = index == LOCK_INDEX
                    && next(sc.variant, sc.role(c), cl.pc).contains(&MStep::VerifyLock);
                if verifies {
                    return self.act(
                        i,
                        step,
                        Action::Call(c, MStep::VerifyLock, Delivery::Answered),
                    );
                }
                self.cur.observed();
                Ok(())
            }
            Call::Sleep => Ok(()),
            Call::Acquired { lock } => {
                self.cur.observed();
                match (lock, cl.pc) {
                    (None, Pc::Idle) => Ok(()),
                    (None, pc) => Err(fail(
                        i,
                        step,
                        format!(
                            "the client gave up acquiring; the model's client is at {pc:?} \
                             (at Retrying it sends the request again until answered)"
                        ),
                    )),
                    (Some((token, until)), Pc::Holding | Pc::Claiming | Pc::Verifying) => {
                        let token = lockwright_model::docstore::store::Token {
                            primary_term: token.primary_term,
                            seq_no: token.seq_no,
                        };
                        if self.shadow.tokens[usize::from(c)] != Some(token) {
                            return Err(fail(
                                i,
                                step,
                                format!(
                                    "the guard's token is not its acquiring write's ({:?})",
                                    self.shadow.tokens[usize::from(c)]
                                ),
                            ));
                        }
                        let until = until
                            .map(|u| self.shadow.rel_saturating(u))
                            .transpose()
                            .map_err(|e| fail(i, step, e))?;
                        if until != cl.deadline {
                            return Err(fail(
                                i,
                                step,
                                format!(
                                    "the guard's deadline is {until:?} ticks from now, the \
                                     model's {:?}",
                                    cl.deadline
                                ),
                            ));
                        }
                        Ok(())
                    }
                    (Some(_), pc) => Err(fail(
                        i,
                        step,
                        format!("the client holds the lock, the model's client is at {pc:?}"),
                    )),
                }
            }
            other => Err(fail(i, step, format!("not a client step: {other:?}"))),
        }
    }

    fn request(&mut self, i: usize, step: &Step, c: ClientId, req: &Req) -> Result<(), Divergence> {
        let sc = self.cur.model;
        let state = &self.cur.state;
        let cl = state.clients[usize::from(c)];
        let map = self
            .shadow
            .seq_map(state)
            .map_err(|e| fail(i, step, format!("before this step the states differ: {e}")))?;
        let read = (self.shadow.reads[usize::from(c)], cl.read);
        let ours = self
            .shadow
            .to_model_request(req, &map, sc.variant, read)
            .map_err(|e| fail(i, step, e))?;
        let candidates: Vec<MStep> = next(sc.variant, sc.role(c), cl.pc)
            .iter()
            .copied()
            .filter(|&s| s != MStep::CheckLease)
            .collect();
        let Some(mstep) = candidates
            .iter()
            .copied()
            .find(|&s| sc.request(state, c, s) == Some(ours))
        else {
            let expected: Vec<String> = candidates
                .iter()
                .filter_map(|&s| sc.request(state, c, s).map(|r| format!("{s:?}: {r:?}")))
                .collect();
            return Err(fail(
                i,
                step,
                format!(
                    "at {:?} the model's c{c} sends one of [{}]; the client sent {ours:?}",
                    cl.pc,
                    expected.join("; ")
                ),
            ));
        };
        let (delivery, recorded) = match &step.outcome {
            Outcome::Answered(a) => (Delivery::Answered, Some(a)),
            Outcome::ReplyLost(a) => (Delivery::ReplyLost, Some(a)),
            Outcome::RequestLost => (Delivery::RequestLost, None),
            o => return Err(fail(i, step, format!("a request cannot end {o:?}"))),
        };
        if let (Delivery::Answered, Some(a)) = (delivery, recorded) {
            let Answer::Model(rec) = a else {
                return Err(fail(
                    i,
                    step,
                    format!("the store refused the request outside the model: {a:?}"),
                ));
            };
            let model = sc.response(state, c, mstep).expect("a request step");
            let lock_index = (req.index == LOCK_INDEX).then(|| (&map, state.locks.next_seq_no()));
            if !same_answer(rec, &model, lock_index) {
                return Err(fail(
                    i,
                    step,
                    format!(
                        "the store answered {rec:?}, the model answers {model:?} (model numbering)"
                    ),
                ));
            }
        }
        if let Some(a) = recorded {
            let ours = self
                .shadow
                .service
                .deliver(req, delivery == Delivery::Answered);
            if &ours != a {
                return Err(fail(i, step, format!("the shadow store answers {ours:?}")));
            }
            if let (Delivery::Answered, Answer::Model(Ok(w)), true) = (
                delivery,
                a,
                matches!(
                    mstep,
                    MStep::CreateLock | MStep::UpsertLock | MStep::UpdateLock
                ),
            ) {
                self.shadow.tokens[usize::from(c)] = Some(w.token);
            }
        }
        self.act(i, step, Action::Call(c, mstep, delivery))
    }
}
