//! Versioned stored scripts (issue #35, item 1). A script's id carries a hash of its source
//! (`lease-release-<16 hex digits>`), a client calls only its own version's ids, and
//! `verify_scripts` checks at start that the cluster holds the source it expects. Before, ids
//! were fixed (`lease-release`) and `install_scripts` overwrote them: in a fleet of two client
//! versions, whichever installed last won, and the other ran a script it was not written for.
//! The loopback stores and returns the source it was given (`GET _scripts/<id>`) and runs only
//! a source that is the model's.

use std::time::Duration;

use lockwright::docstore::{scripts, DocLockError, DocStore, HttpStore, LeaseLock};
use lockwright_testkit::docstore::{install_fresh, LoopbackServer};
use serde_json::json;

/// The previous client version's `lease-release` (before issue #35 it freed any caller's
/// lease), stored under the fixed id that version used.
const OLD_LEASE_RELEASE: &str = "ctx._source.remove('owner'); ctx._source.remove('expires');";

fn lock(server: &LoopbackServer, owner: &str) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(store, "files-lock", "1", Duration::from_secs(30)).with_owner(owner)
}

/// An old client's scripts (fixed ids) and a new client's (versioned ids) share the cluster:
/// the new client's install leaves the old scripts as they were, the old client's install
/// again leaves the new ones, and the new client verifies and works throughout.
#[test]
fn two_client_versions_share_a_cluster() {
    let server = LoopbackServer::start();
    let store = HttpStore::new(&server.url());
    // The old version installed its scripts under the fixed ids.
    store
        .put_script("lease-release", OLD_LEASE_RELEASE)
        .unwrap();
    let new = lock(&server, "owner-new");
    install_fresh(&new).unwrap();
    new.verify_scripts().unwrap();
    assert_eq!(
        store.get_script("lease-release").unwrap().as_deref(),
        Some(OLD_LEASE_RELEASE),
        "the old version's script is untouched"
    );
    let id = scripts::script_id("lease-release");
    assert_ne!(id, "lease-release");
    assert_eq!(
        store.get_script(id).unwrap().as_deref(),
        Some(scripts::LEASE_RELEASE)
    );
    // The old version installs again (a restart): the new version's scripts stand.
    store
        .put_script("lease-release", OLD_LEASE_RELEASE)
        .unwrap();
    new.verify_scripts().unwrap();
    let mut g = new.try_acquire().unwrap();
    drop(g.claim("files", "1").unwrap());
    g.fenced_write("files", "1", &json!({"name": "new"}))
        .unwrap();
    g.release().unwrap();
    // Only the old version (this test) ever stored under the fixed id.
    let fixed = server
        .requests()
        .iter()
        .filter(|r| r.as_str() == "POST /_scripts/lease-release")
        .count();
    assert_eq!(fixed, 2, "{:?}", server.requests());
}

/// A source under this client's id that is not its own is refused at start, naming both.
#[test]
fn a_stored_source_that_is_not_ours_is_refused_naming_both() {
    let server = LoopbackServer::start();
    let store = HttpStore::new(&server.url());
    let a = lock(&server, "owner-a");
    install_fresh(&a).unwrap();
    let id = scripts::script_id("lease-release");
    store.put_script(id, OLD_LEASE_RELEASE).unwrap();
    let err = a.verify_scripts().unwrap_err();
    assert!(matches!(err, DocLockError::ScriptMismatch { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(id) && msg.contains(OLD_LEASE_RELEASE) && msg.contains(scripts::LEASE_RELEASE),
        "{msg}"
    );
    // Nothing installed at all: refused too.
    let empty = LoopbackServer::start();
    let err = lock(&empty, "owner-a").verify_scripts().unwrap_err();
    assert!(err.to_string().contains("no stored script"), "{err}");
}

#[test]
fn every_version_has_its_own_id() {
    let a = scripts::versioned_id("lease-release", OLD_LEASE_RELEASE);
    let b = scripts::versioned_id("lease-release", scripts::LEASE_RELEASE);
    assert_ne!(a, b);
    assert_eq!(scripts::base_name(&a), "lease-release");
    assert_eq!(scripts::script_id("lease-release"), b);
}
