//! lockwright's copier (`lockwright`, rows 1–4) and its hybrid without retention
//! (`lockwright-no-retention`, rows 12–14), each with open handles and with reopen-by-name.

use super::*;

/// Row 1, the standard scenario: every file through a temporary name, `segments_N` last, the seed's
/// retention; readers that keep up never see a missing or partial file, no file a reader uses is
/// deleted, and the replica always has a complete commit, across a copier crash.
#[test]
fn lockwright_open_handles_keep_up_survives_a_crash() {
    expect(Expected {
        scenario: Scenario::standard(),
        unique_states: 1473,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[],
    });
}

/// Row 2: the same order is safe for readers that reach files by name (NFS): a generation's files
/// go only at the sync after the next, when no reader that keeps up still uses them.
#[test]
fn lockwright_reopen_by_name_keep_up_survives_a_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lockwright, ReaderKind::ReopenByName)
            .with_faults(faults("crash=1")),
        unique_states: 1473,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[],
    });
}

/// Row 3, twin of row 1: a reader that takes two whole rounds to open one commit finds the oldest
/// kept commit's files gone (retention is counted in syncs, not in reader progress).
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
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
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
            ),
            (
                "no file in use is deleted",
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

/// Row 4, twin of row 2: a by-name reader that keeps its commit for two rounds loses its files.
#[test]
fn lockwright_reopen_by_name_unbounded() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lockwright, ReaderKind::ReopenByName)
            .with_pace(Pace::Unbounded)
            .with_faults(faults("crash=1")),
        unique_states: 15903,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "VIOLATED"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
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
            (
                "no file in use is deleted",
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

/// Row 12, lockwright's own hybrid without retention (`lockwright-no-retention`, formerly
/// `lucene-replicator`, an order no Lucene version uses): with open handles no reader fails, but the previous generation's `_0` goes
/// while readers still search commit 1 ("no file in use is deleted"), which only open handles
/// make harmless.
#[test]
fn no_retention_open_handles_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::LockwrightNoRetention, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 2223,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "holds"),
        ],
        counterexamples: &[(
            "no file in use is deleted",
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

/// Row 13, twin of row 12: the by-name reader loses `_0` right after the directory sync.
#[test]
fn no_retention_reopen_by_name() {
    expect(Expected {
        scenario: Scenario::new(Variant::LockwrightNoRetention, ReaderKind::ReopenByName),
        unique_states: 385,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "VIOLATED"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[
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
                    "Delete(_0)",
                ],
            ),
            (
                "no file in use is deleted",
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
            ),
        ],
    });
}

/// Row 14, twin of row 12: a reader half-way through opening commit 2 finds `segments_2` gone
/// when the next round deletes the previous generation at once.
#[test]
fn no_retention_open_handles_unbounded() {
    expect(Expected {
        scenario: Scenario::new(Variant::LockwrightNoRetention, ReaderKind::OpenHandles)
            .with_pace(Pace::Unbounded),
        unique_states: 2939,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
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
            ),
            (
                "no file in use is deleted",
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
            ),
        ],
    });
}
