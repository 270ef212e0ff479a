//! Rows 36–44: the corrected recipe fixed against the store's own faults (`leased`, §6 of
//! `docs/docstore.md`, "The store's own faults"), and one twin per piece of the fix, each
//! failing without it. Rows 26–31 are the same faults on the recipe before the fix
//! (`leased-upsert`, `store_faults.rs`).

use super::*;

/// 36. The standard scenario (`Scenario::standard()`) on the fixed recipe: only the pause gives two believed writers; the fence, the read-back and the conditioned writes keep both data properties (twin: 24, the same faults unclaimed on `leased-upsert`; 19 is the same scenario on `leased-upsert`).
#[test]
fn leased_fenced_claim_standard_faults_only_the_pause_gives_two_writers() {
    assert_eq!(
        Scenario::standard(),
        Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1"))
    );
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_faults(faults("crash=1,restart=1,lose-reply=1,pause=1,failover=1")),
        unique_states: 85868,
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
                "UpdateLock(c0)",
                "ClaimData(c0)",
                "VerifyLock(c0)",
                "ReadData(c0)",
                "CheckLease(c0)",
                "Pause(c0)",
                "UpdateLock(c1)",
            ],
        )],
    });
}

/// 37. Every store fault with a pause: the lock index and the data document re-created, an acknowledged write rolled back, a pause — "fenced writes are exclusive" and "no lost update" hold (twin: 31, the same faults on `leased-upsert`, and the `leased-fix-*` rows 40–43, each without one piece). "at most one writer" fails by the pause or a rolled-back acquire, "no stale lock" because a re-created index leaves no lock document (both declared in `Family::documented`).
#[test]
fn leased_fenced_claim_survives_every_store_fault_with_a_pause() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_faults(faults("recreate-index=1,recreate-doc=1,rollback=1,pause=1")),
        unique_states: 62984,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
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
                &["UpdateLock(c0)", "Rollback", "UpdateLock(c1)"],
            ),
            ("no stale lock", &["RecreateIndex"]),
        ],
    });
}

/// 38. The re-created lock index on the fixed recipe: no second grant (the acquire without `upsert` answers 404), so the fence is never asked to tell two equal tokens apart; the price is the lock itself, gone until an operator installs it (twin: 26 on `leased-upsert`, two writers and a stale write).
#[test]
fn leased_fenced_claim_recreated_lock_index_leaves_no_lock_and_no_second_grant() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_faults(faults("recreate-index=1")),
        unique_states: 995,
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
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[("no stale lock", &["RecreateIndex"])],
    });
}

/// 39. An operator's stray delete on the fixed recipe: as 38, no second writer (twin: 25 and 20 on `leased-upsert`, where the delete gives two writers).
#[test]
fn leased_fenced_claim_stray_delete_leaves_no_lock_and_no_second_grant() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::FencedClaim)
            .with_faults(faults("stray-delete=1")),
        unique_states: 927,
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
            ("sessions overlap", "holds"),
        ],
        counterexamples: &[("no stale lock", &["StrayDelete"])],
    });
}

/// 40. The fix with its acquire by `upsert` and release by compare-and-delete put back (`leased-fix-upsert`): a re-created lock index grants the same token twice, and the fence, comparing tokens only, accepts the older holder's write after the newer holder's: installing the lock document once is needed (twin of 38).
#[test]
fn leased_fix_upsert_recreated_index_hands_out_an_equal_token() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedFixUpsert, Writes::FencedClaim)
            .with_faults(faults("recreate-index=1")),
        unique_states: 4599,
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
                &["UpsertLock(c0)", "RecreateIndex", "UpsertLock(c1)"],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpsertLock(c0)",
                    "ClaimData(c0)",
                    "VerifyLock(c0)",
                    "RecreateIndex",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
                    "VerifyLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "WriteData(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ClaimData(c0)",
                    "VerifyLock(c0)",
                    "RecreateIndex",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "WriteData(c0)",
                    "VerifyLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 41. The fix without the read-back of the lock document (`leased-fix-unverified`): an acquire rolled back, a newer grant that claims and writes, the data document re-created: the older holder's claim lands on the unfenced document and its write after the newer one's (twin of 37).
#[test]
fn leased_fix_unverified_rolled_back_acquire_writes_after_a_newer_grant() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedFixUnverified, Writes::FencedClaim)
            .with_faults(faults("recreate-doc=1,rollback=1")),
        unique_states: 14939,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no lost update", "holds"),
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
                &["UpdateLock(c0)", "Rollback", "UpdateLock(c1)"],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpdateLock(c0)",
                    "Rollback",
                    "UpdateLock(c1)",
                    "ClaimData(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "RecreateDoc",
                    "ClaimData(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "WriteData(c0)",
                ],
            ),
        ],
    });
}

/// 42. The fix with data writes conditioned on the fence alone (`leased-fix-unconditional`): the data document re-created under a paused holder erases the newer holder's fence, and the paused write lands (twin of 37; row 28 on `leased-upsert`).
#[test]
fn leased_fix_unconditional_recreated_document_lets_a_paused_write_in() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedFixUnconditional, Writes::FencedClaim)
            .with_faults(faults("recreate-doc=1,pause=1")),
        unique_states: 4129,
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
                    "UpdateLock(c0)",
                    "ClaimData(c0)",
                    "VerifyLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpdateLock(c1)",
                ],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpdateLock(c0)",
                    "ClaimData(c0)",
                    "VerifyLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpdateLock(c1)",
                    "ClaimData(c1)",
                    "VerifyLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "RecreateDoc",
                    "WriteData(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpdateLock(c0)",
                    "ClaimData(c0)",
                    "VerifyLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpdateLock(c1)",
                    "ClaimData(c1)",
                    "VerifyLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "RecreateDoc",
                    "WriteData(c0)",
                ],
            ),
        ],
    });
}

/// 43. The fix without the fence check at each session's read (`leased-fix-unchecked`): a fail-over loses the newer holder's claim, the document goes back to the version the paused holder read, its write lands inside the newer holder's session, and the newer holder's next write is accepted: a lost update (twin of 37; row 30 on `leased-upsert`).
#[test]
fn leased_fix_unchecked_rolled_back_claim_lets_a_paused_write_in() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedFixUnchecked, Writes::FencedClaim)
            .with_faults(faults("rollback=1,pause=1")),
        unique_states: 10406,
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
                &["UpdateLock(c0)", "Rollback", "UpdateLock(c1)"],
            ),
            (
                "no lost update",
                &[
                    "UpdateLock(c0)",
                    "ClaimData(c0)",
                    "VerifyLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpdateLock(c1)",
                    "ClaimData(c1)",
                    "VerifyLock(c1)",
                    "Rollback",
                    "WriteData(c0)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 44. The fixed recipe without claim-at-acquire (`--writes fenced`: the read-back then follows the acquire, before anything the rollback cannot undo): an acquire rolled back after its read-back, a newer grant that writes, the data document re-created: the older holder's write lands (twin of 37: the claim is a piece of the fix too).
#[test]
fn leased_fenced_without_the_claim_rolled_back_acquire_writes_after_a_newer_grant() {
    expect(Expected {
        scenario: Scenario::new(Variant::Leased, Writes::Fenced)
            .with_faults(faults("recreate-doc=1,rollback=1")),
        unique_states: 15661,
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
                &["UpdateLock(c0)", "Rollback", "UpdateLock(c1)"],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "UpdateLock(c0)",
                    "VerifyLock(c0)",
                    "Rollback",
                    "UpdateLock(c1)",
                    "VerifyLock(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "RecreateDoc",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "WriteData(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "UpdateLock(c0)",
                    "VerifyLock(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Rollback",
                    "UpdateLock(c1)",
                    "VerifyLock(c1)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}
