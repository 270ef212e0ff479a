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

/// One thread's plan on the real native factory (std, deterministic).
fn run_plan(
    ops: Vec<workload::Op>,
    defect: Option<lockwright::file::defects::Defect>,
) -> (Workload, Vec<Step>) {
    let sc = Workload::new(
        "refine unit plan",
        1,
        OsLockKind::Ofd,
        vec![ThreadPlan {
            pid: 0,
            tid: 0,
            ops,
        }],
    );
    let make: workload::MakeFactory<Std> = match defect {
        None => workload::correct(),
        Some(d) => std::sync::Arc::new(move |sys, kind| {
            lockwright::NativeFsLockFactory::with_system(sys, kind).with_defect(d)
        }),
    };
    let trace = workload::run::<Std>(&sc, &make, None);
    (sc, trace)
}

#[test]
fn injected_os_errors_are_the_models_failing_calls() {
    use crate::file::record::Injection;
    use workload::Op::{Inject, Round};
    let (sc, trace) = run_plan(
        vec![
            Inject(Injection::Lock(libc::ENOLCK)),
            Round,
            Inject(Injection::Unlock),
            Inject(Injection::Close),
            Round,
        ],
        None,
    );
    // Round 1: the lock call fails, the obtain closes, leaves the held set and fails.
    assert!(trace.contains(&Step {
        actor: Actor::Thread { pid: 0, tid: 0 },
        call: Call::Obtained { ok: false },
        outcome: Outcome::Done,
    }));
    let r = sc.refinement(Variant::Native);
    let scenario = r.scenario(&trace);
    assert_eq!(
        (
            scenario.faults.lock_error,
            scenario.faults.unlock_error,
            scenario.faults.close_error
        ),
        (1, 1, 1)
    );
    let summary = r.check(&trace).expect("refines");
    // Round 1: HeldInsert, Open, LockFails, Close, HeldRemove. Round 2: HeldInsert, Open,
    // TryLock, EnsureValid, Write, UnlockFails, CloseFails, HeldRemove.
    assert_eq!(summary.actions, 13, "{summary:?}");
    // The broken variant that carries on after the error is not this run.
    let err = sc
        .refinement(Variant::NativeCarryOnAfterLockError)
        .check(&trace)
        .unwrap_err();
    assert!(err.reason.contains("does not allow Close(p0, t0)"), "{err}");
    // And the defect's own run is the broken variant's path, not native's.
    let (sc, broken) = run_plan(
        vec![Inject(Injection::Lock(libc::EIO)), Round],
        Some(lockwright::file::defects::Defect::CarryOnAfterLockError),
    );
    sc.refinement(Variant::NativeCarryOnAfterLockError)
        .check(&broken)
        .expect("the broken variant's path");
    let err = sc.refinement(Variant::Native).check(&broken).unwrap_err();
    assert_eq!(
        err.step,
        index_of(&broken, Call::Obtained { ok: true }),
        "{err}"
    );
}

#[test]
fn a_blocking_obtain_is_the_blocking_variants_path() {
    let (sc, trace) = run_plan(vec![workload::Op::BlockingRound; 2], None);
    assert_eq!(
        trace
            .iter()
            .filter(|s| s.call == Call::HeldInsertWait)
            .count(),
        2
    );
    let summary = sc
        .refinement(Variant::NativeBlocking)
        .check(&trace)
        .expect("refines");
    // 2 × (HeldInsert, Open, TryLock, Recheck, EnsureValid, Write, Unlock, Close, HeldRemove):
    // each `stat` after `lock_blocking` is the re-check.
    assert_eq!(summary.actions, 18, "{summary:?}");
    // Without the re-check (the defect) the obtain returns at the lock call: the old
    // variant's path, which the fixed model rejects where the obtain returns.
    let (sc, old) = run_plan(
        vec![workload::Op::BlockingRound; 2],
        Some(lockwright::file::defects::Defect::BlockingNoRecheck),
    );
    let summary = sc
        .refinement(Variant::NativeBlockingNoRecheck)
        .check(&old)
        .expect("refines the old variant");
    assert_eq!(summary.actions, 16, "{summary:?}");
    let err = sc
        .refinement(Variant::NativeBlocking)
        .check(&old)
        .unwrap_err();
    assert_eq!(
        err.step,
        index_of(&old, Call::Obtained { ok: true }),
        "{err}"
    );
}

#[test]
fn lost_locks_and_written_files_are_the_models_faults() {
    use workload::Op::{LoseLock, Round, WriteLockFile};
    // Nothing held: both faults are no-op steps the first time round.
    let (sc, trace) = run_plan(vec![LoseLock(0), Round, WriteLockFile, Round], None);
    let r = sc.refinement(Variant::Native);
    let summary = r.check(&trace).expect("refines");
    // The second round's ensure_valid fails: the lock file is not empty.
    let validated: Vec<Call> = trace
        .iter()
        .map(|s| s.call)
        .filter(|c| matches!(c, Call::Validated { .. }))
        .collect();
    assert_eq!(
        validated,
        [Call::Validated { ok: true }, Call::Validated { ok: false }]
    );
    // 2 × (HeldInsert, Open, TryLock, Unlock, Close, HeldRemove), one EnsureValid + Write,
    // WriteLockFile (the LoseLock found nothing to lose: no step).
    assert_eq!(summary.actions, 15, "{summary:?}");
}

#[test]
fn probe_last_checks_are_steps_of_the_probe_last_variant() {
    let (sc, trace) = run_plan(
        vec![workload::Op::Round; 2],
        Some(lockwright::file::defects::Defect::ProbeLast),
    );
    let order: Vec<Call> = trace
        .iter()
        .map(|s| s.call)
        .skip_while(|c| *c != Call::Obtained { ok: true })
        .skip(1)
        .take(4)
        .collect();
    assert_eq!(
        order,
        [
            Call::HeldContains,
            Call::Fstat,
            Call::Stat,
            Call::Probe(LockKind::Ofd)
        ]
    );
    let summary = sc
        .refinement(Variant::NativeProbeLast)
        .check(&trace)
        .expect("refines");
    // 2 × (HeldInsert, Open, TryLock, BeginCheck, 4 × Check, Write, Unlock, Close, HeldRemove)
    assert_eq!(summary.actions, 24, "{summary:?}");
    // The correct order is not this variant's: its probe comes first.
    let (sc, correct) = run_plan(vec![workload::Op::Round], None);
    let err = sc
        .refinement(Variant::NativeProbeLast)
        .check(&correct)
        .unwrap_err();
    assert!(
        err.reason
            .contains("check #3 made where the model expects check #0"),
        "{err}"
    );
}

#[test]
fn a_shared_factory_and_a_second_spelling_refine() {
    use crate::file::record::LOCK_LINK;
    use workload::Op::{Round, RoundVia};
    let mut sc = Workload::new(
        "refine unit shared",
        1,
        OsLockKind::Posix,
        vec![ThreadPlan {
            pid: 0,
            tid: 0,
            ops: vec![Round, RoundVia(LOCK_LINK), Round],
        }],
    );
    sc.shared_factory = true;
    let trace = workload::run::<Std>(&sc, &workload::correct(), None);
    // Round 1 resolves; round 2 resolves the link; round 3 takes the cached canonical path.
    let resolved = trace
        .iter()
        .filter(|s| s.call == Call::CanonicalizeDir)
        .count();
    assert_eq!(resolved, 2, "{}", crate::file::format_trace(&trace));
    sc.refinement(Variant::Native)
        .check(&trace)
        .expect("refines");
}

#[test]
fn two_copies_of_the_crate_are_two_held_sets() {
    let mut sc = Workload::new(
        "refine unit two copies",
        1,
        OsLockKind::Ofd,
        vec![ThreadPlan::worker(0, 0, 1), ThreadPlan::worker(0, 1, 1)],
    );
    sc.two_copies = true;
    // On std threads the interleaving is whatever it is; with OFD locks every one refines
    // (the second copy's thread is refused by the kernel, not by a held set).
    let trace = workload::run::<Std>(&sc, &workload::correct(), None);
    sc.refinement(Variant::NativeTwoHeldSets)
        .check(&trace)
        .expect("refines");
}
