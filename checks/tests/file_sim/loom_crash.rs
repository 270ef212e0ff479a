//! loom, exhaustive up to a preemption bound: a crash that loom can place before or after any
//! step of the protocol. Two processes, one worker each, plus a thread that kills process 0 and
//! restarts it; the restarted incarnation obtains again.
//!
//! Checks, on every execution: "at most one writer" (harness count), and the recording is a
//! path of the model (`native`, 2 processes, faults crash=1, restart=1) on which every
//! `always` property holds — in particular "no stale lock": once everyone is done (or dead),
//! a newcomer can obtain. A crashed process's threads stop: every later call of theirs fails
//! without effect (see `lockwright_checks::sim::os`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::Variant;
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, Op, ThreadPlan, Workload};
use lockwright_testkit::{budget, Loom};

/// Three threads (two workers, one fault thread whose restarted process then obtains) under
/// loom unbounded is far too large for the default run (3 threads of ~16-20 steps). One
/// preemption already puts the crash between any two steps of a worker; the rest of the bound
/// interleaves the workers around it. Measured: bound 2 = 2,629 executions (0.4 s), bound 3 =
/// 84,666 (13 s). Default: bound 3 for POSIX (the kind whose locks a crash-restart-reopen
/// sequence can trip), bound 2 for OFD. `LOCKWRIGHT_DEEP=1`: bound 4 for both.
fn explore(name: &'static str, kind: OsLockKind, bound: usize) -> usize {
    let scenario = Workload::new(
        name,
        2,
        kind,
        vec![
            ThreadPlan::worker(0, 0, 1),
            ThreadPlan::worker(1, 0, 1),
            ThreadPlan {
                pid: 0,
                tid: 1,
                ops: vec![Op::Crash(0), Op::Restart(0), Op::Round],
            },
        ],
    );
    let check = refine::checker(scenario.refinement(Variant::Native));
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let builder = budget::loom_builder(Some(bound), Some(4));
    let bound = builder.preemption_bound;
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        workload::run::<Loom>(&scenario, &workload::correct(), Some(&check));
    });
    let n = runs.load(Ordering::Relaxed);
    println!("{name}: {n} executions, preemption bound {bound:?}");
    n
}

#[test]
fn crash_anywhere_at_most_one_writer_no_stale_lock_ofd() {
    assert!(explore("loom crash ofd", OsLockKind::Ofd, 2) > 1000);
}

#[test]
fn crash_anywhere_at_most_one_writer_no_stale_lock_posix() {
    assert!(explore("loom crash posix", OsLockKind::Posix, 3) > 1000);
}
