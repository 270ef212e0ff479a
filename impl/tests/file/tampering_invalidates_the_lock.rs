//! Locks live on the inode, not the path. When the lock file is deleted, renamed over, written
//! to, or the lock is silently dropped and taken by someone else, `ensure_valid` of the holder
//! fails and says which of these happened. Each test first checks the lock IS valid, so a
//! check that always fails could not pass.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::sync::Arc;

use lockwright::file::sys::{HeldSet, OsLockKind, RealSystem};
use lockwright::{InvalidReason, LockError, LockFactory, NativeFsLockFactory, SimpleFsLockFactory};

fn reason(r: Result<(), LockError>) -> InvalidReason {
    match r {
        Err(LockError::Invalidated { reason, ref path }) => {
            let err = r.as_ref().unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            assert!(
                err.advice().unwrap().contains("obtain the lock again"),
                "{err:?}"
            );
            reason
        }
        other => panic!("expected Invalidated, got {other:?}"),
    }
}

#[test]
fn unlinked_lock_file_is_detected() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        lock.ensure_valid().unwrap();
        std::fs::remove_file(lock.path()).unwrap();
        assert_eq!(
            reason(lock.ensure_valid()),
            InvalidReason::Unlinked,
            "{kind:?}"
        );
    }
}

#[test]
fn unlink_and_recreate_lets_a_newcomer_lock_and_the_old_holder_finds_out() {
    // The LUCENE-5612 situation caused by an outsider: two holders on two inodes. Only OFD
    // and flock can show it inside one process (separate held sets = separate "processes").
    for kind in [OsLockKind::Ofd, OsLockKind::Flock] {
        let dir = tempfile::tempdir().unwrap();
        let a = NativeFsLockFactory::with_system(common::process(), kind);
        let b = NativeFsLockFactory::with_system(common::process(), kind);
        let old = a.try_obtain(dir.path(), "write.lock").unwrap();
        assert!(b
            .try_obtain(dir.path(), "write.lock")
            .unwrap_err()
            .is_held());
        std::fs::remove_file(old.path()).unwrap();
        let new = b
            .try_obtain(dir.path(), "write.lock")
            .expect("newcomer locks a fresh inode");
        new.ensure_valid().unwrap();
        assert_eq!(
            reason(old.ensure_valid()),
            InvalidReason::Unlinked,
            "{kind:?}"
        );
    }
}

#[test]
fn renamed_over_lock_file_is_detected_with_both_inodes() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        lock.ensure_valid().unwrap();
        let other = dir.path().join("other");
        std::fs::write(&other, b"").unwrap();
        std::fs::rename(&other, lock.path()).unwrap();
        match reason(lock.ensure_valid()) {
            InvalidReason::Unlinked => {} // the old inode lost its last link: reported first
            r => panic!("{kind:?}: {r:?}"),
        }
    }
}

#[test]
fn lock_file_replaced_while_still_linked_elsewhere_names_old_and_new_inode() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        // Keep a second link to our inode so its link count stays 1, then replace the path.
        let keep = dir.path().join("kept");
        std::fs::hard_link(lock.path(), &keep).unwrap();
        let other = dir.path().join("other");
        std::fs::write(&other, b"").unwrap();
        let new_ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&other).unwrap());
        std::fs::rename(&other, lock.path()).unwrap();
        let r = reason(lock.ensure_valid());
        match r {
            InvalidReason::Replaced { old, new } => {
                assert_eq!(new.ino, new_ino);
                assert_ne!(old.ino, new.ino);
            }
            r => panic!("{kind:?}: {r:?}"),
        }
        let msg = lock.ensure_valid().unwrap_err().to_string();
        assert!(
            msg.contains("replaced") && msg.contains(&new_ino.to_string()),
            "{msg}"
        );
    }
}

#[test]
fn lock_file_renamed_away_is_detected() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        std::fs::rename(lock.path(), dir.path().join("moved")).unwrap();
        assert_eq!(
            reason(lock.ensure_valid()),
            InvalidReason::Missing,
            "{kind:?}"
        );
    }
}

#[test]
fn written_to_lock_file_is_detected() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let lock = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap();
        lock.ensure_valid().unwrap();
        // Append through another descriptor; for POSIX this close also drops our lock, but
        // the size check comes first.
        std::fs::write(lock.path(), b"junk").unwrap();
        assert_eq!(
            reason(lock.ensure_valid()),
            InvalidReason::NotEmpty { len: 4 },
            "{kind:?}"
        );
    }
}

#[test]
fn removal_from_the_held_set_is_detected() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let held = Arc::new(HeldSet::new());
        let f =
            NativeFsLockFactory::with_system(RealSystem::with_held_set(Arc::clone(&held)), kind);
        let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        lock.ensure_valid().unwrap();
        assert!(held.remove(lock.path()));
        assert_eq!(
            reason(lock.ensure_valid()),
            InvalidReason::NotInHeldSet,
            "{kind:?}"
        );
    }
}

#[test]
fn posix_lock_dropped_by_foreign_close_and_taken_is_detected() {
    // Any code in the process that opens and closes the lock file drops a POSIX lock
    // (fcntl(2)). Once someone else takes it, the holder's probe sees the conflict. The
    // "someone else" is an OFD lock in this process: OFD and POSIX locks conflict even
    // within one process.
    let dir = tempfile::tempdir().unwrap();
    let lock = NativeFsLockFactory::new(OsLockKind::Posix)
        .try_obtain(dir.path(), "write.lock")
        .unwrap();
    lock.ensure_valid().unwrap();
    let thief = NativeFsLockFactory::with_system(common::process(), OsLockKind::Ofd);
    assert!(
        thief
            .try_obtain(dir.path(), "write.lock")
            .unwrap_err()
            .is_held(),
        "OFD must see the POSIX lock"
    );
    drop(std::fs::File::open(lock.path()).unwrap()); // foreign open + close
    let stolen = thief
        .try_obtain(dir.path(), "write.lock")
        .expect("the POSIX lock is gone");
    assert_eq!(
        reason(lock.ensure_valid()),
        InvalidReason::LockLost { pid: None }
    );
    drop(stolen);
}

#[test]
fn simple_fs_lock_replaced_is_detected_and_not_deleted_on_close() {
    let dir = tempfile::tempdir().unwrap();
    let f = SimpleFsLockFactory::new();
    let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
    lock.ensure_valid().unwrap();
    // Someone "breaks" the lock and another process takes it.
    std::fs::remove_file(lock.path()).unwrap();
    let theirs = f.try_obtain(dir.path(), "write.lock").unwrap();
    let err = lock.ensure_valid().unwrap_err();
    assert!(
        matches!(
            err.invalid_reason(),
            Some(InvalidReason::Replaced { .. } | InvalidReason::RecordChanged)
        ),
        "{err:?}"
    );
    let err = lock.close().unwrap_err();
    assert!(matches!(err, LockError::ReleaseRefused { .. }), "{err:?}");
    assert!(
        err.to_string().contains("another process may own it"),
        "{err}"
    );
    assert!(err.advice().unwrap().contains("by hand"), "{err:?}");
    // Their lock file survived our close.
    assert!(theirs.path().exists());
    theirs.ensure_valid().unwrap();
}

#[test]
fn simple_fs_lock_file_deleted_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let mut lock = SimpleFsLockFactory::new()
        .try_obtain(dir.path(), "write.lock")
        .unwrap()
        .into_handle();
    std::fs::remove_file(lock.path()).unwrap();
    assert_eq!(
        lock.ensure_valid().unwrap_err().invalid_reason(),
        Some(InvalidReason::Missing)
    );
    assert!(matches!(
        lock.close(),
        Err(LockError::ReleaseRefused {
            reason: InvalidReason::Missing,
            ..
        })
    ));
    lock.close().unwrap(); // idempotent even after a refused release
}
