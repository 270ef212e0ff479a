//! The writer-lock protocol family of Lucene's `write.lock`, as a Stateright model.
//!
//! One lock path in one directory, `processes` processes with `threads` threads each. Every
//! thread loops forever: obtain the lock, and while holding it, `EnsureValid` then `Write`
//! (any number of times), then release. The protocol variants are the ones Lucene shipped or
//! that are commonly written (see `docs/model.md` for the verdict table):
//!
//! | variant | obtain | release | incident |
//! |---|---|---|---|
//! | `native` | `HeldInsert` → `Open` → `TryLock` (would block: `Close` → `HeldRemove`) | `Unlock` → `Close` → `HeldRemove` | Lucene 9.x/10.x, the `lockwright` crate |
//! | `native-4.10` | as `native`, but would block: `HeldRemove` → `Close` | `Unlock` → `HeldRemove` → `Close` | LUCENE-6507 |
//! | `native-delete-on-release` | as `native` | as `native`, then `Unlink` | LUCENE-5612 |
//! | `native-no-held-set` | `Open` → `TryLock` (would block: `Close`) | `Unlock` → `Close` | LUCENE-5738 |
//! | `simple` | `CreateExclusive` | `Unlink` if the path still names our file, else `ReleaseRefused` | SimpleFSLockFactory |
//! | `single-instance` | `HeldInsert` (in-memory only) | `HeldRemove` | SingleInstanceLockFactory |
//! | `no-lock` | `Obtain` (always succeeds) | `Release` | NoLockFactory |
//! | `mixed` | `native`; even pids lock with `flock`, odd pids with POSIX `fcntl` | `native` | DESIGN.md "mixed kinds" |
//!
//! Faults, each with a budget so the space is finite: `Crash(p)` (the kernel closes p's
//! descriptors and drops its locks; its held set is gone), `Restart(p)`, `UnlinkLockFile` and
//! `ReplaceLockFile` (an operator, a backup tool), `ForeignOpenClose(p)` (other code in p opens
//! and closes the lock file).
//!
//! All OS semantics come from [`crate::file::kernel`], shared with the simulated OS of the loom/shuttle
//! checks. Each protocol step is one mutating call of the real implementation's `System`
//! interface (`impl/src/sys.rs`), so a recorded run of the real code maps onto a model path:
//! see [`Action`] for the mapping.

use std::collections::BTreeSet;
use std::fmt;

use stateright::{Model, Property};

use crate::checker::Checkable;

use crate::file::kernel::{Desc, Inode, LockKind, OpenMode, Os, ProbeResult, TryLockResult};

pub use crate::file::kernel::Pid;

/// A thread index inside its process (also the `slot` of the thread's [`Desc`]).
pub type Tid = u8;

// ---------------------------------------------------------------------------------------------
// Scenario: which protocol, which OS lock, how many parties, which faults.
// ---------------------------------------------------------------------------------------------

/// A protocol variant (command-line name in [`Variant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Modern Lucene `NativeFSLockFactory` and the `lockwright` crate.
    Native,
    /// Lucene 4.10's order: held-set entry removed before the descriptor is closed
    /// (LUCENE-6507).
    Native410,
    /// Lucene 4.8: the lock file is deleted after release (LUCENE-5612).
    NativeDeleteOnRelease,
    /// No held set (LUCENE-5738).
    NativeNoHeldSet,
    /// `SimpleFSLockFactory`: the lock is the existence of a file created exclusively.
    Simple,
    /// `SingleInstanceLockFactory`: an in-memory set per process, no OS lock.
    SingleInstance,
    /// `NoLockFactory`: obtain always succeeds.
    NoLock,
    /// `native`, but even pids lock with `flock` and odd pids with POSIX `fcntl`.
    Mixed,
}

impl Variant {
    pub const ALL: [Variant; 8] = [
        Variant::Native,
        Variant::Native410,
        Variant::NativeDeleteOnRelease,
        Variant::NativeNoHeldSet,
        Variant::Simple,
        Variant::SingleInstance,
        Variant::NoLock,
        Variant::Mixed,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Native => "native",
            Variant::Native410 => "native-4.10",
            Variant::NativeDeleteOnRelease => "native-delete-on-release",
            Variant::NativeNoHeldSet => "native-no-held-set",
            Variant::Simple => "simple",
            Variant::SingleInstance => "single-instance",
            Variant::NoLock => "no-lock",
            Variant::Mixed => "mixed",
        }
    }

    /// Parses [`Variant::name`].
    pub fn from_name(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// Whether the variant takes an OS advisory lock (and so depends on the lock kind).
    pub fn uses_os_lock(self) -> bool {
        matches!(
            self,
            Variant::Native
                | Variant::Native410
                | Variant::NativeDeleteOnRelease
                | Variant::NativeNoHeldSet
                | Variant::Mixed
        )
    }

    /// Whether the variant keeps a per-process held set.
    pub fn uses_held_set(self) -> bool {
        (self.uses_os_lock() && self != Variant::NativeNoHeldSet) || self == Variant::SingleInstance
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Fault budgets: how many of each fault may happen in one run (all processes together).
/// In [`State::budget`] the same type counts what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// `Crash(p)`.
    pub crash: u8,
    /// `Restart(p)` of a crashed process.
    pub restart: u8,
    /// `UnlinkLockFile`.
    pub unlink: u8,
    /// `ReplaceLockFile`.
    pub replace: u8,
    /// `ForeignOpenClose(p)`.
    pub foreign: u8,
}

impl Faults {
    /// No faults at all.
    pub const NONE: Faults = Faults {
        crash: 0,
        restart: 0,
        unlink: 0,
        replace: 0,
        foreign: 0,
    };

    /// Parses `crash=2,restart=2,unlink=1,replace=1,foreign=1` (any subset, any order; `none`
    /// or the empty string for no faults).
    ///
    /// # Errors
    /// A message naming the bad item.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = Faults::NONE;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item == "none" {
                continue;
            }
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("fault `{item}`: expected NAME=COUNT"))?;
            let n: u8 = value
                .trim()
                .parse()
                .map_err(|_| format!("fault `{item}`: COUNT must be 0..=255"))?;
            match key.trim() {
                "crash" => f.crash = n,
                "restart" => f.restart = n,
                "unlink" => f.unlink = n,
                "replace" => f.replace = n,
                "foreign" => f.foreign = n,
                other => {
                    return Err(format!(
                    "unknown fault `{other}` (expected crash, restart, unlink, replace, foreign)"
                ))
                }
            }
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = [
            ("crash", self.crash),
            ("restart", self.restart),
            ("unlink", self.unlink),
            ("replace", self.replace),
            ("foreign", self.foreign),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k}={n}"))
        .collect();
        if items.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&items.join(","))
        }
    }
}

/// One model instance: the Stateright [`Model`] is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    /// The lock kind every process uses (ignored by `mixed`, `simple`, `single-instance`,
    /// `no-lock`).
    pub os: LockKind,
    pub processes: u8,
    pub threads: u8,
    pub faults: Faults,
}

impl Scenario {
    /// `variant` × `os` with 2 processes × 2 threads and no faults.
    pub fn new(variant: Variant, os: LockKind) -> Scenario {
        Scenario {
            variant,
            os,
            processes: 2,
            threads: 2,
            faults: Faults::NONE,
        }
    }

    /// The same scenario with these fault budgets.
    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    /// The same scenario with `processes` × `threads`.
    pub fn with_parties(self, processes: u8, threads: u8) -> Scenario {
        Scenario {
            processes,
            threads,
            ..self
        }
    }

    /// The standard scenario (what `lockwright check` runs without arguments): `native` ×
    /// `ofd`, 2 processes × 2 threads, two crashes, two restarts, two foreign open-closes.
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Native, LockKind::Ofd).with_faults(Faults {
            crash: 2,
            restart: 2,
            foreign: 2,
            ..Faults::NONE
        })
    }

    /// The deep scenario (`LOCKWRIGHT_DEEP=1`, `lockwright check --deep`): `native` × `ofd`,
    /// 3 processes × 2 threads, three crashes, three restarts, two foreign open-closes.
    pub fn deep() -> Scenario {
        Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(3, 2)
            .with_faults(Faults {
                crash: 3,
                restart: 3,
                foreign: 2,
                ..Faults::NONE
            })
    }

    /// The lock kind process `p` uses (`mixed`: `flock` for even, POSIX for odd pids).
    pub fn kind_of(&self, p: Pid) -> LockKind {
        match self.variant {
            Variant::Mixed if p % 2 == 0 => LockKind::Flock,
            Variant::Mixed => LockKind::Posix,
            _ => self.os,
        }
    }

    /// A one-line name, e.g. `native × ofd, 2 processes × 2 threads, faults crash=1`.
    pub fn label(&self) -> String {
        let kind = match self.variant {
            Variant::Mixed => " × flock+posix".to_string(),
            v if v.uses_os_lock() => format!(" × {}", self.os),
            _ => String::new(),
        };
        format!(
            "{}{kind}, {} processes × {} threads, faults {}",
            self.variant, self.processes, self.threads, self.faults
        )
    }
}

// ---------------------------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------------------------

/// Where a thread is in its protocol: the atomic steps of the real implementation.
///
/// The names say what the thread has done last; [`Scenario::thread_actions`] says which step
/// comes next for each variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    /// Not holding and not obtaining. (A refused obtain ends here too.)
    Idle,
    /// Obtain: the path is in the held set; next `Open`.
    Inserted,
    /// Obtain: the lock file is open; next `TryLock`.
    Opened,
    /// Obtain failed: `TryLock` would block; next `Close` (`native`) or `HeldRemove`
    /// (`native-4.10`).
    Blocked,
    /// Obtain failed, descriptor closed; next `HeldRemove` (`native`).
    BlockedClosed,
    /// Obtain failed, held-set entry removed; next `Close` (`native-4.10`).
    BlockedRemoved,
    /// Obtained: the thread is a writer. Next `EnsureValid` (when it would pass) or release.
    Holding,
    /// Between a passed `EnsureValid` and the end of its `Write`.
    Writing,
    /// Release: unlocked; next `Close` (`HeldRemove` in `native-4.10`).
    Unlocked,
    /// Release: unlocked and closed; next `HeldRemove`.
    ReleasedClosed,
    /// Release: held-set entry removed; next `Close` (`native-4.10`) or `Unlink`
    /// (`native-delete-on-release`).
    ReleasedRemoved,
}

impl Pc {
    /// Whether the thread's obtain succeeded and it has not started to release: what an
    /// index writer believes ("at most one writer").
    pub fn is_writer(self) -> bool {
        matches!(self, Pc::Holding | Pc::Writing)
    }
}

/// One thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Thread {
    pub pc: Pc,
    /// The inode identity the thread recorded when it opened (native: `open_lock_file`'s
    /// `fstat`) or created (simple: `create_new_file`) the lock file; `None` when it has none.
    pub inode: Option<Inode>,
}

impl Thread {
    const IDLE: Thread = Thread {
        pc: Pc::Idle,
        inode: None,
    };
}

/// One process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proc {
    pub alive: bool,
    /// How many times the process was restarted.
    pub incarnation: u8,
    /// Whether the lock path is in this process's held set (Lucene's `LOCK_HELD`; the
    /// in-memory set of `single-instance`).
    pub held: bool,
}

/// What the last step's outcome was, when a `sometimes` property needs to see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    None,
    /// An obtain failed because another thread or process held the lock (held set already
    /// contains the path, `TryLock` would block, `CreateExclusive` found the file).
    Refused,
    /// An obtain succeeded after a writer had crashed (no obtain succeeded in between).
    ObtainedAfterCrash,
}

/// The whole system. `Debug` prints a compact, readable summary (the Explorer shows it).
#[derive(PartialEq, Eq, Hash)]
pub struct State {
    /// The kernel: file table of the lock path and lock table ([`crate::file::kernel`]).
    pub os: Os,
    /// Indexed by pid.
    pub procs: Vec<Proc>,
    /// Indexed by `pid * threads + tid`; see [`State::thread`].
    pub threads: Vec<Thread>,
    /// Fault budgets left.
    pub budget: Faults,
    /// A writer crashed and no obtain has succeeded since.
    pub orphaned: bool,
    /// The notable outcome of the step that led here (cleared by every step).
    pub last: Event,
}

impl State {
    /// Number of threads per process.
    pub fn threads_per_process(&self) -> usize {
        self.threads.len() / self.procs.len()
    }

    /// Thread `t` of process `p`.
    pub fn thread(&self, p: Pid, t: Tid) -> Thread {
        self.threads[self.idx(p, t)]
    }

    fn idx(&self, p: Pid, t: Tid) -> usize {
        p as usize * self.threads_per_process() + t as usize
    }

    fn thread_mut(&mut self, p: Pid, t: Tid) -> &mut Thread {
        let i = self.idx(p, t);
        &mut self.threads[i]
    }

    /// `(pid, tid, thread)` of every thread of a live process.
    pub fn live_threads(&self) -> impl Iterator<Item = (Pid, Tid, Thread)> + '_ {
        let n = self.threads_per_process();
        self.threads.iter().enumerate().filter_map(move |(i, th)| {
            let p = (i / n) as Pid;
            self.procs[p as usize]
                .alive
                .then_some((p, (i % n) as Tid, *th))
        })
    }

    /// Threads whose obtain succeeded and which have not started to release.
    pub fn writers(&self) -> impl Iterator<Item = (Pid, Tid)> + '_ {
        self.live_threads()
            .filter(|(_, _, th)| th.pc.is_writer())
            .map(|(p, t, _)| (p, t))
    }
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            os: self.os.clone(),
            procs: self.procs.clone(),
            threads: self.threads.clone(),
            budget: self.budget,
            orphaned: self.orphaned,
            last: self.last,
        }
    }

    /// Field by field, so the process and thread tables reuse their allocations.
    fn clone_from(&mut self, source: &State) {
        self.os.clone_from(&source.os);
        self.procs.clone_from(&source.procs);
        self.threads.clone_from(&source.threads);
        self.budget = source.budget;
        self.orphaned = source.orphaned;
        self.last = source.last;
    }
}

impl fmt::Debug for State {
    /// ```text
    /// path → inode 0
    /// fds: p0t0 → inode 0 (nlink 1), p1t0 → inode 0 (nlink 1)
    /// locks: ofd inode 0 by p0t0
    /// p0 alive (incarnation 0, held set: path): t0 Holding [inode 0], t1 Idle
    /// p1 alive (incarnation 0, held set: -): t0 Blocked [inode 0], t1 Idle
    /// faults left: crash=1,restart=1; last step: contention
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::file::kernel::LockRec;
        match self.os.path_inode() {
            Some(i) => writeln!(f, "path → inode {i}")?,
            None => writeln!(f, "path → (no file)")?,
        }
        let fds: Vec<String> = self
            .os
            .descs()
            .map(|(d, i)| {
                let nlink = self.os.fstat(d).map_or(0, |st| st.nlink);
                format!("p{}t{} → inode {i} (nlink {nlink})", d.pid, d.slot)
            })
            .collect();
        writeln!(
            f,
            "fds: {}",
            if fds.is_empty() {
                "-".to_string()
            } else {
                fds.join(", ")
            }
        )?;
        let locks: Vec<String> = self
            .os
            .locks()
            .map(|l| match l {
                LockRec::Flock { inode, desc } => {
                    format!("flock inode {inode} by p{}t{}", desc.pid, desc.slot)
                }
                LockRec::Ofd { inode, desc } => {
                    format!("ofd inode {inode} by p{}t{}", desc.pid, desc.slot)
                }
                LockRec::Posix { inode, pid } => format!("posix inode {inode} by p{pid}"),
            })
            .collect();
        writeln!(
            f,
            "locks: {}",
            if locks.is_empty() {
                "-".to_string()
            } else {
                locks.join(", ")
            }
        )?;
        let n = self.threads_per_process();
        for (p, proc) in self.procs.iter().enumerate() {
            let threads: Vec<String> = self.threads[p * n..(p + 1) * n]
                .iter()
                .enumerate()
                .map(|(t, th)| match th.inode {
                    Some(i) => format!("t{t} {:?} [inode {i}]", th.pc),
                    None => format!("t{t} {:?}", th.pc),
                })
                .collect();
            writeln!(
                f,
                "p{p} {} (incarnation {}, held set: {}): {}",
                if proc.alive { "alive" } else { "crashed" },
                proc.incarnation,
                if proc.held { "path" } else { "-" },
                threads.join(", ")
            )?;
        }
        let last = match self.last {
            Event::None => "",
            Event::Refused => "; last step: contention",
            Event::ObtainedAfterCrash => "; last step: obtained after a writer crashed",
        };
        write!(
            f,
            "faults left: {}{}{last}",
            self.budget,
            if self.orphaned {
                "; a writer crashed"
            } else {
                ""
            }
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Actions.
// ---------------------------------------------------------------------------------------------

/// One atomic step: a protocol step of thread `(p, t)`, or a fault.
///
/// **Mapping a recorded run of the real implementation** (the refinement replayer in the
/// checks crate): every MUTATING call that process `p`'s thread `t` makes through
/// `lockwright::sys::System` is the action of the same name — `held_insert` → `HeldInsert(p,
/// t)`, `open_lock_file` → `Open`, `try_lock` → `TryLock`, `close` → `Close`, `held_remove` →
/// `HeldRemove`, `unlock` → `Unlock`, `unlink` → `Unlink`, `create_new_file` →
/// `CreateExclusive`. Feed it to [`Scenario::step`]: `None` means the model does not allow
/// the step here (a refinement failure); otherwise the outcome is readable from the resulting
/// thread: `HeldInsert` → still [`Pc::Idle`] when refused ("held by this process");
/// `TryLock` → [`Pc::Holding`] when acquired, [`Pc::Blocked`] when it would block;
/// `CreateExclusive` → [`Pc::Holding`] or still [`Pc::Idle`] (exists).
///
/// READ-ONLY calls (`stat`, `fstat`, `probe`, `held_contains`, `read_file`,
/// `create_dir_all`, `canonicalize_dir`) are not steps: check them against
/// [`Scenario::observe_stat`], [`Scenario::observe_fstat`], [`Scenario::observe_probe`],
/// [`Scenario::observe_held_contains`] in the state at that moment.
///
/// Steps that make no OS call: `EnsureValid` (one atomic evaluation of everything the real
/// `ensure_valid` checks; only enabled when it passes — a failing `ensure_valid` changes
/// nothing, see [`Scenario::observe_ensure_valid`]), `Write` (the end of the write that
/// followed), `ReleaseRefused` (simple: the release found a file that is not ours and deletes
/// nothing), `Obtain`/`Release` (no-lock). Faults are injected by the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// `held_insert(path)`.
    HeldInsert(Pid, Tid),
    /// `open_lock_file(path)` (`O_CREAT`), recording the inode.
    Open(Pid, Tid),
    /// `try_lock(file, kind)`.
    TryLock(Pid, Tid),
    /// `unlock(file, kind)`.
    Unlock(Pid, Tid),
    /// `close(file)`.
    Close(Pid, Tid),
    /// `held_remove(path)`.
    HeldRemove(Pid, Tid),
    /// `unlink(path)`: delete-on-release, or simple's release of its own file.
    Unlink(Pid, Tid),
    /// `create_new_file(path)` (`O_CREAT | O_EXCL`), recording the inode.
    CreateExclusive(Pid, Tid),
    /// Simple's release found another file (or none) at the path: nothing is deleted.
    ReleaseRefused(Pid, Tid),
    /// No-lock's obtain.
    Obtain(Pid, Tid),
    /// No-lock's release.
    Release(Pid, Tid),
    /// `ensure_valid()` passed; a write begins.
    EnsureValid(Pid, Tid),
    /// The write that followed a passed `EnsureValid` ends.
    Write(Pid, Tid),
    /// Process `p` dies: the kernel closes its descriptors and drops its locks; its held set
    /// is gone.
    Crash(Pid),
    /// Crashed process `p` starts again (new incarnation, empty held set).
    Restart(Pid),
    /// An operator or tool deletes the lock file.
    UnlinkLockFile,
    /// An operator or tool renames a fresh file over the lock file.
    ReplaceLockFile,
    /// Other code inside process `p` opens and closes the lock file.
    ForeignOpenClose(Pid),
}

impl Action {
    /// The acting thread, for protocol steps.
    pub fn thread(self) -> Option<(Pid, Tid)> {
        use Action::*;
        match self {
            HeldInsert(p, t)
            | Open(p, t)
            | TryLock(p, t)
            | Unlock(p, t)
            | Close(p, t)
            | HeldRemove(p, t)
            | Unlink(p, t)
            | CreateExclusive(p, t)
            | ReleaseRefused(p, t)
            | Obtain(p, t)
            | Release(p, t)
            | EnsureValid(p, t)
            | Write(p, t) => Some((p, t)),
            Crash(_) | Restart(_) | UnlinkLockFile | ReplaceLockFile | ForeignOpenClose(_) => None,
        }
    }

    /// The step's name without arguments (`"TryLock"`).
    pub fn name(self) -> &'static str {
        use Action::*;
        match self {
            HeldInsert(..) => "HeldInsert",
            Open(..) => "Open",
            TryLock(..) => "TryLock",
            Unlock(..) => "Unlock",
            Close(..) => "Close",
            HeldRemove(..) => "HeldRemove",
            Unlink(..) => "Unlink",
            CreateExclusive(..) => "CreateExclusive",
            ReleaseRefused(..) => "ReleaseRefused",
            Obtain(..) => "Obtain",
            Release(..) => "Release",
            EnsureValid(..) => "EnsureValid",
            Write(..) => "Write",
            Crash(_) => "Crash",
            Restart(_) => "Restart",
            UnlinkLockFile => "UnlinkLockFile",
            ReplaceLockFile => "ReplaceLockFile",
            ForeignOpenClose(_) => "ForeignOpenClose",
        }
    }
}

impl fmt::Display for Action {
    /// `TryLock(p0, t1)`, `Crash(p1)`, `UnlinkLockFile`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.thread(), *self) {
            (Some((p, t)), a) => write!(f, "{}(p{p}, t{t})", a.name()),
            (None, Action::Crash(p) | Action::Restart(p) | Action::ForeignOpenClose(p)) => {
                write!(f, "{}(p{p})", self.name())
            }
            (None, a) => f.write_str(a.name()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Properties (names used verbatim in tests, CLI output and docs).
// ---------------------------------------------------------------------------------------------

pub const AT_MOST_ONE_WRITER: &str = "at most one writer";
pub const AT_MOST_ONE_VALID_WRITER: &str = "at most one valid writer";
pub const WRITES_ARE_EXCLUSIVE: &str = "writes are exclusive";
pub const NO_STALE_LOCK: &str = "no stale lock";
pub const WRITER_EXISTS: &str = "writer exists";
pub const WRITER_AFTER_CRASH: &str = "writer after crash";
pub const CONTENTION_SEEN: &str = "contention seen";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 4] = [
    AT_MOST_ONE_WRITER,
    AT_MOST_ONE_VALID_WRITER,
    WRITES_ARE_EXCLUSIVE,
    NO_STALE_LOCK,
];

/// The `sometimes` properties, in report order.
pub const SOMETIMES: [&str; 3] = [WRITER_EXISTS, WRITER_AFTER_CRASH, CONTENTION_SEEN];

// ---------------------------------------------------------------------------------------------
// Observations (what read-only calls see) and the predicates the properties use.
// ---------------------------------------------------------------------------------------------

impl Scenario {
    fn desc(p: Pid, t: Tid) -> Desc {
        Desc { pid: p, slot: t }
    }

    /// `stat(path)`: the inode at the lock path, if any.
    pub fn observe_stat(&self, s: &State) -> Option<Inode> {
        s.os.path_inode()
    }

    /// `fstat(file)` of thread `(p, t)`'s descriptor; `None` if it has none open.
    pub fn observe_fstat(
        &self,
        s: &State,
        p: Pid,
        t: Tid,
    ) -> Option<crate::file::kernel::DescStat> {
        s.os.fstat(Self::desc(p, t))
    }

    /// `probe(file, kind)` through thread `(p, t)`'s descriptor with `p`'s lock kind.
    /// `flock` answers [`ProbeResult::Unknown`] (and so does NFS `flock` as the caller sees it).
    pub fn observe_probe(&self, s: &State, p: Pid, t: Tid) -> ProbeResult {
        match self.kind_of(p) {
            LockKind::Flock | LockKind::NfsFlock => ProbeResult::Unknown,
            kind => s.os.probe(Self::desc(p, t), kind),
        }
    }

    /// `held_contains(path)` in process `p`.
    pub fn observe_held_contains(&self, s: &State, p: Pid) -> bool {
        s.procs[p as usize].held
    }

    /// Whether thread `(p, t)`'s `ensure_valid` would pass now (false if it holds nothing).
    ///
    /// - native variants: the held set contains the path (not `native-no-held-set`); the
    ///   descriptor's inode is still linked and is the inode at the path; for POSIX and OFD,
    ///   `probe` shows no conflicting owner.
    /// - simple: the path still names the inode this thread created.
    /// - single-instance: the in-memory set contains the path. no-lock: always.
    pub fn observe_ensure_valid(&self, s: &State, p: Pid, t: Tid) -> bool {
        if !s.procs[p as usize].alive {
            return false;
        }
        let th = s.thread(p, t);
        if !th.pc.is_writer() {
            return false;
        }
        match self.variant {
            Variant::Simple => s.os.path_inode().is_some() && s.os.path_inode() == th.inode,
            Variant::SingleInstance => s.procs[p as usize].held,
            Variant::NoLock => true,
            v => {
                if v.uses_held_set() && !s.procs[p as usize].held {
                    return false;
                }
                let Some(stat) = s.os.fstat(Self::desc(p, t)) else {
                    return false;
                };
                stat.nlink > 0
                    && s.os.path_inode() == Some(stat.inode)
                    && matches!(
                        self.observe_probe(s, p, t),
                        ProbeResult::NoConflict | ProbeResult::Unknown
                    )
            }
        }
    }

    /// Whether a brand-new obtain by process `p` (no thread of it active) would succeed now.
    pub fn fresh_obtain_would_succeed(&self, s: &State, p: Pid) -> bool {
        match self.variant {
            Variant::Simple => s.os.path_inode().is_none(),
            Variant::SingleInstance => !s.procs[p as usize].held,
            Variant::NoLock => true,
            v => {
                !(v.uses_held_set() && s.procs[p as usize].held)
                    && s.os.fresh_lock_would_succeed(p, self.kind_of(p))
            }
        }
    }

    /// The names of the `always` properties that `s` violates (the replayer checks every
    /// state of a recorded run with this).
    pub fn violated(&self, s: &State) -> Vec<&'static str> {
        self.properties()
            .into_iter()
            .filter(|p| p.expectation == stateright::Expectation::Always && !(p.condition)(self, s))
            .map(|p| p.name)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// The model.
// ---------------------------------------------------------------------------------------------

impl Scenario {
    /// The enabled protocol steps of thread `(p, t)` (its process must be alive).
    pub fn thread_actions(&self, s: &State, p: Pid, t: Tid, out: &mut Vec<Action>) {
        use Action::*;
        use Variant::*;
        let v = self.variant;
        match s.thread(p, t).pc {
            Pc::Idle => out.push(match v {
                Simple => CreateExclusive(p, t),
                NoLock => Obtain(p, t),
                NativeNoHeldSet => Open(p, t),
                _ => HeldInsert(p, t),
            }),
            Pc::Inserted => out.push(Open(p, t)),
            Pc::Opened => out.push(TryLock(p, t)),
            Pc::Blocked if v == Native410 => out.push(HeldRemove(p, t)),
            Pc::Blocked => out.push(Close(p, t)),
            Pc::BlockedClosed => out.push(HeldRemove(p, t)),
            Pc::BlockedRemoved => out.push(Close(p, t)),
            Pc::Holding => {
                if self.observe_ensure_valid(s, p, t) {
                    out.push(EnsureValid(p, t));
                }
                out.push(match v {
                    Simple
                        if s.os.path_inode().is_some()
                            && s.os.path_inode() == s.thread(p, t).inode =>
                    {
                        Unlink(p, t)
                    }
                    Simple => ReleaseRefused(p, t),
                    SingleInstance => HeldRemove(p, t),
                    NoLock => Release(p, t),
                    _ => Unlock(p, t),
                });
            }
            Pc::Writing => out.push(Write(p, t)),
            Pc::Unlocked if v == Native410 => out.push(HeldRemove(p, t)),
            Pc::Unlocked => out.push(Close(p, t)),
            Pc::ReleasedClosed => out.push(HeldRemove(p, t)),
            Pc::ReleasedRemoved if v == NativeDeleteOnRelease => out.push(Unlink(p, t)),
            Pc::ReleasedRemoved => out.push(Close(p, t)),
        }
    }

    /// Whether `action` is enabled in `s`.
    pub fn enabled(&self, s: &State, action: Action) -> bool {
        let mut acts = Vec::new();
        match action.thread() {
            Some((p, t)) => {
                if p >= self.processes || t >= self.threads || !s.procs[p as usize].alive {
                    return false;
                }
                self.thread_actions(s, p, t, &mut acts);
            }
            None => self.fault_actions(s, &mut acts),
        }
        acts.contains(&action)
    }

    /// The enabled faults.
    fn fault_actions(&self, s: &State, out: &mut Vec<Action>) {
        for p in 0..self.processes {
            let alive = s.procs[p as usize].alive;
            if alive && s.budget.crash > 0 {
                out.push(Action::Crash(p));
            }
            if !alive && s.budget.restart > 0 {
                out.push(Action::Restart(p));
            }
        }
        if s.budget.unlink > 0 && s.os.path_inode().is_some() {
            out.push(Action::UnlinkLockFile);
        }
        if s.budget.replace > 0 {
            out.push(Action::ReplaceLockFile);
        }
        if s.budget.foreign > 0 && s.os.path_inode().is_some() {
            for p in 0..self.processes {
                if s.procs[p as usize].alive {
                    out.push(Action::ForeignOpenClose(p));
                }
            }
        }
    }

    /// `next_state` for the replayer: `None` if `action` is not enabled in `s`.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        self.enabled(s, action).then(|| self.apply(s, action))
    }

    /// The thread `(p, t)` obtained the lock.
    fn obtained(s: &mut State, p: Pid, t: Tid) {
        s.thread_mut(p, t).pc = Pc::Holding;
        if s.orphaned {
            s.orphaned = false;
            s.last = Event::ObtainedAfterCrash;
        }
    }

    /// Performs an enabled action (callers check [`Scenario::enabled`] or take it from
    /// [`Model::actions`]).
    pub fn apply(&self, s: &State, action: Action) -> State {
        let mut next = s.clone();
        self.apply_in_place(&mut next, action);
        next
    }

    /// [`Scenario::apply`] on a state the caller owns (the checker reuses one scratch state
    /// for all successors, so the many that turn out to be already known cost no allocation
    /// for the process and thread tables).
    pub fn apply_in_place(&self, s: &mut State, action: Action) {
        use Action::*;
        s.last = Event::None;
        let v = self.variant;
        match action {
            HeldInsert(p, t) => {
                let proc = &mut s.procs[p as usize];
                if proc.held {
                    s.last = Event::Refused; // "held by this process"
                } else {
                    proc.held = true;
                    if v == Variant::SingleInstance {
                        Self::obtained(s, p, t);
                    } else {
                        s.thread_mut(p, t).pc = Pc::Inserted;
                    }
                }
            }
            Open(p, t) => {
                let inode =
                    s.os.open(Self::desc(p, t), OpenMode::Create)
                        .expect("O_CREAT open cannot fail");
                *s.thread_mut(p, t) = Thread {
                    pc: Pc::Opened,
                    inode: Some(inode),
                };
            }
            TryLock(p, t) => match s.os.try_lock(Self::desc(p, t), self.kind_of(p)) {
                TryLockResult::Acquired => Self::obtained(s, p, t),
                TryLockResult::WouldBlock => {
                    s.thread_mut(p, t).pc = Pc::Blocked;
                    s.last = Event::Refused;
                }
            },
            Unlock(p, t) => {
                s.os.unlock(Self::desc(p, t), self.kind_of(p));
                s.thread_mut(p, t).pc = Pc::Unlocked;
            }
            Close(p, t) => {
                s.os.close(Self::desc(p, t));
                let th = s.thread_mut(p, t);
                th.inode = None;
                th.pc = match (th.pc, v) {
                    (Pc::Blocked | Pc::Unlocked, Variant::NativeNoHeldSet) => Pc::Idle,
                    (Pc::Blocked, _) => Pc::BlockedClosed,
                    (Pc::Unlocked, _) => Pc::ReleasedClosed,
                    (Pc::BlockedRemoved | Pc::ReleasedRemoved, _) => Pc::Idle,
                    (pc, _) => unreachable!("Close from {pc:?}"),
                };
            }
            HeldRemove(p, t) => {
                s.procs[p as usize].held = false;
                let th = s.thread_mut(p, t);
                th.pc = match (th.pc, v) {
                    (Pc::Blocked, _) => Pc::BlockedRemoved,
                    (Pc::Unlocked, _) => Pc::ReleasedRemoved,
                    (Pc::ReleasedClosed, Variant::NativeDeleteOnRelease) => Pc::ReleasedRemoved,
                    (Pc::BlockedClosed | Pc::ReleasedClosed | Pc::Holding, _) => Pc::Idle,
                    (pc, _) => unreachable!("HeldRemove from {pc:?}"),
                };
            }
            Unlink(p, t) => {
                // delete-on-release ignores ENOENT; simple only gets here for its own file.
                let _ = s.os.unlink();
                *s.thread_mut(p, t) = Thread::IDLE;
            }
            CreateExclusive(p, t) => match s.os.create_exclusive() {
                Ok(inode) => {
                    s.thread_mut(p, t).inode = Some(inode);
                    Self::obtained(s, p, t);
                }
                Err(_) => s.last = Event::Refused,
            },
            ReleaseRefused(p, t) | Release(p, t) => *s.thread_mut(p, t) = Thread::IDLE,
            Obtain(p, t) => Self::obtained(s, p, t),
            EnsureValid(p, t) => s.thread_mut(p, t).pc = Pc::Writing,
            Write(p, t) => s.thread_mut(p, t).pc = Pc::Holding,
            Crash(p) => {
                s.budget.crash -= 1;
                s.os.crash(p);
                let n = s.threads_per_process();
                let mine = &mut s.threads[p as usize * n..(p as usize + 1) * n];
                if mine.iter().any(|th| th.pc.is_writer()) {
                    s.orphaned = true;
                }
                mine.fill(Thread::IDLE);
                let proc = &mut s.procs[p as usize];
                proc.alive = false;
                proc.held = false;
            }
            Restart(p) => {
                s.budget.restart -= 1;
                let proc = &mut s.procs[p as usize];
                proc.alive = true;
                proc.incarnation += 1;
            }
            UnlinkLockFile => {
                s.budget.unlink -= 1;
                let _ = s.os.unlink();
            }
            ReplaceLockFile => {
                s.budget.replace -= 1;
                s.os.replace();
            }
            ForeignOpenClose(p) => {
                s.budget.foreign -= 1;
                s.os.foreign_open_close(p);
            }
        }
        // Keep inode generations dense so repeated creates do not grow the space.
        // Only these steps create, drop or forget an inode.
        let may_renumber = matches!(
            action,
            Open(..)
                | Close(..)
                | Unlink(..)
                | CreateExclusive(..)
                | ReleaseRefused(..)
                | Crash(_)
                | UnlinkLockFile
                | ReplaceLockFile
        );
        if !may_renumber || s.os.is_compact(s.threads.iter().filter_map(|th| th.inode)) {
            return;
        }
        let referenced: BTreeSet<Inode> = s.threads.iter().filter_map(|th| th.inode).collect();
        let renaming = s.os.compact(&referenced);
        for th in &mut s.threads {
            if let Some(i) = th.inode.as_mut() {
                *i = renaming[i];
            }
        }
    }

    /// Describes what a step did, for counterexample listings: who acts, the OS call, and its
    /// outcome (`p0 t1 TryLock: fcntl(F_OFD_SETLK) on inode 0 → would block`).
    fn describe(&self, before: &State, action: Action, after: &State) -> String {
        use Action::*;
        let who = |p: Pid, t: Tid| format!("p{p} t{t}");
        let inode = |i: Option<Inode>| match i {
            Some(i) => format!("inode {i}"),
            None => "no file".to_string(),
        };
        let lock_call = |p: Pid, unlock: bool| match (self.kind_of(p), unlock) {
            (LockKind::Flock | LockKind::NfsFlock, false) => "flock(LOCK_EX|LOCK_NB)",
            (LockKind::Flock | LockKind::NfsFlock, true) => "flock(LOCK_UN)",
            (LockKind::Posix, false) => "fcntl(F_SETLK, F_WRLCK)",
            (LockKind::Posix, true) => "fcntl(F_SETLK, F_UNLCK)",
            (LockKind::Ofd, false) => "fcntl(F_OFD_SETLK, F_WRLCK)",
            (LockKind::Ofd, true) => "fcntl(F_OFD_SETLK, F_UNLCK)",
        };
        let fd_inode = |p: Pid, t: Tid| inode(before.os.desc_inode(Self::desc(p, t)));
        match action {
            HeldInsert(p, t) => format!(
                "{} HeldInsert: held_insert(path) → {}",
                who(p, t),
                if before.procs[p as usize].held {
                    "false: held by this process"
                } else {
                    "true"
                }
            ),
            Open(p, t) => format!(
                "{} Open: open(path, O_CREAT) → {}",
                who(p, t),
                inode(after.thread(p, t).inode)
            ),
            TryLock(p, t) => format!(
                "{} TryLock: {} on {} → {}",
                who(p, t),
                lock_call(p, false),
                fd_inode(p, t),
                if after.thread(p, t).pc == Pc::Holding {
                    "acquired"
                } else {
                    "would block"
                }
            ),
            Unlock(p, t) => format!(
                "{} Unlock: {} on {}",
                who(p, t),
                lock_call(p, true),
                fd_inode(p, t)
            ),
            Close(p, t) => format!("{} Close: close(fd of {})", who(p, t), fd_inode(p, t)),
            HeldRemove(p, t) => format!("{} HeldRemove: held_remove(path)", who(p, t)),
            Unlink(p, t) => format!(
                "{} Unlink: unlink(path) removes {}",
                who(p, t),
                inode(before.os.path_inode())
            ),
            CreateExclusive(p, t) => match after.thread(p, t).pc {
                Pc::Holding => format!(
                    "{} CreateExclusive: open(path, O_CREAT|O_EXCL) → {}",
                    who(p, t),
                    inode(after.thread(p, t).inode)
                ),
                _ => format!(
                    "{} CreateExclusive: open(path, O_CREAT|O_EXCL) → EEXIST",
                    who(p, t)
                ),
            },
            ReleaseRefused(p, t) => format!(
                "{} ReleaseRefused: path names {}, not ours; nothing deleted",
                who(p, t),
                inode(before.os.path_inode())
            ),
            Obtain(p, t) => format!("{} Obtain (no lock)", who(p, t)),
            Release(p, t) => format!("{} Release (no lock)", who(p, t)),
            EnsureValid(p, t) => format!("{} EnsureValid: passes; write begins", who(p, t)),
            Write(p, t) => format!("{} Write: write ends", who(p, t)),
            Crash(p) => format!("p{p} Crash: killed; kernel closes its fds and drops its locks"),
            Restart(p) => format!("p{p} Restart: new incarnation, empty held set"),
            UnlinkLockFile => format!(
                "operator UnlinkLockFile: unlink(path) removes {}",
                inode(before.os.path_inode())
            ),
            ReplaceLockFile => format!(
                "operator ReplaceLockFile: rename(fresh, path) → {}",
                inode(after.os.path_inode())
            ),
            ForeignOpenClose(p) => format!(
                "p{p} ForeignOpenClose: other code in p{p} opens and closes {}",
                inode(before.os.path_inode())
            ),
        }
    }
}

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.clone_from(s);
        self.apply_in_place(out, action);
        true
    }

    /// What a step did: who acts, the OS call, and its outcome (`p0 t1 TryLock:
    /// fcntl(F_OFD_SETLK) on inode 0 → would block`).
    fn describe_step(&self, before: &State, action: &Action, after: &State) -> String {
        self.describe(before, *action, after)
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            os: Os::new(),
            procs: vec![
                Proc {
                    alive: true,
                    incarnation: 0,
                    held: false,
                };
                self.processes as usize
            ],
            threads: vec![Thread::IDLE; self.processes as usize * self.threads as usize],
            budget: self.faults,
            orphaned: false,
            last: Event::None,
        }]
    }

    /// Protocol steps of every thread of every live process (pid, then tid order), then faults.
    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        for p in 0..self.processes {
            if s.procs[p as usize].alive {
                for t in 0..self.threads {
                    self.thread_actions(s, p, t, actions);
                }
            }
        }
        self.fault_actions(s, actions);
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        self.step(s, action)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn format_step(&self, s: &State, action: Action) -> Option<String> {
        let after = self.step(s, action)?;
        Some(format!("{}\n\n{after:?}", self.describe(s, action, &after)))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(AT_MOST_ONE_WRITER, |_, s: &State| s.writers().count() <= 1),
            Property::always(AT_MOST_ONE_VALID_WRITER, |m: &Scenario, s: &State| {
                s.writers()
                    .filter(|&(p, t)| m.observe_ensure_valid(s, p, t))
                    .count()
                    <= 1
            }),
            Property::always(WRITES_ARE_EXCLUSIVE, |_, s: &State| {
                s.live_threads()
                    .filter(|(_, _, th)| th.pc == Pc::Writing)
                    .count()
                    <= 1
            }),
            Property::always(NO_STALE_LOCK, |m: &Scenario, s: &State| {
                s.live_threads().any(|(_, _, th)| th.pc != Pc::Idle)
                    || (0..m.processes).all(|p| m.fresh_obtain_would_succeed(s, p))
            }),
            Property::sometimes(WRITER_EXISTS, |_, s: &State| s.writers().next().is_some()),
            Property::sometimes(WRITER_AFTER_CRASH, |_, s: &State| {
                s.last == Event::ObtainedAfterCrash
            }),
            Property::sometimes(CONTENTION_SEEN, |_, s: &State| s.last == Event::Refused),
        ]
    }
}
