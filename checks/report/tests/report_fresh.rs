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
//!
//! The results JSON is the one pin of every family's verdicts (there are no hand-written
//! verdict tables besides it): a model change that moves a count, a verdict or a step shows
//! up as the diff of `cargo run -p lockwright-report --`. On the runs the comparison makes
//! anyway, each test also checks, row by row, what a golden value cannot say: every
//! discovery replays to the first state that violates its property, or to one where its
//! example holds ([`assert_discoveries_replay`]), and the family's `always` properties are
//! not vacuous (the file family: some thread writes, and each violation's end state is one
//! the model names as violating it; zk: a later grant writes, where a session can expire an
//! update is overtaken, and every discovery replays through the replayer's `Scenario::step`;
//! docstore: a write is accepted; replication: a reader moves on to a replicated commit).

use std::path::Path;

use lockwright_model::checker::pinned::{assert_discoveries_replay, reachable};
use lockwright_model::{docstore, etcd, file, redis, replication, zk, Family, Report};
use lockwright_report as report;
use report::compare::owner;
use report::families::{self, Presenter, NAMES};
use stateright::Model;

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

/// The `scenario` of every row in the committed golden file `name`'s arrays `sections`, in
/// order.
fn committed_scenarios(name: &str, sections: &[&str]) -> Vec<String> {
    let path = report::default_docs_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("golden file parses");
    sections
        .iter()
        .flat_map(|s| json[*s].as_array().cloned().unwrap_or_default())
        .map(|row| {
            row["scenario"]
                .as_str()
                .expect("a row names its scenario")
                .to_owned()
        })
        .collect()
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
    // The per-row checks ran on exactly the rows the committed golden file pins, in its order.
    let labels: Vec<String> = rep.checked.iter().map(|r| r.model.label()).collect();
    assert_eq!(
        labels,
        committed_scenarios("results.json", &["runs", "three_processes", "pinned"]),
        "the checked rows are the golden file's"
    );
    for r in &rep.checked {
        file_row_checks(r);
    }
    let tmp = tempfile::tempdir().expect("temporary folder");
    report::write_to(&rep, tmp.path(), &cited()).expect("report writes");
    assert_fresh(tmp.path(), |name| owner(name, &NAMES).is_none());
}

/// The file family's checks of one row beyond its golden values.
fn file_row_checks(r: &Report<file::Scenario>) {
    let sc = &r.model;
    let label = sc.label();
    assert_discoveries_replay(sc, &label, r);
    // "writes are exclusive" and "at most one valid writer" are not vacuous: in every row
    // some thread passes `EnsureValid` and is writing.
    assert!(
        reachable(sc, |s: &file::State| s
            .live_threads()
            .any(|(_, _, th)| th.pc == file::Pc::Writing)),
        "{label}: no write ever begins"
    );
    // The file model's own name for what a state violates agrees with the property's
    // condition, at the end of each counterexample replayed through `Scenario::step` (the
    // replayer's API).
    for v in r.verdicts.iter().filter(|v| !v.holds()) {
        let Some(path) = &v.path else { continue };
        let s = path.iter().fold(sc.init_states().remove(0), |s, a| {
            sc.step(&s, *a)
                .unwrap_or_else(|| panic!("{label}: {a} is enabled"))
        });
        assert!(sc.violated(&s).contains(&v.name), "{label}: {}", v.name);
    }
}

/// One other family: its rows run, it has counterexamples, every row passes `row_checks`
/// (after [`assert_discoveries_replay`]), and its files are fresh.
fn family_docs_are_fresh<P: Presenter>(row_checks: impl Fn(&P, &str, &Report<P>)) {
    let (f, checked) = families::run_checked::<P>().expect("rows run");
    // The per-row checks run on exactly the rows the committed golden file pins, in its order.
    let labels: Vec<String> = checked.iter().map(|r| r.model.label()).collect();
    assert_eq!(
        labels,
        committed_scenarios(&format!("results-{}.json", P::NAME), &["runs"]),
        "the checked rows are the golden file's"
    );
    let want: Vec<&str> = P::ALWAYS.iter().chain(P::SOMETIMES).copied().collect();
    for r in &checked {
        let label = r.model.label();
        // The golden file lists the properties of `Family::ALWAYS` and `SOMETIMES`: they must
        // be the model's own, in its order, or a property would go unpinned.
        let names: Vec<&str> = r.verdicts.iter().map(|v| v.name).collect();
        assert_eq!(names, want, "properties of {label}");
        assert_discoveries_replay(&r.model, &label, r);
        row_checks(&r.model, &label, r);
    }
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
    family_docs_are_fresh(|sc: &zk::Scenario, label, r| {
        // "fenced writes are exclusive" is not vacuous: in every row a holder granted after
        // an accepted write's holder is about to write.
        assert!(
            reachable(sc, |s| s.holders().any(|c| {
                let own = s.clients[c as usize].own.expect("a holder has a node");
                s.resource.max_czxid.is_some_and(|m| m < own.czxid)
            })),
            "{label}: no later grant ever writes"
        );
        // Nor is "no lost update": wherever a session can expire, some holder is inside an
        // update (read, not yet written) when a write made under another grant is accepted —
        // the step a lost update needs. Where it holds, the write that would lose it is
        // refused.
        if sc.faults.expire > 0 {
            assert!(
                reachable(sc, |s| s.clients.iter().any(|c| c.overwritten)),
                "{label}: no update is ever overtaken by another grant's write"
            );
        }
        // Every discovery is also a path of the replayer's API (`Scenario::step`), and reads
        // as numbered steps (what docs/zookeeper.md lists).
        for v in &r.verdicts {
            let Some(path) = &v.path else { continue };
            let mut s = sc.init_states().remove(0);
            for a in path {
                s = sc
                    .step(&s, *a)
                    .unwrap_or_else(|| panic!("{label}: {a} is enabled"));
            }
            sc.describe_path(path).expect("describable");
        }
    });
}

#[test]
fn docstore_docs_are_fresh() {
    family_docs_are_fresh(|sc: &docstore::Scenario, label, _| {
        // Not vacuous: in every row the data document accepts some write.
        assert!(
            reachable(sc, |s| s.written.is_some()),
            "{label}: no write is ever accepted"
        );
    });
}

#[test]
fn replication_docs_are_fresh() {
    family_docs_are_fresh(|sc: &replication::Scenario, label, _| {
        // Not vacuous: in every row some reader moves on to a commit the copier replicated.
        let init = sc.init_states().remove(0);
        assert!(
            reachable(sc, |s: &replication::State| s
                .readers
                .iter()
                .zip(&init.readers)
                .any(|(r, r0)| r.current.is_some() && r.current != r0.current)),
            "{label}: no reader ever opens a replicated commit"
        );
    });
}

#[test]
fn redis_docs_are_fresh() {
    family_docs_are_fresh(|sc: &redis::Scenario, label, r| {
        // Not vacuous: in every row the resource accepts some write.
        assert!(
            reachable(sc, |s: &redis::State| s.resource.version > 0),
            "{label}: no write is ever accepted"
        );
        // Each row's verdicts are the documented ones (what makes its `lockwright check`
        // command exit 0): every violation and every unreached applicable example is declared.
        let mut got: Vec<&str> = r
            .verdicts
            .iter()
            .filter(|v| !v.holds() && sc.applies(v.name))
            .map(|v| v.name)
            .collect();
        let mut want: Vec<&str> = Family::documented(sc).iter().map(|d| d.0).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{label}: verdicts against documented()");
    });
}

#[test]
fn etcd_docs_are_fresh() {
    family_docs_are_fresh(|sc: &etcd::Scenario, label, r| {
        // Not vacuous: in every row some increment is acknowledged.
        assert!(
            reachable(sc, |s: &etcd::State| s.acked > 0),
            "{label}: no write is ever accepted"
        );
        // Every row's violated `always` properties are exactly the ones its scenario
        // documents (what `lockwright check` expects of it).
        let mut violated: Vec<&str> = r
            .verdicts
            .iter()
            .filter(|v| v.expectation == stateright::Expectation::Always && !v.holds())
            .map(|v| v.name)
            .collect();
        let mut documented: Vec<&str> =
            Family::documented(sc).into_iter().map(|(p, _)| p).collect();
        violated.sort_unstable();
        documented.sort_unstable();
        assert_eq!(violated, documented, "{label}: documented verdicts");
    });
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
        "redis.md",
        "etcd.md",
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
        ("redis.md", "results-redis.md"),
        ("etcd.md", "results-etcd.md"),
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
