//! shuttle, randomized: the real `SimpleFsLockFactory` (create-exclusive lock file with a
//! holder record) on the simulated OS, under shuttle's random and PCT schedulers, every run
//! replayed through the model's `simple` variant (`refine.rs`, "SimpleFs").
//!
//! Each test is named after the property it shows, and is the twin of the model's verdict for
//! `simple` with the same faults (`docs/results.md`, `simple`; each test also asks the model
//! checker):
//!
//! - no faults: "at most one writer" holds (the harness's direct count and the model's four
//!   `always` properties on every state), and every run is a model path;
//! - crash: a crashed holder's file stays; no live thread ever obtains again (the model's "no
//!   stale lock" violation), and the "held" error names the dead pid as not running;
//! - unlink (an operator deletes the lock file): two writers, as the model predicts for
//!   `simple` with `unlink=1`, on a path the model also takes;
//! - the check-then-unlink window: the real release is `stat → read_file → unlink`, the model's
//!   one atomic step; an unlink fault between the check and the unlink leaves the model, and
//!   the replayer names it.
//!
//! Schedulers use fixed seeds, so the "found at least once" assertions are deterministic.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lockwright::file::sys::OsLockKind;
use lockwright_model::checker;
use lockwright_model::file::kernel::{FsError, LockKind, Pid};
use lockwright_model::file::{
    self as model, Faults, Variant, AT_MOST_ONE_VALID_WRITER, AT_MOST_ONE_WRITER, NO_STALE_LOCK,
    WRITES_ARE_EXCLUSIVE,
};
use lockwright_testkit::file::record::SIM_HOST;
use lockwright_testkit::file::refine::{Divergence, Refinement, CHECK_THEN_UNLINK_WINDOW};
use lockwright_testkit::file::workload::{self, Op, ThreadPlan, Workload};
use lockwright_testkit::file::{Actor, Call, Outcome, Step};
use lockwright_testkit::Shuttle;
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::Runner;

/// Executions per scheduler (random, then PCT) per test: `default` in the default run,
/// 100,000 with `LOCKWRIGHT_DEEP=1`. Each test states why its default is what it is; together
/// they stay under 10 s on the shared 2-core dev machine.
fn iterations(default: usize) -> usize {
    if lockwright_testkit::budget::deep() {
        100_000
    } else {
        default
    }
}

/// PCT depth 3, as in `file_sim/shuttle_three_processes.rs`: the stale lock and two writers after an
/// unlink need one or two ordering constraints, the check-then-unlink window two or three
/// (check before the fault, the fault before a create, the create before the late unlink);
/// its deepest flavour (a further obtain after the late unlink) needs four, which the random
/// scheduler run of the same test covers.
const PCT_DEPTH: usize = 3;

/// Runs `body` under the random scheduler, then PCT, `n` executions each, fixed seed.
fn explore(name: &str, seed: u64, n: usize, body: impl Fn() + Send + Sync + Clone + 'static) {
    let t = Instant::now();
    Runner::new(
        RandomScheduler::new_from_seed(seed, n),
        lockwright_testkit::schedules::persisting(),
    )
    .run(body.clone());
    Runner::new(
        PctScheduler::new_from_seed(seed, PCT_DEPTH, n),
        lockwright_testkit::schedules::persisting(),
    )
    .run(body);
    println!(
        "{name}: {n} random + {n} PCT executions in {:?}",
        t.elapsed()
    );
}

/// A SimpleFs scenario (the lock kind is unused: SimpleFs takes no OS lock).
fn simple(name: &'static str, processes: u8, threads: Vec<ThreadPlan>) -> Workload {
    Workload::new(name, processes, OsLockKind::Flock, threads)
}

fn workers(processes: u8, threads: u8, rounds: usize) -> Vec<ThreadPlan> {
    let mut v = Vec::new();
    for p in 0..processes {
        for t in 0..threads {
            v.push(ThreadPlan::worker(p, t, rounds));
        }
    }
    v
}

/// A thread that only injects `ops` (its pid/tid are never used: it runs no round).
fn env(ops: Vec<Op>) -> ThreadPlan {
    ThreadPlan {
        pid: 0,
        tid: 9,
        ops,
    }
}

fn refinement(sc: &Workload) -> Refinement {
    sc.refinement(Variant::Simple)
}

fn thread_of(step: &Step) -> Option<(Pid, u8)> {
    match step.actor {
        Actor::Thread { pid, tid } if step.outcome != Outcome::Dead => Some((pid, tid)),
        _ => None,
    }
}

/// The harness's direct count, from a recording: the first `Obtained { ok: true }` at which
/// two threads of live processes have obtained and not begun to release.
fn direct_two_writers(trace: &[Step]) -> Option<usize> {
    let mut writers: Vec<(Pid, u8)> = Vec::new();
    for (i, s) in trace.iter().enumerate() {
        if let Call::Crash(p) = s.call {
            writers.retain(|&(q, _)| q != p);
        }
        let Some(me) = thread_of(s) else { continue };
        match s.call {
            Call::Obtained { ok: true } => {
                writers.push(me);
                if writers.len() > 1 {
                    return Some(i);
                }
            }
            Call::Release => writers.retain(|&w| w != me),
            _ => {}
        }
    }
    None
}

fn count(trace: &[Step], pred: impl Fn(&Step) -> bool) -> usize {
    trace.iter().filter(|s| pred(s)).count()
}

/// What the model checker says about `simple` with these parties and faults.
fn model_violations(processes: u8, threads: u8, faults: Faults) -> Vec<&'static str> {
    let sc = model::Scenario::new(Variant::Simple, LockKind::Flock)
        .with_parties(processes, threads)
        .with_faults(faults);
    checker::check(&sc).violated()
}

// ---------------------------------------------------------------------------------------------
// (a) no faults
// ---------------------------------------------------------------------------------------------

fn no_faults(name: &'static str, processes: u8, seed: u64, n: usize) {
    let sc = simple(name, processes, workers(processes, 2, 2));
    let check = lockwright_testkit::file::refine::checker(refinement(&sc));
    // Per test (the two tests of this kind run in parallel).
    let refused = Arc::new(AtomicUsize::new(0));
    let writes = Arc::new(AtomicUsize::new(0));
    let (a_refused, a_writes) = (Arc::clone(&refused), Arc::clone(&writes));
    explore(name, seed, n, move || {
        // The harness's direct "at most one writer" count panics inside the run; the checker
        // replays the recording through `simple` with all four `always` properties.
        let run = workload::run_simple::<Shuttle>(&sc, Some(&check));
        // Nobody died: no "held" error may call its holder dead.
        for msg in run.obtain_errors.values() {
            assert!(!msg.contains("NOT running"), "{msg}");
        }
        a_refused.fetch_add(run.obtain_errors.len(), Ordering::Relaxed);
        a_writes.fetch_add(
            count(&run.trace, |s| s.call == Call::Write),
            Ordering::Relaxed,
        );
        // Without faults the check-then-unlink window cannot open: every release unlinks.
        assert_eq!(
            count(&run.trace, |s| s.call == Call::Closed { ok: false }),
            0
        );
    });
    // Not vacuous: there was contention and there were writes.
    assert!(refused.load(Ordering::Relaxed) > 0, "no contention seen");
    assert!(writes.load(Ordering::Relaxed) > 0, "no write seen");
}

/// 2 processes × 2 threads × 2 rounds (≈ 60 steps a run). Budget 2,500 + 2,500, as in
/// `file_sim/shuttle_three_processes.rs`: measured ≈ 0.15 ms an execution with both refinement
/// passes, ≈ 0.7 s; the model's whole `simple` 2×2 space has 17 states, so more runs mostly
/// repeat interleavings the model already covers.
#[test]
fn at_most_one_writer_two_processes_every_run_refines() {
    no_faults(
        "shuttle simple 2x2 no faults",
        2,
        0x51_0001,
        iterations(2_500),
    );
}

/// 3 processes × 2 threads × 2 rounds (≈ 90 steps a run): the size of the native 3×2 suite.
/// Budget 2,500 + 2,500 (≈ 1 s measured).
#[test]
fn at_most_one_writer_three_processes_every_run_refines() {
    no_faults(
        "shuttle simple 3x2 no faults",
        3,
        0x51_0002,
        iterations(2_500),
    );
}

// ---------------------------------------------------------------------------------------------
// (b) crash: the stale lock
// ---------------------------------------------------------------------------------------------

static B_STALE: AtomicUsize = AtomicUsize::new(0);
static B_NOT_STALE: AtomicUsize = AtomicUsize::new(0);
static B_NAMED_DEAD: AtomicUsize = AtomicUsize::new(0);
static B_FIRST_STALE: Mutex<Option<Vec<Step>>> = Mutex::new(None);

/// Who created the file at the lock path just before step `at` (`None`: no file).
fn owner_before(trace: &[Step], at: usize) -> Option<Pid> {
    let mut owner = None;
    for s in &trace[..at] {
        match (s.call, s.outcome) {
            (Call::CreateExclusive, Outcome::Opened(_)) => owner = thread_of(s).map(|(p, _)| p),
            (Call::Unlink | Call::UnlinkLockFile, Outcome::Done) => owner = None,
            _ => {}
        }
    }
    owner
}

fn crash_scenario() -> Workload {
    let mut threads = workers(2, 2, 2);
    threads.push(env(vec![Op::Crash(0)]));
    simple("shuttle simple 2x2 crash", 2, threads)
}

/// The twin of `file_sim/loom_crash.rs` for SimpleFs, and of the model's `simple` row with a crash
/// ("no stale lock" VIOLATED): when p0 dies while the file at the path is its own (it holds
/// the lock, or is between its release's check and its unlink), the file stays forever, no
/// live thread obtains again, and every later "held" error names pid 0 as NOT running (without
/// breaking the lock). When p0 dies without owning the file, everything goes on and all four
/// properties hold. Every run is a model path either way: its whole recording replays with the
/// three safety properties enforced, and with all four the replay stops at exactly "no stale
/// lock" iff the lock is stale.
///
/// Budget 2,500 + 2,500 (≈ 65 steps a run, ≈ 0.9 s measured): p0 owns the file at the crash in
/// about half of the runs, so both branches are exercised a thousand times or more.
#[test]
fn crashed_holder_leaves_a_stale_lock_no_live_thread_obtains_again() {
    let sc = crash_scenario();
    let safety = refinement(&sc).enforcing(&[
        AT_MOST_ONE_WRITER,
        AT_MOST_ONE_VALID_WRITER,
        WRITES_ARE_EXCLUSIVE,
    ]);
    let all = refinement(&sc);
    B_STALE.store(0, Ordering::Relaxed);
    B_NOT_STALE.store(0, Ordering::Relaxed);
    B_NAMED_DEAD.store(0, Ordering::Relaxed);
    let body = {
        let sc = sc.clone();
        move || {
            let run = workload::run_simple::<Shuttle>(&sc, None);
            let trace = &run.trace;
            let rec = || lockwright_testkit::file::record::format_trace(trace);
            if let Err(d) = safety.check(trace) {
                panic!("{d}\nrecording:\n{}", rec());
            }
            let crash = trace
                .iter()
                .position(|s| s.call == Call::Crash(0))
                .expect("the crash step");
            let stale = owner_before(trace, crash) == Some(0);
            match all.check(trace) {
                Ok(_) => assert!(!stale, "stale lock, but the model saw none\n{}", rec()),
                Err(d) => assert!(
                    stale && d.property == Some(NO_STALE_LOCK),
                    "{d}\nrecording:\n{}",
                    rec()
                ),
            }
            if !stale {
                B_NOT_STALE.fetch_add(1, Ordering::Relaxed);
                return;
            }
            B_STALE.fetch_add(1, Ordering::Relaxed);
            B_FIRST_STALE
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(|| trace.clone());
            // No live thread obtains after the crash, and the file is p0's to the end.
            let later = &trace[crash..];
            assert_eq!(
                count(later, |s| thread_of(s).is_some()
                    && s.call == Call::Obtained { ok: true }),
                0,
                "a thread obtained a stale lock\n{}",
                rec()
            );
            assert_eq!(owner_before(trace, trace.len()), Some(0), "{}", rec());
            // Every refused obtain that began after the crash names pid 0 as not running.
            let mut began: BTreeMap<(Pid, u8), usize> = BTreeMap::new();
            for (i, s) in trace.iter().enumerate() {
                let Some(me) = thread_of(s) else { continue };
                if s.call == Call::CreateExclusive {
                    began.insert(me, i);
                }
                if s.call == (Call::Obtained { ok: false }) && began.get(&me) > Some(&crash) {
                    let msg = &run.obtain_errors[&i];
                    assert!(
                        msg.contains(&format!("pid 0 on host {SIM_HOST}"))
                            && msg.contains("that process is NOT running")
                            && msg.contains("delete"),
                        "step #{i}: {msg}\n{}",
                        rec()
                    );
                    B_NAMED_DEAD.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    };
    explore(sc.name, 0x51_0003, iterations(2_500), body);
    let (stale, fine, named) = (
        B_STALE.load(Ordering::Relaxed),
        B_NOT_STALE.load(Ordering::Relaxed),
        B_NAMED_DEAD.load(Ordering::Relaxed),
    );
    println!("stale lock in {stale} runs, none in {fine}; {named} held errors named pid 0 dead");
    assert!(stale > 0 && fine > 0 && named > 0);
    // The model checker agrees (docs/results.md, `simple` × crash): "no stale lock" is violated.
    assert!(model_violations(
        2,
        2,
        Faults {
            crash: 1,
            ..Faults::NONE
        }
    )
    .contains(&NO_STALE_LOCK));
    // The real code reproduces a stale-lock recording step for step on std threads.
    let first = B_FIRST_STALE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .expect("a stale run");
    let again = workload::replay_simple_std(&sc, &first);
    assert_eq!(again.trace, first);
}

// ---------------------------------------------------------------------------------------------
// (c) an operator deletes the lock file: two writers
// ---------------------------------------------------------------------------------------------

static C_TWO: AtomicUsize = AtomicUsize::new(0);
static C_WINDOW: AtomicUsize = AtomicUsize::new(0);
static C_FIRST_TWO: Mutex<Option<Vec<Step>>> = Mutex::new(None);

fn unlink_scenario() -> Workload {
    let mut threads = workers(2, 2, 2);
    threads.push(env(vec![Op::UnlinkLockFile]));
    simple("shuttle simple 2x2 unlink", 2, threads)
}

/// The model's verdict for `simple` with `unlink=1` (docs/model.md, docs/results.md): "at most
/// one writer" VIOLATED — deleting the file of a live holder lets a second writer create a new
/// one. Shuttle finds two writers by the harness's own direct count (which stands down after
/// the unlink only to not panic), and each such run is a model path up to the model's "at most
/// one writer" violation, at or before the step where the harness counts two. Any other run is
/// a model path with all four properties, or — the unlink landed inside a release's check and
/// unlink — the named check-then-unlink window (see the next test); nothing else.
///
/// Budget 2,500 + 2,500 (≈ 60 steps a run, ≈ 0.7 s measured): the unlink hits a holder in
/// most runs (two writers in 2,185 of the 5,000 runs at this seed), the window in 65.
#[test]
fn operator_unlink_gives_two_writers_as_the_model_predicts() {
    let sc = unlink_scenario();
    let all = refinement(&sc);
    C_TWO.store(0, Ordering::Relaxed);
    C_WINDOW.store(0, Ordering::Relaxed);
    let body = {
        let sc = sc.clone();
        move || {
            let run = workload::run_simple::<Shuttle>(&sc, None);
            let trace = &run.trace;
            let rec = || lockwright_testkit::file::record::format_trace(trace);
            let verdict = all.check(trace);
            if let Err(d) = &verdict {
                if d.is_named(CHECK_THEN_UNLINK_WINDOW) {
                    C_WINDOW.fetch_add(1, Ordering::Relaxed);
                } else {
                    assert_eq!(
                        d.property,
                        Some(AT_MOST_ONE_WRITER),
                        "{d}\nrecording:\n{}",
                        rec()
                    );
                }
            }
            if let Some(at) = direct_two_writers(trace) {
                let d: &Divergence = verdict.as_ref().expect_err("two writers are a violation");
                assert!(
                    d.property == Some(AT_MOST_ONE_WRITER) && d.step <= at,
                    "harness counts two writers at #{at}; replay: {d}\n{}",
                    rec()
                );
                C_TWO.fetch_add(1, Ordering::Relaxed);
                C_FIRST_TWO
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert_with(|| trace.clone());
            }
        }
    };
    explore(sc.name, 0x51_0004, iterations(2_500), body);
    let (two, window) = (
        C_TWO.load(Ordering::Relaxed),
        C_WINDOW.load(Ordering::Relaxed),
    );
    println!("two writers in {two} runs; check-then-unlink window in {window} runs");
    assert!(two > 0, "shuttle found no two writers");
    // The model checker's verdict for the same shape.
    assert!(model_violations(
        2,
        2,
        Faults {
            unlink: 1,
            ..Faults::NONE
        }
    )
    .contains(&AT_MOST_ONE_WRITER));
    // Replayable: the model path above, and the real code on std threads reproduces the
    // recording step for step.
    let first = C_FIRST_TWO
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .expect("a two-writer run");
    let again = workload::replay_simple_std(&sc, &first);
    assert_eq!(again.trace, first);
    println!(
        "first two-writer run:\n{}",
        lockwright_testkit::file::record::format_trace(&first)
    );
}

// ---------------------------------------------------------------------------------------------
// (d) the check-then-unlink window
// ---------------------------------------------------------------------------------------------

static D_ENOENT: Mutex<Option<Vec<Step>>> = Mutex::new(None);
static D_STOLEN: Mutex<Option<Vec<Step>>> = Mutex::new(None);
static D_STOLEN_TWO: Mutex<Option<Vec<Step>>> = Mutex::new(None);

/// The model's simple release checks the path and unlinks in ONE atomic step; the real
/// `close` is `stat → read_file → unlink`. Between the check and the unlink, only a fault can
/// change the path (every other party's create fails while our file exists, and every other
/// release unlinks only its own file), so this window is invisible without unlink/replace
/// faults (test (a) would fail otherwise) and real with them. An operator's unlink there:
///
/// - "enoent": the holder's unlink finds no file; its `close` returns an I/O error and
///   deletes nothing (the model's `ReleaseRefused` would be the same outcome, but the model
///   takes no such step after a passed check);
/// - "stolen": another process creates a new lock file in between and the late unlink deletes
///   THAT holder's file; the model's "at most one writer" is already violated earlier in such
///   a run (the releasing holder is still a writer in the model when the second one creates),
///   so the enforced replay reports that, and replayed with no property enforced it reaches
///   the window;
/// - "stolen, then two writers": after the late unlink, a third obtain succeeds while the
///   victim still holds (and writes): the late unlink acts as a second operator unlink, which
///   the model's run (`unlink=1`) does not contain. Found at this seed, e.g.: p0 checks its
///   file (#9 stat, #10 read_file); the operator unlinks it (#11); p1 obtains, releases,
///   obtains again (#14-#31); p0's unlink deletes p1's file (#32) and returns `Ok`; p0 obtains
///   (#37) and writes (#41) while p1 still holds and writes (#47).
///
/// The replayer must name the window (not crash, not report a generic step mismatch), at the
/// releasing thread's unlink; the real code must reproduce each recording on std threads.
///
/// Budget 3,000 + 3,000 of 2 processes × 1 thread × 2 rounds (≈ 45 steps, ≈ 0.5 s measured):
/// all three flavours are found within it at this seed (3 processes × 1 round and 2 × 2 × 1
/// did not find the third in the same budget).
#[test]
fn check_then_unlink_window_is_named_by_the_replayer() {
    let mut threads = workers(2, 1, 2);
    threads.push(env(vec![Op::UnlinkLockFile]));
    let sc = simple("shuttle simple window", 2, threads);
    let none = refinement(&sc).enforcing(&[]);
    let all = refinement(&sc);
    let body = {
        let (sc, none) = (sc.clone(), none.clone());
        move || {
            let run = workload::run_simple::<Shuttle>(&sc, None);
            let trace = &run.trace;
            let rec = || lockwright_testkit::file::record::format_trace(trace);
            let Err(d) = none.check(trace) else { return };
            assert!(
                d.is_named(CHECK_THEN_UNLINK_WINDOW),
                "{d}\nrecording:\n{}",
                rec()
            );
            let step = trace[d.step];
            assert_eq!(step.call, Call::Unlink, "{d}");
            let slot = match step.outcome {
                Outcome::Failed(FsError::NotFound) => &D_ENOENT,
                Outcome::Done => {
                    let first = all.check(trace).expect_err("two writers in the model");
                    assert_eq!(first.property, Some(AT_MOST_ONE_WRITER), "{first}");
                    assert!(first.step < d.step, "{first}");
                    if direct_two_writers(trace).is_some_and(|at| at > d.step) {
                        D_STOLEN_TWO
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert_with(|| trace.clone());
                    }
                    &D_STOLEN
                }
                other => panic!("unlink outcome {other:?}"),
            };
            slot.lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(|| trace.clone());
        }
    };
    *D_ENOENT.lock().unwrap_or_else(|p| p.into_inner()) = None;
    *D_STOLEN.lock().unwrap_or_else(|p| p.into_inner()) = None;
    *D_STOLEN_TWO.lock().unwrap_or_else(|p| p.into_inner()) = None;
    explore(sc.name, 0x51_0005, iterations(3_000), body);
    for (flavour, slot) in [
        ("enoent", &D_ENOENT),
        ("stolen", &D_STOLEN),
        ("stolen, then two writers", &D_STOLEN_TWO),
    ] {
        let found = slot
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_else(|| panic!("the {flavour} window was not found"));
        let d = none.check(&found).expect_err("diverges");
        println!(
            "{flavour}: {d}\nrecording:\n{}",
            lockwright_testkit::file::record::format_trace(&found)
        );
        assert!(d.is_named(CHECK_THEN_UNLINK_WINDOW));
        let again = workload::replay_simple_std(&sc, &found);
        assert_eq!(again.trace, found, "{flavour}: std replay departed");
    }
}
