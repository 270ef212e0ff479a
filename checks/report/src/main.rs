//! `lockwright-report`: regenerate `docs/results.md`, `docs/results.json`, `docs/citing.md`,
//! each other family's `docs/results-<family>.md` and `.json`, and the traces the hand-written
//! pages cite under `docs/traces/`, from real model runs (and real shuttle runs of the lock
//! factories, replayed through the model); or (`--check`) verify that the committed ones are
//! fresh; or (`--traces DIR`) write every counterexample's numbered steps and sequence diagram
//! into `DIR`. A separate, unpublished crate: the shuttle runs need the dev-only test kit,
//! which the published `lockwright` binary leaves out.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use lockwright_report as report;

#[derive(clap::Parser, Debug)]
#[command(
    name = "lockwright-report",
    version,
    about = "Regenerate lockwright's design-review docs from real model runs and shuttle runs",
    after_help = "Exit status: 0 docs written (or fresh with --check, or traces written with \
                  --traces); 1 stale docs (--check); 2 an error."
)]
struct ReportArgs {
    /// Folder to write into (default: the workspace's `docs/`). Only `results.md`,
    /// `results.json`, `citing.md`, `results-<family>.md`/`.json` and the traces its
    /// hand-written pages cite under `traces/` are written; other files in `traces/` are
    /// removed.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Do not write: regenerate into a temporary folder and exit 1 if the docs in the output
    /// folder differ (times in `results.json` are ignored).
    #[arg(long, conflicts_with = "traces")]
    check: bool,
    /// Write every counterexample of every family, cited or not, into DIR (created if needed)
    /// as under `docs/traces/`: `<id>.md` (numbered steps) and `<id>.svg` (sequence diagram),
    /// the other families' in `DIR/zk/`, `DIR/docstore/`, `DIR/replication/`. Runs the
    /// models only (no shuttle runs) and touches nothing else; nothing in DIR is deleted.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    traces: Option<PathBuf>,
    /// Regenerate only this family's `results-<family>.md`/`.json` and its cited traces
    /// (zk, docstore, replication, etcd): model runs only, nothing else touched.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["check", "traces"])]
    family: Option<String>,
    /// No progress line on stderr.
    #[arg(long, short)]
    quiet: bool,
}

/// # Errors
/// A model run could not be set up, or the docs could not be written or read.
fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    if let Some(dir) = args.traces {
        if !args.quiet {
            eprintln!(
                "lockwright-report: model runs of every family, every counterexample into {}",
                dir.display()
            );
        }
        let traces = report::all_traces()?;
        let n = report::write_traces(&traces, &dir)?;
        println!(
            "wrote {n} counterexamples (numbered steps `<id>.md` and diagram `<id>.svg` each) \
             to {} ({:.1} s)",
            dir.display(),
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let out = args.out.unwrap_or_else(report::default_docs_dir);
    if let Some(name) = args.family {
        let f = report::families::run_one(&name)?;
        report::write_family(&f, &out, &report::cited::cited_ids(&out)?)?;
        println!(
            "wrote results-{name}.md/.json into {}: {} rows, {} counterexamples ({:.1} s)",
            out.display(),
            f.runs.len(),
            f.traces.len(),
            started.elapsed().as_secs_f64()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !args.quiet {
        eprintln!(
            "lockwright-report: model runs and shuttle runs of every family for {} (a few \
             minutes)",
            out.display()
        );
    }
    if args.check {
        let diffs = report::stale(&report::build()?, &out)?;
        if diffs.is_empty() {
            println!("docs are fresh: {}", out.display());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("docs are stale: run `{}`", report::REGENERATE);
        for d in diffs {
            eprintln!("  {d}");
        }
        return Ok(ExitCode::from(1));
    }
    let rep = report::generate(&out)?;
    // A link to a trace the report does not find (a renamed configuration or property).
    let ids: std::collections::BTreeSet<&str> = rep.all_traces().map(|t| t.id.as_str()).collect();
    for c in report::cited::citations(&out)? {
        if !ids.contains(c.id.as_str()) {
            eprintln!(
                "lockwright-report: warning: {} links to {}, but no counterexample has that id",
                c.page, c.target
            );
        }
    }
    let violations = rep.traces.len();
    let families: Vec<String> = rep
        .families
        .iter()
        .map(|f| {
            format!(
                "{}: {} rows, {} counterexamples",
                f.family,
                f.runs.len(),
                f.traces.len()
            )
        })
        .collect();
    let executions: usize = rep.shuttle.iter().map(|r| r.executions).sum();
    let refined: usize = rep.shuttle.iter().map(|r| r.refined).sum();
    println!(
        "wrote {}: {} runs (+ {} at 3 processes × 2 threads, {} other pinned), {} counterexamples, model v{}; \
         real factories under shuttle: {refined} of {executions} executions refined; {} \
         ({:.1} s); every counterexample's trace: `{} --traces <dir>`",
        out.display(),
        rep.runs.len(),
        rep.three_processes.len(),
        rep.pinned.len(),
        violations,
        rep.model_version,
        families.join("; "),
        started.elapsed().as_secs_f64(),
        report::REGENERATE
    );
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    match run(ReportArgs::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lockwright-report: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
