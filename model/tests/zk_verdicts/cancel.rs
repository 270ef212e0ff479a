//! Cancellation (issue #20 items 1 and 2): the `abandon` fault drops a client's acquire (while
//! it waits with a node) or its release (after a lost delete reply) at an await point. The
//! recipe hands the node to a task of its own first, so nothing is left behind; the two old
//! behaviours leave an orphan. All three rows: `fenced` writes, 2 clients, faults
//! `expire=1,lose-reply=1,abandon=1` (the expiry's "at most one holder" and lost update are
//! plain `fenced`'s, as in `curator_fenced_loses_an_update_under_expiry`).

use super::*;

const FAULTS: &str = "expire=1,lose-reply=1,abandon=1";

/// The expiry's two counterexamples, the same in all three rows (BFS reaches them before any
/// abandon).
pub(crate) const EXPIRY: [(&str, &[&str]); 2] = [
    (
        "at most one holder",
        &[
            "CreateLockNode(c0)",
            "ListChildren(c0)",
            "CreateLockNode(c1)",
            "ExpireSession(c0)",
            "ListChildren(c1)",
        ],
    ),
    (
        "no lost update",
        &[
            "CreateLockNode(c0)",
            "ListChildren(c0)",
            "Read(c0)",
            "CreateLockNode(c1)",
            "ExpireSession(c0)",
            "ListChildren(c1)",
            "Read(c1)",
            "FencedWrite(c0)",
            "FencedWrite(c1)",
        ],
    ),
];

pub(crate) fn verdicts(orphan: &'static str) -> [(&'static str, &'static str); 13] {
    [
        ("at most one holder", "VIOLATED"),
        ("at most one live holder", "holds"),
        ("fenced writes are exclusive", "holds"),
        ("no lost update", "VIOLATED"),
        ("no orphan node", orphan),
        ("grants in request order", "holds"),
        ("holder exists", "holds"),
        ("handoff after expiry", "holds"),
        ("contention seen", "holds"),
        ("waiter woken by watch", "holds"),
        ("reentrant hold", "holds"),
        ("lock lost reported", "holds"),
        ("update completed", "holds"),
    ]
}

/// A dropped acquire or release leaves no node behind, and "at most one live holder" holds:
/// the row of issue #20's "Done" line (without `suspend`, not modelled yet). Twins:
/// `release_cancel_unsafe_orphans_the_node` and `give_up_cancel_unsafe_orphans_the_node`.
#[test]
fn curator_survives_a_dropped_acquire_or_release() {
    expect(Expected {
        scenario: sc(Curator, Fenced, FAULTS),
        unique_states: 17199,
        verdicts: verdicts("holds"),
        counterexamples: &EXPIRY,
    });
}

/// The release's delete reply is lost and the caller drops `release()` while it waits to
/// retry: nobody deletes the node while the session lives (the CURATOR-486 class).
#[test]
fn release_cancel_unsafe_orphans_the_node() {
    expect(Expected {
        scenario: sc(ReleaseCancelUnsafe, Fenced, FAULTS),
        unique_states: 18343,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[
            EXPIRY[0],
            EXPIRY[1],
            (
                "no orphan node",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "LoseReply(c0, not applied)",
                    "Abandon(c0)",
                ],
            ),
        ],
    });
}

/// The caller drops an acquire that is giving up, at the give-up's delete: the node was
/// already taken out of the attempt, so nobody deletes it.
#[test]
fn give_up_cancel_unsafe_orphans_the_node() {
    expect(Expected {
        scenario: sc(GiveUpCancelUnsafe, Fenced, FAULTS),
        unique_states: 26238,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[
            EXPIRY[0],
            EXPIRY[1],
            ("no orphan node", &["CreateLockNode(c0)", "Abandon(c0)"]),
        ],
    });
}
