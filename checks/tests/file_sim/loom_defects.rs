//! Teeth, loom: for each deliberately broken variant of `NativeFsLockFactory` (lockwright's
//! `test-util` feature), loom's exhaustive exploration must find an execution with two writers.
//!
//! Why loom here: the explorer is exhaustive up to the stated preemption bound, so "found" is
//! deterministic — no seed, no luck. Each test asserts that the failure is "at most one
//! writer", takes the recording of the failing execution, and replays it through the model of
//! the SAME broken variant: the refinement replayer must reach the same property violation
//! (the real bug is a path of the model's counterexample space), not a divergence. Then it
//! replays the recording on the real code (std threads forced through the recorded order,
//! `workload::replay_std`), which must reproduce the same recording and the same failure.
//! The shuttle twins (`file_sim/shuttle_defects.rs`) pin replayable schedules.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;
use lockwright_model::file::{Variant, AT_MOST_ONE_WRITER};
use lockwright_testkit::file::record::{format_trace, Injection};
use lockwright_testkit::file::workload::{self, MakeFactory, Op, ThreadPlan, Workload};
use lockwright_testkit::{budget, Loom, Runtime, Std};

fn broken<R: Runtime>(defect: Defect) -> MakeFactory<R> {
    Arc::new(move |sys, kind| NativeFsLockFactory::with_system(sys, kind).with_defect(defect))
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Explores `scenario` with `defect` injected; asserts loom finds two writers and that the
/// recording replays through the model of `variant` to the same violation.
fn must_find_two_writers(scenario: Workload, defect: Defect, variant: Variant, bound: usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let make = broken::<Loom>(defect);
    let sc = scenario.clone();
    let builder = budget::loom_builder(Some(bound), Some(bound));
    let result = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            workload::run::<Loom>(&sc, &make, None);
        })
    }));
    let n = runs.load(Ordering::Relaxed);
    let Err(panic) = result else {
        panic!(
            "{defect:?}: loom explored {n} executions (bound {bound}) without finding two writers"
        );
    };
    let msg = panic_message(&*panic);
    assert!(
        msg.contains(AT_MOST_ONE_WRITER),
        "{defect:?}: unexpected failure: {msg}"
    );
    let v = workload::take_violation(scenario.name).expect("the violation was recorded");
    println!(
        "CAUGHT {defect:?} ({variant}) with loom after {n} executions (bound {bound}):\n{}",
        format_trace(&v.trace)
    );
    // The replay: the recording is a path of the broken model that violates the property.
    let err = scenario
        .refinement(variant)
        .check(&v.trace)
        .expect_err("the model must also reach two writers on this path");
    assert_eq!(err.property, Some(AT_MOST_ONE_WRITER), "{err}");
    // The replay on the real code: std threads forced through the recorded order reproduce
    // the same recording, and the same failure.
    let replayed = catch_unwind(AssertUnwindSafe(|| {
        workload::replay_std(&scenario, &broken::<Std>(defect), &v.trace)
    }));
    let again = replayed.expect_err("the replay must fail again");
    assert!(
        panic_message(&*again).contains(AT_MOST_ONE_WRITER),
        "{defect:?}: replay failed differently"
    );
    let v2 = workload::take_violation(scenario.name).expect("the replay's violation");
    assert_eq!(v2.trace, v.trace, "{defect:?}: the replay took other steps");
}

/// LUCENE-5738 (no held set) under POSIX: the second thread's `F_SETLK` on its own descriptor
/// "succeeds" because POSIX locks belong to the process. Two threads, 1 round: unbounded would
/// do, but bound 1 already finds it (no preemption is needed at all).
#[test]
fn finds_lucene_5738_no_held_set_posix() {
    let sc = Workload::new(
        "loom LUCENE-5738",
        1,
        OsLockKind::Posix,
        vec![ThreadPlan::worker(0, 0, 1), ThreadPlan::worker(0, 1, 1)],
    );
    must_find_two_writers(sc, Defect::NoHeldSet, Variant::NativeNoHeldSet, 1);
}

/// LUCENE-6507 (held-set entry removed before close) under POSIX: p0.t0 releases
/// (unlock → held_remove | p0.t1 obtains | close drops p0's POSIX lock), then p1 obtains. Two
/// preemptions are needed (after p0.t0's held_remove, after p0.t1's obtain), so bound 2.
#[test]
fn finds_lucene_6507_remove_before_close_posix() {
    let sc = Workload::new(
        "loom LUCENE-6507",
        2,
        OsLockKind::Posix,
        vec![
            ThreadPlan::worker(0, 0, 1),
            ThreadPlan::worker(0, 1, 1),
            ThreadPlan::worker(1, 0, 1),
        ],
    );
    must_find_two_writers(sc, Defect::RemoveBeforeClose, Variant::Native410, 3);
}

/// LUCENE-5612 (delete on release), shown with OFD (any kind works): p1 opens the old file,
/// p0 releases and deletes it, obtains again on a fresh inode, p1 locks the orphan. Three
/// preemptions are needed (p0 mid-release, p1 after open, p0 after its second obtain).
#[test]
fn finds_lucene_5612_delete_on_release_ofd() {
    let sc = Workload::new(
        "loom LUCENE-5612",
        2,
        OsLockKind::Ofd,
        vec![ThreadPlan::worker(0, 0, 2), ThreadPlan::worker(1, 0, 1)],
    );
    must_find_two_writers(
        sc,
        Defect::DeleteOnRelease,
        Variant::NativeDeleteOnRelease,
        3,
    );
}

/// CarryOnAfterLockError (an OS error from the lock call taken as "acquired": "never carry on
/// unlocked", docs/protocol.md §1), shown with OFD (any kind works): the environment arms one
/// ENOLCK; whichever obtain takes it carries on without a lock, and the other process's obtain
/// succeeds (or already had). Two preemptions are needed (into the injecting thread before a
/// lock call, and into the other process while the first still "holds"): measured, bound 1
/// explores 57 executions without finding it, bound 2 finds it after 327.
#[test]
fn finds_carry_on_after_lock_error_ofd() {
    let sc = Workload::new(
        "loom carry on after lock error",
        2,
        OsLockKind::Ofd,
        vec![
            ThreadPlan::worker(0, 0, 1),
            ThreadPlan::worker(1, 0, 1),
            ThreadPlan {
                pid: 0,
                tid: 1,
                ops: vec![Op::Inject(Injection::Lock(libc::ENOLCK))],
            },
        ],
    );
    must_find_two_writers(
        sc,
        Defect::CarryOnAfterLockError,
        Variant::NativeCarryOnAfterLockError,
        2,
    );
}
