//! `NativeFsLockFactory` makes exactly the `System` calls the Stateright model's steps name,
//! in that order, on every path: obtain (first and later obtains of a directory, a missing
//! directory, success, held here, held elsewhere, unsupported, open failure), ensure_valid,
//! close (also when a step fails). A change to the protocol shows up here as a diff, to be
//! mirrored in the model. The setup calls before `held_insert` (`canonicalize_dir`,
//! `create_dir_all`, `stat`) are observations for the model, not steps; they are pinned here
//! too so that a change to them is deliberate.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::sync::Arc;

use common::Instrumented;
use lockwright::file::sys::OsLockKind;
use lockwright::file::sys::RealSystem;
use lockwright::{InvalidReason, LockError, LockFactory, NativeFsLockFactory};

fn factory(
    kind: OsLockKind,
) -> (
    NativeFsLockFactory<Instrumented<RealSystem>>,
    Arc<Instrumented<RealSystem>>,
) {
    let sys = Instrumented::new(common::process());
    (
        NativeFsLockFactory::with_shared_system(Arc::clone(&sys), kind),
        sys,
    )
}

/// The first obtain of a directory by a factory: resolve it (it exists: no `create_dir_all`),
/// `lstat` the lock path, then the model's steps.
const OBTAIN: [&str; 5] = [
    "canonicalize_dir",
    "stat",
    "held_insert",
    "open_lock_file",
    "try_lock",
];

/// Every later obtain of the same canonical directory by the same factory: the `lstat` of the
/// lock path finds the file opened last time, so nothing is resolved again.
const OBTAIN_AGAIN: [&str; 4] = ["stat", "held_insert", "open_lock_file", "try_lock"];

/// The first obtain of a directory that does not exist yet.
const OBTAIN_CREATING: [&str; 7] = [
    "canonicalize_dir",
    "create_dir_all",
    "canonicalize_dir",
    "stat",
    "held_insert",
    "open_lock_file",
    "try_lock",
];

/// A temporary directory and its canonical path (what the fast path needs).
fn canonical_tempdir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

#[test]
fn obtain_ensure_valid_close_steps() {
    for kind in common::KINDS {
        let (_tmp, dir) = canonical_tempdir();
        let (f, sys) = factory(kind);
        // The handle under the `Lock` guard: its `close` may run twice (the guard's `close`
        // consumes, so only a handle can show idempotence).
        let mut lock = f.try_obtain(&dir, "write.lock").unwrap().into_handle();
        assert_eq!(sys.take_log(), OBTAIN);
        lock.ensure_valid().unwrap();
        // The probe first (the only check that can turn back to true), then the checks that
        // can only turn false: see `NativeFsLock::ensure_valid`.
        assert_eq!(
            sys.take_log(),
            ["probe", "held_contains", "fstat", "stat"],
            "{kind:?}"
        );
        lock.close().unwrap();
        assert_eq!(sys.take_log(), ["unlock", "close", "held_remove"]);
        lock.close().unwrap();
        drop(lock);
        assert!(
            sys.take_log().is_empty(),
            "close is idempotent and makes no calls"
        );
        assert!(matches!(
            lock_err_after_close(&f, &dir),
            LockError::AlreadyClosed { .. }
        ));
        // The same factory, the same canonical directory: only the lstat is left of the setup.
        let again = f.try_obtain(&dir, "write.lock").unwrap();
        assert_eq!(sys.take_log(), OBTAIN_AGAIN, "{kind:?}");
        assert_eq!(again.path(), dir.join("write.lock"));
        again.close().unwrap();
        assert_eq!(sys.take_log(), ["unlock", "close", "held_remove"]);
    }
}

#[test]
fn a_missing_directory_is_created_only_after_canonicalize_says_so() {
    for kind in common::KINDS {
        let (_tmp, base) = canonical_tempdir();
        let dir = base.join("a").join("index");
        let (f, sys) = factory(kind);
        let lock = f.try_obtain(&dir, "write.lock").unwrap();
        assert_eq!(sys.take_log(), OBTAIN_CREATING, "{kind:?}");
        assert!(dir.join("write.lock").is_file());
        lock.close().unwrap();
        sys.take_log();
        let _again = f.try_obtain(&dir, "write.lock").unwrap();
        assert_eq!(sys.take_log(), OBTAIN_AGAIN, "{kind:?}");
    }
}

#[test]
fn a_directory_given_through_a_symlink_is_resolved_every_time() {
    let (_tmp, base) = canonical_tempdir();
    std::fs::create_dir(base.join("real")).unwrap();
    let link = base.join("link");
    std::os::unix::fs::symlink(base.join("real"), &link).unwrap();
    let (f, sys) = factory(OsLockKind::Ofd);
    for _ in 0..2 {
        let lock = f.try_obtain(&link, "write.lock").unwrap();
        assert_eq!(lock.path(), base.join("real").join("write.lock"));
        drop(lock);
        let mut want = OBTAIN.to_vec();
        want.extend(["unlock", "close", "held_remove"]);
        assert_eq!(sys.take_log(), want);
    }
}

fn lock_err_after_close(
    f: &NativeFsLockFactory<Instrumented<RealSystem>>,
    dir: &std::path::Path,
) -> LockError {
    let mut l = f.try_obtain(dir, "write.lock").unwrap().into_handle();
    l.close().unwrap();
    f.system().take_log();
    let e = l.ensure_valid().unwrap_err();
    assert!(
        f.system().take_log().is_empty(),
        "a closed lock makes no calls"
    );
    e
}

#[test]
fn held_by_this_process_opens_nothing() {
    let (_tmp, dir) = canonical_tempdir();
    let (f, sys) = factory(OsLockKind::Posix);
    let _l = f.try_obtain(&dir, "write.lock").unwrap();
    sys.take_log();
    assert!(matches!(
        f.try_obtain(&dir, "write.lock"),
        Err(LockError::HeldByThisProcess { .. })
    ));
    assert_eq!(sys.take_log(), ["stat", "held_insert"]);
    // Another factory of the process (same held set) resolves the directory itself first.
    let other = NativeFsLockFactory::with_shared_system(Arc::clone(&sys), OsLockKind::Posix);
    assert!(matches!(
        other.try_obtain(&dir, "write.lock"),
        Err(LockError::HeldByThisProcess { .. })
    ));
    assert_eq!(sys.take_log(), ["canonicalize_dir", "stat", "held_insert"]);
}

#[test]
fn held_elsewhere_probes_then_closes_before_leaving_the_held_set() {
    for kind in [OsLockKind::Ofd, OsLockKind::Flock] {
        let dir = tempfile::tempdir().unwrap();
        let other = NativeFsLockFactory::with_system(common::process(), kind);
        let _held = other.try_obtain(dir.path(), "write.lock").unwrap();
        let (f, sys) = factory(kind);
        let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
        assert!(
            matches!(err, LockError::HeldByOtherProcess { .. }),
            "{err:?}"
        );
        let mut want = OBTAIN.to_vec();
        want.extend(["probe", "close", "held_remove"]);
        assert_eq!(sys.take_log(), want, "{kind:?}");
        assert!(f.system().inner.held_set().is_empty());
    }
}

#[test]
fn unsupported_filesystem_fails_closed_never_unlocked() {
    for (errno, kind) in [
        (libc::ENOLCK, OsLockKind::Posix),
        (libc::EOPNOTSUPP, OsLockKind::Flock),
        (libc::EINVAL, OsLockKind::Ofd),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (f, sys) = factory(kind);
        sys.fail("try_lock", errno);
        let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
        match &err {
            LockError::LockingUnsupported {
                kind: k, source, ..
            } => {
                assert_eq!(*k, kind);
                assert_eq!(source.raw_os_error(), Some(errno));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string().contains(kind.name()) && err.to_string().contains("write.lock"),
            "{err}"
        );
        assert!(std::error::Error::source(&err).is_some());
        let mut want = OBTAIN.to_vec();
        want.extend(["close", "held_remove"]);
        assert_eq!(sys.take_log(), want);
        assert!(sys.inner.held_set().is_empty());
    }
}

#[test]
fn other_lock_errors_are_io_errors_and_also_fail_closed() {
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Ofd);
    sys.fail("try_lock", libc::EIO);
    let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
    assert!(matches!(err, LockError::Io { .. }), "{err:?}");
    assert!(sys.inner.held_set().is_empty());
}

#[test]
fn open_failure_leaves_the_held_set() {
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Ofd);
    sys.fail("open_lock_file", libc::EMFILE);
    let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
    assert!(matches!(err, LockError::Io { .. }), "{err:?}");
    assert_eq!(
        sys.take_log(),
        [
            "canonicalize_dir",
            "stat",
            "held_insert",
            "open_lock_file",
            "held_remove"
        ]
    );
    assert!(sys.inner.held_set().is_empty());
    // Nothing was opened, so nothing was remembered: the next obtain resolves again.
    let _l = f.try_obtain(dir.path(), "write.lock").unwrap();
    assert_eq!(sys.take_log(), OBTAIN);
}

#[test]
fn close_runs_every_step_and_reports_the_first_error() {
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Ofd);
    let mut lock = f
        .try_obtain(dir.path(), "write.lock")
        .unwrap()
        .into_handle();
    sys.take_log();
    sys.fail("unlock", libc::EIO);
    sys.fail("close", libc::EBADF);
    let err = lock.close().unwrap_err();
    match &err {
        LockError::Io { source, .. } => {
            assert_eq!(source.raw_os_error(), Some(libc::EIO), "first error wins")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sys.take_log(), ["unlock", "close", "held_remove"]);
    assert!(sys.inner.held_set().is_empty());
    lock.close().unwrap();
    // Released: obtain works again.
    assert!(f.try_obtain(dir.path(), "write.lock").is_ok());
}

#[test]
fn flock_ensure_valid_skips_the_probe_result() {
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Flock);
    let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
    sys.take_log();
    lock.ensure_valid().unwrap();
    // The call is made (it is one model step) and answers Unknown.
    assert_eq!(sys.take_log(), ["probe", "held_contains", "fstat", "stat"]);
}

#[test]
fn ensure_valid_stops_at_the_first_failed_check() {
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Ofd);
    let lock = f.try_obtain(dir.path(), "write.lock").unwrap();
    sys.inner.held_set().remove(lock.path());
    sys.take_log();
    assert_eq!(
        lock.ensure_valid().unwrap_err().invalid_reason(),
        Some(InvalidReason::NotInHeldSet)
    );
    assert_eq!(sys.take_log(), ["probe", "held_contains"]);
}
