//! [`NativeFsLockFactory`]: held set + OS advisory lock on a never-deleted lock file, the
//! protocol of Lucene's `NativeFSLockFactory`, written once over [`System`].
//!
//! Every step below is exactly one [`System`] call; the Stateright model in `lockwright-model`
//! mirrors the MUTATING ones (`held_insert`, `open_lock_file`, `try_lock`, `unlock`, `close`,
//! `held_remove`, `unlink`) one to one, so do not merge, reorder or add those without updating
//! it. `create_dir_all`, `canonicalize_dir`, `stat`, `fstat`, `probe` and `held_contains` are
//! setup or observations, which the model checks but does not step on.
//!
//! **obtain(dir, name)**: validate `name` (no OS call) → find the canonical lock path `path`
//! and check that nothing but a regular file is there (setup, see below) → `held_insert(path)`
//! (`false`: [`LockError::HeldByThisProcess`], no descriptor is opened) →
//! `open_lock_file(path)` (error: `held_remove`; not a regular file: `close`, `held_remove`) →
//! `try_lock(file, kind)`:
//! - `Acquired`: the lock is held; remember `(file, file id, path)`.
//! - `WouldBlock`: `probe(file, kind)` (to name the holder) → `close(file)` → `held_remove(path)`
//!   → [`LockError::HeldByOtherProcess`]. Close comes FIRST: while the path is still in the held
//!   set no other thread of this process can open a descriptor whose `close` would drop a POSIX
//!   lock (LUCENE-6507).
//! - OS error: `close(file)` → `held_remove(path)` → [`LockError::LockingUnsupported`] (or
//!   [`LockError::Io`]); never carry on unlocked.
//!
//! **obtain_blocking(dir, name)**: the same setup → `held_insert_wait(path)` (waits, opening
//! nothing, while another thread of this process holds or is obtaining the path) →
//! `open_lock_file(path)` (error: `held_remove`; not a regular file: `close`, `held_remove`) →
//! `lock_blocking(file, kind)` (waits in the kernel for other processes):
//! - `Ok`: `stat(path)` (the re-check, as BSD's `flopen`): the path names the inode the
//!   descriptor locked (the `(dev, ino)` its `fstat` gave at the open) → the lock is held, as
//!   after `Acquired`. Another file or none (the lock file was replaced or unlinked while this
//!   waited, so the lock is on an orphan) → `unlock(file)` → `close(file)` → back to
//!   `open_lock_file(path)`, still in the held set. A `stat` error → `unlock` → `close` →
//!   `held_remove` → [`LockError::Io`].
//! - OS error (`EDEADLK`, `ENOLCK`, ...): `close(file)` → `held_remove(path)` → the error.
//!
//! Why waiting on the held set and not in the kernel for a holder of this process: under POSIX
//! rules a second descriptor's `F_SETLKW` would be granted at once (the process already owns
//! the lock) and its close would drop the holder's lock (LUCENE-5738); under OFD and `flock`
//! rules it would wait correctly, but the held set keeps one rule for every kind.
//!
//! The setup before `held_insert`, one of:
//! - **resolved before** (the factory opened a regular file at `dir/name`, `dir` was already
//!   canonical, and that file is still there): `stat(path)` only, which finds the same
//!   `(dev, ino)` as last time. This is the steady state: one call instead of four or more.
//! - **otherwise**: `canonicalize_dir(dir)`; only if that fails with `ENOENT`:
//!   `create_dir_all(dir)` → `canonicalize_dir(dir)`. Then `stat(path)` (not repeated when a
//!   failed "resolved before" check already made it on the same path).
//!
//! See [`NativeFsLockFactory`] ("Resolved directories") for what the cache means.
//!
//! **ensure_valid**: closed → [`LockError::AlreadyClosed`]; `probe(file, kind)` (a
//! conflicting owner: the lock was lost; `flock` answers "unknown", which passes) →
//! `held_contains(path)` → `fstat(file)` (link count 0: deleted; length ≠ 0: written to) →
//! `stat(path)` (absent, another inode, not a regular file). The probe comes first: see
//! [`NativeFsLock::ensure_valid`].
//!
//! **close** (idempotent; dropping the [`Lock`] closes): `unlock(file, kind)` → `close(file)` →
//! mark closed → `held_remove(path)`. Every step runs even if an earlier one failed; the first
//! error is returned. The lock file is NEVER deleted (LUCENE-5612).
//!
//! Where the incident variants differ from these steps (the `ensure_valid` checks and their
//! order, the release and failure orders, the held set, the lock-error and re-check branches)
//! the code follows a step table, [`steps::NATIVE`] in production; the incident tables are
//! test-only data in `file::defects`.

mod lock;
mod obtain;
mod os_errors;
pub(super) mod steps;

pub use lock::NativeFsLock;
pub(crate) use os_errors::{dir_error, open_error};

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::error::LockError;
use super::sys::{FileId, OsLockKind, RealSystem, System};
use super::{Lock, LockFactory, DEFAULT_LOCK_FILE_MODE};
use steps::{Steps, NATIVE};

/// Lucene's `NativeFSLockFactory`: a per-process held set plus an OS advisory lock of an
/// explicitly chosen [`OsLockKind`] on a lock file that is never deleted.
///
/// What each kind excludes (see the crate docs): [`OsLockKind::Ofd`] excludes other OFD and
/// POSIX lockers, including Java's `FileChannel.tryLock` (Lucene) and SQLite;
/// [`OsLockKind::Posix`] the same, but the lock belongs to the whole process, so any other code
/// in the process that opens and closes the lock file drops it; [`OsLockKind::Flock`] excludes
/// only other `flock` users and does NOT exclude Java or `fcntl` lockers.
///
/// ```
/// use lockwright::{LockFactory, LockError, NativeFsLockFactory, OsLockKind};
///
/// let dir = tempfile::tempdir().unwrap();
/// let factory = NativeFsLockFactory::new(OsLockKind::Ofd);
/// let lock = factory.try_obtain(dir.path(), "write.lock").unwrap();
/// lock.ensure_valid().unwrap();
/// // A second obtain in the same process fails without opening the file.
/// let again = factory.try_obtain(dir.path(), "write.lock");
/// assert!(matches!(again, Err(LockError::HeldByThisProcess { .. })));
/// drop(lock); // released; the file stays
/// assert!(dir.path().join("write.lock").exists());
/// ```
///
/// # Configuration
///
/// The lock kind is chosen at construction ([`NativeFsLockFactory::new`]); the permission bits
/// of a lock file it creates default to [`DEFAULT_LOCK_FILE_MODE`] (`0o644`, then the umask)
/// and are set with [`NativeFsLockFactory::lock_file_mode`]. Taking a lock needs the file open
/// read-write, so writers running as different users need a group-writable mode.
///
/// # Resolved directories
///
/// Resolving a directory to its canonical path costs one system call per path component
/// (`realpath`), more than the lock itself. A factory therefore remembers, per lock path, the
/// `(dev, ino)` of the lock file it last opened there — but only when `dir` was given in
/// canonical form (absolute, no symlinks, no `..`; `std::fs::canonicalize` returns it). The
/// next obtain of the same `dir` and `name` then starts with `lstat(dir/name)` alone: if it
/// finds a regular file with the remembered `(dev, ino)`, the canonical path is still the one
/// resolved before and nothing else is resolved. Anything else (no file, another inode, not a
/// regular file, an error) forgets the entry and resolves `dir` again from scratch, creating it
/// if it is missing. So:
///
/// - a directory removed, or removed and re-created, is noticed (its lock file is gone or is a
///   new inode) and resolved (and created) again; should the new lock file reuse the old inode
///   number, the remembered path is still the right one;
/// - a lock file deleted or replaced is noticed the same way;
/// - a `dir` given through a symlink, with `..`, or relative is never remembered: it is
///   resolved on every obtain, so retargeting the symlink or changing the working directory
///   moves the lock with it, as before. Pass the canonical path to get the fast path
///   (Lucene's `FSDirectory` does the same: it resolves `toRealPath()` once, when the
///   directory is opened, and uses that path from then on);
/// - the one change it cannot see: while this factory keeps an entry, a PARENT of the
///   canonical `dir` is moved away and replaced by a symlink to its new place, so the old
///   spelling still reaches the same lock file. The factory then keeps using the old spelling as
///   the held-set key, while another factory of this process that resolves afresh uses the new
///   one, so the held set no longer keeps them from opening a second descriptor on the file:
///   with [`OsLockKind::Ofd`] or [`OsLockKind::Flock`] the second one is still refused by the
///   kernel; with [`OsLockKind::Posix`] it would succeed (one process owns both), the exposure
///   every path-keyed held set (Lucene's too) already has for a lock held across such a move.
///   Other processes are excluded either way (the kernel locks the inode).
///
/// The same `lstat` keeps a FIFO or device node at the lock path from ever being opened (it
/// is refused as [`LockError::BadLockPath`] first). What is locked is always the file actually
/// opened, whose `fstat` must show a regular file (this also catches a swap between the `lstat`
/// and the open), and whose `(dev, ino)` the lock keeps. The cache is per factory and holds at
/// most 64 entries (it starts over when full).
pub struct NativeFsLockFactory<S: System = RealSystem> {
    sys: Arc<S>,
    kind: OsLockKind,
    mode: u32,
    /// Always [`NATIVE`] outside the incident twins (`with_defect`).
    steps: &'static Steps,
    resolved: Resolved,
}

/// The "resolved directories" cache of [`NativeFsLockFactory`]: canonical lock path → the
/// `(dev, ino)` of the regular file this factory last opened there.
#[derive(Default)]
struct Resolved {
    paths: Mutex<HashMap<PathBuf, FileId>>,
}

/// Whether an obtain records the file it opened in [`Resolved`].
#[derive(Clone, Copy)]
enum Remember {
    /// `dir` was given in canonical form.
    Yes,
    /// Already remembered with this id (the `lstat` saw it): only a different inode is news.
    Unless(FileId),
    /// `dir` was not canonical: never remembered.
    No,
}

/// [`Resolved`] starts over when it would grow past this.
const RESOLVED_CAPACITY: usize = 64;

impl Resolved {
    fn guard(&self) -> MutexGuard<'_, HashMap<PathBuf, FileId>> {
        // Every operation is one lookup, insert or remove: poisoning cannot leave it torn.
        self.paths
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The remembered canonical spelling of `path` (equal to it component for component) and
    /// the file id last opened there.
    fn get(&self, path: PathBuf) -> Option<(PathBuf, FileId)> {
        let paths = self.guard();
        let (canonical, id) = paths.get_key_value(&path)?;
        // Usually spelled the same: keep `path` rather than allocate a copy.
        let spelled = if canonical.as_os_str() == path.as_os_str() {
            path
        } else {
            canonical.clone()
        };
        Some((spelled, *id))
    }

    fn remember(&self, path: &Path, id: FileId) {
        let mut paths = self.guard();
        if paths.get(path) == Some(&id) {
            return;
        }
        if paths.len() >= RESOLVED_CAPACITY && !paths.contains_key(path) {
            paths.clear();
        }
        paths.insert(path.to_path_buf(), id);
    }

    fn forget(&self, path: &Path) {
        self.guard().remove(path);
    }
}

impl NativeFsLockFactory<RealSystem> {
    /// A factory on the real OS, sharing the process-wide held set, taking `kind` locks.
    pub fn new(kind: OsLockKind) -> Self {
        Self::on(Arc::new(RealSystem::new()), kind)
    }

    /// `new(OsLockKind::Ofd)`: the recommended kind on Linux (≥ 3.15). OFD locks exclude
    /// Lucene/Java and SQLite and cannot be dropped by foreign code closing another
    /// descriptor. On other Unixes every obtain fails with [`LockError::LockingUnsupported`].
    pub fn linux_default() -> Self {
        Self::new(OsLockKind::Ofd)
    }
}

impl<S: System + 'static> NativeFsLockFactory<S> {
    fn on(sys: Arc<S>, kind: OsLockKind) -> Self {
        NativeFsLockFactory {
            sys,
            kind,
            mode: DEFAULT_LOCK_FILE_MODE,
            steps: &NATIVE,
            resolved: Resolved::default(),
        }
    }

    /// A factory on any [`System`] (the checks crate passes a simulated OS). Needs the
    /// `unstable-system` feature; see [`crate::file::sys`] for why.
    #[cfg(feature = "unstable-system")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-system")))]
    pub fn with_system(sys: S, kind: OsLockKind) -> Self {
        Self::on(Arc::new(sys), kind)
    }

    /// Like [`NativeFsLockFactory::with_system`], sharing an existing `Arc` (several factories
    /// on one simulated process, or a test that keeps a handle on the system).
    #[cfg(feature = "unstable-system")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-system")))]
    pub fn with_shared_system(sys: Arc<S>, kind: OsLockKind) -> Self {
        Self::on(sys, kind)
    }

    /// The system this factory runs on. Needs the `unstable-system` feature.
    #[cfg(feature = "unstable-system")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-system")))]
    pub fn system(&self) -> &Arc<S> {
        &self.sys
    }

    /// Creates lock files with permission bits `mode` (under the umask) instead of
    /// [`DEFAULT_LOCK_FILE_MODE`]. An existing lock file keeps its mode.
    #[must_use]
    pub fn lock_file_mode(mut self, mode: u32) -> Self {
        self.mode = mode;
        self
    }

    /// Re-creates a known incident: runs the defect's step table instead of the protocol's.
    /// Test-only: needs the `test-util` feature; see [`crate::file::defects::Defect`].
    #[cfg(feature = "test-util")]
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    #[must_use]
    pub fn with_defect(mut self, defect: super::defects::Defect) -> Self {
        self.steps = defect.steps();
        self
    }

    /// The lock kind this factory takes.
    pub fn kind(&self) -> OsLockKind {
        self.kind
    }
}

impl<S: System + 'static> LockFactory for NativeFsLockFactory<S> {
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        self.try_obtain_native(dir, name)
            .map(|l| Lock::new(Box::new(l)))
    }

    /// Waits in the held set and in the kernel, not by polling: see
    /// [`NativeFsLockFactory::obtain_blocking_native`].
    fn obtain_blocking(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        self.obtain_blocking_native(dir, name)
            .map(|l| Lock::new(Box::new(l)))
    }
}

impl<S: System> fmt::Debug for NativeFsLockFactory<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("NativeFsLockFactory");
        d.field("kind", &self.kind);
        d.field("mode", &format_args!("{:#o}", self.mode));
        if self.steps.name != NATIVE.name {
            d.field("defect", &format_args!("{}", self.steps.name));
        }
        d.finish_non_exhaustive()
    }
}
