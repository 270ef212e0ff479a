//! The document-store client against a real Elasticsearch or OpenSearch, opt-in: no such
//! server can be installed on this project's machines (Debian ships clients only), so these
//! tests are `#[ignore]`d — `cargo test` lists them as ignored, with the reason — and run
//! with a cluster's URL:
//!
//! ```sh
//! LOCKWRIGHT_DOCSTORE_URL=http://127.0.0.1:9200 \
//!     cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored
//! ```
//!
//! The cluster must allow inline and stored painless scripts (the defaults). Each run uses
//! fresh index names (`lockwright-test-<nanos>-...`) and leaves them behind (the client has no
//! index deletion; drop them with `DELETE /lockwright-test-*`). What they check is what the
//! loopback suites check against this project's reading of the REST semantics
//! (`docstore/http.rs`), now against the real thing: exclusion, a lease that passes and is
//! taken over, a fence that refuses a stale token, and a release that is not the owner's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lockwright::docstore::{DocLockError, DocStore, HttpStore, LeaseLock, WriteResult};
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

fn store() -> HttpStore {
    HttpStore::with_timeouts(&url(), Duration::from_secs(2), Duration::from_secs(10))
}

fn lock(index: &str, owner: &str, lease: Duration) -> LeaseLock<HttpStore> {
    LeaseLock::new(store(), index, "1", lease).with_owner(owner)
}

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn two_owners_exclude_each_other_and_a_release_frees_the_lock() {
    let (locks, _) = indices("exclusion");
    let a = lock(&locks, "owner-a", Duration::from_secs(30));
    let b = lock(&locks, "owner-b", Duration::from_secs(30));
    a.install_scripts().unwrap();
    let g = a.try_acquire().unwrap();
    let err = b.try_acquire().unwrap_err();
    assert!(err.is_held(), "the cluster's refusal reads as held: {err}");
    g.release().unwrap();
    let g = b.try_acquire().unwrap();
    g.release().unwrap();
}

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn a_passed_lease_is_taken_over_with_a_larger_token() {
    let (locks, _) = indices("takeover");
    let a = lock(&locks, "owner-a", Duration::from_secs(2));
    let b = lock(&locks, "owner-b", Duration::from_secs(30));
    a.install_scripts().unwrap();
    let mut ga = a.try_acquire().unwrap();
    assert!(b.try_acquire().unwrap_err().is_held());
    std::thread::sleep(Duration::from_millis(2500));
    let err = ga.ensure_valid().unwrap_err();
    assert!(matches!(err, DocLockError::LeaseExpired { .. }), "{err}");
    let gb = b.try_acquire().unwrap();
    assert!(gb.token() > ga.token(), "the takeover is a newer write");
    drop(ga);
    gb.release().unwrap();
}

#[test]
#[ignore = "needs a real Elasticsearch or OpenSearch: LOCKWRIGHT_DOCSTORE_URL=http://host:9200 cargo test -p lockwright-checks --test docstore real_cluster:: -- --ignored"]
fn the_cluster_refuses_a_stale_token_and_a_release_that_is_not_the_owners() {
    let (locks, data) = indices("fence");
    let a = lock(&locks, "owner-a", Duration::from_secs(30));
    let b = lock(&locks, "owner-b", Duration::from_secs(30));
    a.install_scripts().unwrap();
    let mut ga = a.try_acquire().unwrap();
    // An operator deletes the lock document: B acquires while A's lease still runs.
    let deleted = store().delete(&locks, "1").unwrap();
    assert_eq!(deleted.result, WriteResult::Deleted);
    let mut gb = b.try_acquire().unwrap();
    assert!(gb.token() > ga.token());
    // The protected document exists before anyone writes it under the lock.
    store()
        .create(&data, "1", &json!({ "name": "initial" }))
        .unwrap();
    gb.fenced_write(&data, "1", &json!({"name": "from b"}))
        .unwrap();
    let err = ga
        .fenced_write(&data, "1", &json!({"name": "from a"}))
        .unwrap_err();
    assert!(matches!(err, DocLockError::Fenced { .. }), "{err}");
    let err = ga.release().unwrap_err();
    assert!(matches!(err, DocLockError::NotOwner { .. }), "{err}");
    gb.release().unwrap();
}
