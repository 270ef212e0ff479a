//! loom, exhaustive: two semver-incompatible copies of lockwright in one process, each with its
//! own static held set (model variant `native-two-held-sets`; thread t0 runs one copy, t1 the
//! other).
//!
//! Under POSIX rules the held set is what keeps a process from opening a second descriptor on
//! a lock file it holds (LUCENE-5738). Two copies do not see each other's held set, so the
//! second copy's obtain opens a second descriptor, and its `F_SETLK` is granted at once: one
//! process owns both. loom must find the two writers (asserting "at most one writer"), the
//! recording must be a path of the model variant that reaches the same violation, and the
//! real code must reproduce it on std threads. The twin: under OFD the second descriptor
//! conflicts in the kernel, and every execution up to preemption bound 4 refines the model
//! with every property enforced.
//!
//! (lockwright's `System` is sealed, and `unstable-system` warns that a second held set is
//! LUCENE-5738 again; this is what that warning means, on the real protocol code.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::{Variant, AT_MOST_ONE_WRITER};
use lockwright_testkit::file::record::format_trace;
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, ThreadPlan, Workload};
use lockwright_testkit::schedules::panic_message;
use lockwright_testkit::{budget, Loom};

fn scenario(name: &'static str, kind: OsLockKind) -> Workload {
    let mut sc = Workload::new(
        name,
        1,
        kind,
        vec![ThreadPlan::worker(0, 0, 1), ThreadPlan::worker(0, 1, 1)],
    );
    sc.two_copies = true;
    sc
}

/// Bound 1: no preemption is needed at all (t0 obtains and is preempted while holding, or
/// simply runs second); loom finds it in its first few executions.
#[test]
fn two_copies_posix_give_two_writers_in_one_process() {
    let sc = scenario("loom two copies posix", OsLockKind::Posix);
    let runs = Arc::new(AtomicUsize::new(0));
    let (counter, s2) = (Arc::clone(&runs), sc.clone());
    let found = catch_unwind(AssertUnwindSafe(|| {
        budget::loom_builder(Some(1), Some(1)).check(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            workload::run::<Loom>(&s2, &workload::correct(), None);
        })
    }));
    let n = runs.load(Ordering::Relaxed);
    let panic = found.expect_err("loom must find two writers");
    let msg = panic_message(&*panic);
    assert!(msg.contains(AT_MOST_ONE_WRITER), "{msg}");
    let v = workload::take_violation(sc.name).expect("the violation was recorded");
    println!(
        "two copies of the crate, POSIX: two writers after {n} loom executions:\n{}",
        format_trace(&v.trace)
    );
    let err = sc
        .refinement(Variant::NativeTwoHeldSets)
        .check(&v.trace)
        .expect_err("the model reaches two writers on this path");
    assert_eq!(err.property, Some(AT_MOST_ONE_WRITER), "{err}");
    let replayed = catch_unwind(AssertUnwindSafe(|| {
        workload::replay_std(&sc, &workload::correct(), &v.trace)
    }));
    assert!(
        panic_message(&*replayed.expect_err("the replay fails again")).contains(AT_MOST_ONE_WRITER)
    );
    let again = workload::take_violation(sc.name).expect("the replay's violation");
    assert_eq!(again.trace, v.trace, "the replay took other steps");
}

/// Preemption bound 4 (`LOCKWRIGHT_DEEP=1`: 5). Unbounded is far beyond the budget: the
/// refused obtain (close, then leave the held set) doubles the steps after the conflict, and an
/// unbounded run was stopped after 10 minutes. Measured: bound 3 = 1,892 executions (0.2 s),
/// 4 = 11,777 (1.3 s), 5 = 53,787 (6.4 s): the same counts as `file_sim/loom_two_processes.rs` (two
/// parties, one round each), whose bound 4 holds every known incident of that shape.
#[test]
fn two_copies_ofd_keep_one_writer() {
    let sc = scenario("loom two copies ofd", OsLockKind::Ofd);
    let check = refine::checker(sc.refinement(Variant::NativeTwoHeldSets));
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let builder = budget::loom_builder(Some(4), Some(5));
    let bound = builder.preemption_bound;
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        workload::run::<Loom>(&sc, &workload::correct(), Some(&check));
    });
    println!(
        "two copies of the crate, OFD: {} executions (bound {bound:?}), every one refined",
        runs.load(Ordering::Relaxed)
    );
}
