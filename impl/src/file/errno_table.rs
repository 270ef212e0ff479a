//! Every errno the file gate can meet, classified: one table, driven row by row through the
//! production code.
//!
//! SimpleFs (`SimpleFsLockFactory`, the lock file itself is the lock) has its own steps: its
//! failed obtain must leave no lock file, and a failed release either deletes nothing that
//! is not proven ours or says the file stayed.
//!
//! Each [`Row`] names a protocol step, the raw call of the gate it scripts (see
//! `inject.rs`: the errno is answered *instead of the kernel*, below `gate.rs`'s EINTR and
//! "would block" rules and below `native/os_errors.rs`'s `LockError` mapping), the lock kinds
//! it applies to, the errno, and the outcome the step must show. [`run`] performs the step on
//! a real temporary directory with the real `NativeFsLockFactory` and reads the outcome off
//! what the step returned; for every error it also checks that the attempt failed closed: the
//! path left the held set, the lock file is still there, and a fresh obtain succeeds (the
//! kernel and the held set, not the code under test, say the lock is free).
//!
//! The same rows, rendered by [`render`], are the section "Every errno, classified" of
//! `docs/protocol.md`; `the_docs_table_is_this_table` fails when the two differ (set
//! `LOCKWRIGHT_UPDATE_ERROR_TABLES=1` to rewrite the section).
//!
//! Flipped by hand to see the table catch it (each made rows fail, then was reverted):
//! `EACCES` dropped from `gate.rs`'s `is_would_block` (both `try_obtain` fcntl `EACCES` rows
//! and the conflict-set property fail); `ENOLCK` dropped from `os_errors.rs`'s `lock_error`
//! (its six `try_obtain`/`obtain_blocking` runs fail); `EDEADLK` added to `is_would_block`
//! (its rows and the property fail: "read as held"); `close` swallowing `EINTR` (the three
//! release `close` `EINTR` runs fail); `EEXIST` dropped from `os_errors.rs`'s `dir_error`
//! (the three `mkdir` `EEXIST` runs fail: `Io` where `NotADirectory` is pinned); SimpleFs
//! reading `EACCES` from its `O_EXCL` create as "held" (`simple.rs`; its row fails: `Held`
//! where `Io` is pinned).

// A test that plays the operator: it makes the lock directory and file, checks them after
// each row, and reads and rewrites docs/protocol.md. The code under test still reaches the
// OS only through gate.rs.
#![allow(clippy::disallowed_methods)]

use std::io;
use std::path::{Path, PathBuf};

use super::error::{InvalidReason, LockError};
use super::gate::RawCall;
use super::inject;
use super::native::NativeFsLockFactory;
use super::simple::SimpleFsLockFactory;
use super::sys::{EntryKind, OsLockKind, RealSystem, System};
use super::LockHandle;

/// The protocol step a row drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `try_obtain`.
    Obtain,
    /// `obtain_blocking`.
    ObtainBlocking,
    /// `ensure_valid` on a held lock.
    EnsureValid,
    /// `close` of a held lock.
    Release,
    /// SimpleFs (`SimpleFsLockFactory`): `try_obtain`.
    SimpleObtain,
    /// SimpleFs: `ensure_valid` on a held lock.
    SimpleEnsureValid,
    /// SimpleFs: `close` of a held lock (check the record, then unlink).
    SimpleRelease,
}

impl Step {
    fn simple(self) -> bool {
        matches!(
            self,
            Step::SimpleObtain | Step::SimpleEnsureValid | Step::SimpleRelease
        )
    }
}

/// The lock kinds a row applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kinds {
    /// OFD and POSIX (`fcntl`).
    Fcntl,
    /// `flock`.
    Flock,
    /// All three (the call does not depend on the kind).
    All,
    /// SimpleFs: no OS lock (run once).
    NoOsLock,
}

impl Kinds {
    fn kinds(self) -> &'static [OsLockKind] {
        match self {
            Kinds::Fcntl => &[OsLockKind::Ofd, OsLockKind::Posix],
            Kinds::Flock => &[OsLockKind::Flock],
            Kinds::All => &OsLockKind::ALL,
            Kinds::NoOsLock => &[OsLockKind::Ofd],
        }
    }
}

/// What a step shows when its raw call answers the row's errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// A conflict: `HeldByOtherProcess`; nothing acquired.
    Held,
    /// `EINTR`: the call is made again (the kernel's answer then decides; here, success).
    Retried,
    /// Not an error: obtain goes on (and, with the real calls after it, acquires).
    Acquired,
    /// The step fails with this error, the errno intact; the lock is not held, nothing is
    /// deleted.
    Fails(Fail),
    /// `ensure_valid` reports `Invalidated` (`Missing`).
    Missing,
    /// Release reports `Io` with the errno, and the lock is released anyway.
    ReleasedWithError,
    /// Release (or `ensure_valid`) reports success as if nothing happened.
    Passed,
    /// SimpleFs release: `Io`, errno kept, and the lock file stays (nothing proves it is still
    /// ours to delete): the lock stays taken until someone removes the file.
    FileKept,
    /// SimpleFs release: `ReleaseRefused` (`Missing`): the file is gone, nothing deleted.
    RefusedMissing,
}

/// The `LockError` variant a failing step returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fail {
    Io,
    LockingUnsupported,
    BadLockPath(EntryKind),
    NotADirectory,
}

use Fail::*;
use Outcome::*;

/// One errno of one raw call at one step.
#[derive(Clone, Copy, Debug)]
struct Row {
    step: Step,
    call: RawCall,
    kinds: Kinds,
    errno: i32,
    name: &'static str,
    /// Whether the call's Linux man page lists it (else: seen in practice, e.g. NFS).
    listed: bool,
    outcome: Outcome,
}

macro_rules! errno {
    ($e:ident) => {
        (libc::$e, stringify!($e))
    };
}

type Spec = &'static [((i32, &'static str), bool, Outcome)];

fn group(rows: &mut Vec<Row>, step: Step, call: RawCall, kinds: Kinds, spec: Spec) {
    rows.extend(spec.iter().map(|&((errno, name), listed, outcome)| Row {
        step,
        call,
        kinds,
        errno,
        name,
        listed,
        outcome,
    }));
}

const LU: Outcome = Fails(LockingUnsupported);
const IO: Outcome = Fails(Io);
const REL: Outcome = ReleasedWithError;

/// fcntl(2)'s errnos for the lock commands, plus `EOPNOTSUPP` and `EIO` (not listed: some
/// filesystems refuse locks with the first, NFSv4 reports a lost lock with the second).
macro_rules! fcntl_spec {
    ($conflict:expr, $other:expr, $unsupported:expr) => {
        &[
            (errno!(EACCES), true, $conflict),
            (errno!(EAGAIN), true, $conflict),
            (errno!(EBADF), true, $other),
            (errno!(EDEADLK), true, $other),
            (errno!(EFAULT), true, $other),
            (errno!(EINTR), true, Retried),
            (errno!(EINVAL), true, $unsupported),
            (errno!(ENOLCK), true, $unsupported),
            (errno!(EOPNOTSUPP), false, $unsupported),
            (errno!(EIO), false, $other),
        ]
    };
}

/// flock(2)'s errnos, plus `EOPNOTSUPP` and `EIO` as for fcntl.
macro_rules! flock_spec {
    ($conflict:expr, $other:expr, $unsupported:expr) => {
        &[
            (errno!(EWOULDBLOCK), true, $conflict),
            (errno!(EBADF), true, $other),
            (errno!(EINTR), true, Retried),
            (errno!(EINVAL), true, $unsupported),
            (errno!(ENOLCK), true, $unsupported),
            (errno!(EOPNOTSUPP), false, $unsupported),
            (errno!(EIO), false, $other),
        ]
    };
}

/// stat(2)'s errnos (`lstat`, `fstat`): `$other` for most, with the outcomes of `ENOENT`,
/// `ENOTDIR` and `ELOOP` given apart.
macro_rules! stat_spec {
    ($other:expr, $enoent:expr, $enotdir:expr, $eloop:expr) => {
        &[
            (errno!(EACCES), true, $other),
            (errno!(EBADF), true, $other),
            (errno!(EFAULT), true, $other),
            (errno!(ELOOP), true, $eloop),
            (errno!(ENAMETOOLONG), true, $other),
            (errno!(ENOENT), true, $enoent),
            (errno!(ENOMEM), true, $other),
            (errno!(ENOTDIR), true, $enotdir),
            (errno!(EOVERFLOW), true, $other),
        ]
    };
}

/// realpath(3)'s errnos (it fails as `lstat` and `readlink` do on a component), with the
/// outcome of `ENOENT` (a missing directory is made, then `realpath` is called again: shown
/// as retried) and `ENOTDIR`.
macro_rules! realpath_spec {
    ($enoent:expr, $enotdir:expr) => {
        &[
            (errno!(EACCES), true, IO),
            (errno!(EINVAL), true, IO),
            (errno!(EIO), true, IO),
            (errno!(ELOOP), true, IO),
            (errno!(ENAMETOOLONG), true, IO),
            (errno!(ENOENT), true, $enoent),
            (errno!(ENOMEM), true, IO),
            (errno!(ENOTDIR), true, $enotdir),
        ]
    };
}

/// mkdir(2)'s errnos, for a lock directory that is missing (`EEXIST`: a file is there).
const MKDIR: Spec = &[
    (errno!(EACCES), true, IO),
    (errno!(EBADF), true, IO),
    (errno!(EDQUOT), true, IO),
    (errno!(EEXIST), true, Fails(NotADirectory)),
    (errno!(EFAULT), true, IO),
    (errno!(EINVAL), true, IO),
    (errno!(ELOOP), true, IO),
    (errno!(EMLINK), true, IO),
    (errno!(ENAMETOOLONG), true, IO),
    (errno!(ENOENT), true, IO),
    (errno!(ENOMEM), true, IO),
    (errno!(ENOSPC), true, IO),
    (errno!(ENOTDIR), true, Fails(NotADirectory)),
    (errno!(EPERM), true, IO),
    (errno!(EROFS), true, IO),
];

/// open(2)'s errnos for `open` (not `openat`'s directory-descriptor ones).
const OPEN: Spec = &[
    (errno!(EACCES), true, IO),
    (errno!(EBUSY), true, IO),
    (errno!(EDQUOT), true, IO),
    (errno!(EEXIST), true, IO),
    (errno!(EFAULT), true, IO),
    (errno!(EFBIG), true, IO),
    (errno!(EINTR), true, Retried),
    (errno!(EINVAL), true, IO),
    (
        errno!(EISDIR),
        true,
        Fails(BadLockPath(EntryKind::Directory)),
    ),
    (errno!(ELOOP), true, Fails(BadLockPath(EntryKind::Symlink))),
    (errno!(EMFILE), true, IO),
    (errno!(ENAMETOOLONG), true, IO),
    (errno!(ENFILE), true, IO),
    (errno!(ENODEV), true, IO),
    (errno!(ENOENT), true, IO),
    (errno!(ENOMEM), true, IO),
    (errno!(ENOSPC), true, IO),
    (errno!(ENOTDIR), true, IO),
    (errno!(ENXIO), true, IO),
    (errno!(EOPNOTSUPP), true, IO),
    (errno!(EOVERFLOW), true, IO),
    (errno!(EPERM), true, IO),
    (errno!(EROFS), true, IO),
    (errno!(ETXTBSY), true, IO),
    (errno!(EWOULDBLOCK), true, IO),
];

/// open(2)'s errnos for SimpleFs's `open(O_CREAT | O_EXCL)` of a new lock file: `EEXIST` is
/// the conflict (someone's lock file is there).
const CREATE_NEW: Spec = &[
    (errno!(EACCES), true, IO),
    (errno!(EDQUOT), true, IO),
    (errno!(EEXIST), true, Held),
    (errno!(EINTR), true, Retried),
    (
        errno!(EISDIR),
        true,
        Fails(BadLockPath(EntryKind::Directory)),
    ),
    (errno!(ELOOP), true, Fails(BadLockPath(EntryKind::Symlink))),
    (errno!(EMFILE), true, IO),
    (errno!(ENAMETOOLONG), true, IO),
    (errno!(ENFILE), true, IO),
    (errno!(ENOENT), true, IO),
    (errno!(ENOSPC), true, IO),
    (errno!(ENOTDIR), true, IO),
    (errno!(EPERM), true, IO),
    (errno!(EROFS), true, IO),
];

/// open(2)'s errnos for reading a lock file's record back, with the outcome of `ENOENT` (the
/// file is gone) and of every other errno.
macro_rules! read_spec {
    ($enoent:expr, $other:expr) => {
        &[
            (errno!(EACCES), true, $other),
            (errno!(EINTR), true, Retried),
            (errno!(EIO), false, $other),
            (errno!(ELOOP), true, $other),
            (errno!(EMFILE), true, $other),
            (errno!(ENFILE), true, $other),
            (errno!(ENOENT), true, $enoent),
            (errno!(ENOMEM), true, $other),
        ]
    };
}

/// unlink(2)'s errnos at SimpleFs's release: the file stays (`ENOENT`: someone removed it in
/// between; the release reports it, and the lock is free).
const UNLINK: Spec = &[
    (errno!(EACCES), true, FileKept),
    (errno!(EBUSY), true, FileKept),
    (errno!(EIO), true, FileKept),
    (errno!(EISDIR), true, FileKept),
    (errno!(ELOOP), true, FileKept),
    (errno!(ENAMETOOLONG), true, FileKept),
    (errno!(ENOENT), true, REL),
    (errno!(ENOMEM), true, FileKept),
    (errno!(ENOTDIR), true, FileKept),
    (errno!(EPERM), true, FileKept),
    (errno!(EROFS), true, FileKept),
];

/// close(2)'s errnos: the descriptor (and with it the lock) is gone whatever close answers.
const CLOSE: Spec = &[
    (errno!(EBADF), true, REL),
    (errno!(EINTR), true, REL),
    (errno!(EIO), true, REL),
    (errno!(ENOSPC), true, REL),
    (errno!(EDQUOT), true, REL),
];

/// The table, in the order of the docs.
fn rows() -> Vec<Row> {
    use Kinds::{All, Fcntl, Flock};
    use RawCall as C;
    use Step::*;
    let mut r = Vec::new();
    group(
        &mut r,
        Obtain,
        C::Realpath,
        All,
        realpath_spec!(Retried, Fails(NotADirectory)),
    );
    group(&mut r, Obtain, C::Mkdir, All, MKDIR);
    group(
        &mut r,
        Obtain,
        C::Lstat,
        All,
        stat_spec!(IO, Acquired, Fails(NotADirectory), IO),
    );
    group(&mut r, Obtain, C::Open, All, OPEN);
    // The `fstat` right after `open` shares `open`'s mapping: its `ELOOP` reads as a symlink
    // at the path (fstat cannot meet one; the wording is wrong, the failure is closed).
    group(
        &mut r,
        Obtain,
        C::Fstat,
        All,
        stat_spec!(IO, IO, IO, Fails(BadLockPath(EntryKind::Symlink))),
    );
    group(&mut r, Obtain, C::TryLock, Fcntl, fcntl_spec!(Held, IO, LU));
    group(&mut r, Obtain, C::TryLock, Flock, flock_spec!(Held, IO, LU));
    group(
        &mut r,
        ObtainBlocking,
        C::LockWait,
        Fcntl,
        fcntl_spec!(IO, IO, LU),
    );
    group(
        &mut r,
        ObtainBlocking,
        C::LockWait,
        Flock,
        flock_spec!(IO, IO, LU),
    );
    group(
        &mut r,
        EnsureValid,
        C::Probe,
        Fcntl,
        fcntl_spec!(IO, IO, IO),
    );
    group(
        &mut r,
        EnsureValid,
        C::Fstat,
        All,
        stat_spec!(IO, IO, IO, IO),
    );
    group(
        &mut r,
        EnsureValid,
        C::Lstat,
        All,
        stat_spec!(IO, Missing, IO, IO),
    );
    group(
        &mut r,
        Release,
        C::Unlock,
        Fcntl,
        fcntl_spec!(REL, REL, REL),
    );
    group(
        &mut r,
        Release,
        C::Unlock,
        Flock,
        flock_spec!(REL, REL, REL),
    );
    group(&mut r, Release, C::Close, All, CLOSE);
    let none = Kinds::NoOsLock;
    group(&mut r, SimpleObtain, C::Mkdir, none, MKDIR);
    group(
        &mut r,
        SimpleObtain,
        C::Realpath,
        none,
        realpath_spec!(IO, Fails(NotADirectory)),
    );
    group(&mut r, SimpleObtain, C::CreateNew, none, CREATE_NEW);
    group(
        &mut r,
        SimpleEnsureValid,
        C::Lstat,
        none,
        stat_spec!(IO, Missing, IO, IO),
    );
    group(
        &mut r,
        SimpleEnsureValid,
        C::ReadFile,
        none,
        read_spec!(Missing, IO),
    );
    group(
        &mut r,
        SimpleRelease,
        C::Lstat,
        none,
        stat_spec!(FileKept, RefusedMissing, FileKept, FileKept),
    );
    group(
        &mut r,
        SimpleRelease,
        C::ReadFile,
        none,
        read_spec!(RefusedMissing, FileKept),
    );
    group(&mut r, SimpleRelease, C::Unlink, none, UNLINK);
    r
}

const NAME: &str = "write.lock";

/// A temporary lock directory with an (empty) lock file already in it, so that "nothing is
/// deleted" means something for every row.
fn lock_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let canonical = std::fs::canonicalize(dir.path()).expect("canonical temporary directory");
    let path = canonical.join(NAME);
    std::fs::write(&path, b"").expect("lock file");
    (dir, path)
}

/// The step's outcome, read off what it returned; `Err` names a broken promise.
fn outcome_of(err: &LockError, errno: i32) -> Result<Outcome, String> {
    let kept = |source: &io::Error| {
        if source.raw_os_error() == Some(errno) {
            Ok(())
        } else {
            Err(format!("errno lost: {source:?}"))
        }
    };
    Ok(match err {
        LockError::HeldByOtherProcess { .. } => Held,
        LockError::Invalidated {
            reason: InvalidReason::Missing,
            ..
        } => Missing,
        LockError::Io { source, .. } => {
            kept(source)?;
            Fails(Io)
        }
        LockError::LockingUnsupported { source, .. } => {
            kept(source)?;
            Fails(LockingUnsupported)
        }
        LockError::NotADirectory { source, .. } => {
            kept(source)?;
            Fails(NotADirectory)
        }
        LockError::BadLockPath { found, .. } => Fails(BadLockPath(*found)),
        LockError::ReleaseRefused {
            reason: InvalidReason::Missing,
            ..
        } => RefusedMissing,
        other => return Err(format!("unexpected error: {other:?}")),
    })
}

/// After an error: the path is out of the held set, the lock file is still there, and a
/// fresh obtain (no scripted errors) gets the lock.
fn failed_closed(path: &Path, kind: OsLockKind) -> Result<(), String> {
    inject::reset();
    if RealSystem::new().held_contains(path) {
        return Err("the path stayed in the held set".into());
    }
    if std::fs::symlink_metadata(path).is_err() {
        return Err("the lock file was deleted".into());
    }
    let dir = path.parent().expect("lock file has a directory");
    match NativeFsLockFactory::new(kind).try_obtain_native(dir, NAME) {
        Ok(lock) => lock
            .close()
            .map_err(|e| format!("fresh lock's release: {e}")),
        Err(e) => Err(format!("the lock stayed held: {e}")),
    }
}

/// A SimpleFs step: the lock file is the lock. After a failed obtain no lock file may be left
/// (none was there; one the attempt made is removed); after a failed release the file is
/// either gone or reported kept; a fresh obtain then gets the lock.
fn run_simple(row: &Row) -> Result<Outcome, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = std::fs::canonicalize(tmp.path()).map_err(|e| e.to_string())?;
    let factory = SimpleFsLockFactory::new();
    inject::reset();
    let dir = if row.call == RawCall::Mkdir {
        dir.join("missing")
    } else {
        dir
    };
    let path = dir.join(NAME);
    let retried = |call| inject::calls(call) > 1;
    let outcome = match row.step {
        Step::SimpleObtain => {
            inject::fail_next(row.call, row.errno);
            let got = factory.try_obtain_simple(&dir, NAME);
            if inject::pending() != 0 {
                return Err(format!("{:?} never made {:?}", row.step, row.call));
            }
            match got {
                Ok(lock) => {
                    let o = if retried(row.call) { Retried } else { Acquired };
                    lock.close().map_err(|e| format!("release: {e}"))?;
                    o
                }
                Err(e) => {
                    let o = outcome_of(&e, row.errno)?;
                    if std::fs::symlink_metadata(&path).is_ok() {
                        return Err("a failed obtain left a lock file".into());
                    }
                    o
                }
            }
        }
        _ => {
            let lock = factory
                .try_obtain_simple(&dir, NAME)
                .map_err(|e| format!("obtain: {e}"))?;
            inject::reset();
            inject::fail_next(row.call, row.errno);
            let got = if row.step == Step::SimpleEnsureValid {
                let r = lock.ensure_valid();
                lock.close().map_err(|e| format!("release: {e}"))?;
                r
            } else {
                lock.close()
            };
            if inject::pending() != 0 {
                return Err(format!("{:?} never made {:?}", row.step, row.call));
            }
            match got {
                Ok(()) if retried(row.call) => Retried,
                Ok(()) => Passed,
                Err(e) => match outcome_of(&e, row.errno)? {
                    // `unlink` said ENOENT: someone removed the file in between; in the
                    // world that answer describes, it is gone (the release is done).
                    Fails(Io) if row.step == Step::SimpleRelease && row.errno == libc::ENOENT => {
                        let _ = std::fs::remove_file(&path);
                        ReleasedWithError
                    }
                    Fails(Io) if row.step == Step::SimpleRelease => {
                        if std::fs::symlink_metadata(&path).is_err() {
                            return Err("release failed but the file is gone".into());
                        }
                        // The operator's part: remove the kept file.
                        std::fs::remove_file(&path).map_err(|e| e.to_string())?;
                        FileKept
                    }
                    RefusedMissing => {
                        // The scripted ENOENT stands for a file someone removed: remove it, as
                        // the world the answer describes would have.
                        let _ = std::fs::remove_file(&path);
                        RefusedMissing
                    }
                    o => o,
                },
            }
        }
    };
    inject::reset();
    factory
        .try_obtain_simple(&dir, NAME)
        .map_err(|e| format!("the lock stayed taken: {e}"))?
        .close()
        .map_err(|e| format!("fresh lock's release: {e}"))?;
    Ok(outcome)
}

/// Performs `row`'s step with `kind` and reports the outcome it showed.
fn run(row: &Row, kind: OsLockKind) -> Result<Outcome, String> {
    if row.step.simple() {
        return run_simple(row);
    }
    let (_tmp, path) = lock_dir();
    let dir = path
        .parent()
        .expect("lock file has a directory")
        .to_path_buf();
    let factory = NativeFsLockFactory::new(kind);
    inject::reset();
    let ok_outcome = |call| {
        if inject::calls(call) > 1 {
            Retried
        } else {
            Acquired
        }
    };
    let outcome = match row.step {
        Step::Obtain | Step::ObtainBlocking => {
            inject::fail_next(row.call, row.errno);
            // `mkdir` is made only for a directory that is missing.
            let dir = if row.call == RawCall::Mkdir {
                dir.join("missing")
            } else {
                dir.clone()
            };
            let got = if row.step == Step::Obtain {
                factory.try_obtain_native(&dir, NAME)
            } else {
                factory.obtain_blocking_native(&dir, NAME)
            };
            if inject::pending() != 0 {
                return Err(format!("{:?} never made {:?}", row.step, row.call));
            }
            match got {
                Ok(lock) => {
                    let o = ok_outcome(row.call);
                    lock.close().map_err(|e| format!("release: {e}"))?;
                    o
                }
                Err(e) => {
                    let o = outcome_of(&e, row.errno)?;
                    failed_closed(&path, kind)?;
                    o
                }
            }
        }
        Step::SimpleObtain | Step::SimpleEnsureValid | Step::SimpleRelease => {
            unreachable!("SimpleFs steps run in run_simple")
        }
        Step::EnsureValid | Step::Release => {
            let mut lock = factory
                .try_obtain_native(&dir, NAME)
                .map_err(|e| format!("obtain: {e}"))?;
            inject::reset();
            inject::fail_next(row.call, row.errno);
            let got = if row.step == Step::EnsureValid {
                lock.ensure_valid()
            } else {
                LockHandle::close(&mut lock)
            };
            if inject::pending() != 0 {
                return Err(format!("{:?} never made {:?}", row.step, row.call));
            }
            let o = match got {
                Ok(()) if inject::calls(row.call) > 1 => Retried,
                Ok(()) => Passed,
                Err(e) if row.step == Step::Release => match outcome_of(&e, row.errno)? {
                    Fails(Io) => ReleasedWithError,
                    other => return Err(format!("release returned {other:?}")),
                },
                Err(e) => outcome_of(&e, row.errno)?,
            };
            LockHandle::close(&mut lock).map_err(|e| format!("release: {e}"))?;
            failed_closed(&path, kind)?;
            o
        }
    };
    inject::reset();
    Ok(outcome)
}

// ---- the docs table ----

fn step_name(s: Step) -> &'static str {
    match s {
        Step::Obtain => "`try_obtain`",
        Step::ObtainBlocking => "`obtain_blocking`",
        Step::EnsureValid => "`ensure_valid`",
        Step::Release => "release",
        Step::SimpleObtain => "SimpleFs `try_obtain`",
        Step::SimpleEnsureValid => "SimpleFs `ensure_valid`",
        Step::SimpleRelease => "SimpleFs release",
    }
}

fn call_name(call: RawCall, kinds: Kinds) -> &'static str {
    match (call, kinds) {
        (RawCall::Realpath, _) => "`realpath(dir)`",
        (RawCall::Mkdir, _) => "`mkdir(dir)` (missing directory)",
        (RawCall::Lstat, _) => "`lstat(path)`",
        (RawCall::Open, _) => "`open(path)`",
        (RawCall::Fstat, _) => "`fstat(fd)`",
        (RawCall::TryLock, Kinds::Flock) => "`flock(LOCK_EX\\|LOCK_NB)`",
        (RawCall::TryLock, _) => "`F_OFD_SETLK`/`F_SETLK`",
        (RawCall::LockWait, Kinds::Flock) => "`flock(LOCK_EX)`",
        (RawCall::LockWait, _) => "`F_OFD_SETLKW`/`F_SETLKW`",
        (RawCall::Unlock, Kinds::Flock) => "`flock(LOCK_UN)`",
        (RawCall::Unlock, _) => "`F_OFD_SETLK`/`F_SETLK` `F_UNLCK`",
        (RawCall::Probe, _) => "`F_OFD_GETLK`/`F_GETLK`",
        (RawCall::Close, _) => "`close(fd)`",
        (RawCall::CreateNew, _) => "`open(path, O_CREAT\\|O_EXCL)`",
        (RawCall::ReadFile, _) => "`open(path)` + `read` (the record)",
        (RawCall::Unlink, _) => "`unlink(path)`",
    }
}

fn outcome_text(o: Outcome) -> String {
    match o {
        Held => "conflict: `HeldByOtherProcess`".into(),
        Retried => "retried".into(),
        Acquired => "not an error: nothing there yet, obtain goes on".into(),
        Fails(BadLockPath(found)) => format!("`BadLockPath` ({found:?})"),
        Fails(f) => format!("`{f:?}`, errno kept"),
        Missing => "`Invalidated` (`Missing`)".into(),
        ReleasedWithError => "`Io`, errno kept; the lock is released anyway".into(),
        Passed => "no error".into(),
        FileKept => {
            "`Io`, errno kept; the lock file stays (the lock stays taken until it is removed)"
                .into()
        }
        RefusedMissing => "`ReleaseRefused` (`Missing`): nothing deleted".into(),
    }
}

/// The table as `docs/protocol.md` shows it: one line per step, call and outcome, listing
/// its errnos (`†`: not in the call's man page).
fn render() -> String {
    let mut out =
        String::from("| step | raw call | kinds | errno | outcome |\n|---|---|---|---|---|\n");
    // Lines in the order rows first show them; each lists every errno of its line.
    let mut lines: Vec<(Row, Vec<String>)> = Vec::new();
    for r in rows() {
        let name = format!("`{}`{}", r.name, if r.listed { "" } else { "†" });
        let key = |s: &Row| (s.step, s.call, s.kinds, s.outcome);
        match lines.iter_mut().find(|(s, _)| key(s) == key(&r)) {
            Some((_, names)) => names.push(name),
            None => lines.push((r, vec![name])),
        }
    }
    for (r, names) in lines {
        let kinds = match r.kinds {
            Kinds::Fcntl => "ofd, posix",
            Kinds::Flock => "flock",
            Kinds::All => "all",
            Kinds::NoOsLock => "none (SimpleFs)",
        };
        out.push_str(&format!(
            "| {} | {} | {kinds} | {} | {} |\n",
            step_name(r.step),
            call_name(r.call, r.kinds),
            names.join(", "),
            outcome_text(r.outcome)
        ));
    }
    out
}

const BEGIN: &str = "<!-- errno table: generated from impl/src/file/errno_table.rs -->\n";
const END: &str = "<!-- end of errno table -->\n";

#[test]
fn every_row_shows_its_outcome_through_the_production_code() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for row in rows() {
        for &kind in row.kinds.kinds() {
            runs += 1;
            match run(&row, kind) {
                Ok(o) if o == row.outcome => {}
                Ok(o) => failures.push(format!("{row:?} with {kind:?}: got {o:?}")),
                Err(e) => failures.push(format!("{row:?} with {kind:?}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Pinned: rows × the kinds each applies to.
    // (127, 299) before the lock directory's `realpath` (8 errnos) and `mkdir` (15) rows;
    // (150, 368) before SimpleFs's 82 rows (one run each).
    assert_eq!((rows().len(), runs), (232, 450));
}

/// No errno outside a call's conflict set becomes "held", and none but `EINTR` (retried)
/// becomes "acquired": every Linux errno, every kind, both lock-taking calls.
#[test]
fn no_errno_outside_the_conflict_set_is_held_or_acquired() {
    for kind in OsLockKind::ALL {
        for (step, call) in [
            (Step::Obtain, RawCall::TryLock),
            (Step::ObtainBlocking, RawCall::LockWait),
        ] {
            let conflict: &[i32] = match (step, kind) {
                (Step::Obtain, OsLockKind::Flock) => &[libc::EWOULDBLOCK],
                (Step::Obtain, _) => &[libc::EACCES, libc::EAGAIN],
                _ => &[],
            };
            for errno in 1..=133 {
                let row = Row {
                    step,
                    call,
                    kinds: Kinds::All,
                    errno,
                    name: "",
                    listed: false,
                    outcome: Retried,
                };
                let got = run(&row, kind)
                    .unwrap_or_else(|e| panic!("{kind:?} {call:?} errno {errno}: {e}"));
                match got {
                    Held => assert!(
                        conflict.contains(&errno),
                        "{kind:?} {call:?}: errno {errno} read as held"
                    ),
                    Retried => assert_eq!(
                        errno,
                        libc::EINTR,
                        "{kind:?} {call:?}: errno {errno} retried"
                    ),
                    Fails(_) => assert!(
                        !conflict.contains(&errno) && errno != libc::EINTR,
                        "{kind:?} {call:?}: errno {errno} failed"
                    ),
                    other => panic!("{kind:?} {call:?}: errno {errno} became {other:?}"),
                }
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(lockwright_repository),
    ignore = "the docs pages are not in the published package; run in the repository"
)]
fn the_docs_table_is_this_table() {
    crate::doc_table::assert_section_is("docs/protocol.md", BEGIN, END, &render());
}
