//! `lockwright report`: the design-review docs regenerated from real model runs.
//!
//! [`generate`] model-checks every configuration the model supports (variant × OS lock kind ×
//! fault set, standard scenario sizes, breadth-first, one thread, so that every count and
//! every counterexample is deterministic) and writes, under the docs folder:
//!
//! - `results.md`: the verdict of every named property for every configuration, unique states,
//!   maximum depth, and every counterexample's path of actions;
//! - `results.json`: the same data, with each violated property's counterexample path
//!   (`path`: the action labels, step by step), plus wall-clock times (`time_ms`, the only
//!   non-deterministic values, which the staleness check ignores);
//! - `citing.md`: the model version, the stable property names, and the citation sentence for
//!   the standard scenario, filled in from the run;
//! - `traces/<id>.md` and `traces/<id>.svg`, for each counterexample a hand-written page
//!   cites ([`cited`]): its numbered steps and a sequence diagram.
//!
//! The other families ([`families`]: ZooKeeper, document store, replication) contribute
//! their curated rows (the verdict tables of their hand-written pages), the same way: `results-<family>.md`, `results-<family>.json` and the cited `traces/<family>/<id>.md|svg`.
//!
//! Every other counterexample's page and diagram is written on demand, into a folder the
//! user names, by [`all_traces`] and [`write_traces`]:
//!
//! ```sh
//! cargo run -p lockwright-report -- --traces target/traces   # every counterexample, all families
//! ```
//!
//! It also runs the REAL lock factories under shuttle for a small fixed set of correct
//! configurations, with fixed seeds, replaying every execution through the model
//! ([`shuttle_runs`]); `results.md` and `results.json` get a section "The real implementation
//! under shuttle" with the counts.
//!
//! [`compare::differences`] is the staleness check used by `lockwright-report --check`;
//! `checks/report/tests/report_fresh.rs` makes the same check one family at a time
//! ([`compare::differences_where`]). The results JSON files are the one pin of every
//! family's verdicts, state counts and counterexamples (there is no hand-written verdict test
//! besides them): a model change shows up as their diff after [`REGENERATE`].

pub mod cited;
mod citing;
pub mod compare;
pub mod families;
mod render;
mod runs;
pub mod shuttle_runs;
pub mod trace;

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

pub use runs::{pinned_configurations, run_all, sizes, FileRuns, GRID, MODEL_VERSION};

/// What the checker concluded about one property in one configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Finding {
    /// An `always` property with no counterexample in the whole state space.
    Holds,
    /// An `always` property with a counterexample.
    Violated,
    /// A `sometimes` property with an example.
    Reached,
    /// A `sometimes` property that no reachable state satisfies.
    NotReached,
    /// A `sometimes` property that the fault set cannot produce ("writer after crash" without
    /// crashes); it is not reached.
    NotApplicable,
}

impl Finding {
    /// Whether this verdict is the one the property asks for.
    pub fn is_ok(self) -> bool {
        matches!(
            self,
            Finding::Holds | Finding::Reached | Finding::NotApplicable
        )
    }

    pub fn word(self) -> &'static str {
        match self {
            Finding::Holds => "holds",
            Finding::Violated => "violated",
            Finding::Reached => "reached",
            Finding::NotReached => "not reached",
            Finding::NotApplicable => "not applicable",
        }
    }
}

/// One property's result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PropertyResult {
    /// The stable name ("at most one writer").
    pub name: String,
    /// `always` or `sometimes`.
    pub expectation: String,
    pub verdict: Finding,
    /// The counterexample's id: its page is `traces/<id>.md` (violations only; the page is
    /// committed when a hand-written page cites it, and written on demand otherwise).
    pub trace: Option<String>,
    /// Number of steps of the counterexample or example path.
    pub path_len: Option<usize>,
    /// The counterexample's actions, in order, as the model names them and as its trace's
    /// steps do (`["CreateLockNode(c0)", "ListChildren(c0)", …]`; violations only). The
    /// results JSON carries it so that the committed JSON pins every step of every
    /// counterexample. Absent from the JSON for the other verdicts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
}

/// One model-checking run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RunResult {
    pub variant: String,
    pub kind: String,
    /// The fault set's name (`none`, `crash`, ...).
    pub faults: String,
    /// The fault budgets, in `lockwright check --faults` syntax (`crash=1,restart=1`).
    pub budgets: String,
    /// What the fault set allows, in words.
    pub faults_detail: String,
    /// The scenario (processes × threads, budgets).
    pub scenario: String,
    pub processes: u8,
    /// Threads per process.
    pub threads: u8,
    /// Whether the checker merged states that differ only by renaming processes (and
    /// threads): `unique_states` then counts those classes.
    pub symmetry: bool,
    pub properties: Vec<PropertyResult>,
    /// Distinct states explored.
    pub unique_states: usize,
    /// Transitions explored, counting those that lead to already-seen states.
    pub transitions: u64,
    pub max_depth: usize,
    /// Whether the whole state space was explored (always true: the report never stops early).
    pub complete: bool,
    /// The `lockwright check` command that reruns the row, prints its counterexamples and
    /// exits 0 exactly when every verdict is the one reported.
    pub command: String,
    /// Wall-clock time of the run, in milliseconds (ignored by the staleness check).
    pub time_ms: u64,
}

impl RunResult {
    pub fn property(&self, name: &str) -> Option<&PropertyResult> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// `variant.kind.faults`, used in trace ids and anchors.
    pub fn slug(&self) -> String {
        format!("{}.{}.{}", self.variant, self.kind, self.faults)
    }
}

/// Everything a report run produced.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub model_version: String,
    pub generator: String,
    pub checker: String,
    /// The sizes every run of the verdict grid uses (processes × threads, what each thread
    /// does).
    pub sizes: String,
    /// The verdict grid: every variant × lock kind × fault set at [`runs::GRID`] sizes.
    pub runs: Vec<RunResult>,
    /// The standard scenario and every fault together per lock kind, at 3 processes × 2
    /// threads with symmetry reduction.
    pub three_processes: Vec<RunResult>,
    /// Scenarios outside the grid that pin a particular behaviour (a second crash, a fault
    /// mix, other sizes: [`runs::pinned_configurations`]), section "Other pinned scenarios".
    pub pinned: Vec<RunResult>,
    /// The real factories under shuttle, replayed through the model ([`shuttle_runs`]).
    pub shuttle: Vec<shuttle_runs::ShuttleResult>,
    #[serde(skip)]
    pub traces: Vec<trace::Trace>,
    /// The checker's report of every row (`runs`, then `three_processes`, then `pinned`):
    /// the scenario and every discovery, for the golden test's checks beyond the JSON.
    #[serde(skip)]
    pub checked: Vec<lockwright_model::Report<lockwright_model::file::Scenario>>,
    /// The other families' rows and traces (written to their own files).
    #[serde(skip)]
    pub families: Vec<families::FamilyReport>,
}

impl Report {
    /// The family named `name` (`zk`, `docstore`, `replication`, `redis`).
    pub fn family(&self, name: &str) -> Option<&families::FamilyReport> {
        self.families.iter().find(|f| f.family == name)
    }

    /// Every counterexample: the file family's, then each other family's.
    pub fn all_traces(&self) -> impl Iterator<Item = &trace::Trace> {
        self.traces
            .iter()
            .chain(self.families.iter().flat_map(|f| &f.traces))
    }
}

/// How every run is checked, in words.
pub const CHECKER: &str = "the model's exhaustive checker `lockwright_model::check`: \
                           breadth-first, one thread, whole state space, first-found \
                           (shortest) counterexamples";

/// Runs every configuration and builds the report (no I/O).
///
/// # Errors
/// A run could not be set up (a configuration the model rejects).
pub fn build() -> anyhow::Result<Report> {
    // The other families on a second thread: their rows (≈ 4 s of CPU, most of it the zk
    // standard scenario) then overlap the file family's on a machine with a core to spare.
    // Every run is still single-threaded and deterministic; only `time_ms` can change.
    let (file, families) = std::thread::scope(|scope| {
        let families = scope.spawn(families::run_all);
        (build_file(), families.join())
    });
    let mut report = file?;
    report.families = families.map_err(|_| anyhow::anyhow!("a family's run panicked"))??;
    Ok(report)
}

/// The file family alone: its verdict grid, the 3 × 2 rows, their counterexamples and the
/// shuttle runs of the real factories, with no other family (`families` is empty).
///
/// # Errors
/// See [`build`].
pub fn build_file() -> anyhow::Result<Report> {
    // The shuttle runs on a second thread: they do not depend on the model runs (only the
    // state counts they are shown next to, filled in below), and each is deterministic on
    // its own thread (fixed seeds, shuttle's own scheduler).
    let (file, shuttle) = std::thread::scope(|scope| {
        let shuttle = scope.spawn(shuttle_runs::run_all);
        (run_all(), shuttle.join())
    });
    let runs::FileRuns {
        runs,
        three_processes,
        pinned,
        traces,
        checked,
    } = file?;
    let mut shuttle = shuttle.map_err(|_| anyhow::anyhow!("a shuttle run panicked"))?;
    for s in &mut shuttle {
        s.model_unique_states = runs
            .iter()
            .find(|r| r.variant == s.variant && r.kind == s.kind && r.faults == s.faults)
            .map(|r| r.unique_states);
    }
    Ok(Report {
        model_version: MODEL_VERSION.to_string(),
        generator: "lockwright report".to_string(),
        checker: CHECKER.to_string(),
        sizes: sizes(),
        runs,
        three_processes,
        pinned,
        shuttle,
        traces,
        checked,
        families: Vec::new(),
    })
}

/// Every counterexample of every family, from the model runs alone (no shuttle runs, no
/// files): what `lockwright-report --traces <dir>` writes.
///
/// # Errors
/// See [`build`].
pub fn all_traces() -> anyhow::Result<Vec<trace::Trace>> {
    let (file, families) = std::thread::scope(|scope| {
        let families = scope.spawn(families::run_all);
        (run_all(), families.join())
    });
    let mut traces = file?.traces;
    let families = families.map_err(|_| anyhow::anyhow!("a family's run panicked"))??;
    traces.extend(families.into_iter().flat_map(|f| f.traces));
    Ok(traces)
}

/// A trace's page and diagram: `(path under traces/, text)` twice. Trace ids are paths under
/// `traces/` (`zk/<stem>` for a family's); the diagram sits next to its page.
fn trace_pages(t: &trace::Trace) -> [(String, String); 2] {
    let stem = t.id.rsplit('/').next().unwrap_or(&t.id);
    let svg = format!("{stem}.svg");
    [
        (format!("{}.md", t.id), t.to_markdown(&svg)),
        (format!("{}.svg", t.id), t.to_svg()),
    ]
}

/// Writes `report` into `out` (created if needed), with a page and a diagram under
/// `out/traces/` for each counterexample that a hand-written page in `out` cites
/// ([`cited::cited_ids`]). Files under `out/traces/` (and its family folders) that it does
/// not write are deleted, and so are the family folders this leaves empty; nothing else in
/// `out` is touched.
///
/// # Errors
/// I/O errors, with the path.
pub fn write(report: &Report, out: &Path) -> anyhow::Result<()> {
    let cited = cited::cited_ids(out)
        .with_context(|| format!("reading the hand-written pages in {}", out.display()))?;
    write_to(report, out, &cited)
}

/// [`write`](fn@write), with the traces to commit given: a page and a diagram under
/// `out/traces/` for each counterexample whose id is in `cited` (ids that no counterexample
/// has are skipped: the staleness check names them). The generated pages link to those pages
/// and show every other counterexample's path inline.
///
/// # Errors
/// I/O errors, with the path.
pub fn write_to(report: &Report, out: &Path, cited: &BTreeSet<String>) -> anyhow::Result<()> {
    let committed: BTreeSet<String> = report
        .all_traces()
        .filter(|t| cited.contains(&t.id))
        .map(|t| t.id.clone())
        .collect();
    let traces_dir = out.join("traces");
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            out.join("results.md"),
            render::results_md(report, &committed),
        ),
        (out.join("results.json"), render::results_json(report)?),
        (out.join("citing.md"), citing::citing_md(report)),
    ];
    for f in &report.families {
        files.extend(family_files(f, out, &committed)?);
    }
    let mut keep = BTreeSet::new();
    for t in report.all_traces().filter(|t| committed.contains(&t.id)) {
        for (name, text) in trace_pages(t) {
            files.push((traces_dir.join(&name), text));
            keep.insert(name);
        }
    }
    for name in compare::trace_files(out)? {
        if !keep.contains(&name) {
            let p = traces_dir.join(&name);
            fs::remove_file(&p).with_context(|| format!("removing stale {}", p.display()))?;
            // The family folder, once its last trace is gone (a folder of `traces/` that
            // holds something else stays).
            if let Some(dir) = p.parent().filter(|d| *d != traces_dir) {
                if fs::read_dir(dir).is_ok_and(|mut rd| rd.next().is_none()) {
                    fs::remove_dir(dir)
                        .with_context(|| format!("removing empty {}", dir.display()))?;
                }
            }
        }
    }
    put(files)
}

/// One family's files alone, into `out`: `results-<family>.md` and `.json` and the pages and
/// diagrams of its counterexamples whose ids are in `cited`. Deletes nothing. (The staleness
/// test checks each family on its own with it.)
///
/// # Errors
/// I/O errors, with the path.
pub fn write_family(
    f: &families::FamilyReport,
    out: &Path,
    cited: &BTreeSet<String>,
) -> anyhow::Result<()> {
    let committed: BTreeSet<String> = f
        .traces
        .iter()
        .filter(|t| cited.contains(&t.id))
        .map(|t| t.id.clone())
        .collect();
    let mut files = family_files(f, out, &committed)?;
    for t in f.traces.iter().filter(|t| committed.contains(&t.id)) {
        for (name, text) in trace_pages(t) {
            files.push((out.join("traces").join(name), text));
        }
    }
    put(files)
}

/// `results-<family>.md` and `.json`; `committed`: the ids whose pages are committed.
fn family_files(
    f: &families::FamilyReport,
    out: &Path,
    committed: &BTreeSet<String>,
) -> anyhow::Result<Vec<(PathBuf, String)>> {
    Ok(vec![
        (out.join(f.page_name()), families::results_md(f, committed)),
        (out.join(f.json_name()), families::results_json(f)?),
    ])
}

/// Writes every trace in `traces` into `dir` (created if needed): `<id>.md` and `<id>.svg`,
/// the other families' in `dir/<family>/`, as under `docs/traces/`. Nothing in `dir` is
/// deleted. Returns the number of traces written.
///
/// # Errors
/// I/O errors, with the path.
pub fn write_traces<'a>(
    traces: impl IntoIterator<Item = &'a trace::Trace>,
    dir: &Path,
) -> anyhow::Result<usize> {
    let mut files = Vec::new();
    let mut n = 0;
    for t in traces {
        n += 1;
        for (name, text) in trace_pages(t) {
            files.push((dir.join(name), text));
        }
    }
    put(files)?;
    Ok(n)
}

fn put(files: Vec<(PathBuf, String)>) -> anyhow::Result<()> {
    for (path, text) in files {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        write_if_changed(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn write_if_changed(path: &Path, text: &str) -> io::Result<()> {
    match fs::read(path) {
        Ok(old) if old == text.as_bytes() => Ok(()),
        _ => fs::write(path, text),
    }
}

/// Runs everything and writes the docs into `out` ([`build`], then [`write`](fn@write)).
///
/// # Errors
/// See [`build`] and [`write`](fn@write).
pub fn generate(out: &Path) -> anyhow::Result<Report> {
    let report = build()?;
    write(&report, out)?;
    Ok(report)
}

/// The staleness check: writes `report` into a temporary folder with the traces the
/// hand-written pages in `committed` cite, and returns how the committed docs differ from it
/// ([`compare::differences`]), one line each; empty if they are fresh.
///
/// # Errors
/// I/O errors, with the path.
pub fn stale(report: &Report, committed: &Path) -> anyhow::Result<Vec<String>> {
    let cited = cited::cited_ids(committed)
        .with_context(|| format!("reading the hand-written pages in {}", committed.display()))?;
    let tmp = tempfile::tempdir().context("creating a temporary folder")?;
    write_to(report, tmp.path(), &cited)?;
    Ok(compare::differences(tmp.path(), committed)?)
}

/// The workspace's `docs/` folder (the default output of `lockwright report`).
pub fn default_docs_dir() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join("docs");
    p.canonicalize().unwrap_or(p)
}

/// The command that regenerates the docs, as the staleness messages and every generated page
/// print it.
pub const REGENERATE: &str = "cargo run -p lockwright-report --";
