//! Writer locks for index and database directories (contract skeleton; being filled in).

pub mod sys;
pub mod verifying;
mod error;

pub use error::LockError;

use std::path::Path;

/// Obtains named locks in a directory (Lucene's `LockFactory`).
pub trait LockFactory: Send + Sync {
    /// Tries once, without blocking, to obtain the lock `name` in `dir`.
    ///
    /// # Errors
    /// See [`LockError`].
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError>;
}

/// What a factory's lock does; wrapped by [`Lock`].
pub trait LockHandle: Send {
    /// # Errors
    /// [`LockError::AlreadyClosed`] or [`LockError::Invalidated`] and friends.
    fn ensure_valid(&self) -> Result<(), LockError>;
    /// Releases the lock; must be idempotent.
    ///
    /// # Errors
    /// Release failures, with the path.
    fn close(&mut self) -> Result<(), LockError>;
    fn path(&self) -> &Path;
}

/// A held lock. Dropping it closes it.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct Lock {
    inner: Box<dyn LockHandle>,
}

impl Lock {
    pub fn new(inner: Box<dyn LockHandle>) -> Self {
        Lock { inner }
    }
    /// # Errors
    /// Why the lock can no longer be trusted.
    pub fn ensure_valid(&self) -> Result<(), LockError> {
        self.inner.ensure_valid()
    }
    /// # Errors
    /// Release failures, with the path.
    pub fn close(&mut self) -> Result<(), LockError> {
        self.inner.close()
    }
    pub fn path(&self) -> &Path {
        self.inner.path()
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}
