//! The merged trace replayed through the model ([`Scenario::step`]'s transition function,
//! through Stateright's `Model`): each step's action is named by what the client recorded
//! (and, for a lost reply, by whether the log shows it applied) — never picked from the
//! actions the model enables — and must be enabled where the previous steps left the model;
//! where the answer tells the client where to go, the model's client must be there after the
//! step; every enforced `always` property must hold on every state reached.

use lockwright_model::zk::{Action, Pc, Scenario, State};
use stateright::{Expectation, Model};

use super::merge::{Kind, Placed};
use super::record::{Op, Res};

/// What the replay found.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    /// Model actions taken.
    pub actions: u64,
    /// Observations compared.
    pub observations: u64,
    /// `DeleteLockNode` steps taken without a request (see `implied_release`).
    pub implied_deletes: u64,
    /// Steps from the first the model could not take to the end (not replayed).
    pub unmatched: u64,
    pub first_unmatched: Option<String>,
}

/// The `always` properties a replay enforces: every one the model proves for `m`'s variant
/// with the faults a real run has, i.e. all but "at most one holder" (a holder paused past its
/// session still believes it holds while the next one is granted: the model's Curator
/// counterexample, which the fence and the guarded write are there for).
pub fn enforced() -> Vec<&'static str> {
    lockwright_model::zk::ALWAYS
        .iter()
        .copied()
        .filter(|p| *p != "at most one holder")
        .collect()
}

/// The action `step` names, and the places the answer sends the client to (empty: any).
fn action(step: &Placed) -> Option<(Action, &'static [Pc])> {
    use Action::*;
    let c = step.client;
    Some(match &step.kind {
        Kind::Expire => (ExpireSession(c), &[]),
        Kind::ExpireOld => (ExpireOldSession(c), &[]),
        Kind::RecreateParent => (RecreateParent, &[]),
        Kind::Restart => (RestartClient(c), &[]),
        Kind::Learn => (ReceiveSessionEvent(c), &[]),
        Kind::Searched { found: true } => (FindOwnNode(c), &[Pc::Created]),
        Kind::Searched { found: false } => (FindOwnNode(c), &[Pc::Idle]),
        Kind::Listed { own: false, .. } => (ListChildren(c), &[Pc::Idle]),
        Kind::Listed { lowest: true, .. } => (ListChildren(c), &[Pc::Holding, Pc::Granted]),
        Kind::Listed { .. } => (ListChildren(c), &[Pc::MustWatch]),
        Kind::Acquired | Kind::GaveUp | Kind::Killed { .. } => return None,
        Kind::Request { op, res, applied } => match (op, res) {
            (Op::Create | Op::Delete | Op::Multi, Res::Loss) => (LoseReply(c, *applied), &[]),
            (_, Res::Loss) => (LoseReply(c, false), &[]),
            (Op::Create, Res::Ok) => (CreateLockNode(c), &[Pc::Created]),
            (Op::Create, _) => (CreateLockNode(c), &[]),
            (Op::Search, _) => (FindOwnNode(c), &[]),
            (Op::List, _) => (ListChildren(c), &[]),
            (Op::Watch, Res::Ok) => (WatchPredecessor(c), &[Pc::Waiting]),
            (Op::Watch, Res::NoNode) => (WatchPredecessor(c), &[Pc::Created]),
            (Op::Watch, _) => (WatchPredecessor(c), &[]),
            (Op::Wait, _) => (ReceiveWatchEvent(c), &[Pc::Created]),
            (Op::Delete, Res::Ok | Res::NoNode) => (DeleteLockNode(c), &[Pc::Idle]),
            (Op::Delete, _) => (DeleteLockNode(c), &[]),
            // `applied` on an answered multi: it carried the lock-node check.
            (Op::Multi, Res::Ok) if *applied => (GuardedWrite(c), &[Pc::Holding]),
            (Op::Multi, Res::Ok) => (Write(c), &[Pc::Holding]),
            (Op::Multi, Res::NoNode) => (GuardedWrite(c), &[Pc::Idle]),
            (Op::Multi, _) => (GuardedWrite(c), &[]),
            (Op::Read, _) => (Read(c), &[Pc::Updating]),
            _ => return None,
        },
    })
}

/// The one model step the replay takes without a request: the model's client `c` must
/// delete its node (`Releasing`, after it learned while holding that its session expired),
/// the node is already gone from the server (it went with the session, so the delete
/// answers `NoNode` and changes nothing there), and the real client's next request is
/// another one. The recipe's guard, once it reported the hold lost, deletes nothing on
/// `release()` (`impl/src/zk/mutex.rs`, `ZkGuard::release`); the model deletes. Where the
/// node is still there, no delete is implied: the model and the recipe then disagree on the
/// server, and the trace fails.
fn implied_release(m: &Scenario, s: &State, c: u8) -> bool {
    let cl = &s.clients[usize::from(c)];
    cl.pc == Pc::Releasing
        && cl
            .own
            .is_some_and(|o| s.server.node(o.name).is_none_or(|z| z.czxid != o.czxid))
        && m.step(s, Action::DeleteLockNode(c)).is_some()
}

fn enabled(m: &Scenario, s: &State) -> String {
    let mut v = Vec::new();
    m.actions(s, &mut v);
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Replays `steps` through `model` from its initial state. See the module docs.
pub fn replay(steps: &[Placed], model: Scenario) -> Replayed {
    let enforce = enforced();
    let properties = model.properties();
    let mut state = model
        .init_states()
        .into_iter()
        .next()
        .expect("the model has an initial state");
    // The model's fault budgets are small counters (`u8`), made to bound an exhaustive
    // search; a real run can show more faults of a kind than any budget holds (the deep
    // run has hundreds of expiries). A replay judges the order of steps, not how many faults
    // there were, so every step starts with the budgets full: past the 255th expiry the
    // model would otherwise refuse it, and every later step would read as unmatched.
    let full = state.budget;
    let mut out = Replayed::default();
    for (i, step) in steps.iter().enumerate() {
        state.budget = full;
        let pc = |s: &State| s.clients[usize::from(step.client)].pc;
        let fail = |reason: String, s: &State| {
            format!(
                "trace step #{i} (log point {}) {}: {reason}\n  model state: {s:?}\n  enabled: {}",
                step.key.0,
                step.what,
                enabled(&model, s)
            )
        };
        let verdict: Result<(), String> = (|| {
            match &step.kind {
                Kind::Acquired => {
                    let p = pc(&state);
                    return if matches!(p, Pc::Holding | Pc::Granted) {
                        out.observations += 1;
                        Ok(())
                    } else {
                        Err(format!(
                            "the acquire returned a guard, the model's client c{} is at {p:?}",
                            step.client
                        ))
                    };
                }
                Kind::Killed { reuse } => {
                    let Some(next) = model.kill_process(&state, step.client, *reuse) else {
                        return Err(
                            "the model cannot kill this client's process here (a shared client, or no such client)"
                                .into(),
                        );
                    };
                    state = next;
                    out.actions += 1;
                    return Ok(());
                }
                Kind::GaveUp => {
                    let p = pc(&state);
                    return if p.believes() {
                        Err(format!(
                            "the acquire failed, the model's client c{} holds ({p:?})",
                            step.client
                        ))
                    } else {
                        out.observations += 1;
                        Ok(())
                    };
                }
                _ => {}
            }
            let Some((a, expect)) = action(step) else {
                return Err("no model action for this event".into());
            };
            if model.step(&state, a).is_none() && implied_release(&model, &state, step.client) {
                state = model
                    .step(&state, Action::DeleteLockNode(step.client))
                    .expect("checked by implied_release");
                out.implied_deletes += 1;
            }
            let Some(next) = model.step(&state, a) else {
                return Err(format!(
                    "the model does not allow {a} here (model client c{} is at {:?})",
                    step.client,
                    pc(&state)
                ));
            };
            if !expect.is_empty() && !expect.contains(&pc(&next)) {
                return Err(format!(
                    "the answer sends the client to {expect:?}, the model's client c{} goes to {:?} on {a}",
                    step.client,
                    pc(&next)
                ));
            }
            if let Kind::Listed { children, .. } = step.kind {
                let n = next.server.children().len();
                if n != children {
                    return Err(format!(
                        "the real listing has {children} children, the model's server {n}"
                    ));
                }
            }
            for p in &properties {
                if p.expectation == Expectation::Always
                    && enforce.contains(&p.name)
                    && !(p.condition)(&model, &next)
                {
                    return Err(format!("after {a} the model state violates \"{}\"", p.name));
                }
            }
            state = next;
            out.actions += 1;
            Ok(())
        })();
        if let Err(reason) = verdict {
            out.unmatched = (steps.len() - i) as u64;
            out.first_unmatched = Some(fail(reason, &state));
            return out;
        }
    }
    out
}
