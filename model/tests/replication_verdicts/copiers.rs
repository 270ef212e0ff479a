//! lockwright's copier and Lucene's replicator, each with open handles and with reopen-by-name.

use super::*;

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
