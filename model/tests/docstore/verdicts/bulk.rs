//! Rows for the Definitive Guide's document lock over several documents: a `_bulk` of
//! `create`s (`document-bulk`, rows 32–35 of `docs/docstore.md` §5). Model only: the
//! reference client has no such recipe.

use lockwright_model::checker::pinned::reachable;
use lockwright_model::docstore::{Pc, State};

use super::*;

/// Fires: a bulk was answered with some items created and some conflicting, and its client
/// is deleting the ones it created.
fn partial_success(s: &State) -> bool {
    s.clients
        .iter()
        .any(|cl| cl.pc == Pc::Releasing && cl.bulk != 0 && cl.bulk != 0b11)
}

/// The `sometimes` twin of the bulk's partial success: reached without any fault (the items
/// of two clients' bulks interleave), and never with one client (nothing to conflict with).
#[test]
fn a_bulk_partly_succeeds_only_under_contention() {
    let sc = Scenario::new(Variant::DocumentBulk, Writes::Unfenced);
    assert!(reachable(&sc, partial_success), "no partial success");
    assert!(!reachable(&sc.with_clients(1), partial_success));
}

/// 32. The Definitive Guide's document lock for two documents at once, one `_bulk` of `create`s, no faults: the items of two clients' bulks interleave, so both can get a partial success (one item created, one conflicting); each deletes what it created and tries again. At most one client ever holds both documents. Twins: 33, 34.
#[test]
fn document_bulk_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::DocumentBulk, Writes::Unfenced)
            .with_faults(faults("none")),
        unique_states: 40,
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

/// 33. A client that crashes in the middle of its bulk (or holding, or before its clean-up) leaves its lock documents for good, as every recipe as written does (twin of 32).
#[test]
fn document_bulk_crash_leaves_its_documents() {
    expect(Expected {
        scenario: Scenario::new(Variant::DocumentBulk, Writes::Unfenced)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 324,
        verdicts: [
            ("at most one writer", "holds"),
            ("readers and writer exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("writer exists", "holds"),
            ("readers share", "NOT FOUND"),
            ("contention seen", "holds"),
            ("acquired after crash", "holds"),
            ("stale write attempted", "NOT FOUND"),
            ("sessions overlap", "NOT FOUND"),
        ],
        counterexamples: &[("no stale lock", &["BulkCreateLocks(c0)", "Crash(c0)"])],
    });
}

/// 34. A lost reply: a release whose answer is lost is sent again and deletes the next holder's documents (two writers, as rows 3 and 8); a bulk whose answer is lost is sent again and conflicts with its own documents ("no item created": refused, and its documents stay for good).
#[test]
fn document_bulk_lost_replies_give_two_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::DocumentBulk, Writes::Unfenced)
            .with_faults(faults("lose-reply=1")),
        unique_states: 416,
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
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkDeleteLocks(c0, reply lost)",
                    "BulkCreateLocks(c1)",
                    "BulkCreateLocks(c1)",
                    "BulkDeleteLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                ],
            ),
            (
                "no stale lock",
                &[
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0, reply lost)",
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                ],
            ),
            (
                "fenced writes are exclusive",
                &[
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkDeleteLocks(c0, reply lost)",
                    "BulkCreateLocks(c1)",
                    "BulkCreateLocks(c1)",
                    "BulkDeleteLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "ReadData(c0)",
                    "WriteData(c0)",
                    "ReadData(c1)",
                    "WriteData(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkDeleteLocks(c0, reply lost)",
                    "BulkCreateLocks(c1)",
                    "BulkCreateLocks(c1)",
                    "BulkDeleteLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "ReadData(c0)",
                    "ReadData(c1)",
                    "WriteData(c0)",
                    "WriteData(c1)",
                ],
            ),
        ],
    });
}

/// 35. The same faults with fenced writes claimed at acquire (the token: the `_seq_no`/`_primary_term` of the bulk's last `create`): still two writers and a stale lock, but the data document refuses the older holder's writes and no update is lost (twin of 34).
#[test]
fn document_bulk_fenced_claim_keeps_the_data_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::DocumentBulk, Writes::FencedClaim)
            .with_faults(faults("lose-reply=1")),
        unique_states: 578,
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
                &[
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "ClaimData(c0)",
                    "BulkDeleteLocks(c0, reply lost)",
                    "BulkCreateLocks(c1)",
                    "BulkCreateLocks(c1)",
                    "BulkDeleteLocks(c0)",
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                ],
            ),
            (
                "no stale lock",
                &[
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0, reply lost)",
                    "BulkCreateLocks(c0)",
                    "BulkCreateLocks(c0)",
                ],
            ),
        ],
    });
}
