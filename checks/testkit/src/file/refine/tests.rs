use super::*;
use crate::file::record::Outcome;
use crate::file::workload::{self, ThreadPlan, Workload};
use crate::prims::Std;
use lockwright::file::sys::OsLockKind;
use lockwright_model::file::kernel::{FsError, TryLockResult};

/// One thread, two rounds: deterministic even on std threads.
fn one_thread_run() -> (Workload, Vec<Step>) {
    let sc = Workload::new(
        "refine unit",
        1,
        OsLockKind::Ofd,
        vec![ThreadPlan::worker(0, 0, 2)],
    );
    let trace = workload::run::<Std>(&sc, &workload::correct(), None);
    (sc, trace)
}

fn index_of(trace: &[Step], call: Call) -> usize {
    trace
        .iter()
        .position(|s| s.call == call)
        .expect("call present")
}

#[test]
fn a_real_run_is_a_model_path() {
    let (sc, trace) = one_thread_run();
    let summary = sc
        .refinement(Variant::Native)
        .check(&trace)
        .expect("refines");
    // 2 × (HeldInsert, Open, TryLock, EnsureValid, Write, Unlock, Close, HeldRemove)
    assert_eq!(summary.actions, 16, "{summary:?}");
    // Round 1: canonicalize_dir, stat; round 2 (the factory resolved the path before):
    // stat; each ensure_valid: probe, held_contains, fstat, stat.
    assert_eq!(summary.observations, 11, "{summary:?}");
}

#[test]
fn the_wrong_variant_diverges_at_the_first_reordered_step() {
    let (sc, trace) = one_thread_run();
    // native-4.10 releases Unlock → HeldRemove → Close: the recorded Close is not allowed.
    let err = sc.refinement(Variant::Native410).check(&trace).unwrap_err();
    println!("{err}");
    assert_eq!(err.step, index_of(&trace, Call::Close), "{err}");
    assert!(err.reason.contains("does not allow Close(p0, t0)"), "{err}");
}

#[test]
fn a_tampered_result_diverges_at_that_step() {
    let (sc, mut trace) = one_thread_run();
    let i = index_of(&trace, Call::TryLock(LockKind::Ofd));
    trace[i].outcome = Outcome::TryLock(TryLockResult::WouldBlock);
    let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
    assert_eq!(err.step, i, "{err}");
}

#[test]
fn a_missing_step_diverges_at_the_next_one() {
    let (sc, mut trace) = one_thread_run();
    let i = index_of(&trace, Call::HeldInsert);
    trace.remove(i);
    let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
    assert_eq!(err.step, i, "{err}");
    assert!(err.reason.contains("does not allow Open(p0, t0)"), "{err}");
}

/// One thread, two rounds on the real `SimpleFsLockFactory`.
fn one_thread_simple_run() -> (Workload, Vec<Step>) {
    let sc = Workload::new(
        "refine unit simple",
        1,
        OsLockKind::Flock,
        vec![ThreadPlan::worker(0, 0, 2)],
    );
    let run = workload::run_simple::<Std>(&sc, None);
    (sc, run.trace)
}

#[test]
fn a_simple_run_is_a_model_path() {
    let (sc, trace) = one_thread_simple_run();
    let summary = sc
        .refinement(Variant::Simple)
        .check(&trace)
        .expect("refines");
    // 2 × (CreateExclusive, EnsureValid, Write, Unlink)
    assert_eq!(summary.actions, 8, "{summary:?}");
    // 2 × (create_dir_all, canonicalize_dir; ensure_valid: stat, read_file; release: stat,
    // read_file)
    assert_eq!(summary.observations, 12, "{summary:?}");
    assert_eq!(
        trace
            .iter()
            .filter(|s| s.call == Call::Closed { ok: true })
            .count(),
        2
    );
    // And it is not a path of the native protocol.
    let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
    assert_eq!(err.step, index_of(&trace, Call::CreateExclusive), "{err}");
}

#[test]
fn a_refused_simple_release_is_the_models_release_refused() {
    use lockwright::{LockError, SimpleFsLockFactory};
    use std::path::Path;
    let sim = crate::file::SimOs::<Std>::new(1);
    let sys = sim.thread(0, 0);
    let factory = SimpleFsLockFactory::with_system(sys.clone());
    let lock = factory
        .try_obtain_simple(Path::new(crate::file::record::LOCK_DIR), "write.lock")
        .expect("free");
    assert!(sys.note_obtained(true).is_none());
    sim.unlink_lock_file();
    assert!(lock.ensure_valid().is_err());
    sys.note_validated(false);
    sys.note_release();
    let closed = lock.close();
    assert!(
        matches!(closed, Err(LockError::ReleaseRefused { .. })),
        "{closed:?}"
    );
    sys.note_closed(false);
    let mut trace = sim.trace();
    let r = Refinement::new(Variant::Simple, LockKind::Flock, 1);
    let summary = r.check(&trace).expect("refines");
    // CreateExclusive, UnlinkLockFile, ReleaseRefused (at the release's stat)
    assert_eq!(summary.actions, 3, "{summary:?}");
    // A release that claims success where the model refused diverges at that event.
    let i = index_of(&trace, Call::Closed { ok: false });
    trace[i].call = Call::Closed { ok: true };
    let err = r.check(&trace).unwrap_err();
    assert_eq!(err.step, i, "{err}");
    assert!(err.reason.contains("ReleaseRefused"), "{err}");
}

#[test]
fn the_check_then_unlink_window_is_named() {
    let (sc, trace) = one_thread_simple_run();
    // First round only, then splice an operator's unlink between the release's read_file
    // and its unlink (a recording the real code produces when the fault lands there).
    let unlink = index_of(&trace, Call::Unlink);
    let mut t: Vec<Step> = trace[..unlink].to_vec();
    assert_eq!(t.last().map(|s| s.call), Some(Call::ReadFile));
    t.push(Step {
        actor: Actor::Env,
        call: Call::UnlinkLockFile,
        outcome: Outcome::Done,
    });
    t.push(Step {
        outcome: Outcome::Failed(FsError::NotFound),
        ..trace[unlink]
    });
    t.push(Step {
        call: Call::Closed { ok: false },
        ..trace[unlink + 1]
    });
    let err = sc.refinement(Variant::Simple).check(&t).unwrap_err();
    println!("{err}");
    assert_eq!(err.step, unlink + 1, "{err}");
    assert!(err.is_named(CHECK_THEN_UNLINK_WINDOW), "{err}");
    assert!(err.to_string().contains(CHECK_THEN_UNLINK_WINDOW), "{err}");
}

#[test]
fn a_wrong_observation_diverges() {
    let (sc, mut trace) = one_thread_run();
    let i = index_of(&trace, Call::HeldContains);
    trace[i].outcome = Outcome::Bool(false);
    let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
    // held_contains is an observation: compared in place. (The ensure_valid window check
    // sees no contradiction: the recorded call still returned Ok.)
    assert_eq!(err.step, i, "{err}");
}
