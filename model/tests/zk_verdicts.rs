//! The ZooKeeper family's verdict table (`docs/zookeeper.md`), pinned: for every scenario, each
//! property's verdict, the exact number of unique states, and the exact (shortest, BFS-first)
//! counterexample of every violated `always` property. A change to the model that alters the
//! state space or a counterexample shows up here as a diff.
//!
//! Every row runs exhaustively, so "holds" means "holds in every reachable state". Every row
//! that holds has a twin in which the check finds the bug (named in each test's comment). The
//! rows use 2 clients (c0 reentrant, c1) except the standard scenario (3 clients).
//!
//! Check them all: `cargo test -p lockwright-model --test zk_verdicts`.

use lockwright_model::checker::pinned::{assert_pinned, reachable, Pinned};
use lockwright_model::zk::{Faults, Guard, Scenario, Variant, WriteMode};
use stateright::Model;

use Variant::*;
use WriteMode::*;

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 11],
    /// The counterexample of each violated `always` property.
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

/// `variant` × `writes`, 2 clients (c0 reentrant), faults `faults`.
fn sc(variant: Variant, writes: WriteMode, faults: &str) -> Scenario {
    Scenario::new(variant, writes)
        .with_clients(2)
        .with_faults(Faults::parse(faults).expect("valid fault list"))
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    // "fenced writes are exclusive" is not vacuous: in every scenario a holder granted after
    // an accepted write's holder is about to write.
    assert!(
        reachable(&sc, |s| s.holders().any(|c| {
            let own = s.clients[c as usize].own.expect("a holder has a node");
            s.resource.max_czxid.is_some_and(|m| m < own.czxid)
        })),
        "{label}: no later grant ever writes"
    );
    let report = assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
    // Every discovery is also a path of the replayer's API (`Scenario::step`), and reads as
    // numbered steps with stable names (what docs/zookeeper.md lists).
    for v in &report.verdicts {
        let Some(path) = &v.path else { continue };
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, *a)
                .unwrap_or_else(|| panic!("{label}: {a} is enabled"));
        }
        let lines = sc.describe_path(path).expect("describable");
        assert_eq!(lines.len(), path.len());
    }
}

/// The standard scenario (`Scenario::standard()`, 3 clients, c0 reentrant): Curator's recipe with czxid
/// fencing keeps every property but "at most one holder" under expiry, lost replies and restarts.
/// A holder whose session expired still believes it holds until it hears of it (Curator tech note
/// 10): the pinned counterexample. Twins: `curator_unfenced_accepts_a_stale_write`,
/// `curator_check_then_write_accepts_a_stale_write`.
#[test]
fn standard_scenario_curator_fenced_holds_all_but_at_most_one_holder() {
    expect(Expected {
        scenario: Scenario::standard(),
        unique_states: 235566,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
    });
}

/// Without faults Curator's recipe keeps every `always` property, including "at most one holder";
/// no session expires, so "handoff after expiry" and "lock lost reported" are not reachable. Twin:
/// `curator_session_expiry_makes_two_holders`.
#[test]
fn curator_without_faults_keeps_one_holder() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "none"),
        unique_states: 115,
        verdicts: [
            ("at most one holder", "holds"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "NOT FOUND"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// One session expiry is enough for two clients to believe they hold the lock (Curator tech note
/// 10; CURATOR-206 is the partition version): c0's session expires while it holds, the server
/// deletes its node, c1 is granted before c0 hears of the expiry.
#[test]
fn curator_session_expiry_makes_two_holders() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "expire=1"),
        unique_states: 768,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
    });
}

/// Two clients under every fault but a re-created parent: as the standard scenario.
#[test]
fn curator_fenced_survives_expiry_lost_replies_and_restarts() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 15593,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
    });
}

/// Curator's own mutex never revokes a hold (guard `curator`): a holder that learned its session
/// expired keeps believing. The verdicts are those of the lockwright guard (row above): the
/// believing holder's writes are fenced off, and its hold session is dead, so it is not a live
/// holder. Only the state count differs.
#[test]
fn curator_guard_keeps_believing_and_fencing_still_holds() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "expire=1,lose-reply=1,restart=1").with_guard(Guard::Curator),
        unique_states: 18617,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
    });
}

/// Unfenced writes: after c0's session expired and c1 was granted and wrote, c0 (paused, it has not
/// heard) writes too and the resource accepts it.
#[test]
fn curator_unfenced_accepts_a_stale_write() {
    expect(Expected {
        scenario: sc(Curator, Unfenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 15585,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
                "fenced writes are exclusive",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                    "Write(c1)",
                    "Write(c0)",
                ],
            ),
        ],
    });
}

/// Checking the lock node just before writing does not help: the pause lands between
/// `CheckLockNode` and `Write`.
#[test]
fn curator_check_then_write_accepts_a_stale_write() {
    expect(Expected {
        scenario: sc(Curator, CheckThenWrite, "expire=1,lose-reply=1,restart=1"),
        unique_states: 19807,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
                "fenced writes are exclusive",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "CheckLockNode(c0)",
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                    "CheckLockNode(c1)",
                    "Write(c1)",
                    "Write(c0)",
                ],
            ),
        ],
    });
}

/// A ZooKeeper `multi` that checks the lock node and writes atomically keeps writes exclusive (the
/// node of an expired holder is gone, so its `multi` fails). Twin: `curator_unfenced_accepts_a_stale_write`.
#[test]
fn curator_guarded_multi_keeps_writes_exclusive() {
    expect(Expected {
        scenario: sc(Curator, Guarded, "expire=1,lose-reply=1,restart=1"),
        unique_states: 15338,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
    });
}

/// czxid tokens survive a re-created parent: zxids never restart. Twin:
/// `curator_sequence_fencing_fails_after_a_recreated_parent`.
#[test]
fn curator_czxid_fencing_survives_a_recreated_parent() {
    expect(Expected {
        scenario: sc(
            Curator,
            Fenced,
            "expire=1,lose-reply=1,restart=1,recreate-parent=1",
        ),
        unique_states: 39079,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
    });
}

/// The sequence suffix is not a fencing token: c0's session expires, the empty container is reaped
/// and made again, c1's node gets suffix 0 again, and the resource takes c0's stale token 0 after
/// c1's 0.
#[test]
fn curator_sequence_fencing_fails_after_a_recreated_parent() {
    expect(Expected {
        scenario: sc(
            Curator,
            FencedBySequence,
            "expire=1,lose-reply=1,restart=1,recreate-parent=1",
        ),
        unique_states: 63119,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
                "fenced writes are exclusive",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "ExpireSession(c0)",
                    "RecreateParent",
                    "CreateLockNode(c1)",
                    "ListChildren(c1)",
                    "FencedWrite(c1)",
                    "FencedWrite(c0)",
                ],
            ),
        ],
    });
}

/// Without protection a create retried after a lost reply leaves the first node behind, owned by a
/// live session nobody will delete it for (ZooKeeper recipes, "Recoverable Errors and the GUID";
/// CURATOR-79). Twin: `curator_fenced_survives_expiry_lost_replies_and_restarts`.
#[test]
fn no_protection_orphans_the_first_node() {
    expect(Expected {
        scenario: sc(NoProtection, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 23897,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
        unique_states: 62229,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "VIOLATED"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
/// `curator_fenced_survives_expiry_lost_replies_and_restarts`.
#[test]
fn release_forgets_leaves_an_orphan() {
    expect(Expected {
        scenario: sc(ReleaseForgets, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 21914,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
/// `curator_fenced_survives_expiry_lost_replies_and_restarts`.
#[test]
fn adopt_old_session_holds_a_node_that_will_vanish() {
    expect(Expected {
        scenario: sc(AdoptOldSession, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 23467,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "VIOLATED"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
        unique_states: 15289,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
        ],
        counterexamples: &[(
            "at most one holder",
            &[
                "CreateLockNode(c0)",
                "ListChildren(c0)",
                "CreateLockNode(c1)",
                "ExpireSession(c0)",
                "ListChildren(c1)",
            ],
        )],
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
        unique_states: 43002,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "VIOLATED"),
            ("fenced writes are exclusive", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "VIOLATED"),
            ("holder exists", "holds"),
            ("handoff after expiry", "holds"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "holds"),
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
        "curator × fenced, 3 clients (1 reentrant), faults expire=1,lose-reply=1,restart=1"
    );
    assert_eq!(
        Scenario::deep().label(),
        "curator × fenced, 3 clients (1 reentrant), faults expire=2,lose-reply=2,restart=1,recreate-parent=1"
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
