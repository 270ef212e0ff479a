//! Lucene's `BaseLockFactoryTestCase` behaviours, in our words, for every factory and kind:
//! a second obtain fails with the right error, obtain works again after close, close is
//! idempotent, a lock is valid right after obtain and invalid after close.

mod common;

use std::path::Path;

use lockwright::{
    LockError, LockFactory, NativeFsLockFactory, NoLockFactory, SimpleFsLockFactory,
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
        match (label, &err) {
            // SimpleFs cannot tell this process from another one with the same pid; it names
            // the pid from the record.
            ("simple", LockError::HeldByOtherProcess { pid, holder, .. }) => {
                assert_eq!(*pid, Some(std::process::id() as i32), "{label}");
                assert!(
                    holder.as_deref().unwrap().contains("this process's pid"),
                    "{label}: {err}"
                );
            }
            (_, LockError::HeldByThisProcess { .. }) if label != "simple" => {}
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
        let mut lock = f.try_obtain(dir.path(), "write.lock").unwrap();
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
        let mut lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        lock.close().unwrap_or_else(|e| panic!("{label}: {e}"));
        lock.close()
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
        let mut lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        lock.close().unwrap();
        let err = lock.ensure_valid().unwrap_err();
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
        let mut lock = NativeFsLockFactory::new(kind)
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
    let mut lock = SimpleFsLockFactory::new()
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
    let mut a = f.try_obtain(dir.path(), "write.lock").unwrap();
    let b = f.try_obtain(dir.path(), "write.lock").unwrap();
    a.close().unwrap();
    a.ensure_valid().unwrap(); // documented: always "valid"
    b.ensure_valid().unwrap();
    assert!(
        !dir.path().join("write.lock").exists(),
        "NoLockFactory touches no file"
    );
}
