//! `lockwright report`: the design-review docs regenerated from real model runs.
//!
//! [`generate`] model-checks every configuration the model supports (variant × OS lock kind ×
//! fault set, standard scenario sizes, breadth-first, one thread, so that every count and
//! every counterexample is deterministic) and writes, under the docs folder:
//!
//! - `results.md`: the verdict of every named property for every configuration, unique states,
//!   maximum depth, and links to the counterexamples;
//! - `results.json`: the same data, plus wall-clock times (`time_ms`, the only
//!   non-deterministic values, which the staleness check ignores);
//! - `citing.md`: the model version, the stable property names, and the citation sentence for
//!   the standard scenario, filled in from the run;
//! - `traces/<id>.md` and `traces/<id>.svg`: each counterexample as numbered steps and as a
//!   sequence diagram.
//!
//! The other families ([`families`]: ZooKeeper, document store, replication) contribute
//! their curated rows (the scenarios their `model/tests/<family>_verdicts/` pins), the same
//! way: `results-<family>.md`, `results-<family>.json` and `traces/<family>/<id>.md|svg`.
//!
//! It also runs the REAL lock factories under shuttle for a small fixed set of correct
//! configurations, with fixed seeds, replaying every execution through the model
//! ([`shuttle_runs`]); `results.md` and `results.json` get a section "The real implementation
//! under shuttle" with the counts.
//!
//! [`compare::differences`] is the staleness check used by `lockwright-report --check` and by
//! `checks/report/tests/report_fresh.rs`.

mod citing;
pub mod compare;
pub mod families;
mod render;
mod runs;
pub mod shuttle_runs;
pub mod trace;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use runs::{run_all, sizes, FileRuns, GRID, MODEL_VERSION};

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
    /// The counterexample's id under `traces/` (violations only).
    pub trace: Option<String>,
    /// Number of steps of the counterexample or example path.
    pub path_len: Option<usize>,
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
    /// threads with symmetry reduction (`model/tests/three_processes.rs`).
    pub three_processes: Vec<RunResult>,
    /// The real factories under shuttle, replayed through the model ([`shuttle_runs`]).
    pub shuttle: Vec<shuttle_runs::ShuttleResult>,
    #[serde(skip)]
    pub traces: Vec<trace::Trace>,
    /// The other families' rows and traces (written to their own files).
    #[serde(skip)]
    pub families: Vec<families::FamilyReport>,
}

impl Report {
    /// The family named `name` (`zk`, `docstore`, `replication`).
    pub fn family(&self, name: &str) -> Option<&families::FamilyReport> {
        self.families.iter().find(|f| f.family == name)
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
        (run_all(), families.join())
    });
    let runs::FileRuns {
        runs,
        three_processes,
        traces,
    } = file?;
    let families = families.map_err(|_| anyhow::anyhow!("a family's run panicked"))??;
    let mut shuttle = shuttle_runs::run_all();
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
        shuttle,
        traces,
        families,
    })
}

/// Writes `report` into `out` (created if needed). Files under `out/traces/` (and its family
/// folders) that this report does not produce are deleted; nothing else in `out` is touched.
///
/// # Errors
/// I/O errors, with the path.
pub fn write(report: &Report, out: &Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let traces_dir = out.join("traces");
    let mut files: Vec<(PathBuf, String)> = vec![
        (out.join("results.md"), render::results_md(report)),
        (out.join("results.json"), render::results_json(report)?),
        (out.join("citing.md"), citing::citing_md(report)),
    ];
    let mut traces: Vec<&trace::Trace> = report.traces.iter().collect();
    for f in &report.families {
        files.push((out.join(f.page_name()), families::results_md(f)));
        files.push((out.join(f.json_name()), families::results_json(f)?));
        traces.extend(&f.traces);
    }
    // Trace ids are paths under `traces/` (`zk/<stem>` for a family's); the diagram sits next
    // to its page.
    let mut keep = std::collections::BTreeSet::new();
    for t in traces {
        let stem = t.id.rsplit('/').next().unwrap_or(&t.id);
        let svg = format!("{stem}.svg");
        for (name, text) in [
            (format!("{}.md", t.id), t.to_markdown(&svg)),
            (format!("{}.svg", t.id), t.to_svg()),
        ] {
            files.push((traces_dir.join(&name), text));
            keep.insert(name);
        }
    }
    for name in compare::trace_files(out)? {
        if !keep.contains(&name) {
            let p = traces_dir.join(&name);
            fs::remove_file(&p).with_context(|| format!("removing stale {}", p.display()))?;
        }
    }
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

/// Runs everything and writes the docs into `out`.
///
/// # Errors
/// See [`build`] and [`write`](fn@write).
pub fn generate(out: &Path) -> anyhow::Result<Report> {
    let report = build()?;
    write(&report, out)?;
    Ok(report)
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
