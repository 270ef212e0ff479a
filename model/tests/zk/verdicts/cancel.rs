//! Cancellation (issue #20 items 1 and 2): the `abandon` fault drops a client's acquire at any
//! await point — after a lost create reply (a drop while the reply is awaited is that reply
//! lost), the wait with a node — or its release (after a lost delete reply). The
//! recipe hands what the future had to a task of its own first (a node to delete, or a search
//! for the node a create of unknown outcome may have made, then its delete), so nothing is left
//! behind; the two old behaviours leave an orphan. All three rows: `fenced` writes, 2 clients,
//! faults `expire=1,lose-reply=1,abandon=1` (the expiry's "at most one holder" and lost update
//! are plain `fenced`'s, as in `curator_fenced_loses_an_update_under_expiry`).

use super::*;
use lockwright_model::zk::{Action, Cleanup, PREVIOUS_ATTEMPT};

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
    let scenario = sc(Curator, Fenced, FAULTS);
    // The drops before a node is known are not vacuous: a dropped acquire's cleanup searches
    // with the node its create made there, and one searches where there is none.
    let searching = |found: bool| {
        move |s: &lockwright_model::zk::State| {
            s.clients.iter().enumerate().any(|(c, cl)| {
                cl.cleanup == Some(Cleanup::Search)
                    && s.server.children().iter().any(|z| {
                        z.name.uuid == Some(c as u8 + PREVIOUS_ATTEMPT)
                            && z.owner == s.session(c as u8)
                    }) == found
            })
        }
    };
    assert!(reachable(&scenario, searching(true)));
    assert!(reachable(&scenario, searching(false)));
    expect(Expected {
        scenario,
        unique_states: 47918,
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
        unique_states: 48279,
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

/// The caller drops an acquire and nothing is handed on: here while it waits with a node
/// (before the fix, giving up awaited its delete, and a drop there left the node the same
/// way), and, replayed below, after a lost create reply whose create the server applied.
/// `curator` leaves no orphan on either path.
#[test]
fn give_up_cancel_unsafe_orphans_the_node() {
    use Action::*;
    let paths: [&[Action]; 2] = [
        &[CreateLockNode(0), Abandon(0)],
        &[LoseReply(0, true), Abandon(0)],
    ];
    for path in paths {
        for (variant, orphan) in [(GiveUpCancelUnsafe, true), (Curator, false)] {
            let sc = sc(variant, Fenced, FAULTS);
            let mut s = sc.init_states().remove(0);
            for &a in path {
                s = sc
                    .step(&s, a)
                    .unwrap_or_else(|| panic!("{variant}: {a} is enabled"));
            }
            assert_eq!(!sc.no_orphan_node(&s), orphan, "{variant} {path:?}: {s:?}");
        }
    }
    expect(Expected {
        scenario: sc(GiveUpCancelUnsafe, Fenced, FAULTS),
        unique_states: 28495,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[
            EXPIRY[0],
            EXPIRY[1],
            ("no orphan node", &["CreateLockNode(c0)", "Abandon(c0)"]),
        ],
    });
}
