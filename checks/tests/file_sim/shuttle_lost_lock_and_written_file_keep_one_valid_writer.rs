//! shuttle: a lost lock (`LoseLock`: an NFSv4 lease lost, the kernel gives the lock away with
//! no call of the holder's) and a written-to lock file (`WriteLockFile`), refined against the
//! model, for the kinds `ensure_valid` can and cannot protect.
//!
//! - OFD: a lost lock lets a second process obtain: two writers by design (the harness's
//!   direct count stands down). The probe in `ensure_valid` sees the new holder, so "at most
//!   one valid writer" and "no stale lock" hold (model row
//!   `native_ofd_lost_lease_gives_two_writers_but_one_valid`), and every execution refines
//!   `native` with them enforced. A written lock file makes every later `ensure_valid` of a
//!   holder of that file fail (`NotEmpty`): asserted to happen in some executions. Its twin
//!   runs the same scenario with the `SkipInodeCheck` defect (no `fstat` length check): the
//!   replay through `native` must reject an `ensure_valid` that passed on a written file.
//! - flock: the lock cannot be probed, so a lost lock goes unnoticed: shuttle finds two valid
//!   writers, as the model predicts (row `native_flock_lost_lock_goes_unnoticed`). A limit of
//!   `flock`, not a bug (`docs/protocol.md` §6).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;
use lockwright_model::file::{Variant, AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK};
use lockwright_testkit::file::record::{Call, Outcome, Step};
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, MakeFactory, Op, ThreadPlan, Workload};
use lockwright_testkit::schedules::panic_message;
use lockwright_testkit::{budget, Shuttle};
use shuttle::scheduler::RandomScheduler;
use shuttle::Runner;

/// Executions per scheduler: 2,000 random + 2,000 PCT, about 0.3 ms each (1-2 s).
/// `LOCKWRIGHT_DEEP=1`: 50,000 each.
fn iterations() -> usize {
    if budget::deep() {
        50_000
    } else {
        2_000
    }
}

const SEED: u64 = 0x1057_1eae;

fn scenario(name: &'static str, kind: OsLockKind) -> Workload {
    Workload::new(
        name,
        2,
        kind,
        vec![
            ThreadPlan::worker(0, 0, 2),
            ThreadPlan::worker(0, 1, 2),
            ThreadPlan::worker(1, 0, 2),
            ThreadPlan {
                pid: 1,
                tid: 1,
                ops: vec![Op::LoseLock(0), Op::WriteLockFile, Op::Round],
            },
        ],
    )
}

/// An `ensure_valid` that failed only on the length: its `fstat` saw a written file.
fn refused_for_a_write(trace: &[Step]) -> bool {
    trace.windows(2).any(|w| {
        matches!(w[0].outcome, Outcome::Fstat(st) if st.written && st.nlink > 0)
            && w[1].actor == w[0].actor
            && w[1].call == (Call::Validated { ok: false })
    })
}

#[test]
fn lost_lock_and_written_file_ofd_keep_one_valid_writer() {
    let sc = scenario("shuttle lost lock ofd", OsLockKind::Ofd);
    let check = refine::checker(
        sc.refinement(Variant::Native)
            .enforcing(&[AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK]),
    );
    let (lost, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let body = {
        let (sc, lost, refused) = (sc.clone(), Arc::clone(&lost), Arc::clone(&refused));
        move || {
            let trace = workload::run::<Shuttle>(&sc, &workload::correct(), Some(&check));
            if trace
                .iter()
                .any(|s| matches!(s.call, Call::LoseLock(_)) && s.outcome == Outcome::Bool(true))
            {
                lost.fetch_add(1, Ordering::Relaxed);
            }
            if refused_for_a_write(&trace) {
                refused.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    let n = iterations();
    budget::shuttle_explore(SEED, n, 3, body);
    let (lost, refused) = (
        lost.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
    );
    println!(
        "{}: {n} random + {n} PCT executions refined; a lock lost in {lost}, a holder refused for a written file in {refused}",
        sc.name
    );
    assert!(lost > 0 && refused > 0);
}

/// flock cannot be probed: the random scheduler (fixed seed, at most 20,000 executions)
/// finds two writers that both pass `ensure_valid`: p0's lock lost, then p1's obtain.
/// Measured: found after 25 executions.
#[test]
fn lost_flock_lock_gives_two_valid_writers() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    let sc = scenario("shuttle lost lock flock", OsLockKind::Flock);
    let check = refine::checker(
        sc.refinement(Variant::Native)
            .enforcing(&[AT_MOST_ONE_VALID_WRITER]),
    );
    let runs = Arc::new(AtomicUsize::new(0));
    let body = {
        let (sc, runs) = (sc.clone(), Arc::clone(&runs));
        move || {
            runs.fetch_add(1, Ordering::Relaxed);
            workload::run::<Shuttle>(&sc, &workload::correct(), Some(&check));
        }
    };
    let found = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(
            RandomScheduler::new_from_seed(SEED, 20_000),
            lockwright_testkit::schedules::persisting(),
        )
        .run(body)
    }));
    let panic = found.expect_err("shuttle must find two valid writers");
    let msg = panic_message(&*panic);
    assert!(msg.contains(AT_MOST_ONE_VALID_WRITER), "{msg}");
    println!(
        "flock, lost lock: two valid writers after {} executions",
        runs.load(Ordering::Relaxed)
    );
}

/// The twin of the written-file half: the same OFD scenario with `SkipInodeCheck`, whose
/// `ensure_valid` never reads the length. The random scheduler (fixed seed, at most 2,000
/// executions; measured: found after 1) must produce a recording in which a holder is told "valid" on a written file,
/// and the replay through `native` must reject exactly that pass.
#[test]
fn written_file_catches_skip_inode_check_ofd() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    let sc = scenario("shuttle written file skip inode check", OsLockKind::Ofd);
    let make: MakeFactory<Shuttle> = Arc::new(|sys, kind| {
        NativeFsLockFactory::with_system(sys, kind).with_defect(Defect::SkipInodeCheck)
    });
    let check = refine::checker(sc.refinement(Variant::Native));
    let runs = Arc::new(AtomicUsize::new(0));
    let body = {
        let (sc, runs) = (sc.clone(), Arc::clone(&runs));
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
    let panic = found.expect_err("the replay must reject a pass on a written file");
    let msg = panic_message(&*panic);
    assert!(
        msg.contains("returned Ok, but the model says the lock was invalid"),
        "{msg}"
    );
    // The defect makes no `fstat`, so the recording shows the write, not the length.
    assert!(
        msg.contains("WriteLockFile -> Bool(true)"),
        "not the written file: {msg}"
    );
    println!(
        "SkipInodeCheck, written file: rejected after {} executions",
        runs.load(Ordering::Relaxed)
    );
}
