//! Rows for the leased lock (written as in the recipe and corrected): pauses, fencing, failover
//! and the no-op re-acquire.

use super::*;

/// 15. The corrected recipe, unfenced, no faults. Twins: 17, 21.
#[test]
fn leased_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::Unfenced)
            .with_faults(faults("none")),
        unique_states: 178,
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
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[],
    });
}

/// 16. The corrected recipe, unfenced: a crashed holder's lease passes and another client takes over; lost replies and a fail-over are harmless. Twins: 2, 7, 11 (the same faults break the recipes as written) and 17.
#[test]
fn leased_survives_crash_restart_lost_replies_and_failover() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::Unfenced)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,failover=1")),
        unique_states: 15088,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[],
    });
}

/// 17. A pause longer than the lease between the lease check and the write: two writers, the paused write lands after the new holder's, and an update is lost.
#[test]
fn leased_unfenced_pause_gives_two_writers_and_a_stale_write() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::Unfenced)
            .with_faults(faults("pause=1")),
        unique_states: 496,
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
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                ],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "WriteData(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 18. The same pause with fenced writes: still two believed writers; the store never accepts an older token after a newer one ("fenced writes are exclusive" holds), yet an update is lost. c1 is granted token 2 and reads; c0 (token 1), paused past its lease, writes — accepted, the document has seen no token 2 yet; c1 writes — accepted: c1 computed its write from the data c0 then changed (twin of 17 for the stale write, of 23 for the lost update).
#[test]
fn leased_fenced_pause_gives_two_writers_but_no_stale_write() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::Fenced)
            .with_faults(faults("pause=1")),
        unique_states: 518,
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
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 19. The standard scenario's faults (`Scenario::standard()`) on the recipe before the fix (`leased-upsert`; it was the standard scenario until the fix, row 36): claim-at-acquire (`fenced-claim`) under every fault but the stray delete; only "at most one writer" fails, by the pause: "no lost update" holds (twin: 18, the same recipe without the claim).
#[test]
fn leased_fenced_claim_standard_scenario() {
    assert_eq!(
        Scenario::standard().with_variant(Variant::LeasedUpsert),
        Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1"))
    );
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1")),
        unique_states: 66271,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &[
                "UpsertLock(c0)",
                "ClaimData(c0)",
                "ReadData(c0)",
                "CheckLease(c0)",
                "Pause(c0)",
                "UpsertLock(c1)",
            ],
        )],
    });
}

/// 20. A stray delete breaks any lock kept in a document the operator can delete; fencing still refuses stale writes, but the new holder can lose the old holder's update (twin of 25).
#[test]
fn leased_fenced_survives_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::Fenced).with_faults(faults(
            "crash=1,restart=1,stray-delete=1,lose-reply=1,failover=1",
        )),
        unique_states: 74839,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
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
                    "CheckLease(c0)",
                    "StrayDelete",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 21. Finding 1: an acquire script that is a `noop` for the current owner (the document lock's idiom) gives a client that re-acquires after its own lease passed a fresh deadline on an expired document; another client takes over. No fault needed.
#[test]
fn leased_noop_reacquire_hands_out_a_passed_lease() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedNoop, Writes::Unfenced).with_faults(faults("none")),
        unique_states: 788,
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
                    "ReadData(c0)",
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
                    "ReadData(c0)",
                    "Tick",
                    "Tick",
                    "CheckLease(c0)",
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "WriteData(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "Tick",
                    "Tick",
                    "CheckLease(c0)",
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 22. The same broken script with fenced writes: two writers, no stale write, but a lost update (twin of 21).
#[test]
fn leased_noop_fenced_keeps_the_data_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedNoop, Writes::Fenced).with_faults(faults("none")),
        unique_states: 924,
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
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "Tick",
                    "Tick",
                    "CheckLease(c0)",
                    "UpsertLock(c0)",
                    "UpsertLock(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "Tick",
                    "Tick",
                    "CheckLease(c0)",
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 23. Claim-at-acquire under the pause of 18: the new holder's claim fences the data document before its first read, so the paused holder's late write is refused and no update is lost (twin of 18).
#[test]
fn leased_fenced_claim_pause_loses_no_update() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("pause=1")),
        unique_states: 768,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "NOT FOUND"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &[
                "UpsertLock(c0)",
                "ClaimData(c0)",
                "ReadData(c0)",
                "CheckLease(c0)",
                "Pause(c0)",
                "UpsertLock(c1)",
            ],
        )],
    });
}

/// 24. Plain `fenced` writes under the standard scenario's faults: the pause loses an update (twin of 19).
#[test]
fn leased_fenced_standard_faults_lose_an_update() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::Fenced)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1")),
        unique_states: 49301,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 25. Claim-at-acquire with a stray delete as well (row 20's faults): two believed writers, yet no update is lost (twin of 20).
#[test]
fn leased_fenced_claim_survives_a_stray_delete() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim).with_faults(faults(
            "crash=1,restart=1,stray-delete=1,lose-reply=1,failover=1",
        )),
        unique_states: 98772,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "holds"),
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[(
            "at most one writer",
            &["UpsertLock(c0)", "StrayDelete", "UpsertLock(c1)"],
        )],
    });
}
