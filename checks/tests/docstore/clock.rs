//! The lease is measured on the SERVER's clock: `lease-acquire` reads `ctx._now`
//! and sends only the lease's length, so clients whose wall clocks disagree still agree on who
//! holds the lock. Each client's own deadline runs on its local clock (`DocStore::now`,
//! monotonic in `HttpStore`), which only ever compares with itself.
//!
//! The client clock is injected: `Skewed` wraps `HttpStore` and reports a wall clock off by a
//! fixed amount. The oracle is agreement: at most one client may pass `ensure_valid` at once.
//! The twin runs the same two skewed clients through the test-only `lease-acquire-noop`
//! recipe, which still sends the client's `now` and `expires` (the recipe's shape before this
//! change): the client whose clock is an hour behind writes a lease that has already passed
//! for the correct client, which takes the lock while the first still believes it holds it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lockwright::docstore::{
    Doc, DocLockError, DocStore, HttpStore, LeaseLock, StoreError, StoredScript, Token, Written,
};
use lockwright_testkit::docstore::{Defect, LoopbackServer, WithDefect};
use serde_json::Value;

/// `HttpStore` with a wall clock `skew_ms` off (negative: behind).
struct Skewed {
    inner: HttpStore,
    skew_ms: i64,
}

impl DocStore for Skewed {
    fn put_script(&self, id: &str, source: &str) -> Result<(), StoreError> {
        self.inner.put_script(id, source)
    }
    fn create(&self, index: &str, id: &str, source: &Value) -> Result<Written, StoreError> {
        self.inner.create(index, id, source)
    }
    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        upsert: &Value,
    ) -> Result<Written, StoreError> {
        self.inner.upsert_with_script(index, id, script, upsert)
    }
    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
    ) -> Result<Written, StoreError> {
        self.inner.update_with_script(index, id, script)
    }
    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        token: Token,
    ) -> Result<Written, StoreError> {
        self.inner.update_with_script_if(index, id, script, token)
    }
    fn update_doc(&self, index: &str, id: &str, doc: &Value) -> Result<Written, StoreError> {
        self.inner.update_doc(index, id, doc)
    }
    fn delete_if_seq_no(&self, index: &str, id: &str, token: Token) -> Result<Written, StoreError> {
        self.inner.delete_if_seq_no(index, id, token)
    }
    fn delete(&self, index: &str, id: &str) -> Result<Written, StoreError> {
        self.inner.delete(index, id)
    }
    fn get(&self, index: &str, id: &str) -> Result<Option<Doc>, StoreError> {
        self.inner.get(index, id)
    }
    /// The injected client clock: this machine's wall clock, skewed.
    fn now(&self) -> u64 {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_millis();
        u64::try_from(i128::try_from(wall).expect("millis fit") + i128::from(self.skew_ms))
            .expect("a positive clock")
    }
    fn sleep(&self, d: Duration) {
        self.inner.sleep(d);
    }
}

const HOUR_MS: i64 = 3_600_000;

fn client(server: &LoopbackServer, owner: &str, skew_ms: i64) -> LeaseLock<Skewed> {
    let inner = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(
        Skewed { inner, skew_ms },
        "files-lock",
        "1",
        Duration::from_secs(30),
    )
    .with_owner(owner)
}

#[test]
fn clients_with_skewed_clocks_agree_on_who_holds() {
    let server = LoopbackServer::start();
    let behind = client(&server, "owner-behind", -HOUR_MS);
    let ahead = client(&server, "owner-ahead", HOUR_MS);
    lockwright_testkit::docstore::install_fresh(&behind).unwrap();
    let mut g = behind.try_acquire().unwrap();
    // The request carried no time of the client's: only the lease's length.
    let err = ahead.try_acquire().unwrap_err();
    assert!(matches!(err, DocLockError::Held { .. }), "{err}");
    assert!(g.ensure_valid().is_ok(), "the holder still holds");
    // And the other way round, once released.
    g.release().unwrap();
    let mut h = ahead.try_acquire().unwrap();
    let err = behind.try_acquire().unwrap_err();
    assert!(matches!(err, DocLockError::Held { .. }), "{err}");
    assert!(h.ensure_valid().is_ok());
}

#[test]
fn with_the_clients_clock_in_the_request_skewed_clients_both_hold() {
    let server = LoopbackServer::start();
    let behind = client(&server, "owner-behind", -HOUR_MS).with_defect(Defect::LeasedNoop);
    let correct = client(&server, "owner-correct", 0).with_defect(Defect::LeasedNoop);
    lockwright_testkit::docstore::install_fresh(&behind).unwrap();
    let mut g = behind.try_acquire().unwrap();
    // The lease `behind` wrote ended an hour ago by `correct`'s clock: it takes the lock.
    let mut h = correct
        .try_acquire()
        .expect("the client-clock recipe lets the second client in");
    // Both believe they hold it: the agreement the server clock gives is broken.
    assert!(g.ensure_valid().is_ok() && h.ensure_valid().is_ok());
    std::mem::forget(g);
    std::mem::forget(h);
}

fn plain(server: &LoopbackServer, owner: &str, lease: Duration) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(store, "files-lock", "1", lease).with_owner(owner)
}

#[test]
fn renew_extends_a_held_lease_on_the_server_and_locally() {
    let lease = Duration::from_millis(400);
    let server = LoopbackServer::start();
    let a = plain(&server, "owner-a", lease);
    let b = plain(&server, "owner-b", lease);
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut g = a.try_acquire().unwrap();
    let first = g.token();
    std::thread::sleep(Duration::from_millis(250));
    g.renew().unwrap();
    assert_eq!(g.token(), first, "the fencing token stays the acquire's");
    std::thread::sleep(Duration::from_millis(250));
    // 500 ms after the acquire, 250 ms after the renewal: still held, on both sides.
    assert!(g.ensure_valid().is_ok());
    assert!(matches!(b.try_acquire(), Err(DocLockError::Held { .. })));
    drop(g);

    // Twin: the same wait without the renewal loses the lease on both sides.
    let mut g = a.try_acquire().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(matches!(
        g.ensure_valid(),
        Err(DocLockError::LeaseExpired { .. })
    ));
    assert!(b.try_acquire().is_ok());
}

#[test]
fn renew_fails_once_the_lock_is_lost() {
    let server = LoopbackServer::start();
    let a = plain(&server, "owner-a", Duration::from_secs(30));
    let b = plain(&server, "owner-b", Duration::from_secs(30));
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut g = a.try_acquire().unwrap();
    // An operator deletes the lock document and installs it again at once (too early);
    // another owner takes the lock.
    a.store().delete("files-lock", "1").unwrap();
    lockwright_testkit::docstore::create_lock_document(&b).unwrap();
    let _h = b.try_acquire().unwrap();
    let err = g.renew().unwrap_err();
    assert!(matches!(err, DocLockError::NotOwner { .. }), "{err}");
    assert!(crate::chain(&err).contains("409"), "{err}");
    // The renewal changed nothing: the other owner still holds.
    assert_eq!(
        a.holder().unwrap().map(|(o, _)| o),
        Some("owner-b".to_owned())
    );
    // A lapsed local deadline sends nothing.
    let c = plain(&server, "owner-c", Duration::from_millis(50));
    drop(_h);
    let mut k = c.try_acquire().unwrap();
    std::thread::sleep(Duration::from_millis(80));
    let before = server.requests().len();
    assert!(matches!(k.renew(), Err(DocLockError::LeaseExpired { .. })));
    assert_eq!(server.requests().len(), before);
    std::mem::forget(k);
}
