//! "The real implementation under shuttle": a small, fixed sample of REAL runs made by the
//! report itself.
//!
//! For each scenario of `scenarios` the real `NativeFsLockFactory` / `SimpleFsLockFactory`
//! runs on the simulated OS (`crate::sim`) under shuttle's random scheduler and then its PCT
//! scheduler, [`EXECUTIONS_PER_SCHEDULER`] executions each, from a fixed seed; every
//! execution's recording is replayed through the model ([`Refinement::check`], all four
//! `always` properties enforced). Same seeds → same schedules → same counts, so everything
//! but `time_ms` is deterministic and goes into `results.md`.
//!
//! Only correct configurations are run (the model proves all four `always` properties for
//! each): the deliberately broken variants need lockwright's test-only `test-util` feature and
//! stay in the test suites.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::{Faults, Variant};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

use lockwright_testkit::file::record::Call;
use lockwright_testkit::file::refine::Refinement;
use lockwright_testkit::file::workload::{self, Op, ThreadPlan, Workload};
use lockwright_testkit::file::Step;
use lockwright_testkit::Shuttle;

/// Executions per scheduler (random, then PCT) per scenario.
///
/// Why 500: one execution of these 2 processes × 2 threads × 2 rounds scenarios (≈ 65-80
/// recorded steps, replayed once through the model) measured ≈ 0.19 ms in the test profile
/// (`opt-level = 2`) on the idle 2-core dev box (250 + 250 per scenario: 64-94 ms a
/// scenario), so 4 scenarios × 2 schedulers × 500 = 4,000 executions add ≈ 0.7 s to
/// `lockwright report` and to `report_fresh`, ≈ 1.5 s when the machine is shared: under the
/// 3 s budget with room to spare, while each scenario still sees ~1,000 distinct
/// interleavings. The full suites (`checks.md`) run 2,500 + 2,500 per test, and 100,000 each
/// with `LOCKWRIGHT_DEEP=1`. `time_ms` in `results.json` records what each scenario took.
pub const EXECUTIONS_PER_SCHEDULER: usize = 500;

/// PCT depth, as in the shuttle suites (`shuttle_three_processes.rs`, `shuttle_simple.rs`).
pub const PCT_DEPTH: usize = 3;

/// Rounds (obtain → ensure_valid → write → release) per worker thread.
const ROUNDS: usize = 2;

/// Which real factory a scenario drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Factory {
    Native,
    Simple,
}

/// One scenario of the section.
struct Spec {
    /// Key of recorded harness violations (unique per scenario).
    name: &'static str,
    factory: Factory,
    /// The OS lock kind (unused by SimpleFs).
    kind: OsLockKind,
    /// The name of the model's fault set with the same budgets (a row of `results.md`).
    faults: &'static str,
    budgets: Faults,
    seed: u64,
}

/// The fixed scenarios: the native protocol with crash + restart under each local lock kind
/// (POSIX without foreign open-close, which the model shows breaks it), and SimpleFs without
/// faults (its crash row is a stale lock by design).
fn scenarios() -> Vec<Spec> {
    let crash = Faults {
        crash: 1,
        restart: 1,
        ..Faults::NONE
    };
    let native = |name, kind, seed| Spec {
        name,
        factory: Factory::Native,
        kind,
        faults: "crash",
        budgets: crash,
        seed,
    };
    vec![
        native(
            "report shuttle native ofd crash",
            OsLockKind::Ofd,
            0x5e_0001,
        ),
        native(
            "report shuttle native posix crash",
            OsLockKind::Posix,
            0x5e_0002,
        ),
        native(
            "report shuttle native flock crash",
            OsLockKind::Flock,
            0x5e_0003,
        ),
        Spec {
            name: "report shuttle simple none",
            factory: Factory::Simple,
            kind: OsLockKind::Flock,
            faults: "none",
            budgets: Faults::NONE,
            seed: 0x5e_0004,
        },
    ]
}

impl Spec {
    fn variant(&self) -> Variant {
        match self.factory {
            Factory::Native => Variant::Native,
            Factory::Simple => Variant::Simple,
        }
    }

    fn kind_name(&self) -> &'static str {
        match self.factory {
            Factory::Simple => "none",
            Factory::Native => self.kind.name(),
        }
    }

    /// 2 processes × 2 worker threads; the faults come from one extra thread that runs no
    /// round (so the model scenario the replay uses has the same 2 × 2 threads and budgets
    /// as the model's row).
    fn scenario(&self) -> Workload {
        let mut threads = Vec::new();
        for p in 0..2 {
            for t in 0..2 {
                threads.push(ThreadPlan::worker(p, t, ROUNDS));
            }
        }
        if self.budgets.crash > 0 {
            threads.push(ThreadPlan {
                pid: 0,
                tid: 9,
                ops: vec![Op::Crash(0), Op::Restart(0)],
            });
        }
        Workload::new(self.name, 2, self.kind, threads)
    }

    fn description(&self) -> String {
        let faults = if self.budgets.crash > 0 {
            "; an extra thread crashes p0 and restarts it (p0's workers that have not started \
             yet run in the new incarnation)"
        } else {
            "; no faults"
        };
        format!(
            "2 processes × 2 threads, {ROUNDS} rounds each (obtain → ensure_valid → write → \
             release){faults}"
        )
    }
}

/// One scenario's result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ShuttleResult {
    /// The real factory (`NativeFsLockFactory`, `SimpleFsLockFactory`).
    pub factory: String,
    /// The model variant every recording is replayed against.
    pub variant: String,
    /// The lock kind (`none` for SimpleFs).
    pub kind: String,
    /// The model's fault set with the same budgets (a row of the verdict tables).
    pub faults: String,
    /// The budgets, in `lockwright check --faults` syntax.
    pub budgets: String,
    /// What the simulated threads do.
    pub scenario: String,
    /// The seed of both schedulers.
    pub seed: String,
    pub random_executions: usize,
    pub pct_executions: usize,
    pub pct_depth: usize,
    /// All executions run (random + PCT).
    pub executions: usize,
    /// Executions whose whole recording is a model path with all four `always` properties
    /// holding in every state.
    pub refined: usize,
    /// Executions with two writers by the harness's direct count, or whose replay reached a
    /// state violating an `always` property.
    pub violations: usize,
    /// Executions whose recording took a step the model does not allow.
    pub departed: usize,
    /// Distinct recordings (interleavings of the real code's calls) among the executions.
    pub distinct_recordings: usize,
    /// Recorded steps, all executions together.
    pub recorded_steps: u64,
    /// Model actions the replays took, all executions together.
    pub model_actions: u64,
    /// Observations (`stat`, `fstat`, probes, held-set lookups) compared with the model.
    pub observations: u64,
    /// Writes made by a thread holding a valid lock.
    pub writes: u64,
    /// Unique states of the model's whole state space for the same variant × lock kind ×
    /// fault set (for scale).
    pub model_unique_states: Option<usize>,
    /// The first violation or departure, if any.
    pub first_problem: Option<String>,
    /// Wall-clock time, in milliseconds (ignored by the staleness check).
    pub time_ms: u64,
}

#[derive(Default)]
struct Tally {
    executions: usize,
    refined: usize,
    violations: usize,
    departed: usize,
    recordings: HashSet<u64>,
    recorded_steps: u64,
    model_actions: u64,
    observations: u64,
    writes: u64,
    first_problem: Option<String>,
}

impl Tally {
    fn problem(&mut self, what: String) {
        self.first_problem.get_or_insert(what);
    }
}

fn lock(t: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    t.lock().unwrap_or_else(|p| p.into_inner())
}

/// One execution: run the real factory, replay the recording, count.
fn execute(spec_factory: Factory, sc: &Workload, refinement: &Refinement, tally: &Mutex<Tally>) {
    lock(tally).executions += 1;
    // No checker passed: the replay below counts instead of panicking. The harness's direct
    // "at most one writer" count still panics inside the run; see `run_scheduler`.
    let trace: Vec<Step> = match spec_factory {
        Factory::Native => workload::run::<Shuttle>(sc, &workload::correct(), None),
        Factory::Simple => workload::run_simple::<Shuttle>(sc, None).trace,
    };
    let verdict = refinement.check(&trace);
    let mut h = DefaultHasher::new();
    trace.hash(&mut h);
    let mut t = lock(tally);
    t.recordings.insert(h.finish());
    t.recorded_steps += trace.len() as u64;
    t.writes += trace.iter().filter(|s| s.call == Call::Write).count() as u64;
    match verdict {
        Ok(summary) => {
            t.refined += 1;
            t.model_actions += summary.actions as u64;
            t.observations += summary.observations as u64;
        }
        Err(d) if d.property.is_some() => {
            t.violations += 1;
            t.problem(d.to_string());
        }
        Err(d) => {
            t.departed += 1;
            t.problem(d.to_string());
        }
    }
}

/// Runs `n` executions under one scheduler. A panic inside an execution (the harness counted
/// two writers, or a bug) ends that scheduler's run early; it is counted as a violation.
fn run_scheduler(
    spec: &Spec,
    scheduler: impl shuttle::scheduler::Scheduler + 'static,
    sc: &Workload,
    refinement: &Refinement,
    tally: &Arc<Mutex<Tally>>,
) {
    let body = {
        let (factory, sc, refinement, tally) = (
            spec.factory,
            sc.clone(),
            refinement.clone(),
            Arc::clone(tally),
        );
        move || execute(factory, &sc, &refinement, &tally)
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(scheduler, Config::new()).run(body);
    }));
    if let Err(panic) = outcome {
        let mut t = lock(tally);
        t.violations += 1;
        let msg = match workload::take_violation(spec.name) {
            Some(v) => v.message,
            None => panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "execution panicked".to_string()),
        };
        let first = msg.lines().next().unwrap_or_default().to_string();
        t.problem(first);
    }
}

/// Runs every scenario of the section.
pub fn run_all() -> Vec<ShuttleResult> {
    scenarios().iter().map(run_one).collect()
}

fn run_one(spec: &Spec) -> ShuttleResult {
    let started = Instant::now();
    let sc = spec.scenario();
    let refinement = sc.refinement(spec.variant());
    let tally = Arc::new(Mutex::new(Tally::default()));
    let n = EXECUTIONS_PER_SCHEDULER;
    run_scheduler(
        spec,
        RandomScheduler::new_from_seed(spec.seed, n),
        &sc,
        &refinement,
        &tally,
    );
    run_scheduler(
        spec,
        PctScheduler::new_from_seed(spec.seed, PCT_DEPTH, n),
        &sc,
        &refinement,
        &tally,
    );
    let t = lock(&tally);
    ShuttleResult {
        factory: match spec.factory {
            Factory::Native => "NativeFsLockFactory",
            Factory::Simple => "SimpleFsLockFactory",
        }
        .to_string(),
        variant: spec.variant().name().to_string(),
        kind: spec.kind_name().to_string(),
        faults: spec.faults.to_string(),
        budgets: spec.budgets.to_string(),
        scenario: spec.description(),
        seed: format!("{:#x}", spec.seed),
        random_executions: n,
        pct_executions: n,
        pct_depth: PCT_DEPTH,
        executions: t.executions,
        refined: t.refined,
        violations: t.violations,
        departed: t.departed,
        distinct_recordings: t.recordings.len(),
        recorded_steps: t.recorded_steps,
        model_actions: t.model_actions,
        observations: t.observations,
        writes: t.writes,
        model_unique_states: None,
        first_problem: t.first_problem.clone(),
        time_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}
