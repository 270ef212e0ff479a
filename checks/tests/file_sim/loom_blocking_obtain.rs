//! loom, exhaustive up to a bound: the real `obtain_blocking` (`held_insert_wait` →
//! `open_lock_file` → `lock_blocking` → `stat`, the re-check) on the simulated OS, every
//! execution refined against the model variant `native-blocking` with every `always` property
//! enforced (no fault here changes the file, so the re-check always passes; the retry is
//! `file_sim/shuttle_blocking_obtain_rechecks_a_replaced_file.rs`).
//!
//! The two waiting calls wait by retrying: one world-mutex acquisition per attempt (a loom
//! scheduling point), then `loom::thread::yield_now`, so loom runs another thread before the
//! waiter tries again; nothing is recorded until the attempt that completes
//! (`checks/testkit/src/file/system.rs`). The refinement replayer maps a completed
//! `held_insert_wait` to `HeldInsert` and `lock_blocking` to `TryLock`, which the model
//! enables only when they complete (the path is not in the held set; no other owner holds a
//! conflicting lock): a waiter that returned early, or a wait that should have ended and did
//! not (the run would not terminate), fails here.
//!
//! Scenarios: two threads of ONE process under POSIX (the second waits on the held set, never
//! in the kernel: a second descriptor's `F_SETLKW` would be granted at once, LUCENE-5738), and
//! two processes, one thread each, for every kind (the second waits in the kernel).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::Variant;
use lockwright_testkit::file::record::Call;
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, Op, ThreadPlan, Workload};
use lockwright_testkit::file::SimOs;
use lockwright_testkit::{budget, Loom};

/// Explores `scenario` with bound `bound`; returns the number of executions in which a
/// blocking call had to wait (at least one attempt found the path held or the lock taken,
/// and retried).
fn explore(scenario: Workload, bound: Option<usize>) -> usize {
    let check = refine::checker(scenario.refinement(Variant::NativeBlocking));
    let runs = Arc::new(AtomicUsize::new(0));
    let waits = Arc::new(AtomicUsize::new(0));
    let builder = budget::loom_builder(bound, Some(5));
    let (counter, waits_seen) = (Arc::clone(&runs), Arc::clone(&waits));
    let name = scenario.name;
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        let sim = SimOs::<Loom>::new(scenario.processes);
        let trace = workload::run_on(&sim, &scenario, &workload::correct(), Some(&check));
        // Every blocking obtain completes: two HeldInsertWait and two LockBlocking per run.
        let completed = trace
            .iter()
            .filter(|s| matches!(s.call, Call::HeldInsertWait | Call::LockBlocking(_)))
            .count();
        assert_eq!(completed, 4, "every blocking call returned once");
        if sim.retries() > 0 {
            waits_seen.fetch_add(1, Ordering::Relaxed);
        }
    });
    let (n, w) = (runs.load(Ordering::Relaxed), waits.load(Ordering::Relaxed));
    println!(
        "{name}: {n} executions ({w} in which a blocking call waited), preemption bound {:?}",
        builder.preemption_bound
    );
    assert!(n > 100, "{name}: {n} executions");
    w
}

fn blocking_worker(pid: u8, tid: u8) -> ThreadPlan {
    ThreadPlan {
        pid,
        tid,
        ops: vec![Op::BlockingRound],
    }
}

/// One process, two threads, POSIX: the second thread waits on the held set while the first
/// holds, with no descriptor of its own.
///
/// Budgets (all four tests): bound 3. A wait needs one preemption (the first thread holding
/// when the second starts its obtain) and a wake-up across a release a second; 3 leaves one
/// to spare for the ordering of the release's own steps against the retries. Measured (with
/// the re-check's `stat` after `lock_blocking`): 1,821 executions here, 2,565 per
/// two-process test (about 0.4 s each), of which 1,596 and 1,710 contain a wait (before the
/// re-check: 1,578 and 2,228). `LOCKWRIGHT_DEEP=1` (measured before the re-check): bound 5,
/// 36,956 and 82,017 executions (about 10 s
/// each), every one refined.
#[test]
fn blocking_obtain_one_process_posix_waits_on_the_held_set() {
    let sc = Workload::new(
        "loom blocking obtain, one process, posix",
        1,
        OsLockKind::Posix,
        vec![blocking_worker(0, 0), blocking_worker(0, 1)],
    );
    assert!(explore(sc, Some(3)) > 0);
}

/// Two processes, one thread each: the second waits in the kernel. Bound 3, as above.
fn two_processes(name: &'static str, kind: OsLockKind) -> usize {
    let sc = Workload::new(
        name,
        2,
        kind,
        vec![blocking_worker(0, 0), blocking_worker(1, 0)],
    );
    explore(sc, Some(3))
}

#[test]
fn blocking_obtain_two_processes_ofd_waits_in_the_kernel() {
    assert!(two_processes("loom blocking obtain, two processes, ofd", OsLockKind::Ofd) > 0);
}

#[test]
fn blocking_obtain_two_processes_posix_waits_in_the_kernel() {
    assert!(
        two_processes(
            "loom blocking obtain, two processes, posix",
            OsLockKind::Posix
        ) > 0
    );
}

#[test]
fn blocking_obtain_two_processes_flock_waits_in_the_kernel() {
    assert!(
        two_processes(
            "loom blocking obtain, two processes, flock",
            OsLockKind::Flock
        ) > 0
    );
}
