//! shuttle: OS errors from the lock, unlock and close calls, refined against the model.
//!
//! The real `NativeFsLockFactory` runs on the simulated OS while the environment arms errors
//! at random moments: `ENOLCK` and `EIO` from the next lock call (`try_lock`, or
//! `lock_blocking` in the blocking obtain), `EIO` from the next `unlock` and the next `close`
//! (`SimOs::inject`). Whichever call takes an error returns it, with the kernel effect the
//! model states (`model/src/file/kernel.rs`): a failed lock call takes no lock, a failed
//! unlock leaves the lock, a failed close releases the descriptor anyway. Every execution is
//! replayed through the model (`LockFails`, `UnlockFails`, `CloseFails`) with every `always`
//! property enforced: what the model proves for these faults (rows
//! `native_posix_os_errors_fail_closed_and_release_fully`,
//! `native_blocking_ofd_survives_os_errors`), the real code must do too. So the obtain's error
//! path (close, then leave the held set, then fail: never carry on unlocked) and the
//! error-tolerant release (every step runs, the first error is reported) are refined against
//! the model, not only pinned by a log comparison
//! (`impl/tests/file/native_steps_match_the_model.rs`).
//!
//! Each test also asserts that every injected error was taken in some executions, so the
//! error paths cannot be skipped unnoticed. The twin,
//! [`os_errors_catch_carry_on_after_lock_error`], runs the same scenario with the
//! `CarryOnAfterLockError` defect (a failed lock call taken as "acquired") and must find two
//! writers, so a check that let the error path through would be seen.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;
use lockwright_model::file::{Variant, AT_MOST_ONE_WRITER};
use lockwright_testkit::file::record::{format_trace, Call, Injection, Outcome, Step};
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, Checker, MakeFactory, Op, ThreadPlan, Workload};
use lockwright_testkit::schedules::panic_message;
use lockwright_testkit::{budget, Shuttle};
use shuttle::scheduler::RandomScheduler;
use shuttle::Runner;

/// Executions per scheduler. Measured about 0.3 ms per execution of these 6-thread scenarios
/// (each replayed twice through the model): 2,000 random + 2,000 PCT ≈ 1-2 s per test.
/// `LOCKWRIGHT_DEEP=1`: 50,000 each.
fn iterations() -> usize {
    if budget::deep() {
        50_000
    } else {
        2_000
    }
}

/// PCT depth 3: an error lands at one call of one thread, and what it exposes (another obtain
/// in the window it opens) is one or two more ordering constraints.
const PCT_DEPTH: usize = 3;
const SEED: u64 = 0x0e10_c0de;

/// How often each kind of failing call was taken, over all executions of a test.
#[derive(Default)]
struct Taken {
    lock: AtomicUsize,
    unlock: AtomicUsize,
    close: AtomicUsize,
}

impl Taken {
    fn count(&self, trace: &[Step]) {
        for s in trace {
            let slot = match (s.call, s.outcome) {
                (Call::TryLock(_) | Call::LockBlocking(_), Outcome::Errno(_)) => &self.lock,
                (Call::Unlock(_), Outcome::Errno(_)) => &self.unlock,
                (Call::Close, Outcome::Errno(_)) => &self.close,
                _ => continue,
            };
            slot.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn scenario(name: &'static str, kind: OsLockKind, round: Op) -> Workload {
    let mut threads = Vec::new();
    for p in 0..2 {
        for t in 0..2 {
            threads.push(ThreadPlan {
                pid: p,
                tid: t,
                ops: vec![round; 2],
            });
        }
    }
    threads.push(ThreadPlan {
        pid: 0,
        tid: 2,
        ops: vec![
            Op::Inject(Injection::Lock(libc::ENOLCK)),
            Op::Inject(Injection::Unlock),
            Op::Crash(1),
            Op::Restart(1),
        ],
    });
    threads.push(ThreadPlan {
        pid: 1,
        tid: 2,
        ops: vec![
            Op::Inject(Injection::Close),
            Op::Inject(Injection::Lock(libc::EIO)),
        ],
    });
    Workload::new(name, 2, kind, threads)
}

fn run(sc: Workload, variant: Variant) {
    let check = refine::checker(sc.refinement(variant));
    let taken = Arc::new(Taken::default());
    let body = {
        let (sc, taken) = (sc.clone(), Arc::clone(&taken));
        move || {
            let trace = workload::run::<Shuttle>(&sc, &workload::correct(), Some(&check));
            taken.count(&trace);
        }
    };
    let n = iterations();
    budget::shuttle_explore(SEED, n, PCT_DEPTH, body);
    let (lock, unlock, close) = (
        taken.lock.load(Ordering::Relaxed),
        taken.unlock.load(Ordering::Relaxed),
        taken.close.load(Ordering::Relaxed),
    );
    println!(
        "{}: {n} random + {n} PCT executions refined; failing calls taken: lock {lock}, unlock {unlock}, close {close}",
        sc.name
    );
    assert!(
        lock > 0 && unlock > 0 && close > 0,
        "an error path was never taken"
    );
}

#[test]
fn os_errors_posix_fail_closed_and_release_fully() {
    run(
        scenario("shuttle os errors posix", OsLockKind::Posix, Op::Round),
        Variant::Native,
    );
}

#[test]
fn os_errors_ofd_fail_closed_and_release_fully() {
    run(
        scenario("shuttle os errors ofd", OsLockKind::Ofd, Op::Round),
        Variant::Native,
    );
}

/// The blocking obtain: an error from `lock_blocking` (also while it waits) ends the wait,
/// closes, leaves the held set and fails.
#[test]
fn os_errors_blocking_obtain_posix() {
    run(
        scenario(
            "shuttle os errors blocking posix",
            OsLockKind::Posix,
            Op::BlockingRound,
        ),
        Variant::NativeBlocking,
    );
}

/// The twin: the same POSIX scenario, the factory built with `CarryOnAfterLockError`, each
/// execution checked against the broken variant's model (`native-carry-on-after-lock-error`).
/// The random scheduler (fixed seed, at most 2,000 executions; measured: found after 4) must
/// find two writers: the
/// thread whose lock call took the armed `ENOLCK` or `EIO` carries on as a writer with no lock
/// while another obtains. Either the harness's direct count or the replay through the broken
/// model sees it first (the model counts the writer from its failed lock call, the harness
/// from the obtain's return); either way the recording must be a path of the broken model
/// that ends in the same violation.
#[test]
fn os_errors_catch_carry_on_after_lock_error() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    let sc = scenario("shuttle os errors carry on", OsLockKind::Posix, Op::Round);
    let make: MakeFactory<Shuttle> = Arc::new(|sys, kind| {
        NativeFsLockFactory::with_system(sys, kind).with_defect(Defect::CarryOnAfterLockError)
    });
    let replay = sc.refinement(Variant::NativeCarryOnAfterLockError);
    let caught = Arc::new(Mutex::new(None));
    let check: Checker = {
        let caught = Arc::clone(&caught);
        Arc::new(move |trace: &[Step]| {
            replay.check(trace).map(drop).map_err(|d| {
                *caught.lock().unwrap_or_else(|p| p.into_inner()) = Some(trace.to_vec());
                d.to_string()
            })
        })
    };
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
    let n = runs.load(Ordering::Relaxed);
    let panic = found.expect_err("shuttle must find two writers with CarryOnAfterLockError");
    let msg = panic_message(&*panic);
    assert!(msg.contains(AT_MOST_ONE_WRITER), "{msg}");
    let trace = workload::take_violation(sc.name)
        .map(|v| v.trace)
        .or_else(|| caught.lock().unwrap_or_else(|p| p.into_inner()).take())
        .expect("the harness or the replay kept the recording");
    println!(
        "CarryOnAfterLockError: two writers after {n} executions:\n{}",
        format_trace(&trace)
    );
    let err = sc
        .refinement(Variant::NativeCarryOnAfterLockError)
        .check(&trace)
        .expect_err("the broken model reaches two writers on this path");
    assert_eq!(err.property, Some(AT_MOST_ONE_WRITER), "{err}");
}
