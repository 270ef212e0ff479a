//! Lucene's `BaseLockFactoryTestCase` behaviours, in our words, for every factory and kind
//! (the verifying wrapper included): a second obtain fails with the right error, obtain works
//! again after close, a lock is valid right after obtain; `try_obtain` never waits,
//! `obtain_timeout` gives up with the last "held" error, `obtain_blocking` waits for the
//! release. The `LockHandle` under every `Lock` closes idempotently and reports
//! `AlreadyClosed` after close (the `Lock` guard's own `close` consumes it).

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lockwright::{
    LockError, LockFactory, NativeFsLockFactory, NoLockFactory, OsLockKind, SimpleFsLockFactory,
    SingleInstanceLockFactory,
};

/// Every factory that excludes, with a label for failure messages.
fn excluding_factories() -> Vec<(&'static str, Box<dyn LockFactory>)> {
    let mut v: Vec<(&'static str, Box<dyn LockFactory>)> = common::KINDS
        .iter()
        .map(|&k| {
            (
                k.name(),
                Box::new(NativeFsLockFactory::new(k)) as Box<dyn LockFactory>,
            )
        })
        .collect();
    v.push(("simple", Box::new(SimpleFsLockFactory::new())));
    v.push((
        "single-instance",
        Box::new(SingleInstanceLockFactory::new()),
    ));
    v.push((
        "verifying(ofd)",
        Box::new(common::verifying(NativeFsLockFactory::new(OsLockKind::Ofd))),
    ));
    v.push((
        "verifying(simple)",
        Box::new(common::verifying(SimpleFsLockFactory::new())),
    ));
    v
}

fn assert_names_path(err: &LockError, dir: &Path) {
    let msg = err.to_string();
    assert!(
        msg.contains(&dir.display().to_string()),
        "message must name the path: {msg}"
    );
}

#[test]
fn second_obtain_fails_with_held_error_while_held() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
        assert!(err.is_held(), "{label}: {err:?}");
        // SimpleFs (also under the verifying wrapper, which passes errors through unchanged)
        // cannot tell this process from another one with the same pid; it names the pid from
        // the record.
        let simple = label.contains("simple");
        match (simple, &err) {
            (true, LockError::HeldByOtherProcess { pid, holder, .. }) => {
                assert_eq!(*pid, Some(std::process::id() as i32), "{label}");
                assert!(
                    holder.as_deref().unwrap().contains("this process's pid"),
                    "{label}: {err}"
                );
            }
            (false, LockError::HeldByThisProcess { .. }) => {}
            _ => panic!("{label}: wrong error {err:?}"),
        }
        assert_names_path(&err, dir.path());
        lock.ensure_valid().unwrap();
        drop(lock);
    }
}

#[test]
fn obtain_succeeds_again_after_close() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        lock.close().unwrap();
        let again = f.try_obtain(dir.path(), "write.lock");
        assert!(again.is_ok(), "{label}: {again:?}");
    }
}

#[test]
fn obtain_succeeds_again_after_drop() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        drop(f.try_obtain(dir.path(), "write.lock").unwrap());
        let again = f.try_obtain(dir.path(), "write.lock");
        assert!(again.is_ok(), "{label}: {again:?}");
    }
}

#[test]
fn double_close_is_ok() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        // `Lock::close` consumes the guard; its handle must tolerate a second close, which is
        // what the guard's drop does after an explicit close.
        let mut handle = f
            .try_obtain(dir.path(), "write.lock")
            .unwrap()
            .into_handle();
        handle.close().unwrap_or_else(|e| panic!("{label}: {e}"));
        handle
            .close()
            .unwrap_or_else(|e| panic!("{label}: second close: {e}"));
    }
}

#[test]
fn lock_is_valid_right_after_obtain() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        lock.ensure_valid()
            .unwrap_or_else(|e| panic!("{label}: {e}"));
    }
}

#[test]
fn lock_is_invalid_after_close() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let mut handle = f
            .try_obtain(dir.path(), "write.lock")
            .unwrap()
            .into_handle();
        handle.close().unwrap();
        let err = handle.ensure_valid().unwrap_err();
        assert!(
            matches!(err, LockError::AlreadyClosed { .. }),
            "{label}: {err:?}"
        );
        assert_names_path(&err, dir.path());
    }
}

#[test]
fn different_names_do_not_conflict() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let a = f.try_obtain(dir.path(), "a.lock").unwrap();
        let b = f.try_obtain(dir.path(), "b.lock");
        assert!(b.is_ok(), "{label}: {b:?}");
        drop(a);
    }
}

#[test]
fn native_never_deletes_the_lock_file_and_simple_does() {
    let dir = tempfile::tempdir().unwrap();
    for kind in common::KINDS {
        let lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        lock.close().unwrap();
        assert!(
            dir.path().join("write.lock").is_file(),
            "{kind:?} deleted the lock file"
        );
        assert_eq!(
            std::fs::metadata(dir.path().join("write.lock"))
                .unwrap()
                .len(),
            0
        );
    }
    let lock = SimpleFsLockFactory::new()
        .try_obtain(dir.path(), "simple.lock")
        .unwrap();
    assert!(dir.path().join("simple.lock").is_file());
    lock.close().unwrap();
    assert!(
        !dir.path().join("simple.lock").exists(),
        "SimpleFs must delete its own file on close"
    );
}

#[test]
fn obtain_creates_missing_directories() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b/c");
        let lock = f.try_obtain(&nested, "write.lock");
        assert!(lock.is_ok(), "{label}: {lock:?}");
    }
}

#[test]
fn lock_path_is_canonical_for_filesystem_factories() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for kind in common::KINDS {
        let f = NativeFsLockFactory::new(kind);
        let lock = f.try_obtain(&link, "write.lock").unwrap();
        assert_eq!(lock.path(), real.join("write.lock"));
        // The same directory spelled another way is the same lock.
        let err = f.try_obtain(&real, "write.lock").unwrap_err();
        assert!(
            matches!(err, LockError::HeldByThisProcess { .. }),
            "{kind:?}: {err:?}"
        );
    }
}

#[test]
fn factories_sharing_the_process_held_set_exclude_each_other() {
    // Two factory values, one process: Lucene's "held by this virtual machine".
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let a = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        let err = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap_err();
        assert!(
            matches!(err, LockError::HeldByThisProcess { .. }),
            "{kind:?}: {err:?}"
        );
        drop(a);
    }
}

/// Twin: the checks above would catch a factory that does not exclude. `NoLockFactory` is
/// that factory, by design.
#[test]
fn no_lock_factory_lets_every_obtain_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let f = NoLockFactory;
    let mut a = f
        .try_obtain(dir.path(), "write.lock")
        .unwrap()
        .into_handle();
    let b = f.try_obtain(dir.path(), "write.lock").unwrap();
    a.close().unwrap();
    a.ensure_valid().unwrap(); // documented: always "valid"
    b.ensure_valid().unwrap();
    assert!(
        !dir.path().join("write.lock").exists(),
        "NoLockFactory touches no file"
    );
}

// ---- the three ways to obtain ----

#[test]
fn try_obtain_never_waits_while_held() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let _held = f.try_obtain(dir.path(), "write.lock").unwrap();
        let start = Instant::now();
        let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
        assert!(err.is_held(), "{label}: {err:?}");
        // One attempt is a few system calls; the bound only has to tell "no wait" from a
        // poll interval or a sleep on a loaded machine.
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{label}: try_obtain waited {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn obtain_timeout_gives_up_with_the_last_held_error_and_works_once_released() {
    for (label, f) in excluding_factories() {
        let dir = tempfile::tempdir().unwrap();
        let held = f.try_obtain(dir.path(), "write.lock").unwrap();
        let start = Instant::now();
        let err = f
            .obtain_timeout(dir.path(), "write.lock", Duration::from_millis(50))
            .unwrap_err();
        assert!(start.elapsed() >= Duration::from_millis(50), "{label}");
        match &err {
            LockError::TimedOut { last, .. } => assert!(last.is_held(), "{label}: {last:?}"),
            other => panic!("{label}: {other:?}"),
        }
        assert_names_path(&err, dir.path());
        drop(held);
        let again = f.obtain_timeout(dir.path(), "write.lock", Duration::ZERO);
        assert!(again.is_ok(), "{label}: {again:?}");
    }
}

#[test]
fn obtain_blocking_waits_for_the_release() {
    for (label, f) in excluding_factories() {
        let f: Arc<dyn LockFactory> = Arc::from(f);
        let dir = tempfile::tempdir().unwrap();
        let held = f.try_obtain(dir.path(), "write.lock").unwrap();
        let obtained = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (f, dir, obtained) = (
                Arc::clone(&f),
                dir.path().to_path_buf(),
                Arc::clone(&obtained),
            );
            std::thread::spawn(move || {
                let lock = f.obtain_blocking(&dir, "write.lock");
                obtained.store(true, Ordering::SeqCst);
                lock.map(|l| l.close())
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !obtained.load(Ordering::SeqCst),
            "{label}: obtain_blocking returned while the lock was held"
        );
        held.close().unwrap();
        let result = waiter.join().unwrap();
        assert!(matches!(result, Ok(Ok(()))), "{label}: {result:?}");
    }
}

#[test]
fn waiting_obtains_return_other_errors_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    for (label, f) in excluding_factories() {
        let start = Instant::now();
        assert!(
            matches!(
                f.obtain_blocking(dir.path(), "a/b"),
                Err(LockError::BadLockName { .. })
            ),
            "{label}"
        );
        assert!(
            matches!(
                f.obtain_timeout(dir.path(), "a/b", Duration::from_secs(30)),
                Err(LockError::BadLockName { .. })
            ),
            "{label}"
        );
        if label != "single-instance" {
            // SingleInstance never touches the filesystem, so a file as "directory" is fine.
            let err = f.obtain_blocking(&file, "write.lock").unwrap_err();
            assert!(
                matches!(err, LockError::NotADirectory { .. }),
                "{label}: {err:?}"
            );
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{label}: must not wait for the timeout"
        );
    }
}
