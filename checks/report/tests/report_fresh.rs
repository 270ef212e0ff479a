//! The committed design-review docs are what `lockwright report` generates from the model
//! today, one family per test.
//!
//! Each test regenerates one family into a temporary folder and compares it with `docs/`:
//! the file family (`file_family_docs_are_fresh`: `results.md`, `results.json`, `citing.md`,
//! `traces/<id>.*`, the shuttle section), then `zk`, `docstore` and `replication`
//! (`results-<family>.md`, `results-<family>.json`, `traces/<family>/`). Each family's models
//! run once, in its own test, so the four run side by side. Compared: the pages and every
//! committed trace page and diagram byte for byte; the set of trace files against the traces
//! the hand-written pages cite (none missing, none left over, no link to a counterexample the
//! report does not find); the JSON files as parsed JSON with the wall-clock `time_ms` members
//! removed. Each violated property's `path` in the JSON lists its counterexample's actions,
//! so any change to the model that moves a state count, a verdict or a counterexample step
//! fails here until the docs are regenerated, whether or not the trace's page is committed.
//! The shuttle section (the real factories, fixed seeds) is compared the same way, so the
//! same seeds must give the same counts, and every one of its executions must refine.

use std::path::Path;

use lockwright_report as report;
use report::compare::owner;
use report::families::{self, Presenter, NAMES};

/// Compares the fresh files in `fresh` that `in_scope` accepts with the committed docs.
fn assert_fresh(fresh: &Path, in_scope: impl Fn(&str) -> bool) {
    let committed = report::default_docs_dir();
    let diffs =
        report::compare::differences_where(fresh, &committed, in_scope).expect("docs readable");
    assert!(
        diffs.is_empty(),
        "docs are stale: run `{}`\n  {}",
        report::REGENERATE,
        diffs.join("\n  ")
    );
}

/// The traces the committed hand-written pages cite (the ones `docs/traces/` keeps).
fn cited() -> std::collections::BTreeSet<String> {
    report::cited::cited_ids(&report::default_docs_dir()).expect("hand-written pages readable")
}

#[test]
fn file_family_docs_are_fresh() {
    let rep = report::build_file().expect("report builds");
    // The real factories under shuttle (section "The real implementation under shuttle"):
    // only correct configurations are run, so every execution must refine with all four
    // `always` properties. Checked here, on the run the freshness check makes anyway, so that
    // a regression fails with its own message rather than as a stale-docs diff.
    assert!(!rep.shuttle.is_empty(), "no shuttle rows");
    for r in &rep.shuttle {
        assert!(
            r.executions > 0
                && r.refined == r.executions
                && r.violations == 0
                && r.departed == 0
                && r.distinct_recordings > 1,
            "real {} × {} under shuttle: {r:?}",
            r.factory,
            r.kind
        );
    }
    let tmp = tempfile::tempdir().expect("temporary folder");
    report::write_to(&rep, tmp.path(), &cited()).expect("report writes");
    assert_fresh(tmp.path(), |name| owner(name, &NAMES).is_none());
}

/// One other family: its rows run, it has counterexamples, and its files are fresh.
fn family_docs_are_fresh<P: Presenter>() {
    let f = families::run::<P>().expect("rows run");
    assert!(
        NAMES.contains(&f.family),
        "{} is not in families::NAMES",
        f.family
    );
    assert!(
        !f.runs.is_empty() && !f.traces.is_empty(),
        "{}: {} rows, {} traces",
        f.family,
        f.runs.len(),
        f.traces.len()
    );
    let tmp = tempfile::tempdir().expect("temporary folder");
    report::write_family(&f, tmp.path(), &cited()).expect("report writes");
    assert_fresh(tmp.path(), |name| owner(name, &NAMES) == Some(f.family));
}

#[test]
fn zk_docs_are_fresh() {
    family_docs_are_fresh::<lockwright_model::zk::Scenario>();
}

#[test]
fn docstore_docs_are_fresh() {
    family_docs_are_fresh::<lockwright_model::docstore::Scenario>();
}

#[test]
fn replication_docs_are_fresh() {
    family_docs_are_fresh::<lockwright_model::replication::Scenario>();
}

/// Every relative link in the hand-written pages that points into `traces/` or at a generated
/// page names a file that exists, so a regenerated report cannot silently orphan them.
#[test]
fn hand_written_pages_link_to_existing_files() {
    let docs = report::default_docs_dir();
    for page in [
        "README.md",
        "protocol.md",
        "incidents.md",
        "zookeeper.md",
        "docstore.md",
        "replication.md",
    ] {
        let path = docs.join(page);
        let Ok(text) = std::fs::read_to_string(&path) else {
            panic!("{} is missing", path.display());
        };
        for target in report::cited::links(&text) {
            if target.starts_with("http") || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap_or_default();
            let resolved = docs.join(file);
            assert!(
                Path::new(&resolved).exists(),
                "{page} links to {target}, which does not exist (docs are stale: run `{}`)",
                report::REGENERATE
            );
        }
    }
}

/// Each family's hand-written page and the docs index link to its generated page.
#[test]
fn family_pages_link_to_their_generated_tables() {
    let docs = report::default_docs_dir();
    let read = |page: &str| std::fs::read_to_string(docs.join(page)).expect(page);
    let readme = read("README.md");
    for (page, generated) in [
        ("zookeeper.md", "results-zk.md"),
        ("docstore.md", "results-docstore.md"),
        ("replication.md", "results-replication.md"),
    ] {
        let target = format!("]({generated})");
        assert!(
            read(page).contains(&target),
            "{page} does not link {generated}"
        );
        assert!(
            readme.contains(&target),
            "README.md does not link {generated}"
        );
    }
}
