//! The orders the model finds unsafe for every reader: the seed's rule as written
//! (rows 15–17), `segments-first` (rows 18–19), `any-order` (rows 20–21).

use super::*;

/// Row 15, the seed's rule as written copies in place, so a reader can read `segments_N` while it
/// is being written.
#[test]
fn seed_rule_open_handles() {
    expect(Expected {
        scenario: Scenario::new(Variant::SeedRule, ReaderKind::OpenHandles),
        unique_states: 273,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
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

/// Row 16: with a crash, only the torn `segments_N` read remains: the restarted copier no longer
/// trusts a torn leftover by its name (it copies what the last completed revision does not name),
/// so the replica always has a complete commit.
#[test]
fn seed_rule_open_handles_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::SeedRule, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 1304,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "holds"),
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

/// Row 17: the same with by-name readers; the retention keeps every file a reader that keeps up
/// uses.
#[test]
fn seed_rule_reopen_by_name_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::SeedRule, ReaderKind::ReopenByName)
            .with_faults(faults("crash=1")),
        unique_states: 1304,
        verdicts: [
            ("a reader never opens a commit with a missing file", "holds"),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "holds"),
            ("the replica always has a complete commit", "holds"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
            ("a round completes after a crash", "holds"),
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

/// Row 18, `segments-first` sends readers after files that are not there yet, and lets them read
/// a torn `segments_N`.
#[test]
fn segments_first_open_handles() {
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
                "no file in use is deleted",
                &[
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "Create(_2)",
                    "Fill(_2)",
                    "Delete(_0)",
                ],
            ),
        ],
    });
}

/// Row 19: with a crash after `segments_2` is complete, the restarted copier refuses commit 2 (the
/// replica's newest complete commit is 2), so `_2` is never copied; the next round trusts commit
/// 2's files, copies `_3` and `segments_3` and deletes `segments_1`: no complete commit is left.
#[test]
fn segments_first_open_handles_crash() {
    expect(Expected {
        scenario: Scenario::new(Variant::SegmentsFirst, ReaderKind::OpenHandles)
            .with_faults(faults("crash=1")),
        unique_states: 3580,
        verdicts: [
            (
                "a reader never opens a commit with a missing file",
                "VIOLATED",
            ),
            ("a reader never reads a partial file", "VIOLATED"),
            ("a reader never loses a file it is using", "holds"),
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
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
                "no file in use is deleted",
                &[
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "Create(_2)",
                    "Fill(_2)",
                    "Delete(_0)",
                ],
            ),
            (
                "the replica always has a complete commit",
                &[
                    "Create(segments_2)",
                    "Fill(segments_2)",
                    "CrashCopier",
                    "List(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "Open(r0)",
                    "List(r1)",
                    "Open(r1)",
                    "Open(r1)",
                    "Open(r1)",
                    "Create(segments_3)",
                    "Fill(segments_3)",
                    "Create(_3)",
                    "Fill(_3)",
                    "Delete(segments_1)",
                ],
            ),
        ],
    });
}

/// Row 20, `any-order` can delete `segments_1` first and leave the replica with no commit at all.
#[test]
fn any_order_open_handles() {
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
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
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
            ("no file in use is deleted", &["Delete(_0)"]),
            (
                "the replica always has a complete commit",
                &["Delete(segments_1)"],
            ),
        ],
    });
}

/// Row 21: the same, and a by-name reader's file can go first.
#[test]
fn any_order_reopen_by_name() {
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
            ("no file in use is deleted", "VIOLATED"),
            ("the replica always has a complete commit", "VIOLATED"),
            ("a reader opens the newest commit", "holds"),
            ("a reader opens a commit mid-round", "holds"),
            ("the copier deletes an old commit", "holds"),
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
            ("no file in use is deleted", &["Delete(_0)"]),
            (
                "the replica always has a complete commit",
                &["Delete(segments_1)"],
            ),
        ],
    });
}
