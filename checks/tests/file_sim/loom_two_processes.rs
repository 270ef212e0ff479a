//! loom, exhaustive: one thread in each of two processes race to obtain, validate, write and
//! release the lock, on the real `NativeFsLockFactory`, for every lock kind.
//!
//! Checks, on every execution: "at most one writer" (harness count), and the recording is a
//! path of the model (`native`, 2 processes × 1 thread) on which every `always` property holds.
//! Across processes it is the OS lock alone that excludes (each process has its own held set).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::kernel::LockKind;
use lockwright_model::file::Variant;
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, ThreadPlan, Workload};
use lockwright_testkit::{budget, Loom};

/// Preemption bound 4: unbounded is far beyond the budget here (a refused obtain across
/// processes is ~20 steps: held_insert, open, try_lock, probe, close, held_remove; the
/// unbounded run was stopped after 10 minutes). Measured for 2 processes × 1 round: bound 2 =
/// 246 executions, 3 = 1,892, 4 = 11,777 (1.2 s), 5 = 53,787 (5.5 s). Every known incident
/// needs at most 3 preemptions (see `file_sim/loom_defects.rs`), so 4 keeps a margin at ~1 s per kind.
/// `LOCKWRIGHT_DEEP=1`: bound 6 and two rounds per thread.
fn explore(scenario: Workload) -> usize {
    let check = refine::checker(scenario.refinement(Variant::Native));
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let builder = budget::loom_builder(Some(4), Some(6));
    let name = scenario.name;
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        workload::run::<Loom>(&scenario, &workload::correct(), Some(&check));
    });
    let n = runs.load(Ordering::Relaxed);
    println!(
        "{name}: {n} executions, preemption bound {:?}",
        if budget::deep() { 6 } else { 4 }
    );
    n
}

fn two_processes(name: &'static str, kind: OsLockKind) -> Workload {
    let rounds = if budget::deep() { 2 } else { 1 };
    Workload::new(
        name,
        2,
        kind,
        vec![
            ThreadPlan::worker(0, 0, rounds),
            ThreadPlan::worker(1, 0, rounds),
        ],
    )
}

#[test]
fn at_most_one_writer_two_processes_ofd() {
    assert!(explore(two_processes("loom two processes ofd", OsLockKind::Ofd)) > 1000);
}

#[test]
fn at_most_one_writer_two_processes_posix() {
    assert!(explore(two_processes("loom two processes posix", OsLockKind::Posix)) > 1000);
}

#[test]
fn at_most_one_writer_two_processes_flock() {
    assert!(explore(two_processes("loom two processes flock", OsLockKind::Flock)) > 1000);
}

/// `flock` on NFS: Linux emulates it with POSIX locks. Across processes it still excludes.
#[test]
fn at_most_one_writer_two_processes_nfs_flock() {
    let mut sc = two_processes("loom two processes nfs flock", OsLockKind::Flock);
    sc.flock_as = LockKind::NfsFlock;
    assert!(explore(sc) > 1000);
}
