//! [`LockError`]: the one error type of every lock factory.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sys::{EntryKind, FileId, OsLockKind};

/// Why a lock name was refused. A lock name is a single file name inside the lock directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BadNameReason {
    /// The name is empty.
    Empty,
    /// The name contains `/`: it would name a file outside the lock directory.
    ContainsSlash,
    /// The name contains a NUL byte, which no Unix path can hold.
    ContainsNul,
    /// The name is `.` or `..`, which name directories.
    DotOrDotDot,
}

impl fmt::Display for BadNameReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BadNameReason::Empty => "it is empty",
            BadNameReason::ContainsSlash => "it contains '/'",
            BadNameReason::ContainsNul => "it contains a NUL byte",
            BadNameReason::DotOrDotDot => "'.' and '..' name directories",
        })
    }
}

/// What changed under a held lock so that it can no longer be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidReason {
    /// The lock file's path is no longer in this process's held set (someone cleared it, or a
    /// second factory instance released the same path).
    NotInHeldSet,
    /// Our lock file has no links left: it was deleted while we held it. A newcomer now
    /// creates and locks a fresh inode (LUCENE-5612).
    Unlinked,
    /// Nothing is at the lock file's path any more (deleted or renamed away).
    Missing,
    /// Another file now sits at the lock file's path (re-created, or renamed over it): a
    /// newcomer can lock it while we still hold the old one.
    Replaced {
        /// The file we locked.
        old: FileId,
        /// What is at the path now.
        new: FileId,
    },
    /// The lock file is no longer empty (lock files are always empty; somebody wrote to it).
    NotEmpty {
        /// Its current length in bytes.
        len: u64,
    },
    /// Something other than a regular file is at the lock file's path.
    NotRegular {
        /// What is there.
        found: EntryKind,
    },
    /// The kernel reports another owner holding a conflicting lock on our file: our lock
    /// was dropped (e.g. a POSIX lock by a foreign `close()` in this process) and taken.
    LockLost {
        /// The other holder's pid, when the kernel reports one (POSIX locks).
        pid: Option<i32>,
    },
    /// The SimpleFs lock file no longer holds the record this lock wrote.
    RecordChanged,
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidReason::NotInHeldSet => f.write_str("its path was removed from this process's held set"),
            InvalidReason::Unlinked => f.write_str("the lock file was deleted while held (its link count is 0)"),
            InvalidReason::Missing => f.write_str("nothing is at the lock file's path any more (deleted or renamed away)"),
            InvalidReason::Replaced { old, new } => write!(
                f,
                "the lock file was replaced (held inode {} on device {}, the path now names inode {} on device {})",
                old.ino, old.dev, new.ino, new.dev
            ),
            InvalidReason::NotEmpty { len } => write!(f, "the lock file is no longer empty ({len} bytes)"),
            InvalidReason::NotRegular { found } => {
                write!(f, "the lock file's path now names {}", entry_kind_phrase(*found))
            }
            InvalidReason::LockLost { pid: Some(pid) } => {
                write!(f, "the OS lock was lost: process {pid} now holds a conflicting lock")
            }
            InvalidReason::LockLost { pid: None } => {
                f.write_str("the OS lock was lost: another owner now holds a conflicting lock")
            }
            InvalidReason::RecordChanged => {
                f.write_str("the lock file no longer holds the record this lock wrote")
            }
        }
    }
}

pub(crate) fn entry_kind_phrase(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Regular => "a regular file",
        EntryKind::Directory => "a directory",
        EntryKind::Symlink => "a symbolic link",
        EntryKind::Other => "a device, FIFO or socket",
    }
}

/// Everything that can go wrong obtaining, checking or releasing a lock.
///
/// Every message names the path and says what to do. [`LockError::is_held`] tells "someone
/// holds it, try later" from everything else, which is a bug or a broken environment and
/// should not be retried.
#[derive(Debug)]
#[non_exhaustive]
pub enum LockError {
    /// This process already holds the lock (through any factory sharing the held set).
    HeldByThisProcess {
        /// The canonical lock file path.
        path: PathBuf,
    },
    /// Another process holds the lock.
    HeldByOtherProcess {
        /// The canonical lock file path.
        path: PathBuf,
        /// The holder's pid, where the OS or the lock file can tell (POSIX locks, SimpleFs).
        pid: Option<i32>,
        /// A description of the holder, where known (SimpleFs records it in the file).
        holder: Option<String>,
    },
    /// The lock was already released.
    AlreadyClosed {
        /// The lock file path.
        path: PathBuf,
    },
    /// The lock is no longer trustworthy: something outside the protocol changed it.
    Invalidated {
        /// The lock file path.
        path: PathBuf,
        /// What changed.
        reason: InvalidReason,
    },
    /// SimpleFs release found that the lock file is no longer the one this lock created, so
    /// it did not delete it (another process may own it now).
    ReleaseRefused {
        /// The lock file path.
        path: PathBuf,
        /// What is different.
        reason: InvalidReason,
    },
    /// The filesystem cannot take this kind of lock (`ENOLCK`, `EOPNOTSUPP`, `EINVAL` for
    /// OFD on old kernels). The protocol never carries on unlocked.
    LockingUnsupported {
        /// The lock file path.
        path: PathBuf,
        /// The lock kind that was refused.
        kind: OsLockKind,
        /// The OS error.
        source: io::Error,
    },
    /// The lock name is not a single plain file name.
    BadLockName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: BadNameReason,
    },
    /// Something other than a regular file is at the lock file's path.
    BadLockPath {
        /// The lock file path.
        path: PathBuf,
        /// What is there.
        found: EntryKind,
    },
    /// The lock directory (or one of its parents) exists and is not a directory.
    NotADirectory {
        /// The lock directory as given.
        path: PathBuf,
        /// The OS error (`EEXIST` or `ENOTDIR`).
        source: io::Error,
    },
    /// Any other I/O error, with the path it concerns.
    Io {
        /// The path the failed operation was on.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// [`crate::obtain_with_timeout`] gave up: the lock stayed held for the whole timeout.
    TimedOut {
        /// The lock file path (as the last attempt reported it).
        path: PathBuf,
        /// How long we tried.
        waited: Duration,
        /// The last "held" error, with whatever it knew about the holder.
        last: Box<LockError>,
    },
}

impl LockError {
    /// Whether the lock is held by someone (this process or another), so trying again later
    /// may succeed. Also true for [`LockError::TimedOut`].
    pub fn is_held(&self) -> bool {
        matches!(
            self,
            LockError::HeldByThisProcess { .. }
                | LockError::HeldByOtherProcess { .. }
                | LockError::TimedOut { .. }
        )
    }

    /// Whether the lock was invalidated (see [`InvalidReason`]).
    pub fn is_invalidated(&self) -> bool {
        matches!(self, LockError::Invalidated { .. })
    }

    /// The path the error is about (`None` for [`LockError::BadLockName`]).
    pub fn path(&self) -> Option<&Path> {
        match self {
            LockError::HeldByThisProcess { path }
            | LockError::HeldByOtherProcess { path, .. }
            | LockError::AlreadyClosed { path }
            | LockError::Invalidated { path, .. }
            | LockError::ReleaseRefused { path, .. }
            | LockError::LockingUnsupported { path, .. }
            | LockError::BadLockPath { path, .. }
            | LockError::NotADirectory { path, .. }
            | LockError::Io { path, .. }
            | LockError::TimedOut { path, .. } => Some(path),
            LockError::BadLockName { .. } => None,
        }
    }

    /// The holder's pid, where known (for a timeout: the last attempt's).
    pub fn holder_pid(&self) -> Option<i32> {
        match self {
            LockError::HeldByOtherProcess { pid, .. } => *pid,
            LockError::TimedOut { last, .. } => last.holder_pid(),
            _ => None,
        }
    }

    /// The reason, for [`LockError::Invalidated`] and [`LockError::ReleaseRefused`].
    pub fn invalid_reason(&self) -> Option<InvalidReason> {
        match self {
            LockError::Invalidated { reason, .. } | LockError::ReleaseRefused { reason, .. } => {
                Some(*reason)
            }
            _ => None,
        }
    }

    /// The underlying OS error kind, if there is one.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            LockError::LockingUnsupported { source, .. }
            | LockError::NotADirectory { source, .. }
            | LockError::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::HeldByThisProcess { path } => write!(
                f,
                "lock {} is already held by this process; release the existing lock before obtaining it again",
                path.display()
            ),
            LockError::HeldByOtherProcess { path, pid, holder } => {
                write!(f, "lock {} is held by another process", path.display())?;
                match (pid, holder) {
                    (_, Some(h)) => write!(f, " ({h})")?,
                    (Some(pid), None) => write!(f, " (pid {pid})")?,
                    (None, None) => {}
                }
                write!(f, "; wait for it to exit or release the lock, then retry")
            }
            LockError::AlreadyClosed { path } => {
                write!(f, "lock {} was already released; obtain it again before using it", path.display())
            }
            LockError::Invalidated { path, reason } => write!(
                f,
                "lock {} is no longer valid: {reason}; stop writing, since another process may now hold it, and obtain the lock again",
                path.display()
            ),
            LockError::ReleaseRefused { path, reason } => write!(
                f,
                "did not delete lock file {}: {reason}, so another process may own it now; check who holds it and delete it by hand only if nobody does",
                path.display()
            ),
            LockError::LockingUnsupported { path, kind, source } => write!(
                f,
                "cannot take a {} lock on {}: {source}; the filesystem does not support this lock kind (NFS without lockd, FUSE, or OFD on a pre-3.15 kernel): use a local filesystem or another lock kind",
                kind.name(),
                path.display()
            ),
            LockError::BadLockName { name, reason } => write!(
                f,
                "bad lock name {name:?}: {reason}; a lock name must be a single plain file name such as \"write.lock\""
            ),
            LockError::BadLockPath { path, found } => write!(
                f,
                "lock file path {} is {}, not a regular file; remove it or choose another lock directory",
                path.display(),
                entry_kind_phrase(*found)
            ),
            LockError::NotADirectory { path, source } => write!(
                f,
                "lock directory {} cannot be created: it or one of its parents exists and is not a directory ({source}); choose another directory",
                path.display()
            ),
            LockError::Io { path, source } => {
                write!(f, "I/O error on {}: {source}", path.display())?;
                if source.kind() == io::ErrorKind::PermissionDenied {
                    write!(f, "; check the ownership and permissions of the lock directory")?;
                }
                Ok(())
            }
            LockError::TimedOut { path, waited, last } => write!(
                f,
                "timed out after {:.3}s waiting for lock {}: {last}",
                waited.as_secs_f64(),
                path.display()
            ),
        }
    }
}

impl std::error::Error for LockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LockError::LockingUnsupported { source, .. }
            | LockError::NotADirectory { source, .. }
            | LockError::Io { source, .. } => Some(source),
            LockError::TimedOut { last, .. } => Some(&**last),
            _ => None,
        }
    }
}
