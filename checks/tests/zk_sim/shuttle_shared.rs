//! shuttle, randomized: two mutexes (`c0`, `c1`) of ONE simulated ZooKeeper client (the
//! model's `--shared-client`) under an expiry AND a lost reply: the case the model found this
//! round (docs/zookeeper.md §9, rows 31–32 of docs/results-zk.md). The session expires; one
//! mutex learns it and renews the shared session; the other, not told yet, creates in the
//! renewed session and loses the create's reply (applied). When it notices the renewal, its
//! search must go on: the node is its own, in the live session. Every step of every execution
//! is replayed through the Stateright model as it is recorded (`zk::refine`) with every
//! `always` property the model proves enforced, and each run ends with the server's children
//! checked for a live orphan (an oracle that asks neither the recipe nor the model).
//!
//! The twin: the same workload on `drop-own-on-session-swap` (the old rule: a search stops at
//! a session change) orphans the node; shuttle finds it and its schedule is pinned.
//!
//! A restart of the shared handle (`RestartClient`) with a lost create refines too, every
//! property the model proves enforced. This suite found that a mutex which had not noticed the
//! restart was granted on its node of the abandoned session (two live holders once that
//! session timed out), in the model and in the recipe; both now learn of the swap from the
//! listing's session instead, and the twin (`drop-own-on-session-swap`, the rule as it was)
//! is caught.
//!
//! Budgets: `STANDARD_ITERATIONS` (3,000) executions per scheduler in plain `cargo test`,
//! `LOCKWRIGHT_DEEP=1` raises them to `DEEP_ITERATIONS` (100,000; both in
//! `lockwright_testkit::zk::suite`):
//!
//! ```text
//! cargo test -p lockwright-checks --test zk_sim shuttle_shared:: -- --nocapture
//! ```

use lockwright::zk::ZkDefect;
use lockwright_model::zk::protocol::{
    AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, GRANTS_IN_REQUEST_ORDER, NO_LOST_UPDATE,
    NO_ORPHAN_NODE,
};
use lockwright_testkit::zk::suite::{
    explore, find, iterations, proved, replay_pinned, Coverage, Twin, PCT_DEPTH,
};
use lockwright_testkit::zk::{format_trace, Call, Fault, Outcome, Step, Workload, Writes};

/// A floor on the executions (of `STANDARD_ITERATIONS` random + PCT) that reach the case of
/// the fix: the fixed seed gives 2,230 of 6,000 (the expiry is usually the first step, so a
/// create of `c0` learns it and renews, and `c1`'s create often lands between that and `c1`'s
/// next look at the session). Below this the test no longer exercises what it is for.
const MIN_CASE_RUNS: usize = 1_000;

/// `c0` and `c1` share one client; its session expires, and `c1`'s next create (or delete)
/// is applied with its reply lost. `writes` is the holders' write mode.
fn expiry_and_lost_create(name: &'static str, writes: Writes) -> Workload {
    Workload::curator(name, writes, 2)
        .with_reenter(false)
        .with_shared_client(true)
        .with_faults(vec![Fault::Expire(0), Fault::LoseReply(1, true)])
}

/// The fixed recipe with a shared client under an expiry and a lost create: refined with every
/// proved property enforced, no orphan at the end of any run, and the case of the fix reached
/// in at least [`MIN_CASE_RUNS`] runs (counted from the recordings).
#[test]
fn curator_shared_client_finds_a_lost_create_made_in_the_renewed_session() {
    let w = expiry_and_lost_create(
        "curator × fenced-claim, shared client, expiry and a lost create",
        Writes::FencedClaim,
    );
    let enforce = proved(&w, &[AT_MOST_ONE_HOLDER]);
    assert!(enforce.contains(&NO_ORPHAN_NODE) && enforce.contains(&NO_LOST_UPDATE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0a01,
        iterations(),
        PCT_DEPTH,
    );
    let case = Coverage::get(&cov.renewed_lost_create_searches);
    for (name, c) in [
        ("an expiry", &cov.expiries),
        ("a lost reply", &cov.lost_replies),
        ("a renewal noticed by the other mutex", &cov.session_swaps),
        ("contention", &cov.contention),
    ] {
        assert!(Coverage::get(c) > 0, "no execution saw {name}");
    }
    assert!(
        case >= MIN_CASE_RUNS,
        "only {case} runs reached the case of the fix"
    );
}

/// Scheduler seed of the twin's finder. Under seed 1 the first orphan shuttle finds is the
/// lost-reply-free one `zk_sim/shuttle_defects.rs` already pins (a create in the renewed session,
/// dropped at the notice); of seeds 2–79, seed 63 is the first whose first orphan is the
/// dropped search, the case this suite is for (checked below from the recording).
const TWIN_SEED: u64 = 63;
/// Executions per scheduler the finder may spend (it needs far fewer; see its output).
const TWIN_ITERATIONS: usize = 3_000;
/// PCT depth for the finder's second chance (as `zk_sim/shuttle_defects.rs`).
const TWIN_PCT_DEPTH: usize = 5;

/// The old rule (`drop-own-on-session-swap`) on the same workload: the enforced property is
/// "no orphan node", the one the model says it violates beside the expiry's two.
fn drop_own_twin() -> Twin {
    Twin {
        incident: "drop-own-on-session-swap with a lost create: the other mutex renewed the shared session; our create ran there and lost its reply; we notice the renewal and drop the search, orphaning the node",
        workload: expiry_and_lost_create(
            "twin drop-own-on-session-swap, expiry and a lost create",
            Writes::FencedClaim,
        )
        .with_defect(ZkDefect::DropOwnOnSessionSwap),
        properties: vec![NO_ORPHAN_NODE],
    }
}

/// shuttle finds the twin's orphan (and `find` checks that the model agrees, that the
/// recording replays offline through the broken model variant to the violation, and that the
/// schedule replays).
#[test]
fn shuttle_catches_drop_own_on_session_swap_with_a_lost_create() {
    let caught = find(&drop_own_twin(), TWIN_SEED, TWIN_ITERATIONS, TWIN_PCT_DEPTH)
        .expect("shuttle must catch drop-own-on-session-swap");
    assert_eq!(caught.property, NO_ORPHAN_NODE);
    assert!(
        dropped_search(&caught.trace),
        "the first orphan found is not the dropped search:\n{}",
        format_trace(&caught.trace)
    );
    assert_eq!(caught.schedule, PINNED_DROPPED_SEARCH.0);
}

/// Whether a recording that ends at the orphan is the dropped search: one mutex learned the
/// expiry (and renewed the session), then the other's create was applied with its reply lost,
/// and the orphan appears as that mutex notices the renewal (it stops searching).
fn dropped_search(trace: &[Step]) -> bool {
    let Some((last, before)) = trace.split_last() else {
        return false;
    };
    let Some(me) = last
        .client
        .filter(|_| last.call == Call::NoticeSessionChange)
    else {
        return false;
    };
    let renewal = before.iter().position(|s| {
        s.client.is_some_and(|c| c != me)
            && (s.outcome == Outcome::SessionExpired || s.call == Call::SessionEvent)
    });
    let lost = before.iter().rposition(|s| {
        s.client == Some(me)
            && matches!(s.call, Call::Create { .. })
            && s.outcome == (Outcome::ReplyLost { applied: true })
    });
    matches!((renewal, lost), (Some(r), Some(l)) if r < l)
}

// Found by `shuttle_catches_drop_own_on_session_swap_with_a_lost_create` (seed 63, the random
// scheduler, after 1 execution; 6 steps into the recording). If the recipe's call
// sequence changes, this stops replaying: rerun that test with `--nocapture`, check that the
// first orphan is still the dropped search, and pin the schedule it prints.
const PINNED_DROPPED_SEARCH: (&str, &str) = ("9103153f0020400482824864422204", NO_ORPHAN_NODE);

/// c0 and c1 share one client; its session expires; c0's create learns it and renews the
/// session; c1 creates in the renewed session and loses the reply (applied); c1 notices the
/// renewal and, under the old rule, drops its search: the node stays in the live session,
/// nobody's.
#[test]
fn replay_drop_own_on_session_swap_drops_the_search_and_orphans_its_node() {
    let (schedule, property) = PINNED_DROPPED_SEARCH;
    replay_pinned(&drop_own_twin(), schedule, property);
}

/// The shared handle restarts (`RestartClient(c0)`: a new session, the old one abandoned and
/// timed out later); each mutex notices at its next look; `c1`'s next create (or delete) is
/// applied with its reply lost.
fn restart_and_lost_create(name: &'static str) -> Workload {
    Workload::curator(name, Writes::FencedClaim, 2)
        .with_reenter(false)
        .with_shared_client(true)
        .with_faults(vec![
            Fault::Restart(0),
            Fault::LoseReply(1, true),
            Fault::ExpireOld(0),
        ])
}

/// The model's verdict for [`restart_and_lost_create`] on the recipe (`curator`,
/// `restart=1,lose-reply=1`, shared client): only the holder that has not heard of the
/// restart yet believes on after its old session timed out. A mutex that has not noticed the
/// restart and lists the children learns of it from that listing's session instead of being
/// granted on its node of the abandoned session (the fix; before it, "at most one live holder"
/// and "grants in request order" failed too, which the twin below shows).
const RESTART_VERDICT: [&str; 1] = [AT_MOST_ONE_HOLDER];

/// A restart of the shared handle with a lost create: refined with 0 divergences, every
/// property the model proves enforced ("at most one live holder", "grants in request order",
/// "no orphan node", "no lost update" among them), no orphan at the end of any run.
#[test]
fn curator_shared_client_refines_across_a_restart_of_the_shared_handle() {
    let w =
        restart_and_lost_create("curator × fenced-claim, shared client, restart and a lost create");
    let enforce = proved(&w, &RESTART_VERDICT);
    for p in [
        AT_MOST_ONE_LIVE_HOLDER,
        GRANTS_IN_REQUEST_ORDER,
        NO_ORPHAN_NODE,
        NO_LOST_UPDATE,
    ] {
        assert!(enforce.contains(&p), "{p} is enforced");
    }
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0a02,
        iterations(),
        PCT_DEPTH,
    );
    for (name, c) in [
        ("a restart", &cov.restarts),
        ("an old session expired", &cov.old_sessions_expired),
        ("a lost reply", &cov.lost_replies),
        ("a restart noticed by a mutex", &cov.session_swaps),
        ("contention", &cov.contention),
    ] {
        assert!(Coverage::get(c) > 0, "no execution saw {name}");
    }
}

/// The twin: the rule as it was (`drop-own-on-session-swap`, which also reads a listing
/// answered in the session the restart opened, and can be granted on its node of the
/// abandoned session: two live holders once that session times out — the model's
/// `drop_own_on_session_swap_is_granted_on_a_node_of_the_abandoned_session`). Under shuttle
/// the same rule's orphan is met first (it drops a node of the renewed session), so this twin
/// is caught by "no orphan node"; the grant itself was found by this workload on the recipe
/// before the fix (seed 1, 49 random executions, 7 steps: c0 and c1 create, the handle
/// restarts, c0 lists without having noticed and is granted, c1 notices, the old session
/// times out and c1 is granted too).
fn restart_twin() -> Twin {
    Twin {
        incident:
            "a mutex of a restarted shared client granted on its node of the abandoned session",
        workload: restart_and_lost_create(
            "twin drop-own-on-session-swap, restart of the shared handle",
        )
        .with_defect(ZkDefect::DropOwnOnSessionSwap),
        // "no orphan node" too: the same rule also drops a node of the renewed session and
        // waits behind it, which would otherwise end a run in a deadlock before the grant.
        properties: vec![
            AT_MOST_ONE_LIVE_HOLDER,
            GRANTS_IN_REQUEST_ORDER,
            NO_ORPHAN_NODE,
        ],
    }
}

#[test]
fn shuttle_catches_the_old_session_swap_rule_across_a_restart() {
    let caught = find(&restart_twin(), 1, TWIN_ITERATIONS, TWIN_PCT_DEPTH)
        .expect("shuttle must catch the old session-swap rule across a restart");
    assert!(
        [
            AT_MOST_ONE_LIVE_HOLDER,
            GRANTS_IN_REQUEST_ORDER,
            NO_ORPHAN_NODE
        ]
        .contains(&caught.property),
        "{}",
        caught.property
    );
    println!(
        "caught {} with schedule {}",
        caught.property, caught.schedule
    );
}
