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
//! Budgets: `STANDARD_ITERATIONS` (3,000) executions per scheduler in plain `cargo test`,
//! `LOCKWRIGHT_DEEP=1` raises them to `DEEP_ITERATIONS` (100,000; both in
//! `lockwright_testkit::zk::suite`):
//!
//! ```text
//! cargo test -p lockwright-checks --test shuttle_zk_shared -- --nocapture
//! ```

use lockwright_model::zk::protocol::{AT_MOST_ONE_HOLDER, NO_LOST_UPDATE, NO_ORPHAN_NODE};
use lockwright_testkit::zk::suite::{explore, iterations, proved, Coverage, PCT_DEPTH};
use lockwright_testkit::zk::{Fault, Workload, Writes};

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
