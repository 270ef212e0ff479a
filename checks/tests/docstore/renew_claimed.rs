//! A renewal keeps the claim (issue #35, item 3). The fencing token is the acquire's
//! `_seq_no`/`_primary_term`; a claimed data document holds it as its fence, and every read of
//! the claimed session checks that the fence is still the holder's token. A renewal is a write
//! of the lock document, so it has a version of its own: when `renew()` made that version the
//! token (as it did before this test), the next read found the claimed token in the fence,
//! took it for a newer holder's and reported `Superseded` — every renewing holder lost its
//! session. The oracle is the loopback server's own documents, read with plain `GET`s (the
//! loopback keeps a data document's fence and version, not its other fields): the data
//! document must have taken the write made after the renewal, still fenced with the claim, and
//! the lock document must be free after the release (another owner acquires at once, well
//! inside the 30 s lease).
//!
//! Failing before the fix: with `renew()` replacing the token, `read()` after the renewal
//! returns `Superseded` (checked by reverting `impl/src/docstore/guard.rs`).

use std::time::Duration;

use lockwright::docstore::{DocStore, HttpStore, LeaseLock};
use lockwright_testkit::docstore::LoopbackServer;
use serde_json::json;

fn lock(server: &LoopbackServer, owner: &str) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(store, "files-lock", "1", Duration::from_secs(30)).with_owner(owner)
}

#[test]
fn renew_keeps_the_claimed_session() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut g = a.try_acquire().unwrap();
    let token = g.token();
    {
        let mut data = g.claim("files", "1").unwrap();
        data.read().unwrap();
        data.write(&json!({"pages": 1})).unwrap();
    }
    let before = a
        .store()
        .get("files", "1")
        .unwrap()
        .expect("the data document");
    g.renew().unwrap();
    g.renew().unwrap();
    assert_eq!(g.token(), token, "the fencing token stays the acquire's");
    // The session goes on after the renewals: the read finds its own token in the fence.
    g.read("files", "1").unwrap();
    g.fenced_write("files", "1", &json!({"pages": 2})).unwrap();

    // Oracle: the server's documents, not the guard's answers.
    let data = a
        .store()
        .get("files", "1")
        .unwrap()
        .expect("the data document");
    assert!(
        data.token > before.token,
        "the write after the renewals landed"
    );
    let fence = json!({"primary_term": token.primary_term, "seq_no": token.seq_no});
    assert_eq!(data.source["fence"], fence, "still fenced with the claim");
    let lockdoc = a.store().get("files-lock", "1").unwrap().expect("the lock");
    assert!(
        lockdoc.token > token,
        "the renewals wrote the lock document"
    );
    assert_eq!(lockdoc.source["owner"], json!("owner-a"));

    // The release is conditioned on the renewal's version: it frees the lease at once.
    g.release().unwrap();
    let h = b
        .try_acquire()
        .expect("released: another owner acquires at once");
    assert!(
        h.token() > lockdoc.token,
        "a later grant orders after the renewals"
    );
}

/// A renewal whose reply was lost, then sent again (issue #35, item 5): the lost one was
/// applied, so the document's version moved on and the retry, conditioned on the old version,
/// is refused. Before the fix that read as `NotOwner` — a holder whose own renewal landed
/// declared its lock lost. The guard now reads the document back: still this owner's, so the
/// lost renewal was its own; it adopts that version and renews again. Oracle: the loopback's
/// documents (the lock document is free after the release, so another owner acquires at once)
/// and the claimed session going on.
#[test]
fn a_renewal_sent_again_after_a_lost_reply_keeps_the_lock() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut g = a.try_acquire().unwrap();
    let token = g.token();
    {
        let mut data = g.claim("files", "1").unwrap();
        data.read().unwrap();
    }
    let before = a
        .store()
        .get("files-lock", "1")
        .unwrap()
        .expect("lock document");
    // Applied, answered after the client's 1 s timeout.
    server.lose_next_reply(Duration::from_millis(2_500));
    let e = g.renew().unwrap_err();
    assert!(e.store_error().is_some_and(|s| s.no_answer()), "{e}");
    let applied = a
        .store()
        .get("files-lock", "1")
        .unwrap()
        .expect("lock document");
    assert_ne!(applied.token, before.token, "the lost renewal was applied");
    g.renew().expect("the retry finds its own applied renewal");
    assert_eq!(g.token(), token, "the fencing token stays the acquire's");
    g.read("files", "1").unwrap();
    g.fenced_write("files", "1", &json!({"pages": 3})).unwrap();
    g.release().unwrap();
    let _h = b
        .try_acquire()
        .expect("released: the lock document is free");
}

/// The twin: after a lost renewal, the lock document was replaced (an operator deleted it and
/// installed it again, too early) and another owner took the lock, all inside this holder's
/// lease. The retry is refused as a conflict, the read-back finds another owner, and the
/// renewal reports `NotOwner`, never a renewal.
#[test]
fn a_renewal_sent_again_after_another_owner_took_over_is_not_owner() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let mut g = a.try_acquire().unwrap();
    server.lose_next_reply(Duration::from_millis(2_500));
    assert!(g.renew().is_err());
    a.store().delete("files-lock", "1").unwrap();
    lockwright_testkit::docstore::create_lock_document(&b).unwrap();
    let _h = b.try_acquire().unwrap();
    let e = g.renew().unwrap_err();
    assert!(
        matches!(e, lockwright::docstore::DocLockError::NotOwner { .. }),
        "{e}"
    );
    let doc = a
        .store()
        .get("files-lock", "1")
        .unwrap()
        .expect("lock document");
    assert_eq!(doc.source["owner"], "owner-b", "b still holds");
}
