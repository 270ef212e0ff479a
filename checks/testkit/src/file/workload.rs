//! Scenarios: which simulated threads run which operations, on the REAL
//! `NativeFsLockFactory` ([`run`]) or `SimpleFsLockFactory` ([`run_simple`]), over a
//! [`SimOs`]. Written once, run under loom, shuttle or std.
//!
//! A worker "round" is what a writer does: `obtain` → (if it got the lock) `ensure_valid` → (if
//! valid) write → release. Around every call the harness records an event in the same log as
//! the OS calls, and checks "at most one writer" directly (threads whose obtain returned `Ok`
//! and that have not started to release, in live processes). At the end of every execution the
//! whole recording is replayed through the model ([`super::refine`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use lockwright::file::sys::OsLockKind;
use lockwright::{NativeFsLockFactory, SimpleFsLockFactory};
use lockwright_model::file::kernel::{LockKind, Pid};
use lockwright_model::file::Variant;

use super::record::{format_trace, Injection, Step, LOCK_DIR, LOCK_NAME};
use super::refine::Refinement;
use super::system::SimSystem;
use super::world::{SimOs, Violation};
use super::Tid;
use crate::prims::{Runtime, Std};

/// One operation of a simulated thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As thread `(pid, tid)` of the plan: obtain → ensure_valid → write → release.
    Round,
    /// A round whose obtain is `obtain_blocking` (waits instead of failing when held).
    BlockingRound,
    /// A round (`try_obtain`) through another spelling of the lock directory, e.g.
    /// [`super::record::LOCK_LINK`].
    RoundVia(&'static str),
    /// A round in which the environment's fault lands while this thread holds the lock: after
    /// its write, before its release (the fault is the environment's, recorded as such; this
    /// thread only carries it, which saves the scheduler a preemption).
    RoundThen(Fault),
    /// Fault: process `pid` is killed.
    Crash(Pid),
    /// Fault: process `pid` starts again (new incarnation).
    Restart(Pid),
    /// Fault: the lock file is deleted by hand.
    UnlinkLockFile,
    /// Fault: a fresh file is renamed over the lock file.
    ReplaceLockFile,
    /// Fault: foreign code in process `pid` opens and closes the lock file.
    ForeignOpenClose(Pid),
    /// Fault: process `pid`'s locks vanish (a lost NFSv4 lease).
    LoseLock(Pid),
    /// Fault: someone writes into the lock file.
    WriteLockFile,
    /// Fault: the next matching OS call (by any thread) fails with this error.
    Inject(Injection),
}

/// A fault an [`Op::RoundThen`] carries (the same as the ops of that name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    UnlinkLockFile,
    ReplaceLockFile,
    ForeignOpenClose(Pid),
    LoseLock(Pid),
    WriteLockFile,
}

impl Fault {
    fn inject<R: Runtime>(self, sim: &SimOs<R>) {
        match self {
            Fault::UnlinkLockFile => sim.unlink_lock_file(),
            Fault::ReplaceLockFile => sim.replace_lock_file(),
            Fault::ForeignOpenClose(p) => sim.foreign_open_close(p),
            Fault::LoseLock(p) => sim.lose_locks(p),
            Fault::WriteLockFile => sim.write_lock_file(),
        }
    }
}

/// One simulated thread: its identity (used by [`Op::Round`]) and what it does, in order. A
/// thread binds to its process's incarnation at its first `Round`: after a crash it is dead for
/// good, while a thread that restarts a process and then runs a `Round` belongs to the new
/// incarnation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    pub pid: Pid,
    pub tid: Tid,
    pub ops: Vec<Op>,
}

impl ThreadPlan {
    /// A worker doing `rounds` rounds.
    pub fn worker(pid: Pid, tid: Tid, rounds: usize) -> Self {
        ThreadPlan {
            pid,
            tid,
            ops: vec![Op::Round; rounds],
        }
    }
}

/// Builds the factory a simulated thread uses (tests inject defects here:
/// `NativeFsLockFactory::with_defect` needs lockwright's `test-util` feature, which only the
/// checks crate's dev-dependency enables).
pub type MakeFactory<R> =
    Arc<dyn Fn(SimSystem<R>, OsLockKind) -> NativeFsLockFactory<SimSystem<R>> + Send + Sync>;

/// The correct factory.
pub fn correct<R: Runtime>() -> MakeFactory<R> {
    Arc::new(NativeFsLockFactory::with_system)
}

/// A scenario: a name (keys recorded violations), the processes, the lock kind, the threads.
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: &'static str,
    pub processes: u8,
    pub kind: OsLockKind,
    /// `LockKind::NfsFlock` simulates an NFS mount for `OsLockKind::Flock`.
    pub flock_as: LockKind,
    pub threads: Vec<ThreadPlan>,
    /// Threads with an odd tid run a second copy of the crate, with its own held set (model
    /// variant `native-two-held-sets`). Default `false`.
    pub two_copies: bool,
    /// One factory per process, shared by all its threads (on [`SimOs::process`]), instead
    /// of one per thread: the factory's resolved-directory cache is shared as in a program
    /// that keeps one factory. Threads that restart a process are not supported with it (the
    /// shared factory is bound to the first incarnation). Default `false`.
    pub shared_factory: bool,
}

impl Workload {
    /// The model lock kind this scenario's `kind` is on its simulated filesystem.
    pub fn model_kind(&self) -> LockKind {
        match self.kind {
            OsLockKind::Ofd => LockKind::Ofd,
            OsLockKind::Posix => LockKind::Posix,
            OsLockKind::Flock => self.flock_as,
            other => panic!("no model lock kind for {other:?}"),
        }
    }

    /// The refinement check of this scenario's runs against model variant `variant`, all
    /// `always` properties enforced.
    pub fn refinement(&self, variant: Variant) -> Refinement {
        Refinement::new(variant, self.model_kind(), self.processes)
    }

    /// A scenario on a local filesystem.
    pub fn new(
        name: &'static str,
        processes: u8,
        kind: OsLockKind,
        threads: Vec<ThreadPlan>,
    ) -> Self {
        Workload {
            name,
            processes,
            kind,
            flock_as: LockKind::Flock,
            threads,
            two_copies: false,
            shared_factory: false,
        }
    }
}

/// Checks a finished recording (the refinement replayer, usually).
pub type Checker = Arc<dyn Fn(&[Step]) -> Result<(), String> + Send + Sync>;

static VIOLATIONS: Mutex<BTreeMap<&'static str, Violation>> = Mutex::new(BTreeMap::new());

/// The first "at most one writer" violation recorded for scenario `name`, if any (taken).
pub fn take_violation(name: &'static str) -> Option<Violation> {
    VIOLATIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(name)
}

fn record_violation(name: &'static str, v: &Violation) {
    VIOLATIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(name)
        .or_insert_with(|| v.clone());
}

/// The factories of a run: one per process when the workload shares them.
type Shared<R> = Arc<Vec<Option<Arc<NativeFsLockFactory<SimSystem<R>>>>>>;

fn run_thread<R: Runtime>(
    name: &'static str,
    sim: &SimOs<R>,
    plan: &ThreadPlan,
    scenario: &Workload,
    make: &MakeFactory<R>,
    shared: &Shared<R>,
) {
    type Factory<R> = Arc<NativeFsLockFactory<SimSystem<R>>>;
    let kind = scenario.kind;
    let mut me: Option<(SimSystem<R>, Factory<R>)> = None;
    for op in &plan.ops {
        let (dir, blocking) = match *op {
            Op::Crash(p) => {
                sim.crash(p);
                continue;
            }
            Op::Restart(p) => {
                sim.restart(p);
                continue;
            }
            Op::UnlinkLockFile => {
                sim.unlink_lock_file();
                continue;
            }
            Op::ReplaceLockFile => {
                sim.replace_lock_file();
                continue;
            }
            Op::ForeignOpenClose(p) => {
                sim.foreign_open_close(p);
                continue;
            }
            Op::LoseLock(p) => {
                sim.lose_locks(p);
                continue;
            }
            Op::WriteLockFile => {
                sim.write_lock_file();
                continue;
            }
            Op::Inject(injection) => {
                sim.inject(injection);
                continue;
            }
            Op::Round | Op::RoundThen(_) => (LOCK_DIR, false),
            Op::BlockingRound => (LOCK_DIR, true),
            Op::RoundVia(dir) => (dir, false),
        };
        let while_holding = match *op {
            Op::RoundThen(fault) => Some(fault),
            _ => None,
        };
        // One system value and one factory per thread (or per process, shared), kept across
        // rounds: a later round takes the factory's "resolved before" path (one `stat`).
        let (sys, factory) = me.get_or_insert_with(|| {
            let copy = u8::from(scenario.two_copies && plan.tid % 2 == 1);
            let sys = sim.thread_in_copy(plan.pid, plan.tid, copy);
            let factory = match &shared[usize::from(plan.pid)] {
                Some(f) => {
                    sim.bind(plan.pid, plan.tid);
                    Arc::clone(f)
                }
                None => Arc::new(make(sys.clone(), kind)),
            };
            (sys, factory)
        });
        let got = if blocking {
            factory.obtain_blocking_native(Path::new(dir), LOCK_NAME)
        } else {
            factory.try_obtain_native(Path::new(dir), LOCK_NAME)
        };
        if let Some(v) = sys.note_obtained(got.is_ok()) {
            record_violation(name, &v);
            // Stop here: releasing the lock while unwinding would add scheduling points
            // after the failure and make the failing schedule longer than the one the panic
            // hook records.
            std::mem::forget(got);
            panic!(
                "{} [{name}, {}]\nrecording:\n{}",
                v.message,
                R::NAME,
                format_trace(&v.trace)
            );
        }
        if let Ok(lock) = got {
            let valid = lock.ensure_valid().is_ok();
            sys.note_validated(valid);
            if valid {
                sys.note_write();
            }
            if let Some(fault) = while_holding {
                fault.inject(sim);
            }
            sys.note_release();
            let _ = lock.close();
        }
    }
}

/// Runs one execution of `scenario`: spawns one thread per plan, joins them, then runs
/// `check` on the recording. Panics with "at most one writer" if the harness counts two
/// writers, and with the checker's message if the recording is not a model path. Returns the
/// recording.
///
/// The calling thread runs no plan: it only spawns and joins, so that which plan runs first is
/// a free scheduling choice rather than a preemption of the caller (under loom's preemption
/// bound that saves one preemption for every scenario).
pub fn run<R: Runtime>(
    scenario: &Workload,
    make: &MakeFactory<R>,
    check: Option<&Checker>,
) -> Vec<Step> {
    let sim = SimOs::<R>::with_flock_as(scenario.processes, scenario.flock_as);
    run_on(&sim, scenario, make, check)
}

/// Replays `recording` (of an earlier run of `scenario`, e.g. a loom counterexample) on std
/// threads, deterministically: the real code takes the same steps in the same order. Panics
/// like the original run if it failed; returns the new recording otherwise.
pub fn replay_std(scenario: &Workload, make: &MakeFactory<Std>, recording: &[Step]) -> Vec<Step> {
    let sim = SimOs::<Std>::scripted(scenario.processes, scenario.flock_as, recording.to_vec());
    run_on(&sim, scenario, make, None)
}

/// [`run`] on a world the caller made (and can inspect afterwards: [`SimOs::retries`], ...).
pub fn run_on<R: Runtime>(
    sim: &SimOs<R>,
    scenario: &Workload,
    make: &MakeFactory<R>,
    check: Option<&Checker>,
) -> Vec<Step> {
    let shared: Shared<R> = Arc::new(
        (0..scenario.processes)
            .map(|pid| {
                scenario
                    .shared_factory
                    .then(|| Arc::new(make(sim.process(pid), scenario.kind)))
            })
            .collect(),
    );
    let (make, sc) = (Arc::clone(make), scenario.clone());
    run_threads(sim, scenario, check, move |name, sim, plan| {
        run_thread(name, sim, plan, &sc, &make, &shared);
    })
}

fn run_threads<R: Runtime>(
    sim: &SimOs<R>,
    scenario: &Workload,
    check: Option<&Checker>,
    body: impl Fn(&'static str, &SimOs<R>, &ThreadPlan) + Send + Sync + 'static,
) -> Vec<Step> {
    assert!(!scenario.threads.is_empty(), "a scenario needs a thread");
    let body = Arc::new(body);
    let handles: Vec<_> = scenario
        .threads
        .iter()
        .map(|plan| {
            let (sim, plan, body) = (sim.clone(), plan.clone(), Arc::clone(&body));
            let name = scenario.name;
            R::spawn(move || body(name, &sim, &plan))
        })
        .collect();
    // Join every thread before re-raising the first panic, so that none outlives the run.
    let results: Vec<_> = handles.into_iter().map(R::join).collect();
    if let Some(Err(panic)) = results.into_iter().find(Result::is_err) {
        std::panic::resume_unwind(panic);
    }
    let trace = sim.trace();
    if let Some(check) = check {
        if let Err(msg) = check(&trace) {
            panic!(
                "{msg} [{}, {}]\nrecording:\n{}",
                scenario.name,
                R::NAME,
                format_trace(&trace)
            );
        }
    }
    trace
}

// ---- SimpleFsLockFactory ----

/// A finished SimpleFs run: the recording, and the error message of every failed obtain,
/// keyed by the index of its `Obtained { ok: false }` step.
#[derive(Clone, Debug)]
pub struct SimpleRun {
    pub trace: Vec<Step>,
    pub obtain_errors: BTreeMap<usize, String>,
}

/// Runs one execution of `scenario` on the REAL `SimpleFsLockFactory` (`scenario.kind` and
/// `flock_as` are unused: SimpleFs takes no OS lock). Rounds as in [`run`], plus the harness
/// event `Closed { ok }` when the release returns (a refused release is an outcome the model
/// names, `ReleaseRefused`). Checks "at most one writer" directly like [`run`] and runs `check`
/// (usually the refinement against `Variant::Simple`) on the recording; panics like [`run`].
pub fn run_simple<R: Runtime>(scenario: &Workload, check: Option<&Checker>) -> SimpleRun {
    let sim = SimOs::<R>::with_flock_as(scenario.processes, scenario.flock_as);
    let trace = run_threads(&sim, scenario, check, run_simple_thread::<R>);
    SimpleRun {
        trace,
        obtain_errors: sim.obtain_errors(),
    }
}

/// [`replay_std`] for SimpleFs recordings ([`run_simple`]).
pub fn replay_simple_std(scenario: &Workload, recording: &[Step]) -> SimpleRun {
    let sim = SimOs::<Std>::scripted(scenario.processes, scenario.flock_as, recording.to_vec());
    let trace = run_threads(&sim, scenario, None, run_simple_thread::<Std>);
    SimpleRun {
        trace,
        obtain_errors: sim.obtain_errors(),
    }
}

fn run_simple_thread<R: Runtime>(name: &'static str, sim: &SimOs<R>, plan: &ThreadPlan) {
    let mut me: Option<(SimSystem<R>, SimpleFsLockFactory<SimSystem<R>>)> = None;
    for op in &plan.ops {
        match *op {
            Op::Crash(p) => sim.crash(p),
            Op::Restart(p) => sim.restart(p),
            Op::UnlinkLockFile => sim.unlink_lock_file(),
            Op::ReplaceLockFile => sim.replace_lock_file(),
            Op::ForeignOpenClose(p) => sim.foreign_open_close(p),
            Op::LoseLock(p) => sim.lose_locks(p),
            Op::WriteLockFile => sim.write_lock_file(),
            Op::Inject(injection) => sim.inject(injection),
            Op::BlockingRound | Op::RoundVia(_) | Op::RoundThen(_) => {
                panic!("{op:?}: the SimpleFs runner does plain rounds only")
            }
            Op::Round => {
                let (sys, factory) = me.get_or_insert_with(|| {
                    let sys = sim.thread(plan.pid, plan.tid);
                    let factory = SimpleFsLockFactory::with_system(sys.clone());
                    (sys, factory)
                });
                let got = factory.try_obtain_simple(Path::new(LOCK_DIR), LOCK_NAME);
                let violation = match &got {
                    Ok(_) => sys.note_obtained(true),
                    Err(e) => sys.note_obtain_failed(e.to_string()),
                };
                if let Some(v) = violation {
                    record_violation(name, &v);
                    // As in `run_thread`: no release while unwinding.
                    std::mem::forget(got);
                    panic!(
                        "{} [{name}, {}]\nrecording:\n{}",
                        v.message,
                        R::NAME,
                        format_trace(&v.trace)
                    );
                }
                if let Ok(lock) = got {
                    let valid = lock.ensure_valid().is_ok();
                    sys.note_validated(valid);
                    if valid {
                        sys.note_write();
                    }
                    sys.note_release();
                    let closed = lock.close();
                    sys.note_closed(closed.is_ok());
                }
            }
        }
    }
}
