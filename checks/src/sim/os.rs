//! [`SimOs`]: `lockwright::sys::System` on the model's OS semantics (`lockwright_model::os`),
//! behind one mutex of a [`Runtime`] (loom, shuttle or std), with a linearized recording.
//!
//! - One source of truth: every file and lock call is answered by `lockwright_model::file::kernel::Os`,
//!   the very module the Stateright model uses, so the simulation cannot drift from the model.
//! - One call, one step: each [`System`] method takes the world mutex exactly once, does its
//!   whole effect, appends one [`Step`] to the log, and releases it. The mutex acquisition is the
//!   scheduling point where loom or shuttle may switch threads; the log order is therefore the
//!   linearization order.
//! - One held set per simulated process, stored in the world (not in a `static`), so several
//!   simulated processes live inside one test.
//! - Threads are named explicitly, not by thread-locals (loom and shuttle threads are not OS
//!   threads): each simulated thread gets its own [`SimSystem`] value `{ os, pid, tid,
//!   incarnation }`, and its descriptors are `Desc { pid, slot: tid }`, as in the model.
//! - Crash: [`SimOs::crash`] calls `Os::crash(pid)` (descriptors and OS locks go) and clears the
//!   held set. The simulation of "its threads stop": every later call by a thread of the dead
//!   incarnation fails with an `io::Error` (held-set calls answer `false`) WITHOUT effect, and is
//!   recorded with [`Outcome::Dead`]. [`SimOs::restart`] starts a new incarnation; threads bound
//!   to the old one stay dead.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lockwright::sys::{EntryKind, FileId, FileMeta, OsLockKind, Probe, System, TryLock};
use lockwright_model::file::kernel::{
    Desc, DescStat, FsError, Inode, LockKind, OpenMode, Os, Pid, ProbeResult, TryLockResult,
};

use super::prims::{Runtime, Std};

/// A thread index inside a simulated process (the model's `Tid`; also the descriptor slot).
pub type Tid = u8;

/// The lock directory every simulated run uses.
pub const LOCK_DIR: &str = "/sim/index";
/// The lock file name every simulated run uses.
pub const LOCK_NAME: &str = "write.lock";
/// The host name every simulated process reports.
pub const SIM_HOST: &str = "sim";
/// `st_dev` of the simulated filesystem.
pub const SIM_DEV: u64 = 0x51;

/// The lock file's full path.
pub fn lock_path() -> PathBuf {
    Path::new(LOCK_DIR).join(LOCK_NAME)
}

/// The `FileId` the simulation reports for model inode `inode`.
pub fn file_id(inode: Inode) -> FileId {
    FileId {
        dev: SIM_DEV,
        ino: 1000 + u64::from(inode),
    }
}

/// Who made a recorded call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Actor {
    /// Thread `tid` of simulated process `pid`.
    Thread { pid: Pid, tid: Tid },
    /// The environment: injected faults.
    Env,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Thread { pid, tid } => write!(f, "p{pid}.t{tid}"),
            Actor::Env => f.write_str("env"),
        }
    }
}

/// A recorded call. Observations (`CreateDirAll`, `CanonicalizeDir`, `Stat`, `HeldContains`,
/// `Fstat`, `Probe`, `ReadFile`) change nothing; mutating calls are named after the model
/// actions they refine; faults are the environment's; harness events mark what the test
/// program saw (an obtain returning, a write, the start of a release).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    // observations
    CreateDirAll,
    CanonicalizeDir,
    Stat,
    HeldContains,
    Fstat,
    Probe(LockKind),
    ReadFile,
    // mutating system calls
    HeldInsert,
    HeldRemove,
    Open,
    CreateExclusive,
    TryLock(LockKind),
    Unlock(LockKind),
    Close,
    Unlink,
    // injected faults (actor: env)
    Crash(Pid),
    Restart(Pid),
    UnlinkLockFile,
    ReplaceLockFile,
    ForeignOpenClose(Pid),
    // harness events (no OS effect)
    /// `obtain` returned (`ok`: a lock).
    Obtained {
        ok: bool,
    },
    /// `ensure_valid` returned.
    Validated {
        ok: bool,
    },
    /// The writer wrote (after a successful `ensure_valid`).
    Write,
    /// The writer is about to release (it stops writing here).
    Release,
    /// The release (`close`) returned (`ok`: `Ok(())`). Recorded by the SimpleFs runner only
    /// ([`super::scenario::run_simple`]), where a refused release is an outcome the model
    /// names (`ReleaseRefused`).
    Closed {
        ok: bool,
    },
}

impl Call {
    /// Whether this call is an observation (checked against the model state, no transition).
    pub fn is_observation(self) -> bool {
        matches!(
            self,
            Call::CreateDirAll
                | Call::CanonicalizeDir
                | Call::Stat
                | Call::HeldContains
                | Call::Fstat
                | Call::Probe(_)
                | Call::ReadFile
        )
    }

    /// Whether this is a harness event.
    pub fn is_harness(self) -> bool {
        matches!(
            self,
            Call::Obtained { .. }
                | Call::Validated { .. }
                | Call::Write
                | Call::Release
                | Call::Closed { .. }
        )
    }
}

/// What a recorded call returned, in the model's terms (model inodes, not `FileId`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `Ok(())` (or a harness event / fault).
    Done,
    /// A held-set answer.
    Bool(bool),
    /// `stat(lock path)`: the inode there, if any.
    Stat(Option<Inode>),
    /// `open_lock_file`: the inode opened.
    Opened(Inode),
    /// `fstat`.
    Fstat(DescStat),
    /// `try_lock`.
    TryLock(TryLockResult),
    /// `probe`.
    Probe(ProbeResult),
    /// An OS error.
    Failed(FsError),
    /// `EBADF`-like: the descriptor was not open (a harness or protocol bug, never expected).
    BadDesc,
    /// The caller's process incarnation is dead: the call had no effect.
    Dead,
}

/// One recorded step, in linearization order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub actor: Actor,
    pub call: Call,
    pub outcome: Outcome,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?} -> {:?}", self.actor, self.call, self.outcome)
    }
}

/// Formats a recording, one numbered step a line.
pub fn format_trace(steps: &[Step]) -> String {
    let mut s = String::new();
    for (i, step) in steps.iter().enumerate() {
        s.push_str(&format!("  #{i:<3} {step}\n"));
    }
    s
}

#[derive(Clone, Debug, Default)]
struct Proc {
    incarnation: u32,
    alive: bool,
    held: BTreeSet<PathBuf>,
}

/// A thread the harness counts as a writer: its obtain returned `Ok` and it has not started
/// to release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Writer {
    incarnation: u32,
}

/// Everything behind the one mutex.
#[derive(Debug)]
struct World {
    os: Os,
    procs: Vec<Proc>,
    log: Vec<Step>,
    writers: BTreeMap<(Pid, Tid), Writer>,
    /// Deterministic replay (std threads only): the recording to follow. A thread may take
    /// its next step only when the next recorded step is its own; once the recording is
    /// exhausted, or the replay departs from it, everyone runs freely.
    script: Option<Vec<Step>>,
    /// Set once a fault that a correct protocol cannot prevent has happened (the lock file
    /// unlinked or replaced; a POSIX lock dropped by foreign code): from then on two writers
    /// are possible by design and only `ensure_valid` can tell. The direct "at most one
    /// writer" check stands down; the model's properties still apply to every step.
    unpreventable_fault: bool,
    /// The contents `create_new_file` wrote, per inode (SimpleFs holder records). The model's
    /// `Os` has no contents; this side table lives next to it under the same mutex and drops
    /// an inode's entry once the inode is gone (no path, no descriptor). An inode without an
    /// entry (opened with `O_CREAT`, or renamed in by a fault) reads as empty.
    contents: BTreeMap<Inode, Vec<u8>>,
    /// The error message of every failed obtain the runner reported with
    /// [`SimSystem::note_obtain_failed`], keyed by the index of its `Obtained` step.
    obtain_errors: BTreeMap<usize, String>,
}

impl World {
    /// Drops the contents of inodes that are gone (neither at the path nor open).
    fn forget_dead_contents(&mut self) {
        if self.contents.is_empty() {
            return;
        }
        let live: BTreeSet<Inode> = self
            .os
            .path_inode()
            .into_iter()
            .chain(self.os.descs().map(|(_, i)| i))
            .collect();
        self.contents.retain(|i, _| live.contains(i));
    }

    fn alive(&self, pid: Pid, incarnation: u32) -> bool {
        let p = &self.procs[usize::from(pid)];
        p.alive && p.incarnation == incarnation
    }

    fn record(&mut self, actor: Actor, call: Call, outcome: Outcome) {
        let step = Step {
            actor,
            call,
            outcome,
        };
        if let Some(script) = &self.script {
            if script.get(self.log.len()) != Some(&step) {
                self.script = None; // departed from (or ran past) the recording: free-run
            }
        }
        self.log.push(step);
    }

    fn my_turn(&self, actor: Actor) -> bool {
        match &self.script {
            None => true,
            Some(s) => s.get(self.log.len()).is_none_or(|next| next.actor == actor),
        }
    }

    fn live_writers(&self) -> Vec<(Pid, Tid)> {
        self.writers
            .iter()
            .filter(|(&(pid, _), w)| self.alive(pid, w.incarnation))
            .map(|(&k, _)| k)
            .collect()
    }
}

/// The simulated OS shared by all simulated processes of one run. Cheap to clone.
pub struct SimOs<R: Runtime> {
    world: Arc<R::Mutex<World>>,
    /// How an `OsLockKind::Flock` call is executed: `LockKind::Flock` on a local filesystem,
    /// `LockKind::NfsFlock` to simulate an NFS mount.
    flock_as: LockKind,
}

impl<R: Runtime> Clone for SimOs<R> {
    fn clone(&self) -> Self {
        SimOs {
            world: Arc::clone(&self.world),
            flock_as: self.flock_as,
        }
    }
}

impl<R: Runtime> fmt::Debug for SimOs<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SimOs<{}>", R::NAME)
    }
}

/// "at most one writer" failed in the harness: the message and the recording so far.
#[derive(Clone, Debug)]
pub struct Violation {
    pub message: String,
    pub trace: Vec<Step>,
}

impl<R: Runtime> SimOs<R> {
    /// A fresh world with `processes` simulated processes (all alive, empty held sets), no
    /// lock file yet, on a local filesystem.
    pub fn new(processes: u8) -> Self {
        Self::with_flock_as(processes, LockKind::Flock)
    }

    /// Like [`SimOs::new`]; `flock_as` = `LockKind::NfsFlock` simulates an NFS mount, where
    /// Linux emulates `flock` with POSIX locks.
    pub fn with_flock_as(processes: u8, flock_as: LockKind) -> Self {
        let procs = (0..processes)
            .map(|_| Proc {
                incarnation: 0,
                alive: true,
                held: BTreeSet::new(),
            })
            .collect();
        let world = World {
            os: Os::new(),
            procs,
            log: Vec::new(),
            writers: BTreeMap::new(),
            script: None,
            unpreventable_fault: false,
            contents: BTreeMap::new(),
            obtain_errors: BTreeMap::new(),
        };
        SimOs {
            world: Arc::new(R::mutex(world)),
            flock_as,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        R::with(&self.world, f)
    }

    /// Runs `f` as `actor`'s next step: at once, unless a replay script says another actor's
    /// step comes first (then wait for it; scripts exist only on [`Std`] worlds).
    fn turn<T>(&self, actor: Actor, f: impl FnOnce(&mut World) -> T) -> T {
        let mut f = Some(f);
        loop {
            let done = R::with(&self.world, |w| {
                w.my_turn(actor).then(|| (f.take().expect("runs once"))(w))
            });
            if let Some(value) = done {
                return value;
            }
            std::thread::yield_now();
        }
    }

    /// The model lock kind an `OsLockKind` call takes on this simulated filesystem.
    pub fn lock_kind(&self, kind: OsLockKind) -> LockKind {
        match kind {
            OsLockKind::Ofd => LockKind::Ofd,
            OsLockKind::Posix => LockKind::Posix,
            OsLockKind::Flock => self.flock_as,
        }
    }

    /// The `System` of thread `tid` of process `pid`, bound to the process's current
    /// incarnation (a thread of a crashed incarnation stays dead after a restart).
    pub fn thread(&self, pid: Pid, tid: Tid) -> SimSystem<R> {
        let incarnation = self.with(|w| w.procs[usize::from(pid)].incarnation);
        SimSystem {
            os: self.clone(),
            pid,
            tid,
            incarnation,
            pending: Arc::default(),
        }
    }

    /// The recording so far.
    pub fn trace(&self) -> Vec<Step> {
        self.with(|w| w.log.clone())
    }

    /// The error messages of failed obtains reported with
    /// [`SimSystem::note_obtain_failed`], keyed by the index of their `Obtained` step in the
    /// recording.
    pub fn obtain_errors(&self) -> BTreeMap<usize, String> {
        self.with(|w| w.obtain_errors.clone())
    }

    /// The contents of the file at the lock path (`None`: no file; empty if nothing was
    /// written), for assertions.
    pub fn lock_file_contents(&self) -> Option<Vec<u8>> {
        self.with(|w| {
            w.os.path_inode()
                .map(|i| w.contents.get(&i).cloned().unwrap_or_default())
        })
    }

    /// A copy of the OS state (for assertions at the end of a run).
    pub fn os_snapshot(&self) -> Os {
        self.with(|w| w.os.clone())
    }

    /// Whether a process's current incarnation is alive.
    pub fn is_alive(&self, pid: Pid) -> bool {
        self.with(|w| w.procs[usize::from(pid)].alive)
    }

    // ---- injected faults: each is one step ----

    /// Process `pid` dies (SIGKILL): `Os::crash`, its held set is cleared, its threads stop.
    pub fn crash(&self, pid: Pid) {
        self.turn(Actor::Env, |w| {
            w.os.crash(pid);
            w.forget_dead_contents();
            let p = &mut w.procs[usize::from(pid)];
            p.alive = false;
            p.held.clear();
            w.record(Actor::Env, Call::Crash(pid), Outcome::Done);
        });
    }

    /// Process `pid` starts again (a new incarnation, empty held set). A no-op step if it is
    /// alive.
    pub fn restart(&self, pid: Pid) {
        self.turn(Actor::Env, |w| {
            let p = &mut w.procs[usize::from(pid)];
            if !p.alive {
                p.alive = true;
                p.incarnation += 1;
                p.held.clear();
            }
            w.record(Actor::Env, Call::Restart(pid), Outcome::Done);
        });
    }

    /// Someone deletes the lock file by hand.
    pub fn unlink_lock_file(&self) {
        self.turn(Actor::Env, |w| {
            let outcome = match w.os.unlink() {
                Ok(()) => {
                    w.unpreventable_fault = true;
                    w.forget_dead_contents();
                    Outcome::Done
                }
                Err(e) => Outcome::Failed(e),
            };
            w.record(Actor::Env, Call::UnlinkLockFile, outcome);
        });
    }

    /// A backup/restore tool renames a fresh file over the lock file.
    pub fn replace_lock_file(&self) {
        self.turn(Actor::Env, |w| {
            w.os.replace();
            w.forget_dead_contents();
            w.unpreventable_fault = true;
            w.record(Actor::Env, Call::ReplaceLockFile, Outcome::Done);
        });
    }

    /// Foreign code inside process `pid` opens and closes the lock file (drops a POSIX lock).
    /// A no-op step if the process is dead.
    pub fn foreign_open_close(&self, pid: Pid) {
        self.turn(Actor::Env, |w| {
            if !w.procs[usize::from(pid)].alive {
                w.record(Actor::Env, Call::ForeignOpenClose(pid), Outcome::Dead);
                return;
            }
            let before: Vec<_> = w.os.locks().collect();
            w.os.foreign_open_close(pid);
            w.forget_dead_contents();
            if w.os.locks().count() != before.len() {
                w.unpreventable_fault = true;
            }
            w.record(Actor::Env, Call::ForeignOpenClose(pid), Outcome::Done);
        });
    }
}

impl SimOs<Std> {
    /// A world that replays `script` deterministically on std threads: each thread's calls
    /// wait until the recording says it is that thread's turn. With the same real code and
    /// the same scenario, the run reproduces the recording step for step (until it departs
    /// from it, if the code changed).
    pub fn scripted(processes: u8, flock_as: LockKind, script: Vec<Step>) -> Self {
        let sim = Self::with_flock_as(processes, flock_as);
        sim.with(|w| w.script = Some(script));
        sim
    }
}

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

/// One simulated thread's view of the system: what the real protocol code runs on.
pub struct SimSystem<R: Runtime> {
    os: SimOs<R>,
    pid: Pid,
    tid: Tid,
    incarnation: u32,
    /// Constant observations not yet logged; see [`SimSystem::constant_step`].
    pending: Arc<std::sync::Mutex<Vec<Call>>>,
}

impl<R: Runtime> Clone for SimSystem<R> {
    fn clone(&self) -> Self {
        SimSystem {
            os: self.os.clone(),
            pid: self.pid,
            tid: self.tid,
            incarnation: self.incarnation,
            pending: Arc::clone(&self.pending),
        }
    }
}

impl<R: Runtime> fmt::Debug for SimSystem<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SimSystem<{}>(p{}.t{} incarnation {})",
            R::NAME,
            self.pid,
            self.tid,
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
        len: 0,
    }
}

impl<R: Runtime> SimSystem<R> {
    /// The simulated process.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The simulated thread.
    pub fn tid(&self) -> Tid {
        self.tid
    }

    /// The simulated OS.
    pub fn sim(&self) -> &SimOs<R> {
        &self.os
    }

    fn actor(&self) -> Actor {
        Actor::Thread {
            pid: self.pid,
            tid: self.tid,
        }
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
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
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
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(call);
        value
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
        let me = (self.pid, self.tid);
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
        let me = (self.pid, self.tid);
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
        let pid = self.pid;
        self.step(
            Call::HeldInsert,
            || false,
            |w| {
                let added = w.procs[usize::from(pid)].held.insert(path.to_path_buf());
                (Outcome::Bool(added), added)
            },
        )
    }

    fn held_remove(&self, path: &Path) -> bool {
        let pid = self.pid;
        self.step(
            Call::HeldRemove,
            || false,
            |w| {
                let removed = w.procs[usize::from(pid)].held.remove(path);
                (Outcome::Bool(removed), removed)
            },
        )
    }

    fn held_contains(&self, path: &Path) -> bool {
        let pid = self.pid;
        self.step(
            Call::HeldContains,
            || false,
            |w| {
                let there = w.procs[usize::from(pid)].held.contains(path);
                (Outcome::Bool(there), there)
            },
        )
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        if Path::new(LOCK_DIR).starts_with(dir) {
            self.constant_step(Call::CreateDirAll, Ok(()))
        } else {
            Err(unsimulated(dir))
        }
    }

    fn canonicalize_dir(&self, dir: &Path) -> io::Result<PathBuf> {
        if dir == Path::new(LOCK_DIR) {
            self.constant_step(Call::CanonicalizeDir, Ok(dir.to_path_buf()))
        } else {
            Err(unsimulated(dir))
        }
    }

    fn stat(&self, path: &Path) -> io::Result<Option<FileMeta>> {
        self.io_step(Call::Stat, |w| {
            if path == lock_path() {
                let inode = w.os.path_inode();
                let meta = inode.map(|inode| lock_meta(DescStat { inode, nlink: 1 }));
                (Outcome::Stat(inode), Ok(meta))
            } else if Path::new(LOCK_DIR).starts_with(path) {
                (Outcome::Stat(None), Ok(Some(dir_meta())))
            } else {
                (Outcome::Stat(None), Err(unsimulated(path)))
            }
        })
    }

    fn open_lock_file(&self, path: &Path) -> io::Result<(SimFile, FileMeta)> {
        let desc = Desc {
            pid: self.pid,
            slot: self.tid,
        };
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

    fn create_new_file(&self, path: &Path, contents: &[u8]) -> io::Result<FileMeta> {
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
                        Ok(lock_meta(DescStat { inode, nlink: 1 })),
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
            let r = w.os.try_lock(desc, kind);
            let out = match r {
                TryLockResult::Acquired => TryLock::Acquired,
                TryLockResult::WouldBlock => TryLock::WouldBlock,
            };
            (Outcome::TryLock(r), Ok(out))
        })
    }

    fn unlock(&self, file: &SimFile, kind: OsLockKind) -> io::Result<()> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::Unlock(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
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

    fn close(&self, file: SimFile) -> io::Result<()> {
        let desc = file.desc;
        self.io_step(Call::Close, |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            w.os.close(desc);
            w.forget_dead_contents();
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
