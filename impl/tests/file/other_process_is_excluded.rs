//! Across REAL processes (this test binary re-run as the holder): while a child holds the
//! lock the parent gets `HeldByOtherProcess` (with the child's pid where the kernel tells:
//! POSIX), and once the child is SIGKILLed the parent obtains at once (the kernel drops OS
//! locks of a dead process). SimpleFs, by contrast, never breaks a crashed holder's lock.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use common::{spawn_holder, KINDS};
use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind, SimpleFsLockFactory};

#[test]
#[ignore = "child-process helper: run by the other tests in this file"]
fn child_holds_lock() {
    common::child_holds_lock();
}

#[test]
fn child_holder_excludes_parent_for_every_kind() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let holder = spawn_holder(&child_test(), dir.path(), kind.name());
        let f = NativeFsLockFactory::new(kind);
        let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
        let LockError::HeldByOtherProcess { pid, .. } = &err else {
            panic!("{kind:?}: expected HeldByOtherProcess, got {err:?}");
        };
        match kind {
            // F_GETLK names the owning process of a POSIX lock.
            OsLockKind::Posix => assert_eq!(*pid, Some(holder.pid()), "{kind:?}"),
            // OFD locks belong to no process (l_pid = -1); flock cannot be probed.
            _ => assert_eq!(*pid, None, "{kind:?}"),
        }
        if kind == OsLockKind::Posix {
            assert!(
                err.to_string().contains(&format!("pid {}", holder.pid())),
                "{err}"
            );
        }
        // The failed attempt left nothing behind in this process: obtain works after release.
        holder.release();
        let lock = f.try_obtain(dir.path(), "write.lock");
        assert!(lock.is_ok(), "{kind:?} after release: {lock:?}");
    }
}

#[test]
fn sigkill_of_holder_frees_the_lock_at_once() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let holder = spawn_holder(&child_test(), dir.path(), kind.name());
        let f = NativeFsLockFactory::new(kind);
        assert!(f
            .try_obtain(dir.path(), "write.lock")
            .unwrap_err()
            .is_held());
        holder.kill();
        // No retry loop: once the child is reaped its locks are gone.
        let lock = f.try_obtain(dir.path(), "write.lock");
        assert!(lock.is_ok(), "{kind:?} right after SIGKILL: {lock:?}");
        lock.unwrap().ensure_valid().unwrap();
    }
}

#[test]
fn blocking_obtain_waits_in_the_kernel_until_the_other_process_releases() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let holder = spawn_holder(&child_test(), dir.path(), kind.name());
        let waiter = {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || {
                NativeFsLockFactory::new(kind)
                    .obtain_blocking(&dir, "write.lock")
                    .map(|l| (l.ensure_valid().is_ok(), l.close().is_ok()))
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(
            !waiter.is_finished(),
            "{kind:?}: obtain_blocking returned while another process held the lock"
        );
        holder.release();
        let got = waiter.join().unwrap();
        assert!(matches!(got, Ok((true, true))), "{kind:?}: {got:?}");
    }
}

#[test]
fn child_cannot_obtain_while_parent_holds() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let _lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        let out = common::child_command(&child_test(), dir.path(), kind.name())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{kind:?}: child should fail: {stdout}"
        );
        assert!(
            stdout.contains("is held by another process"),
            "{kind:?}: {stdout}"
        );
    }
}

#[test]
fn simple_fs_names_the_holder_and_never_breaks_a_dead_holders_lock() {
    let dir = tempfile::tempdir().unwrap();
    let holder = spawn_holder(&child_test(), dir.path(), "simple");
    let child_pid = holder.pid();
    let f = SimpleFsLockFactory::new();
    let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
    assert_eq!(err.holder_pid(), Some(child_pid), "{err}");
    assert!(err.to_string().contains("that process is running"), "{err}");

    holder.kill();
    // The crash left the file; the lock stays held and the error says it looks stale.
    let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
    assert!(err.is_held(), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&format!("pid {child_pid}")), "{msg}");
    assert!(msg.contains("NOT running"), "{msg}");
    assert!(msg.contains("delete"), "must say what to do: {msg}");

    // A human deletes it: obtain works.
    std::fs::remove_file(dir.path().join("write.lock")).unwrap();
    assert!(f.try_obtain(dir.path(), "write.lock").is_ok());
}

/// `child_holds_lock`'s full test name in this binary.
fn child_test() -> String {
    common::test_name(module_path!(), "child_holds_lock")
}
