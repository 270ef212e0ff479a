//! A lagging server (`lag`): after a lost create reply the session may be served by a server
//! that has not applied the create yet (the session never saw its zxid). Without `sync` first
//! (`search-without-sync`, lockwright before the fix) the protected search misses the node:
//! the client creates a second one and the first stays ahead of it for as long as the session
//! lives. With `sync` first (`curator`, and the recipe now) the search reads current data, so
//! the lagging answer never comes. Both rows: `fenced`, 2 clients, `lose-reply=1,lag=1` (no
//! expiry or restart, so no hold is ever lost: "lock lost reported" is not found).

use super::*;

const FAULTS: &str = "lose-reply=1,lag=1";

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

/// `sync` before the search: nothing left behind. Twin: `search_without_sync_orphans_its_first_node`.
#[test]
fn curator_syncs_before_the_search() {
    let scenario = sc(Curator, Fenced, FAULTS);
    // The lag could matter: a client searches while its lost create's node is there.
    assert!(reachable(&scenario, |s| (0..2u8).any(|c| {
        s.clients[c as usize].pc == lockwright_model::zk::Pc::CreateLost
            && s.server.children().iter().any(|z| z.owner == s.session(c))
    })));
    expect(Expected {
        scenario,
        unique_states: 969,
        verdicts: verdicts("holds"),
        counterexamples: &[],
    });
}

/// No `sync` before the search: a lagging server answers it without the node the lost create
/// made; the client creates again and the first node is nobody's.
#[test]
fn search_without_sync_orphans_its_first_node() {
    expect(Expected {
        scenario: sc(SearchWithoutSync, Fenced, FAULTS),
        unique_states: 1270,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[(
            "no orphan node",
            &["LoseReply(c0, applied)", "LaggedSearch(c0)"],
        )],
    });
}
