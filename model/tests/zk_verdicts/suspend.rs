//! Suspension: `Suspend(c)` drops c's connection while its session lives on. A create or
//! delete c had in flight stays queued at the server, which may still apply it (`ApplySent`)
//! until c reconnects to the same session (`Reconnect`: a request still queued then is
//! dropped, as ZooKeeper refuses a moved session's old requests); c's answer is
//! `ConnectionLoss` either way, and it goes on as after a lost reply. While suspended, c makes
//! no request (its resource accesses go on: the resource is not ZooKeeper).

use super::*;

use lockwright_model::zk::{Pc, Sent};

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
    expect(Expected {
        scenario,
        unique_states: 63860,
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
