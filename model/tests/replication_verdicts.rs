//! The verdict table of `docs/replication.md`, pinned: for every scenario, each property's
//! verdict, the exact number of unique states, and the exact (shortest, BFS-first)
//! counterexample of every violated `always` property. A change to the model that alters the
//! state space or a counterexample shows up here as a diff.
//!
//! Every row runs exhaustively, so "holds" means "holds in every reachable state". Every row
//! that holds has a twin in which the check finds the bug (named in each test's comment).
//!
//! Check them all: `cargo test -p lockwright-model --test replication_verdicts`.

use lockwright_model::checker::describe_path;
use lockwright_model::checker::pinned::{assert_pinned, Pinned};
use lockwright_model::replication::{
    Faults, Pace, ReaderKind, Scenario, Variant, ALWAYS, SOMETIMES,
};

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 8],
    /// The counterexample of each violated `always` property (actions' `Display`).
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    let report = assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
    let names: Vec<&str> = report.verdicts.iter().map(|v| v.name).collect();
    let want: Vec<&str> = ALWAYS.iter().chain(SOMETIMES.iter()).copied().collect();
    assert_eq!(names, want, "property order of {label}");
    // Every counterexample reads as numbered calls (what docs/replication.md lists).
    for v in report.verdicts.iter().filter(|v| !v.holds()) {
        if let Some(path) = &v.path {
            assert_eq!(describe_path(&sc, path).len(), path.len());
        }
    }
}

/// The standard scenario: Lucene's mechanics with the seed's retention; readers that keep up never
/// see a missing or partial file, and the replica always has a complete commit, across a copier
/// crash.
#[test]
fn lockwright_open_handles_keep_up_survives_a_crash() {
    expect(Expected {
        scenario: Scenario::standard(),
        unique_states: 1541,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "NOT FOUND"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[],
    });
}

/// The same order is safe for readers that reach files by name (NFS): a generation's files go only
/// at the sync after the next, when no reader that keeps up still uses them.
#[test]
fn lockwright_reopen_by_name_keep_up_survives_a_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lockwright, ReaderKind::ReopenByName)
            .with_faults(faults("crash=1")),
        unique_states: 1541,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "NOT FOUND"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[],
    });
}

/// Twin of the standard scenario: a reader that takes two whole rounds to open one commit finds the
/// oldest kept commit's files gone (retention is counted in syncs, not in reader progress).
#[test]
fn lockwright_open_handles_unbounded_slow_open() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lockwright, ReaderKind::OpenHandles)
            .with_pace(Pace::Unbounded),
        unique_states: 2698,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[(
            "a reader never opens a commit with a missing file",
            &[
                "CopyToTemp(_2)",
                "Fsync(_2)",
                "Rename(_2)",
                "CopyToTemp(segments_2)",
                "Fsync(segments_2)",
                "Rename(segments_2)",
                "SyncDir",
                "CopyToTemp(_3)",
                "Fsync(_3)",
                "Rename(_3)",
                "CopyToTemp(segments_3)",
                "Fsync(segments_3)",
                "List(r0)",
                "Rename(segments_3)",
                "SyncDir",
                "Delete(segments_1)",
                "Delete(_0)",
                "CopyToTemp(_4)",
                "Fsync(_4)",
                "Rename(_4)",
                "CopyToTemp(segments_4)",
                "Fsync(segments_4)",
                "Rename(segments_4)",
                "SyncDir",
                "Delete(segments_2)",
                "Open(r0)",
            ],
        )],
    });
}

/// Twin: an NFS reader that keeps its commit for two rounds loses its files.
#[test]
fn lockwright_reopen_by_name_unbounded_loses_files() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lockwright, ReaderKind::ReopenByName)
            .with_pace(Pace::Unbounded)
            .with_faults(faults("crash=1")),
        unique_states: 16062,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[
            (
                "a reader never opens a commit with a missing file",
                &[
                    "CopyToTemp(_2)",
                    "Fsync(_2)",
                    "Rename(_2)",
                    "CopyToTemp(segments_2)",
                    "Fsync(segments_2)",
                    "Rename(segments_2)",
                    "SyncDir",
                    "CopyToTemp(_3)",
                    "Fsync(_3)",
                    "Rename(_3)",
                    "CopyToTemp(segments_3)",
                    "Fsync(segments_3)",
                    "List(r0)",
                    "Rename(segments_3)",
                    "CrashCopier",
                    "SyncDir",
                    "CopyToTemp(_4)",
                    "Fsync(_4)",
                    "Rename(_4)",
                    "CopyToTemp(segments_4)",
                    "Fsync(segments_4)",
                    "Rename(segments_4)",
                    "SyncDir",
                    "Delete(segments_2)",
                    "Open(r0)",
                ],
            ),
            (
                "a reader never loses a file it is using",
                &[
                    "CopyToTemp(_2)",
                    "Fsync(_2)",
                    "Rename(_2)",
                    "CopyToTemp(segments_2)",
                    "Fsync(segments_2)",
                    "Rename(segments_2)",
                    "SyncDir",
                    "CopyToTemp(_3)",
                    "Fsync(_3)",
                    "Rename(_3)",
                    "CopyToTemp(segments_3)",
                    "Fsync(segments_3)",
                    "Rename(segments_3)",
                    "SyncDir",
                    "Delete(_0)",
                ],
            ),
        ],
    });
}

/// Lucene's replicator order: safe while readers hold their files open and keep up.
#[test]
fn lucene_replicator_open_handles_keep_up_survives_a_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::LuceneReplicator, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 1200,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[],
    });
}

/// Twin: deleting the previous generation at once takes files from an NFS reader still searching
/// it.
#[test]
fn lucene_replicator_reopen_by_name_loses_files() {
    expect(Expected {
        scenario: Scenario::new(Variant::LuceneReplicator, ReaderKind::ReopenByName),
        unique_states: 385,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[(
            "a reader never loses a file it is using",
            &[
                "CopyToTemp(_2)",
                "Fsync(_2)",
                "Rename(_2)",
                "CopyToTemp(segments_2)",
                "Fsync(segments_2)",
                "Rename(segments_2)",
                "SyncDir",
                "Delete(_0)",
            ],
        )],
    });
}

/// Twin: a reader half-way through opening the previous commit when the round ends finds its files
/// gone, even with open handles.
#[test]
fn lucene_replicator_open_handles_unbounded_slow_open() {
    expect(Expected {
        scenario: Scenario::new(Variant::LuceneReplicator, ReaderKind::OpenHandles)
            .with_pace(Pace::Unbounded),
        unique_states: 2939,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[(
            "a reader never opens a commit with a missing file",
            &[
                "CopyToTemp(_2)",
                "Fsync(_2)",
                "Rename(_2)",
                "CopyToTemp(segments_2)",
                "Fsync(segments_2)",
                "Rename(segments_2)",
                "SyncDir",
                "Delete(segments_1)",
                "Delete(_0)",
                "CopyToTemp(_3)",
                "Fsync(_3)",
                "Rename(_3)",
                "CopyToTemp(segments_3)",
                "Fsync(segments_3)",
                "List(r0)",
                "Rename(segments_3)",
                "SyncDir",
                "Delete(segments_2)",
                "Open(r0)",
            ],
        )],
    });
}

/// The seed's rule as written (plain in-place copies): a reader can read segments_N while it is
/// being written.
#[test]
fn seed_rule_reads_a_partial_segments_file() {
    expect(Expected {
        scenario: Scenario::new(Variant::SeedRule, ReaderKind::OpenHandles),
        unique_states: 273,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "NOT FOUND"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[(
            "a reader never reads a partial file",
            &[
                "Create(_2)",
                "Fill(_2)",
                "Create(segments_2)",
                "List(r0)",
                "Open(r0)",
            ],
        )],
    });
}

/// Twin with a crash: an in-place copy cut short leaves a partial file the restarted copier takes
/// for copied; two rounds later no complete commit is left.
#[test]
fn seed_rule_crash_leaves_a_torn_file() {
    expect(Expected {
        scenario: Scenario::new(Variant::SeedRule, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 3188,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[
            (
                "a reader never reads a partial file",
                &[
                    "Create(_2)",
                    "Fill(_2)",
                    "Create(segments_2)",
                    "List(r0)",
                    "Open(r0)",
                ],
            ),
            (
                "the replica always has a complete commit",
                &[
                    "Create(_2)",
                    "CrashCopier",
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "List(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "List(r1)",
                    "Open(r1)",
                    "Open(r1)",
                    "Open(r1)",
                    "Create(_3)",
                    "Fill(_3)",
                    "Create(segments_3)",
                    "Fill(segments_3)",
                    "Delete(segments_1)",
                ],
            ),
        ],
    });
}

/// The same crash with NFS readers: readers stuck on the previous commit (the new one is torn) lose
/// it at the next round.
#[test]
fn seed_rule_crash_reopen_by_name() {
    expect(Expected {
        scenario: Scenario::new(Variant::SeedRule, ReaderKind::ReopenByName)
            .with_faults(faults("crash=1")),
        unique_states: 3188,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "VIOLATED"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[
            (
                "a reader never reads a partial file",
                &[
                    "Create(_2)",
                    "Fill(_2)",
                    "Create(segments_2)",
                    "List(r0)",
                    "Open(r0)",
                ],
            ),
            (
                "a reader never loses a file it is using",
                &[
                    "Create(_2)",
                    "Fill(_2)",
                    "Create(segments_2)",
                    "CrashCopier",
                    "List(r0)",
                    "Open(r0)",
                    "List(r1)",
                    "Open(r1)",
                    "Create(_3)",
                    "Fill(_3)",
                    "Create(segments_3)",
                    "Fill(segments_3)",
                    "Delete(_0)",
                ],
            ),
            (
                "the replica always has a complete commit",
                &[
                    "Create(_2)",
                    "CrashCopier",
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "List(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "List(r1)",
                    "Open(r1)",
                    "Open(r1)",
                    "Open(r1)",
                    "Create(_3)",
                    "Fill(_3)",
                    "Create(segments_3)",
                    "Fill(segments_3)",
                    "Delete(segments_1)",
                ],
            ),
        ],
    });
}

/// segments_N first: a reader opens it and looks for data files that are not there yet.
#[test]
fn segments_first_opens_missing_files() {
    expect(Expected {
        scenario: Scenario::new(Variant::SegmentsFirst, ReaderKind::OpenHandles),
        unique_states: 409,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[
            (
                "a reader never opens a commit with a missing file",
                &[
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "List(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "Open(r0)",
                ],
            ),
            (
                "a reader never reads a partial file",
                &["Create(segments_2)", "List(r0)", "Open(r0)"],
            ),
        ],
    });
}

/// Twin with a crash: the restarted copier takes the partial data file for copied and deletes the
/// previous commit.
#[test]
fn segments_first_crash_deletes_the_last_complete_commit() {
    expect(Expected {
        scenario: Scenario::new(Variant::SegmentsFirst, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 2097,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[
            (
                "a reader never opens a commit with a missing file",
                &[
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "List(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "Open(r0)",
                ],
            ),
            (
                "a reader never reads a partial file",
                &["Create(segments_2)", "List(r0)", "Open(r0)"],
            ),
            (
                "the replica always has a complete commit",
                &[
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "Create(_2)",
                    "CrashCopier",
                    "Delete(segments_1)",
                ],
            ),
        ],
    });
}

/// Any order (a naive sync): deleting segments_1 first leaves no commit at all.
#[test]
fn any_order_deletes_the_only_commit() {
    expect(Expected {
        scenario: Scenario::new(Variant::AnyOrder, ReaderKind::OpenHandles),
        unique_states: 817,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[
            (
                "a reader never opens a commit with a missing file",
                &["Delete(segments_1)", "List(r0)"],
            ),
            (
                "a reader never reads a partial file",
                &["Create(segments_2)", "List(r0)", "Open(r0)"],
            ),
            (
                "the replica always has a complete commit",
                &["Delete(segments_1)"],
            ),
        ],
    });
}

/// Any order with NFS readers: every property fails.
#[test]
fn any_order_reopen_by_name_violates_everything() {
    expect(Expected {
        scenario: Scenario::new(Variant::AnyOrder, ReaderKind::ReopenByName),
        unique_states: 817,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "VIOLATED"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("a file in use is deleted", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[
            (
                "a reader never opens a commit with a missing file",
                &["Delete(segments_1)", "List(r0)"],
            ),
            (
                "a reader never reads a partial file",
                &["Create(segments_2)", "List(r0)", "Open(r0)"],
            ),
            ("a reader never loses a file it is using", &["Delete(_0)"]),
            (
                "the replica always has a complete commit",
                &["Delete(segments_1)"],
            ),
        ],
    });
}
