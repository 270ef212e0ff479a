//! `obtain_with_timeout` / `SleepingLockFactory` (Lucene's SleepingLockWrapper) retry only
//! while the lock is held, return other errors at once, and keep the holder in the timeout
//! error.

use std::time::{Duration, Instant};

use lockwright::sys::OsLockKind;
use lockwright::{
    obtain_with_timeout, LockError, LockFactory, NativeFsLockFactory, SimpleFsLockFactory,
    SleepingLockFactory,
};

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
    let msg = err.to_string();
    assert!(
        msg.contains("timed out") && msg.contains("write.lock") && msg.contains("pid"),
        "{msg}"
    );
    assert!(std::error::Error::source(&err).is_some());
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
    let sleeping = SleepingLockFactory::new(f, Duration::from_secs(10), POLL);
    let lock = sleeping.try_obtain(dir.path(), "write.lock");
    assert!(lock.is_ok(), "{lock:?}");
    releaser.join().unwrap();
}

#[test]
fn other_errors_return_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let f = SleepingLockFactory::new(
        NativeFsLockFactory::new(OsLockKind::Ofd),
        Duration::from_secs(30),
        POLL,
    );
    let start = Instant::now();
    assert!(matches!(
        f.try_obtain(dir.path(), "a/b"),
        Err(LockError::BadLockName { .. })
    ));
    assert!(matches!(
        f.try_obtain(&file, "write.lock"),
        Err(LockError::NotADirectory { .. })
    ));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "must not wait for the timeout"
    );
}
