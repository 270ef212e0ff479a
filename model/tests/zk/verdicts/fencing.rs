//! Fencing against lost updates: plain `fenced` writes (czxid tokens) keep stale writes out but
//! lose an update under expiry; claim-at-acquire (`fenced-claim`: the holder writes its token right
//! after the grant, before its first read) loses none, with every fault, a re-created parent and
//! Curator's never-revoking guard included. `docs/zookeeper.md`, "Fencing and lost updates".

use super::*;

/// The lost update plain `fenced` writes admit (two clients, every fault but a re-created parent):
/// c1 granted (token czxid 2) reads; c0 (token czxid 1, its session expired, it has not heard)
/// writes — accepted, nobody has written token 2 yet; c1 writes — accepted, computed from a state
/// c0's write then changed. "fenced writes are exclusive" holds: the resource never takes a token
/// below one it took. Fix: `curator_fenced_claim_keeps_every_update` (this test is its twin).
#[test]
fn curator_fenced_loses_an_update_under_expiry() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 31852,
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

/// Claim-at-acquire keeps every update (two clients, every fault but a re-created parent): once c1
/// has claimed with token czxid 2, the resource refuses c0's token 1, so c0's late write cannot land
/// between c1's read and c1's write. Twin: `curator_fenced_loses_an_update_under_expiry`.
#[test]
fn curator_fenced_claim_keeps_every_update() {
    expect(Expected {
        scenario: sc(Curator, FencedClaim, "expire=1,lose-reply=1,restart=1"),
        unique_states: 22658,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
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

/// Claim-at-acquire with every fault, a re-created parent included (czxid tokens never restart).
/// Twin: `curator_sequence_fencing_fails_after_a_recreated_parent`.
#[test]
fn curator_fenced_claim_survives_a_recreated_parent() {
    expect(Expected {
        scenario: sc(
            Curator,
            FencedClaim,
            "expire=1,lose-reply=1,restart=1,recreate-parent=1",
        ),
        unique_states: 54691,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
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

/// Claim-at-acquire with Curator's own guard, which never revokes a hold: the believing holder's
/// claim or write is refused once a later holder has claimed. Twin:
/// `curator_guard_keeps_believing_and_fencing_still_holds` (no claim: an update is lost).
#[test]
fn curator_guard_with_claim_keeps_every_update() {
    expect(Expected {
        scenario: sc(Curator, FencedClaim, "expire=1,lose-reply=1,restart=1")
            .with_guard(Guard::Curator),
        unique_states: 26465,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
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
