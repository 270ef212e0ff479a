//! Writer locks for index and database directories: the protocol of Lucene's
//! `NativeFSLockFactory` (a per-process held set plus an OS advisory lock on a lock file that
//! is never deleted), as a small, checked Rust crate.
//!
//! ```
//! use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let factory = NativeFsLockFactory::new(OsLockKind::Ofd);
//!
//! let mut lock = factory.try_obtain(dir.path(), "write.lock")?;
//! // ... before each commit, make sure nothing took the lock away:
//! lock.ensure_valid()?;
//!
//! // Any second obtain fails while the lock is held: here, from this process.
//! match factory.try_obtain(dir.path(), "write.lock") {
//!     Err(e @ LockError::HeldByThisProcess { .. }) => println!("{e}"),
//!     other => panic!("expected HeldByThisProcess, got {other:?}"),
//! }
//!
//! lock.close()?; // or just drop it
//! assert!(matches!(lock.ensure_valid(), Err(LockError::AlreadyClosed { .. })));
//! # Ok::<(), LockError>(())
//! ```
//!
//! # Factories
//!
//! | factory | excludes | survives a crash | use |
//! |---|---|---|---|
//! | [`NativeFsLockFactory`] | other processes and this process's other factories | yes: the kernel drops the lock | the default |
//! | [`SimpleFsLockFactory`] | anyone honouring the lock file | no: a stale file stays until deleted by hand | filesystems without working locks |
//! | [`SingleInstanceLockFactory`] | users of the same factory value | n/a | one process, in memory |
//! | [`NoLockFactory`] | nobody (unsafe) | n/a | read-only or single-writer by construction |
//!
//! [`obtain_with_timeout`] and [`SleepingLockFactory`] retry while a lock is held.
//!
//! # Which OS lock: [`OsLockKind`], always chosen explicitly
//!
//! - [`OsLockKind::Ofd`] (`F_OFD_SETLK`, Linux ≥ 3.15, the recommendation): owned by the open
//!   file description. Conflicts with POSIX `fcntl` locks, so it **excludes Java/Lucene**
//!   (`FileChannel.tryLock` is a whole-file POSIX lock) **and SQLite**. Another descriptor of the
//!   file being closed does not drop it. The holder's pid is not reported (`F_OFD_GETLK` says -1).
//! - [`OsLockKind::Posix`] (`F_SETLK`): owned by the whole process. Excludes Java, SQLite and OFD
//!   users, and names the holder's pid. But closing ANY descriptor of the lock file in this
//!   process, by any code, drops the lock (fcntl(2)); the held set keeps this crate from doing
//!   so (LUCENE-5738, LUCENE-6507), it cannot stop foreign code. Two factories with separate
//!   held sets in one process do not exclude each other.
//! - [`OsLockKind::Flock`] (`flock(2)`, also what Rust's `File::try_lock` and fs2/fs4 use):
//!   owned by the open file description. **Does NOT exclude Java/Lucene or any `fcntl`
//!   locker**: a Lucene process and a flock user can both "hold" the directory. Cannot be
//!   probed, so [`Lock::ensure_valid`] cannot detect a lost flock lock.
//!
//! Never mix kinds on one directory: an `flock` holder and an `fcntl` holder do not see each
//! other.
//!
//! **NFS**: Linux emulates `flock` on NFS with whole-file POSIX locks (process-owned
//! semantics), OFD locks go through the same lock manager; a lost NFSv4 lock surfaces as `EIO`
//! and some setups answer `ENOLCK`, reported as [`LockError::LockingUnsupported`]. The protocol
//! never carries on unlocked. Prefer a local filesystem for lock directories.
//!
//! # The lock file is never deleted
//!
//! Locks live on the inode, not the path. Deleting `write.lock` on release (Lucene 4.8,
//! LUCENE-5612) lets a process that had opened the old file lock the orphan while a newcomer
//! creates and locks a fresh inode: two writers. [`NativeFsLockFactory`] therefore leaves the
//! empty file in place, and [`Lock::ensure_valid`] reports it if someone else deletes, replaces
//! or writes to it. Do not delete lock files by hand while anything may use the directory.
//!
//! # Known limits
//!
//! - [`Lock::ensure_valid`] is a point-in-time check. It sees a deleted, replaced or written
//!   lock file and a conflicting holder the kernel reports; it cannot see a POSIX lock that
//!   foreign code in this process dropped (by closing another descriptor) while nobody has
//!   taken it yet, nor a lost `flock` lock.
//! - A raw `fork()` child inherits OFD and `flock` locks (same open file description) until
//!   it closes the descriptor; `std::process::Command` children do not (descriptors are
//!   `O_CLOEXEC`).
//! - [`SimpleFsLockFactory`] cannot survive a crash by itself: a stale file needs a human.
//!
//! # Structure
//!
//! Every protocol is written once over the [`sys::System`] trait; [`RealSystem`] (module
//! `os`, the only code that calls `open`/`fcntl`/`flock`/`fstat`/`unlink`) is production, and
//! the checks crate plugs in a simulated OS to drive the same code through a model checker's
//! interleavings.

pub mod defects;
mod error;
mod inprocess;
mod native;
mod os;
mod simple;
mod sleeping;
pub mod sys;
pub mod verifying;
#[cfg(feature = "zookeeper")]
pub mod zk;

pub use error::{BadNameReason, InvalidReason, LockError};
pub use inprocess::{NoLockFactory, SingleInstanceLockFactory};
pub use native::{NativeFsLock, NativeFsLockFactory};
pub use simple::{HolderRecord, SimpleFsLock, SimpleFsLockFactory};
pub use sleeping::{obtain_with_timeout, SleepingLockFactory};
pub use sys::{HeldSet, OsLockKind, RealSystem};

// The README's example is compiled and run as a doctest, so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

use std::fmt;
use std::path::Path;

/// Obtains named locks in a directory (Lucene's `LockFactory`).
pub trait LockFactory: Send + Sync {
    /// Tries once, without blocking, to obtain the lock `name` (a plain file name such as
    /// `write.lock`) in `dir`, creating `dir` if needed.
    ///
    /// # Errors
    /// [`LockError::is_held`] errors ([`LockError::HeldByThisProcess`],
    /// [`LockError::HeldByOtherProcess`]) when someone holds the lock; anything else means the
    /// name, the directory or the filesystem is unusable. Each factory documents its cases.
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError>;
}

/// What a factory's lock does; wrapped by [`Lock`].
pub trait LockHandle: Send {
    /// Checks that the lock is still held and still protects the file it locked.
    ///
    /// # Errors
    /// [`LockError::AlreadyClosed`] after close; [`LockError::Invalidated`] with the
    /// [`InvalidReason`]; [`LockError::Io`] if the check itself failed.
    fn ensure_valid(&self) -> Result<(), LockError>;
    /// Releases the lock; must be idempotent.
    ///
    /// # Errors
    /// Release failures, with the path.
    fn close(&mut self) -> Result<(), LockError>;
    /// The lock file's path (canonical for the filesystem factories).
    fn path(&self) -> &Path;
}

/// A held lock. Dropping it closes it (ignoring release errors: call [`Lock::close`] to see
/// them).
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct Lock {
    inner: Box<dyn LockHandle>,
}

impl Lock {
    /// Wraps a factory's handle.
    pub fn new(inner: Box<dyn LockHandle>) -> Self {
        Lock { inner }
    }

    /// Checks that the lock is still held; call it before every commit, as Lucene's
    /// `IndexWriter` does.
    ///
    /// # Errors
    /// Why the lock can no longer be trusted: [`LockError::AlreadyClosed`],
    /// [`LockError::Invalidated`] (with the [`InvalidReason`]), or [`LockError::Io`].
    pub fn ensure_valid(&self) -> Result<(), LockError> {
        self.inner.ensure_valid()
    }

    /// Releases the lock. Idempotent: a second close returns `Ok(())`.
    ///
    /// # Errors
    /// Release failures, with the path ([`LockError::Io`]; for SimpleFs also
    /// [`LockError::ReleaseRefused`]). The lock is released as far as possible either way.
    pub fn close(&mut self) -> Result<(), LockError> {
        self.inner.close()
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        self.inner.path()
    }
}

impl fmt::Debug for Lock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lock")
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}

/// Checks that `name` is a single plain file name.
///
/// # Errors
/// [`LockError::BadLockName`] saying why.
pub fn validate_name(name: &str) -> Result<(), LockError> {
    let reason = if name.is_empty() {
        BadNameReason::Empty
    } else if name.contains('/') {
        BadNameReason::ContainsSlash
    } else if name.contains('\0') {
        BadNameReason::ContainsNul
    } else if name == "." || name == ".." {
        BadNameReason::DotOrDotDot
    } else {
        return Ok(());
    };
    Err(LockError::BadLockName {
        name: name.to_string(),
        reason,
    })
}
