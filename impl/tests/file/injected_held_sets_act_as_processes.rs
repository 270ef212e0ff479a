//! `RealSystem::with_held_set` lets one test process play several processes. With OFD and
//! flock, two such "processes" exclude each other through the kernel alone; with POSIX they do
//! NOT, because the kernel still sees one process (the documented hazard, and the reason the
//! real-process tests exist).

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use lockwright::file::sys::OsLockKind;
use lockwright::{LockError, LockFactory, NativeFsLockFactory};

#[test]
fn ofd_and_flock_exclude_across_injected_held_sets() {
    for kind in [OsLockKind::Ofd, OsLockKind::Flock] {
        let dir = tempfile::tempdir().unwrap();
        let p1 = NativeFsLockFactory::with_system(common::process(), kind);
        let p2 = NativeFsLockFactory::with_system(common::process(), kind);
        let l1 = p1.try_obtain(dir.path(), "write.lock").unwrap();
        let err = p2.try_obtain(dir.path(), "write.lock").unwrap_err();
        assert!(
            matches!(err, LockError::HeldByOtherProcess { pid: None, .. }),
            "{kind:?}: {err:?}"
        );
        // p2's failed attempt (open + close of a second descriptor) did not disturb p1.
        l1.ensure_valid().unwrap();
        l1.close().unwrap();
        let l2 = p2.try_obtain(dir.path(), "write.lock").unwrap();
        assert!(p1
            .try_obtain(dir.path(), "write.lock")
            .unwrap_err()
            .is_held());
        drop(l2);
    }
}

#[test]
fn ofd_excludes_posix_in_the_same_process() {
    let dir = tempfile::tempdir().unwrap();
    let posix = NativeFsLockFactory::with_system(common::process(), OsLockKind::Posix);
    let ofd = NativeFsLockFactory::with_system(common::process(), OsLockKind::Ofd);
    let l = posix.try_obtain(dir.path(), "write.lock").unwrap();
    assert!(ofd
        .try_obtain(dir.path(), "write.lock")
        .unwrap_err()
        .is_held());
    drop(l);
    let l = ofd.try_obtain(dir.path(), "write.lock").unwrap();
    assert!(posix
        .try_obtain(dir.path(), "write.lock")
        .unwrap_err()
        .is_held());
    drop(l);
}

/// Twin: POSIX locks of one process never conflict, so injected held sets do not make
/// processes out of threads for POSIX. If this ever failed, the kernel semantics the model
/// assumes would be wrong.
#[test]
fn posix_does_not_exclude_across_injected_held_sets() {
    let dir = tempfile::tempdir().unwrap();
    let p1 = NativeFsLockFactory::with_system(common::process(), OsLockKind::Posix);
    let p2 = NativeFsLockFactory::with_system(common::process(), OsLockKind::Posix);
    let _l1 = p1.try_obtain(dir.path(), "write.lock").unwrap();
    let l2 = p2.try_obtain(dir.path(), "write.lock");
    assert!(l2.is_ok(), "two POSIX 'holders' in one process: {l2:?}");
}

/// Twin: flock and fcntl locks do not see each other; mixing kinds gives two holders.
#[test]
fn mixed_flock_and_fcntl_give_two_holders() {
    for other in [OsLockKind::Ofd, OsLockKind::Posix] {
        let dir = tempfile::tempdir().unwrap();
        let a = NativeFsLockFactory::with_system(common::process(), OsLockKind::Flock);
        let b = NativeFsLockFactory::with_system(common::process(), other);
        let _la = a.try_obtain(dir.path(), "write.lock").unwrap();
        assert!(
            b.try_obtain(dir.path(), "write.lock").is_ok(),
            "flock vs {other:?}"
        );
    }
}
