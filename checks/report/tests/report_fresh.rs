//! The committed design-review docs are what `lockwright report` generates from the model
//! today.
//!
//! Regenerates everything into a temporary folder and compares it with `docs/`:
//! `results.md`, `citing.md`, each other family's `results-<family>.md` (ZooKeeper, document
//! store, replication) and every file under `docs/traces/` and its family folders byte for
//! byte (and no missing or left-over files); `results.json` and `results-<family>.json` as
//! parsed JSON with the wall-clock `time_ms` members removed. Any change to the model that
//! moves a state count, a verdict or a counterexample step therefore fails here until the docs
//! are regenerated. The shuttle
//! section (the real factories, fixed seeds) is compared the same way, so the same seeds must
//! give the same counts, and every one of its executions must refine.

use std::path::Path;

use lockwright_report as report;

#[test]
fn committed_docs_are_fresh() {
    let tmp = tempfile::tempdir().expect("temporary folder");
    let rep = report::generate(tmp.path()).expect("report generates");
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
    // Every family contributes its rows and, where something is violated, its traces.
    for name in ["zk", "docstore", "replication"] {
        let f = rep
            .family(name)
            .unwrap_or_else(|| panic!("no {name} family"));
        assert!(
            !f.runs.is_empty() && !f.traces.is_empty(),
            "{name}: {} rows, {} traces",
            f.runs.len(),
            f.traces.len()
        );
    }
    let committed = report::default_docs_dir();
    let diffs = report::compare::differences(tmp.path(), &committed).expect("docs readable");
    assert!(
        diffs.is_empty(),
        "docs are stale: run `{}`\n  {}",
        report::REGENERATE,
        diffs.join("\n  ")
    );
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
        for target in links(&text) {
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

/// Targets of Markdown links `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(j) = rest.find(')') {
            out.push(rest[..j].to_string());
            rest = &rest[j..];
        }
    }
    out
}
