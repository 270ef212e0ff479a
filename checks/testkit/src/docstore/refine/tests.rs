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

/// One client of the fixed recipe, between its rounds: its release rolled back, the data
/// document re-created, then (after another round) the lock index re-created, and a last
/// round that finds no lock document. Deterministic on std threads.
fn store_faults_run() -> (Workload, Vec<Step>) {
    let w = Workload::leased(
        "docstore refine store faults",
        1,
        vec![ThreadPlan::as_incarnation(
            0,
            0,
            vec![
                WOp::Round { writes: 1 },
                WOp::Rollback,
                WOp::RecreateDoc,
                WOp::Round { writes: 1 },
                WOp::RecreateIndex,
                WOp::Round { writes: 1 },
            ],
        )],
    );
    let trace = workload::run::<Std>(&w, None);
    (w, trace)
}

fn position(trace: &[Step], p: impl Fn(&Call) -> bool) -> usize {
    trace.iter().position(|s| p(&s.call)).expect("the step")
}

#[test]
fn the_stores_own_faults_are_model_steps_with_their_budgets() {
    use lockwright_model::docstore::protocol::{
        AT_MOST_ONE_WRITER, FENCED_WRITES_ARE_EXCLUSIVE, NO_LOST_UPDATE,
    };
    let (w, trace) = store_faults_run();
    // The re-created index leaves no lock document: "no stale lock" fails by design.
    let r = w.refinement().enforcing(&[
        AT_MOST_ONE_WRITER,
        FENCED_WRITES_ARE_EXCLUSIVE,
        NO_LOST_UPDATE,
    ]);
    let f = r.scenario(&trace).faults;
    assert_eq!(
        (f.rollback, f.recreate_doc, f.recreate_index),
        (1, 1, 1),
        "{f:?}"
    );
    // The rollback undid the release (the last acknowledged write): the lock index's term
    // grew, and the next round's acquire still succeeded (the lease was the client's own).
    let rollback = position(&trace, |c| matches!(c, Call::Rollback { .. }));
    assert_eq!(
        trace[rollback].call,
        Call::Rollback {
            index: crate::docstore::LOCK_INDEX.to_owned()
        }
    );
    let summary = r.check(&trace).expect("refines");
    // Round 1: UpdateLock, ClaimData, VerifyLock, ReadData, CheckLease, WriteData,
    // ReleaseLease; the three faults; round 2 the same seven; round 3 the refused UpdateLock.
    assert_eq!(summary.actions, 7 + 3 + 7 + 1, "{summary:?}");
}

#[test]
fn a_rollback_the_store_did_not_make_leaves_the_model() {
    let (w, mut trace) = store_faults_run();
    let rollback = position(&trace, |c| matches!(c, Call::Rollback { .. }));
    // The recording says the data index was rolled back; the shadow store's last
    // acknowledged write was to the lock index.
    trace[rollback].call = Call::Rollback {
        index: crate::docstore::DATA_INDEX.to_owned(),
    };
    let err = w.refinement().enforcing(&[]).check(&trace).unwrap_err();
    assert_eq!(err.step, rollback, "{err}");
    assert!(err.reason.contains("the shadow store rolls back"), "{err}");
}

#[test]
fn a_store_fault_left_out_of_the_recording_is_found() {
    let (w, mut trace) = store_faults_run();
    let rollback = position(&trace, |c| matches!(c, Call::Rollback { .. }));
    trace.remove(rollback);
    let err = w.refinement().enforcing(&[]).check(&trace).unwrap_err();
    // The next acquire's answer carries the rolled-back index's term (2); the model's, with
    // no rollback, term 1.
    assert!(err.step > rollback, "{err}");
    assert!(err.property.is_none(), "{err}");
    assert!(err.reason.contains("primary_term: 2"), "{err}");
}
