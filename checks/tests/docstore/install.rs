//! The lock document's install, kept apart from acquiring and guarded (issue #35, item 2;
//! the model's `reinstall` fault, rows 45–47). After the lock index is lost, every restarting
//! client used to install the lock document again at once (`PUT _create {}`, in the program
//! that acquires): a new client was granted while the old holder still held, and the
//! re-created index's counters handed out tokens equal to or below the old fence. The oracle
//! is the loopback server: who it grants, and which claims it accepts.
//!
//! Each test has its twin on the old install (`create_lock_document`: `PUT _create {}`), which
//! fails the same assertion: the failing-before check.

use std::time::Duration;

use lockwright::docstore::{DocLockError, DocStore, HttpStore, LeaseLock};
use lockwright_testkit::docstore::{create_lock_document, install_fresh, LoopbackServer};

const LEASE: Duration = Duration::from_millis(1_000);

fn lock(server: &LoopbackServer, owner: &str) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(
        &server.url(),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
    LeaseLock::new(store, "files-lock", "1", LEASE).with_owner(owner)
}

/// A holds the lock and has claimed `files/1` when the lock index is lost; B installs the lock
/// document again at once, with `guarded` (the fix) or with the old `PUT _create {}`.
/// Returns whether B was granted while A's `ensure_valid` still passed.
fn second_grant_while_the_first_holds(guarded: bool) -> bool {
    let _quiet = crate::timing();
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    install_fresh(&a).unwrap();
    let mut ga = a.try_acquire().unwrap();
    drop(ga.claim("files", "1").unwrap());
    server.recreate_index("files-lock");
    if guarded {
        assert!(b.install_lock(&[("files", "1")]).unwrap(), "created");
    } else {
        create_lock_document(&b).unwrap();
    }
    let granted = match b.try_acquire() {
        Ok(g) => {
            std::mem::forget(g);
            true
        }
        Err(e) if e.is_held() => false,
        Err(e) => panic!("{e}"),
    };
    let a_valid = ga.ensure_valid().is_ok();
    std::mem::forget(ga);
    granted && a_valid
}

#[test]
fn a_reinstall_grants_nobody_while_an_old_lease_may_be_live() {
    assert!(!second_grant_while_the_first_holds(true));
}

#[test]
fn the_unguarded_reinstall_grants_a_second_holder() {
    assert!(
        second_grant_while_the_first_holds(false),
        "the twin must show two holders"
    );
}

/// A's lock was taken three times before the loss, so its fence is `seq 5`; the re-created
/// index starts again at `seq 0`. Returns B's claim after the reservation has passed.
fn claim_after_reinstall(data: &[(&str, &str)]) -> Result<(), DocLockError> {
    let _quiet = crate::timing();
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    install_fresh(&a).unwrap();
    for _ in 0..2 {
        a.try_acquire().unwrap().release().unwrap();
    }
    let mut ga = a.try_acquire().unwrap();
    drop(ga.claim("files", "1").unwrap());
    std::mem::forget(ga);
    server.recreate_index("files-lock");
    b.install_lock(data).unwrap();
    let mut gb = b
        .acquire(Duration::from_secs(3), Duration::from_millis(100))
        .expect("granted once the reservation has passed");
    let claimed = gb.claim("files", "1").map(|_| ());
    std::mem::forget(gb);
    claimed
}

#[test]
fn the_install_starts_tokens_above_the_data_fence() {
    claim_after_reinstall(&[("files", "1")]).expect("the claim is above the old fence");
}

/// Twin: installed without naming the data document, the new tokens start below the old
/// fence and every claim is refused.
#[test]
fn an_install_below_the_fence_leaves_every_claim_refused() {
    let err = claim_after_reinstall(&[]).unwrap_err();
    assert!(matches!(err, DocLockError::Fenced { .. }), "{err}");
}

/// The install never touches an existing lock document, and `install_scripts` never touches
/// one at all (before issue #35 it installed the lock document, and the module example called
/// it in the program that acquires).
#[test]
fn installing_never_touches_an_existing_lock_document() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    let b = lock(&server, "owner-b");
    b.install_scripts().unwrap();
    assert_eq!(
        server.service().get("files-lock", "1"),
        None,
        "scripts only"
    );
    install_fresh(&a).unwrap();
    let _ga = a.try_acquire().unwrap();
    let before = server.service().get("files-lock", "1");
    b.install_scripts().unwrap();
    assert!(!b.install_lock(&[("files", "1")]).unwrap(), "already there");
    assert_eq!(server.service().get("files-lock", "1"), before, "untouched");
    assert!(b.try_acquire().unwrap_err().is_held());
    let store = HttpStore::new(&server.url());
    assert!(store.get("files-lock", "1-pad").unwrap().is_none());
}

/// A first deployment installs the lock before its data index exists: Elasticsearch answers
/// the GET of a document in a missing index with 404 `index_not_found_exception` (not
/// `found: false`), which the loopback now answers too. `install_lock` reads that as "no fence
/// yet" and installs; the store's own answer is the oracle (the loopback's index list).
#[test]
fn the_lock_installs_before_its_data_index_exists() {
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    a.install_scripts().unwrap();
    assert!(
        a.install_lock(&[("never-made-data", "1")]).unwrap(),
        "installed"
    );
    // The new document is reserved to the installer for one lease; then it is granted.
    let g = a
        .acquire(LEASE * 3, Duration::from_millis(50))
        .expect("granted once the reservation passed");
    g.release().unwrap();
}
