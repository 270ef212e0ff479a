//! The copy orders that break the rule: the seed's order, segments file first, and any order.

use super::*;

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
