//! The replayer's own teeth: a real run refines; a recording tampered in each way the client
//! or the store could go wrong leaves the model at that step.

use super::*;
use crate::docstore::record::{Actor, Millis, TICK_MS};
use crate::docstore::service::{Answer, Op};
use crate::docstore::workload::{self, Op as WOp, ThreadPlan, Workload};
use crate::prims::Std;
use lockwright_model::docstore::store::{Script, StoreError, UpdateBody};
use lockwright_model::docstore::{Variant, Writes};

/// One client, two rounds of two writes (plain `fenced`: no claim), then a tick:
/// deterministic on std threads.
fn one_client_run() -> (Workload, Vec<Step>) {
    let w = Workload::leased(
        "docstore refine unit",
        1,
        vec![ThreadPlan::as_incarnation(
            0,
            0,
            vec![
                WOp::Round { writes: 2 },
                WOp::Round { writes: 2 },
                WOp::Tick,
            ],
        )],
    )
    .with_recipe(Variant::LeasedUpsert, Writes::Fenced);
    let trace = workload::run::<Std>(&w, None);
    (w, trace)
}

fn requests(trace: &[Step]) -> Vec<usize> {
    (0..trace.len())
        .filter(|&i| matches!(trace[i].call, Call::Request(_)))
        .collect()
}

#[test]
fn a_real_run_is_a_model_path() {
    let (w, trace) = one_client_run();
    let summary = w.refinement().check(&trace).expect("refines");
    // 2 × (UpsertLock, 2 × (ReadData, CheckLease, WriteData), CompareAndDelete).
    assert_eq!(summary.actions, 16, "{summary:?}");
    // 2 acquire clock reads, 2 Acquired events, and the tick: no lease is left, so the
    // model's relative clock has nothing to advance (a stutter, not a step).
    assert_eq!(summary.observations, 5, "{summary:?}");
}

#[test]
fn a_claimed_run_is_a_model_path_and_not_one_of_the_unclaimed_recipe() {
    let (w, _) = one_client_run();
    let w = w.with_recipe(Variant::LeasedUpsert, Writes::FencedClaim);
    let trace = workload::run::<Std>(&w, None);
    let summary = w.refinement().check(&trace).expect("refines");
    // 2 × (UpsertLock, ClaimData, 2 × (ReadData, CheckLease, WriteData), CompareAndDelete).
    assert_eq!(summary.actions, 18, "{summary:?}");
    // The model without the claim never sends one: the claim is the first divergence.
    let err = w
        .with_recipe(Variant::LeasedUpsert, Writes::Fenced)
        .refinement()
        .check(&trace)
        .unwrap_err();
    assert_eq!(err.step, requests(&trace)[1], "{err}");
    assert!(err.reason.contains("the model's c0 sends one of"), "{err}");
}

#[test]
fn the_wrong_recipe_diverges_at_its_first_request() {
    let (w, trace) = one_client_run();
    let err = w
        .clone()
        .with_recipe(Variant::LeasedNoop, Writes::Fenced)
        .refinement()
        .check(&trace)
        .unwrap_err();
    assert_eq!(err.step, requests(&trace)[0], "{err}");
    assert!(err.reason.contains("the model's c0 sends one of"), "{err}");
}

#[test]
fn a_tampered_answer_diverges_at_that_step() {
    let (w, mut trace) = one_client_run();
    let i = requests(&trace)[0];
    trace[i].outcome = Outcome::Answered(Answer::Model(Err(StoreError::VersionConflict)));
    let err = w.refinement().check(&trace).unwrap_err();
    assert_eq!(err.step, i, "{err}");
    assert!(err.reason.contains("the store answered"), "{err}");
}

#[test]
fn a_deadline_not_counted_from_the_first_send_diverges() {
    // The client must count its lease from the clock read of the acquire's first send.
    let (w, mut trace) = one_client_run();
    let i = trace
        .iter()
        .position(|s| matches!(s.call, Call::Acquired { .. }))
        .unwrap();
    if let Call::Acquired {
        lock: Some((_, until)),
    } = &mut trace[i].call
    {
        *until = until.map(|u: Millis| u + TICK_MS);
    }
    let err = w.refinement().check(&trace).unwrap_err();
    assert_eq!(err.step, i, "{err}");
    assert!(err.reason.contains("deadline"), "{err}");
}

#[test]
fn a_write_after_a_failed_lease_check_diverges() {
    // Move a tick of two leases' length before the first lease check: the model's check
    // fails, so the write that follows is one the model's client never sends.
    let (w, mut trace) = one_client_run();
    let acquired = trace
        .iter()
        .position(|s| matches!(s.call, Call::Acquired { .. }))
        .unwrap();
    for _ in 0..2 {
        trace.insert(
            acquired + 1,
            Step {
                actor: Actor::Env,
                call: Call::Tick,
                outcome: Outcome::Done,
            },
        );
    }
    // The clock reads that follow now read 2 ticks later.
    for s in &mut trace[acquired + 3..] {
        if let Call::Now { value } = &mut s.call {
            *value += 2 * TICK_MS;
        }
    }
    let err = w.refinement().check(&trace).unwrap_err();
    let write = acquired + 5; // tick, tick, the read, the check's clock read, the write
    assert_eq!(err.step, write, "{err}");
    assert!(err.reason.contains("at Idle"), "{err}");
}

#[test]
fn a_stale_clock_read_in_a_request_diverges() {
    let (w, mut trace) = one_client_run();
    let i = requests(&trace)[0];
    if let Call::Request(Ok(req)) = &mut trace[i].call {
        if let Op::Update {
            body: UpdateBody::Script(Script::LeaseAcquire { now, .. }),
            ..
        } = &mut req.op
        {
            *now -= TICK_MS;
        }
    }
    let err = w.refinement().check(&trace).unwrap_err();
    assert_eq!(err.step, i, "{err}");
    assert!(err.reason.contains("stale"), "{err}");
}

#[test]
fn an_enforced_property_is_reported_by_name() {
    // The blog's global lock with a lost `_create` reply: the retry meets its own document.
    let w = Workload::leased(
        "docstore refine unit global",
        1,
        vec![
            ThreadPlan::env(vec![WOp::LoseReply]),
            ThreadPlan::client(0, 1, 0),
        ],
    )
    .with_recipe(Variant::Global, Writes::Unfenced);
    // On std threads the order is not fixed: keep the first run in which the reply was lost.
    for _ in 0..200 {
        let trace = workload::run::<Std>(&w, None);
        if !trace
            .iter()
            .any(|s| matches!(s.outcome, Outcome::ReplyLost(_)))
        {
            continue;
        }
        let err = w.refinement().check(&trace).unwrap_err();
        assert_eq!(
            err.property,
            Some(lockwright_model::docstore::protocol::NO_STALE_LOCK),
            "{err}"
        );
        assert!(matches!(
            trace[err.step].outcome,
            Outcome::Answered(Answer::Model(Err(StoreError::VersionConflict)))
        ));
        return;
    }
    panic!("the lost reply never hit the create in 200 runs");
}
