//! The fixed recipe's own requests over HTTP (`docs/docstore.md` §6, "The store's own faults";
//! the model's rows 36–44), against the loopback store: a lock document that is gone is never
//! created again by an acquire (404, an error naming the request, no grant) until it is
//! installed; and a holder whose grant was taken over reads that back right after its claim and
//! stops before it reads or writes the data. Each has its twin on the recipe before the fix
//! (`leased-upsert`, test-only), which grants a second holder instead.

use std::time::Duration;

use lockwright::docstore::{DocLockError, DocStore, HttpStore, LeaseLock};
use lockwright_model::docstore::store::Source;
use lockwright_testkit::docstore::{Defect, LoopbackServer, WithDefect};

const LOCKS: &str = "files-lock";

fn lock(server: &LoopbackServer, owner: &str) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(store, LOCKS, "1", Duration::from_secs(30)).with_owner(owner)
}

fn delete_lock_document(server: &LoopbackServer) {
    let store = HttpStore::new(&server.url());
    store.delete(LOCKS, "1").expect("the operator's delete");
}

#[test]
fn the_fixed_recipe_gives_no_grant_without_its_lock_document() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let ga = a.try_acquire().unwrap();
    // An operator deletes the lock document under A: B's acquire is an error, not a grant.
    delete_lock_document(&server);
    let err = b.try_acquire().unwrap_err();
    assert!(matches!(err, DocLockError::Store { .. }), "{err}");
    assert!(!err.is_held(), "a missing document is not contention");
    let msg = crate::chain(&err);
    assert!(
        msg.contains(&format!("POST {}/files-lock/_update/1: 404", server.url()))
            && msg.contains("document_missing_exception"),
        "{msg}"
    );
    assert_eq!(server.service().get(LOCKS, "1"), None, "nothing created it");
    drop(ga);
    // Installed again (by an operator, once A's lease is over): acquired.
    lockwright_testkit::docstore::create_lock_document(&b).unwrap();
    let gb = b.try_acquire().unwrap();
    gb.release().unwrap();
    assert_eq!(
        server.service().get(LOCKS, "1").map(|d| d.source),
        Some(Source::Empty),
        "released to a free lease, the document kept"
    );

    // Twin: the recipe before the fix creates the missing document and grants B.
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a").with_defect(Defect::LeasedUpsert);
    let b = lock(&server, "owner-b").with_defect(Defect::LeasedUpsert);
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let _ga = a.try_acquire().unwrap();
    delete_lock_document(&server);
    assert!(b.try_acquire().is_ok(), "a second holder");
}

#[test]
fn a_holder_whose_grant_was_taken_over_stops_at_its_read_back() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut ga = a.try_acquire().unwrap();
    // The lock document is lost and installed again too early: B is granted while A still
    // believes it holds (as after a fail-over that rolled A's acquire back).
    delete_lock_document(&server);
    lockwright_testkit::docstore::create_lock_document(&b).unwrap();
    let gb = b.try_acquire().unwrap();
    assert!(gb.token() > ga.token());
    // A's claim lands (B has not claimed yet), then A reads the lock document back: not its
    // token, so it stops before it reads or writes the data.
    let err = ga.claim("files", "1").unwrap_err();
    assert!(
        matches!(err, DocLockError::Superseded { what, .. } if what == "the lock document"),
        "{err}"
    );
    assert!(err.is_lost());
    let reads = server
        .requests()
        .iter()
        .filter(|r| r.as_str() == "GET /files/_doc/1")
        .count();
    assert_eq!(reads, 0, "A never read the data");
    drop(ga); // stopped: it sends no release
    assert!(!server
        .requests()
        .iter()
        .any(|r| r.starts_with("POST /files-lock/_update/1?if_seq_no")));
    gb.release().unwrap();

    // Twin: before the fix, A's claim is followed by nothing that checks the grant.
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a").with_defect(Defect::LeasedUpsert);
    let b = lock(&server, "owner-b").with_defect(Defect::LeasedUpsert);
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut ga = a.try_acquire().unwrap();
    delete_lock_document(&server);
    let _gb = b.try_acquire().unwrap();
    assert!(ga.claim("files", "1").is_ok(), "A claims and goes on");
}

/// The loopback's store, recording the `params` of every stored-script call the client makes.
struct Recording {
    inner: HttpStore,
    params: std::sync::Mutex<Vec<(&'static str, serde_json::Value)>>,
}

impl Recording {
    fn note(&self, script: &lockwright::docstore::StoredScript) {
        self.params
            .lock()
            .unwrap()
            .push((script.id, script.params.clone()));
    }
}

impl DocStore for Recording {
    fn put_script(&self, id: &str, source: &str) -> Result<(), lockwright::docstore::StoreError> {
        self.inner.put_script(id, source)
    }
    fn create(
        &self,
        index: &str,
        id: &str,
        source: &serde_json::Value,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.inner.create(index, id, source)
    }
    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &lockwright::docstore::StoredScript,
        upsert: &serde_json::Value,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.note(script);
        self.inner.upsert_with_script(index, id, script, upsert)
    }
    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &lockwright::docstore::StoredScript,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.note(script);
        self.inner.update_with_script(index, id, script)
    }
    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &lockwright::docstore::StoredScript,
        token: lockwright::docstore::Token,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.note(script);
        self.inner.update_with_script_if(index, id, script, token)
    }
    fn update_doc(
        &self,
        index: &str,
        id: &str,
        doc: &serde_json::Value,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.inner.update_doc(index, id, doc)
    }
    fn delete_if_seq_no(
        &self,
        index: &str,
        id: &str,
        token: lockwright::docstore::Token,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.inner.delete_if_seq_no(index, id, token)
    }
    fn delete(
        &self,
        index: &str,
        id: &str,
    ) -> Result<lockwright::docstore::Written, lockwright::docstore::StoreError> {
        self.inner.delete(index, id)
    }
    fn get(
        &self,
        index: &str,
        id: &str,
    ) -> Result<Option<lockwright::docstore::Doc>, lockwright::docstore::StoreError> {
        self.inner.get(index, id)
    }
    fn now(&self) -> u64 {
        self.inner.now()
    }
    fn sleep(&self, d: Duration) {
        self.inner.sleep(d)
    }
}

/// A fenced write carries any patch of fields (not only `name`), sent whole as the
/// `fenced-write` script's `patch`; a patch that is not an object, or names the recipe's own
/// `fence`, is refused before anything is sent.
#[test]
fn a_fenced_write_carries_any_patch_and_refuses_one_that_names_the_fence() {
    let server = LoopbackServer::start();
    let store = Recording {
        inner: HttpStore::new(&server.url()),
        params: std::sync::Mutex::new(Vec::new()),
    };
    let a = LeaseLock::new(store, LOCKS, "1", Duration::from_secs(30)).with_owner("owner-a");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut g = a.try_acquire().unwrap();
    let mut data = g.claim("files", "1").unwrap();
    data.read().unwrap();
    let patch = serde_json::json!({"name": "report.pdf", "pages": 12, "tags": ["q3"]});
    data.write(&patch).unwrap();
    let sent = data_patches(&a);
    assert_eq!(sent, vec![patch], "the patch, whole, as `params.patch`");

    let before = server.requests().len();
    for bad in [
        serde_json::json!("report.pdf"),
        serde_json::json!({"fence": {"primary_term": 9, "seq_no": 9}}),
    ] {
        let err = data.write(&bad).unwrap_err();
        assert!(matches!(err, DocLockError::BadPatch { .. }), "{err}");
        assert!(err.to_string().contains("files-lock/1"), "{err}");
    }
    assert_eq!(server.requests().len(), before, "nothing sent");
    assert_eq!(data_patches(&a).len(), 1);
    g.release().unwrap();
}

fn data_patches(lock: &LeaseLock<Recording>) -> Vec<serde_json::Value> {
    lock.store()
        .params
        .lock()
        .unwrap()
        .iter()
        .filter(|(id, _)| lockwright::docstore::scripts::base_name(id) == "fenced-write")
        .map(|(_, p)| p["patch"].clone())
        .collect()
}
