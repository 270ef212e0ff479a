//! What a simulated run records: who made which call and what it returned, in
//! linearization order; the fixed names of the one simulated lock directory.

use std::fmt;
use std::path::{Path, PathBuf};

use lockwright::file::sys::FileId;
use lockwright_model::file::kernel::{
    DescStat, FsError, Inode, LockKind, Pid, ProbeResult, TryLockResult,
};

/// A thread index inside a simulated process (the model's `Tid`; also the descriptor slot).
pub type Tid = u8;

/// The lock directory every simulated run uses (its canonical spelling).
pub const LOCK_DIR: &str = "/sim/index";
/// A second spelling of [`LOCK_DIR`]: a symlink to it. `canonicalize_dir` resolves it to
/// `LOCK_DIR`, so it names the same lock file and the same held-set entry; a factory never
/// remembers it (it is not canonical) and resolves it on every obtain.
pub const LOCK_LINK: &str = "/sim/link";
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
    /// `held_insert_wait`: recorded once, when it returns (it waited until then).
    HeldInsertWait,
    HeldRemove,
    Open,
    CreateExclusive,
    TryLock(LockKind),
    /// `lock_blocking`: recorded once, when it returns.
    LockBlocking(LockKind),
    Unlock(LockKind),
    Close,
    Unlink,
    // injected faults (actor: env)
    Crash(Pid),
    Restart(Pid),
    UnlinkLockFile,
    ReplaceLockFile,
    ForeignOpenClose(Pid),
    /// Process `pid`'s locks vanish (a lost NFSv4 lease). Outcome `Bool(lost)`.
    LoseLock(Pid),
    /// Someone writes into the lock file. Outcome `Bool(changed)`: false when there is no
    /// file or it was written to already.
    WriteLockFile,
    /// The environment arms an OS error: the next call of that kind, by any thread, fails
    /// with it. No effect of its own (the failing call is the model step); recorded so that
    /// a replay makes the same choice at the same point.
    Inject(Injection),
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
    /// ([`super::workload::run_simple`]), where a refused release is an outcome the model
    /// names (`ReleaseRefused`).
    Closed {
        ok: bool,
    },
}

/// An OS error the environment makes the next matching call return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Injection {
    /// `try_lock` or `lock_blocking` fails with this errno (`ENOLCK`, `EIO`): the model's
    /// `LockFails`.
    Lock(i32),
    /// `unlock` fails with `EIO`; the lock stays: `UnlockFails`.
    Unlock,
    /// `close` fails with `EIO`; the descriptor is gone anyway: `CloseFails`.
    Close,
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
    /// An injected OS error (an errno: `ENOLCK`, `EIO`) from a lock, unlock or close call.
    Errno(i32),
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
