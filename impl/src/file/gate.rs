//! [`RealSystem`]: the [`System`] of the running Unix process, and the crate's single gate to
//! the operating system.
//!
//! This module is the only code in the crate that opens lock files or calls `fcntl`, `flock`,
//! `fstat`, `lstat`, `realpath`, `mkdir` or `unlink`. `impl/clippy.toml` enforces this the way
//! Cargo does for its `flock.rs`: the raw lock calls, and every std call that could reach a
//! lock file another way (`OpenOptions::open`, `remove_file`, `symlink_metadata`, ...), are
//! `disallowed-methods` everywhere else in the crate.
//!
//! Lock kinds map to these calls, always whole-file (`l_whence = SEEK_SET, l_start = 0,
//! l_len = 0`):
//!
//! | kind | try | blocking | unlock | probe |
//! |---|---|---|---|---|
//! | [`OsLockKind::Ofd`] | `fcntl(F_OFD_SETLK, F_WRLCK)` | `fcntl(F_OFD_SETLKW, F_WRLCK)` | `fcntl(F_OFD_SETLK, F_UNLCK)` | `fcntl(F_OFD_GETLK)` |
//! | [`OsLockKind::Posix`] | `fcntl(F_SETLK, F_WRLCK)` | `fcntl(F_SETLKW, F_WRLCK)` | `fcntl(F_SETLK, F_UNLCK)` | `fcntl(F_GETLK)` |
//! | [`OsLockKind::Flock`] | fs4: `flock(LOCK_EX \| LOCK_NB)` | fs4: `flock(LOCK_EX)` | fs4: `flock(LOCK_UN)` | none ([`Probe::Unknown`]) |
//!
//! `flock` goes through fs4 (what most Rust programs lock with, so lockwright's `Flock` is
//! exactly their lock), called fully qualified: Rust 1.89's inherent `File::try_lock`,
//! `File::lock` and `File::unlock` would shadow the trait methods in method-call syntax. The
//! errno mapping is the same for all three kinds: `EINTR` is retried here, "would block"
//! (`EWOULDBLOCK`/`EAGAIN`, and `EACCES` from `F_SETLK`) is [`TryLock::WouldBlock`], and every
//! other error (`ENOLCK`, `EOPNOTSUPP`, `EIO`, ...) is returned with its raw errno intact.
//!
//! Every raw call goes through [`injected`] first, naming its [`RawCall`]. In production that
//! is nothing; in the crate's unit tests it can answer a scripted errno instead of the kernel,
//! so that the errno table in `errno_table.rs` (the same table as `docs/protocol.md`, "Every
//! errno, classified") drives each row through this module's real classification and the
//! protocol above it: errnos this kernel never returns here (`ENOLCK`, `EIO`, `EDEADLK`, ...).

// This is the gate: the raw calls are allowed here and nowhere else.
#![allow(clippy::disallowed_methods)]

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};

use super::sys::{EntryKind, FileId, FileMeta, OsLockKind, Probe, System, TryLock};

/// A process's held set (Lucene's `LOCK_HELD`): the canonical paths of the lock files this
/// process currently holds or is in the middle of obtaining.
///
/// The held set is what keeps the protocol from ever opening a second descriptor on a held
/// lock file, which under POSIX `fcntl` semantics would drop the process's lock when closed
/// (LUCENE-5738). [`RealSystem::new`] uses the one process-wide set. A blocking obtain that
/// finds its path here waits on the set's condition variable until the entry goes.
///
/// Public only with the `unstable-system` feature, for tests that play several processes
/// inside one (`RealSystem::with_held_set`).
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "unstable-system"), allow(dead_code))]
pub struct HeldSet {
    paths: Mutex<HashSet<PathBuf>>,
    /// Signalled whenever a path leaves the set.
    removed: Condvar,
}

#[cfg_attr(not(feature = "unstable-system"), allow(dead_code))]
impl HeldSet {
    /// An empty held set.
    pub fn new() -> Self {
        Self::default()
    }

    fn guard(&self) -> MutexGuard<'_, HashSet<PathBuf>> {
        // Each operation is a single insert/remove/lookup, so a panic elsewhere while the
        // mutex was held cannot leave the set half-updated: ignore poisoning.
        self.paths
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds `path`; `false` if it was already there.
    pub fn insert(&self, path: &Path) -> bool {
        self.guard().insert(path.to_path_buf())
    }

    /// Waits until `path` is not in the set, then adds it (one critical section: nobody can
    /// slip in between the check and the insert).
    pub fn insert_wait(&self, path: &Path) {
        let mut paths = self.guard();
        while paths.contains(path) {
            paths = self
                .removed
                .wait(paths)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        paths.insert(path.to_path_buf());
    }

    /// Removes `path`; `false` if it was not there. Wakes every [`HeldSet::insert_wait`]
    /// caller (they wait for different paths, so all of them re-check).
    pub fn remove(&self, path: &Path) -> bool {
        let removed = self.guard().remove(path);
        if removed {
            self.removed.notify_all();
        }
        removed
    }

    /// Whether `path` is in the set.
    pub fn contains(&self, path: &Path) -> bool {
        self.guard().contains(path)
    }

    /// How many paths are in the set.
    pub fn len(&self) -> usize {
        self.guard().len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.guard().is_empty()
    }
}

static PROCESS_HELD_SET: LazyLock<Arc<HeldSet>> = LazyLock::new(|| Arc::new(HeldSet::new()));

/// The real operating system, seen from this process, with the one process-wide held set.
///
/// Cheap to clone: clones share the held set.
#[derive(Clone, Debug)]
pub struct RealSystem {
    held: Arc<HeldSet>,
}

impl Default for RealSystem {
    fn default() -> Self {
        Self::new()
    }
}

impl RealSystem {
    /// The real OS with the one process-wide held set. Every factory built on this shares it,
    /// as every Lucene `NativeFSLockFactory` in a JVM shares `LOCK_HELD`.
    pub fn new() -> Self {
        RealSystem {
            held: Arc::clone(&PROCESS_HELD_SET),
        }
    }

    /// The real OS with an injected held set. Two `RealSystem`s with different held sets
    /// behave like two processes as far as the held set goes, but the kernel still sees one
    /// process: POSIX `fcntl` locks taken through them do NOT exclude each other (OFD and
    /// `flock` locks do). For tests and tools only: needs the `unstable-system` feature.
    #[cfg(feature = "unstable-system")]
    pub fn with_held_set(held: Arc<HeldSet>) -> Self {
        RealSystem { held }
    }

    /// The held set this system uses. Needs the `unstable-system` feature.
    #[cfg(feature = "unstable-system")]
    pub fn held_set(&self) -> &Arc<HeldSet> {
        &self.held
    }
}

fn meta_of(m: &std::fs::Metadata) -> FileMeta {
    let ft = m.file_type();
    let kind = if ft.is_file() {
        EntryKind::Regular
    } else if ft.is_dir() {
        EntryKind::Directory
    } else if ft.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    };
    FileMeta {
        id: FileId {
            dev: m.dev(),
            ino: m.ino(),
        },
        kind,
        nlink: m.nlink(),
        len: m.size(),
    }
}

/// A whole-file `struct flock` with `l_pid = 0` (required for OFD commands, fcntl(2)).
fn whole_file(l_type: libc::c_int) -> libc::flock {
    // SAFETY: `struct flock` is plain old data; all-zero is a valid value.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = l_type as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = 0;
    fl.l_pid = 0;
    fl
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn setlk_cmd(kind: OsLockKind, wait: bool) -> libc::c_int {
    match (kind, wait) {
        (OsLockKind::Ofd, false) => libc::F_OFD_SETLK,
        (OsLockKind::Ofd, true) => libc::F_OFD_SETLKW,
        (_, false) => libc::F_SETLK,
        (_, true) => libc::F_SETLKW,
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn getlk_cmd(kind: OsLockKind) -> libc::c_int {
    match kind {
        OsLockKind::Ofd => libc::F_OFD_GETLK,
        _ => libc::F_GETLK,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn setlk_cmd(kind: OsLockKind, wait: bool) -> libc::c_int {
    // OFD locks are Linux-only; callers check `ofd_unsupported` first.
    let _ = kind;
    if wait {
        libc::F_SETLKW
    } else {
        libc::F_SETLK
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn getlk_cmd(kind: OsLockKind) -> libc::c_int {
    let _ = kind;
    libc::F_GETLK
}

fn ofd_unsupported(kind: OsLockKind) -> io::Result<()> {
    if kind == OsLockKind::Ofd && !cfg!(any(target_os = "linux", target_os = "android")) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "open file description locks (F_OFD_SETLK) exist only on Linux",
        ));
    }
    Ok(())
}

/// The raw calls of the gate, by the role they play (the same role for `fcntl` and `flock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RawCall {
    /// `realpath(dir)` (the lock directory resolved).
    Realpath,
    /// `mkdir(dir)` and its parents (a lock directory that is missing).
    Mkdir,
    /// `lstat(path)`.
    Lstat,
    /// `open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC)`.
    Open,
    /// `fstat(fd)`.
    Fstat,
    /// `F_OFD_SETLK` / `F_SETLK` with `F_WRLCK`, or `flock(LOCK_EX | LOCK_NB)`.
    TryLock,
    /// `F_OFD_SETLKW` / `F_SETLKW` with `F_WRLCK`, or `flock(LOCK_EX)`.
    LockWait,
    /// `F_OFD_SETLK` / `F_SETLK` with `F_UNLCK`, or `flock(LOCK_UN)`.
    Unlock,
    /// `F_OFD_GETLK` / `F_GETLK`.
    Probe,
    /// `close(fd)`.
    Close,
    /// `open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)` of a new lock file (SimpleFs).
    CreateNew,
    /// `open(path, O_RDONLY | O_NOFOLLOW)` and `read` of a lock file's record (SimpleFs).
    ReadFile,
    /// `unlink(path)` (SimpleFs's release).
    Unlink,
}

/// A scripted error for the raw call `call`, answered instead of the kernel's (tests only).
#[cfg(test)]
fn injected(call: RawCall) -> Option<io::Error> {
    super::inject::take(call)
}

/// A scripted error for the raw call: never, outside the crate's unit tests.
#[cfg(not(test))]
#[inline(always)]
fn injected(call: RawCall) -> Option<io::Error> {
    let _ = call;
    None
}

/// Runs `call` until it does not fail with `EINTR`.
fn retry_eintr<T>(mut call: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match call() {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            other => return other,
        }
    }
}

/// `fcntl(fd, cmd, fl)`, retrying `EINTR`.
fn fcntl_lock(
    file: &File,
    call: RawCall,
    cmd: libc::c_int,
    fl: &mut libc::flock,
) -> io::Result<()> {
    retry_eintr(|| {
        if let Some(e) = injected(call) {
            return Err(e);
        }
        // SAFETY: `file` keeps the descriptor open for the call; `fl` is a valid `struct flock`.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), cmd, fl as *mut libc::flock) };
        if r == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    })
}

/// fs4's non-blocking exclusive `flock`, retrying `EINTR`; "would block" is `Ok(WouldBlock)`.
/// fs4 builds its errors with `io::Error::from_raw_os_error`, so the errno survives; a
/// scripted errno goes through fs4's own `From<io::Error>`, which is how fs4 reads flock's.
fn flock_try(file: &File) -> io::Result<TryLock> {
    let attempt = || match injected(RawCall::TryLock) {
        Some(e) => Err(fs4::TryLockError::from(e)),
        None => fs4::FileExt::try_lock(file),
    };
    retry_eintr(|| match attempt() {
        Ok(()) => Ok(TryLock::Acquired),
        Err(fs4::TryLockError::WouldBlock) => Ok(TryLock::WouldBlock),
        Err(fs4::TryLockError::Error(e)) => Err(e),
    })
}

fn is_would_block(e: &io::Error) -> bool {
    // fcntl(2): F_SETLK answers EACCES or EAGAIN on conflict; flock(2) answers EWOULDBLOCK.
    matches!(e.raw_os_error(), Some(c) if c == libc::EAGAIN || c == libc::EWOULDBLOCK || c == libc::EACCES)
}

/// `close(fd)`, reporting its error (std's `File` drop ignores it). Not retried on `EINTR`:
/// on Linux the descriptor is released regardless (close(2), "Dealing with error returns").
fn close_fd(file: File) -> io::Result<()> {
    let fd = file.into_raw_fd();
    // A scripted error still closes the descriptor, as Linux does on every close error.
    let scripted = injected(RawCall::Close);
    // SAFETY: we own `fd` (just taken out of the `File`) and close it exactly once.
    let r = unsafe { libc::close(fd) };
    if let Some(e) = scripted {
        return Err(e);
    }
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Lock files are small: a SimpleFs holder record is well under this.
const MAX_RECORD: u64 = 64 * 1024;

impl System for RealSystem {
    type File = File;

    fn held_insert(&self, path: &Path) -> bool {
        self.held.insert(path)
    }

    fn held_insert_wait(&self, path: &Path) -> io::Result<()> {
        self.held.insert_wait(path);
        Ok(())
    }

    fn held_remove(&self, path: &Path) -> bool {
        self.held.remove(path)
    }

    fn held_contains(&self, path: &Path) -> bool {
        self.held.contains(path)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        if let Some(e) = injected(RawCall::Mkdir) {
            return Err(e);
        }
        // Fast path: one stat(2) when the directory exists (the common case); std's
        // `create_dir_all` would try mkdir(2) first and then stat.
        if std::fs::metadata(dir).map(|m| m.is_dir()).unwrap_or(false) {
            return Ok(());
        }
        std::fs::create_dir_all(dir)
    }

    fn canonicalize_dir(&self, dir: &Path) -> io::Result<PathBuf> {
        injected(RawCall::Realpath).map_or_else(|| std::fs::canonicalize(dir), Err)
    }

    fn stat(&self, path: &Path) -> io::Result<Option<FileMeta>> {
        match injected(RawCall::Lstat).map_or_else(|| std::fs::symlink_metadata(path), Err) {
            Ok(m) => Ok(Some(meta_of(&m))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn open_lock_file(&self, path: &Path, mode: u32) -> io::Result<(File, FileMeta)> {
        // std adds O_CLOEXEC itself; O_NOFOLLOW makes a symlink at the path fail with ELOOP
        // instead of locking whatever it points to. std retries EINTR inside `open` too; the
        // retry here makes it this gate's rule, pinned by the errno table.
        let file = retry_eintr(|| match injected(RawCall::Open) {
            Some(e) => Err(e),
            None => OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(path),
        })?;
        match injected(RawCall::Fstat).map_or_else(|| file.metadata(), Err) {
            Ok(m) => Ok((file, meta_of(&m))),
            Err(e) => {
                let _ = close_fd(file);
                Err(e)
            }
        }
    }

    fn create_new_file(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<FileMeta> {
        // As for `open_lock_file`: std retries EINTR inside `open`; the retry here makes it
        // this gate's rule, pinned by the errno table.
        let mut file = retry_eintr(|| match injected(RawCall::CreateNew) {
            Some(e) => Err(e),
            None => OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(path),
        })?;
        let written = file.write_all(contents).and_then(|()| file.metadata());
        match written {
            Ok(m) => {
                close_fd(file)?;
                Ok(meta_of(&m))
            }
            Err(e) => {
                // We created the file and nobody else can have it yet as a lock: undo, so a
                // failed attempt (ENOSPC, EIO) does not leave a stale lock behind.
                let _ = close_fd(file);
                let _ = std::fs::remove_file(path);
                Err(e)
            }
        }
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        let file = retry_eintr(|| match injected(RawCall::ReadFile) {
            Some(e) => Err(e),
            None => OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(path),
        })?;
        let mut buf = Vec::new();
        file.take(MAX_RECORD).read_to_end(&mut buf)?;
        Ok(buf)
    }

    fn unlink(&self, path: &Path) -> io::Result<()> {
        injected(RawCall::Unlink).map_or_else(|| std::fs::remove_file(path), Err)
    }

    fn try_lock(&self, file: &File, kind: OsLockKind) -> io::Result<TryLock> {
        ofd_unsupported(kind)?;
        match kind {
            OsLockKind::Flock => flock_try(file),
            OsLockKind::Ofd | OsLockKind::Posix => {
                let mut fl = whole_file(libc::F_WRLCK);
                match fcntl_lock(file, RawCall::TryLock, setlk_cmd(kind, false), &mut fl) {
                    Ok(()) => Ok(TryLock::Acquired),
                    Err(e) if is_would_block(&e) => Ok(TryLock::WouldBlock),
                    Err(e) => Err(e),
                }
            }
        }
    }

    fn lock_blocking(&self, file: &File, kind: OsLockKind) -> io::Result<()> {
        ofd_unsupported(kind)?;
        match kind {
            OsLockKind::Flock => retry_eintr(|| match injected(RawCall::LockWait) {
                Some(e) => Err(e),
                None => fs4::FileExt::lock(file),
            }),
            OsLockKind::Ofd | OsLockKind::Posix => fcntl_lock(
                file,
                RawCall::LockWait,
                setlk_cmd(kind, true),
                &mut whole_file(libc::F_WRLCK),
            ),
        }
    }

    fn unlock(&self, file: &File, kind: OsLockKind) -> io::Result<()> {
        ofd_unsupported(kind)?;
        match kind {
            OsLockKind::Flock => retry_eintr(|| match injected(RawCall::Unlock) {
                Some(e) => Err(e),
                None => fs4::FileExt::unlock(file),
            }),
            OsLockKind::Ofd | OsLockKind::Posix => fcntl_lock(
                file,
                RawCall::Unlock,
                setlk_cmd(kind, false),
                &mut whole_file(libc::F_UNLCK),
            ),
        }
    }

    fn probe(&self, file: &File, kind: OsLockKind) -> io::Result<Probe> {
        ofd_unsupported(kind)?;
        if kind == OsLockKind::Flock {
            return Ok(Probe::Unknown);
        }
        let mut fl = whole_file(libc::F_WRLCK);
        fcntl_lock(file, RawCall::Probe, getlk_cmd(kind), &mut fl)?;
        if fl.l_type == libc::F_UNLCK as libc::c_short {
            return Ok(Probe::NoConflict);
        }
        // OFD holders are reported with l_pid = -1: no single process owns them.
        let pid = (fl.l_pid > 0).then_some(fl.l_pid);
        Ok(Probe::Conflict { pid })
    }

    fn fstat(&self, file: &File) -> io::Result<FileMeta> {
        injected(RawCall::Fstat)
            .map_or_else(|| file.metadata(), Err)
            .map(|m| meta_of(&m))
    }

    fn close(&self, file: File) -> io::Result<()> {
        close_fd(file)
    }

    fn process_id(&self) -> i32 {
        i32::try_from(std::process::id()).unwrap_or(i32::MAX)
    }

    fn host_name(&self) -> Option<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for `buf.len()` bytes.
        let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if r != 0 {
            return None;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).into_owned();
        (!name.is_empty()).then_some(name)
    }

    fn pid_alive(&self, pid: i32) -> Option<bool> {
        if pid <= 0 {
            return None;
        }
        // SAFETY: signal 0 performs the permission and existence checks only (kill(2)).
        let r = unsafe { libc::kill(pid, 0) };
        if r == 0 {
            return Some(true);
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => Some(false),
            // It exists but belongs to someone we may not signal.
            Some(libc::EPERM) => Some(true),
            _ => None,
        }
    }
}
