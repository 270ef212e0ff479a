//! shuttle: one `NativeFsLockFactory` per process, shared by its threads, reached through two
//! spellings of the lock directory (`/sim/lock` and `/sim/link`, a symlink to it), refined
//! against the model.
//!
//! What this explores that the other suites do not: the factory's "resolved directories" cache
//! is shared between threads (one thread's obtain through the canonical spelling lets another
//! skip `canonicalize_dir`), the link spelling is resolved on every obtain and must land on the
//! same held-set key as the canonical one, and a lock file replaced under the cache makes it
//! resolve again. Under POSIX rules a held-set key that differed by spelling would open a
//! second descriptor in the process (LUCENE-5738), so POSIX is the kind checked.
//!
//! - Without faults every execution refines `native` with every `always` property enforced.
//! - With a replaced lock file (two writers by design: the newcomer locks the fresh inode),
//!   every execution refines `native` with "at most one valid writer" and "no stale lock".
//! - Each asserts that the cache answered an obtain (no `canonicalize_dir`) in some executions,
//!   so that path is not skipped unnoticed; every thread's plan has a round through each
//!   spelling.
//! - The twin: the same fault-free scenario with the `NoHeldSet` defect must give two writers,
//!   so a held set that failed to key both spellings as one would be seen. (A defect that keys
//!   the held set by the path as spelled does not exist yet; its model would be
//!   `native-two-held-sets`.)

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;
use lockwright_model::file::{
    Variant, ALWAYS, AT_MOST_ONE_VALID_WRITER, AT_MOST_ONE_WRITER, NO_STALE_LOCK,
};
use lockwright_testkit::file::record::{Call, Step, LOCK_LINK};
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, MakeFactory, Op, ThreadPlan, Workload};
use lockwright_testkit::schedules::panic_message;
use lockwright_testkit::{budget, Shuttle};
use shuttle::scheduler::RandomScheduler;
use shuttle::Runner;

/// Executions per scheduler: 2,000 random + 2,000 PCT (about a second per test on the 2-core
/// box). `LOCKWRIGHT_DEEP=1`: 50,000 each.
fn iterations() -> usize {
    if budget::deep() {
        50_000
    } else {
        2_000
    }
}

/// PCT depth 3: a thread through the link obtaining between the other thread's steps, and the
/// replace landing between a cached check and the open.
const PCT_DEPTH: usize = 3;
const SEED: u64 = 0x5a3e_d11c;

/// Two processes, one factory each; every thread makes one round through each spelling, in
/// opposite orders, so the cache is filled by either spelling first. `env` adds the
/// environment's ops in a thread of p1.
fn scenario(name: &'static str, env: Vec<Op>) -> Workload {
    let mut threads = vec![
        ThreadPlan {
            pid: 0,
            tid: 0,
            ops: vec![Op::Round, Op::RoundVia(LOCK_LINK)],
        },
        ThreadPlan {
            pid: 0,
            tid: 1,
            ops: vec![Op::RoundVia(LOCK_LINK), Op::Round],
        },
        ThreadPlan {
            pid: 1,
            tid: 0,
            ops: vec![Op::RoundVia(LOCK_LINK), Op::Round],
        },
    ];
    if !env.is_empty() {
        threads.push(ThreadPlan {
            pid: 1,
            tid: 1,
            ops: env,
        });
    }
    let mut sc = Workload::new(name, 2, OsLockKind::Posix, threads);
    sc.shared_factory = true;
    sc
}

/// Whether some obtain of the execution was answered by the shared cache: an obtain's setup
/// is `[CanonicalizeDir] Stat HeldInsert`, so a `HeldInsert` with no `CanonicalizeDir` of the
/// same thread since its previous one skipped the resolution. (Every round through the link
/// resolves: a non-canonical spelling is never remembered.)
fn cache_used(trace: &[Step]) -> bool {
    let mut resolving = std::collections::BTreeMap::new();
    let mut used = false;
    for s in trace {
        match s.call {
            Call::CanonicalizeDir => {
                resolving.insert(s.actor, true);
            }
            Call::HeldInsert => {
                used |= !resolving.remove(&s.actor).unwrap_or(false);
            }
            _ => {}
        }
    }
    used
}

fn explore(sc: Workload, enforce: &[&'static str]) {
    let check = refine::checker(sc.refinement(Variant::Native).enforcing(enforce));
    let (runs, cached) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let body = {
        let (sc, runs, cached) = (sc.clone(), Arc::clone(&runs), Arc::clone(&cached));
        move || {
            runs.fetch_add(1, Ordering::Relaxed);
            let trace = workload::run::<Shuttle>(&sc, &workload::correct(), Some(&check));
            if cache_used(&trace) {
                cached.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    budget::shuttle_explore(SEED, iterations(), PCT_DEPTH, body);
    let (runs, cached) = (runs.load(Ordering::Relaxed), cached.load(Ordering::Relaxed));
    println!(
        "{}: {runs} executions refined; the shared cache answered an obtain in {cached}",
        sc.name
    );
    assert!(cached > 0, "no obtain ever took the cached path");
}

#[test]
fn shared_factory_and_symlink_posix_keep_one_writer() {
    explore(scenario("shuttle shared factory", Vec::new()), &ALWAYS);
}

#[test]
fn shared_factory_and_symlink_posix_replaced_file_keeps_one_valid_writer() {
    explore(
        scenario("shuttle shared factory replace", vec![Op::ReplaceLockFile]),
        &[AT_MOST_ONE_VALID_WRITER, NO_STALE_LOCK],
    );
}

/// The twin: the fault-free scenario with `NoHeldSet` (LUCENE-5738). The random scheduler
/// (fixed seed, at most 2,000 executions; measured: found in the first) must find two writers in one process: the second
/// thread opens its own descriptor and POSIX grants its lock at once.
#[test]
fn shared_factory_and_symlink_catch_no_held_set_posix() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    let sc = scenario("shuttle shared factory no held set", Vec::new());
    let make: MakeFactory<Shuttle> = Arc::new(|sys, kind| {
        NativeFsLockFactory::with_system(sys, kind).with_defect(Defect::NoHeldSet)
    });
    let check = refine::checker(sc.refinement(Variant::NativeNoHeldSet));
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
    let panic = found.expect_err("shuttle must find two writers without a held set");
    let msg = panic_message(&*panic);
    assert!(msg.contains(AT_MOST_ONE_WRITER), "{msg}");
    println!(
        "NoHeldSet with a shared factory and two spellings: two writers after {} executions",
        runs.load(Ordering::Relaxed)
    );
}
