//! The contract the phase-2 refinement replayer will rely on (a recorded request maps to
//! `Call(c, step, delivery)`, `Scenario::step` refuses what the model does not allow, the
//! store's answer is `Scenario::response`), and hand-written paths for the claims in
//! `docs/docstore.md` that the shortest counterexamples of the verdict table do not show.

use lockwright_model::docstore::protocol::{AT_MOST_ONE_WRITER, NO_STALE_LOCK};
use lockwright_model::docstore::store::{Source, StoreError, WriteResult};
use lockwright_model::docstore::{
    outcome_text, request_text, Action, Delivery, Faults, Pc, Scenario, State, Step, Variant,
    Writes,
};
use stateright::Model;

use Delivery::*;
use Step::*;

fn call(c: u8, step: Step) -> Action {
    Action::Call(c, step, Answered)
}

fn run(sc: &Scenario, path: &[Action]) -> State {
    let mut s = sc.init_states().remove(0);
    for &a in path {
        s = sc
            .step(&s, a)
            .unwrap_or_else(|| panic!("{a} not enabled in\n{s:?}"));
    }
    s
}

fn lock_doc(sc: &Scenario, s: &State) -> Option<Source> {
    s.locks.get(&sc.variant.lock_id()).map(|d| d.source)
}

#[test]
fn steps_follow_the_table_and_answers_come_from_the_store() {
    let sc = Scenario::new(Variant::Global, Writes::Unfenced);
    let s = run(&sc, &[call(0, CreateLock)]);
    assert_eq!(s.clients[0].pc, Pc::Holding);
    // c1's create would be refused: the replayer compares a recorded 409 with this.
    assert_eq!(
        sc.response(&s, 1, CreateLock),
        Some(Err(StoreError::VersionConflict))
    );
    let r = sc.request(&s, 1, CreateLock).unwrap();
    assert_eq!(request_text(&r), "PUT files-lock/_create/global {}");
    // Not in the table: a client never releases what it does not hold, never writes unheld.
    assert!(sc.step(&s, call(1, DeleteLock)).is_none());
    assert!(sc.step(&s, call(1, WriteData)).is_none());
    // No fault budget: no lost replies, no crash.
    assert!(sc
        .step(&s, Action::Call(0, DeleteLock, ReplyLost))
        .is_none());
    assert!(sc.step(&s, Action::Crash(0)).is_none());
    let s = sc.step(&s, call(1, CreateLock)).unwrap();
    assert_eq!(s.clients[1].pc, Pc::Idle, "refused");
    let w = sc.response(&s, 0, DeleteLock).unwrap();
    assert_eq!(outcome_text(&w, false), "200 deleted");
}

#[test]
fn anyone_who_knows_the_id_releases_someone_elses_global_lock() {
    // The blog's own warning, as a path: after a stray delete and a new holder, the first
    // holder's DELETE frees the new holder's lock while it still believes it holds.
    let sc = Scenario::new(Variant::Global, Writes::Unfenced).with_faults(Faults {
        stray_delete: 1,
        ..Faults::NONE
    });
    let s = run(
        &sc,
        &[
            call(0, CreateLock),
            Action::StrayDelete,
            call(1, CreateLock),
            call(0, DeleteLock),
        ],
    );
    assert_eq!(s.clients[1].pc, Pc::Holding, "c1 believes it holds");
    assert_eq!(lock_doc(&sc, &s), None, "but its lock is gone");
    let s = sc.step(&s, call(0, CreateLock)).unwrap();
    assert!(sc.violated(&s).contains(&AT_MOST_ONE_WRITER));
}

#[test]
fn a_reader_retrying_a_lost_acquire_reply_counts_itself_twice() {
    let sc = Scenario::new(Variant::ReadWrite, Writes::Unfenced).with_faults(Faults {
        lose_reply: 1,
        ..Faults::NONE
    });
    let s = run(
        &sc,
        &[
            Action::Call(0, UpsertLock, ReplyLost),
            call(0, UpsertLock),
            call(0, UpdateUnlock),
        ],
    );
    assert!(s.clients.iter().all(|c| c.pc == Pc::Idle));
    assert_eq!(lock_doc(&sc, &s), Some(Source::Shared { lock_count: 1 }));
    assert!(
        sc.violated(&s).contains(&NO_STALE_LOCK),
        "the writer starves"
    );
}

#[test]
fn the_document_lock_recovers_a_lost_acquire_reply() {
    let sc = Scenario::new(Variant::Document, Writes::Unfenced).with_faults(Faults {
        lose_reply: 1,
        ..Faults::NONE
    });
    let s = run(&sc, &[Action::Call(0, UpsertLock, ReplyLost)]);
    assert_eq!(s.clients[0].pc, Pc::Retrying);
    let w = sc.response(&s, 0, UpsertLock).unwrap().unwrap();
    assert_eq!(w.result, WriteResult::Noop, "same process_id: noop");
    let s = sc.step(&s, call(0, UpsertLock)).unwrap();
    assert_eq!(s.clients[0].pc, Pc::Holding);
}

#[test]
fn leased_compare_and_delete_after_a_lost_reply_cannot_free_the_next_holder() {
    let sc = Scenario::new(Variant::LeasedUpsert, Writes::Fenced).with_faults(Faults {
        lose_reply: 1,
        ..Faults::NONE
    });
    let s = run(
        &sc,
        &[
            call(0, UpsertLock),
            Action::Call(0, CompareAndDelete, ReplyLost),
            call(1, UpsertLock),
        ],
    );
    assert_eq!(s.clients[0].pc, Pc::Releasing);
    assert_eq!(
        sc.response(&s, 0, CompareAndDelete),
        Some(Err(StoreError::VersionConflict))
    );
    let s = sc.step(&s, call(0, CompareAndDelete)).unwrap();
    assert_eq!(s.clients[0].pc, Pc::Idle);
    assert_eq!(s.clients[1].pc, Pc::Holding);
    assert!(lock_doc(&sc, &s).is_some(), "c1's lease stays");
    assert!(sc.violated(&s).is_empty());
}

#[test]
fn a_lost_lease_acquire_reply_is_retried_and_rewrites_the_owners_lease() {
    let sc = Scenario::new(Variant::LeasedUpsert, Writes::Fenced).with_faults(Faults {
        lose_reply: 1,
        ..Faults::NONE
    });
    let s = run(&sc, &[Action::Call(0, UpsertLock, ReplyLost), Action::Tick]);
    assert_eq!(s.clients[0].pc, Pc::Retrying);
    assert_eq!(s.clients[0].deadline, Some(1), "counts from the first send");
    let w = sc.response(&s, 0, UpsertLock).unwrap().unwrap();
    assert_eq!(w.result, WriteResult::Updated, "a write, not a noop");
    let s = sc.step(&s, call(0, UpsertLock)).unwrap();
    assert_eq!(s.clients[0].pc, Pc::Holding);
    // Its token is its lease document's _seq_no/_primary_term (the model renumbers sequence
    // numbers densely after each step, so compare with the document, not with `w`).
    let doc = s.locks.get(&sc.variant.lock_id()).unwrap();
    assert_eq!(s.clients[0].token, Some(doc.token()));
    // The document's lease outlasts the client's own deadline.
    match lock_doc(&sc, &s) {
        Some(Source::Lease { expires, .. }) => assert!(expires >= 1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_clock_never_passes_a_writers_lease_except_by_a_pause() {
    let sc = Scenario::new(Variant::LeasedUpsert, Writes::Unfenced).with_lease(1);
    let s = run(
        &sc,
        &[call(0, UpsertLock), call(0, ReadData), call(0, CheckLease)],
    );
    assert_eq!(s.clients[0].pc, Pc::Writing);
    assert!(sc.step(&s, Action::Tick).is_none(), "timing assumption");
    assert!(sc.step(&s, Action::Pause(0)).is_none(), "no pause budget");
    let s = run(&sc, &[call(0, UpsertLock), call(0, ReadData), Action::Tick]);
    let s = sc.step(&s, call(0, CheckLease)).unwrap();
    assert_eq!(
        s.clients[0].pc,
        Pc::Idle,
        "the lease passed before the check"
    );
}

/// docs/docstore.md §8: the lost update of `fenced` writes, step by step — judged from the
/// grants (the ghost sessions), while the tokens say c0's is the older one and the fence
/// accepts both writes; then the same schedule with claim-at-acquire, where c1's claim makes
/// the fence refuse c0's late write.
#[test]
fn a_paused_holders_late_write_is_lost_with_fenced_and_refused_with_fenced_claim() {
    use lockwright_model::docstore::protocol::NO_LOST_UPDATE;
    use lockwright_model::docstore::Session;
    let sc = Scenario::new(Variant::LeasedUpsert, Writes::Fenced).with_faults(Faults {
        pause: 1,
        ..Faults::NONE
    });
    let s = run(
        &sc,
        &[
            call(0, UpsertLock),
            call(0, ReadData),
            call(0, CheckLease),
            Action::Pause(0),
            call(1, UpsertLock),
            call(1, ReadData),
        ],
    );
    let (t0, t1) = (s.clients[0].token.unwrap(), s.clients[1].token.unwrap());
    assert!(t0 < t1, "c1 holds the newer token: {t0} < {t1}");
    let path = [
        call(0, UpsertLock),
        call(0, ReadData),
        call(0, CheckLease),
        Action::Pause(0),
        call(1, UpsertLock),
        call(1, ReadData),
        call(0, WriteData),
    ];
    let s = run(&sc, &path);
    assert!(sc
        .response(&run(&sc, &path[..6]), 0, WriteData)
        .unwrap()
        .is_ok());
    assert_eq!(
        s.clients[1].session,
        Session::Overlapped,
        "c0's write lands in c1's session"
    );
    assert!(
        sc.violated(&s).is_empty(),
        "nothing lost yet: c1 has not written"
    );
    let s = run(
        &sc,
        &[&path[..], &[call(1, CheckLease), call(1, WriteData)]].concat(),
    );
    assert_eq!(
        sc.violated(&s),
        vec![NO_LOST_UPDATE],
        "c1's write is accepted too"
    );

    let sc = sc.with_writes(Writes::FencedClaim);
    let path = [
        call(0, UpsertLock),
        call(0, ClaimData),
        call(0, ReadData),
        call(0, CheckLease),
        Action::Pause(0),
        call(1, UpsertLock),
        call(1, ClaimData),
        call(1, ReadData),
    ];
    let s = run(&sc, &path);
    assert_eq!(
        sc.response(&s, 0, WriteData),
        Some(Err(StoreError::Script(
            lockwright_model::docstore::store::ScriptError::Explain("stale fencing token")
        ))),
        "the claim fenced the document before c1 read it"
    );
    let s = sc.step(&s, call(0, WriteData)).unwrap();
    assert_eq!(s.clients[0].pc, Pc::Releasing);
    assert_eq!(s.clients[1].session, Session::Open);
}

#[test]
fn names_and_options_round_trip() {
    assert_eq!(call(1, CreateLock).to_string(), "CreateLock(c1)");
    assert_eq!(
        Action::Call(0, DeleteLock, ReplyLost).to_string(),
        "DeleteLock(c0, reply lost)"
    );
    assert_eq!(
        Action::Call(0, UpsertLock, RequestLost).to_string(),
        "UpsertLock(c0, request lost)"
    );
    assert_eq!(Action::Pause(1).to_string(), "Pause(c1)");
    assert_eq!(Action::StrayDelete.to_string(), "StrayDelete");
    assert_eq!(call(1, CreateLock).client(), Some(1));
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        assert_eq!(v.to_string(), v.name());
    }
    for w in Writes::ALL {
        assert_eq!(Writes::from_name(w.name()), Some(w));
    }
    let f =
        Faults::parse("crash=2,restart=2,stray-delete=1,lose-reply=1,pause=1,failover=1").unwrap();
    assert_eq!(
        f.to_string(),
        "crash=2,restart=2,stray-delete=1,lose-reply=1,pause=1,failover=1"
    );
    assert_eq!(Faults::parse("none").unwrap(), Faults::NONE);
    assert_eq!(Faults::NONE.to_string(), "none");
    assert!(Faults::parse("crash=x").is_err());
    assert!(Faults::parse("unlink=1").is_err());
    assert_eq!(
        Scenario::new(Variant::ReadWrite, Writes::Unfenced)
            .with_clients(4)
            .label(),
        "read-write × unfenced, 4 clients (2 readers, 2 writers), faults none"
    );
    assert_eq!(
        Scenario::deep().label(),
        "leased × fenced-claim, 3 clients, lease 2 ticks, faults \
         crash=2,restart=2,stray-delete=1,lose-reply=1,pause=1,failover=1"
    );
}
