//! Rows for the global lock and the per-document lock.

use super::*;

/// 1. The global lock as written, no faults: it excludes. Twins: 2, 3, 4.
#[test]
fn global_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 14,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// 2. A holder that crashes leaves `files-lock/global` forever: no one acquires again.
#[test]
fn global_crash_leaves_a_stale_lock() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Unfenced)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 56,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[("no stale lock", &["CreateLock(c0)", "Crash(c0)"])],
    });
}

/// 3. A lost reply: the retried `DELETE` frees the next holder's lock (a late release: two writers, a stale write lands); a lost `_create` reply makes the retry 409 and the lock stays forever.
#[test]
fn global_lost_replies_give_two_writers_and_a_stale_lock() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Unfenced)
            .with_faults(faults("lose-reply=1")),
        unique_states: 147,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "CreateLock(c0)",
                    "DeleteLock(c0, reply lost)",
                    "CreateLock(c1)",
                    "DeleteLock(c0)",
                    "CreateLock(c0)",
                ],
            ),
            (
                "no stale lock",
                &["CreateLock(c0, reply lost)", "CreateLock(c0)"],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "CreateLock(c0)",
                    "DeleteLock(c0, reply lost)",
                    "CreateLock(c1)",
                    "DeleteLock(c0)",
                    "CreateLock(c0)",
                    "ReadData(c0)",
                    "WriteData(c0)",
                    "ReadData(c1)",
                    "WriteData(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "CreateLock(c0)",
                    "DeleteLock(c0, reply lost)",
                    "CreateLock(c1)",
                    "DeleteLock(c0)",
                    "CreateLock(c0)",
                    "ReadData(c0)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 4. Anyone who knows the id can `DELETE` it (the blog's own warning): two writers.
#[test]
fn global_stray_delete_gives_two_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Unfenced)
            .with_faults(faults("stray-delete=1")),
        unique_states: 104,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &["CreateLock(c0)", "StrayDelete", "CreateLock(c1)"],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "CreateLock(c0)",
                    "ReadData(c0)",
                    "StrayDelete",
                    "CreateLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c1)",
                    "WriteData(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "CreateLock(c0)",
                    "ReadData(c0)",
                    "StrayDelete",
                    "CreateLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 5. Fencing the data writes with the `_create`'s `_seq_no`/`_primary_term` refuses every stale write even though the lock is broken (twin of 3 and 4); it does not stop the new holder from losing the old holder's update ("no lost update" VIOLATED: plain fencing only orders the writes it has seen).
#[test]
fn global_fenced_writes_survive_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Fenced)
            .with_faults(faults("stray-delete=1,lose-reply=1")),
        unique_states: 634,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &["CreateLock(c0)", "StrayDelete", "CreateLock(c1)"],
            ),
            (
                "no stale lock",
                &["CreateLock(c0, reply lost)", "CreateLock(c0)"],
            ),
            (
                "no lost update",
                &[
                    "CreateLock(c0)",
                    "ReadData(c0)",
                    "StrayDelete",
                    "CreateLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 6. The document lock as written, no faults: it excludes. Twins: 7, 8.
#[test]
fn document_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::Document, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 14,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// 7. A holder that crashes leaves `files-lock/1` naming a `process_id` no one will use again.
#[test]
fn document_crash_leaves_a_stale_lock() {
    expect(Expected {
        scenario: Scenario::new(Variant::Document, Writes::Unfenced)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 56,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[("no stale lock", &["UpsertLock(c0)", "Crash(c0)"])],
    });
}

/// 8. The same-owner `noop` makes a lost acquire reply harmless (no stale lock), but the retried `DELETE` after a lost release reply still frees the next holder's lock.
#[test]
fn document_lost_release_reply_frees_the_next_holders_lock() {
    expect(Expected {
        scenario: Scenario::new(Variant::Document, Writes::Unfenced)
            .with_faults(faults("lose-reply=1")),
        unique_states: 145,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "UpsertLock(c0)",
                    "DeleteLock(c0, reply lost)",
                    "UpsertLock(c1)",
                    "DeleteLock(c0)",
                    "UpsertLock(c0)",
                ],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpsertLock(c0)",
                    "DeleteLock(c0, reply lost)",
                    "UpsertLock(c1)",
                    "DeleteLock(c0)",
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "WriteData(c0)",
                    "ReadData(c1)",
                    "WriteData(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "DeleteLock(c0, reply lost)",
                    "UpsertLock(c1)",
                    "DeleteLock(c0)",
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 9. Fenced writes on the document lock: two writers after a stray delete, yet no stale write lands (twin of 8); an update can still be lost.
#[test]
fn document_fenced_writes_survive_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::Document, Writes::Fenced)
            .with_faults(faults("stray-delete=1")),
        unique_states: 109,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &["UpsertLock(c0)", "StrayDelete", "UpsertLock(c1)"],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "StrayDelete",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}
