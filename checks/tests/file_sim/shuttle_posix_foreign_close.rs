//! shuttle: a limit of POSIX locks that the 3×2 shuttle run found, pinned as a regression.
//!
//! Found by `file_sim/shuttle_three_processes.rs` (random scheduler, first run, step #49 of a 3×2 run
//! with all faults): with POSIX locks and foreign code that opens and closes the lock file in
//! BOTH processes, two writers pass `ensure_valid`: foreign code in p0 drops p0's lock, p1
//! obtains (p0's probe now sees p1: invalid), foreign code in p1 drops p1's lock, and now
//! neither probe sees a conflict. The model agrees (`native × posix, 2 processes × 1 thread,
//! foreign=2`: "at most one valid writer" VIOLATED). Not an implementation bug — nothing
//! in-process can stop foreign code from closing the file; it is why `docs/` recommends OFD.
//!
//! The finder asserts shuttle finds it (random scheduler, fixed seed) on the real code with the refinement
//! replayer enforcing "at most one valid writer"; the replay test pins the schedule.

use std::panic::{catch_unwind, AssertUnwindSafe};

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::{Variant, AT_MOST_ONE_VALID_WRITER};
use lockwright_testkit::file::refine;
use lockwright_testkit::file::workload::{self, Op, ThreadPlan, Workload};
use lockwright_testkit::schedules::panic_message;
use lockwright_testkit::Shuttle;
use shuttle::scheduler::{RandomScheduler, ReplayScheduler};
use shuttle::Runner;

fn body() -> impl Fn() + Send + Sync + 'static {
    let sc = Workload::new(
        "shuttle posix foreign close twice",
        2,
        OsLockKind::Posix,
        vec![
            ThreadPlan::worker(0, 0, 2),
            ThreadPlan::worker(1, 0, 2),
            ThreadPlan {
                pid: 0,
                tid: 1,
                ops: vec![Op::ForeignOpenClose(0), Op::ForeignOpenClose(1)],
            },
        ],
    );
    let check = refine::checker(
        sc.refinement(Variant::Native)
            .enforcing(&[AT_MOST_ONE_VALID_WRITER]),
    );
    move || {
        workload::run::<Shuttle>(&sc, &workload::correct(), Some(&check));
    }
}

/// shuttle's random scheduler, fixed seed, up to 20,000 executions: measured, it finds the
/// interleaving within the first few hundred (0.3 s). PCT does not (depth 2-4, 20,000 runs
/// each): the path needs p0 to stay between its try_lock and its release while p1 runs a
/// whole obtain between the two foreign closes, a long run of one thread that PCT's
/// priority scheme makes unlikely and uniform random choices do not.
#[test]
fn shuttle_finds_two_valid_writers_after_two_foreign_closes_posix() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    let runner = Runner::new(
        RandomScheduler::new_from_seed(0x0650_7f0c, 20_000),
        lockwright_testkit::schedules::persisting(),
    );
    let found = catch_unwind(AssertUnwindSafe(|| runner.run(body())));
    let panic = found.expect_err("shuttle must find two valid writers");
    let msg = panic_message(&*panic);
    assert!(msg.contains(AT_MOST_ONE_VALID_WRITER), "{msg}");
}

/// The pinned schedule: the one the finder above fails with (shuttle writes it into the test
/// kit's schedule directory, `lockwright_testkit::schedules`, and prints the file's path).
#[test]
#[should_panic(expected = "at most one valid writer")]
fn replay_two_valid_writers_after_two_foreign_closes_posix() {
    // A failing shuttle run persists its schedule into the binary's one schedule
    // directory: one at a time with the searches that read it (`schedules::serial`).
    let _serial = lockwright_testkit::schedules::serial();
    // Not `shuttle::replay`: its default config would be the one shuttle's panic hook keeps if
    // this test ran first in the binary (see `lockwright_testkit::schedules`).
    Runner::new(
        ReplayScheduler::new_from_encoded(PINNED),
        lockwright_testkit::schedules::persisting(),
    )
    .run(body());
}

const PINNED: &str = "9102a201bdd0ffd489a0e5fc1a800450266951a4248aa2284aa22c99a64d4a142551244552a4\n244992289124458a122552a24491a2449192249294249212254a24454a22254992240000";
