//! Suspension: `Suspend(c)` drops c's connection while its session lives on. A create or
//! delete c had in flight stays queued at the server, which may still apply it (`ApplySent`)
//! until c reconnects to the same session (`Reconnect`: a request still queued then is
//! dropped, as ZooKeeper refuses a moved session's old requests); c's answer is
//! `ConnectionLoss` either way, and it goes on as after a lost reply. While suspended, c makes
//! no request (its resource accesses go on: the resource is not ZooKeeper). The last test
//! shows `lose-reply` reaching every request kind.

use super::*;

use lockwright_model::zk::{Cleanup, Pc, Sent};

/// The "Done" row: `curator × fenced`, 2 clients, faults
/// `abandon=1,suspend=1,lose-reply=1,expire=1`. "no orphan node" and "at most one live holder"
/// hold; the expiry's "at most one holder" and the bare fence's lost update are documented
/// (the same paths as `cancel.rs`). Twin: `no_protection_orphans_a_create_applied_while_suspended`.
#[test]
fn curator_survives_suspension_dropped_futures_lost_replies_and_expiry() {
    let scenario = sc(Curator, Fenced, "abandon=1,suspend=1,lose-reply=1,expire=1");
    // The suspension is not vacuous: a create the server applied while its client was
    // disconnected (the node exists in the client's live session, the client does not know),
    // and a holder that is suspended.
    assert!(reachable(&scenario, |s| s.clients.iter().enumerate().any(
        |(c, cl)| cl.suspended
            && cl.awaiting
            && cl.pc == Pc::Idle
            && s.server
                .children()
                .iter()
                .any(|z| z.owner == s.session(c as u8))
    )));
    assert!(reachable(&scenario, |s| s
        .clients
        .iter()
        .any(|cl| cl.suspended && cl.pc.believes())));
    // An acquire dropped while its create is queued behind the dropped connection: its
    // cleanup search waits for the reconnect, the create still able to land first.
    assert!(reachable(&scenario, |s| s
        .clients
        .iter()
        .any(|cl| cl.suspended
            && cl.cleanup == Some(Cleanup::Search)
            && matches!(cl.queued, Some(Sent::Create(_))))));
    expect(Expected {
        scenario,
        unique_states: 230236,
        verdicts: super::cancel::verdicts("holds"),
        counterexamples: &super::cancel::EXPIRY,
    });
}

/// Suspension alone, Curator's recipe: after the reconnect, the search finds the create the
/// server applied meanwhile (a state where the client searches with its node there is
/// reachable), and nothing is left behind. Twin:
/// `no_protection_orphans_a_create_applied_while_suspended`.
#[test]
fn curator_finds_a_create_applied_while_suspended() {
    let scenario = sc(Curator, Fenced, "suspend=1");
    assert!(reachable(&scenario, |s| s.clients.iter().enumerate().any(
        |(c, cl)| !cl.suspended
            && cl.pc == Pc::CreateLost
            && s.server
                .children()
                .iter()
                .any(|z| z.owner == s.session(c as u8))
    )));
    // A delete queued at the drop and applied later is reachable too.
    let release = sc(Curator, Fenced, "suspend=1,lose-reply=1");
    assert!(reachable(&release, |s| s.clients.iter().any(|cl| cl
        .suspended
        && matches!(cl.queued, Some(Sent::Delete(_))))));
    expect(Expected {
        scenario,
        unique_states: 815,
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

/// The twin: a recipe that creates again after a `ConnectionLoss` without searching (plain
/// names, CURATOR-79) orphans the create the server applied while the client was
/// disconnected.
#[test]
fn no_protection_orphans_a_create_applied_while_suspended() {
    expect(Expected {
        scenario: sc(NoProtection, Fenced, "suspend=1"),
        unique_states: 1018,
        verdicts: [
            ("at most one holder", "holds"),
            ("at most one live holder", "holds"),
            ("fenced writes are exclusive", "holds"),
            ("no lost update", "holds"),
            ("no orphan node", "VIOLATED"),
            ("grants in request order", "holds"),
            ("holder exists", "holds"),
            ("handoff after expiry", "NOT FOUND"),
            ("contention seen", "holds"),
            ("waiter woken by watch", "holds"),
            ("reentrant hold", "holds"),
            ("lock lost reported", "NOT FOUND"),
            ("update completed", "holds"),
        ],
        counterexamples: &[("no orphan node", &["Suspend(c0)", "ApplySent(c0)"])],
    });
}

/// `lose-reply` covers every request kind: a create and a delete (applied or not, as before),
/// and now the protected search, the listing, the watch's `getData` (applied: the watch is
/// set), `check-then-write`'s `exists`, and the guarded `multi` (applied: written). Each path
/// below is replayed through `Scenario::step`, which refuses a step the model does not allow.
#[test]
fn lose_reply_covers_every_request_kind() {
    use lockwright_model::zk::Action::{self, *};
    fn run(sc: &Scenario, path: &[Action]) -> lockwright_model::zk::State {
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, *a)
                .unwrap_or_else(|| panic!("{}: {a} is enabled", sc.label()));
        }
        s
    }
    let fenced = sc(Curator, Fenced, "lose-reply=2");
    // The search after a lost create: asked again.
    let s = run(&fenced, &[LoseReply(0, true), LoseReply(0, false)]);
    assert_eq!(s.clients[0].pc, Pc::CreateLost);
    // The listing: asked again.
    let s = run(&fenced, &[CreateLockNode(0), LoseReply(0, false)]);
    assert_eq!(s.clients[0].pc, Pc::Created);
    // The watch: set though the answer was lost; the waiter asks again.
    let s = run(
        &fenced,
        &[
            CreateLockNode(0),
            ListChildren(0),
            CreateLockNode(1),
            ListChildren(1),
            LoseReply(1, true),
        ],
    );
    assert_eq!(s.clients[1].pc, Pc::MustWatch);
    assert_eq!(s.server.watches().len(), 1);
    // check-then-write's `exists`: asked again before the write.
    let check = sc(Curator, CheckThenWrite, "lose-reply=1");
    let s = run(
        &check,
        &[
            CreateLockNode(0),
            ListChildren(0),
            Read(0),
            LoseReply(0, false),
        ],
    );
    assert_eq!(s.clients[0].pc, Pc::Updating);
    // The guarded `multi`: applied (the resource has the write) or not; the update ends.
    let guarded = sc(Curator, Guarded, "lose-reply=1");
    let path = [CreateLockNode(0), ListChildren(0), Read(0)];
    let applied = run(&guarded, &[&path[..], &[LoseReply(0, true)]].concat());
    let not = run(&guarded, &[&path[..], &[LoseReply(0, false)]].concat());
    assert_eq!(
        (applied.clients[0].pc, not.clients[0].pc),
        (Pc::Holding, Pc::Holding)
    );
    assert_eq!(
        (applied.resource.max_grant, not.resource.max_grant),
        (Some(0), None)
    );
    // No fault budget left, no lost reply.
    assert!(check.step(&s, LoseReply(0, false)).is_none());
}
