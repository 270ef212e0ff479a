//! shuttle, randomized: the real ZooKeeper mutex giving up and being dropped, on the simulated
//! ZooKeeper with its simulated clock (`lockwright_testkit::zk`). `try_acquire` and
//! `acquire_timeout` give up in simulated time (the clock thread fires a timeout between any two
//! steps), and callers drop `acquire()`/`acquire_timeout()`/`release()` futures at random
//! `Pending` polls wherever the model's `Abandon` is enabled. Every step is replayed through the
//! Stateright model as it is recorded; a give-up's hand-off of its node is the model's
//! `Abandon` (the model has no give-up of its own).
//!
//! Oracles, none of them the recipe's own report: the model's grant history (refinement); the
//! simulated clock for "`acquire_timeout(t)` returns within `t` plus one bounded request"
//! (`GIVE_UP_WAIT`, plus the simulated time the call's requests took, asserted in every run); and, after every run, the server's children: no node
//! of a live session may be left once every client released. Each has a twin below that fails.
//!
//! ```text
//! cargo test -p lockwright-checks --test zk_sim shuttle_give_up:: -- --nocapture
//! LOCKWRIGHT_DEEP=1 cargo test -p lockwright-checks --test zk_sim shuttle_give_up:: -- --nocapture
//! ```

use std::time::Duration;

use lockwright::zk::ZkDefect;
use lockwright_model::zk::protocol::NO_ORPHAN_NODE;
use lockwright_testkit::schedules::{search, serial, Scheduler};
use lockwright_testkit::zk::suite::{explore, find, iterations, proved, Coverage, Twin, PCT_DEPTH};
use lockwright_testkit::zk::workload::run;
use lockwright_testkit::zk::{Fault, GiveUp, Workload, Writes};

/// The timeout of the `acquire_timeout` client: ten retry pauses' worth (the first pause is
/// 10 ms), so a timeout can fire while waiting, while pausing, or not at all.
const TIMEOUT: Duration = Duration::from_millis(100);

fn assert_seen(what: &[(&str, usize)]) {
    for (name, n) in what {
        assert!(*n > 0, "no execution saw {name}");
    }
}

/// c1 takes the lock with `try_acquire` (twice it may give up, then it waits) while c0 holds
/// and re-enters; c1's delete loses a reply once. A give-up deletes its node through a cleanup
/// task (`GiveUp` → `Abandon` → `Releasing` → `DeleteLockNode`), so every `always` property
/// the model proves holds on every run, "no orphan node" included, and no node is left at the
/// end; and it returns within one bounded request of simulated time.
#[test]
fn curator_try_acquire_gives_up_and_deletes_its_node() {
    let w = Workload::curator(
        "curator × fenced-claim, try_acquire",
        Writes::FencedClaim,
        2,
    )
    .with_give_ups(1, GiveUp::Try, 2)
    .with_faults(vec![Fault::LoseReply(1, false)]);
    let enforce = proved(&w, &[]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0101,
        iterations(),
        PCT_DEPTH,
    );
    let g = Coverage::get;
    assert_seen(&[
        ("a give-up", g(&cov.gave_up)),
        ("a give-up's hand-off", g(&cov.give_up_handoffs)),
        ("a lost reply", g(&cov.lost_replies)),
        ("contention", g(&cov.contention)),
    ]);
}

/// c1 acquires with `acquire_timeout(100 ms)` (twice it may time out, then it waits); c0's
/// session expires once and c1's delete loses a reply once. The timeout fires in simulated
/// time wherever the clock thread is scheduled: while c1 waits for its predecessor, pauses, or
/// before its first create. On every run: refinement, the end-of-run orphan check, and the
/// clock's bound `waited <= TIMEOUT + GIVE_UP_WAIT + the call's request time`. The bound's twin: some give-up did run
/// past `TIMEOUT` (it waited for its cleanup's answer), so a bound of the timeout alone fails
/// on this suite — the bound is not vacuous.
#[test]
fn curator_acquire_timeout_returns_within_its_timeout_plus_one_bounded_request() {
    let w = Workload::curator(
        "curator × fenced-claim, acquire_timeout",
        Writes::FencedClaim,
        2,
    )
    .with_give_ups(1, GiveUp::Timeout(TIMEOUT), 2)
    .with_faults(vec![Fault::Expire(0), Fault::LoseReply(1, false)]);
    let enforce = proved(&w, &[lockwright_model::zk::protocol::AT_MOST_ONE_HOLDER]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0102,
        iterations(),
        PCT_DEPTH,
    );
    let g = Coverage::get;
    assert_seen(&[
        ("a timeout", g(&cov.gave_up)),
        ("a timeout's hand-off of its node", g(&cov.give_up_handoffs)),
        ("an expiry", g(&cov.expiries)),
        ("a lost reply", g(&cov.lost_replies)),
    ]);
    let longest = Duration::from_millis(g(&cov.max_give_up_ms) as u64);
    assert!(
        longest > TIMEOUT,
        "no give-up ran past its timeout ({longest:?}): the bound's slack is never used"
    );
}

/// The same with issue #33's simulated time: every request and every session re-open takes
/// 20 ms, and the clock moves only while no client is ready to run, so the bound
/// `TIMEOUT + GIVE_UP_WAIT` is checked with no request time forgiven (the held-back time the
/// oracle still adds is measured as zero here). c0's session expires, so re-opening a session
/// takes time too. Not here: c1's own expiry while it waits with a timeout. The simulation
/// records the expiry's step when the wait sees it and delivers it after a scheduling point,
/// so a deadline passing in between drops an expiry the model says was learned (a divergence
/// of the simulation, not of the recipe); a re-open under the deadline is checked on the real
/// server (`zk`'s `faults::stopped`).
#[test]
fn curator_acquire_timeout_holds_its_bound_when_requests_and_reopens_take_time() {
    let w = Workload::curator(
        "curator × fenced-claim, acquire_timeout, requests take time",
        Writes::FencedClaim,
        2,
    )
    .with_give_ups(1, GiveUp::Timeout(TIMEOUT), 2)
    .with_faults(vec![Fault::Expire(0), Fault::LoseReply(1, false)])
    .with_request_latency(Duration::from_millis(20));
    let enforce = proved(&w, &[lockwright_model::zk::protocol::AT_MOST_ONE_HOLDER]);
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c33_0004,
        iterations(),
        PCT_DEPTH,
    );
    let g = Coverage::get;
    assert_seen(&[
        ("a timeout", g(&cov.gave_up)),
        ("an expiry", g(&cov.expiries)),
        ("a lost reply", g(&cov.lost_replies)),
    ]);
    let longest = Duration::from_millis(g(&cov.max_give_up_ms) as u64);
    assert!(
        longest > TIMEOUT,
        "no give-up ran past its timeout ({longest:?}): the bound's slack is never used"
    );
}

/// Both clients' callers may drop two futures a run — an `acquire()`, an `acquire_timeout()` or
/// a `release()` — at any `Pending` poll where the model's `Abandon` is enabled, beside c1's
/// timeouts, a lost create reply (applied) of c0 and a lost delete reply of c1. Every drop is
/// replayed as `Abandon` at the model's place, and the recipe's cleanup deletes the node: every
/// proved property holds and nothing is left at the end. The drops per model place are printed
/// and bounded below, so the test cannot pass without dropping.
#[test]
fn curator_futures_dropped_at_random_await_points_still_delete() {
    let w = Workload::curator(
        "curator × fenced-claim, random drops",
        Writes::FencedClaim,
        2,
    )
    .with_give_ups(1, GiveUp::Timeout(TIMEOUT), 1)
    .with_random_drops(2)
    .with_faults(vec![Fault::LoseReply(0, true), Fault::LoseReply(1, false)]);
    let enforce = proved(&w, &[]);
    assert!(enforce.contains(&NO_ORPHAN_NODE));
    let cov = explore(
        &w,
        w.refinement().enforcing(&enforce),
        0x2c00_0103,
        iterations(),
        PCT_DEPTH,
    );
    let drops = cov.drops.lock().unwrap().clone();
    println!("random drops by the model's place: {drops:?}");
    // Lower bounds, about a tenth of what seed 0x2c00_0103 reaches in plain `cargo test`.
    for (pc, at_least) in DROPS_AT_LEAST {
        assert!(
            cov.drops_at(pc) >= at_least,
            "drops at {pc}: {} < {at_least} ({drops:?})",
            cov.drops_at(pc)
        );
    }
}

/// Lower bounds on the random drops per model place in
/// `curator_futures_dropped_at_random_await_points_still_delete` (3,000 + 3,000 executions).
/// Measured: CreateLost 461 (a drop while the recipe pauses after a lost create reply: its
/// cleanup searches, then deletes), Created 821, MustWatch 3,678, Waiting 4,561, Releasing
/// 1,857. Never while a create's or a search's reply is on its way: the model has that drop as
/// a lost reply followed by `Abandon` at `CreateLost`, which the drops above cover.
const DROPS_AT_LEAST: [(&str, usize); 5] = [
    ("CreateLost", 46),
    ("Created", 80),
    ("MustWatch", 380),
    ("Waiting", 488),
    ("Releasing", 185),
];

/// The twin of the end-of-run check: `release-forgets`, one client, one round, its delete's
/// reply lost — the node stays and nobody waits behind it, so the run ends normally, and only
/// the server's children tell. No refinement (it would stop the run at "no orphan node"
/// first): the check alone must fail.
#[test]
fn the_end_of_run_check_finds_the_node_release_forgets_leaves() {
    let w = Workload::curator("end check × release-forgets", Writes::Fenced, 1)
        .with_reenter(false)
        .with_rounds(1, 1)
        .with_defect(ZkDefect::ReleaseForgets)
        .with_end_check(true)
        .with_faults(vec![Fault::LoseReply(0, false)]);
    let guard = serial();
    let found = search(
        &guard,
        move || {
            run(&w, None);
        },
        1,
        200,
        &[Scheduler::Random],
    )
    .expect("a run whose lost reply hits the release");
    assert!(
        found.message.contains("no orphan node after the run"),
        "{}",
        found.message
    );
}

fn twins() -> Vec<Twin> {
    vec![
        Twin {
            incident: "give-up-cancel-unsafe, dropped at random: an acquire dropped with a node leaves it",
            workload: Workload::curator("twin give-up-cancel-unsafe, random drops", Writes::Fenced, 2)
                .with_reenter(false)
                .with_defect(ZkDefect::GiveUpCancelUnsafe)
                .with_random_drops(1),
            properties: vec![NO_ORPHAN_NODE],
        },
        Twin {
            incident: "release-cancel-unsafe, dropped at random: a release dropped after a lost delete reply leaves the node",
            workload: Workload::curator("twin release-cancel-unsafe, random drops", Writes::Fenced, 2)
                .with_reenter(false)
                .with_defect(ZkDefect::ReleaseCancelUnsafe)
                .with_faults(vec![Fault::LoseReply(0, false)])
                .with_random_drops(1),
            properties: vec![NO_ORPHAN_NODE],
        },
    ]
}

/// The drops' twins: with a recipe that is not cancel-safe, a random drop leaves the node, and
/// shuttle finds "no orphan node" violated (the model agrees, and the recording replays offline
/// to the same violation: `suite::find`).
#[test]
fn shuttle_catches_the_cancel_unsafe_recipes_with_random_drops() {
    for t in twins() {
        let c = find(&t, 1, 5_000, 5).unwrap_or_else(|| panic!("{}: not caught", t.incident));
        assert_eq!(c.property, NO_ORPHAN_NODE);
    }
}
