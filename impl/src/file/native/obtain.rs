//! The obtain paths of [`NativeFsLockFactory`]: the setup (canonical lock path, the
//! "resolved directories" cache), the held set, the open and the lock, and the failure paths.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::os_errors::{check_lock_path, dir_error, lock_error, open_error};
use super::steps::give_up;
use super::{NativeFsLock, NativeFsLockFactory, Remember};
use crate::file::error::LockError;
use crate::file::sys::{EntryKind, FileMeta, Probe, System, TryLock};
use crate::file::validate_name;

#[cfg(doc)]
use crate::file::LockFactory;

impl<S: System + 'static> NativeFsLockFactory<S> {
    fn held_insert(&self, path: &Path) -> bool {
        !self.steps.held_set || self.sys.held_insert(path)
    }

    fn held_remove(&self, path: &Path) {
        if self.steps.held_set {
            self.sys.held_remove(path);
        }
    }

    /// Failure path after the file was opened: the table's `abandon` steps, in production
    /// close FIRST, then leave the held set (LUCENE-6507).
    fn abandon(&self, file: S::File, path: &Path) {
        // A failing close cannot be acted on here: the descriptor is gone either way and the
        // caller reports the error that made us abandon the attempt.
        let _ = give_up(
            &*self.sys,
            self.steps.abandon,
            self.steps.held_set,
            file,
            self.kind,
            path,
        );
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
            steps: self.steps,
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
            Err(_) if self.steps.carry_on_after_lock_error => Ok(self.held(path, meta, file)),
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
    /// Once the kernel grants the lock, the path is checked again (`lstat`, as BSD's `flopen`
    /// does): should the lock file have been deleted or replaced while this waited, the lock
    /// is on the old inode, so it is released, the descriptor closed, and the file at the path
    /// opened and locked again (the path stays in the held set throughout). The retries are
    /// bounded only by the lock being obtainable: each one waits for the lock again, and only
    /// a file changed during that wait causes another. The returned lock is therefore on the
    /// file the path named when the obtain returned.
    ///
    /// The wait cannot be cancelled (use [`LockFactory::obtain_timeout`] for a bounded one),
    /// and never ends if the calling thread itself holds the lock.
    ///
    /// # Errors
    /// As [`NativeFsLockFactory::try_obtain_native`], except that the lock being held is never
    /// an error; in addition [`LockError::Io`] with `EDEADLK` when the kernel sees that the
    /// wait would deadlock (POSIX locks only: two processes each waiting for the other's
    /// lock), and [`LockError::Io`] when the re-check's `lstat` fails (the lock is released
    /// first).
    pub fn obtain_blocking_native(
        &self,
        dir: &Path,
        name: &str,
    ) -> Result<NativeFsLock<S>, LockError> {
        validate_name(name)?;
        let sys = &*self.sys;
        let (path, remember) = self.lock_path(dir, name)?;
        if self.steps.held_set {
            sys.held_insert_wait(&path)
                .map_err(|source| LockError::Io {
                    path: path.clone(),
                    source,
                })?;
        }
        loop {
            let (file, meta) = self.open_held(&path, remember)?;
            match sys.lock_blocking(&file, self.kind) {
                Ok(()) => {}
                Err(_) if self.steps.carry_on_after_lock_error => {
                    return Ok(self.held(path, meta, file))
                }
                Err(source) => {
                    self.abandon(file, &path);
                    return Err(lock_error(path, self.kind, source));
                }
            }
            if !self.steps.blocking_recheck {
                return Ok(self.held(path, meta, file));
            }
            // The descriptor's identity is the `fstat` of the open (`meta.id`); an inode
            // still open cannot be reused, so equal ids mean the very same file.
            match sys.stat(&path) {
                Ok(Some(now)) if now.id == meta.id => return Ok(self.held(path, meta, file)),
                Ok(_) => {
                    // Replaced or unlinked during the wait: the lock is on an orphan. Let it
                    // go and lock the file that is there now (`open_lock_file` creates one if
                    // none is). Errors here cannot be acted on: the close releases the lock
                    // and the descriptor either way.
                    let _ = sys.unlock(&file, self.kind);
                    let _ = sys.close(file);
                }
                Err(source) => {
                    let _ = sys.unlock(&file, self.kind);
                    self.abandon(file, &path);
                    return Err(LockError::Io { path, source });
                }
            }
        }
    }
}
