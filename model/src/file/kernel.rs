//! Linux advisory-lock and file semantics for one lock path: the single source of truth.
//!
//! The Stateright model (`crate::file::protocol`) and the simulated OS that the checks crate runs the
//! real `lockwright` code on (loom, shuttle) both call this module, so the model and the
//! simulation cannot drift. Everything here was verified on Linux (see
//! `checks/tests/file_peers/os_conformance.rs`, which replays random call sequences against the
//! real kernel):
//!
//! | | `flock` | POSIX `F_SETLK` | OFD `F_OFD_SETLK` |
//! |---|---|---|---|
//! | owner | open file description | the whole process | open file description |
//! | 2nd `open()` + lock in same process | conflicts | silently succeeds | conflicts |
//! | closing any other fd on the file | no effect | drops ALL the process's locks on it | no effect |
//! | conflicts with flock / posix / ofd | yes / no / no | no / yes / yes | no / yes / yes |
//! | process death | released | released | released |
//! | holder pid visible to `F_GETLK` | — | yes | no (`-1`) |
//!
//! Locks live on the inode, not on the path: unlinking or renaming over the lock file lets a
//! newcomer lock a fresh inode while the old holder keeps "holding" the orphan.
//!
//! Only exclusive whole-file locks are modelled (shared locks have extra upgrade semantics —
//! a failed non-blocking `flock` upgrade drops the shared lock — that no protocol here uses).
//!
//! Two faults act on the kernel state directly: [`Os::lose_locks`] (a process's locks vanish
//! with no local action: an NFSv4 client whose lease expired, or a server that lost its lock
//! state; Linux then answers later calls on those locks with `EIO`) and [`Os::write_path`]
//! (someone writes into the lock file, so its length is no longer 0). File contents are
//! abstracted to "empty or not" ([`DescStat::written`]). Failing calls (`EIO`, `ENOLCK` from a
//! lock call, `EIO` from `unlock` or `close`) are outcomes the callers choose; their effect on
//! the kernel is stated where the model and the simulator apply them: a failed lock call takes
//! no lock, a failed `unlock` leaves the lock as it was (the caller cannot know better), a
//! failed `close` still releases the descriptor and its locks (close(2): the descriptor is
//! freed whatever the error).

use std::fmt;

use table::{Blank, SortedMap, SortedSet};

/// A process id in the model (small and dense).
pub type Pid = u8;

/// An inode: a generation number, fresh at each create of the lock path.
pub type Inode = u8;

/// An open file description, named by the caller: `pid` opened it, `slot` tells it apart from
/// the process's other descriptions (the model uses the thread index). Descriptions are never
/// shared between processes (no `fork`; Rust opens with `O_CLOEXEC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Desc {
    pub pid: Pid,
    pub slot: u8,
}

/// Which lock call a party makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockKind {
    /// `flock(2)`: owned by the description.
    Flock,
    /// `fcntl(F_SETLK)`: owned by the process.
    Posix,
    /// `fcntl(F_OFD_SETLK)`: owned by the description, conflicts with POSIX.
    Ofd,
    /// `flock(2)` on an NFS mount: Linux emulates it with a whole-file POSIX lock, so it has
    /// exactly POSIX semantics (process-owned, dropped by any close, conflicts with fcntl).
    NfsFlock,
}

impl LockKind {
    pub const ALL: [LockKind; 4] = [
        LockKind::Flock,
        LockKind::Posix,
        LockKind::Ofd,
        LockKind::NfsFlock,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Flock => "flock",
            LockKind::Posix => "posix",
            LockKind::Ofd => "ofd",
            LockKind::NfsFlock => "nfs-flock",
        }
    }

    /// Parses [`LockKind::name`].
    pub fn from_name(s: &str) -> Option<LockKind> {
        LockKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

impl fmt::Display for LockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One granted lock, keyed by its owner as the kernel keys it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockRec {
    Flock { inode: Inode, desc: Desc },
    Ofd { inode: Inode, desc: Desc },
    Posix { inode: Inode, pid: Pid },
}

impl LockRec {
    /// The same lock on the inode `f` renames this one's to (for inode renumbering).
    pub fn map_inode(self, f: impl FnOnce(Inode) -> Inode) -> LockRec {
        match self {
            LockRec::Flock { inode, desc } => LockRec::Flock {
                inode: f(inode),
                desc,
            },
            LockRec::Ofd { inode, desc } => LockRec::Ofd {
                inode: f(inode),
                desc,
            },
            LockRec::Posix { inode, pid } => LockRec::Posix {
                inode: f(inode),
                pid,
            },
        }
    }

    fn inode(self) -> Inode {
        match self {
            LockRec::Flock { inode, .. }
            | LockRec::Ofd { inode, .. }
            | LockRec::Posix { inode, .. } => inode,
        }
    }
}

/// How `open` treats the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpenMode {
    /// `O_CREAT`: open the file at the path, creating a fresh inode if absent.
    Create,
    /// `O_CREAT | O_EXCL`: fail if present.
    CreateExclusive,
    /// Neither: fail if absent.
    Existing,
}

/// Why an `open` or `unlink` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsError {
    /// `ENOENT`.
    NotFound,
    /// `EEXIST`.
    AlreadyExists,
}

/// Outcome of a non-blocking lock attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TryLockResult {
    Acquired,
    WouldBlock,
}

/// What `F_GETLK` / `F_OFD_GETLK` through a description reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeResult {
    NoConflict,
    /// Another owner holds a conflicting lock; the pid when the kernel reports it (POSIX).
    Conflict {
        pid: Option<Pid>,
    },
    /// `flock` locks cannot be probed.
    Unknown,
}

/// `fstat` of a description.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DescStat {
    pub inode: Inode,
    pub nlink: u8,
    /// Whether someone wrote into the file (`st_size > 0`; a lock file is always empty).
    pub written: bool,
}

impl Blank for Desc {
    const BLANK: Desc = Desc { pid: 0, slot: 0 };
}

impl Blank for LockRec {
    const BLANK: LockRec = LockRec::Posix { inode: 0, pid: 0 };
}

/// Open descriptions kept inline (without a heap allocation): 4 processes × 2 threads, the
/// deep scenario, all with the lock file open. Granted locks: as many (in the model a process
/// locks with one kind, so each description holds at most one lock). Live inodes: one more
/// (the one at the path). Bigger tables move to the heap (`kernel/table.rs`).
const INLINE_DESCS: usize = 8;
const INLINE_LOCKS: usize = 8;
const INLINE_INODES: usize = INLINE_DESCS + 1;

/// The filesystem (one lock path in one directory) and the kernel's lock table.
///
/// The tables are small sorted arrays stored inline (`kernel/table.rs`), not B-trees: the
/// checker clones and hashes the kernel once per transition, and an inline table makes that
/// a copy and a flat pass. They compare, hash and print as the `BTreeMap`s/`BTreeSet`s did.
#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct Os {
    /// The inode the lock path names, if any.
    path: Option<Inode>,
    /// Inodes that are linked or open, with their link count.
    inodes: SortedMap<Inode, u8, INLINE_INODES>,
    /// Open descriptions and the inode each refers to.
    descs: SortedMap<Desc, Inode, INLINE_DESCS>,
    /// Granted locks.
    locks: SortedSet<LockRec, INLINE_LOCKS>,
    /// Next fresh inode generation.
    next_inode: Inode,
    /// Inodes someone wrote into (no longer empty). Always empty without the `write` fault.
    written: SortedSet<Inode, INLINE_INODES>,
}

impl Clone for Os {
    fn clone(&self) -> Os {
        Os {
            path: self.path,
            inodes: self.inodes.clone(),
            descs: self.descs.clone(),
            locks: self.locks.clone(),
            next_inode: self.next_inode,
            written: self.written.clone(),
        }
    }

    /// Table by table, so that inline tables are copied over (the checker overwrites one
    /// scratch kernel per successor).
    #[inline]
    fn clone_from(&mut self, source: &Os) {
        self.path = source.path;
        self.inodes.clone_from(&source.inodes);
        self.descs.clone_from(&source.descs);
        self.locks.clone_from(&source.locks);
        self.next_inode = source.next_inode;
        self.written.clone_from(&source.written);
    }
}

impl Os {
    /// No lock file yet.
    pub fn new() -> Os {
        Os::default()
    }

    // ---- queries ----

    /// `stat(path)`: the inode the lock path names.
    pub fn path_inode(&self) -> Option<Inode> {
        self.path
    }

    /// The inode `desc` refers to, if open.
    pub fn desc_inode(&self, desc: Desc) -> Option<Inode> {
        self.descs.get(&desc).copied()
    }

    /// `fstat(desc)`; `None` if `desc` is not open.
    pub fn fstat(&self, desc: Desc) -> Option<DescStat> {
        let inode = self.desc_inode(desc)?;
        Some(DescStat {
            inode,
            nlink: self.inodes.get(&inode).copied().unwrap_or(0),
            written: self.written.contains(&inode),
        })
    }

    /// Whether someone wrote into `inode` (its length is not 0).
    pub fn is_written(&self, inode: Inode) -> bool {
        self.written.contains(&inode)
    }

    /// Whether process `pid` owns a granted lock (through any of its descriptions, or as a
    /// POSIX owner), on any inode.
    pub fn owns_lock(&self, pid: Pid) -> bool {
        self.locks.iter().any(|&l| Self::owner_pid(l) == pid)
    }

    fn owner_pid(l: LockRec) -> Pid {
        match l {
            LockRec::Flock { desc, .. } | LockRec::Ofd { desc, .. } => desc.pid,
            LockRec::Posix { pid, .. } => pid,
        }
    }

    /// Open descriptions, in order.
    pub fn descs(&self) -> impl Iterator<Item = (Desc, Inode)> + '_ {
        self.descs.iter().map(|(d, i)| (*d, *i))
    }

    /// Granted locks, in order.
    pub fn locks(&self) -> impl Iterator<Item = LockRec> + '_ {
        self.locks.iter().copied()
    }

    /// Whether the kernel currently grants `desc`'s owner (the description, or its process for
    /// POSIX) a lock of `kind` on `desc`'s inode.
    pub fn holds(&self, desc: Desc, kind: LockKind) -> bool {
        match self.desc_inode(desc) {
            Some(inode) => self.locks.contains(&Self::rec(desc, inode, kind)),
            None => false,
        }
    }

    fn rec(desc: Desc, inode: Inode, kind: LockKind) -> LockRec {
        match kind {
            LockKind::Flock => LockRec::Flock { inode, desc },
            LockKind::Ofd => LockRec::Ofd { inode, desc },
            LockKind::Posix | LockKind::NfsFlock => LockRec::Posix {
                inode,
                pid: desc.pid,
            },
        }
    }

    /// Whether `a` (held) conflicts with a request `b` (both on the same inode).
    fn conflicts(a: LockRec, b: LockRec) -> bool {
        use LockRec::*;
        match (a, b) {
            (Flock { desc: x, .. }, Flock { desc: y, .. }) => x != y,
            (Flock { .. }, _) | (_, Flock { .. }) => false,
            (Ofd { desc: x, .. }, Ofd { desc: y, .. }) => x != y,
            (Posix { pid: x, .. }, Posix { pid: y, .. }) => x != y,
            // OFD and POSIX locks conflict even within one process (fcntl(2), "Open file
            // description locks").
            (Ofd { .. }, Posix { .. }) | (Posix { .. }, Ofd { .. }) => true,
        }
    }

    /// The first granted lock that conflicts with `want`.
    fn conflicting(&self, want: LockRec) -> Option<LockRec> {
        self.locks
            .iter()
            .copied()
            .find(|&held| held.inode() == want.inode() && Self::conflicts(held, want))
    }

    /// `F_GETLK` / `F_OFD_GETLK` through `desc`: is a conflicting lock held by another owner?
    pub fn probe(&self, desc: Desc, kind: LockKind) -> ProbeResult {
        let Some(inode) = self.desc_inode(desc) else {
            return ProbeResult::NoConflict;
        };
        if kind == LockKind::Flock {
            return ProbeResult::Unknown;
        }
        match self.conflicting(Self::rec(desc, inode, kind)) {
            None => ProbeResult::NoConflict,
            Some(LockRec::Posix { pid, .. }) => ProbeResult::Conflict { pid: Some(pid) },
            Some(_) => ProbeResult::Conflict { pid: None },
        }
    }

    /// Whether a lock of `kind` through `desc` would be granted now: what a blocking lock call
    /// (`F_SETLKW`, `F_OFD_SETLKW`, `flock` without `LOCK_NB`) waits for.
    pub fn lock_would_succeed(&self, desc: Desc, kind: LockKind) -> bool {
        match self.desc_inode(desc) {
            Some(inode) => self.conflicting(Self::rec(desc, inode, kind)).is_none(),
            None => false,
        }
    }

    /// Whether a brand-new description in process `pid` could lock the file at the path with
    /// `kind` right now (creating the file if absent). Used for "no stale lock".
    pub fn fresh_lock_would_succeed(&self, pid: Pid, kind: LockKind) -> bool {
        let Some(inode) = self.path else {
            return true;
        };
        let fresh = Desc { pid, slot: u8::MAX };
        self.conflicting(Self::rec(fresh, inode, kind)).is_none()
    }

    // ---- calls ----

    fn fresh_inode(&mut self) -> Inode {
        let inode = self.next_inode;
        self.next_inode = self
            .next_inode
            .checked_add(1)
            .expect("inode generations exhausted: call Os::compact");
        self.inodes.insert(inode, 1);
        inode
    }

    /// `open(path, mode)` as description `desc`. Panics if `desc` is already open (a caller
    /// bug: the protocol never opens twice into one slot).
    pub fn open(&mut self, desc: Desc, mode: OpenMode) -> Result<Inode, FsError> {
        assert!(!self.descs.contains_key(&desc), "{desc:?} is already open");
        let inode = match (self.path, mode) {
            (Some(_), OpenMode::CreateExclusive) => return Err(FsError::AlreadyExists),
            (Some(inode), _) => inode,
            (None, OpenMode::Existing) => return Err(FsError::NotFound),
            (None, _) => {
                let inode = self.fresh_inode();
                self.path = Some(inode);
                inode
            }
        };
        self.descs.insert(desc, inode);
        Ok(inode)
    }

    /// `open(O_CREAT|O_EXCL)` + write + `close` in one step (SimpleFs's create). Creating a new
    /// inode cannot drop anyone's POSIX lock, so the transient descriptor needs no name.
    pub fn create_exclusive(&mut self) -> Result<Inode, FsError> {
        if self.path.is_some() {
            return Err(FsError::AlreadyExists);
        }
        let inode = self.fresh_inode();
        self.path = Some(inode);
        Ok(inode)
    }

    /// Non-blocking exclusive lock through `desc`. Re-locking what the owner already holds
    /// succeeds (for POSIX: any description of the holding process — the LUCENE-5738 trap).
    pub fn try_lock(&mut self, desc: Desc, kind: LockKind) -> TryLockResult {
        let inode = self
            .desc_inode(desc)
            .unwrap_or_else(|| panic!("try_lock on {desc:?}, which is not open"));
        let want = Self::rec(desc, inode, kind);
        if self.conflicting(want).is_some() {
            return TryLockResult::WouldBlock;
        }
        self.locks.insert(want);
        TryLockResult::Acquired
    }

    /// Releases `desc`'s owner's lock of `kind` (a no-op if not held).
    pub fn unlock(&mut self, desc: Desc, kind: LockKind) {
        if let Some(inode) = self.desc_inode(desc) {
            self.locks.remove(&Self::rec(desc, inode, kind));
        }
    }

    /// `close(desc)`: drops the description's flock/OFD locks and — POSIX rule — every POSIX
    /// lock its process holds on that inode.
    pub fn close(&mut self, desc: Desc) {
        let Some(inode) = self.descs.remove(&desc) else {
            return;
        };
        self.locks.retain(|&l| match l {
            LockRec::Flock { desc: d, .. } | LockRec::Ofd { desc: d, .. } => d != desc,
            LockRec::Posix { inode: i, pid } => !(i == inode && pid == desc.pid),
        });
        self.forget_if_dead(inode);
    }

    /// Other code inside process `pid` opens the lock file and closes it again (a backup
    /// tool's library, a `Files.size()` call ...). Only POSIX locks notice.
    pub fn foreign_open_close(&mut self, pid: Pid) {
        if let Some(inode) = self.path {
            self.locks.retain(
                |&l| !matches!(l, LockRec::Posix { inode: i, pid: p } if i == inode && p == pid),
            );
        }
    }

    /// Process `pid`'s locks vanish without any call of its own: an NFSv4 lease that expired
    /// (the server gave the locks away), a lock server restart with no reclaim. Every lock the
    /// process owns goes, of every kind; its descriptions stay open. Returns whether a lock
    /// was dropped.
    pub fn lose_locks(&mut self, pid: Pid) -> bool {
        let before = self.locks.len();
        self.locks.retain(|&l| Self::owner_pid(l) != pid);
        self.locks.len() != before
    }

    /// Someone writes into the file at the lock path (a tool that "fills in" the lock file, a
    /// misdirected log): its length is no longer 0. Locks are unaffected. Returns `false` if
    /// there is no file.
    pub fn write_path(&mut self) -> bool {
        match self.path {
            Some(inode) => {
                self.written.insert(inode);
                true
            }
            None => false,
        }
    }

    /// `unlink(path)`.
    pub fn unlink(&mut self) -> Result<(), FsError> {
        let inode = self.path.take().ok_or(FsError::NotFound)?;
        if let Some(n) = self.inodes.get_mut(&inode) {
            *n -= 1;
        }
        self.forget_if_dead(inode);
        Ok(())
    }

    /// Creates a fresh file and renames it over the path (or into place if absent): what a
    /// backup/restore tool or `cp --remove-destination` does.
    pub fn replace(&mut self) -> Inode {
        if let Some(old) = self.path.take() {
            if let Some(n) = self.inodes.get_mut(&old) {
                *n -= 1;
            }
            self.forget_if_dead(old);
        }
        let inode = self.fresh_inode();
        self.path = Some(inode);
        inode
    }

    /// Process `pid` dies (SIGKILL, power loss of one process): the kernel closes all its
    /// descriptions and releases all its locks.
    pub fn crash(&mut self, pid: Pid) {
        loop {
            let mine = self.descs.keys().copied().find(|d| d.pid == pid);
            let Some(d) = mine else { break };
            self.close(d);
        }
        self.locks
            .retain(|&l| !matches!(l, LockRec::Posix { pid: p, .. } if p == pid));
    }

    fn forget_if_dead(&mut self, inode: Inode) {
        let linked = self.inodes.get(&inode).copied().unwrap_or(0) > 0;
        let open = self.descs.values().any(|&i| i == inode);
        if !linked && !open {
            self.inodes.remove(&inode);
            self.locks.retain(|l| l.inode() != inode);
            self.written.remove(&inode);
        }
    }

    /// Hashes what does not belong to any process: the path, the inodes with their link
    /// counts, the next generation (symmetry reduction hashes the rest per process).
    pub fn hash_shared<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        self.path.hash(h);
        self.inodes.hash(h);
        self.next_inode.hash(h);
        self.written.hash(h);
    }

    /// Renames the owners of descriptions and locks (symmetry reduction: the same kernel
    /// state with processes and descriptor slots renamed). `desc` and `pid` must be
    /// bijections.
    pub fn rename_owners(&mut self, desc: impl Fn(Desc) -> Desc, pid: impl Fn(Pid) -> Pid) {
        self.descs = self.descs.iter().map(|(&d, &i)| (desc(d), i)).collect();
        self.locks = self
            .locks
            .iter()
            .map(|&l| match l {
                LockRec::Flock { inode, desc: d } => LockRec::Flock {
                    inode,
                    desc: desc(d),
                },
                LockRec::Ofd { inode, desc: d } => LockRec::Ofd {
                    inode,
                    desc: desc(d),
                },
                LockRec::Posix { inode, pid: p } => LockRec::Posix { inode, pid: pid(p) },
            })
            .collect();
    }
}

mod encode;
mod renumber;
mod table;

pub use renumber::Renumbering;
#[cfg(test)]
mod tests;
