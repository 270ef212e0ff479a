//! [`SimSystem`]: one simulated thread's `lockwright::file::sys::System`, every call one step
//! of the [`SimOs`] world (or one process's, shared by its threads: [`SimOs::process`]).
//!
//! The two blocking calls wait by retrying: each attempt takes the world mutex once (one
//! scheduling point) and, when the call cannot complete yet (the path is in the held set;
//! another owner holds a conflicting lock), releases it and yields. Nothing is recorded until
//! the attempt that completes, which is the call's one step: the model's `HeldInsert`
//! (enabled only while the path is absent) or `TryLock` (enabled only while it would be
//! acquired). A thread of a crashed process stops waiting (`Dead`).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lockwright::file::sys::{EntryKind, FileId, FileMeta, OsLockKind, Probe, System, TryLock};
use lockwright_model::file::kernel::{
    Desc, DescStat, FsError, LockKind, OpenMode, Pid, ProbeResult, TryLockResult,
};

use super::record::*;
use super::world::{SimOs, Violation, World, Writer};
use super::Tid;
use crate::prims::Runtime;

/// An open simulated descriptor.
#[derive(Debug)]
pub struct SimFile {
    desc: Desc,
}

impl SimFile {
    /// The model descriptor.
    pub fn desc(&self) -> Desc {
        self.desc
    }
}

/// One simulated thread's view of the system (or one process's, shared by its threads):
/// what the real protocol code runs on.
pub struct SimSystem<R: Runtime> {
    pub(crate) os: SimOs<R>,
    pub(crate) pid: Pid,
    /// `None`: shared by the process's threads; each call is made as the thread the calling
    /// runtime thread is bound to ([`SimOs::bind`]).
    pub(crate) tid: Option<Tid>,
    /// Which of the process's two held sets this thread's copy of the crate uses.
    pub(crate) copy: u8,
    pub(crate) incarnation: u32,
    /// Constant observations not yet logged, per thread; see [`SimSystem::constant_step`].
    pub(crate) pending: Arc<std::sync::Mutex<BTreeMap<Tid, Vec<Call>>>>,
}

impl<R: Runtime> Clone for SimSystem<R> {
    fn clone(&self) -> Self {
        SimSystem {
            os: self.os.clone(),
            pid: self.pid,
            tid: self.tid,
            copy: self.copy,
            incarnation: self.incarnation,
            pending: Arc::clone(&self.pending),
        }
    }
}

impl<R: Runtime> fmt::Debug for SimSystem<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tid = self.tid.map_or_else(|| "*".to_owned(), |t| t.to_string());
        write!(
            f,
            "SimSystem<{}>(p{}.t{tid} copy {} incarnation {})",
            R::NAME,
            self.pid,
            self.copy,
            self.incarnation
        )
    }
}

fn dead_error(pid: Pid) -> io::Error {
    io::Error::other(format!("simulated process {pid} has crashed"))
}

fn fs_error(e: FsError) -> io::Error {
    match e {
        FsError::NotFound => io::Error::from_raw_os_error(libc::ENOENT),
        FsError::AlreadyExists => io::Error::from_raw_os_error(libc::EEXIST),
    }
}

fn bad_desc() -> io::Error {
    io::Error::from_raw_os_error(libc::EBADF)
}

fn unsimulated(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}: only {} is simulated",
            path.display(),
            lock_path().display()
        ),
    )
}

fn dir_meta() -> FileMeta {
    FileMeta {
        id: FileId {
            dev: SIM_DEV,
            ino: 2,
        },
        kind: EntryKind::Directory,
        nlink: 2,
        len: 0,
    }
}

fn lock_meta(st: DescStat) -> FileMeta {
    FileMeta {
        id: file_id(st.inode),
        kind: EntryKind::Regular,
        nlink: u64::from(st.nlink),
        // The model knows "empty or written to"; a written file reports one byte.
        len: u64::from(st.written),
    }
}

/// The canonical form of a simulated directory spelling: [`LOCK_DIR`] itself, or
/// [`LOCK_LINK`], a symlink to it.
fn resolve(dir: &Path) -> Option<PathBuf> {
    (dir == Path::new(LOCK_DIR) || dir == Path::new(LOCK_LINK)).then(|| PathBuf::from(LOCK_DIR))
}

impl<R: Runtime> SimSystem<R> {
    /// The simulated process.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The simulated thread making the current call: this system's own, or (shared by the
    /// process's threads) the one the calling runtime thread is bound to.
    pub fn tid(&self) -> Tid {
        match self.tid {
            Some(tid) => tid,
            None => {
                let (pid, tid) = self.os.bound();
                assert_eq!(
                    pid, self.pid,
                    "a thread of p{pid} called p{}'s system",
                    self.pid
                );
                tid
            }
        }
    }

    /// The simulated OS.
    pub fn sim(&self) -> &SimOs<R> {
        &self.os
    }

    fn actor(&self) -> Actor {
        Actor::Thread {
            pid: self.pid,
            tid: self.tid(),
        }
    }

    fn desc(&self) -> Desc {
        Desc {
            pid: self.pid,
            slot: self.tid(),
        }
    }

    fn take_pending(&self) -> Vec<Call> {
        let tid = self.tid();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&tid)
            .unwrap_or_default()
    }

    /// One step: if our incarnation is dead, record `Dead` and return `dead`; otherwise run
    /// `f` on the world, record its outcome, and return its result.
    fn step<T>(
        &self,
        call: Call,
        dead: impl FnOnce() -> T,
        f: impl FnOnce(&mut World) -> (Outcome, T),
    ) -> T {
        let actor = self.actor();
        let pending = self.take_pending();
        self.os.turn(actor, |w| {
            for call in pending {
                w.record(actor, call, Outcome::Done);
            }
            if !w.alive(self.pid, self.incarnation) {
                w.record(actor, call, Outcome::Dead);
                return dead();
            }
            let (outcome, value) = f(w);
            w.record(actor, call, outcome);
            value
        })
    }

    /// A constant observation (`create_dir_all`, `canonicalize_dir` of the one simulated
    /// directory): it reads nothing shared, so it commutes with every step and needs no
    /// scheduling point of its own. It is logged just before this thread's next step, which is
    /// a valid linearization. (Taking the mutex for it would multiply loom's executions by the
    /// extra interleavings for nothing: 2 threads × 1 round took 1,035,836 loom executions
    /// with it, 42,196 without.)
    fn constant_step<T>(&self, call: Call, value: T) -> T {
        let tid = self.tid();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(tid)
            .or_default()
            .push(call);
        value
    }

    /// A blocking call: attempts `attempt` (one world step each: `None` = cannot complete
    /// yet, nothing recorded) until it completes, yielding between attempts. The attempt that
    /// completes records `call` with its outcome. A thread of a dead incarnation stops
    /// waiting: `Dead`.
    fn wait_step<T>(
        &self,
        call: Call,
        attempt: impl Fn(&mut World) -> Option<(Outcome, io::Result<T>)>,
    ) -> io::Result<T> {
        let actor = self.actor();
        let pending = self.take_pending();
        let mut pending = Some(pending);
        loop {
            let done = self.os.turn(actor, |w| {
                for call in pending.take().unwrap_or_default() {
                    w.record(actor, call, Outcome::Done);
                }
                if !w.alive(self.pid, self.incarnation) {
                    w.record(actor, call, Outcome::Dead);
                    return Some(Err(dead_error(self.pid)));
                }
                let Some((outcome, value)) = attempt(w) else {
                    w.retries += 1;
                    return None;
                };
                w.record(actor, call, outcome);
                Some(value)
            });
            if let Some(value) = done {
                return value;
            }
            R::yield_now();
        }
    }

    fn io_step<T>(
        &self,
        call: Call,
        f: impl FnOnce(&mut World) -> (Outcome, io::Result<T>),
    ) -> io::Result<T> {
        let pid = self.pid;
        self.step(call, || Err(dead_error(pid)), f)
    }

    // ---- harness events: each is one step, recorded like a call ----

    /// The test program saw its obtain return. Returns a [`Violation`] if the harness now
    /// counts two live writers (and no unpreventable fault has happened).
    pub fn note_obtained(&self, ok: bool) -> Option<Violation> {
        self.note_obtained_inner(ok, None)
    }

    /// Like `note_obtained(false)`, and keeps `message` (the obtain's error, e.g. SimpleFs's
    /// "held" error naming the holder) for [`SimOs::obtain_errors`]. Same step, no extra
    /// scheduling point.
    pub fn note_obtain_failed(&self, message: String) -> Option<Violation> {
        self.note_obtained_inner(false, Some(message))
    }

    fn note_obtained_inner(&self, ok: bool, message: Option<String>) -> Option<Violation> {
        let me = (self.pid, self.tid());
        let incarnation = self.incarnation;
        self.step(
            Call::Obtained { ok },
            || None,
            |w| {
                if ok {
                    w.writers.insert(me, Writer { incarnation });
                }
                if let Some(message) = message {
                    // `step` records this step right after `f`: its index is the log length.
                    let at = w.log.len();
                    w.obtain_errors.insert(at, message);
                }
                let live = w.live_writers();
                let violation = (live.len() > 1 && !w.unpreventable_fault).then(|| {
                    let mut trace = w.log.clone();
                    trace.push(Step {
                        actor: Actor::Thread {
                            pid: me.0,
                            tid: me.1,
                        },
                        call: Call::Obtained { ok },
                        outcome: Outcome::Done,
                    });
                    let names: Vec<String> =
                        live.iter().map(|(p, t)| format!("p{p}.t{t}")).collect();
                    Violation {
                        message: format!(
                            "at most one writer: {} hold the lock at once (harness count)",
                            names.join(" and ")
                        ),
                        trace,
                    }
                });
                (Outcome::Done, violation)
            },
        )
    }

    /// The test program saw `ensure_valid` return.
    pub fn note_validated(&self, ok: bool) {
        self.step(Call::Validated { ok }, || (), |_| (Outcome::Done, ()));
    }

    /// The test program writes (after a successful `ensure_valid`).
    pub fn note_write(&self) {
        self.step(Call::Write, || (), |_| (Outcome::Done, ()));
    }

    /// The test program's release (`close`) returned (`ok`: `Ok(())`).
    pub fn note_closed(&self, ok: bool) {
        self.step(Call::Closed { ok }, || (), |_| (Outcome::Done, ()));
    }

    /// The test program is about to release: it is no longer a writer.
    pub fn note_release(&self) {
        let me = (self.pid, self.tid());
        self.step(
            Call::Release,
            || (),
            |w| {
                w.writers.remove(&me);
                (Outcome::Done, ())
            },
        );
    }
}

impl<R: Runtime> System for SimSystem<R> {
    type File = SimFile;

    fn held_insert(&self, path: &Path) -> bool {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.step(
            Call::HeldInsert,
            || false,
            |w| {
                let added = w.procs[usize::from(pid)].held[copy].insert(path.to_path_buf());
                (Outcome::Bool(added), added)
            },
        )
    }

    /// Waits (retrying, see the module docs) until `path` is not in this thread's held set,
    /// then adds it: one step, recorded when it returns.
    fn held_insert_wait(&self, path: &Path) -> io::Result<()> {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.wait_step(Call::HeldInsertWait, |w| {
            let held = &mut w.procs[usize::from(pid)].held[copy];
            held.insert(path.to_path_buf())
                .then_some((Outcome::Done, Ok(())))
        })
    }

    fn held_remove(&self, path: &Path) -> bool {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.step(
            Call::HeldRemove,
            || false,
            |w| {
                let removed = w.procs[usize::from(pid)].held[copy].remove(path);
                (Outcome::Bool(removed), removed)
            },
        )
    }

    fn held_contains(&self, path: &Path) -> bool {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.step(
            Call::HeldContains,
            || false,
            |w| {
                let there = w.procs[usize::from(pid)].held[copy].contains(path);
                (Outcome::Bool(there), there)
            },
        )
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        if Path::new(LOCK_DIR).starts_with(dir) || dir == Path::new(LOCK_LINK) {
            self.constant_step(Call::CreateDirAll, Ok(()))
        } else {
            Err(unsimulated(dir))
        }
    }

    /// [`LOCK_DIR`] is canonical; [`LOCK_LINK`] is a symlink to it.
    fn canonicalize_dir(&self, dir: &Path) -> io::Result<PathBuf> {
        match resolve(dir) {
            Some(canonical) => self.constant_step(Call::CanonicalizeDir, Ok(canonical)),
            None => Err(unsimulated(dir)),
        }
    }

    fn stat(&self, path: &Path) -> io::Result<Option<FileMeta>> {
        self.io_step(Call::Stat, |w| {
            if path == lock_path() {
                let inode = w.os.path_inode();
                let meta = inode.map(|inode| {
                    lock_meta(DescStat {
                        inode,
                        nlink: 1,
                        written: w.os.is_written(inode),
                    })
                });
                (Outcome::Stat(inode), Ok(meta))
            } else if Path::new(LOCK_DIR).starts_with(path) {
                (Outcome::Stat(None), Ok(Some(dir_meta())))
            } else {
                (Outcome::Stat(None), Err(unsimulated(path)))
            }
        })
    }

    /// `mode` is ignored: the model has no permission bits.
    fn open_lock_file(&self, path: &Path, _mode: u32) -> io::Result<(SimFile, FileMeta)> {
        let desc = self.desc();
        self.io_step(Call::Open, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            if w.os.desc_inode(desc).is_some() {
                // One descriptor per simulated thread: the model names descriptors by thread.
                return (
                    Outcome::BadDesc,
                    Err(io::Error::from_raw_os_error(libc::EMFILE)),
                );
            }
            match w.os.open(desc, OpenMode::Create) {
                Ok(inode) => {
                    let st = w.os.fstat(desc).expect("just opened");
                    (
                        Outcome::Opened(inode),
                        Ok((SimFile { desc }, lock_meta(st))),
                    )
                }
                Err(e) => (Outcome::Failed(e), Err(fs_error(e))),
            }
        })
    }

    /// `mode` is ignored: the model has no permission bits.
    fn create_new_file(&self, path: &Path, contents: &[u8], _mode: u32) -> io::Result<FileMeta> {
        self.io_step(Call::CreateExclusive, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            match w.os.create_exclusive() {
                Ok(inode) => {
                    // Created and written in one step. The real file is written just after
                    // the exclusive create; only another process's failed obtain could read
                    // it in between (and would describe the holder as unknown), while the
                    // creator reads its record only after `create_new_file` returned. A crash
                    // between the two (an empty stale file) is not simulated.
                    w.contents.insert(inode, contents.to_vec());
                    (
                        Outcome::Opened(inode),
                        Ok(lock_meta(DescStat {
                            inode,
                            nlink: 1,
                            written: false,
                        })),
                    )
                }
                Err(e) => (Outcome::Failed(e), Err(fs_error(e))),
            }
        })
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        // The contents `create_new_file` wrote to the inode at the path (empty for a file it
        // did not create). The outcome records the inode read: contents are per inode, so the
        // replayer knows what was read from which file.
        self.io_step(Call::ReadFile, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            match w.os.path_inode() {
                Some(inode) => (
                    Outcome::Stat(Some(inode)),
                    Ok(w.contents.get(&inode).cloned().unwrap_or_default()),
                ),
                None => (
                    Outcome::Failed(FsError::NotFound),
                    Err(fs_error(FsError::NotFound)),
                ),
            }
        })
    }

    fn unlink(&self, path: &Path) -> io::Result<()> {
        self.io_step(Call::Unlink, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            match w.os.unlink() {
                Ok(()) => {
                    w.forget_dead_contents();
                    (Outcome::Done, Ok(()))
                }
                Err(e) => (Outcome::Failed(e), Err(fs_error(e))),
            }
        })
    }

    fn try_lock(&self, file: &SimFile, kind: OsLockKind) -> io::Result<TryLock> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::TryLock(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            if let Some(Injection::Lock(errno)) = w.take_armed(|j| matches!(j, Injection::Lock(_)))
            {
                // No lock is taken: the model's `LockFails`.
                return (
                    Outcome::Errno(errno),
                    Err(io::Error::from_raw_os_error(errno)),
                );
            }
            let r = w.os.try_lock(desc, kind);
            let out = match r {
                TryLockResult::Acquired => TryLock::Acquired,
                TryLockResult::WouldBlock => TryLock::WouldBlock,
            };
            (Outcome::TryLock(r), Ok(out))
        })
    }

    /// Waits (retrying, see the module docs) until no other owner holds a conflicting lock,
    /// then takes it: one step, recorded when it returns. An armed lock error ends the wait
    /// with that error (as `EDEADLK` or `ENOLCK` would).
    fn lock_blocking(&self, file: &SimFile, kind: OsLockKind) -> io::Result<()> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.wait_step(Call::LockBlocking(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return Some((Outcome::BadDesc, Err(bad_desc())));
            }
            if let Some(Injection::Lock(errno)) = w.take_armed(|j| matches!(j, Injection::Lock(_)))
            {
                return Some((
                    Outcome::Errno(errno),
                    Err(io::Error::from_raw_os_error(errno)),
                ));
            }
            if !w.os.lock_would_succeed(desc, kind) {
                return None;
            }
            let r = w.os.try_lock(desc, kind);
            debug_assert_eq!(r, TryLockResult::Acquired);
            Some((Outcome::Done, Ok(())))
        })
    }

    /// An armed unlock error: `EIO`, and the lock stays (the model's `UnlockFails`).
    fn unlock(&self, file: &SimFile, kind: OsLockKind) -> io::Result<()> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::Unlock(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            if w.take_armed(|j| j == Injection::Unlock).is_some() {
                return (
                    Outcome::Errno(libc::EIO),
                    Err(io::Error::from_raw_os_error(libc::EIO)),
                );
            }
            w.os.unlock(desc, kind);
            (Outcome::Done, Ok(()))
        })
    }

    fn probe(&self, file: &SimFile, kind: OsLockKind) -> io::Result<Probe> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::Probe(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            // `flock` locks cannot be probed: the real system answers `Unknown` without a
            // syscall, also on NFS where the lock underneath is a POSIX one.
            let p = if kind == LockKind::Flock || kind == LockKind::NfsFlock {
                ProbeResult::Unknown
            } else {
                w.os.probe(desc, kind)
            };
            let out = match p {
                ProbeResult::NoConflict => Probe::NoConflict,
                ProbeResult::Conflict { pid } => Probe::Conflict {
                    pid: pid.map(i32::from),
                },
                ProbeResult::Unknown => Probe::Unknown,
            };
            (Outcome::Probe(p), Ok(out))
        })
    }

    fn fstat(&self, file: &SimFile) -> io::Result<FileMeta> {
        let desc = file.desc;
        self.io_step(Call::Fstat, |w| match w.os.fstat(desc) {
            Some(st) => (Outcome::Fstat(st), Ok(lock_meta(st))),
            None => (Outcome::BadDesc, Err(bad_desc())),
        })
    }

    /// An armed close error: `EIO`, and the descriptor is gone anyway, with its locks
    /// (close(2); the model's `CloseFails`).
    fn close(&self, file: SimFile) -> io::Result<()> {
        let desc = file.desc;
        self.io_step(Call::Close, |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            w.os.close(desc);
            w.forget_dead_contents();
            if w.take_armed(|j| j == Injection::Close).is_some() {
                return (
                    Outcome::Errno(libc::EIO),
                    Err(io::Error::from_raw_os_error(libc::EIO)),
                );
            }
            (Outcome::Done, Ok(()))
        })
    }

    /// The simulated pid (the model's `Pid`): what SimpleFs writes into its holder record.
    fn process_id(&self) -> i32 {
        i32::from(self.pid)
    }

    /// Every simulated process runs on one host, [`SIM_HOST`].
    fn host_name(&self) -> Option<String> {
        Some(SIM_HOST.to_owned())
    }

    /// Whether simulated process `pid`'s current incarnation is alive (a restarted process is
    /// alive again: its pid was "reused"). A read of the world, not recorded: it changes
    /// nothing and is linearized at its mutex acquisition; only SimpleFs's "held" message
    /// uses it.
    fn pid_alive(&self, pid: i32) -> Option<bool> {
        let pid = u8::try_from(pid).ok()?;
        Some(
            self.os
                .with(|w| w.procs.get(usize::from(pid)).is_some_and(|p| p.alive)),
        )
    }
}
