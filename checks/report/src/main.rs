//! `lockwright-report`: regenerate `docs/results.md`, `docs/results.json`, `docs/citing.md`,
//! each other family's `docs/results-<family>.md` and `.json`, and `docs/traces/` from real
//! model runs (and real shuttle runs of the lock factories, replayed through the model), or
//! (`--check`) verify that the committed ones are fresh. A separate, unpublished crate: the
//! shuttle runs need the dev-only test kit, which the published `lockwright` binary leaves out.

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
    after_help = "Exit status: 0 docs written (or fresh with --check); 1 stale docs (--check); 2 an \
                  error."
)]
struct ReportArgs {
    /// Folder to write into (default: the workspace's `docs/`). Only `results.md`,
    /// `results.json`, `citing.md`, `results-<family>.md`/`.json` and `traces/` are written;
    /// stale files in `traces/` are removed.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Do not write: regenerate into a temporary folder and exit 1 if the docs in the output
    /// folder differ (times in `results.json` are ignored).
    #[arg(long)]
    check: bool,
    /// No progress line on stderr.
    #[arg(long, short)]
    quiet: bool,
}

/// # Errors
/// A model run could not be set up, or the docs could not be written or read.
fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let out = args.out.unwrap_or_else(report::default_docs_dir);
    let started = Instant::now();
    if !args.quiet {
        eprintln!(
            "lockwright-report: model runs and shuttle runs of every family for {} (a few \
             minutes)",
            out.display()
        );
    }
    if args.check {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let tmp = std::env::temp_dir().join(format!(
            "lockwright-report-check-{}-{nanos}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        let result =
            report::generate(&tmp).and_then(|_| Ok(report::compare::differences(&tmp, &out)?));
        let _ = std::fs::remove_dir_all(&tmp);
        let diffs = result?;
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
        "wrote {}: {} runs (+ {} at 3 processes × 2 threads), {} counterexamples, model v{}; \
         real factories under shuttle: {refined} of {executions} executions refined; {} \
         ({:.1} s)",
        out.display(),
        rep.runs.len(),
        rep.three_processes.len(),
        violations,
        rep.model_version,
        families.join("; "),
        started.elapsed().as_secs_f64()
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
