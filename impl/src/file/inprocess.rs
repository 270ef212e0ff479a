//! Factories that make no OS calls: [`SingleInstanceLockFactory`] and [`NoLockFactory`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::error::{InvalidReason, LockError};
use super::{validate_name, Lock, LockFactory, LockHandle};

type Held = Arc<Mutex<HashSet<PathBuf>>>;

fn guard(held: &Held) -> MutexGuard<'_, HashSet<PathBuf>> {
    // Single insert/remove/lookup per critical section: poisoning cannot leave it torn.
    held.lock().unwrap_or_else(|p| p.into_inner())
}

/// Locks that exclude only other users of the same factory value (Lucene's
/// `SingleInstanceLockFactory`). No file is created and no OS call is made.
///
/// Use it when every writer of a directory is in this process and goes through one factory,
/// e.g. an in-memory index. Locks are keyed by `dir.join(name)` exactly as given, without
/// touching the filesystem: spell each directory one way. Clones share the held set.
#[derive(Clone, Debug, Default)]
pub struct SingleInstanceLockFactory {
    held: Held,
}

impl SingleInstanceLockFactory {
    /// A factory with an empty held set.
    pub fn new() -> Self {
        Self::default()
    }
}

impl LockFactory for SingleInstanceLockFactory {
    /// # Errors
    /// [`LockError::BadLockName`]; [`LockError::HeldByThisProcess`] if this factory (or a
    /// clone) holds the lock.
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        validate_name(name)?;
        let path = dir.join(name);
        if !guard(&self.held).insert(path.clone()) {
            return Err(LockError::HeldByThisProcess { path });
        }
        Ok(Lock::new(Box::new(SingleInstanceLock {
            held: Arc::clone(&self.held),
            path,
            closed: false,
        })))
    }
}

#[derive(Debug)]
struct SingleInstanceLock {
    held: Held,
    path: PathBuf,
    closed: bool,
}

impl LockHandle for SingleInstanceLock {
    fn ensure_valid(&self) -> Result<(), LockError> {
        if self.closed {
            return Err(LockError::AlreadyClosed {
                path: self.path.clone(),
            });
        }
        if !guard(&self.held).contains(&self.path) {
            return Err(LockError::Invalidated {
                path: self.path.clone(),
                reason: InvalidReason::NotInHeldSet,
            });
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), LockError> {
        if !self.closed {
            self.closed = true;
            guard(&self.held).remove(&self.path);
        }
        Ok(())
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SingleInstanceLock {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// **Unsafe by design: no locking at all.** Every obtain succeeds, every lock is always
/// valid, even after close (Lucene's `NoLockFactory`).
///
/// Only for directories that are never written concurrently by construction (read-only
/// snapshots, a single-writer tool in a sandbox). With it, two writers corrupt an index
/// silently.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoLockFactory;

impl LockFactory for NoLockFactory {
    /// # Errors
    /// [`LockError::BadLockName`] only.
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        validate_name(name)?;
        Ok(Lock::new(Box::new(NoLock {
            path: dir.join(name),
        })))
    }
}

#[derive(Debug)]
struct NoLock {
    path: PathBuf,
}

impl LockHandle for NoLock {
    fn ensure_valid(&self) -> Result<(), LockError> {
        Ok(())
    }

    fn close(&mut self) -> Result<(), LockError> {
        Ok(())
    }

    fn path(&self) -> &Path {
        &self.path
    }
}
