//! [`SimOs`]: `lockwright::file::sys::System` on the model's OS semantics (`lockwright_model::file::kernel`),
//! behind one mutex of a [`Runtime`] (loom, shuttle or std), with a linearized recording.
//!
//! - One source of truth: every file and lock call is answered by `lockwright_model::file::kernel::Os`,
//!   the very module the Stateright model uses, so the simulation cannot drift from the model.
//! - One call, one step: each `System` method takes the world mutex exactly once, does its
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
//! - Two held sets per process: a simulated thread uses the first (copy 0) unless it plays
//!   the second copy of the crate in its process ([`SimOs::thread_in_copy`], model variant
//!   `native-two-held-sets`).
//! - Other faults, each one step with the model's semantics: [`SimOs::lose_locks`] (a lost
//!   lease: `Os::lose_locks`), [`SimOs::write_lock_file`] (`Os::write_path`), and
//!   [`SimOs::inject`], which arms an OS error for the next lock, unlock or close call.
//! - One system shared by a process's threads ([`SimOs::process`]): the calling thread is
//!   named by the runtime's thread id, registered by [`SimOs::bind`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use lockwright::file::sys::OsLockKind;
use lockwright_model::file::kernel::{Inode, LockKind, Os, Pid};

use super::record::*;
use super::system::SimSystem;
use super::Tid;
use crate::prims::{Runtime, Std};

#[derive(Clone, Debug, Default)]
pub(crate) struct Proc {
    pub(crate) incarnation: u32,
    pub(crate) alive: bool,
    /// The held sets of the two copies of the crate a process may load (copy 0 is the one
    /// every thread uses unless told otherwise).
    pub(crate) held: [BTreeSet<PathBuf>; 2],
}

/// A thread the harness counts as a writer: its obtain returned `Ok` and it has not started
/// to release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Writer {
    pub(crate) incarnation: u32,
}

/// Everything behind the one mutex.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) os: Os,
    pub(crate) procs: Vec<Proc>,
    pub(crate) log: Vec<Step>,
    pub(crate) writers: BTreeMap<(Pid, Tid), Writer>,
    /// Deterministic replay (std threads only): the recording to follow. A thread may take
    /// its next step only when the next recorded step is its own; once the recording is
    /// exhausted, or the replay departs from it, everyone runs freely.
    pub(crate) script: Option<Vec<Step>>,
    /// Set once a fault that a correct protocol cannot prevent has happened (the lock file
    /// unlinked or replaced; a POSIX lock dropped by foreign code): from then on two writers
    /// are possible by design and only `ensure_valid` can tell. The direct "at most one
    /// writer" check stands down; the model's properties still apply to every step.
    pub(crate) unpreventable_fault: bool,
    /// The contents `create_new_file` wrote, per inode (SimpleFs holder records). The model's
    /// `Os` has no contents; this side table lives next to it under the same mutex and drops
    /// an inode's entry once the inode is gone (no path, no descriptor). An inode without an
    /// entry (opened with `O_CREAT`, or renamed in by a fault) reads as empty.
    pub(crate) contents: BTreeMap<Inode, Vec<u8>>,
    /// The error message of every failed obtain the runner reported with
    /// [`SimSystem::note_obtain_failed`], keyed by the index of its `Obtained` step.
    pub(crate) obtain_errors: BTreeMap<usize, String>,
    /// OS errors armed by [`SimOs::inject`], not yet returned, oldest first.
    pub(crate) armed: Vec<Injection>,
    /// Attempts of blocking calls that could not complete yet (each a retry: not recorded in
    /// the log, which holds model steps only). For suites that must show a wait happened.
    pub(crate) retries: usize,
}

impl World {
    /// Drops the contents of inodes that are gone (neither at the path nor open).
    pub(crate) fn forget_dead_contents(&mut self) {
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

    pub(crate) fn alive(&self, pid: Pid, incarnation: u32) -> bool {
        let p = &self.procs[usize::from(pid)];
        p.alive && p.incarnation == incarnation
    }

    pub(crate) fn record(&mut self, actor: Actor, call: Call, outcome: Outcome) {
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

    pub(crate) fn my_turn(&self, actor: Actor) -> bool {
        match &self.script {
            None => true,
            Some(s) => s.get(self.log.len()).is_none_or(|next| next.actor == actor),
        }
    }

    /// Takes the oldest armed injection `want` accepts.
    pub(crate) fn take_armed(&mut self, want: impl Fn(Injection) -> bool) -> Option<Injection> {
        let i = self.armed.iter().position(|&j| want(j))?;
        Some(self.armed.remove(i))
    }

    pub(crate) fn live_writers(&self) -> Vec<(Pid, Tid)> {
        self.writers
            .iter()
            .filter(|(&(pid, _), w)| self.alive(pid, w.incarnation))
            .map(|(&k, _)| k)
            .collect()
    }
}

/// Which simulated thread each runtime thread is (for systems shared by a process's threads).
type Registry<R> = HashMap<<R as Runtime>::ThreadId, (Pid, Tid)>;

/// The simulated OS shared by all simulated processes of one run. Cheap to clone.
pub struct SimOs<R: Runtime> {
    pub(crate) world: Arc<R::Mutex<World>>,
    /// How an `OsLockKind::Flock` call is executed: `LockKind::Flock` on a local filesystem,
    /// `LockKind::NfsFlock` to simulate an NFS mount.
    pub(crate) flock_as: LockKind,
    /// Runtime thread → simulated thread. Read without the world mutex (a thread looks up
    /// only itself, registered before its first call), so it adds no scheduling point.
    pub(crate) registry: Arc<std::sync::Mutex<Registry<R>>>,
}

impl<R: Runtime> Clone for SimOs<R> {
    fn clone(&self) -> Self {
        SimOs {
            world: Arc::clone(&self.world),
            flock_as: self.flock_as,
            registry: Arc::clone(&self.registry),
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
                held: Default::default(),
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
            armed: Vec::new(),
            retries: 0,
        };
        SimOs {
            world: Arc::new(R::mutex(world)),
            flock_as,
            registry: Arc::default(),
        }
    }

    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        R::with(&self.world, f)
    }

    /// Runs `f` as `actor`'s next step: at once, unless a replay script says another actor's
    /// step comes first (then wait for it; scripts exist only on [`Std`] worlds).
    pub(crate) fn turn<T>(&self, actor: Actor, f: impl FnOnce(&mut World) -> T) -> T {
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
            other => panic!("no model lock kind for {other:?}"),
        }
    }

    /// The `System` of thread `tid` of process `pid`, bound to the process's current
    /// incarnation (a thread of a crashed incarnation stays dead after a restart).
    pub fn thread(&self, pid: Pid, tid: Tid) -> SimSystem<R> {
        self.thread_in_copy(pid, tid, 0)
    }

    /// Like [`SimOs::thread`], for a thread that runs copy `copy` (0 or 1) of the crate: its
    /// held-set calls use that copy's held set (two semver-incompatible versions of
    /// lockwright in one process, each with its own static held set).
    pub fn thread_in_copy(&self, pid: Pid, tid: Tid, copy: u8) -> SimSystem<R> {
        assert!(copy < 2, "a process has two held sets");
        let incarnation = self.with(|w| w.procs[usize::from(pid)].incarnation);
        SimSystem {
            os: self.clone(),
            pid,
            tid: Some(tid),
            copy,
            incarnation,
            pending: Arc::default(),
        }
    }

    /// One `System` for all threads of process `pid` (copy 0), bound to its current
    /// incarnation: each call is made as the simulated thread the calling runtime thread was
    /// [bound](SimOs::bind) to. A factory built on it is shared by the process's threads, as a
    /// program shares one factory, so its resolved-directory cache is shared too.
    pub fn process(&self, pid: Pid) -> SimSystem<R> {
        let incarnation = self.with(|w| w.procs[usize::from(pid)].incarnation);
        SimSystem {
            os: self.clone(),
            pid,
            tid: None,
            copy: 0,
            incarnation,
            pending: Arc::default(),
        }
    }

    /// Registers the calling runtime thread as simulated thread `(pid, tid)` (for the
    /// systems [`SimOs::process`] returns). No step.
    pub fn bind(&self, pid: Pid, tid: Tid) {
        self.registry
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(R::current(), (pid, tid));
    }

    /// The simulated thread the calling runtime thread was bound to.
    pub(crate) fn bound(&self) -> (Pid, Tid) {
        *self
            .registry
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&R::current())
            .expect("a thread calling a shared system must be bound first (SimOs::bind)")
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

    /// How many attempts of blocking calls found they had to wait (and retried).
    pub fn retries(&self) -> usize {
        self.with(|w| w.retries)
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
            p.held = Default::default();
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
                p.held = Default::default();
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

    /// Process `pid`'s locks vanish with no call of its own (`Os::lose_locks`: an NFSv4 lease
    /// lost). A no-op step if it owns none or is dead.
    pub fn lose_locks(&self, pid: Pid) {
        self.turn(Actor::Env, |w| {
            if !w.procs[usize::from(pid)].alive {
                w.record(Actor::Env, Call::LoseLock(pid), Outcome::Dead);
                return;
            }
            let lost = w.os.lose_locks(pid);
            if lost {
                w.unpreventable_fault = true;
            }
            w.record(Actor::Env, Call::LoseLock(pid), Outcome::Bool(lost));
        });
    }

    /// Someone writes into the lock file (`Os::write_path`): it is no longer empty. A no-op
    /// step without a file or when it was written to already.
    pub fn write_lock_file(&self) {
        self.turn(Actor::Env, |w| {
            let changed = w.os.path_inode().is_some_and(|i| !w.os.is_written(i));
            if changed {
                w.os.write_path();
            }
            w.record(Actor::Env, Call::WriteLockFile, Outcome::Bool(changed));
        });
    }

    /// Arms an OS error: the next call it matches, by any thread, fails with it (the model's
    /// `LockFails`, `UnlockFails`, `CloseFails`). Recorded; no effect until a call takes it.
    pub fn inject(&self, injection: Injection) {
        self.turn(Actor::Env, |w| {
            w.armed.push(injection);
            w.record(Actor::Env, Call::Inject(injection), Outcome::Done);
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
