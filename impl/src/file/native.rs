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
//! - `Ok`: the lock is held, as after `Acquired`.
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

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

#[cfg(feature = "defects")]
use super::defects::Defect;
use super::error::{InvalidReason, LockError};
use super::sys::{EntryKind, FileId, FileMeta, OsLockKind, Probe, RealSystem, System, TryLock};
use super::{validate_name, Lock, LockFactory, LockHandle, DEFAULT_LOCK_FILE_MODE};

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
    #[cfg(feature = "defects")]
    defect: Option<Defect>,
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
            #[cfg(feature = "defects")]
            defect: None,
            resolved: Resolved::default(),
        }
    }

    /// A factory on any [`System`] (the checks crate passes a simulated OS). Needs the
    /// `unstable-system` feature; see [`crate::file::sys`] for why.
    #[cfg(feature = "unstable-system")]
    pub fn with_system(sys: S, kind: OsLockKind) -> Self {
        Self::on(Arc::new(sys), kind)
    }

    /// Like [`NativeFsLockFactory::with_system`], sharing an existing `Arc` (several factories
    /// on one simulated process, or a test that keeps a handle on the system).
    #[cfg(feature = "unstable-system")]
    pub fn with_shared_system(sys: Arc<S>, kind: OsLockKind) -> Self {
        Self::on(sys, kind)
    }

    /// The system this factory runs on. Needs the `unstable-system` feature.
    #[cfg(feature = "unstable-system")]
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

    /// Re-creates a known incident. Test-only: needs the `defects` feature; see
    /// [`crate::file::defects::Defect`].
    #[cfg(feature = "defects")]
    #[must_use]
    pub fn with_defect(mut self, defect: Defect) -> Self {
        self.defect = Some(defect);
        self
    }

    /// The lock kind this factory takes.
    pub fn kind(&self) -> OsLockKind {
        self.kind
    }

    #[cfg(feature = "defects")]
    fn defect(&self) -> Option<Defect> {
        self.defect
    }

    fn uses_held_set(&self) -> bool {
        #[cfg(feature = "defects")]
        if self.defect == Some(Defect::NoHeldSet) {
            return false;
        }
        true
    }

    fn carries_on_after_lock_error(&self) -> bool {
        #[cfg(feature = "defects")]
        if self.defect == Some(Defect::CarryOnAfterLockError) {
            return true;
        }
        false
    }

    fn removes_before_close(&self) -> bool {
        #[cfg(feature = "defects")]
        if self.defect == Some(Defect::RemoveBeforeClose) {
            return true;
        }
        false
    }

    fn held_insert(&self, path: &Path) -> bool {
        !self.uses_held_set() || self.sys.held_insert(path)
    }

    fn held_remove(&self, path: &Path) {
        if self.uses_held_set() {
            self.sys.held_remove(path);
        }
    }

    /// Failure path after the file was opened: close FIRST, then leave the held set
    /// (LUCENE-6507), unless the `RemoveBeforeClose` defect is injected.
    fn abandon(&self, file: S::File, path: &Path) {
        // A failing close cannot be acted on here: the descriptor is gone either way and the
        // caller reports the error that made us abandon the attempt.
        if self.removes_before_close() {
            self.held_remove(path);
            let _ = self.sys.close(file);
        } else {
            let _ = self.sys.close(file);
            self.held_remove(path);
        }
    }

    /// The setup steps of obtain (none is a model step): the canonical lock path, after an
    /// `lstat` found nothing or a regular file there, and how it may be remembered. See
    /// "Resolved directories" on the type.
    fn lock_path(&self, dir: &Path, name: &str) -> Result<(PathBuf, Remember), LockError> {
        let sys = &*self.sys;
        let mut seen = None;
        if let Some((path, id)) = self.resolved.get(dir.join(name)) {
            let now = sys.stat(&path);
            if matches!(&now, Ok(Some(meta)) if meta.kind == EntryKind::Regular && meta.id == id) {
                return Ok((path, Remember::Unless(id)));
            }
            self.resolved.forget(&path);
            seen = Some(now);
        }
        let canonical = self.resolve_dir(dir)?;
        // `Path` equality is by components: a trailing `/` or an inner `.` still counts as
        // canonical, a `..` or a symlink does not.
        let canonical_dir = canonical == dir;
        let path = canonical.join(name);
        let now = match seen {
            // The failed check above looked at this very path: no second lstat.
            Some(now) if canonical_dir => now,
            _ => sys.stat(&path),
        };
        check_lock_path(dir, &path, now)?;
        let remember = if canonical_dir {
            Remember::Yes
        } else {
            Remember::No
        };
        Ok((path, remember))
    }

    /// `canonicalize_dir(dir)`, creating `dir` first only if it is missing.
    fn resolve_dir(&self, dir: &Path) -> Result<PathBuf, LockError> {
        let sys = &*self.sys;
        match sys.canonicalize_dir(dir) {
            Ok(canonical) => Ok(canonical),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                sys.create_dir_all(dir)
                    .map_err(|source| dir_error(dir, source))?;
                sys.canonicalize_dir(dir)
                    .map_err(|source| dir_error(dir, source))
            }
            Err(source) => Err(dir_error(dir, source)),
        }
    }

    /// `open_lock_file(path)` after the held-set entry was made: checks that a regular file
    /// was opened and remembers it. On failure the entry is given up again (and the file
    /// closed first).
    fn open_held(&self, path: &Path, remember: Remember) -> Result<(S::File, FileMeta), LockError> {
        let (file, meta) = match self.sys.open_lock_file(path, self.mode) {
            Ok(opened) => opened,
            Err(source) => {
                self.held_remove(path);
                return Err(open_error(path.to_path_buf(), source));
            }
        };
        if meta.kind != EntryKind::Regular {
            self.abandon(file, path);
            return Err(LockError::BadLockPath {
                path: path.to_path_buf(),
                found: meta.kind,
            });
        }
        match remember {
            Remember::Yes => self.resolved.remember(path, meta.id),
            Remember::Unless(id) if id != meta.id => self.resolved.remember(path, meta.id),
            Remember::Unless(_) | Remember::No => {}
        }
        Ok((file, meta))
    }

    fn held(&self, path: PathBuf, meta: FileMeta, file: S::File) -> NativeFsLock<S> {
        NativeFsLock {
            sys: Arc::clone(&self.sys),
            kind: self.kind,
            #[cfg(feature = "defects")]
            defect: self.defect(),
            path,
            id: meta.id,
            file: Some(file),
        }
    }

    /// Tries once, without waiting, to obtain the lock; the typed form of
    /// [`LockFactory::try_obtain`].
    ///
    /// # Errors
    /// - [`LockError::BadLockName`]: `name` is not a single plain file name.
    /// - [`LockError::NotADirectory`]: `dir` or a parent exists and is not a directory;
    ///   [`LockError::Io`]: `dir` cannot be created or resolved (e.g. permission denied).
    /// - [`LockError::BadLockPath`]: a directory, symlink or special file is at the lock path.
    /// - [`LockError::HeldByThisProcess`] / [`LockError::HeldByOtherProcess`]: the lock is held
    ///   (the pid is named for POSIX locks).
    /// - [`LockError::LockingUnsupported`]: the filesystem refuses this lock kind.
    /// - [`LockError::Io`]: the lock file cannot be created or opened.
    pub fn try_obtain_native(&self, dir: &Path, name: &str) -> Result<NativeFsLock<S>, LockError> {
        validate_name(name)?;
        let sys = &*self.sys;
        let (path, remember) = self.lock_path(dir, name)?;
        if !self.held_insert(&path) {
            return Err(LockError::HeldByThisProcess { path });
        }
        let (file, meta) = self.open_held(&path, remember)?;
        match sys.try_lock(&file, self.kind) {
            Ok(TryLock::Acquired) => Ok(self.held(path, meta, file)),
            Ok(TryLock::WouldBlock) => {
                // Best effort: the holder's pid is a courtesy for the error message.
                let pid = match sys.probe(&file, self.kind) {
                    Ok(Probe::Conflict { pid }) => pid,
                    _ => None,
                };
                self.abandon(file, &path);
                Err(LockError::HeldByOtherProcess {
                    path,
                    pid,
                    holder: None,
                })
            }
            Err(_) if self.carries_on_after_lock_error() => Ok(self.held(path, meta, file)),
            Err(source) => {
                self.abandon(file, &path);
                Err(lock_error(path, self.kind, source))
            }
        }
    }

    /// Obtains the lock, waiting as long as it is held; the typed form of
    /// [`LockFactory::obtain_blocking`]. A thread of this process that holds (or is obtaining)
    /// the path makes it wait on the held set, with no descriptor open; a holder in another
    /// process makes it wait in the kernel (`F_OFD_SETLKW`, `F_SETLKW`, `flock(LOCK_EX)`). See
    /// the module docs for the exact steps.
    ///
    /// The wait cannot be cancelled (use [`LockFactory::obtain_timeout`] for a bounded one),
    /// and never ends if the calling thread itself holds the lock. Should the lock file be
    /// deleted or replaced while this waits, the lock it gets is on the old inode: the next
    /// [`NativeFsLock::ensure_valid`] reports it, as after any obtain.
    ///
    /// # Errors
    /// As [`NativeFsLockFactory::try_obtain_native`], except that the lock being held is never
    /// an error; in addition [`LockError::Io`] with `EDEADLK` when the kernel sees that the
    /// wait would deadlock (POSIX locks only: two processes each waiting for the other's lock).
    pub fn obtain_blocking_native(
        &self,
        dir: &Path,
        name: &str,
    ) -> Result<NativeFsLock<S>, LockError> {
        validate_name(name)?;
        let sys = &*self.sys;
        let (path, remember) = self.lock_path(dir, name)?;
        if self.uses_held_set() {
            sys.held_insert_wait(&path)
                .map_err(|source| LockError::Io {
                    path: path.clone(),
                    source,
                })?;
        }
        let (file, meta) = self.open_held(&path, remember)?;
        match sys.lock_blocking(&file, self.kind) {
            Ok(()) => Ok(self.held(path, meta, file)),
            Err(_) if self.carries_on_after_lock_error() => Ok(self.held(path, meta, file)),
            Err(source) => {
                self.abandon(file, &path);
                Err(lock_error(path, self.kind, source))
            }
        }
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
        #[cfg(feature = "defects")]
        if let Some(defect) = self.defect {
            d.field("defect", &defect);
        }
        d.finish_non_exhaustive()
    }
}

pub(crate) fn dir_error(dir: &Path, source: io::Error) -> LockError {
    match source.kind() {
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => LockError::NotADirectory {
            path: dir.to_path_buf(),
            source,
        },
        _ => LockError::Io {
            path: dir.to_path_buf(),
            source,
        },
    }
}

/// The `lstat` of the lock path before anything is opened: absent or a regular file. A
/// `dir` that is a file passes `realpath` and shows up here as `ENOTDIR`.
fn check_lock_path(
    dir: &Path,
    path: &Path,
    seen: io::Result<Option<FileMeta>>,
) -> Result<(), LockError> {
    match seen {
        Ok(Some(meta)) if meta.kind != EntryKind::Regular => Err(LockError::BadLockPath {
            path: path.to_path_buf(),
            found: meta.kind,
        }),
        Ok(_) => Ok(()),
        Err(source) if source.raw_os_error() == Some(libc::ENOTDIR) => Err(dir_error(dir, source)),
        Err(source) => Err(LockError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// `open_lock_file` errors: the path was swapped between `stat` and `open`.
pub(crate) fn open_error(path: PathBuf, source: io::Error) -> LockError {
    match source.raw_os_error() {
        Some(libc::ELOOP) => LockError::BadLockPath {
            path,
            found: EntryKind::Symlink,
        },
        Some(libc::EISDIR) => LockError::BadLockPath {
            path,
            found: EntryKind::Directory,
        },
        _ => LockError::Io { path, source },
    }
}

/// `try_lock` errors: "this filesystem cannot lock" vs. anything else.
fn lock_error(path: PathBuf, kind: OsLockKind, source: io::Error) -> LockError {
    let unsupported = source.kind() == io::ErrorKind::Unsupported
        || matches!(
            source.raw_os_error(),
            Some(c) if c == libc::ENOLCK || c == libc::EOPNOTSUPP || c == libc::ENOTSUP
                || c == libc::EINVAL || c == libc::ENOSYS
        );
    if unsupported {
        LockError::LockingUnsupported { path, kind, source }
    } else {
        LockError::Io { path, source }
    }
}

/// A lock held through [`NativeFsLockFactory`]. Usually used as a [`Lock`]. Dropping it
/// closes it.
#[must_use = "the lock is released as soon as it is dropped"]
pub struct NativeFsLock<S: System = RealSystem> {
    sys: Arc<S>,
    kind: OsLockKind,
    #[cfg(feature = "defects")]
    defect: Option<Defect>,
    path: PathBuf,
    id: FileId,
    /// `None` once closed.
    file: Option<S::File>,
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

    fn uses_held_set(&self) -> bool {
        #[cfg(feature = "defects")]
        if self.defect == Some(Defect::NoHeldSet) {
            return false;
        }
        true
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
        if self.uses_held_set() && !self.sys.held_contains(&self.path) {
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

    /// The injected `ensure_valid` defects: the broken check order or a skipped check.
    #[cfg(feature = "defects")]
    fn ensure_valid_defect(&self, file: &S::File) -> Option<Result<(), LockError>> {
        let checks = || -> Result<(), LockError> {
            match self.defect {
                Some(Defect::ProbeLast) => {
                    self.check_held()?;
                    self.check_inode(file)?;
                    self.check_probe(file)
                }
                Some(Defect::SkipInodeCheck) => {
                    self.check_probe(file)?;
                    self.check_held()
                }
                Some(Defect::SkipHeldContains) => {
                    self.check_probe(file)?;
                    self.check_inode(file)
                }
                _ => unreachable!("not an ensure_valid defect"),
            }
        };
        matches!(
            self.defect,
            Some(Defect::ProbeLast | Defect::SkipInodeCheck | Defect::SkipHeldContains)
        )
        .then(checks)
    }
}

impl<S: System> LockHandle for NativeFsLock<S> {
    fn ensure_valid(&self) -> Result<(), LockError> {
        let Some(file) = self.file.as_ref() else {
            return Err(LockError::AlreadyClosed {
                path: self.path.clone(),
            });
        };
        #[cfg(feature = "defects")]
        if let Some(result) = self.ensure_valid_defect(file) {
            return result;
        }
        // Order matters: the checks are separate system calls, so a fault can land between
        // them. "No other owner holds a conflicting lock" is the one condition that can turn
        // from false back to true (the other holder crashes or releases), so it is checked
        // FIRST; every later check (held-set entry, link count, path still names our inode)
        // can only turn from true to false. If all pass, all held at the moment of the probe:
        // a passing ensure_valid is equivalent to the model's atomic EnsureValid at that
        // moment. Probing last let a lock dropped by a foreign close and an unlink, followed
        // by the new holder's crash, pass every check at a different moment (found by
        // shuttle's refinement replay in `checks/tests/shuttle_three_processes.rs`; the
        // `ProbeLast` defect and the model variant `native-probe-last` keep that order).
        self.check_probe(file)?;
        self.check_held()?;
        self.check_inode(file)
    }

    fn close(&mut self) -> Result<(), LockError> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let sys = &*self.sys;
        let mut first: Option<io::Error> = None;
        let mut keep = |r: io::Result<()>| {
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        };
        keep(sys.unlock(&file, self.kind));
        #[cfg(feature = "defects")]
        if self.defect == Some(Defect::RemoveBeforeClose) {
            sys.held_remove(&self.path);
            keep(sys.close(file));
            return finish(first, &self.path);
        }
        keep(sys.close(file));
        // (marked closed: `self.file` is None)
        if self.uses_held_set() {
            sys.held_remove(&self.path);
        }
        #[cfg(feature = "defects")]
        if self.defect == Some(Defect::DeleteOnRelease) {
            keep(sys.unlink(&self.path));
        }
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
