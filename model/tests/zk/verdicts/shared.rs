//! Two mutexes of one process sharing one ZooKeeper client (`--shared-client`): one current
//! session, renewed by whichever mutex learns first that it expired. The other mutex learns of
//! the renewal only at its next step (`NoticeSessionChange`); a request it sends before that
//! already runs in the new session. The recipe keeps a node the new session owns; the old
//! recipe (`drop-own-on-session-swap`) dropped it as the old session's, created again behind
//! it, and waited behind itself. A search after a lost create goes on in the renewed session
//! and finds a create that ran there (the old rule, kept by `drop-own-on-session-swap`, dropped
//! the search and orphaned that node). The twin rows: `fenced`, c0 (reentrant) and c1 share
//! the client, faults `expire=1`, and `expire=1,lose-reply=1`.

use super::*;
use lockwright_model::zk::Action;

fn shared(variant: Variant, faults: &str) -> Scenario {
    sc(variant, Fenced, faults).with_shared_client(true)
}

fn verdicts(orphan: &'static str) -> [(&'static str, &'static str); 13] {
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

/// The expiry's two counterexamples, the same in every shared row: c1 is granted in the
/// session it renewed while c0 still believes it holds through the expired one.
const EXPIRY: [(&str, &[&str]); 2] = [
    (
        "at most one holder",
        &[
            "CreateLockNode(c0)",
            "ListChildren(c0)",
            "ExpireSession(c0)",
            "ReceiveSessionEvent(c1)",
            "CreateLockNode(c1)",
            "ListChildren(c1)",
        ],
    ),
    (
        "no lost update",
        &[
            "CreateLockNode(c0)",
            "ListChildren(c0)",
            "Read(c0)",
            "ExpireSession(c0)",
            "ReceiveSessionEvent(c1)",
            "CreateLockNode(c1)",
            "ListChildren(c1)",
            "Read(c1)",
            "FencedWrite(c0)",
            "FencedWrite(c1)",
        ],
    ),
];

/// A node the new session owns is kept. Twin: `drop_own_on_session_swap_orphans_its_node`.
#[test]
fn curator_keeps_a_node_the_renewed_session_owns() {
    use lockwright_model::zk::Pc;
    let scenario = shared(Curator, "expire=1");
    // The swap can matter: a mutex has created in the session the other one opened, and has
    // not noticed the renewal yet.
    assert!(reachable(&scenario, |s| s.clients.iter().any(|cl| {
        cl.known != cl.session
            && cl.pc == Pc::Created
            && cl
                .own
                .and_then(|o| s.server.node(o.name))
                .is_some_and(|z| z.owner.epoch == cl.session)
    })));
    expect(Expected {
        scenario,
        unique_states: 1301,
        verdicts: verdicts("holds"),
        counterexamples: &EXPIRY,
    });
}

/// The mutex drops the node its create made in the renewed session: nobody deletes it while
/// the session lives, and the mutex's next node waits behind it.
#[test]
fn drop_own_on_session_swap_orphans_its_node() {
    expect(Expected {
        scenario: shared(DropOwnOnSessionSwap, "expire=1"),
        unique_states: 2863,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[
            EXPIRY[0],
            EXPIRY[1],
            (
                "no orphan node",
                &[
                    "ExpireSession(c0)",
                    "ReceiveSessionEvent(c0)",
                    "CreateLockNode(c1)",
                    "NoticeSessionChange(c1)",
                ],
            ),
        ],
    });
}

/// A mutex whose create's reply is lost after the other mutex renewed the session keeps
/// searching when it notices the renewal: the create ran in the renewed, live session, and the
/// search (our uuid, owned by the session it runs in) finds it. Twin:
/// `drop_own_on_session_swap_drops_the_search_and_orphans_its_node`.
#[test]
fn curator_keeps_searching_for_a_create_that_ran_in_the_renewed_session() {
    use lockwright_model::zk::Pc;
    let scenario = shared(Curator, "expire=1,lose-reply=1");
    // The case is reached: a mutex searches for a create its renewed session owns, and has
    // not noticed the renewal yet.
    assert!(reachable(&scenario, |s| s.clients.iter().enumerate().any(
        |(c, cl)| {
            cl.known != cl.session
                && cl.pc == Pc::CreateLost
                && s.server
                    .children()
                    .iter()
                    .any(|z| z.name.uuid == Some(c as u8) && z.owner.epoch == cl.session)
        }
    )));
    expect(Expected {
        scenario,
        unique_states: 4430,
        verdicts: verdicts("holds"),
        counterexamples: &EXPIRY,
    });
}

/// The old session-change rule for a search after a lost create: it stops when the mutex
/// notices the renewal, though its create ran in the renewed, live session; nobody deletes
/// that node while the session lives.
#[test]
fn drop_own_on_session_swap_drops_the_search_and_orphans_its_node() {
    expect(Expected {
        scenario: shared(DropOwnOnSessionSwap, "expire=1,lose-reply=1"),
        unique_states: 11210,
        verdicts: verdicts("VIOLATED"),
        counterexamples: &[
            EXPIRY[0],
            EXPIRY[1],
            (
                "no orphan node",
                &[
                    "ExpireSession(c0)",
                    "ReceiveSessionEvent(c0)",
                    "CreateLockNode(c1)",
                    "NoticeSessionChange(c1)",
                ],
            ),
        ],
    });
    // The path of the dropped search (BFS reports the dropped node's first, the same length):
    // an orphan in this variant, none in `curator`.
    let path = [
        Action::ExpireSession(0),
        Action::ReceiveSessionEvent(0),
        Action::LoseReply(1, true),
        Action::NoticeSessionChange(1),
    ];
    for (variant, orphan) in [(DropOwnOnSessionSwap, true), (Curator, false)] {
        let sc = shared(variant, "expire=1,lose-reply=1");
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, a)
                .unwrap_or_else(|| panic!("{variant}: {a} is enabled"));
        }
        assert_eq!(!sc.no_orphan_node(&s), orphan, "{variant}: {s:?}");
    }
}

/// The shared handle restarts (`RestartClient`; the old session lives on until it times out):
/// a mutex that has not noticed lists the children in the new session. The listing's answer
/// says nothing about its node of the old session, so it learns of the swap instead of being
/// granted (found under shuttle: `shuttle_zk_shared`). "at most one holder" and the bare
/// fence's lost update are the usual ones of a session that ends under a holder who has not
/// heard. Twin: `drop_own_on_session_swap_is_granted_on_a_node_of_the_abandoned_session`.
#[test]
fn curator_learns_a_restart_of_the_shared_handle_from_its_listing() {
    expect(Expected {
        scenario: shared(Curator, "restart=1"),
        unique_states: 5278,
        verdicts: verdicts("holds"),
        counterexamples: &[
            (
                "at most one holder",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "RestartClient(c0)",
                    "NoticeSessionChange(c1)",
                    "CreateLockNode(c1)",
                    "ExpireOldSession(c0)",
                    "ListChildren(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "Read(c0)",
                    "RestartClient(c0)",
                    "NoticeSessionChange(c1)",
                    "CreateLockNode(c1)",
                    "ExpireOldSession(c0)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "FencedWrite(c0)",
                    "FencedWrite(c1)",
                ],
            ),
        ],
    });
}

/// The recipe as it was: granted on a listing answered in the session the other mutex's
/// restart opened, through its node of the abandoned session; when that session times out the
/// other mutex is granted too, both holding through live sessions.
#[test]
fn drop_own_on_session_swap_is_granted_on_a_node_of_the_abandoned_session() {
    expect(Expected {
        scenario: shared(DropOwnOnSessionSwap, "restart=1"),
        unique_states: 24056,
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
            (
                "at most one holder",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "RestartClient(c0)",
                    "CreateLockNode(c1)",
                    "ExpireOldSession(c0)",
                    "ListChildren(c1)",
                ],
            ),
            (
                "at most one live holder",
                &[
                    "CreateLockNode(c0)",
                    "RestartClient(c0)",
                    "ListChildren(c0)",
                    "CreateLockNode(c1)",
                    "ExpireOldSession(c0)",
                    "ListChildren(c1)",
                ],
            ),
            (
                "no lost update",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "Read(c0)",
                    "RestartClient(c0)",
                    "CreateLockNode(c1)",
                    "ExpireOldSession(c0)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "FencedWrite(c0)",
                    "FencedWrite(c1)",
                ],
            ),
            (
                "no orphan node",
                &[
                    "RestartClient(c0)",
                    "CreateLockNode(c0)",
                    "NoticeSessionChange(c0)",
                ],
            ),
            (
                "grants in request order",
                &[
                    "CreateLockNode(c0)",
                    "RestartClient(c0)",
                    "ListChildren(c0)",
                    "ExpireOldSession(c0)",
                ],
            ),
        ],
    });
}
