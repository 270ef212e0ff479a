//! shuttle, randomized: the real ZooKeeper mutex (`lockwright::zk::ZkMutex`, the `curator`
//! recipe) on the simulated ZooKeeper (`lockwright_testkit::zk`, the model's server semantics),
//! under shuttle's random and PCT schedulers with fixed seeds, once per write mode the guard
//! offers: `guarded_write` (the model's `guarded`), the claim of a fenced resource and the
//! token on every write through the `Claimed` handle (`fenced-claim`) and `ensure_valid`
//! before a plain write (`check-then-write`). Each hold's work is updates: a read, then a
//! write; "no lost update" is enforced wherever the model proves it (the claim path and
//! guarded writes; its unclaimed twin is in `zk_sim/shuttle_defects.rs`). Every step of every execution is
//! replayed through the Stateright model as it is recorded (`zk::refine`): it must be a model
//! step, the simulated and the model's server must keep the same shape, and the enforced
//! `always` properties must hold on every state.
//!
//! Enforced: every `always` property the model checker proves for the workload's recipe and
//! fault budgets (checked first, in each test). "at most one holder" is violated by design
//! under session expiry (Curator's tech note 10: a holder hears of its expiry only later), and
//! `check-then-write` lets a stale write through ("fenced writes are exclusive": the pause
//! lands between the check and the write) and so loses updates ("no lost update") — the model
//! says so, and so the replay does not enforce those there.
//!
//! Budgets: `STANDARD_ITERATIONS` (3,000) executions per scheduler in plain `cargo test`; `LOCKWRIGHT_DEEP=1`
//! raises them to `DEEP_ITERATIONS` (100,000; both in `lockwright_testkit::zk::suite`):
//!
//! ```text
//! LOCKWRIGHT_DEEP=1 cargo test -p lockwright-checks --test zk_sim shuttle_mutex:: -- --nocapture
//! ```
//!
//! A failure prints shuttle's replay string (`failing schedule: "..."`) and the recording.

use lockwright_model::zk::protocol::{
    AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, FENCED_WRITES_ARE_EXCLUSIVE,
    GRANTS_IN_REQUEST_ORDER, NO_LOST_UPDATE, NO_ORPHAN_NODE,
};
use lockwright_testkit::zk::suite::{explore, iterations, proved, Coverage, PCT_DEPTH};
use lockwright_testkit::zk::{Fault, Workload, Writes};

/// Two clients (c0 re-entrant), two rounds of two writes each; c1's session expires, each
/// client loses one reply (c0's applied, c1's not), c0 restarts and its abandoned session is
/// timed out later.
fn every_fault(name: &'static str, writes: Writes) -> Workload {
    Workload::curator(name, writes, 2).with_faults(vec![
        Fault::LoseReply(0, true),
        Fault::Expire(1),
        Fault::Restart(0),
        Fault::LoseReply(1, false),
        Fault::ExpireOld(0),
    ])
}

fn assert_seen(what: &[(&str, &std::sync::atomic::AtomicUsize)]) {
    for (name, c) in what {
        assert!(Coverage::get(c) > 0, "no execution saw {name}");
    }
}

/// Without faults, three clients: every `always` property holds, "at most one holder"
/// included.
#[test]
fn curator_guarded_without_faults_keeps_every_property() {
    let w = Workload::curator("curator × guarded, no faults", Writes::Guarded, 3);
    let enforce = proved(&w, &[]);
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0001,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("contention", &cov.contention),
        ("a watch event", &cov.watch_events),
        ("a re-entry", &cov.reentries),
    ]);
}

/// `guarded_write` under every fault but a re-created parent: no update is lost.
#[test]
fn curator_guarded_refines_under_expiry_lost_replies_and_restarts() {
    let w = every_fault("curator × guarded, every fault", Writes::Guarded);
    let enforce = proved(&w, &[AT_MOST_ONE_HOLDER]);
    assert!(enforce.contains(&NO_LOST_UPDATE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0002,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("contention", &cov.contention),
        ("an expiry", &cov.expiries),
        ("a lost reply", &cov.lost_replies),
        ("a restart", &cov.restarts),
        ("an old session expired", &cov.old_sessions_expired),
        ("a lock lost", &cov.locks_lost),
    ]);
}

/// The claim path (`ZkGuard::claim`, then reads and writes through `Claimed`) under every
/// fault, a re-created parent included (czxid tokens survive it: zxids never restart): no
/// stale write and no lost update on any run. Its unclaimed twin, which loses an update, is
/// `replay_unclaimed_fence_loses_an_update` in `zk_sim/shuttle_defects.rs`.
#[test]
fn curator_fenced_claim_refines_under_every_fault() {
    let mut w = every_fault("curator × fenced-claim, every fault", Writes::FencedClaim);
    w.faults.push(Fault::RecreateParent);
    let enforce = proved(&w, &[AT_MOST_ONE_HOLDER]);
    assert!(enforce.contains(&FENCED_WRITES_ARE_EXCLUSIVE) && enforce.contains(&NO_LOST_UPDATE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0003,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("an expiry", &cov.expiries),
        ("a lost reply", &cov.lost_replies),
        ("a restart", &cov.restarts),
        ("a re-created parent", &cov.parents_recreated),
        ("a retry pause ended by the simulated clock", &cov.ticks),
        ("a refused stale token", &cov.fenced_rejected),
        ("a refused claim", &cov.claims_refused),
        ("an update", &cov.updates),
    ]);
}

/// `ensure_valid` then a plain write, under expiry and lost replies (no restart: a restart
/// between the check and the write is the model's lock loss, which the plain write cannot
/// see — the workload would write where the model's client cannot). The model says the
/// check does not keep writes exclusive; the replay enforces what it proves.
#[test]
fn curator_ensure_valid_refines_under_expiry_and_lost_replies() {
    let w = Workload::curator(
        "curator × ensure_valid, expiry and lost replies",
        Writes::EnsureValid,
        2,
    )
    .with_faults(vec![
        Fault::LoseReply(0, true),
        Fault::Expire(1),
        Fault::Expire(0),
        Fault::LoseReply(1, false),
    ]);
    let enforce = proved(
        &w,
        &[
            AT_MOST_ONE_HOLDER,
            FENCED_WRITES_ARE_EXCLUSIVE,
            NO_LOST_UPDATE,
        ],
    );
    assert_eq!(
        enforce,
        [
            AT_MOST_ONE_LIVE_HOLDER,
            NO_ORPHAN_NODE,
            GRANTS_IN_REQUEST_ORDER
        ]
    );
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0004,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("an expiry", &cov.expiries),
        ("a lost reply", &cov.lost_replies),
        ("a lock lost", &cov.locks_lost),
    ]);
}

/// The fixed twin of `abandon-without-delete`: a listing shows c0 its own node under a name it
/// does not read as a lock node (the server's misread fault, the model's `MisreadOwnNode`), with
/// a lost reply beside it. The recipe deletes that node by the name it was shown before it
/// starts over, so "no orphan node" holds on every run (the broken twin is
/// `replay_abandon_without_delete_leaves_the_node` in `zk_sim/shuttle_defects.rs`).
#[test]
fn curator_deletes_a_node_whose_name_it_misread() {
    let w = Workload::curator("curator × fenced-claim, misread", Writes::FencedClaim, 2)
        .with_faults(vec![Fault::Misread(0), Fault::LoseReply(0, false)]);
    let enforce = proved(&w, &[]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0005,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("a misread", &cov.misreads),
        ("a lost reply", &cov.lost_replies),
        ("contention", &cov.contention),
    ]);
}

/// The fixed twin of `drop-own-on-session-swap`: `c0` and `c1` are two mutexes sharing ONE
/// simulated client, whose session expires; whichever mutex learns it renews the session, the
/// other is told at its next look (`NoticeSessionChange`), and may have created its node in the
/// renewed session meanwhile. The recipe keeps a node owned by the session it now runs, so "no
/// orphan node" holds on every run (the broken twin is
/// `replay_drop_own_on_session_swap_orphans_its_node` in `zk_sim/shuttle_defects.rs`). The
/// expiry's "at most one holder" is the model's verdict here as everywhere.
#[test]
fn curator_shared_client_keeps_a_node_made_in_the_renewed_session() {
    let w = Workload::curator(
        "curator × fenced-claim, shared client, expiry",
        Writes::FencedClaim,
        2,
    )
    .with_reenter(false)
    .with_shared_client(true)
    .with_faults(vec![Fault::Expire(0)]);
    let enforce = proved(&w, &[AT_MOST_ONE_HOLDER]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0006,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("an expiry", &cov.expiries),
        ("a renewal noticed by the other mutex", &cov.session_swaps),
        ("contention", &cov.contention),
    ]);
}

/// The fixed twin of `search-without-sync`: c0's create is applied and its reply lost, and the
/// server would answer c0's next search from data without c0's writes (the model's `lag`). The
/// recipe syncs before the search, so the search finds the node and "no orphan node" holds on
/// every run (the broken twin is `replay_search_without_sync_orphans_the_first_node` in
/// `zk_sim/shuttle_defects.rs`).
#[test]
fn curator_syncs_before_the_search_after_a_lost_create() {
    let w = Workload::curator(
        "curator × fenced-claim, lost create and lag",
        Writes::FencedClaim,
        2,
    )
    .with_faults(vec![Fault::LoseReply(0, true), Fault::Lag(0)]);
    let enforce = proved(&w, &[]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0007,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("a lost reply", &cov.lost_replies),
        ("a sync", &cov.syncs),
        ("contention", &cov.contention),
    ]);
    assert_eq!(Coverage::get(&cov.lagged), 0, "a synced search never lags");
}

/// The fixed twin of `release-cancel-unsafe`: c0's release loses its delete reply and the
/// caller drops the `release()` future right there (the model's `Abandon`). The delete runs
/// in a task of its own and goes on, so "no orphan node" holds on every run (the broken twin
/// is `replay_release_cancel_unsafe_leaves_the_node` in `zk_sim/shuttle_defects.rs`).
#[test]
fn curator_release_dropped_after_a_lost_reply_still_deletes() {
    let w = Workload::curator(
        "curator × fenced-claim, a release dropped after a lost reply",
        Writes::FencedClaim,
        2,
    )
    .with_faults(vec![Fault::LoseReply(0, false)])
    .with_dropped_release(0);
    let enforce = proved(&w, &[]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0008,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("a lost reply", &cov.lost_replies),
        ("a dropped release", &cov.abandoned),
        ("contention", &cov.contention),
    ]);
}

/// The fixed twin of `give-up-cancel-unsafe`: c1's caller drops its `acquire()` while it waits
/// for its predecessor (the model's `Abandon` at `Waiting`), with a lost reply beside it. The
/// attempt hands its node to a cleanup task as it is dropped, so "no orphan node" holds on
/// every run (the broken twin is `replay_give_up_cancel_unsafe_leaves_the_node` in
/// `zk_sim/shuttle_defects.rs`).
#[test]
fn curator_acquire_dropped_while_waiting_still_deletes() {
    let w = Workload::curator(
        "curator × fenced-claim, an acquire dropped while it waits",
        Writes::FencedClaim,
        2,
    )
    .with_faults(vec![Fault::LoseReply(1, false)])
    .with_dropped_acquire(1);
    let enforce = proved(&w, &[]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0009,
        iterations(),
        PCT_DEPTH,
    );
    assert_seen(&[
        ("a lost reply", &cov.lost_replies),
        ("a dropped acquire", &cov.acquires_dropped),
    ]);
}
