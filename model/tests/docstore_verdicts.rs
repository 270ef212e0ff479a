//! The document-store verdict table of `docs/docstore.md`, pinned: for every scenario, each
//! property's verdict, the exact number of unique states (with symmetry reduction), and the
//! exact shortest counterexample of every violated `always` property. Row numbers match the
//! docs. A change to the model that alters a state space or a counterexample shows up here.
//!
//! Every row runs exhaustively, so "holds" means "holds in every reachable state"; every row
//! that holds has a twin in which the check finds the bug (named in its comment).
//!
//! `cargo test -p lockwright-model --test docstore_verdicts`

use lockwright_model::checker::pinned::{assert_pinned, reachable, Pinned};
use lockwright_model::docstore::{Faults, Scenario, Variant, Writes};

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 9],
    /// The counterexample of each violated `always` property.
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    // Not vacuous: in every row the data document accepts some write.
    assert!(
        reachable(&sc, |s| s.written.is_some()),
        "{label}: no write is ever accepted"
    );
    assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
}

/// 1. The global lock as written, no faults: it excludes. Twins: 2, 3, 4.
#[test]
fn global_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 8,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 35,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 54,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
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
        unique_states: 28,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
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
                    "StrayDelete",
                    "CreateLock(c1)",
                    "WriteData(c1)",
                    "WriteData(c0)",
                ],
            ),
        ],
    });
}

/// 5. Fencing the data writes with the `_create`'s `_seq_no`/`_primary_term` protects the data even though the lock is broken (twin of 3 and 4).
#[test]
fn global_fenced_writes_survive_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::Global, Writes::Fenced)
            .with_faults(faults("stray-delete=1,lose-reply=1")),
        unique_states: 175,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
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
        ],
    });
}

/// 6. The document lock as written, no faults: it excludes. Twins: 7, 8.
#[test]
fn document_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::Document, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 8,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 35,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 52,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
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
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 9. Fenced writes on the document lock: two writers after a stray delete, yet no stale write lands (twin of 8).
#[test]
fn document_fenced_writes_survive_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::Document, Writes::Fenced)
            .with_faults(faults("stray-delete=1")),
        unique_states: 31,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &["UpsertLock(c0)", "StrayDelete", "UpsertLock(c1)"],
        )],
    });
}

/// 10. The read/write lock as written, 2 readers and 1 writer, no faults: readers share and exclude the writer. Twins: 11, 12, 13, 14.
#[test]
fn read_write_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::ReadWrite, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 16,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 126,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 128,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "VIOLATED"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 58,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
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
        unique_states: 87,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "holds"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
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
                    "StrayDelete",
                    "CreateLock(c3)",
                    "WriteData(c3)",
                    "WriteData(c2)",
                ],
            ),
        ],
    });
}

/// 15. The corrected recipe, unfenced, no faults. Twins: 17, 21.
#[test]
fn leased_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 64,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// 16. The corrected recipe, unfenced: a crashed holder's lease passes and another client takes over; lost replies and a fail-over are harmless. Twins: 2, 7, 11 (the same faults break the recipes as written) and 17.
#[test]
fn leased_survives_crash_restart_lost_replies_and_failover() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Unfenced)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,failover=1")),
        unique_states: 6784,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// 17. A pause longer than the lease between the lease check and the write: two writers, and the paused write lands after the new holder's.
#[test]
fn leased_unfenced_pause_gives_two_writers_and_a_stale_write() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Unfenced).with_faults(faults("pause=1")),
        unique_states: 163,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "UpsertLock(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                ],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpsertLock(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "WriteData(c0)",
                ],
            ),
        ],
    });
}

/// 18. The same pause with fenced writes: still two believed writers, but the store refuses the stale write (twin of 17).
#[test]
fn leased_fenced_pause_gives_two_writers_but_no_stale_write() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Fenced).with_faults(faults("pause=1")),
        unique_states: 182,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &[
                "UpsertLock(c0)",
                "CheckLease(c0)",
                "Pause(c0)",
                "UpsertLock(c1)",
            ],
        )],
    });
}

/// 19. The standard scenario (`Scenario::standard()`): only "at most one writer" fails, by the pause.
#[test]
fn leased_fenced_standard_scenario() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Fenced)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1")),
        unique_states: 21771,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &[
                "UpsertLock(c0)",
                "CheckLease(c0)",
                "Pause(c0)",
                "UpsertLock(c1)",
            ],
        )],
    });
}

/// 20. A stray delete breaks any lock kept in a document the operator can delete; fencing still protects the data.
#[test]
fn leased_fenced_survives_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Fenced).with_faults(faults(
            "crash=1,restart=1,stray-delete=1,lose-reply=1,failover=1",
        )),
        unique_states: 27006,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &["UpsertLock(c0)", "StrayDelete", "UpsertLock(c1)"],
        )],
    });
}

/// 21. Finding 1: an acquire script that is a `noop` for the current owner (the document lock's idiom) gives a client that re-acquires after its own lease passed a fresh deadline on an expired document; another client takes over. No fault needed.
#[test]
fn leased_noop_reacquire_hands_out_a_passed_lease() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedNoop, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 186,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "UpsertLock(c0)",
                    "Tick",
                    "Tick",
                    "CheckLease(c0)",
                    "UpsertLock(c0)",
                    "UpsertLock(c1)",
                ],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpsertLock(c0)",
                    "Tick",
                    "Tick",
                    "CheckLease(c0)",
                    "UpsertLock(c0)",
                    "CheckLease(c0)",
                    "UpsertLock(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "WriteData(c0)",
                ],
            ),
        ],
    });
}

/// 22. The same broken script with fenced writes: two writers, no stale write (twin of 21).
#[test]
fn leased_noop_fenced_keeps_the_data_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedNoop, Writes::Fenced).with_faults(faults("none")),
        unique_states: 265,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &[
                "UpsertLock(c0)",
                "Tick",
                "Tick",
                "CheckLease(c0)",
                "UpsertLock(c0)",
                "UpsertLock(c1)",
            ],
        )],
    });
}
