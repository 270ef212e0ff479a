//! The replication copier (`lockwright::replication`) against real Lucene 4.10.4 readers, and
//! its calls replayed through the model (`lockwright_model::replication`).
//!
//! Real Lucene: a Java `IndexWriter` (Debian's `liblucene4.10-java`) keeps committing into a
//! source index and publishes each commit (`checks/tests/replication/ReplicationWriter.java`);
//! the copier replicates the newest commit, round after round, into a replica directory on
//! which Java reader threads search and reopen continuously
//! (`checks/tests/replication/ReplicationReader.java`): one holds its files open as Lucene does
//! on a local filesystem (`handles`), one opens each file by name at every read, as a client
//! of a network filesystem sees another client's delete (`by-name`). The copier's hook pauses
//! after EVERY call until each reader thread has finished two more search+reopen attempts, so
//! the readers look at every intermediate state of the replica: the outcomes do not depend on
//! timing. What each scenario asserts is what the model's verdict table says
//! (`docs/replication.md`), with Lucene 4.10's own retry (`FindSegmentsFile` retries the newest
//! `segments_N` and falls back to the previous one) reported separately from the failures
//! that reach the application.
//!
//! These tests FAIL (they do not skip) when `javac`, `java` or the Lucene jar is missing: CI
//! installs them (`apt-get install -y openjdk-17-jdk-headless liblucene4.10-java`).
//! `LOCKWRIGHT_LUCENE_JAR` points at another lucene-core 4.10.x jar.
//!
//! `cargo test -p lockwright-checks --test replication_lucene -- --nocapture` prints each
//! scenario's counts.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use lockwright::replication::{
    read_newest_manifest, Commit, Copier, Hook, Order, ReplicaFs, ReplicationError, StdReplicaFs,
    Step, TEMP_PREFIX,
};

// ---------------------------------------------------------------------------------------------
// Java tools.
// ---------------------------------------------------------------------------------------------

struct Tools {
    classpath: String,
    _classes: tempfile::TempDir,
}

fn lucene_jar() -> PathBuf {
    std::env::var_os("LOCKWRIGHT_LUCENE_JAR").map_or_else(
        || PathBuf::from("/usr/share/java/lucene-core-4.10.4.jar"),
        PathBuf::from,
    )
}

/// Checks for the jar, `javac` and `java`, and compiles the Java programs once per test run.
fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let jar = lucene_jar();
        assert!(
            jar.is_file(),
            "{} is missing: install Debian's liblucene4.10-java (apt-get install -y \
             liblucene4.10-java), or set LOCKWRIGHT_LUCENE_JAR to a lucene-core 4.10.x jar",
            jar.display()
        );
        for (tool, package) in [
            ("javac", "openjdk-17-jdk-headless"),
            ("java", "openjdk-17-jre-headless"),
        ] {
            let ok = Command::new(tool)
                .arg("-version")
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(
                ok,
                "`{tool}` is missing: install a JDK (apt-get install -y {package})"
            );
        }
        let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replication");
        let classes = tempfile::tempdir().expect("temp dir");
        let out = Command::new("javac")
            .args(["-nowarn", "-encoding", "UTF-8", "-cp"])
            .arg(&jar)
            .arg("-d")
            .arg(classes.path())
            .arg(sources.join("ReplicationWriter.java"))
            .arg(sources.join("ReplicationReader.java"))
            .output()
            .expect("run javac");
        assert!(
            out.status.success(),
            "javac failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tools {
            classpath: format!("{}:{}", jar.display(), classes.path().display()),
            _classes: classes,
        }
    })
}

/// Scenarios run one at a time: each starts two JVMs, and CI has two cores.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const WAIT: Duration = Duration::from_secs(60);

/// What a child printed: its lines, except the reader's `TRY` lines, which are only counted.
#[derive(Default)]
struct Out {
    lines: Vec<String>,
    /// Per reader thread: attempts finished (the last `TRY <mode> <n>`).
    tries: BTreeMap<String, u64>,
}

type Shared = Arc<(Mutex<Out>, Condvar)>;

/// A child process whose stdout is collected by a thread; killed on drop.
struct Proc {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    out: Shared,
}

impl Proc {
    fn spawn(name: &'static str, class: &str, args: &[&str]) -> Proc {
        let mut child = Command::new("java")
            .arg("-cp")
            .arg(&tools().classpath)
            .arg(class)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let out: Shared = Arc::new((Mutex::new(Out::default()), Condvar::new()));
        let sink = out.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let (o, cv) = &*sink;
                let mut o = o.lock().unwrap();
                match line.strip_prefix("TRY ").and_then(|r| r.split_once(' ')) {
                    Some((mode, n)) => {
                        o.tries.insert(mode.to_string(), n.parse().unwrap_or(0));
                    }
                    None => o.lines.push(line),
                }
                cv.notify_all();
            }
        });
        Proc {
            name,
            stdin: child.stdin.take(),
            child,
            out,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| {
                panic!("{} is gone ({e}):\n{}", self.name, self.lines().join("\n"))
            });
    }

    fn lines(&self) -> Vec<String> {
        self.out.0.lock().unwrap().lines.clone()
    }

    fn tries(&self) -> BTreeMap<String, u64> {
        self.out.0.lock().unwrap().tries.clone()
    }

    /// Waits until `pred` holds over what the child printed so far.
    fn wait_for(&self, what: &str, pred: impl Fn(&Out) -> bool) {
        let (out, cv) = &*self.out;
        let deadline = Instant::now() + WAIT;
        let mut guard = out.lock().unwrap();
        while !pred(&guard) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: timed out waiting for {what}:\n{}",
                self.name,
                guard.lines.join("\n")
            );
            guard = cv.wait_timeout(guard, left).unwrap().0;
        }
    }

    /// Closes stdin after `last`, waits for the exit (killing after [`WAIT`]).
    fn finish(mut self, last: &str) -> Vec<String> {
        self.send(last);
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Let the stdout thread drain.
        std::thread::sleep(Duration::from_millis(100));
        self.lines()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// One scenario: writer, copier, readers.
// ---------------------------------------------------------------------------------------------

const MODES: [&str; 2] = ["handles", "by-name"];

/// What a scenario does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    rounds: usize,
    gens: Gens,
    /// The hook stops every other round after a different call (a crash), and a new copier
    /// that remembers nothing finishes it.
    crashes: bool,
    /// The readers keep the commit they have (`HOLD`) during all rounds, each of which brings
    /// a force-merged commit that shares no segment with the held one.
    hold: bool,
}

/// Which commit each round replicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gens {
    /// The generation right after the replica's: the replica receives every commit.
    Next,
    /// The newest, at least two generations on: the replica skips commits, as a copier that
    /// polls for the newest commit does when the writer commits faster than it copies.
    Skip,
}

impl Plan {
    fn rounds(rounds: usize, gens: Gens) -> Plan {
        Plan {
            rounds,
            gens,
            crashes: false,
            hold: false,
        }
    }
}

/// What the readers reported, per thread.
#[derive(Debug, Default)]
struct Outcome {
    opens: BTreeMap<String, Vec<u64>>,
    retries: BTreeMap<String, Vec<String>>,
    fails: BTreeMap<String, Vec<String>>,
    rounds: usize,
    steps: usize,
    crashes: usize,
}

impl Outcome {
    fn fails(&self, mode: &str) -> usize {
        self.fails.get(mode).map_or(0, Vec::len)
    }
    fn retries(&self, mode: &str) -> usize {
        self.retries.get(mode).map_or(0, Vec::len)
    }
    /// Distinct commits the thread opened.
    fn commits(&self, mode: &str) -> usize {
        let mut g = self.opens.get(mode).cloned().unwrap_or_default();
        g.dedup();
        g.len()
    }
    fn report(&self, name: &str) -> String {
        let mut s = format!(
            "{name}: {} rounds, {} copier calls, {} crashes",
            self.rounds, self.steps, self.crashes
        );
        for m in MODES {
            s += &format!(
                "\n  {m}: {} commits opened, {} Lucene retries, {} failures",
                self.commits(m),
                self.retries(m),
                self.fails(m)
            );
            for f in self.fails.get(m).into_iter().flatten().take(3) {
                s += &format!("\n    FAIL {f}");
            }
            for r in self.retries.get(m).into_iter().flatten().take(2) {
                s += &format!("\n    RETRY {r}");
            }
        }
        s
    }
}

/// The hook: after every call, wait until each reader thread has finished two more attempts
/// (an attempt then spans at most two consecutive replica states); optionally stop the round
/// after the `crash_at`-th call (1-based).
fn pausing_hook(reader: Shared, crash_at: Option<usize>) -> Hook {
    let mut calls = 0;
    Box::new(move |_step: &Step| {
        calls += 1;
        let (lines, cv) = &*reader;
        let mut guard = lines.lock().unwrap();
        let start = guard.tries.clone();
        let deadline = Instant::now() + WAIT;
        loop {
            let now = &guard.tries;
            let done = MODES.iter().all(|m| {
                now.get(*m).copied().unwrap_or(0) >= start.get(*m).copied().unwrap_or(0) + 2
            });
            if done {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "the readers stopped making progress");
            guard = cv.wait_timeout(guard, left).unwrap().0;
        }
        if crash_at == Some(calls) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
}

/// The commit a round replicates after generation `after`: generation `after + 1`
/// ([`Gens::Next`]) or the newest from `after + 2` on ([`Gens::Skip`]); waits for the writer.
fn commit_after(manifests: &Path, writer: &Proc, after: u64, gens: Gens) -> Commit {
    let deadline = Instant::now() + WAIT;
    loop {
        let found = match gens {
            Gens::Next => {
                let path = manifests.join(format!("commit-{}", after + 1));
                std::fs::read_to_string(path).ok().map(|text| {
                    let files = text.lines().map(str::to_string).collect();
                    Commit::new(after + 1, files).expect("the writer's manifest")
                })
            }
            // The writer replaces manifests while we list: an I/O error means try again.
            Gens::Skip => match read_newest_manifest(manifests) {
                Ok(c) => c.filter(|c| c.generation() >= after + 2),
                Err(ReplicationError::Io { .. }) => None,
                Err(e) => panic!("{e}"),
            },
        };
        if let Some(c) = found {
            return c;
        }
        assert!(
            Instant::now() < deadline,
            "no commit after generation {after}:\n{}",
            writer.lines().join("\n")
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn run(name: &str, order: Order, plan: Plan) -> Outcome {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let (src, manifests, replica) = (
        root.path().join("source"),
        root.path().join("manifests"),
        root.path().join("replica"),
    );
    std::fs::create_dir_all(&replica).unwrap();
    let mut writer = Proc::spawn(
        "writer",
        "ReplicationWriter",
        &[
            src.to_str().unwrap(),
            manifests.to_str().unwrap(),
            "250", // a commit every 250 ms, while the copier runs
        ],
    );

    // The replica starts as a complete copy of a first commit.
    let first = commit_after(&manifests, &writer, 0, Gens::Next);
    Copier::new(StdReplicaFs::new(&src, &replica), Order::Lockwright)
        .replicate(&first)
        .expect("initial copy");
    writer.send(&format!("RELEASE {}", first.generation()));

    let mut reader = Proc::spawn(
        "reader",
        "ReplicationReader",
        &[replica.to_str().unwrap(), &MODES.join(",")],
    );
    reader.wait_for("both readers open", |l| {
        MODES
            .iter()
            .all(|m| l.lines.iter().any(|x| x.starts_with(&format!("OPEN {m} "))))
    });

    let mut outcome = Outcome::default();
    let mut copier = Copier::new(StdReplicaFs::new(&src, &replica), order)
        .with_previous(first.clone())
        .with_hook(pausing_hook(reader.out.clone(), None));
    let mut last = first.generation();
    if plan.hold {
        reader.send("HOLD");
        // Each thread finishes the attempt it is in; from the next one on it keeps its reader.
        let seen = reader.tries();
        reader.wait_for("the readers to hold", |l| {
            let now = &l.tries;
            MODES.iter().all(|m| now.get(*m) > seen.get(*m))
        });
    }
    for round in 0..plan.rounds {
        if plan.hold {
            writer.send("MERGE");
            writer.wait_for("a force-merged commit", |l| {
                l.lines.iter().any(|x| {
                    x.strip_prefix("MERGED ")
                        .and_then(|g| g.parse::<u64>().ok())
                        .is_some_and(|g| g > last)
                })
            });
        }
        // After a force merge: the merged commit or a newer one.
        let gens = if plan.hold { Gens::Skip } else { plan.gens };
        let commit = commit_after(&manifests, &writer, last, gens);
        if plan.crashes && round % 2 == 1 {
            // Stop this round after call 1, 4, 7, … (a different step each time).
            let crash_at = 1 + 3 * (round / 2);
            let mut crashing = Copier::new(StdReplicaFs::new(&src, &replica), order)
                .with_previous(copier.previous().cloned().expect("a completed round"))
                .with_hook(pausing_hook(reader.out.clone(), Some(crash_at)));
            match crashing.replicate(&commit) {
                Err(ReplicationError::Interrupted { .. }) => outcome.crashes += 1,
                Ok(r) => outcome.steps += r.steps, // the round was shorter
                Err(e) => panic!("{name}: {e}"),
            }
            // The restarted copier remembers nothing.
            copier = Copier::new(StdReplicaFs::new(&src, &replica), order)
                .with_hook(pausing_hook(reader.out.clone(), None));
        }
        let report = copier
            .replicate(&commit)
            .unwrap_or_else(|e| panic!("{name}: round {round}: {e}"));
        outcome.steps += report.steps;
        outcome.rounds += 1;
        last = commit.generation();
        writer.send(&format!("RELEASE {last}"));
    }
    if plan.hold {
        reader.send("GO");
    }
    // A few more attempts on the final state.
    let seen = reader.tries();
    reader.wait_for("final attempts", |l| {
        let now = &l.tries;
        MODES
            .iter()
            .all(|m| now.get(*m).copied().unwrap_or(0) >= seen.get(*m).copied().unwrap_or(0) + 3)
    });

    let lines = reader.finish("STOP");
    let writer_lines = writer.finish("STOP");
    if let Some(dir) = std::env::var_os("LOCKWRIGHT_REPLICATION_LOGS") {
        let base = Path::new(&dir).join(name.replace([' ', ',', '+'], "_"));
        let _ = std::fs::write(base.with_extension("reader.log"), lines.join("\n"));
        let _ = std::fs::write(base.with_extension("writer.log"), writer_lines.join("\n"));
    }
    assert!(
        !names(&replica).iter().any(|n| n.starts_with(TEMP_PREFIX)) || order != Order::Lockwright,
        "temporary files left behind"
    );
    for l in &lines {
        let mut it = l.splitn(3, ' ');
        let (kind, mode, rest) = (it.next(), it.next(), it.next().unwrap_or(""));
        let Some(mode) = mode else { continue };
        match kind {
            Some("OPEN") => outcome
                .opens
                .entry(mode.to_string())
                .or_default()
                .push(rest.parse().unwrap_or(0)),
            Some("RETRY") => outcome
                .retries
                .entry(mode.to_string())
                .or_default()
                .push(rest.to_string()),
            Some("FAIL") => outcome
                .fails
                .entry(mode.to_string())
                .or_default()
                .push(rest.to_string()),
            _ => {}
        }
    }
    println!("{}", outcome.report(name));
    outcome
}

fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The scenarios. Model rows: docs/replication.md, "Verdict table".
// ---------------------------------------------------------------------------------------------

/// Model rows 1–2 (`lockwright`, keep-up, both reader kinds): no reader ever meets a missing or
/// partial file — not even one Lucene would retry on — and none fails.
#[test]
fn lockwright_order_never_fails_a_lucene_reader() {
    let name = "lockwright";
    let o = run(name, Order::Lockwright, Plan::rounds(8, Gens::Skip));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
        assert!(o.commits(m) >= 5, "{}", o.report(name));
    }
}

/// Model rows 1–2 with `crash=1`: a round stopped after any call and finished by a copier that
/// remembers nothing leaves readers untouched.
#[test]
fn lockwright_order_survives_copier_crashes() {
    let name = "lockwright + crashes";
    let plan = Plan {
        crashes: true,
        ..Plan::rounds(8, Gens::Skip)
    };
    let o = run(name, Order::Lockwright, plan);
    assert!(o.crashes >= 3, "{}", o.report(name));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
    }
}

/// Readers that keep their commit (`HOLD`) while the copier brings force-merged commits.
fn hold(rounds: usize) -> Plan {
    Plan {
        hold: true,
        ..Plan::rounds(rounds, Gens::Skip)
    }
}

/// Model row 2 (keep-up: a reader keeps its commit for one round): the seed's retention keeps
/// the held commit's files, so even the by-name reader keeps searching.
#[test]
fn lockwright_order_keeps_a_commit_held_for_one_round() {
    let name = "lockwright, hold 1 round";
    let o = run(name, Order::Lockwright, hold(1));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
    }
}

/// Model row 4 (`lockwright × reopen-by-name × unbounded`): held for two rounds, the commit's
/// files are deleted; the by-name reader loses them, the reader with open handles does not
/// (row 3: "never loses a file" holds with open handles).
#[test]
fn lockwright_order_loses_a_commit_held_for_two_rounds_by_name() {
    let name = "lockwright, hold 2 rounds";
    let o = run(name, Order::Lockwright, hold(2));
    assert!(o.fails("by-name") > 0, "{}", o.report(name));
    assert_eq!(o.fails("handles"), 0, "{}", o.report(name));
}

/// Model rows 5–6 (`lucene-replicator`, keep-up): deleting the previous generation at once is
/// safe for readers with open handles, and takes the files of a by-name reader that still
/// searches it.
#[test]
fn lucene_replicator_order_is_safe_only_with_open_handles() {
    let name = "lucene-replicator, hold 1 round";
    let o = run(name, Order::LuceneReplicator, hold(1));
    assert!(o.fails("by-name") > 0, "{}", o.report(name));
    assert_eq!(o.fails("handles"), 0, "{}", o.report(name));
    let name = "lucene-replicator";
    let o = run(name, Order::LuceneReplicator, Plan::rounds(6, Gens::Skip));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
    }
}

/// Model row 8 (`seed-rule`): readers read `segments_N` while it is copied in place. Lucene
/// 4.10 sees a torn file (`EOFException`), retries, and falls back to `segments_N-1`: when
/// the replica received every generation, that is the previous commit (which the seed's rule
/// keeps) and nothing reaches the application; when the copier skipped a generation there is
/// no `segments_N-1`, and the reopen fails.
#[test]
fn seed_rule_order_lets_readers_read_a_partial_segments_file() {
    let name = "seed-rule, every generation";
    let o = run(name, Order::SeedRule, Plan::rounds(5, Gens::Next));
    for m in MODES {
        assert!(o.retries(m) > 0, "{}", o.report(name));
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
    }
    let name = "seed-rule, skipping generations";
    let o = run(name, Order::SeedRule, Plan::rounds(5, Gens::Skip));
    for m in MODES {
        assert!(o.fails(m) > 0, "{}", o.report(name));
    }
    let torn = o
        .fails
        .values()
        .flatten()
        .any(|f| f.contains("EOFException"));
    assert!(torn, "{}", o.report(name));
}

/// Model row 11 (`segments-first`): readers open `segments_N` before its files are there (and
/// read it while it is written). As for the seed's rule, Lucene's fallback to `segments_N-1`
/// hides this only when the replica received every generation.
#[test]
fn segments_first_order_sends_readers_after_missing_files() {
    let name = "segments-first, every generation";
    let o = run(name, Order::SegmentsFirst, Plan::rounds(5, Gens::Next));
    for m in MODES {
        assert!(o.retries(m) > 0, "{}", o.report(name));
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
    }
    let missing = o
        .retries
        .values()
        .flatten()
        .any(|r| r.contains("NoSuchFileException") || r.contains("FileNotFoundException"));
    assert!(missing, "{}", o.report(name));
    let name = "segments-first, skipping generations";
    let o = run(name, Order::SegmentsFirst, Plan::rounds(5, Gens::Skip));
    for m in MODES {
        assert!(o.fails(m) > 0, "{}", o.report(name));
    }
}

/// Model rows 13–14 (`any-order`, its shortest counterexample: delete `segments_N-1` first):
/// the replica has no commit at all for a while, and every reader's reopen fails
/// (`IndexNotFoundException`): Lucene has nothing to fall back to.
#[test]
fn any_order_makes_readers_fail() {
    let name = "any-order";
    let o = run(name, Order::AnyOrder, Plan::rounds(4, Gens::Next));
    for m in MODES {
        assert!(o.fails(m) > 0, "{}", o.report(name));
    }
    let no_commit = o
        .fails
        .values()
        .flatten()
        .any(|f| f.contains("IndexNotFoundException"));
    assert!(no_commit, "{}", o.report(name));
}

// ---------------------------------------------------------------------------------------------
// Refinement: the real copier's calls are steps the model allows (no Java needed).
// ---------------------------------------------------------------------------------------------

mod refinement {
    use super::*;
    use lockwright_model::replication::{
        Action, Faults, File, Name, Pace, ReaderKind, Scenario, State, Variant,
    };
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use stateright::Model;

    /// The replica as the model's directory: every call of the real copier is applied to the
    /// model with `Scenario::step`, which refuses a step the model does not allow there; after
    /// each call, some of the model's reader steps run, chosen at random. Every state on the
    /// way is checked against the `always` properties.
    struct ModelFs {
        sc: Scenario,
        s: State,
        rng: StdRng,
        trace: Vec<String>,
        violated: Vec<&'static str>,
    }

    fn file(name: &str) -> File {
        match name.strip_prefix("segments_") {
            Some(g) => File::Segments(g.parse().expect("a small generation")),
            None => File::Data(name[1..].parse().expect("a data file _i")),
        }
    }

    fn name(n: &str) -> Name {
        match n.strip_prefix(TEMP_PREFIX) {
            Some(f) => Name::Temp(file(f)),
            None => Name::Final(file(n)),
        }
    }

    impl ModelFs {
        fn new(sc: Scenario, seed: u64) -> ModelFs {
            ModelFs {
                sc,
                s: sc.init_states().remove(0),
                rng: StdRng::seed_from_u64(seed),
                trace: Vec::new(),
                violated: Vec::new(),
            }
        }

        fn take(&mut self, action: Action) {
            let next = self.sc.step(&self.s, action).unwrap_or_else(|| {
                panic!(
                    "refinement failure: the model does not allow {action} here\n{:?}\ntrace: {:?}",
                    self.s, self.trace
                )
            });
            self.trace.push(action.to_string());
            self.s = next;
            for v in self.sc.violated(&self.s) {
                if !self.violated.contains(&v) {
                    self.violated.push(v);
                }
            }
        }

        /// One call of the real copier, then a few reader steps.
        fn call(&mut self, action: Action) -> Result<(), ReplicationError> {
            self.take(action);
            self.readers_wander();
            Ok(())
        }

        /// Up to two reader steps, at random.
        fn readers_wander(&mut self) {
            for _ in 0..self.rng.random_range(0..3) {
                let mut acts = Vec::new();
                for r in 0..self.sc.readers {
                    self.sc.reader_actions(&self.s, r, &mut acts);
                }
                if acts.is_empty() {
                    return;
                }
                let a = acts[self.rng.random_range(0..acts.len())];
                self.take(a);
            }
        }

        /// Keep-up: every reader finishes a reopen attempt before a round starts.
        fn readers_catch_up(&mut self) {
            while !self.sc.readers_caught_up(&self.s) {
                let mut acts = Vec::new();
                for r in 0..self.sc.readers {
                    let rd = self.s.readers[r as usize];
                    if !rd.reopened || rd.opening.is_some() {
                        self.sc.reader_actions(&self.s, r, &mut acts);
                    }
                }
                self.take(acts[0]);
            }
        }
    }

    impl ReplicaFs for ModelFs {
        type Guard = ();
        fn lock(&mut self) -> Result<(), ReplicationError> {
            Ok(())
        }
        fn list(&mut self) -> Result<Vec<String>, ReplicationError> {
            Ok(self
                .s
                .replica
                .entries()
                .map(|(n, _)| n.to_string())
                .collect())
        }
        fn create(&mut self, n: &str) -> Result<(), ReplicationError> {
            self.call(Action::Create(file(n)))
        }
        fn fill(&mut self, n: &str) -> Result<(), ReplicationError> {
            self.call(Action::Fill(file(n)))
        }
        fn copy_to_temp(&mut self, n: &str, _temp: &str) -> Result<(), ReplicationError> {
            self.call(Action::CopyToTemp(file(n)))
        }
        fn fsync(&mut self, temp: &str) -> Result<(), ReplicationError> {
            self.call(Action::Fsync(name(temp).file()))
        }
        fn rename(&mut self, _from: &str, to: &str) -> Result<(), ReplicationError> {
            self.call(Action::Rename(file(to)))
        }
        fn sync_dir(&mut self) -> Result<(), ReplicationError> {
            self.call(Action::SyncDir)
        }
        fn delete(&mut self, n: &str) -> Result<(), ReplicationError> {
            self.call(Action::Delete(name(n)))
        }
    }

    /// Commit `g` shaped as the model's: `segments_g`, `_{g-1}`, `_g`.
    fn commit(g: u64) -> Commit {
        Commit::new(
            g,
            vec![
                format!("segments_{g}"),
                format!("_{}", g - 1),
                format!("_{g}"),
            ],
        )
        .unwrap()
    }

    /// Drives the real copier in `order` through the model's three rounds on the model's
    /// directory (reader steps at random between its calls, a crash after a random call in
    /// some rounds, readers catching up between rounds as `keep-up` says); returns the `always`
    /// properties violated on the way.
    fn drive(order: Order, seed: u64) -> Vec<&'static str> {
        let variant = Variant::from_name(order.name()).expect("every order is a model variant");
        let sc = Scenario::new(variant, ReaderKind::ReopenByName)
            .with_pace(Pace::KeepUp)
            .with_faults(Faults { crash: 3 });
        let mut copier = Copier::new(ModelFs::new(sc, seed), order).with_previous(commit(1));
        for g in 2..=u64::from(sc.last_gen()) {
            loop {
                let fs = copier.fs_mut();
                fs.readers_catch_up();
                let crash_after = (fs.s.budget.crash > 0 && fs.rng.random_bool(0.5))
                    .then(|| fs.rng.random_range(1..10));
                let mut calls = 0;
                copier = copier.with_hook(Box::new(move |_| {
                    calls += 1;
                    if Some(calls) == crash_after {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                }));
                match copier.replicate(&commit(g)) {
                    Ok(_) => {
                        let fs = copier.fs();
                        assert_eq!(
                            u64::from(fs.s.copier.round),
                            g - 1,
                            "{order}: the model's round for commit {g} is done\n{:?}\n{:?}",
                            fs.s,
                            fs.trace
                        );
                        break;
                    }
                    Err(ReplicationError::Interrupted { .. }) => {
                        let mut fs = copier.into_fs();
                        // Did the crash come after the round's last call?
                        let finished = u64::from(fs.s.copier.round) >= g - 1;
                        // (After the last call of the last round the model's copier is done:
                        // a crash then changes nothing.)
                        if fs.sc.target(&fs.s).is_some() {
                            fs.take(Action::CrashCopier);
                        }
                        // The restarted copier remembers nothing. Unless the round was over,
                        // it runs the round again (when nothing is left to do, the model
                        // already counts the round as done, and the rerun makes no call).
                        copier = Copier::new(fs, order);
                        if finished {
                            break;
                        }
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
        let fs = copier.fs_mut();
        for _ in 0..4 {
            fs.readers_wander();
        }
        fs.violated.clone()
    }

    /// Every call the real copier makes, in every order, with crashes anywhere, is a step the
    /// model allows at that point; under the `lockwright` order no state on the way violates a
    /// property, while the model's counterexamples show up for the other orders.
    #[test]
    fn copier_calls_refine_the_model() {
        let orders = [
            Order::Lockwright,
            Order::LuceneReplicator,
            Order::SeedRule,
            Order::SegmentsFirst,
            Order::AnyOrder,
        ];
        for order in orders {
            let mut seen: Vec<&str> = Vec::new();
            for seed in 0..300 {
                for v in drive(order, seed) {
                    if !seen.contains(&v) {
                        seen.push(v);
                    }
                }
            }
            seen.sort_unstable();
            println!("{order}: violated on some run: {seen:?}");
            if order == Order::Lockwright {
                assert!(seen.is_empty(), "{order}: {seen:?}");
            } else {
                assert!(
                    !seen.is_empty(),
                    "{order}: random runs found none of its bugs"
                );
            }
        }
    }
}
