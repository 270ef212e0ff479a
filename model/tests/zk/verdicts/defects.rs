//! The recipe's known defects, each as a variant: no protection id, a release that forgets,
//! adopting the old session's node, and delete-by-name retries; plus option round-trips.
//!
//! Every row writes with plain `fenced` tokens (no claim), so each also loses an update under
//! expiry, with the counterexample of `fencing.rs` — a property of the write mode, not of the
//! variant; the twins compare the variant's own properties.

use super::*;

/// Without protection a create retried after a lost reply leaves the first node behind, owned by a
/// live session nobody will delete it for (ZooKeeper recipes, "Recoverable Errors and the GUID";
/// CURATOR-79). Twin: `curator_fenced_loses_an_update_under_expiry`.
#[test]
fn no_protection_orphans_the_first_node() {
    expect(Expected {
        scenario: sc(NoProtection, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 41019,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "holds"),
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
            ("no orphan node", &["LoseReply(c0, applied)"]),
        ],
    });
}

/// Plain names also repeat after the parent is re-created, so no-protection's retried delete can
/// remove a newer holder's node (the release ABA of `delete-by-name-retry`).
#[test]
fn no_protection_with_a_recreated_parent_also_deletes_a_newer_holder() {
    expect(Expected {
        scenario: sc(
            NoProtection,
            Fenced,
            "expire=1,lose-reply=1,restart=1,recreate-parent=1",
        ),
        unique_states: 115793,
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
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                ],
            ),
            (
                "at most one live holder",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "LoseReply(c0, applied)",
                    "RecreateParent",
                    "CreateLockNode(c1)",
                    "ListChildren(c1)",
                    "DeleteLockNode(c0)",
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
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
            ("no orphan node", &["LoseReply(c0, applied)"]),
            (
                "grants in request order",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "LoseReply(c0, applied)",
                    "RecreateParent",
                    "CreateLockNode(c1)",
                    "ListChildren(c1)",
                    "DeleteLockNode(c0)",
                ],
            ),
        ],
    });
}

/// The hold is forgotten although the delete's reply was lost and the delete not applied: the node
/// stays in a live session and blocks everyone (CURATOR-486, CURATOR-678). Twin:
/// `curator_fenced_loses_an_update_under_expiry`.
#[test]
fn release_forgets_leaves_an_orphan() {
    expect(Expected {
        scenario: sc(ReleaseForgets, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 38496,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "holds"),
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
            (
                "no orphan node",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "LoseReply(c0, not applied)",
                ],
            ),
        ],
    });
}

/// The protected search adopts the node of the session c0 abandoned (CURATOR-498/604): c0 is
/// granted on it in its new, healthy session; the old session times out, the node goes, c1 is
/// granted, and nothing ever tells c0. It also orphans the node its new session made. Twin:
/// `curator_fenced_loses_an_update_under_expiry`.
#[test]
fn adopt_old_session_holds_a_node_that_will_vanish() {
    expect(Expected {
        scenario: sc(AdoptOldSession, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 44591,
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
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                ],
            ),
            (
                "at most one live holder",
                &[
                    "LoseReply(c0, applied)",
                    "CreateLockNode(c1)",
                    "RestartClient(c0)",
                    "FindOwnNode(c0)",
                    "ListChildren(c0)",
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
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "FencedWrite(c0)",
                    "FencedWrite(c1)",
                ],
            ),
            (
                "no orphan node",
                &[
                    "CreateLockNode(c0)",
                    "RestartClient(c0)",
                    "LoseReply(c0, applied)",
                    "FindOwnNode(c0)",
                ],
            ),
            (
                "grants in request order",
                &[
                    "LoseReply(c0, applied)",
                    "RestartClient(c0)",
                    "FindOwnNode(c0)",
                    "ListChildren(c0)",
                    "ExpireOldSession(c0)",
                ],
            ),
        ],
    });
}

/// Retrying a delete by a plain name is harmless while the parent is not re-created. Twin:
/// `delete_by_name_retry_deletes_a_newer_holders_node`.
#[test]
fn delete_by_name_retry_is_safe_while_names_do_not_repeat() {
    expect(Expected {
        scenario: sc(DeleteByNameRetry, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 31294,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
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
        ],
    });
}

/// The release ABA: c0's delete of `lock-0` is applied but its reply is lost; the empty container
/// is re-created, c1's node is `lock-0` again, and c0's retried delete removes it. c1 still
/// believes it holds in a healthy session, c0 is granted anew.
#[test]
fn delete_by_name_retry_deletes_a_newer_holders_node() {
    expect(Expected {
        scenario: sc(
            DeleteByNameRetry,
            Fenced,
            "expire=1,lose-reply=1,restart=1,recreate-parent=1",
        ),
        unique_states: 93181,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "VIOLATED"),
            ("no orphan node", "holds"),
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
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                ],
            ),
            (
                "at most one live holder",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "LoseReply(c0, applied)",
                    "RecreateParent",
                    "CreateLockNode(c1)",
                    "ListChildren(c1)",
                    "DeleteLockNode(c0)",
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
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
            (
                "grants in request order",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "LoseReply(c0, applied)",
                    "RecreateParent",
                    "CreateLockNode(c1)",
                    "ListChildren(c1)",
                    "DeleteLockNode(c0)",
                ],
            ),
        ],
    });
}

/// The names and labels the CLI and the report print, and the parsers that read them back.
#[test]
fn options_print_and_parse_back() {
    assert_eq!(
        Scenario::standard().label(),
        "curator × fenced-claim, 3 clients (1 reentrant), faults expire=1,lose-reply=1,restart=1"
    );
    assert_eq!(
        Scenario::deep().label(),
        "curator × fenced-claim, 3 clients (1 reentrant), faults expire=2,lose-reply=2,restart=1,recreate-parent=1"
    );
    assert_eq!(
        sc(Curator, Fenced, "expire=1")
            .with_guard(Guard::Curator)
            .label(),
        "curator × fenced, guard curator, 2 clients (1 reentrant), faults expire=1"
    );
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        assert_eq!(v.to_string(), v.name());
    }
    for w in WriteMode::ALL {
        assert_eq!(WriteMode::from_name(w.name()), Some(w));
    }
    for g in Guard::ALL {
        assert_eq!(Guard::from_name(g.name()), Some(g));
    }
    let f = Faults::parse("restart=1, expire=2,recreate-parent=1,lose-reply=3").unwrap();
    assert_eq!(
        f.to_string(),
        "expire=2,lose-reply=3,restart=1,recreate-parent=1"
    );
    assert_eq!(Faults::parse(&f.to_string()), Ok(f));
    assert_eq!(Faults::parse("none"), Ok(Faults::NONE));
    assert_eq!(Faults::NONE.to_string(), "none");
    assert!(Faults::parse("crash=1")
        .unwrap_err()
        .contains("unknown fault `crash`"));
    assert!(Faults::parse("expire").is_err());
    assert_eq!(
        lockwright_model::zk::ALWAYS,
        [
            "at most one holder",
            "at most one live holder",
            "fenced writes are exclusive",
            "no lost update",
            "no orphan node",
            "grants in request order"
        ]
    );
    let names: Vec<&str> = Scenario::standard()
        .properties()
        .iter()
        .map(|p| p.name)
        .collect();
    let listed: Vec<&str> = lockwright_model::zk::ALWAYS
        .iter()
        .chain(lockwright_model::zk::SOMETIMES.iter())
        .copied()
        .collect();
    assert_eq!(
        names, listed,
        "ALWAYS and SOMETIMES list the properties in report order"
    );
}
