//! Curator's recipe: the standard scenario, session expiry, lost replies, restarts, and the
//! write modes (unfenced, check-then-write, guarded multi, czxid and sequence fencing). Plain
//! `fenced` against `fenced-claim` is in `fencing.rs`.

use super::*;

/// The standard scenario (`Scenario::standard()`, 3 clients, c0 reentrant): Curator's recipe with czxid
/// fencing and claim-at-acquire (`fenced-claim`) keeps every property but "at most one holder" under
/// expiry, lost replies and restarts, "no lost update" included. A holder whose session expired still
/// believes it holds until it hears of it (Curator tech note 10): the pinned counterexample. Twins:
/// `curator_unfenced_accepts_a_stale_write`, `curator_check_then_write_accepts_a_stale_write`, and
/// for "no lost update" `curator_fenced_loses_an_update_under_expiry` (no claim).
#[test]
fn standard_scenario_curator_fenced_claim_holds_all_but_at_most_one_holder() {
    expect(Expected {
        scenario: Scenario::standard(),
        unique_states: 396936,
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

/// Without faults Curator's recipe keeps every `always` property, including "at most one holder";
/// no session expires, so "handoff after expiry" and "lock lost reported" are not reachable. Twin:
/// `curator_session_expiry_makes_two_holders`.
#[test]
fn curator_without_faults_keeps_one_holder() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "none"),
        unique_states: 170,
        verdicts: [
            ("at most one holder", "holds"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("no orphan node", "holds"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "NOT FOUND"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "NOT FOUND"),
            ("update completed", "holds"),
        ],
        counterexamples: &[],
    });
}

/// One session expiry is enough for two clients to believe they hold the lock (Curator tech note
/// 10; CURATOR-206 is the partition version): c0's session expires while it holds, the server
/// deletes its node, c1 is granted before c0 hears of the expiry. The same expiry loses an update
/// under plain `fenced` writes: c0 read before it, c1 reads after its grant, c0's write is accepted
/// (nobody has written a higher token yet), then c1's, computed from the state c0 changed.
#[test]
fn curator_session_expiry_makes_two_holders() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "expire=1"),
        unique_states: 1255,
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

/// Curator's own mutex never revokes a hold (guard `curator`): a holder that learned its session
/// expired keeps believing. The verdicts are those of the lockwright guard
/// (`curator_fenced_loses_an_update_under_expiry`): the believing holder's stale writes are fenced
/// off (but an update is lost as there), and its hold session is dead, so it is not a live holder.
/// Only the state count differs.
#[test]
fn curator_guard_keeps_believing_and_fencing_still_holds() {
    expect(Expected {
        scenario: sc(Curator, Fenced, "expire=1,lose-reply=1,restart=1").with_guard(Guard::Curator),
        unique_states: 44340,
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

/// Unfenced writes: after c0's session expired and c1 was granted and wrote, c0 (paused, it has not
/// heard) writes too and the resource accepts it; the update of whichever writes second is lost.
#[test]
fn curator_unfenced_accepts_a_stale_write() {
    expect(Expected {
        scenario: sc(Curator, Unfenced, "expire=1,lose-reply=1,restart=1"),
        unique_states: 32797,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
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
                "fenced writes are exclusive",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "Read(c0)",
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "Write(c1)",
                    "Write(c0)",
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
                    "Write(c0)",
                    "Write(c1)",
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
        unique_states: 40684,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
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
                "fenced writes are exclusive",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "Read(c0)",
                    "CheckLockNode(c0)",
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "CheckLockNode(c1)",
                    "Write(c1)",
                    "Write(c0)",
                ],
            ),
            (
                "no lost update",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "Read(c0)",
                    "CheckLockNode(c0)",
                    "CreateLockNode(c1)",
                    "ExpireSession(c0)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "Write(c0)",
                    "CheckLockNode(c1)",
                    "Write(c1)",
                ],
            ),
        ],
    });
}

/// A ZooKeeper `multi` that checks the lock node and writes atomically keeps writes exclusive and
/// loses no update (the node of an expired holder is gone before anyone else is granted, so its
/// `multi` fails). Twin: `curator_unfenced_accepts_a_stale_write`.
#[test]
fn curator_guarded_multi_keeps_writes_exclusive() {
    expect(Expected {
        scenario: sc(Curator, Guarded, "expire=1,lose-reply=1,restart=1"),
        unique_states: 30101,
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

/// czxid tokens survive a re-created parent: zxids never restart (writes stay exclusive; without a
/// claim an update is still lost, as in `curator_fenced_loses_an_update_under_expiry`). Twin:
/// `curator_sequence_fencing_fails_after_a_recreated_parent`.
#[test]
fn curator_czxid_fencing_survives_a_recreated_parent() {
    expect(Expected {
        scenario: sc(
            Curator,
            Fenced,
            "expire=1,lose-reply=1,restart=1,recreate-parent=1",
        ),
        unique_states: 79226,
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
        unique_states: 127398,
        verdicts: [
            ("at most one holder", "VIOLATED"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "VIOLATED"),
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
                "fenced writes are exclusive",
                &[
                    "CreateLockNode(c0)",
                    "ListChildren(c0)",
                    "Read(c0)",
                    "ExpireSession(c0)",
                    "RecreateParent",
                    "CreateLockNode(c1)",
                    "ListChildren(c1)",
                    "Read(c1)",
                    "FencedWrite(c1)",
                    "FencedWrite(c0)",
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
