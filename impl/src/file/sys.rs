//! The system interface the file-lock protocols run on: the OS calls and the held set.
//!
//! Every protocol in [`crate::file`] (`NativeFsLockFactory`, `SimpleFsLockFactory`) is written
//! once, generic over [`System`]. Production uses [`RealSystem`] (module `gate`, the only code
//! in the crate that calls `open`, `fcntl`, `flock`, `fstat`, `lstat` or `unlink`); the checks
//! crate plugs in a simulated OS built on `lockwright-model`'s kernel semantics, with loom or
//! shuttle primitives, and runs the very same protocol functions through every interleaving.
//!
//! Contract: each method is ONE atomic step of the protocol as the model sees it. The protocol
//! must never combine two of these calls into something the model treats as a single step, and
//! must never touch the OS except through this trait. A recorded run is therefore a sequence of
//! `System` calls that maps step for step onto a model path. The two blocking calls,
//! [`System::held_insert_wait`] and [`System::lock_blocking`], are one step each too: the step
//! happens when the call returns; while it waits the caller takes no step at all (in the model,
//! the action is simply not enabled until the path leaves the held set, or until no other
//! owner holds a conflicting lock).
//!
//! # Sealed
//!
//! [`System`] cannot be implemented outside this crate unless the cargo feature
//! `unstable-system` is enabled. The feature exists for lockwright's own test kit (a simulated
//! OS under loom and shuttle) and makes no stability promise. It is sealed because a second
//! implementation is a second held set in one process, which under POSIX rules is
//! LUCENE-5738 again: two factories of one process that do not see each other's held set open
//! two descriptors on one lock file, the second `F_SETLK` "succeeds" (one process owns both),
//! and closing either descriptor drops the lock. The same feature exposes `HeldSet` and
//! `RealSystem::with_held_set`, which tests use to play several processes inside one.

use std::io;
use std::path::{Path, PathBuf};

#[cfg(feature = "unstable-system")]
pub use super::gate::HeldSet;
pub use super::gate::RealSystem;

/// Which OS advisory lock a factory takes. Always chosen explicitly; see `docs/protocol.md` for
/// what each kind excludes.
///
/// | kind | owner | excludes |
/// |---|---|---|
/// | [`OsLockKind::Ofd`] | the open file description | OFD and POSIX lockers (Java/Lucene, SQLite) |
/// | [`OsLockKind::Posix`] | the whole process | OFD and POSIX lockers; dropped by ANY close of the file in the process |
/// | [`OsLockKind::Flock`] | the open file description | `flock` lockers only (fs4, std's `File::lock`, Cargo) — NOT Java |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum OsLockKind {
    /// `fcntl(F_OFD_SETLK)`, whole file, owned by the open file description (Linux >= 3.15).
    /// Conflicts with POSIX locks, so it excludes Java's `FileChannel.tryLock` (Lucene) and
    /// SQLite. Closing another descriptor of the file does not drop it.
    Ofd,
    /// `fcntl(F_SETLK)`, whole file, owned by the process. Closing ANY descriptor of the file in
    /// this process drops the process's lock (fcntl(2), "the record locks are released"): the
    /// held set exists so that the protocol never opens a second descriptor.
    Posix,
    /// `flock(LOCK_EX | LOCK_NB)` through fs4, owned by the open file description. Does NOT
    /// exclude Java or other `fcntl` users; on NFS Linux emulates it with POSIX locks.
    Flock,
}

impl OsLockKind {
    /// Every kind, in the order of the docs' tables.
    pub const ALL: [OsLockKind; 3] = [OsLockKind::Ofd, OsLockKind::Posix, OsLockKind::Flock];

    /// The name used on the command line and in docs: `ofd`, `posix`, `flock`.
    pub fn name(self) -> &'static str {
        match self {
            OsLockKind::Ofd => "ofd",
            OsLockKind::Posix => "posix",
            OsLockKind::Flock => "flock",
        }
    }

    /// Parses [`OsLockKind::name`].
    pub fn from_name(name: &str) -> Option<OsLockKind> {
        OsLockKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// `(st_dev, st_ino)`: what a lock really protects. Locks live on the inode, not on the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    /// `st_dev`: the device (filesystem) the file is on.
    pub dev: u64,
    /// `st_ino`: the inode number on that device.
    pub ino: u64,
}

/// What kind of directory entry a path names (from `lstat`, links are not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryKind {
    /// A regular file: the only thing a lock file may be.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (never followed: lock files are opened with `O_NOFOLLOW`).
    Symlink,
    /// Device, FIFO, socket.
    Other,
}

/// The parts of `struct stat` the protocols use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileMeta {
    /// `(st_dev, st_ino)`.
    pub id: FileId,
    /// The file type.
    pub kind: EntryKind,
    /// `st_nlink`; 0 once the file has been unlinked while we keep it open.
    pub nlink: u64,
    /// `st_size`; Lucene's `write.lock` is always empty.
    pub len: u64,
}

/// Result of a non-blocking lock attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryLock {
    /// The lock is ours.
    Acquired,
    /// `EWOULDBLOCK`/`EAGAIN`/`EACCES`: someone else holds a conflicting lock.
    WouldBlock,
}

/// What the kernel says about conflicting locks on a file, seen from one of our descriptors
/// (`F_OFD_GETLK` / `F_GETLK`; never a second descriptor, which would drop POSIX locks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Probe {
    /// Nobody else holds a conflicting lock.
    NoConflict,
    /// Another owner holds a conflicting lock.
    Conflict {
        /// The holder's pid when the kernel reports one (POSIX `F_GETLK` does; OFD locks report
        /// -1, mapped to `None`).
        pid: Option<i32>,
    },
    /// This lock kind cannot be probed (`flock`).
    Unknown,
}

mod sealed {
    /// Implemented by [`super::RealSystem`] only, unless the `unstable-system` feature opens
    /// [`super::System`] to every type (see the module docs for why it is sealed).
    pub trait Sealed {}

    #[cfg(not(feature = "unstable-system"))]
    impl Sealed for super::RealSystem {}

    #[cfg(feature = "unstable-system")]
    impl<T: ?Sized> Sealed for T {}
}

/// The system interface the protocols run on. See the module docs for the contract; sealed
/// unless the `unstable-system` feature is on.
///
/// One value of a `System` is one process's view: its held set is that process's held set.
pub trait System: sealed::Sealed + Send + Sync {
    /// An open file description of a lock file (a descriptor).
    type File: Send + Sync;

    // ---- the process-wide held set (Lucene's LOCK_HELD) ----

    /// Adds `path` to this process's held set. Returns `false` if it was already there.
    fn held_insert(&self, path: &Path) -> bool;
    /// Waits until `path` is not in this process's held set, then adds it: one step, taken when
    /// the call returns. The blocking obtain's first step: a thread of this process that finds
    /// the path held waits here, WITHOUT opening a descriptor (under POSIX rules a second
    /// descriptor's lock would "succeed" at once and its close would drop the holder's lock).
    ///
    /// Waiting for an entry that this very thread keeps (it holds the lock) never ends.
    ///
    /// # Errors
    /// Only a simulated system fails here (a crashed simulated process, or a simulator without
    /// blocking steps); the real one waits.
    fn held_insert_wait(&self, path: &Path) -> io::Result<()>;
    /// Removes `path` from the held set, waking [`System::held_insert_wait`] callers. Returns
    /// `false` if it was not there.
    fn held_remove(&self, path: &Path) -> bool;
    /// Whether `path` is in the held set.
    fn held_contains(&self, path: &Path) -> bool;

    // ---- filesystem ----

    /// `mkdir -p dir`.
    ///
    /// # Errors
    /// The OS error; `AlreadyExists`-like errors for an existing non-directory are returned.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// The canonical (symlink-free, absolute) form of an existing directory.
    ///
    /// # Errors
    /// The OS error from `realpath`.
    fn canonicalize_dir(&self, dir: &Path) -> io::Result<PathBuf>;
    /// `lstat(path)`; `Ok(None)` if nothing is there.
    ///
    /// # Errors
    /// The OS error other than `ENOENT`.
    fn stat(&self, path: &Path) -> io::Result<Option<FileMeta>>;
    /// Opens (creating if absent with permission bits `mode`, under the umask) the lock file
    /// read-write with `O_NOFOLLOW | O_CLOEXEC`, and returns it with its `fstat`. Does not lock.
    ///
    /// # Errors
    /// The OS error (`ELOOP` for a symlink, `EISDIR` for a directory, ...).
    fn open_lock_file(&self, path: &Path, mode: u32) -> io::Result<(Self::File, FileMeta)>;
    /// Creates `path` exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`, permission bits
    /// `mode` under the umask), writes `contents`, closes it, and returns its metadata.
    /// `ErrorKind::AlreadyExists` if present.
    ///
    /// # Errors
    /// The OS error.
    fn create_new_file(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<FileMeta>;
    /// Reads a small file (SimpleFs holder record).
    ///
    /// # Errors
    /// The OS error.
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// `unlink(path)`.
    ///
    /// # Errors
    /// The OS error.
    fn unlink(&self, path: &Path) -> io::Result<()>;

    // ---- descriptors and OS locks ----

    /// Non-blocking exclusive whole-file lock of the given kind.
    ///
    /// # Errors
    /// Any OS error other than "would block" (`ENOLCK`, `EOPNOTSUPP`, `EIO`, ...).
    fn try_lock(&self, file: &Self::File, kind: OsLockKind) -> io::Result<TryLock>;
    /// Blocking exclusive whole-file lock of the given kind (`F_OFD_SETLKW`, `F_SETLKW`,
    /// `flock(LOCK_EX)`): waits until no other owner holds a conflicting lock, then takes it;
    /// one step, taken when the call returns. `EINTR` is retried: the wait cannot be cancelled.
    ///
    /// # Errors
    /// `EDEADLK` (POSIX locks: the kernel saw a wait cycle between processes), `ENOLCK`,
    /// `EOPNOTSUPP`, `EIO`, ...
    fn lock_blocking(&self, file: &Self::File, kind: OsLockKind) -> io::Result<()>;
    /// Releases our lock of the given kind on `file`.
    ///
    /// # Errors
    /// The OS error.
    fn unlock(&self, file: &Self::File, kind: OsLockKind) -> io::Result<()>;
    /// Asks the kernel, through `file`, whether another owner holds a conflicting lock.
    ///
    /// # Errors
    /// The OS error.
    fn probe(&self, file: &Self::File, kind: OsLockKind) -> io::Result<Probe>;
    /// `fstat(file)`.
    ///
    /// # Errors
    /// The OS error.
    fn fstat(&self, file: &Self::File) -> io::Result<FileMeta>;
    /// `close(file)`. Under POSIX semantics this drops every lock the process holds on the file.
    ///
    /// # Errors
    /// The OS error (the descriptor is gone either way).
    fn close(&self, file: Self::File) -> io::Result<()>;

    // ---- process identity (SimpleFs holder records) ----

    /// This process's id as recorded in a SimpleFs holder record. A simulated OS with several
    /// simulated processes overrides it.
    fn process_id(&self) -> i32 {
        i32::try_from(std::process::id()).unwrap_or(i32::MAX)
    }
    /// This host's name as recorded in a SimpleFs holder record; `None` if unknown.
    fn host_name(&self) -> Option<String> {
        None
    }
    /// Whether process `pid` on this host is alive (`kill(pid, 0)`); `None` if it cannot tell.
    /// Only used to word the "held" error of SimpleFs: a lock is never broken on this answer.
    fn pid_alive(&self, pid: i32) -> Option<bool> {
        let _ = pid;
        None
    }
}
