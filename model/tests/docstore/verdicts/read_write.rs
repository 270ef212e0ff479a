//! Rows for the read/write lock.

use super::*;

/// 10. The read/write lock as written, 2 readers and 1 writer, no faults: readers share and exclude the writer. Twins: 11, 12, 13, 14.
#[test]
fn read_write_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::ReadWrite, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 22,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// 11. A reader that crashes leaves `lock_count` at 1 forever: the writer's `_create` gets 409 forever.
#[test]
fn read_write_reader_crash_starves_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::ReadWrite, Writes::Unfenced)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 150,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[("no stale lock", &["UpsertLock(c0)", "Crash(c0)"])],
    });
}

/// 12. A reader's retried `rw-unlock` after a lost reply decrements twice and deletes the other reader's share: reader and writer together; a writer's lost `_create` reply leaves the lock stale.
#[test]
fn read_write_lost_unlock_reply_lets_the_writer_in() {
    expect(Expected {
        scenario: Scenario::new(Variant::ReadWrite, Writes::Unfenced)
            .with_faults(faults("lose-reply=1")),
        unique_states: 165,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "VIOLATED"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[
            (
                "readers and writer exclusive",
                &[
                    "UpsertLock(c0)",
                    "UpdateUnlock(c0, reply lost)",
                    "UpsertLock(c1)",
                    "UpdateUnlock(c0)",
                    "CreateLock(c2)",
                ],
            ),
            (
                "no stale lock",
                &["CreateLock(c2, reply lost)", "CreateLock(c2)"],
            ),
        ],
    });
}

/// 13. A stray `DELETE` of the shared document lets the writer `_create` under a reader.
#[test]
fn read_write_stray_delete_lets_the_writer_in() {
    expect(Expected {
        scenario: Scenario::new(Variant::ReadWrite, Writes::Unfenced)
            .with_faults(faults("stray-delete=1")),
        unique_states: 88,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[(
            "readers and writer exclusive",
            &["UpsertLock(c0)", "StrayDelete", "CreateLock(c2)"],
        )],
    });
}

/// 14. Two writers of the read/write lock: the stray delete also gives two writers.
#[test]
fn read_write_two_writers_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::ReadWrite, Writes::Unfenced)
            .with_clients(4)
            .with_faults(faults("stray-delete=1")),
        unique_states: 266,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &["CreateLock(c2)", "StrayDelete", "CreateLock(c3)"],
            ),
            (
                "readers and writer exclusive",
                &["UpsertLock(c0)", "StrayDelete", "CreateLock(c2)"],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "CreateLock(c2)",
                    "ReadData(c2)",
                    "StrayDelete",
                    "CreateLock(c3)",
                    "ReadData(c3)",
                    "WriteData(c3)",
                    "WriteData(c2)",
                ],
            ),
            (
                "no lost update",
                &[
                    "CreateLock(c2)",
                    "ReadData(c2)",
                    "StrayDelete",
                    "CreateLock(c3)",
                    "ReadData(c3)",
                    "WriteData(c2)",
                    "WriteData(c3)",
                ],
            ),
        ],
    });
}
