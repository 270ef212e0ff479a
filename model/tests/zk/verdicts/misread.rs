//! A listing that does not recognize the client's own node (`misread`): the node is among the
//! children, but under a name the client's parser does not read as a lock node (before the
//! parser read signed suffixes, any suffix past 2^31: ZooKeeper writes the overflowed counter
//! as `-2147483648`). The recipe deletes that node by its name before it starts over (the
//! name carries its own protection id, so the node is its own), and pauses; the old recipe
//! (`abandon-without-delete`) started over at once and left the node in its live session, where
//! nobody deletes it. Both rows: `fenced`, 2 clients, `lose-reply=1,misread=1` (the lost reply
//! can hit the delete, which is then retried; no expiry or restart, so no hold is ever lost).

use super::*;

const FAULTS: &str = "lose-reply=1,misread=1";

fn verdicts(orphan: &'static str) -> [(&'static str, &'static str); 13] {
    [
        ("at most one holder", "holds"),
        ("at most one live holder", "holds"),
        ("fenced writes are exclusive", "holds"),
        ("no lost update", "holds"),
        ("no orphan node", orphan),
        ("grants in request order", "holds"),
        ("holder exists", "holds"),
        ("handoff after expiry", "NOT FOUND"),
        ("contention seen", "holds"),
        ("waiter woken by watch", "holds"),
        ("reentrant hold", "holds"),
        ("lock lost reported", "NOT FOUND"),
        ("update completed", "holds"),
    ]
}

/// The unrecognized node is deleted before the client starts over. Twin:
/// `abandon_without_delete_orphans_the_unrecognized_node`.
#[test]
fn curator_deletes_a_node_its_listing_does_not_recognize() {
    let scenario = sc(Curator, Fenced, FAULTS);
    // The misread matters: a client deletes a node it never held while another client's
    // node is ahead of it (no release does that here: nothing is abandoned or lost).
    assert!(reachable(&scenario, |s| (0..2u8).any(|c| {
        let cl = &s.clients[c as usize];
        let first = s.server.children().first();
        cl.pc == lockwright_model::zk::Pc::Releasing
            && first.is_some_and(|z| cl.own.is_some_and(|o| o.name != z.name))
            && s.server
                .children()
                .iter()
                .any(|z| cl.own.is_some_and(|o| o.name == z.name))
    })));
    expect(Expected {
        scenario,
        unique_states: 2303,
        verdicts: verdicts("holds"),
        counterexamples: &[],
    });
}

/// The old recipe starts over at once: its node stays in its live session, nobody's, and
/// (with a parser that does read it, as Curator's does) ahead of everyone.
#[test]
fn abandon_without_delete_orphans_the_unrecognized_node() {
    expect(Expected {
        scenario: sc(AbandonWithoutDelete, Fenced, FAULTS),
        unique_states: 3499,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[(
            "no orphan node",
            &["CreateLockNode(c0)", "MisreadOwnNode(c0)"],
        )],
    });
}
