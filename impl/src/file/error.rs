//! [`LockError`]: the one error type of every file-lock factory.
//!
//! Messages follow the std convention: [`fmt::Display`] says what went wrong with which path,
//! and the underlying OS error (or, for [`LockError::TimedOut`], the last "held" error) is
//! [`std::error::Error::source`], never repeated in the message, so an error-chain printer
//! (`anyhow`'s `{:#}`) prints each fact once. What to do about an error is not in the message
//! either: [`LockError::advice`] says it, for whoever wants to show it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::sys::{EntryKind, FileId, OsLockKind};

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
/// Every message names the path. [`LockError::is_held`] tells "someone holds it, try later"
/// from everything else, which is a bug or a broken environment and should not be retried;
/// [`LockError::advice`] says what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum LockError {
    /// This process already holds the lock (through any factory sharing the held set), or one
    /// of its threads is in the middle of obtaining it.
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
    /// [`crate::file::LockFactory::obtain_timeout`] gave up: the lock stayed held for the
    /// whole timeout.
    TimedOut {
        /// The lock file path (as the last attempt reported it).
        path: PathBuf,
        /// How long we tried.
        waited: Duration,
        /// The last "held" error, with whatever it knew about the holder (also the
        /// [`std::error::Error::source`]).
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

    /// Whether the lock is lost: it was invalidated (see [`InvalidReason`]), so stop writing.
    /// The same name in every family (`ZkLockError::is_lost`, `DocLockError::is_lost`).
    pub fn is_lost(&self) -> bool {
        matches!(self, LockError::Invalidated { .. })
    }

    /// Renamed [`LockError::is_lost`], the name every family uses.
    #[deprecated(since = "0.1.0", note = "renamed `is_lost()`, as in every family")]
    pub fn is_invalidated(&self) -> bool {
        self.is_lost()
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

    /// What to do about this error, for an operator or a log line; `None` where there is
    /// nothing general to say (an I/O error other than "permission denied").
    ///
    /// ```
    /// # use lockwright::LockError;
    /// # use std::path::PathBuf;
    /// let e = LockError::AlreadyClosed { path: PathBuf::from("/idx/write.lock") };
    /// assert_eq!(e.to_string(), "lock /idx/write.lock was already released");
    /// assert_eq!(e.advice(), Some("obtain the lock again before using it"));
    /// ```
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            LockError::HeldByThisProcess { .. } => {
                "release the existing lock first, or wait for it with obtain_timeout or obtain_blocking"
            }
            LockError::HeldByOtherProcess { .. } => {
                "wait for the holder to release the lock or exit, then retry (obtain_timeout and \
                 obtain_blocking wait for you); a SimpleFs lock whose holder is not running is \
                 stale: check that nothing uses the directory, then delete the lock file by hand"
            }
            LockError::TimedOut { .. } => {
                "the lock stayed held: retry later, wait longer, or find the holder (see the \
                 source error)"
            }
            LockError::AlreadyClosed { .. } => "obtain the lock again before using it",
            LockError::Invalidated { .. } => {
                "stop writing, since another process may hold the lock now, and obtain the lock again"
            }
            LockError::ReleaseRefused { .. } => {
                "check who holds the lock file now, and delete it by hand only if nobody does"
            }
            LockError::LockingUnsupported { .. } => {
                "use a local filesystem or another lock kind (NFS without lockd, FUSE, or OFD \
                 locks on a kernel older than 3.15 refuse some kinds)"
            }
            LockError::BadLockName { .. } => {
                "use a single plain file name such as \"write.lock\""
            }
            LockError::BadLockPath { .. } => {
                "remove what is at the lock path, or choose another lock directory"
            }
            LockError::NotADirectory { .. } => "choose another lock directory",
            LockError::Io { source, .. } if source.kind() == io::ErrorKind::PermissionDenied => {
                "check the ownership and permissions of the lock directory and the lock file"
            }
            LockError::Io { .. } => return None,
        })
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::HeldByThisProcess { path } => {
                write!(f, "lock {} is already held by this process", path.display())
            }
            LockError::HeldByOtherProcess { path, pid, holder } => {
                write!(f, "lock {} is held by another process", path.display())?;
                match (pid, holder) {
                    (_, Some(h)) => write!(f, " ({h})"),
                    (Some(pid), None) => write!(f, " (pid {pid})"),
                    (None, None) => Ok(()),
                }
            }
            LockError::AlreadyClosed { path } => {
                write!(f, "lock {} was already released", path.display())
            }
            LockError::Invalidated { path, reason } => {
                write!(f, "lock {} is no longer valid: {reason}", path.display())
            }
            LockError::ReleaseRefused { path, reason } => write!(
                f,
                "did not delete lock file {}: {reason}, so another process may own it now",
                path.display()
            ),
            LockError::LockingUnsupported { path, kind, .. } => write!(
                f,
                "cannot take a {} lock on {}: the filesystem does not support this lock kind",
                kind.name(),
                path.display()
            ),
            LockError::BadLockName { name, reason } => write!(
                f,
                "bad lock name {name:?}: {reason}; a lock name is a single plain file name"
            ),
            LockError::BadLockPath { path, found } => write!(
                f,
                "lock file path {} is {}, not a regular file",
                path.display(),
                entry_kind_phrase(*found)
            ),
            LockError::NotADirectory { path, .. } => write!(
                f,
                "lock directory {} cannot be created: it or one of its parents exists and is not a directory",
                path.display()
            ),
            LockError::Io { path, .. } => write!(f, "I/O error on {}", path.display()),
            LockError::TimedOut { path, waited, .. } => write!(
                f,
                "timed out after {:.3}s waiting for lock {}",
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

/// For callers that speak `io::Result` (a `Directory` trait, a storage engine): the kind says
/// what happened, the `LockError` stays reachable as the inner error (`get_ref`, `source`).
///
/// | `LockError` | `io::ErrorKind` |
/// |---|---|
/// | `HeldByThisProcess`, `HeldByOtherProcess` | `WouldBlock` |
/// | `TimedOut` | `TimedOut` |
/// | `LockingUnsupported` | `Unsupported` |
/// | `BadLockName`, `BadLockPath` | `InvalidInput` |
/// | `NotADirectory`, `Io` | the OS error's kind |
/// | `AlreadyClosed`, `Invalidated`, `ReleaseRefused` | `Other` |
impl From<LockError> for io::Error {
    fn from(e: LockError) -> io::Error {
        let kind = match &e {
            LockError::HeldByThisProcess { .. } | LockError::HeldByOtherProcess { .. } => {
                io::ErrorKind::WouldBlock
            }
            LockError::TimedOut { .. } => io::ErrorKind::TimedOut,
            LockError::LockingUnsupported { .. } => io::ErrorKind::Unsupported,
            LockError::BadLockName { .. } | LockError::BadLockPath { .. } => {
                io::ErrorKind::InvalidInput
            }
            LockError::NotADirectory { source, .. } | LockError::Io { source, .. } => source.kind(),
            LockError::AlreadyClosed { .. }
            | LockError::Invalidated { .. }
            | LockError::ReleaseRefused { .. } => io::ErrorKind::Other,
        };
        io::Error::new(kind, e)
    }
}
