//! `NativeFsLockFactory` makes exactly the `System` calls the Stateright model's steps name,
//! in that order, on every path: obtain (success, held here, held elsewhere, unsupported,
//! open failure), ensure_valid, close (also when a step fails). A change to the protocol
//! shows up here as a diff, to be mirrored in the model.

mod common;

use std::sync::Arc;

use common::Instrumented;
use lockwright::sys::OsLockKind;
use lockwright::{InvalidReason, LockError, LockFactory, NativeFsLockFactory, RealSystem};

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

const OBTAIN: [&str; 6] = [
    "create_dir_all",
    "canonicalize_dir",
    "stat",
    "held_insert",
    "open_lock_file",
    "try_lock",
];

#[test]
fn obtain_ensure_valid_close_steps() {
    for kind in common::KINDS {
        let dir = tempfile::tempdir().unwrap();
        let (f, sys) = factory(kind);
        let mut lock = f.try_obtain(dir.path(), "write.lock").unwrap();
        assert_eq!(sys.take_log(), OBTAIN);
        lock.ensure_valid().unwrap();
        assert_eq!(
            sys.take_log(),
            ["held_contains", "fstat", "stat", "probe"],
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
            lock_err_after_close(&f, dir.path()),
            LockError::AlreadyClosed { .. }
        ));
    }
}

fn lock_err_after_close(
    f: &NativeFsLockFactory<Instrumented<RealSystem>>,
    dir: &std::path::Path,
) -> LockError {
    let mut l = f.try_obtain(dir, "write.lock").unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Posix);
    let _l = f.try_obtain(dir.path(), "write.lock").unwrap();
    sys.take_log();
    assert!(matches!(
        f.try_obtain(dir.path(), "write.lock"),
        Err(LockError::HeldByThisProcess { .. })
    ));
    assert_eq!(
        sys.take_log(),
        ["create_dir_all", "canonicalize_dir", "stat", "held_insert"]
    );
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
            "create_dir_all",
            "canonicalize_dir",
            "stat",
            "held_insert",
            "open_lock_file",
            "held_remove"
        ]
    );
    assert!(sys.inner.held_set().is_empty());
}

#[test]
fn close_runs_every_step_and_reports_the_first_error() {
    let dir = tempfile::tempdir().unwrap();
    let (f, sys) = factory(OsLockKind::Ofd);
    let mut lock = f.try_obtain(dir.path(), "write.lock").unwrap();
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
    assert_eq!(sys.take_log(), ["held_contains", "fstat", "stat", "probe"]);
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
    assert_eq!(sys.take_log(), ["held_contains"]);
}
