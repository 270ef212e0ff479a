//! A `Lock` is `Send + Sync`: writer threads share one `Arc<Lock>` and each checks it before
//! its write (issue #25: `Lock` used to be `Send` only, so an `Arc<Lock>` could not cross
//! threads). The check that it compiles is the point; the run also shows that the shared lock
//! keeps excluding — while the threads hold it, another factory of this process is refused,
//! and tampering with the lock file is seen by every thread (twin: the same checks fail once
//! the file is replaced).

#![allow(clippy::disallowed_methods)] // the test replaces the lock file by hand

use std::sync::Arc;
use std::thread;

use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind};

#[test]
fn writer_threads_share_one_lock_and_all_see_it_invalidated() {
    let dir = tempfile::tempdir().unwrap();
    let factory = NativeFsLockFactory::new(OsLockKind::Ofd);
    let lock = Arc::new(factory.try_obtain(dir.path(), "write.lock").unwrap());

    let checks: Vec<_> = (0..4)
        .map(|_| {
            let lock = Arc::clone(&lock);
            thread::spawn(move || lock.ensure_valid())
        })
        .collect();
    for c in checks {
        c.join().unwrap().expect("valid in every thread");
    }
    let other = NativeFsLockFactory::new(OsLockKind::Ofd);
    assert!(matches!(
        other.try_obtain(dir.path(), "write.lock"),
        Err(LockError::HeldByThisProcess { .. })
    ));

    // Twin: replace the lock file (a new inode at the path); every thread now sees it.
    let path = dir.path().join("write.lock");
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"").unwrap();
    let checks: Vec<_> = (0..4)
        .map(|_| {
            let lock = Arc::clone(&lock);
            thread::spawn(move || lock.ensure_valid())
        })
        .collect();
    for c in checks {
        let e = c.join().unwrap().expect_err("invalidated in every thread");
        assert!(e.is_lost(), "{e:?}");
    }
    drop(lock);
}
