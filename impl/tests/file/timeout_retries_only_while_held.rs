//! `LockFactory::obtain_timeout` and `timeouts::obtain_with_timeout` (Lucene's
//! SleepingLockWrapper loop, with its poll interval) retry only while the lock is held, return
//! other errors at once, and keep the holder in the timeout error.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

use lockwright::file::sys::OsLockKind;
use lockwright::file::timeouts::obtain_with_timeout;
use lockwright::{LockError, LockFactory, NativeFsLockFactory, SimpleFsLockFactory};

const POLL: Duration = Duration::from_millis(5);

#[test]
fn times_out_while_held_and_keeps_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let f = SimpleFsLockFactory::new();
    let _held = f.try_obtain(dir.path(), "write.lock").unwrap();
    let start = Instant::now();
    let err = obtain_with_timeout(
        &f,
        dir.path(),
        "write.lock",
        Duration::from_millis(50),
        POLL,
    )
    .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(50));
    let LockError::TimedOut { last, waited, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(*waited >= Duration::from_millis(50));
    assert!(matches!(**last, LockError::HeldByOtherProcess { .. }));
    assert_eq!(err.holder_pid(), Some(std::process::id() as i32));
    assert!(err.is_held());
    // The message says what timed out; the holder is in the source (the last "held" error),
    // so the chain an error printer shows has each fact once.
    let msg = err.to_string();
    assert!(
        msg.contains("timed out") && msg.contains("write.lock"),
        "{msg}"
    );
    let source = std::error::Error::source(&err).expect("the last held error");
    let chain = format!("{msg}: {source}");
    assert!(chain.contains("pid"), "{chain}");
    assert!(!msg.contains(&source.to_string()), "said twice: {msg}");
}

#[test]
fn zero_timeout_tries_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = NativeFsLockFactory::new(OsLockKind::Ofd);
    assert!(obtain_with_timeout(&f, dir.path(), "write.lock", Duration::ZERO, POLL).is_ok());
    let _held = f.try_obtain(dir.path(), "write.lock").unwrap();
    let err = obtain_with_timeout(&f, dir.path(), "write.lock", Duration::ZERO, POLL).unwrap_err();
    assert!(matches!(err, LockError::TimedOut { .. }), "{err:?}");
}

#[test]
fn succeeds_once_the_holder_releases() {
    let dir = tempfile::tempdir().unwrap();
    let f = NativeFsLockFactory::new(OsLockKind::Ofd);
    let held = f.try_obtain(dir.path(), "write.lock").unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        drop(held);
    });
    let lock = f.obtain_timeout(dir.path(), "write.lock", Duration::from_secs(10));
    assert!(lock.is_ok(), "{lock:?}");
    releaser.join().unwrap();
}

#[test]
fn other_errors_return_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let f = NativeFsLockFactory::new(OsLockKind::Ofd);
    let wait = Duration::from_secs(30);
    let start = Instant::now();
    assert!(matches!(
        f.obtain_timeout(dir.path(), "a/b", wait),
        Err(LockError::BadLockName { .. })
    ));
    assert!(matches!(
        f.obtain_timeout(&file, "write.lock", wait),
        Err(LockError::NotADirectory { .. })
    ));
    assert!(matches!(
        obtain_with_timeout(&f, &file, "write.lock", wait, POLL),
        Err(LockError::NotADirectory { .. })
    ));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "must not wait for the timeout"
    );
}
