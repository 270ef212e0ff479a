//! Teeth for `ensure_valid`'s check order, loom: the `ProbeLast` defect (this project's first
//! order, held set → `fstat` → `stat` → probe) must be caught breaking "at most one valid
//! writer", replayed through the model of the same broken variant (`native-probe-last`), and
//! reproduced on the real code (std threads forced through the recorded order).
//!
//! The race, as shuttle's refinement replay first found it (`docs/checks.md`, "What the suites
//! found"): p0 holds; foreign code in p0 drops its POSIX lock; p1 obtains; p0's `ensure_valid`
//! passes the held-set, `fstat` and `stat` checks (its lock is not valid: p1 holds the file);
//! the file is unlinked; p1 releases and obtains again, on a fresh file; p0's probe finds no
//! conflict on the orphan and `ensure_valid` returns `Ok`. At no moment of the call was p0's
//! lock valid, and p1 is the valid writer: two writers that checked and were told "valid".
//!
//! Why loom, not shuttle: the race needs p0 to stop between two of its system calls while the
//! file is unlinked under p1 and p1 releases and obtains again — ordering constraints at exact
//! steps, which shuttle's random and PCT schedulers did not hit in 50,000 executions of this
//! scenario or of the 3 × 2 one (where the original find was one run in thousands). With the
//! faults carried by p1's own thread (`[ForeignOpenClose(0), RoundThen(UnlinkLockFile),
//! Round]`: the operator's unlink lands while p1 holds), two threads need exactly four
//! preemptions, and loom explores every interleaving up to that bound. (With the unlink in a
//! third thread loom needed 460,449 executions, 3.5 minutes.)
//!
//! What counts as caught: the recording is a path of the broken model that violates "at most
//! one valid writer" (the blind pass counts as valid: `Thread::blind`), AND the correct model
//! rejects it (the linearization of the correct `ensure_valid` finds no valid moment). The
//! correct factory, in the same scenario and bound, is checked too: every execution refines
//! `native` with "at most one valid writer" enforced.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;
use lockwright_model::file::{Variant, AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK};
use lockwright_testkit::file::record::{format_trace, Step};
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{
    self, Checker, Fault, MakeFactory, Op, ThreadPlan, Workload,
};
use lockwright_testkit::{budget, Loom, Runtime, Std};

fn scenario() -> Workload {
    Workload::new(
        "loom probe last",
        2,
        OsLockKind::Posix,
        vec![
            ThreadPlan::worker(0, 0, 1),
            ThreadPlan {
                pid: 1,
                tid: 0,
                ops: vec![
                    Op::ForeignOpenClose(0),
                    Op::RoundThen(Fault::UnlinkLockFile),
                    Op::Round,
                ],
            },
        ],
    )
}

fn factory<R: Runtime>(defect: Option<Defect>) -> MakeFactory<R> {
    Arc::new(move |sys, kind| {
        let f = NativeFsLockFactory::with_system(sys, kind);
        match defect {
            Some(d) => f.with_defect(d),
            None => f,
        }
    })
}

/// The recording of the execution the checker rejected.
static CAUGHT: Mutex<Option<Vec<Step>>> = Mutex::new(None);

/// Rejects an execution iff the broken model reaches "at most one valid writer" on it and the
/// correct model does not accept it.
fn caught_checker(sc: &Workload) -> Checker {
    let broken = sc
        .refinement(Variant::NativeProbeLast)
        .enforcing(&[AT_MOST_ONE_VALID_WRITER]);
    let correct = sc.refinement(Variant::Native).enforcing(&[]);
    Arc::new(move |trace: &[Step]| {
        let Err(d) = broken.check(trace) else {
            return Ok(());
        };
        if d.property != Some(AT_MOST_ONE_VALID_WRITER) {
            return Err(format!("not a path of the broken model: {d}"));
        }
        if correct.check(trace).is_ok() {
            return Ok(()); // a violation the correct protocol has too (none here)
        }
        *CAUGHT.lock().unwrap_or_else(|p| p.into_inner()) = Some(trace.to_vec());
        Err(d.to_string())
    })
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Preemption bound 4: the race needs exactly four (p0 after its lock call; p1 while it holds;
/// p0 after its `stat` check; p1 after its second obtain), so loom finds it at the first bound
/// that contains it. Measured: caught after 26,894 executions (about 8 s); the probe-first twin
/// explores all 60,981 (about 10 s). `LOOM_MAX_PREEMPTIONS` overrides it.
const BOUND: usize = 4;

#[test]
fn loom_finds_probe_last_two_valid_writers_posix() {
    let sc = scenario();
    let runs = Arc::new(AtomicUsize::new(0));
    let (counter, s2) = (Arc::clone(&runs), sc.clone());
    let check = caught_checker(&sc);
    let make = factory::<Loom>(Some(Defect::ProbeLast));
    let builder = budget::loom_builder(Some(BOUND), Some(BOUND));
    let found = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            workload::run::<Loom>(&s2, &make, Some(&check));
        })
    }));
    let n = runs.load(Ordering::Relaxed);
    let Err(panic) = found else {
        panic!("ProbeLast: loom explored {n} executions (bound {BOUND}) without catching it");
    };
    let msg = panic_message(&*panic);
    assert!(
        msg.contains(AT_MOST_ONE_VALID_WRITER),
        "unexpected failure: {msg}"
    );
    let trace = CAUGHT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .expect("the checker kept the recording");
    println!(
        "CAUGHT ProbeLast (native-probe-last) with loom after {n} executions (bound {BOUND}):\n{}",
        format_trace(&trace)
    );
    // The replay through the broken model: a path, ending in two valid writers.
    let err = sc
        .refinement(Variant::NativeProbeLast)
        .enforcing(&[AT_MOST_ONE_VALID_WRITER])
        .check(&trace)
        .expect_err("the broken model reaches two valid writers");
    assert_eq!(err.property, Some(AT_MOST_ONE_VALID_WRITER), "{err}");
    // Not a path of the correct model: its ensure_valid could not have passed.
    let err = sc
        .refinement(Variant::Native)
        .check(&trace)
        .expect_err("the correct model rejects the pass");
    assert!(
        err.reason
            .contains("returned Ok, but the model says the lock was invalid"),
        "{err}"
    );
    // The regression: the real code, forced through the recorded order on std threads,
    // takes the same steps.
    let again = workload::replay_std(&sc, &factory::<Std>(Some(Defect::ProbeLast)), &trace);
    assert_eq!(again, trace, "the replay on the real code took other steps");
}

/// Twin: the correct order (probe first) in the same scenario and bound: every execution is a
/// path of `native` on which "at most one valid writer" and "no stale lock" hold (the faults
/// make two writers by design, so the other two properties are not enforced).
#[test]
fn loom_probe_first_keeps_one_valid_writer_posix() {
    let sc = scenario();
    let check = refine::checker(
        sc.refinement(Variant::Native)
            .enforcing(&[AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK]),
    );
    let runs = Arc::new(AtomicUsize::new(0));
    let (counter, s2) = (Arc::clone(&runs), sc.clone());
    let make = factory::<Loom>(None);
    budget::loom_builder(Some(BOUND), Some(BOUND)).check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        workload::run::<Loom>(&s2, &make, Some(&check));
    });
    println!(
        "probe first: {} executions (bound {BOUND}), every one refined",
        runs.load(Ordering::Relaxed)
    );
}
