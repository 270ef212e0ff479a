//! The etcd model's verdicts and counterexamples that the issues behind it are about, each
//! with its twin (the fixed recipe under the same faults, or the broken one the check must
//! catch). State counts are pinned once, in `docs/results-etcd.json` (`report_fresh.rs`).

use super::protocol::*;
use super::*;
use crate::checker::pinned::reachable;
use crate::{check, Family, Report};

fn sc(variant: Variant, writes: WriteMode, guard: Guard, clients: u8, faults: &str) -> Scenario {
    Scenario::new(variant, writes)
        .with_guard(guard)
        .with_clients(clients)
        .with_faults(Faults::parse(faults).expect("faults"))
}

fn path(r: &Report<Scenario>, property: &str) -> String {
    let v = r.verdict(property);
    v.path
        .as_ref()
        .unwrap_or_else(|| panic!("{property}: no path"))
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every `always` property the model violates is one the scenario documents, and the other
/// way round; every applicable `sometimes` property is reached.
fn assert_documented(s: &Scenario) -> Report<Scenario> {
    let r = check(s);
    let mut violated: Vec<&str> = ALWAYS
        .iter()
        .copied()
        .filter(|p| !r.verdict(p).holds())
        .collect();
    let mut documented: Vec<&str> = s.documented().into_iter().map(|(p, _)| p).collect();
    violated.sort_unstable();
    documented.sort_unstable();
    assert_eq!(violated, documented, "{}", s.label());
    for p in SOMETIMES {
        if s.applies(p) {
            assert!(r.verdict(p).holds(), "{}: {p} not reached", s.label());
        }
    }
    r
}

/// The standard scenario (`lockwright check --family etcd`): etcd 3.5's Mutex with
/// lockwright's guard and guarded writes holds every property under every fault; its twin
/// with Go's session deadline (measured from the keepalive reply's arrival) does not.
#[test]
fn standard_scenario_holds_and_the_reply_arrival_deadline_does_not() {
    let std = Scenario::standard();
    assert!(std.documented().is_empty());
    assert_documented(&std);
    let session = sc(
        Variant::Etcd35,
        WriteMode::Guarded,
        Guard::Session,
        2,
        "expire=1",
    );
    let r = assert_documented(&session);
    // The session's deadline is one tick behind the server's expiry.
    assert_eq!(
        path(&r, AT_MOST_ONE_HOLDER),
        "Lock(c0) Expire(c0) Tick Tick Tick Lock(c1)"
    );
    let fixed = assert_documented(&session.with_guard(Guard::Lockwright));
    assert!(fixed.verdict(AT_MOST_ONE_HOLDER).holds());
}

/// etcd-io/etcd#11456 (Jepsen, etcd 3.4.3): the 3.4 Mutex does not re-read its key after
/// waiting, so a waiter whose lease expired meanwhile is told it holds. 3.5 answers
/// `ErrSessionExpired` instead ("lock lost reported").
#[test]
fn issue_11456_the_34_mutex_grants_a_waiter_whose_lease_expired() {
    let s34 = sc(
        Variant::Etcd34,
        WriteMode::Guarded,
        Guard::None,
        2,
        "expire=1",
    );
    let r = assert_documented(&s34);
    assert_eq!(
        path(&r, NO_GRANT_WITHOUT_A_KEY),
        "Lock(c0) Read(c0) Write(c0) Lock(c1) Unlock(c0) Expire(c1) Tick Tick Tick Find(c1)"
    );
    let s35 = assert_documented(&s34.with_variant(Variant::Etcd35));
    assert!(s35.verdict(NO_GRANT_WITHOUT_A_KEY).holds());
    assert!(s35.verdict(LOCK_LOST_REPORTED).holds());
    // Three clients: Jepsen's shape, the expired waiter and the one behind it both hold.
    let three = s34.with_clients(3);
    assert!(reachable(&three, |s| {
        s.granted_without_key
            && s.clients
                .iter()
                .filter(|c| c.pc.holding() && c.woken)
                .count()
                == 2
    }));
}

/// etcd-io/etcd#22082: a lost unlock reply retried by name deletes the same session's next
/// key, and a second client is granted beside a holder whose lease is alive.
#[test]
fn issue_22082_a_retried_unlock_by_name_deletes_the_next_key() {
    let retry = sc(
        Variant::UnlockRetryByName,
        WriteMode::Guarded,
        Guard::Lockwright,
        2,
        "lose-reply=1",
    )
    .with_cycles(2);
    let r = assert_documented(&retry);
    assert_eq!(
        path(&r, AT_MOST_ONE_LIVE_HOLDER),
        "Lock(c0) Read(c0) Write(c0) UnlockReplyLost(c0) Lock(c0) RetryDelete(c0) Lock(c1)"
    );
    // The guarded write refuses the holder whose key is gone: no update is lost.
    assert!(r.verdict(NO_LOST_UPDATE).holds());
    let once = assert_documented(&retry.with_variant(Variant::Etcd35));
    assert!(once.verdict(AT_MOST_ONE_LIVE_HOLDER).holds());
}

/// `contrib/lock`'s token, the lease id, is not ordered across leaders: after a leader change
/// a later grant writes with a smaller token, and the stale holder's write is accepted after
/// it. The create revision (etcd-3.5) is ordered.
#[test]
fn lease_ids_are_no_fencing_token() {
    let s = sc(
        Variant::LeaseIdToken,
        WriteMode::Fenced,
        Guard::Lockwright,
        2,
        "pause=1,leader-change=1",
    );
    let r = assert_documented(&s);
    assert_eq!(
        path(&r, FENCED_WRITES_ARE_EXCLUSIVE),
        "Lock(c0) Read(c0) Pause(c0) LeaderChange Tick Tick Tick Resume(c0) Lock(c1) Read(c1) Write(c1) Write(c0)"
    );
    let revision = assert_documented(&s.with_variant(Variant::Etcd35));
    assert!(revision.verdict(FENCED_WRITES_ARE_EXCLUSIVE).holds());
    // A claim does not save the lease-id token for a holder without a guard.
    let claim = s
        .with_writes(WriteMode::FencedClaim)
        .with_guard(Guard::None);
    assert!(!assert_documented(&claim)
        .verdict(FENCED_WRITES_ARE_EXCLUSIVE)
        .holds());
    let claim_rev = assert_documented(&claim.with_variant(Variant::Etcd35));
    assert!(claim_rev.verdict(FENCED_WRITES_ARE_EXCLUSIVE).holds());
    assert!(claim_rev.verdict(NO_LOST_UPDATE).holds());
}

/// The v3 lock service keeps the lease alive on its own session: a client that restarts
/// leaves its key for ever.
#[test]
fn the_lock_service_orphans_a_restarted_clients_key() {
    let s = sc(
        Variant::LockService,
        WriteMode::Guarded,
        Guard::Lockwright,
        2,
        "restart=1",
    );
    let r = assert_documented(&s);
    assert_eq!(path(&r, NO_ORPHAN_KEY), "Lock(c0) Restart(c0)");
    let go = assert_documented(&s.with_variant(Variant::Etcd35));
    assert!(go.verdict(NO_ORPHAN_KEY).holds());
    assert!(go.verdict(ACQUIRED_AFTER_CRASH).holds());
}

/// Unfenced and bare-fenced writes lose an update when a paused holder's write lands late;
/// a claim or a guarded write does not. The lost-update oracle is the count of acknowledged
/// increments, which no client computes.
#[test]
fn writes_in_flight_need_a_claim_or_a_guard() {
    for (writes, lost) in [
        (WriteMode::Unfenced, true),
        (WriteMode::Fenced, true),
        (WriteMode::FencedClaim, false),
        (WriteMode::Guarded, false),
    ] {
        let s = sc(Variant::Etcd35, writes, Guard::Lockwright, 2, "pause=1");
        let r = assert_documented(&s);
        assert_eq!(!r.verdict(NO_LOST_UPDATE).holds(), lost, "{writes}");
    }
}

/// The revision counter at its top: writes stop (the run ends) instead of wrapping; a
/// 2-bit counter is reached within two attempts.
#[test]
fn the_revision_counter_stops_at_its_top() {
    let s = sc(
        Variant::Etcd35,
        WriteMode::Guarded,
        Guard::Lockwright,
        2,
        "none",
    )
    .with_cycles(2)
    .with_revision_width(2);
    assert!(reachable(&s, |st| st.server.rev == 3
        && st.clients.iter().any(|c| c.pc != Pc::Done)));
    assert!(!reachable(&s, |st| st.server.rev > 3));
    let r = check(&s);
    assert!(ALWAYS.iter().all(|p| r.verdict(p).holds()));
}

/// The compaction fault cancels a watch created from a compacted revision: the waiter gives
/// up (deleting its key) and nothing breaks.
#[test]
fn a_compaction_cancels_a_pending_watch() {
    let s = sc(
        Variant::Etcd35,
        WriteMode::Guarded,
        Guard::Lockwright,
        2,
        "compact=1",
    );
    assert!(reachable(&s, |st| st.used.compact == 1
        && st.clients[1].attempts == 1
        && st.clients[1].pc == Pc::Done
        && st.acked == 1));
    assert_documented(&s);
}
