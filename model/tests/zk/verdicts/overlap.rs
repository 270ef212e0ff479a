//! A dropped future's cleanup beside the client's next acquire (issue #20): `Abandon` hands
//! what the future had to the client's cleanup task (`Client::cleanup`) and the client is
//! `Idle` at once, so `CleanupFind`, `CleanupDelete` and their lost replies interleave with
//! the next attempt's steps. The recipe's protection id is fresh per `acquire`, and the model
//! gives the dropped attempt an id of its own; with one id per client
//! (`protection-id-per-client`, a model finding, not a recipe of record) the two attempts take
//! each other's nodes, and a holder's node is deleted under it.

use super::*;
use lockwright_model::zk::{Action, Cleanup, State};

const FAULTS: &str = "expire=1,lose-reply=1,abandon=1";

/// The overlap is not vacuous in the fixed recipe: a client holds (or waits with a node) while
/// its cleanup still has a node to delete, or a search to run; and the cleanup's requests
/// finish after the next attempt was granted. Every `always` property keeps its verdict of
/// `cancel.rs` (same scenario, `curator_survives_a_dropped_acquire_or_release`).
#[test]
fn curator_cleanup_overlaps_the_next_acquire() {
    let scenario = sc(Curator, Fenced, FAULTS);
    let overlap = |pending: fn(Cleanup) -> bool, holds: bool| {
        move |s: &State| {
            s.clients.iter().any(|cl| {
                cl.cleanup.is_some_and(pending)
                    && if holds {
                        cl.pc.believes()
                    } else {
                        cl.pc.has_node()
                    }
            })
        }
    };
    assert!(reachable(
        &scenario,
        overlap(|k| k == Cleanup::Search, true)
    ));
    assert!(reachable(
        &scenario,
        overlap(|k| matches!(k, Cleanup::Delete(_)), true)
    ));
    assert!(reachable(
        &scenario,
        overlap(|k| k == Cleanup::Search, false)
    ));
}

/// One id per client, the two directions, replayed: (1) the cleanup's search takes the next
/// attempt's node for the dropped one's and deletes it under its holder, and c1 is granted
/// beside c0 ("at most one live holder"); `curator`'s search, for the dropped attempt's id,
/// finds nothing there. (2) BFS's shortest: the next attempt's search after a lost create
/// adopts the node the cleanup is about to delete, and holds on it (below).
#[test]
fn protection_id_per_client_lets_the_cleanup_delete_the_next_holders_node() {
    use Action::*;
    let path = [
        LoseReply(0, false),
        Abandon(0),
        CreateLockNode(0),
        ListChildren(0),
        CleanupFind(0),
        CleanupDelete(0),
        CreateLockNode(1),
        ListChildren(1),
    ];
    for (variant, live_holders) in [(ProtectionIdPerClient, 2), (Curator, 1)] {
        let sc = sc(variant, Fenced, FAULTS);
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = match sc.step(&s, a) {
                Some(next) => next,
                // Curator's cleanup found nothing: no delete to make; c1 waits behind c0.
                None if variant == Curator && a == CleanupDelete(0) => continue,
                None => panic!("{variant}: {a} is enabled"),
            };
        }
        assert_eq!(s.live_holders().count(), live_holders, "{variant}: {s:?}");
    }
    expect(Expected {
        scenario: sc(ProtectionIdPerClient, Fenced, FAULTS),
        unique_states: 72219,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "VIOLATED"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
            ("update completed", "holds"),
        ],
        counterexamples: &[
            super::cancel::EXPIRY[0],
            (
                "at most one live holder",
                &[
                    "CreateLockNode(c0)",
                    "CreateLockNode(c1)",
                    "Abandon(c0)",
                    "LoseReply(c0, applied)",
                    "FindOwnNode(c0)",
                    "ListChildren(c0)",
                    "CleanupDelete(c0)",
                    "ListChildren(c1)",
                ],
            ),
            super::cancel::EXPIRY[1],
            (
                "no orphan node",
                &[
                    "CreateLockNode(c0)",
                    "Abandon(c0)",
                    "LoseReply(c0, applied)",
                    "FindOwnNode(c0)",
                ],
            ),
            (
                "grants in request order",
                &[
                    "CreateLockNode(c0)",
                    "Abandon(c0)",
                    "LoseReply(c0, applied)",
                    "FindOwnNode(c0)",
                    "ListChildren(c0)",
                    "CleanupDelete(c0)",
                ],
            ),
        ],
    });
}
