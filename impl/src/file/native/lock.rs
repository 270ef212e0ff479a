//! [`NativeFsLock`], the lock held through [`NativeFsLockFactory`]: the `ensure_valid`
//! checks, the release, and the close on drop.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::file::error::{InvalidReason, LockError};
use crate::file::sys::{EntryKind, FileId, OsLockKind, Probe, RealSystem, System};
use crate::file::LockHandle;

use super::steps::{give_up, Check, Steps};

#[cfg(doc)]
use {super::NativeFsLockFactory, crate::file::Lock};

/// A lock held through [`NativeFsLockFactory`]. Usually used as a [`Lock`]. Dropping it
/// closes it.
#[must_use = "the lock is released as soon as it is dropped"]
pub struct NativeFsLock<S: System = RealSystem> {
    pub(super) sys: Arc<S>,
    pub(super) kind: OsLockKind,
    /// The factory's step table: always `NATIVE` outside the incident twins.
    pub(super) steps: &'static Steps,
    pub(super) path: PathBuf,
    pub(super) id: FileId,
    /// `None` once closed.
    pub(super) file: Option<S::File>,
}

impl<S: System> NativeFsLock<S> {
    /// The inode the lock is on.
    pub fn file_id(&self) -> FileId {
        self.id
    }

    /// The lock kind held.
    pub fn kind(&self) -> OsLockKind {
        self.kind
    }

    /// Whether [`LockHandle::close`] has run.
    pub fn is_closed(&self) -> bool {
        self.file.is_none()
    }

    /// The lock file's canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks that the lock is still held and still protects the lock file at its path; see
    /// the module docs for the checks and their order.
    ///
    /// # Errors
    /// [`LockError::Invalidated`] with the [`InvalidReason`]: the lock was lost to another
    /// owner, the path left the held set, the file was deleted, written to or replaced;
    /// [`LockError::AlreadyClosed`] after [`LockHandle::close`]; [`LockError::Io`] if a check
    /// itself failed.
    pub fn ensure_valid(&self) -> Result<(), LockError> {
        LockHandle::ensure_valid(self)
    }

    /// Releases the lock: `unlock` → `close` → `held_remove`, every step even if an earlier
    /// one failed. The lock file is never deleted.
    ///
    /// # Errors
    /// The first failing step's error, as [`LockError::Io`] with the path.
    pub fn close(mut self) -> Result<(), LockError> {
        LockHandle::close(&mut self)
    }

    fn invalid(&self, reason: InvalidReason) -> LockError {
        LockError::Invalidated {
            path: self.path.clone(),
            reason,
        }
    }

    fn io(&self, source: io::Error) -> LockError {
        LockError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

impl<S: System> NativeFsLock<S> {
    /// `probe`: no other owner holds a conflicting lock (`flock`: unknown, which passes).
    fn check_probe(&self, file: &S::File) -> Result<(), LockError> {
        if let Probe::Conflict { pid } = self.sys.probe(file, self.kind).map_err(|e| self.io(e))? {
            return Err(self.invalid(InvalidReason::LockLost { pid }));
        }
        Ok(())
    }

    /// `held_contains`: the path is still in this process's held set.
    fn check_held(&self) -> Result<(), LockError> {
        if self.steps.held_set && !self.sys.held_contains(&self.path) {
            return Err(self.invalid(InvalidReason::NotInHeldSet));
        }
        Ok(())
    }

    /// `fstat` then `stat`: the file is linked and empty, and the path still names it.
    fn check_inode(&self, file: &S::File) -> Result<(), LockError> {
        let sys = &*self.sys;
        let meta = sys.fstat(file).map_err(|e| self.io(e))?;
        if meta.nlink == 0 {
            return Err(self.invalid(InvalidReason::Unlinked));
        }
        if meta.len != 0 {
            return Err(self.invalid(InvalidReason::NotEmpty { len: meta.len }));
        }
        match sys.stat(&self.path).map_err(|e| self.io(e))? {
            None => Err(self.invalid(InvalidReason::Missing)),
            Some(now) if now.id != self.id => Err(self.invalid(InvalidReason::Replaced {
                old: self.id,
                new: now.id,
            })),
            Some(now) if now.kind != EntryKind::Regular => {
                Err(self.invalid(InvalidReason::NotRegular { found: now.kind }))
            }
            Some(_) => Ok(()),
        }
    }
}

impl<S: System> LockHandle for NativeFsLock<S> {
    fn ensure_valid(&self) -> Result<(), LockError> {
        let Some(file) = self.file.as_ref() else {
            return Err(LockError::AlreadyClosed {
                path: self.path.clone(),
            });
        };
        // Order matters: the checks are separate system calls, so a fault can land between
        // them. "No other owner holds a conflicting lock" is the one condition that can turn
        // from false back to true (the other holder crashes or releases), so it is checked
        // FIRST; every later check (held-set entry, link count, path still names our inode)
        // can only turn from true to false. If all pass, all held at the moment of the probe:
        // a passing ensure_valid is equivalent to the model's atomic EnsureValid at that
        // moment. Probing last let a lock dropped by a foreign close and an unlink, followed
        // by the new holder's crash, pass every check at a different moment (found by
        // shuttle's refinement replay in `checks/tests/file_sim/shuttle_three_processes.rs`; the
        // `ProbeLast` defect's table and the model variant `native-probe-last` keep that order).
        // The order is the step table's: `Probe, Held, Inode` in production.
        for check in self.steps.checks {
            match check {
                Check::Probe => self.check_probe(file)?,
                Check::Held => self.check_held()?,
                Check::Inode => self.check_inode(file)?,
            }
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), LockError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        // `unlock` → `close` → (marked closed: `self.file` is None) → `held_remove`, as the
        // table says; the lock file is never deleted (LUCENE-5612).
        let first = give_up(
            &*self.sys,
            self.steps.release,
            self.steps.held_set,
            file,
            self.kind,
            &self.path,
        );
        finish(first, &self.path)
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// The outcome of a release: the first error, if any.
fn finish(first: Option<io::Error>, path: &Path) -> Result<(), LockError> {
    match first {
        None => Ok(()),
        Some(source) => Err(LockError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

impl<S: System> fmt::Debug for NativeFsLock<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeFsLock")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("file_id", &self.id)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<S: System> Drop for NativeFsLock<S> {
    fn drop(&mut self) {
        let _ = LockHandle::close(self);
    }
}
