//! A guard that owns its share of the lock (`LeaseLock::try_acquire_owned`,
//! `acquire_owned`): moved into another thread, it claims, reads and writes there and is
//! released there, against the loopback store. The store's own documents are the oracle:
//! while the moved guard holds, a second owner is refused; once the thread has released, the
//! lock document is a free lease again and the second owner is granted. The twin: the same
//! guard dropped in the thread without `release()` still frees the lock (the drop sends the
//! release), and a guard that is leaked (`mem::forget`) leaves the lease held, which the
//! second owner sees.

use std::sync::Arc;
use std::time::Duration;

use lockwright::docstore::{HttpStore, LeaseGuard, LeaseLock};
use lockwright_model::docstore::store::Source;
use lockwright_testkit::docstore::LoopbackServer;
use serde_json::json;

const LOCKS: &str = "files-lock";

fn lock(server: &LoopbackServer, owner: &str) -> Arc<LeaseLock<HttpStore>> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    Arc::new(LeaseLock::new(store, LOCKS, "1", Duration::from_secs(30)).with_owner(owner))
}

/// Compile-time: the owned guard can cross threads.
fn assert_send<T: Send + 'static>(_: &T) {}

#[test]
fn an_owned_guard_moves_into_a_thread_and_is_released_there() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();

    let guard: LeaseGuard<'static, HttpStore> = a.try_acquire_owned().unwrap();
    assert_send(&guard);
    let token = guard.token();
    let writer = std::thread::spawn(move || {
        let mut guard = guard;
        guard.ensure_valid().unwrap();
        {
            let mut data = guard.claim("files", "1").unwrap();
            data.read().unwrap();
            data.write(&json!({"name": "from the thread"})).unwrap();
        }
        guard
    });
    let guard = writer.join().unwrap();
    assert_eq!(guard.token(), token);
    // Still held while the guard lives, wherever it is.
    assert!(b.try_acquire().unwrap_err().is_held());
    std::thread::spawn(move || guard.release().unwrap())
        .join()
        .unwrap();
    assert_eq!(
        server.service().get(LOCKS, "1").map(|d| d.source),
        Some(Source::Empty),
        "released to a free lease by the thread"
    );
    let doc = server
        .service()
        .get("files", "1")
        .expect("the data document");
    assert!(
        matches!(doc.source, Source::Data { fence: Some(_) }),
        "claimed and written from the thread: {}",
        doc.source
    );
    b.try_acquire_owned().unwrap().release().unwrap();

    // acquire_owned waits as acquire does, and a guard dropped in a thread releases.
    let g = a
        .acquire_owned(Duration::from_secs(5), Duration::from_millis(10))
        .unwrap();
    std::thread::spawn(move || drop(g)).join().unwrap();
    assert_eq!(
        server.service().get(LOCKS, "1").map(|d| d.source),
        Some(Source::Empty),
        "a drop in the thread released it"
    );

    // Twin: a guard that is never released nor dropped keeps the lease; the second owner is
    // refused (the check above would catch a guard whose release does not reach the store).
    let g = a.try_acquire_owned().unwrap();
    std::thread::spawn(move || std::mem::forget(g))
        .join()
        .unwrap();
    assert!(b.try_acquire().unwrap_err().is_held());
}
