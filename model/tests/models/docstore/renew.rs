//! `RenewLease` (issue #35, item 3): a renewal extends the lease on the server and keeps the
//! fencing token, so a claimed session goes on after it. Paths through the model, judged by
//! the store's documents and the ghost session, not by the client's own token.

use lockwright_model::docstore::protocol::DATA_ID;
use lockwright_model::docstore::{
    Action, Delivery, Event, Pc, Scenario, State, Step, Variant, Writes,
};
use stateright::Model;

use Step::*;

fn call(c: u8, step: Step) -> Action {
    Action::Call(c, step, Delivery::Answered)
}

fn run(sc: &Scenario, s: State, path: &[Action]) -> State {
    path.iter().fold(s, |s, &a| {
        sc.step(&s, a)
            .unwrap_or_else(|| panic!("{a} not enabled in\n{s:?}"))
    })
}

fn scenario() -> Scenario {
    Scenario::new(Variant::Leased, Writes::FencedClaim)
}

#[test]
fn a_renewed_claimed_session_reads_and_writes_on() {
    let sc = scenario();
    let s = sc.init_states().remove(0);
    let s = run(
        &sc,
        s,
        &[call(0, UpdateLock), call(0, ClaimData), call(0, VerifyLock)],
    );
    let token = s.clients[0].token;
    let s = run(&sc, s, &[Action::Tick, call(0, RenewLease)]);
    assert_eq!(
        s.clients[0].token, token,
        "the fencing token stays the acquire's"
    );
    assert_eq!(
        s.clients[0].deadline,
        Some(sc.lease),
        "the lease runs from the renewal"
    );
    let lock = s.locks.get(&"1").expect("the lock document");
    assert_ne!(
        Some(lock.token()),
        token,
        "the renewal is a write of the lock document"
    );
    // The session goes on: the read finds the claimed token in the fence; the write lands.
    let s = run(&sc, s, &[call(0, ReadData)]);
    assert_eq!(s.clients[0].pc, Pc::Computing);
    let s = run(&sc, s, &[call(0, CheckLease), call(0, WriteData)]);
    assert_eq!(
        s.written, s.clients[0].epoch,
        "the data document accepted the write"
    );
    assert_eq!(
        s.files.get(&DATA_ID).and_then(|d| d.source.fence()),
        token,
        "the fence is still the claim"
    );
    // The release is conditioned on the renewal's version: the lease is free at once.
    let s = run(&sc, s, &[call(0, ReleaseLease)]);
    assert_eq!(s.clients[0].pc, Pc::Idle);
    let s = run(&sc, s, &[call(1, UpdateLock)]);
    assert_eq!(s.clients[1].pc, Pc::Claiming, "c1 acquires at once");
}

/// Twin: a renewal that made its own write the token (the client before the fix) — the
/// session's next read no longer finds the token in the claimed fence and gives the lock up.
#[test]
fn a_renewal_that_moves_the_token_loses_the_claimed_session() {
    let sc = scenario();
    let s = sc.init_states().remove(0);
    let mut s = run(
        &sc,
        s,
        &[
            call(0, UpdateLock),
            call(0, ClaimData),
            call(0, VerifyLock),
            call(0, RenewLease),
        ],
    );
    s.clients[0].token = s.clients[0].renewed;
    let s = run(&sc, s, &[call(0, ReadData)]);
    assert_eq!(s.clients[0].pc, Pc::Releasing, "the read gives the lock up");
}

#[test]
fn a_renewal_keeps_others_out_past_the_first_lease() {
    let sc = scenario();
    let acquire = [call(0, UpdateLock), call(0, ClaimData), call(0, VerifyLock)];
    let s = run(&sc, sc.init_states().remove(0), &acquire);
    let renewed = run(
        &sc,
        s.clone(),
        &[Action::Tick, call(0, RenewLease), Action::Tick],
    );
    let after = run(&sc, renewed, &[call(1, UpdateLock)]);
    assert_eq!(after.clients[1].pc, Pc::Idle);
    assert_eq!(
        after.last,
        Event::Refused,
        "held: the renewed lease has not passed"
    );
    // Twin: the same two ticks without the renewal: the lease has passed and c1 acquires.
    let after = run(&sc, s, &[Action::Tick, Action::Tick, call(1, UpdateLock)]);
    assert_eq!(after.clients[1].pc, Pc::Claiming);
    // A lapsed holder cannot renew: the step is not enabled.
    assert!(sc.step(&after, call(0, RenewLease)).is_none());
}
