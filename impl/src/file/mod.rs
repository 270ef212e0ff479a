//! File locks: a per-process held set plus an OS advisory lock on a lock file in the directory
//! to protect, as in Lucene's `write.lock` (`NativeFSLockFactory`), and its relatives.
//!
//! - [`LockFactory`] obtains a named lock in a directory: [`LockFactory::try_obtain`] (one
//!   attempt, never waits), [`LockFactory::obtain_timeout`] (retries while held, up to a
//!   timeout), [`LockFactory::obtain_blocking`] (waits as long as it takes).
//! - [`Lock`] is the held lock: [`Lock::ensure_valid`] before each write that must be
//!   exclusive, [`Lock::close`] (or drop) to release.
//! - [`LockError`] is every error, with the path; [`LockError::advice`] says what to do.
//!
//! | factory | excludes | survives a crash | use |
//! |---|---|---|---|
//! | [`NativeFsLockFactory`] | other processes and this process's other factories | yes: the kernel drops the lock | the default |
//! | [`SimpleFsLockFactory`] | anyone honouring the lock file | no: a stale file stays until deleted by hand | filesystems without working locks |
//! | [`SingleInstanceLockFactory`] | users of the same factory value | n/a | one process, in memory |
//! | [`NoLockFactory`] | nobody (unsafe) | n/a | read-only or single-writer by construction |
//! | [`verifying::VerifyingLockFactory`] | what the inner factory excludes | as the inner factory | stress tests against a verify server |
//!
//! Modules: [`sys`] (the system interface every protocol is written over, and the lock kinds),
//! [`timeouts`] (polling obtain), [`verifying`] (Lucene's verify-server protocol); the OS gate,
//! `gate`, is private: it is the only code in the crate that makes file-system or lock calls.

#[cfg(test)]
mod errno_table;
mod error;
mod gate;
#[cfg(test)]
mod inject;
mod inprocess;
mod native;
mod simple;
pub mod sys;
pub mod timeouts;
pub mod verifying;

#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod defects;

pub use error::{BadNameReason, InvalidReason, LockError};
pub use inprocess::{NoLockFactory, SingleInstanceLockFactory};
pub use native::{NativeFsLock, NativeFsLockFactory};
pub use simple::{HolderRecord, SimpleFsLock, SimpleFsLockFactory};
pub use sys::OsLockKind;

use std::fmt;
use std::path::Path;
use std::time::Duration;

/// The permission bits a lock file is created with unless the factory is told otherwise
/// (`rw-r--r--`, then the umask). Every party must be able to open the lock file read-write to
/// lock it: for writers running as different users of one group use `0o660` or `0o664`.
pub const DEFAULT_LOCK_FILE_MODE: u32 = 0o644;

/// Obtains named locks in a directory (Lucene's `LockFactory`).
///
/// Three ways to obtain, named for whether and how they wait:
///
/// | method | when the lock is held |
/// |---|---|
/// | [`LockFactory::try_obtain`] | fails at once with a "held" error ([`LockError::is_held`]) |
/// | [`LockFactory::obtain_timeout`] | retries until the timeout, then [`LockError::TimedOut`] |
/// | [`LockFactory::obtain_blocking`] | waits until it is released, however long |
///
/// None of them retries other errors: a bad name, a broken directory or an unsupported
/// filesystem will not heal by waiting.
pub trait LockFactory: Send + Sync {
    /// Tries once to obtain the lock `name` (a plain file name such as `write.lock`) in `dir`,
    /// creating `dir` if needed. Never waits: not for another holder, and not for a sleep.
    ///
    /// # Errors
    /// [`LockError::is_held`] errors ([`LockError::HeldByThisProcess`],
    /// [`LockError::HeldByOtherProcess`]) when someone holds the lock; anything else means the
    /// name, the directory or the filesystem is unusable. Each factory documents its cases.
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError>;

    /// Obtains the lock, retrying while it is held for at most `timeout`. It tries at least
    /// once, so `Duration::ZERO` means "try once"; a timeout too large to represent waits
    /// forever. The default polls [`LockFactory::try_obtain`] every
    /// [`timeouts::DEFAULT_POLL_INTERVAL`] ([`timeouts::obtain_with_timeout`]; the kernel has
    /// no timed lock call to do better).
    ///
    /// # Errors
    /// [`LockError::TimedOut`] carrying the last "held" error, or the first error that is not
    /// a "held" error.
    fn obtain_timeout(&self, dir: &Path, name: &str, timeout: Duration) -> Result<Lock, LockError> {
        timeouts::obtain_with_timeout(self, dir, name, timeout, timeouts::DEFAULT_POLL_INTERVAL)
    }

    /// Obtains the lock, waiting as long as it is held. The default polls
    /// [`LockFactory::try_obtain`] every [`timeouts::DEFAULT_POLL_INTERVAL`];
    /// [`NativeFsLockFactory`] waits in the kernel instead (`F_OFD_SETLKW`, `F_SETLKW`,
    /// `flock` without `LOCK_NB`), then checks that the path still names the file it locked
    /// and starts over if the file was replaced or deleted during the wait (see
    /// [`NativeFsLockFactory::obtain_blocking_native`]).
    ///
    /// The wait cannot be cancelled. Calling it for a lock that the calling thread already
    /// holds never returns (as `std::sync::Mutex::lock` may); a SimpleFs lock left stale by a
    /// crash makes it wait until someone deletes the file.
    ///
    /// # Errors
    /// The first error that is not a "held" error.
    fn obtain_blocking(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        timeouts::obtain_polling(self, dir, name, None, timeouts::DEFAULT_POLL_INTERVAL)
    }
}

/// What a factory's lock does; wrapped by [`Lock`].
///
/// Implement it to write a factory of your own. Unlike [`Lock::close`], [`LockHandle::close`]
/// takes `&mut self` and must be idempotent: [`Lock`] calls it again when dropped. It is
/// `Send + Sync` so that a [`Lock`] is too: writer threads may share one `Arc<Lock>`, each
/// calling [`Lock::ensure_valid`] before its write.
pub trait LockHandle: Send + Sync {
    /// Checks that the lock is still held and still protects the file it locked.
    ///
    /// # Errors
    /// [`LockError::AlreadyClosed`] after close; [`LockError::Invalidated`] with the
    /// [`InvalidReason`]; [`LockError::Io`] if the check itself failed.
    fn ensure_valid(&self) -> Result<(), LockError>;
    /// Releases the lock. Idempotent: a second call returns `Ok(())` and does nothing.
    ///
    /// # Errors
    /// Release failures, with the path.
    fn close(&mut self) -> Result<(), LockError>;
    /// The lock file's path (canonical for the filesystem factories).
    fn path(&self) -> &Path;
}

/// A held lock. Dropping it releases it (ignoring release errors: call [`Lock::close`] to see
/// them).
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct Lock {
    /// `None` only inside [`Lock::into_handle`].
    inner: Option<Box<dyn LockHandle>>,
}

impl Lock {
    /// Wraps a factory's handle.
    pub fn new(inner: Box<dyn LockHandle>) -> Self {
        Lock { inner: Some(inner) }
    }

    fn handle(&self) -> &dyn LockHandle {
        self.inner
            .as_deref()
            .expect("a Lock has its handle until it is consumed")
    }

    /// Checks that the lock is still held; call it before every commit, as Lucene's
    /// `IndexWriter` does.
    ///
    /// # Errors
    /// Why the lock can no longer be trusted: [`LockError::Invalidated`] (with the
    /// [`InvalidReason`]), or [`LockError::Io`].
    pub fn ensure_valid(&self) -> Result<(), LockError> {
        self.handle().ensure_valid()
    }

    /// Releases the lock and reports how that went. Consumes the lock: nothing can use it
    /// afterwards.
    ///
    /// # Errors
    /// Release failures, with the path ([`LockError::Io`]; for SimpleFs also
    /// [`LockError::ReleaseRefused`]). The lock is released as far as possible either way.
    pub fn close(mut self) -> Result<(), LockError> {
        match self.inner.as_mut() {
            Some(handle) => handle.close(),
            None => Ok(()),
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        self.handle().path()
    }

    /// The factory's handle, for wrappers and for tests of the [`LockHandle`] contract. The
    /// handle is still held; dropping it releases it as dropping the `Lock` would.
    pub fn into_handle(mut self) -> Box<dyn LockHandle> {
        self.inner
            .take()
            .expect("a Lock has its handle until it is consumed")
    }
}

// A `Lock` moves between threads and is shared by them (`Arc<Lock>`); this fails to compile
// if a change to `LockHandle` or `Lock` takes that away.
const _: () = {
    const fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Lock>();
};

impl fmt::Debug for Lock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Lock");
        if let Some(handle) = self.inner.as_deref() {
            d.field("path", &handle.path());
        }
        d.finish_non_exhaustive()
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if let Some(handle) = self.inner.as_mut() {
            let _ = handle.close();
        }
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
