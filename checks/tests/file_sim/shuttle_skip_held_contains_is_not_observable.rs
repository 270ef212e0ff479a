//! shuttle, on the real code: the `SkipHeldContains` defect (`ensure_valid` does not check the
//! held set) cannot be told from the correct protocol, as the model says
//! (`model/tests/models/file/held_set_check_is_redundant.rs`: `native-skip-held-contains` has `native`'s
//! state space, state for state).
//!
//! The scenario is the one where the model shows the check order matters under POSIX (row
//! `native_posix_lost_lock_and_unlink_one_valid_writer`): foreign open-close in p0 (drops
//! its lock), an unlink of the lock file, and a second thread in each process. (A second lost
//! lock would make two valid writers by design: with no holder left, neither probe sees a
//! conflict; row `native_ofd_two_lost_leases_give_two_valid_writers`.) Every execution of the broken factory must refine the CORRECT model
//! (`native`) with "at most one valid writer" and "no stale lock" enforced (the faults make
//! two writers by design): whatever `ensure_valid` answered, the real check would have
//! answered too. This is a claim that the defect is invisible, so it needs its twin: the same
//! scenario, harness and checker must reject `SkipInodeCheck`, whose `ensure_valid` passes a
//! holder of an unlinked file.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;
use lockwright_model::file::{Variant, AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK};
use lockwright_testkit::file::record::{Call, Step};
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, MakeFactory, Op, ThreadPlan, Workload};
use lockwright_testkit::schedules::panic_message;
use lockwright_testkit::{budget, Shuttle};
use shuttle::scheduler::RandomScheduler;
use shuttle::Runner;

/// Executions per scheduler: 2,000 random + 2,000 PCT (1-2 s). `LOCKWRIGHT_DEEP=1`: 50,000.
fn iterations() -> usize {
    if budget::deep() {
        50_000
    } else {
        2_000
    }
}

/// PCT depth 3: a fault after an obtain, another process's obtain after it, the check after
/// that (the shape of every "valid writer" bug the suites found).
const PCT_DEPTH: usize = 3;
const SEED: u64 = 0x0be1_d5e7;

fn scenario(name: &'static str) -> Workload {
    Workload::new(
        name,
        2,
        OsLockKind::Posix,
        vec![
            ThreadPlan::worker(0, 0, 2),
            ThreadPlan::worker(0, 1, 1),
            ThreadPlan::worker(1, 0, 2),
            ThreadPlan {
                pid: 1,
                tid: 1,
                ops: vec![Op::ForeignOpenClose(0), Op::UnlinkLockFile],
            },
        ],
    )
}

fn factory(defect: Defect) -> MakeFactory<Shuttle> {
    Arc::new(move |sys, kind| NativeFsLockFactory::with_system(sys, kind).with_defect(defect))
}

/// Whether a writer was told "valid" in this execution (so the check was exercised).
fn passed(trace: &[Step]) -> bool {
    trace
        .iter()
        .any(|s| s.call == (Call::Validated { ok: true }))
}

#[test]
fn skip_held_contains_refines_the_correct_model_posix() {
    let sc = scenario("shuttle skip held contains");
    let check = refine::checker(
        sc.refinement(Variant::Native)
            .enforcing(&[AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK]),
    );
    let (runs, valid) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let body = {
        let (sc, runs, valid) = (sc.clone(), Arc::clone(&runs), Arc::clone(&valid));
        let make = factory(Defect::SkipHeldContains);
        move || {
            runs.fetch_add(1, Ordering::Relaxed);
            let trace = workload::run::<Shuttle>(&sc, &make, Some(&check));
            if passed(&trace) {
                valid.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    budget::shuttle_explore(SEED, iterations(), PCT_DEPTH, body);
    let (runs, valid) = (runs.load(Ordering::Relaxed), valid.load(Ordering::Relaxed));
    println!(
        "SkipHeldContains: {runs} executions refined native; a writer was told valid in {valid}"
    );
    assert!(
        valid > 0,
        "ensure_valid never passed: the check was not exercised"
    );
}

/// The twin: `SkipInodeCheck` in the same scenario, same checker. The random scheduler (fixed
/// seed, at most 2,000 executions; measured: found after 2) must produce a pass the correct
/// model rejects.
#[test]
fn same_check_rejects_skip_inode_check_posix() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    let sc = scenario("shuttle skip held contains twin");
    let check = refine::checker(
        sc.refinement(Variant::Native)
            .enforcing(&[AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK]),
    );
    let runs = Arc::new(AtomicUsize::new(0));
    let body = {
        let (sc, runs) = (sc.clone(), Arc::clone(&runs));
        let make = factory(Defect::SkipInodeCheck);
        move || {
            runs.fetch_add(1, Ordering::Relaxed);
            workload::run::<Shuttle>(&sc, &make, Some(&check));
        }
    };
    let found = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(
            RandomScheduler::new_from_seed(SEED, 2_000),
            lockwright_testkit::schedules::persisting(),
        )
        .run(body)
    }));
    let panic = found.expect_err("the correct model must reject SkipInodeCheck's pass");
    let msg = panic_message(&*panic);
    assert!(
        msg.contains("returned Ok, but the model says the lock was invalid")
            || msg.contains(AT_MOST_ONE_VALID_WRITER),
        "{msg}"
    );
    println!(
        "SkipInodeCheck in the same scenario: rejected after {} executions",
        runs.load(Ordering::Relaxed)
    );
}
