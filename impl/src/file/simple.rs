//! [`SimpleFsLockFactory`]: the lock is the existence of a file created exclusively
//! (`O_CREAT | O_EXCL`), as in Lucene's `SimpleFSLockFactory`.
//!
//! It works where OS locks do not (some network filesystems), at a price: a holder that
//! crashes leaves the file behind, and the lock stays held until a human deletes it. This
//! factory never breaks a lock on its own (a pid that looks dead may be a pid on another host,
//! or reused); instead the "held" error reads the holder record the file carries (pid, host,
//! time) and, on this host, says whether that pid is still running.
//!
//! **obtain**: validate `name` → `create_dir_all(dir)` → `canonicalize_dir(dir)` →
//! `create_new_file(path, record)`; if it exists: `read_file(path)` → `pid_alive(pid)` (same
//! host only) → [`LockError::HeldByOtherProcess`] with the holder described.
//!
//! **ensure_valid**: closed → [`LockError::AlreadyClosed`]; `stat(path)` (absent or another
//! inode) → `read_file(path)` (the record must still be ours: inode numbers are reused).
//!
//! **close**: `stat(path)` → `read_file(path)` → `unlink(path)` only if both show the file this
//! lock created; otherwise [`LockError::ReleaseRefused`], asking for manual intervention
//! (Lucene: "Lock file cannot be safely removed"). Between the check and the unlink another
//! process could replace the file; exclusive-create locks cannot close that window.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::{InvalidReason, LockError};
use super::native::{dir_error, open_error};
use super::sys::{EntryKind, FileId, RealSystem, System};
use super::{validate_name, Lock, LockFactory, LockHandle, DEFAULT_LOCK_FILE_MODE};

const MAGIC: &str = "lockwright simple-fs lock v1";

/// Exclusive-create lock files carrying a holder record; see the module docs.
///
/// ```
/// use lockwright::{LockFactory, SimpleFsLockFactory};
///
/// let dir = tempfile::tempdir().unwrap();
/// let factory = SimpleFsLockFactory::new();
/// let lock = factory.try_obtain(dir.path(), "write.lock").unwrap();
/// let err = factory.try_obtain(dir.path(), "write.lock").unwrap_err();
/// assert!(err.is_held());
/// assert!(err.to_string().contains(&format!("pid {}", std::process::id())));
/// lock.close().unwrap(); // deletes the file it created
/// assert!(!dir.path().join("write.lock").exists());
/// ```
///
/// [`LockFactory::obtain_blocking`] polls: a stale lock file left by a crash makes it wait
/// until someone deletes the file.
pub struct SimpleFsLockFactory<S: System = RealSystem> {
    sys: Arc<S>,
    mode: u32,
}

impl Default for SimpleFsLockFactory<RealSystem> {
    fn default() -> Self {
        Self::new()
    }
}

impl SimpleFsLockFactory<RealSystem> {
    /// A factory on the real OS.
    pub fn new() -> Self {
        Self::on(RealSystem::new())
    }
}

/// The parsed holder record of a SimpleFs lock file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HolderRecord {
    /// The holder's pid.
    pub pid: i32,
    /// The holder's host name (`"unknown"` if it could not tell).
    pub host: String,
    /// When the lock was obtained, seconds since the Unix epoch.
    pub acquired_unix: u64,
    /// Unique per obtain; tells our record from a later holder's.
    pub token: String,
}

impl HolderRecord {
    fn render(&self) -> String {
        format!(
            "{MAGIC}\npid: {}\nhost: {}\nacquired_unix: {}\ntoken: {}\n",
            self.pid, self.host, self.acquired_unix, self.token
        )
    }

    /// Parses a record written by this factory; `None` for anything else.
    pub fn parse(bytes: &[u8]) -> Option<HolderRecord> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let (mut pid, mut host, mut acquired, mut token) = (None, None, None, None);
        for line in lines {
            let (k, v) = line.split_once(": ")?;
            match k {
                "pid" => pid = v.parse().ok(),
                "host" => host = Some(v.to_string()),
                "acquired_unix" => acquired = v.parse().ok(),
                "token" => token = Some(v.to_string()),
                _ => {}
            }
        }
        Some(HolderRecord {
            pid: pid?,
            host: host?,
            acquired_unix: acquired?,
            token: token?,
        })
    }
}

static TOKENS: AtomicU64 = AtomicU64::new(0);

impl<S: System + 'static> SimpleFsLockFactory<S> {
    fn on(sys: S) -> Self {
        SimpleFsLockFactory {
            sys: Arc::new(sys),
            mode: DEFAULT_LOCK_FILE_MODE,
        }
    }

    /// A factory on any [`System`]. Needs the `unstable-system` feature; see
    /// [`crate::file::sys`].
    #[cfg(feature = "unstable-system")]
    #[cfg_attr(docsrs, doc(cfg(feature = "unstable-system")))]
    pub fn with_system(sys: S) -> Self {
        Self::on(sys)
    }

    /// Creates lock files with permission bits `mode` (under the umask) instead of
    /// [`DEFAULT_LOCK_FILE_MODE`]. Other processes read the holder record in the file, so keep
    /// it readable to them.
    #[must_use]
    pub fn lock_file_mode(mut self, mode: u32) -> Self {
        self.mode = mode;
        self
    }

    fn new_record(&self) -> HolderRecord {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let pid = self.sys.process_id();
        HolderRecord {
            pid,
            host: self
                .sys
                .host_name()
                .unwrap_or_else(|| "unknown".to_string()),
            acquired_unix: now.as_secs(),
            token: format!(
                "{pid}-{}-{}",
                now.as_nanos(),
                TOKENS.fetch_add(1, Ordering::Relaxed)
            ),
        }
    }

    fn describe(&self, path: &Path, bytes: &[u8]) -> (Option<i32>, String) {
        let Some(rec) = HolderRecord::parse(bytes) else {
            return (
                None,
                "holder unknown: the file has no lockwright record (another program, or a crash \
                 while it was being written); if no process uses the directory, delete it by hand"
                    .to_string(),
            );
        };
        let mut s = format!(
            "pid {} on host {}, since unix time {}",
            rec.pid, rec.host, rec.acquired_unix
        );
        let ours = self.sys.host_name();
        if ours.as_deref() == Some(rec.host.as_str()) {
            if rec.pid == self.sys.process_id() {
                s.push_str(
                    "; that is this process's pid: this process holds it, or the file is stale \
                     from an earlier process that had the same pid",
                );
            } else {
                match self.sys.pid_alive(rec.pid) {
                    Some(true) => s.push_str("; that process is running"),
                    Some(false) => s.push_str(&format!(
                        "; that process is NOT running, so the lock is probably stale: check that \
                         nothing uses the directory, then delete {} by hand",
                        path.display()
                    )),
                    None => {}
                }
            }
        } else {
            s.push_str("; another host, so this process cannot tell whether it is still running");
        }
        (Some(rec.pid), s)
    }

    /// Tries once to obtain the lock; the typed form of [`LockFactory::try_obtain`].
    ///
    /// # Errors
    /// - [`LockError::BadLockName`], [`LockError::NotADirectory`], [`LockError::Io`] as for
    ///   [`crate::NativeFsLockFactory::try_obtain_native`].
    /// - [`LockError::HeldByOtherProcess`]: the lock file exists; `pid` and `holder` describe
    ///   the holder from its record. The lock is never broken automatically.
    /// - [`LockError::BadLockPath`]: a directory or symlink is at the lock path.
    pub fn try_obtain_simple(&self, dir: &Path, name: &str) -> Result<SimpleFsLock<S>, LockError> {
        validate_name(name)?;
        let sys = &*self.sys;
        sys.create_dir_all(dir)
            .map_err(|source| dir_error(dir, source))?;
        let canonical = sys
            .canonicalize_dir(dir)
            .map_err(|source| dir_error(dir, source))?;
        let path = canonical.join(name);
        let record = self.new_record().render().into_bytes();
        match sys.create_new_file(&path, &record, self.mode) {
            Ok(meta) => Ok(SimpleFsLock {
                sys: Arc::clone(&self.sys),
                path,
                id: meta.id,
                record,
                closed: false,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match sys.read_file(&path) {
                Ok(bytes) => {
                    let (pid, holder) = self.describe(&path, &bytes);
                    Err(LockError::HeldByOtherProcess {
                        path,
                        pid,
                        holder: Some(holder),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Err(LockError::HeldByOtherProcess {
                        path,
                        pid: None,
                        holder: Some(
                            "it was released while this process looked; retry".to_string(),
                        ),
                    })
                }
                Err(source) => Err(open_error(path, source)),
            },
            Err(source) => Err(open_error(path, source)),
        }
    }
}

impl<S: System + 'static> LockFactory for SimpleFsLockFactory<S> {
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        self.try_obtain_simple(dir, name)
            .map(|l| Lock::new(Box::new(l)))
    }
}

impl<S: System> fmt::Debug for SimpleFsLockFactory<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimpleFsLockFactory")
            .field("mode", &format_args!("{:#o}", self.mode))
            .finish_non_exhaustive()
    }
}

/// A lock held through [`SimpleFsLockFactory`]. Dropping it closes it.
#[must_use = "the lock is released as soon as it is dropped"]
pub struct SimpleFsLock<S: System = RealSystem> {
    sys: Arc<S>,
    path: PathBuf,
    id: FileId,
    record: Vec<u8>,
    closed: bool,
}

impl<S: System> SimpleFsLock<S> {
    /// The lock file's canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks that the file at the path is still the one this lock created, with this lock's
    /// record in it.
    ///
    /// # Errors
    /// [`LockError::Invalidated`] (missing, replaced, record changed);
    /// [`LockError::AlreadyClosed`] after [`LockHandle::close`]; [`LockError::Io`].
    pub fn ensure_valid(&self) -> Result<(), LockError> {
        LockHandle::ensure_valid(self)
    }

    /// Releases the lock: deletes the lock file if it is still the one this lock created.
    ///
    /// # Errors
    /// [`LockError::ReleaseRefused`] if the file is missing or no longer ours (it is left
    /// alone); [`LockError::Io`].
    pub fn close(mut self) -> Result<(), LockError> {
        LockHandle::close(&mut self)
    }

    /// Whether the file at the path is still the one this lock created.
    fn check(&self) -> Result<(), (InvalidReason, Option<std::io::Error>)> {
        match self.sys.stat(&self.path) {
            Err(e) => return Err((InvalidReason::Missing, Some(e))),
            Ok(None) => return Err((InvalidReason::Missing, None)),
            Ok(Some(now)) if now.id != self.id => {
                return Err((
                    InvalidReason::Replaced {
                        old: self.id,
                        new: now.id,
                    },
                    None,
                ));
            }
            Ok(Some(now)) if now.kind != EntryKind::Regular => {
                return Err((InvalidReason::NotRegular { found: now.kind }, None));
            }
            Ok(Some(_)) => {}
        }
        match self.sys.read_file(&self.path) {
            Ok(bytes) if bytes == self.record => Ok(()),
            Ok(_) => Err((InvalidReason::RecordChanged, None)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err((InvalidReason::Missing, None))
            }
            Err(e) => Err((InvalidReason::RecordChanged, Some(e))),
        }
    }
}

impl<S: System> LockHandle for SimpleFsLock<S> {
    fn ensure_valid(&self) -> Result<(), LockError> {
        if self.closed {
            return Err(LockError::AlreadyClosed {
                path: self.path.clone(),
            });
        }
        match self.check() {
            Ok(()) => Ok(()),
            Err((_, Some(source))) => Err(LockError::Io {
                path: self.path.clone(),
                source,
            }),
            Err((reason, None)) => Err(LockError::Invalidated {
                path: self.path.clone(),
                reason,
            }),
        }
    }

    fn close(&mut self) -> Result<(), LockError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        match self.check() {
            Ok(()) => self.sys.unlink(&self.path).map_err(|source| LockError::Io {
                path: self.path.clone(),
                source,
            }),
            Err((_, Some(source))) => Err(LockError::Io {
                path: self.path.clone(),
                source,
            }),
            Err((reason, None)) => Err(LockError::ReleaseRefused {
                path: self.path.clone(),
                reason,
            }),
        }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl<S: System> fmt::Debug for SimpleFsLock<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimpleFsLock")
            .field("path", &self.path)
            .field("file_id", &self.id)
            .field("closed", &self.closed)
            .finish()
    }
}

impl<S: System> Drop for SimpleFsLock<S> {
    fn drop(&mut self) {
        let _ = LockHandle::close(self);
    }
}

#[cfg(test)]
mod tests {
    use super::HolderRecord;

    #[test]
    fn holder_record_round_trips_and_rejects_foreign_files() {
        let rec = HolderRecord {
            pid: 42,
            host: "db-1".into(),
            acquired_unix: 1_700_000_000,
            token: "42-1-0".into(),
        };
        assert_eq!(HolderRecord::parse(rec.render().as_bytes()), Some(rec));
        assert_eq!(HolderRecord::parse(b""), None);
        assert_eq!(HolderRecord::parse(b"12345\n"), None);
        assert_eq!(
            HolderRecord::parse(b"lockwright simple-fs lock v1\npid: x\n"),
            None
        );
        assert_eq!(HolderRecord::parse(&[0xff, 0xfe]), None);
    }
}
