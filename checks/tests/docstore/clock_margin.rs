//! The server's clock as it is (issue #35, item 4): `ctx._now` is the primary's cached time
//! (refreshed every 200 ms by default), and another node's clock after a fail-over. The
//! holder's deadline keeps a margin for it (`LeaseLock::with_clock_margin`), so that a holder
//! whose `ensure_valid` passes still holds a live lease as long as the script clock is off by
//! no more than the margin. The oracle is the loopback server's own judgement: a second owner
//! is granted only once the server finds the first lease passed.
//!
//! Failing before the fix: the deadline was the first send plus the full lease, which is the
//! twin below (margin 0): the first holder passes `ensure_valid` while the server has already
//! granted the second.

use std::time::Duration;

use lockwright::docstore::{DocLockError, HttpStore, LeaseLock};
use lockwright_testkit::docstore::{install_fresh, LoopbackServer};

const LEASE: Duration = Duration::from_millis(1_000);
/// A fail-over to a node whose clock runs this far ahead.
const AHEAD_MS: i64 = 300;

fn lock(server: &LoopbackServer, owner: &str, margin: Duration) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(store, "files-lock", "1", LEASE)
        .with_owner(owner)
        .with_clock_margin(margin)
}

/// A acquires on a node with the true time; the primary then fails over to a node 300 ms
/// ahead; 800 ms after A's acquire, B asks. Returns whether B was granted and whether A's
/// `ensure_valid` passed right after.
fn fail_over_ahead(margin: Duration) -> (bool, bool) {
    let _quiet = crate::timing();
    let server = LoopbackServer::start();
    server.set_clock_cache(Duration::ZERO);
    let a = lock(&server, "owner-a", margin);
    let b = lock(&server, "owner-b", margin);
    install_fresh(&a).unwrap();
    let mut ga = a.try_acquire().unwrap();
    server.set_clock_skew_ms(AHEAD_MS);
    std::thread::sleep(Duration::from_millis(800));
    let granted = match b.try_acquire() {
        Ok(g) => {
            std::mem::forget(g);
            true
        }
        Err(e) if e.is_held() => false,
        Err(e) => panic!("{e}"),
    };
    let valid = match ga.ensure_valid() {
        Ok(()) => true,
        Err(DocLockError::LeaseExpired { .. }) => false,
        Err(e) => panic!("{e}"),
    };
    std::mem::forget(ga);
    (granted, valid)
}

#[test]
fn a_holder_that_passes_its_check_holds_a_live_lease_under_a_skewed_server_clock() {
    let (granted, valid) = fail_over_ahead(Duration::from_millis(400));
    assert!(
        granted,
        "the server judged A's lease passed (the scenario happens)"
    );
    assert!(!valid, "A's check must fail once the server can grant B");
}

#[test]
fn without_the_margin_two_owners_believe_they_hold() {
    let (granted, valid) = fail_over_ahead(Duration::ZERO);
    assert!(granted && valid, "the twin must show two holders");
}

/// The loopback's script clock is cached as Elasticsearch's is: two reads within the
/// interval read the same time.
#[test]
fn the_loopback_script_clock_is_cached_and_skewable() {
    let server = LoopbackServer::start();
    let t0 = server.script_now();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(server.script_now(), t0, "cached for 200 ms");
    server.set_clock_skew_ms(-10_000);
    let behind = server.script_now();
    assert!(behind + 9_000 < t0, "skewed at once: {behind} vs {t0}");
}
