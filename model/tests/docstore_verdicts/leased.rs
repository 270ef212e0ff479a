//! Rows for the leased lock (written as in the recipe and corrected): pauses, fencing, failover
//! and the no-op re-acquire.

use super::*;

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
