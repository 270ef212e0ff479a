//! Shuttle schedules, shared by every family's "teeth" tests: searching a broken variant for a
//! failure with fixed-seed schedulers ([`search`]), keeping the schedule shuttle wrote for it,
//! and replaying a schedule ([`replay`]).
//!
//! Shuttle installs its panic hook once per process, with the [`Config`] of the first run, and
//! that hook is what writes a failing schedule. So EVERY shuttle run in a test binary must use
//! [`persisting`] (a run with another config that happens to start first would send every
//! later failure's schedule elsewhere: in a binary with several suites, whichever test the
//! harness starts first): all runs then write into one directory. [`search`] and [`replay`]
//! run only under the [`serial`] lock, which every run that is meant to fail takes; runs of
//! correct code do not (they would serialize every suite), so if one of them fails during a
//! search its schedule lands there too, and [`search`] keeps only a schedule that replays to
//! its own failure. A suite holds that lock across a whole find (search, then the
//! checks of the recording, then the replay), so that no other test's run of the same broken
//! variant records a failure in between.

use std::any::Any;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use shuttle::scheduler::{PctScheduler, RandomScheduler, ReplayScheduler};
use shuttle::{Config, FailurePersistence, Runner};

static SCHEDULE_DIR: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("lockwright-schedules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("schedule dir");
    dir
});

static SERIAL: Mutex<()> = Mutex::new(());

/// A shuttle config that persists failing schedules to this process's schedule directory.
pub fn persisting() -> Config {
    let mut c = Config::new();
    c.failure_persistence = FailurePersistence::File(Some(SCHEDULE_DIR.clone()));
    c
}

/// The lock under which [`search`] and [`replay`] run (they take its guard as proof); a suite
/// may also hold it around its other long shuttle runs.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The schedule files in this process's schedule directory (for a suite that runs its own
/// search under [`serial`] and compares the set before and after).
pub fn schedule_files() -> BTreeSet<PathBuf> {
    std::fs::read_dir(&*SCHEDULE_DIR)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// Removes the schedules written since `before`. (Replaying each to tell this run's from a
/// schedule another suite's failing run wrote meanwhile does not work: shuttle also writes a
/// partial schedule when the task panics, and replaying that one leaves shuttle's execution
/// state broken for the next run. So a failure of code expected to pass that lands during a
/// search loses its schedule file; its test still fails and prints its message.)
fn remove_new(before: &BTreeSet<PathBuf>) {
    for f in schedule_files().difference(before) {
        let _ = std::fs::remove_file(f);
    }
}

/// Whether `body` on the encoded `schedule` fails with exactly `message`.
fn replays_to<F>(schedule: &str, message: &str, body: &F) -> bool
where
    F: Fn() + Clone + Send + Sync + 'static,
{
    failure_of(|| {
        Runner::new(ReplayScheduler::new_from_encoded(schedule), persisting()).run(body.clone())
    })
    .as_deref()
        == Some(message)
}

/// For a suite that ran its own shuttle search under [`serial`]: the schedule of the failure
/// `message` that `body` met, among those written since `before` — the newest one that
/// replays to it (shuttle writes one when the task panics and a complete one when the
/// execution is torn down) — and the new schedule files removed (as [`search`] does).
///
/// # Panics
/// If no schedule written since `before` replays to `message`.
pub fn take_schedule<F>(
    _serial: &MutexGuard<'static, ()>,
    before: &BTreeSet<PathBuf>,
    message: &str,
    body: F,
) -> String
where
    F: Fn() + Clone + Send + Sync + 'static,
{
    let new: Vec<PathBuf> = schedule_files().difference(before).cloned().collect();
    let schedule = new
        .iter()
        .rev()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .map(|s| s.trim().to_owned())
        .find(|s| replays_to(s, message, &body))
        .unwrap_or_else(|| {
            panic!(
                "none of the {} new schedules replays to: {message}",
                new.len()
            )
        });
    remove_new(before);
    schedule
}

/// The message of a caught panic (empty when it is neither a `String` nor a `&str`).
pub fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// Runs `f`; the message it panicked with, or `None` when it returned.
pub fn failure_of<T>(f: impl FnOnce() -> T) -> Option<String> {
    catch_unwind(AssertUnwindSafe(f))
        .err()
        .map(|p| panic_message(&*p))
}

/// One pass of a [`search`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Shuttle's random scheduler.
    Random,
    /// PCT at this depth.
    Pct(usize),
}

impl Scheduler {
    /// `random` or `PCT`, as the suites print it.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Random => "random",
            Scheduler::Pct(_) => "PCT",
        }
    }
}

/// The first failure a [`search`] met.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The pass that failed.
    pub scheduler: Scheduler,
    /// Executions of that pass, the failing one included.
    pub executions: usize,
    /// What the failing execution panicked with.
    pub message: String,
    /// Shuttle's encoded schedule of the failing execution (for [`replay`]).
    pub schedule: String,
}

/// Runs `body` under each scheduler in turn (seeded with `seed`, `n` executions each) until
/// one execution panics; returns that failure with its schedule, or `None` when every pass
/// completed.
///
/// # Panics
/// If an execution failed but shuttle persisted no schedule for it.
pub fn search<F>(
    _serial: &MutexGuard<'static, ()>,
    body: F,
    seed: u64,
    n: usize,
    passes: &[Scheduler],
) -> Option<Failure>
where
    F: Fn() + Clone + Send + Sync + 'static,
{
    let before = schedule_files();
    let executions = Arc::new(AtomicUsize::new(0));
    let counted = {
        let count = Arc::clone(&executions);
        move || {
            count.fetch_add(1, Ordering::Relaxed);
            body();
        }
    };
    for &scheduler in passes {
        executions.store(0, Ordering::Relaxed);
        let body = counted.clone();
        let message = failure_of(|| match scheduler {
            Scheduler::Random => {
                Runner::new(RandomScheduler::new_from_seed(seed, n), persisting()).run(body)
            }
            Scheduler::Pct(depth) => {
                Runner::new(PctScheduler::new_from_seed(seed, depth, n), persisting()).run(body)
            }
        });
        let Some(message) = message else { continue };
        // The panic hook persists the schedule when the task panics, and shuttle once more
        // when the execution is torn down: the newest of our files has the complete schedule.
        // A run of another suite that failed meanwhile (a regression in code expected to pass:
        // those runs do not take `serial`) may have written one too, so the schedule taken is
        // the newest one that replays to this very failure.
        assert!(
            schedule_files().difference(&before).next().is_some(),
            "shuttle persisted no schedule"
        );
        let ran = executions.load(Ordering::Relaxed);
        let schedule = take_schedule(_serial, &before, &message, counted.clone());
        return Some(Failure {
            scheduler,
            executions: ran,
            message,
            schedule,
        });
    }
    None
}

/// Runs `body` once on the encoded `schedule`; the message it panicked with, or `None` when it
/// completed.
pub fn replay<F>(_serial: &MutexGuard<'static, ()>, schedule: &str, body: F) -> Option<String>
where
    F: Fn() + Send + Sync + 'static,
{
    let before = schedule_files();
    let message = failure_of(|| {
        Runner::new(ReplayScheduler::new_from_encoded(schedule), persisting()).run(body)
    });
    remove_new(&before);
    message
}

/// Asserts that `docs/<doc>` states `claim` word for word: a count a page repeats ("shuttle
/// caught 12 of 12 broken variants") comes from the test that computes it, so the two cannot
/// disagree.
///
/// # Panics
/// If the page cannot be read or does not contain `claim`.
pub fn assert_doc_says(doc: &str, claim: &str) {
    let path = format!("{}/../../docs/{doc}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // The pages wrap lines: compare with runs of white space made one space.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(claim),
        "{path} must say `{claim}` (the count this test computes); update the page"
    );
}
