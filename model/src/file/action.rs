//! The model's actions: one protocol step of one thread, or one fault.

use std::fmt;

use super::kernel::Pid;
use super::Tid;
#[cfg(doc)]
use super::{Pc, Scenario};

/// One atomic step: a protocol step of thread `(p, t)`, or a fault.
///
/// **Mapping a recorded run of the real implementation** (the refinement replayer in the
/// checks crate): every MUTATING call that process `p`'s thread `t` makes through
/// `lockwright::file::sys::System` is the action of the same name — `held_insert` → `HeldInsert(p,
/// t)`, `open_lock_file` → `Open`, `try_lock` → `TryLock`, `close` → `Close`, `held_remove` →
/// `HeldRemove`, `unlock` → `Unlock`, `unlink` → `Unlink`, `create_new_file` →
/// `CreateExclusive`. Feed it to [`Scenario::step`]: `None` means the model does not allow
/// the step here (a refinement failure); otherwise the outcome is readable from the resulting
/// thread: `HeldInsert` → still [`Pc::Idle`] when refused ("held by this process");
/// `TryLock` → [`Pc::Holding`] when acquired, [`Pc::Blocked`] when it would block;
/// `CreateExclusive` → [`Pc::Holding`] or still [`Pc::Idle`] (exists).
///
/// `native-blocking`: `held_insert_wait` → `HeldInsert`, `lock_blocking` → `TryLock` (to
/// [`Pc::Locked`]), and the `stat(path)` the blocking obtain makes after its lock call is
/// `Recheck` (the descriptor's identity is constant while it is open, so the `stat` is where
/// the comparison takes effect): [`Pc::Holding`] when the path still names the locked inode,
/// [`Pc::Stale`] when it does not (the `unlock`, `close` and `open_lock_file` of the retry
/// follow).
///
/// READ-ONLY calls (`stat`, `fstat`, `probe`, `held_contains`, `read_file`,
/// `create_dir_all`, `canonicalize_dir`) are not steps: check them against
/// [`Scenario::observe_stat`], [`Scenario::observe_fstat`], [`Scenario::observe_probe`],
/// [`Scenario::observe_held_contains`] in the state at that moment.
///
/// Failing calls are their own actions, each spending a fault budget: `LockFails` (the lock
/// call, `try_lock` or `lock_blocking`, returned `ENOLCK`/`EIO`), `UnlockFails`, `CloseFails`
/// (`EIO`). The replayer maps a recorded call that returned such an error to them.
///
/// `native-probe-last` splits `ensure_valid` into its call and its observations:
/// `BeginCheck(p, t)` is the call (no OS call yet; the replayer takes it where the
/// linearization window of the other variants starts, right after the thread's previous
/// harness event), then each of `held_contains`, `fstat`, `stat` and `probe` is one
/// `Check(p, t)` step, whose outcome (passed: the next check or `Writing`; failed: back to
/// `Holding`) is readable from the thread.
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
    /// The lock call (`try_lock`, or `lock_blocking` in `native-blocking`) fails with an OS
    /// error (`ENOLCK`, `EIO`): no lock is taken. Fault budget `lock-error`.
    LockFails(Pid, Tid),
    /// `unlock` fails with `EIO`: the lock stays as it was. Fault budget `unlock-error`.
    UnlockFails(Pid, Tid),
    /// `close` fails with `EIO`: the descriptor and its locks are released anyway. Fault
    /// budget `close-error`.
    CloseFails(Pid, Tid),
    /// `native-blocking`: after the blocking lock call, `stat(path)` compared with the
    /// descriptor's inode (`fstat`): the same → the obtain returns; another file or none →
    /// the lock is on an orphan, unlock, close and open again.
    Recheck(Pid, Tid),
    /// `native-probe-last`: `ensure_valid` is called (its checks follow).
    BeginCheck(Pid, Tid),
    /// `native-probe-last`: one of `ensure_valid`'s checks (held set, `fstat`, `stat`, probe,
    /// in that order).
    Check(Pid, Tid),
    /// Process `p` dies: the kernel closes its descriptors and drops its locks; its held set
    /// is gone.
    Crash(Pid),
    /// Crashed process `p` starts again (a fresh process: empty held set).
    Restart(Pid),
    /// An operator or tool deletes the lock file.
    UnlinkLockFile,
    /// An operator or tool renames a fresh file over the lock file.
    ReplaceLockFile,
    /// Other code inside process `p` opens and closes the lock file.
    ForeignOpenClose(Pid),
    /// Process `p`'s locks vanish with no call of its own (an NFSv4 lease lost).
    LoseLock(Pid),
    /// Someone writes into the lock file: it is no longer empty.
    WriteLockFile,
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
            | Write(p, t)
            | LockFails(p, t)
            | UnlockFails(p, t)
            | CloseFails(p, t)
            | Recheck(p, t)
            | BeginCheck(p, t)
            | Check(p, t) => Some((p, t)),
            Crash(_) | Restart(_) | UnlinkLockFile | ReplaceLockFile | ForeignOpenClose(_)
            | LoseLock(_) | WriteLockFile => None,
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
            LockFails(..) => "LockFails",
            UnlockFails(..) => "UnlockFails",
            CloseFails(..) => "CloseFails",
            Recheck(..) => "Recheck",
            BeginCheck(..) => "BeginCheck",
            Check(..) => "Check",
            Crash(_) => "Crash",
            Restart(_) => "Restart",
            UnlinkLockFile => "UnlinkLockFile",
            ReplaceLockFile => "ReplaceLockFile",
            ForeignOpenClose(_) => "ForeignOpenClose",
            LoseLock(_) => "LoseLock",
            WriteLockFile => "WriteLockFile",
        }
    }
}

impl fmt::Display for Action {
    /// `TryLock(p0, t1)`, `Crash(p1)`, `UnlinkLockFile`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.thread(), *self) {
            (Some((p, t)), a) => write!(f, "{}(p{p}, t{t})", a.name()),
            (
                None,
                Action::Crash(p)
                | Action::Restart(p)
                | Action::ForeignOpenClose(p)
                | Action::LoseLock(p),
            ) => {
                write!(f, "{}(p{p})", self.name())
            }
            (None, a) => f.write_str(a.name()),
        }
    }
}
