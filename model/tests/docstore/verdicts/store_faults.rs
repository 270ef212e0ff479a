//! Rows for the store's own faults on the corrected recipe before its fix (`leased-upsert ×
//! fenced-claim`): the lock index re-created, the data document re-created, an acknowledged
//! write lost at a fail-over. Rows 26–31 of `docs/docstore.md` §5; that recipe does not
//! survive them. The fixed `leased` does (rows 36–44, `fix.rs`).

use lockwright_model::checker::pinned::reachable;
use lockwright_model::docstore::{Client, Pc, Session, State};

use super::*;

/// The standard scenario's faults: every client fault and the loss-free fail-over, none of
/// the store faults below.
const WITHOUT_STORE_FAULTS: &str = "crash=1,restart=1,lose-reply=1,pause=1,failover=1";

fn claimed(s: &State) -> impl Iterator<Item = &Client> {
    s.clients
        .iter()
        .filter(|cl| cl.session != Session::None && cl.token.is_some())
}

/// Fires: two grants hold the same token — only a re-created lock index hands a sequence
/// number out twice.
fn token_handed_out_twice(s: &State) -> bool {
    let tokens: Vec<_> = s.clients.iter().filter_map(|cl| cl.token).collect();
    (1..tokens.len()).any(|i| tokens[..i].contains(&tokens[i]))
}

/// Fires: a client has claimed the data document under its grant, and the document holds no
/// fence — only a re-created data document loses it.
fn fence_erased(s: &State) -> bool {
    let fence = s.files.get(&"1").and_then(|d| d.source.fence());
    fence.is_none() && claimed(s).next().is_some()
}

/// Fires: an acknowledged write is gone — a client whose claim was answered sees the fence
/// below its token, or a client whose acquire was answered (it claims next) and whose lease
/// has not passed finds no lock document. Only a rollback undoes an answered write.
fn acknowledged_write_lost(s: &State) -> bool {
    let fence = s.files.get(&"1").and_then(|d| d.source.fence());
    let claim_lost = fence.is_some() && claimed(s).any(|cl| fence < cl.token);
    let acquire_lost = s.locks.docs().next().is_none()
        && s.clients
            .iter()
            .any(|cl| cl.alive && cl.pc == Pc::Claiming && cl.deadline.is_some_and(|d| d > 0));
    claim_lost || acquire_lost
}

/// A predicate on states that only one fault makes true.
type Fires = fn(&State) -> bool;

/// The `sometimes` twin of every store fault: each one reaches a state that only it can
/// reach — with its budget, and not under the standard scenario's faults.
#[test]
fn each_store_fault_fires_and_only_it_reaches_its_state() {
    let leased = Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim);
    let cases: [(&str, Fires); 3] = [
        ("recreate-index=1", token_handed_out_twice),
        ("recreate-doc=1", fence_erased),
        ("rollback=1", acknowledged_write_lost),
    ];
    let without = leased.with_faults(faults(WITHOUT_STORE_FAULTS));
    for (fault, fires) in cases {
        let with = leased.with_faults(faults(fault));
        assert!(reachable(&with, fires), "{fault}: the fault never fires");
        assert!(
            !reachable(&without, fires),
            "{fault}: its state is reachable without it"
        );
    }
}

/// 26. The lock index deleted and created again (`RecreateIndex`): every lock document is gone, so a second client is granted while the first still holds, and the counters start again, so the second grant's token (`seq 0/term 1`) equals the first one's: the fence cannot tell them apart and accepts the older holder's write after the newer one's (twin of 19, which holds without the fault).
#[test]
fn leased_fenced_claim_recreated_lock_index_hands_out_a_token_twice() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("recreate-index=1")),
        unique_states: 3470,
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
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "RecreateIndex",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
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
                    "ClaimData(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "RecreateIndex",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
                    "WriteData(c0)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 27. The data document deleted and created again (`RecreateDoc`) erases its fence, but without a pause no older holder is left to write: everything holds (twin: 28).
#[test]
fn leased_fenced_claim_survives_a_recreated_data_document_without_pauses() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("recreate-doc=1")),
        unique_states: 1037,
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

/// 28. A pause and the data document re-created: the new holder claims and writes, the document is re-created without its fence, and the holder paused past its lease writes with its old token: accepted (twin of 23, the pause alone, and of 27).
#[test]
fn leased_fenced_claim_recreated_data_document_lets_a_paused_write_in() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("recreate-doc=1,pause=1")),
        unique_states: 2784,
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
                    "ClaimData(c0)",
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
                    "ClaimData(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
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
                    "UpsertLock(c0)",
                    "ClaimData(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
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

/// 29. A fail-over loses the last acknowledged write (`Rollback`). An acquire rolled back leaves its client believing it holds while the next client is granted; the new primary's term orders the new grant's token after the lost one, so the fence keeps the data safe: only "at most one writer" fails (twin: 30).
#[test]
fn leased_fenced_claim_rollback_of_an_acquire_gives_two_holders() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("rollback=1")),
        unique_states: 3180,
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
            &["UpsertLock(c0)", "Rollback", "UpsertLock(c1)"],
        )],
    });
}

/// 30. A rollback of the new holder's acknowledged claim: the fence goes back to the paused holder's token, whose late write is accepted between the new holder's read and its write, which is accepted too: an update is lost (twin of 23 and 29).
#[test]
fn leased_fenced_claim_rollback_of_a_claim_loses_an_update() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("rollback=1,pause=1")),
        unique_states: 7878,
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
                &["UpsertLock(c0)", "Rollback", "UpsertLock(c1)"],
            ),
            (
                "no lost update",
                &[
                    "UpsertLock(c0)",
                    "ClaimData(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "Pause(c0)",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "Rollback",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 31. Every store fault of this section with the pause (on the recipe before the fix): "fenced writes are exclusive" and "no lost update" both fail (twin: 37, the fixed recipe, where both hold).
#[test]
fn leased_fenced_claim_all_store_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::LeasedUpsert, Writes::FencedClaim)
            .with_faults(faults("recreate-index=1,recreate-doc=1,rollback=1,pause=1")),
        unique_states: 286215,
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
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "RecreateIndex",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
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
                    "ClaimData(c0)",
                    "ReadData(c0)",
                    "CheckLease(c0)",
                    "RecreateIndex",
                    "UpsertLock(c1)",
                    "ClaimData(c1)",
                    "WriteData(c0)",
                    "ReadData(c1)",
                    "CheckLease(c1)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}
