//! The document-store client against a real Elasticsearch or OpenSearch, opt-in: no such
//! server can be installed on this project's machines (Debian ships clients only), so these
//! tests are `#[ignore]`d — `cargo test` lists them as ignored, with the reason — and run
//! with a cluster's URL (and, where the cluster needs it, an `Authorization` header value):
//!
//! ```sh
//! LOCKWRIGHT_DOCSTORE_URL=http://127.0.0.1:9200 \
//! LOCKWRIGHT_DOCSTORE_AUTH="Basic $(printf elastic:changeme | base64)" \
//!     cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored
//! ```
//!
//! An `https://` URL needs the `docstore-tls` feature and a certificate the public web roots
//! trust: a cluster with its own CA (Elasticsearch 8's default `http_ca.crt`, OpenSearch's
//! demo certificates) cannot be reached yet (issue #35, item 5, not done).
//!
//! The cluster must allow stored painless scripts (the default). Each run uses fresh index
//! names (`lockwright-test-<nanos>-...`) and leaves them behind (drop them with
//! `DELETE /lockwright-test-*`). The tests follow the fixed recipe as the library ships it
//! (issue #35): scripts installed apart, the lock document installed by the guarded install
//! (reserved for one lease, so the first acquire waits), claimed sessions, renewal that keeps
//! the claim, and the re-install after a lost lock document. **None of them has been run
//! against a real cluster**; each scenario is a function of the base URL, and
//! `the_real_cluster_tier_runs_against_the_loopback` runs all four against the loopback store
//! on every `cargo test` (docs/docstore.md §9 says what ran against what).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lockwright::docstore::{scripts, DocLockError, DocStore, HttpStore, LeaseLock, StoredScript};
use serde_json::json;

/// The cluster's URL; a clear failure when a run asks for these tests without one.
fn url() -> String {
    std::env::var("LOCKWRIGHT_DOCSTORE_URL").unwrap_or_else(|_| {
        panic!("these tests need LOCKWRIGHT_DOCSTORE_URL (an Elasticsearch or OpenSearch, e.g. http://127.0.0.1:9200)")
    })
}

/// Fresh index names for one test: the lock index and the data index.
fn indices(test: &str) -> (String, String) {
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (
        format!("lockwright-test-{n}-{test}-locks"),
        format!("lockwright-test-{n}-{test}-data"),
    )
}

fn store(base: &str) -> HttpStore {
    let s = HttpStore::with_timeouts(base, Duration::from_secs(2), Duration::from_secs(10));
    match std::env::var("LOCKWRIGHT_DOCSTORE_AUTH") {
        Ok(auth) => s.with_authorization(auth),
        Err(_) => s,
    }
}

fn lock(base: &str, index: &str, owner: &str, lease: Duration) -> LeaseLock<HttpStore> {
    LeaseLock::new(store(base), index, "1", lease).with_owner(owner)
}

/// The scripts, then the guarded install of the lock document naming the data document, then
/// the first acquire, which waits out the install's one-lease reservation.
fn install_and_acquire<'a>(
    a: &'a LeaseLock<HttpStore>,
    data: &str,
) -> lockwright::docstore::LeaseGuard<'a, HttpStore> {
    a.install_scripts().unwrap();
    assert!(
        a.install_lock(&[(data, "1")]).unwrap(),
        "a fresh lock index"
    );
    a.acquire(Duration::from_secs(10), Duration::from_millis(200))
        .expect("granted once the install's reservation has passed")
}

pub fn two_owners_exclude_each_other_and_a_release_frees_the_lock(base: &str) {
    let (locks, data) = indices("exclusion");
    let a = lock(base, &locks, "owner-a", Duration::from_secs(2));
    let b = lock(base, &locks, "owner-b", Duration::from_secs(2));
    let g = install_and_acquire(&a, &data);
    let err = b.try_acquire().unwrap_err();
    assert!(err.is_held(), "the cluster's refusal reads as held: {err}");
    g.release().unwrap();
    let g = b.try_acquire().unwrap();
    g.release().unwrap();
}

pub fn a_passed_lease_is_taken_over_and_the_claimed_fence_refuses_the_old_holder(base: &str) {
    let (locks, data) = indices("takeover");
    let a = lock(base, &locks, "owner-a", Duration::from_secs(2));
    let b = lock(base, &locks, "owner-b", Duration::from_secs(30));
    let mut ga = install_and_acquire(&a, &data);
    {
        let mut session = ga.claim(&data, "1").unwrap();
        session.read().unwrap();
        session.write(&json!({"name": "from a"})).unwrap();
    }
    assert!(b.try_acquire().unwrap_err().is_held());
    std::thread::sleep(Duration::from_millis(2500));
    let err = ga.ensure_valid().unwrap_err();
    assert!(matches!(err, DocLockError::LeaseExpired { .. }), "{err}");
    let mut gb = b.try_acquire().unwrap();
    assert!(gb.token() > ga.token(), "the takeover is a newer write");
    drop(gb.claim(&data, "1").unwrap());
    // A late write with the older token (sent raw: the guard itself stops at its lease check)
    // is refused by the cluster's fence.
    let t = ga.token();
    let late = StoredScript {
        id: scripts::script_id("fenced-write"),
        params: json!({"primary_term": t.primary_term, "seq_no": t.seq_no, "patch": {}}),
        scripted_upsert: false,
    };
    let err = store(base)
        .update_with_script(&data, "1", &late)
        .unwrap_err();
    assert!(err.explains(scripts::STALE_TOKEN), "{err}");
    // The lapsed guard sends no release; the lock stays B's.
    ga.release().unwrap();
    assert_eq!(
        b.holder().unwrap().map(|(o, _)| o),
        Some("owner-b".to_owned())
    );
    gb.release().unwrap();
}

pub fn a_renewal_keeps_the_claimed_session(base: &str) {
    let (locks, data) = indices("renew");
    let a = lock(base, &locks, "owner-a", Duration::from_secs(4));
    let mut g = install_and_acquire(&a, &data);
    let token = g.token();
    drop(g.claim(&data, "1").unwrap());
    std::thread::sleep(Duration::from_secs(2));
    g.renew().unwrap();
    // Past the first deadline (3 s: the lease less its 1 s margin), within the renewed one.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(g.token(), token);
    g.read(&data, "1").unwrap();
    g.fenced_write(&data, "1", &json!({"name": "after the renewal"}))
        .unwrap();
    g.release().unwrap();
}

pub fn a_lost_lock_document_is_installed_again_without_a_second_grant(base: &str) {
    let (locks, data) = indices("reinstall");
    let a = lock(base, &locks, "owner-a", Duration::from_secs(3));
    let b = lock(base, &locks, "owner-b", Duration::from_secs(3));
    let mut ga = install_and_acquire(&a, &data);
    drop(ga.claim(&data, "1").unwrap());
    // An operator deletes the lock document: an acquire is an error, never a grant.
    store(base).delete(&locks, "1").unwrap();
    let err = b.try_acquire().unwrap_err();
    assert_eq!(
        err.store_error().and_then(|e| e.status()),
        Some(404),
        "{err}"
    );
    // Installed again at once: reserved, so B waits while A's lease may still run.
    assert!(b.install_lock(&[(&data, "1")]).unwrap());
    assert!(b.try_acquire().unwrap_err().is_held());
    assert!(ga.ensure_valid().is_ok(), "A still holds");
    let mut gb = b
        .acquire(Duration::from_secs(10), Duration::from_millis(200))
        .unwrap();
    assert!(gb.token() > ga.token());
    drop(gb.claim(&data, "1").unwrap());
    gb.release().unwrap();
}

// The tier against a real cluster: opt-in.

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn real_cluster_two_owners_exclude_each_other_and_a_release_frees_the_lock() {
    two_owners_exclude_each_other_and_a_release_frees_the_lock(&url());
}

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn real_cluster_a_passed_lease_is_taken_over_and_the_claimed_fence_refuses_the_old_holder() {
    a_passed_lease_is_taken_over_and_the_claimed_fence_refuses_the_old_holder(&url());
}

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn real_cluster_a_renewal_keeps_the_claimed_session() {
    a_renewal_keeps_the_claimed_session(&url());
}

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn real_cluster_a_lost_lock_document_is_installed_again_without_a_second_grant() {
    a_lost_lock_document_is_installed_again_without_a_second_grant(&url());
}

/// The same tier against the loopback store (this project's reading of the REST semantics, not
/// a cluster): it keeps the tier's own logic true to the recipe it must match, so that the
/// first run against a real cluster tests the cluster, not the test.
#[test]
fn the_real_cluster_tier_runs_against_the_loopback() {
    let _quiet = crate::timing();
    let server = lockwright_testkit::docstore::LoopbackServer::start();
    let base = server.url();
    two_owners_exclude_each_other_and_a_release_frees_the_lock(&base);
    a_passed_lease_is_taken_over_and_the_claimed_fence_refuses_the_old_holder(&base);
    a_renewal_keeps_the_claimed_session(&base);
    a_lost_lock_document_is_installed_again_without_a_second_grant(&base);
}
