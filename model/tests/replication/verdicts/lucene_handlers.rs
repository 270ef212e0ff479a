//! The orders of Lucene's own replication handlers, read from their class files
//! (`lucene-replicator-4.10.4.jar` and `lucene-replicator-8.7.0.jar`): 4.10 (rows 5–7) and 5–9
//! (rows 8–11). The real handlers run under the reader harness in
//! `checks/tests/replication_lucene/handlers.rs`, which compares their readers' outcomes with
//! these rows.

use super::*;

/// Row 5, Lucene 4.10's handler: data files and then `segments_N` copied in place under their
/// final names, so a reader that lists while `segments_2` is being written reads a torn file;
/// the previous generation goes at once (`_0` while readers search commit 1).
#[test]
fn lucene_4_10_open_handles() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene410Handler, ReaderKind::OpenHandles),
        unique_states: 331,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
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
                "no file in use is deleted",
                &[
                    "Create(_2)",
                    "Fill(_2)",
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "Delete(_0)",
                ],
            ),
        ],
    });
}

/// Row 6: the same with a copier crash. The restarted copier trusts only what the replica's
/// newest complete `segments_N` names, so a torn leftover is copied again: the replica always
/// has a complete commit (the old name-based skip lost it, see the seed rule's history in
/// `docs/replication.md`).
#[test]
fn lucene_4_10_open_handles_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene410Handler, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 2010,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
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
                "no file in use is deleted",
                &[
                    "Create(_2)",
                    "Fill(_2)",
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "Delete(_0)",
                ],
            ),
        ],
    });
}

/// Row 7, twin of row 5 for by-name readers: they lose `_0` at once.
#[test]
fn lucene_4_10_reopen_by_name() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene410Handler, ReaderKind::ReopenByName),
        unique_states: 331,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
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
                    "Fill(segments_2)",
                    "Delete(_0)",
                ],
            ),
            (
                "no file in use is deleted",
                &[
                    "Create(_2)",
                    "Fill(_2)",
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "Delete(_0)",
                ],
            ),
        ],
    });
}

/// Row 8, Lucene 5–9's handler: data files in place (no reader looks for them before
/// `segments_N` names them), `segments_N` through `pending_segments_N` and a rename: readers that
/// keep up never fail. "No file in use is deleted" is violated: the handler deletes the
/// previous generation at once and relies on open handles.
#[test]
fn lucene_5_open_handles() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene5Handler, ReaderKind::OpenHandles),
        unique_states: 382,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "holds"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "NOT FOUND"),
        ],
        counterexamples: &[(
            "no file in use is deleted",
            &[
                "Create(_2)",
                "Fill(_2)",
                "CopyToTemp(segments_2)",
                "Fsync(segments_2)",
                "Rename(segments_2)",
                "SyncDir",
                "Delete(_0)",
            ],
        )],
    });
}

/// Row 9: the same across a copier crash (a crash after the rename leaves the replica at the new
/// commit; the restarted copier refuses it as not newer).
#[test]
fn lucene_5_open_handles_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene5Handler, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 2200,
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
                "Create(_2)",
                "Fill(_2)",
                "CopyToTemp(segments_2)",
                "Fsync(segments_2)",
                "Rename(segments_2)",
                "SyncDir",
                "Delete(_0)",
            ],
        )],
    });
}

/// Row 10, twin of row 8: by-name readers lose `_0` right after the metadata sync.
#[test]
fn lucene_5_reopen_by_name() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene5Handler, ReaderKind::ReopenByName),
        unique_states: 382,
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
                    "Create(_2)",
                    "Fill(_2)",
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
                    "Create(_2)",
                    "Fill(_2)",
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

/// Row 11, twin of row 8: a reader slower than one round finds `segments_2` gone.
#[test]
fn lucene_5_open_handles_unbounded() {
    expect(Expected {
        scenario: Scenario::new(Variant::Lucene5Handler, ReaderKind::OpenHandles)
            .with_pace(Pace::Unbounded),
        unique_states: 2805,
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
                    "Create(_2)",
                    "Fill(_2)",
                    "CopyToTemp(segments_2)",
                    "Fsync(segments_2)",
                    "Rename(segments_2)",
                    "SyncDir",
                    "Delete(segments_1)",
                    "Delete(_0)",
                    "Create(_3)",
                    "Fill(_3)",
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
                    "Create(_2)",
                    "Fill(_2)",
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
