//! Issue #35, item 5: the client's fixes, each with the test that failed before it (checked by
//! reverting the fix locally). The oracle is the loopback server: what it stored, what it
//! was sent.

use std::sync::Arc;
use std::time::Duration;

use lockwright::docstore::{DocLockError, DocStore, HttpStore, LeaseLock};
use lockwright_testkit::docstore::{install_fresh, LoopbackServer};
use serde_json::json;

fn lock(server: &LoopbackServer, owner: &str) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(300),
        Duration::from_millis(600),
    );
    LeaseLock::new(store, "files-lock", "1", Duration::from_secs(30)).with_owner(owner)
}

/// A write is conditioned on the session's read of the same document. Before: on whatever the
/// last read read — here `files/2`'s `_seq_no`, so the write of `files/1` met a 409.
#[test]
fn a_write_is_conditioned_on_its_own_read_of_the_same_document() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    install_fresh(&a).unwrap();
    let store = HttpStore::new(&server.url());
    store.create("files", "2", &json!({})).unwrap();
    let mut g = a.try_acquire().unwrap();
    g.read("files", "2").unwrap();
    let before = store.get("files", "1").unwrap().expect("files/1").token;
    g.fenced_write("files", "1", &json!({"name": "x"})).unwrap();
    let after = store.get("files", "1").unwrap().expect("files/1").token;
    assert!(after > before, "the write landed");
    let sent = format!(
        "POST /files/_update/1?if_seq_no={}&if_primary_term={}",
        before.seq_no, before.primary_term
    );
    assert!(server.requests().contains(&sent), "{:?}", server.requests());
}

/// A write whose read found no document is not sent: the document could be created since,
/// and an unconditioned write would land on it unread. Before: sent without a condition.
#[test]
fn a_write_whose_read_found_nothing_is_not_sent() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    install_fresh(&a).unwrap();
    let store = HttpStore::new(&server.url());
    let mut g = a.try_acquire().unwrap();
    assert!(g.read("files", "9").unwrap().is_none());
    // Someone creates it between the read and the write.
    store.create("files", "9", &json!({})).unwrap();
    let created = store.get("files", "9").unwrap().expect("created").token;
    let err = g
        .fenced_write("files", "9", &json!({"name": "x"}))
        .unwrap_err();
    assert!(matches!(err, DocLockError::NotHolding { .. }), "{err}");
    assert_eq!(
        store.get("files", "9").unwrap().unwrap().token,
        created,
        "untouched"
    );
    assert!(!server
        .requests()
        .iter()
        .any(|r| r.starts_with("POST /files/_update/9")));
}

/// 429 (the cluster's back-pressure) is waited out within the acquire's timeout. Before: the
/// acquire gave up at the first 429.
#[test]
fn a_429_backs_off_within_the_timeout() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    install_fresh(&a).unwrap();
    server.answer_next(
        429,
        r#"{"error":{"type":"es_rejected_execution_exception","reason":"rejected execution"},"status":429}"#,
    );
    let g = a
        .acquire(Duration::from_secs(2), Duration::from_millis(20))
        .expect("acquired after the 429");
    assert_eq!(
        a.holder().unwrap().map(|(o, _)| o),
        Some("owner-a".to_owned())
    );
    drop(g);
}

/// One holder per owner id: a second acquire through the same `LeaseLock` (two threads
/// sharing an `Arc`) is refused without a request, since the lock document's script grants the
/// lock again to its own owner. Before: both were granted.
#[test]
fn one_lease_lock_has_one_holder_at_a_time() {
    let server = LoopbackServer::start();
    let a = Arc::new(lock(&server, "owner-a"));
    install_fresh(&a).unwrap();
    let g = a.try_acquire_owned().unwrap();
    let sent = server.requests().len();
    let other = Arc::clone(&a);
    let second = std::thread::spawn(move || other.try_acquire_owned().map(|_| ()))
        .join()
        .unwrap();
    assert!(
        matches!(second, Err(DocLockError::HeldByThisOwner { .. })),
        "{second:?}"
    );
    assert_eq!(server.requests().len(), sent, "nothing sent");
    drop(g);
    assert!(
        a.try_acquire_owned().is_ok(),
        "free again once the guard is gone"
    );
}

/// A release sent again after a lost reply finds the lease freed by its first send: released.
/// Before: the retry met 409 (the document moved on) and reported `NotOwner`.
#[test]
fn a_release_retried_after_a_lost_reply_is_released() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a").with_attempts(2);
    install_fresh(&a).unwrap();
    let g = a.try_acquire().unwrap();
    server.lose_next_reply(Duration::from_millis(900));
    g.release().expect("released");
    assert_eq!(a.holder().unwrap().map(|(o, _)| o), Some(String::new()));
}
