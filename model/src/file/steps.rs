//! The step table: what a thread at each program counter does next, for every variant, and
//! where it goes after the step succeeds or is refused. Everything that differs between the
//! variants' protocols is in [`step`]; [`Scenario::apply_in_place`] only performs the calls.
//!
//! Side by side (obtain, a refused obtain, release; `→` = next step):
//!
//! | variant | obtain | refused | release |
//! |---|---|---|---|
//! | `native`, `mixed` | HeldInsert → Open → TryLock | Close → HeldRemove | Unlock → Close → HeldRemove |
//! | `native-4.10` | HeldInsert → Open → TryLock | **HeldRemove → Close** | Unlock → **HeldRemove → Close** |
//! | `native-delete-on-release` | HeldInsert → Open → TryLock | Close → HeldRemove | Unlock → Close → HeldRemove → **Unlink** |
//! | `native-no-held-set` | **Open** → TryLock | Close | Unlock → Close |
//! | `simple` | CreateExclusive | — | Unlink if ours, else ReleaseRefused |
//! | `single-instance` | HeldInsert | — | HeldRemove |
//! | `no-lock` | Obtain | — | Release |
//! | `native-blocking` | HeldInsert **waits** → Open → TryLock **waits** → **Recheck** (file replaced: **Unlock → Close → Open** → TryLock again) | never refused | as `native` |
//! | `native-blocking-no-recheck` | HeldInsert **waits** → Open → TryLock **waits** | never refused | as `native` |
//! | `native-two-held-sets` | as `native`, odd tids in a **second held set** | as `native` | as `native` |
//! | `native-carry-on-after-lock-error` | as `native`; a **failed TryLock → Holding** | as `native` | as `native` |
//! | `native-probe-last`, `native-skip-inode-check`, `native-skip-held-contains` | as `native` | as `native` | as `native` (they differ in `ensure_valid`, below) |
//!
//! A holder may, any number of times before releasing, pass `EnsureValid` (enabled only when
//! the real `ensure_valid` would pass) and then `Write`. In `native-probe-last` the call and
//! its checks are steps of their own: `Holding` → `BeginCheck` → `Checking(0)` → `Check`
//! (held set) → `Checking(1)` → `Check` (`fstat`) → `Checking(2)` → `Check` (`stat`) →
//! `Checking(3)` → `Check` (probe) → `Writing`; a check that fails goes back to `Holding`.
//!
//! Failing calls (fault budgets `lock-error`, `unlock-error`, `close-error`) are enabled next
//! to the step they fail: `LockFails` goes to [`Step::failed`] (`native`: the refused path,
//! close then leave the held set; `native-carry-on-after-lock-error`: `Holding`),
//! `UnlockFails` and `CloseFails` go on as the call's success would (the error-tolerant
//! release: every step runs).

use super::{Action, Pc, Pid, Scenario, State, Tid, Variant};

/// A protocol step without its thread: a cell of the step table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    HeldInsert,
    Open,
    TryLock,
    Unlock,
    Close,
    HeldRemove,
    Unlink,
    CreateExclusive,
    /// Simple's release: `Unlink` if the path still names the file this thread created,
    /// otherwise `ReleaseRefused` (nothing is deleted).
    UnlinkIfOurs,
    Obtain,
    Release,
    Write,
    /// `native-probe-last`: the next of `ensure_valid`'s checks.
    Check,
    /// `native-blocking`: after the lock call, does the path still name the locked inode?
    Recheck,
}

/// How many checks `native-probe-last`'s `ensure_valid` makes: held set, `fstat`, `stat`,
/// probe.
pub const CHECKS: u8 = 4;

/// The next step of a thread and where it leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub kind: StepKind,
    /// The program counter after the step succeeds (inserted, acquired, created, done).
    pub then: Pc,
    /// The program counter after the step is refused ("held by this process", would block,
    /// the file exists); equal to `then` for steps that cannot be refused.
    pub refused: Pc,
    /// The program counter after the lock call fails with an OS error (`LockFails`); equal to
    /// `refused` except in `native-carry-on-after-lock-error`.
    pub failed: Pc,
}

/// `native-probe-last`'s check number `n` (0: held set, 1: `fstat`, 2: `stat`, 3: probe):
/// passed → the next check, or `Writing` after the last; failed → `Holding`.
pub fn check_step(n: u8) -> Step {
    let then = if n + 1 < CHECKS {
        Pc::Checking(n + 1)
    } else {
        Pc::Writing
    };
    Step {
        kind: StepKind::Check,
        then,
        refused: Pc::Holding,
        failed: Pc::Holding,
    }
}

/// The step table.
#[rustfmt::skip]
pub fn step(v: Variant, pc: Pc) -> Step {
    use Pc::*;
    use StepKind::*;
    use Variant::*;
    let go = |kind, then| Step { kind, then, refused: then, failed: then };
    let attempt = |kind, then, refused| Step { kind, then, refused, failed: refused };
    let lock = |then, refused, failed| Step { kind: TryLock, then, refused, failed };
    match (pc, v) {
        // Obtain.
        (Idle, Simple)                           => attempt(CreateExclusive, Holding, Idle),
        (Idle, NoLock)                           => go(Obtain, Holding),
        (Idle, SingleInstance)                   => attempt(HeldInsert, Holding, Idle),
        (Idle, NativeNoHeldSet)                  => go(Open, Opened),
        (Idle, _)                                => attempt(HeldInsert, Inserted, Idle),
        (Inserted, _)                            => go(Open, Opened),
        (Opened, NativeCarryOnAfterLockError)    => lock(Holding, Blocked, Holding),
        (Opened, NativeBlocking)                 => attempt(TryLock, Locked, Blocked),
        (Opened, _)                              => attempt(TryLock, Holding, Blocked),
        // `native-blocking`: the lock is on the file at the path, or it is retried.
        (Locked, _)                              => attempt(Recheck, Holding, Stale),
        (Stale, _)                               => go(Unlock, StaleUnlocked),
        (StaleUnlocked, _)                       => go(Close, Inserted),
        // A refused obtain undoes what it did.
        (Blocked, Native410)                     => go(HeldRemove, BlockedRemoved),
        (Blocked, NativeNoHeldSet)               => go(Close, Idle),
        (Blocked, _)                             => go(Close, BlockedClosed),
        (BlockedClosed, _)                       => go(HeldRemove, Idle),
        (BlockedRemoved, _)                      => go(Close, Idle),
        // Release.
        (Holding, Simple)                        => go(UnlinkIfOurs, Idle),
        (Holding, SingleInstance)                => go(HeldRemove, Idle),
        (Holding, NoLock)                        => go(Release, Idle),
        (Holding, _)                             => go(Unlock, Unlocked),
        (Unlocked, Native410)                    => go(HeldRemove, ReleasedRemoved),
        (Unlocked, NativeNoHeldSet)              => go(Close, Idle),
        (Unlocked, _)                            => go(Close, ReleasedClosed),
        (ReleasedClosed, NativeDeleteOnRelease)  => go(HeldRemove, ReleasedRemoved),
        (ReleasedClosed, _)                      => go(HeldRemove, Idle),
        (ReleasedRemoved, NativeDeleteOnRelease) => go(Unlink, Idle),
        (ReleasedRemoved, _)                     => go(Close, Idle),
        // The end of a write that followed a passed `EnsureValid`.
        (Writing, _)                             => go(Write, Holding),
        // `native-probe-last`: inside `ensure_valid`.
        (Checking(n), _)                         => check_step(n),
    }
}

impl StepKind {
    /// The action of thread `(p, t)` taking this step in `s`.
    pub fn action(self, s: &State, p: Pid, t: Tid) -> Action {
        match self {
            StepKind::HeldInsert => Action::HeldInsert(p, t),
            StepKind::Open => Action::Open(p, t),
            StepKind::TryLock => Action::TryLock(p, t),
            StepKind::Unlock => Action::Unlock(p, t),
            StepKind::Close => Action::Close(p, t),
            StepKind::HeldRemove => Action::HeldRemove(p, t),
            StepKind::Unlink => Action::Unlink(p, t),
            StepKind::CreateExclusive => Action::CreateExclusive(p, t),
            StepKind::UnlinkIfOurs => {
                let at_path = s.os.path_inode();
                if at_path.is_some() && at_path == s.thread(p, t).inode {
                    Action::Unlink(p, t)
                } else {
                    Action::ReleaseRefused(p, t)
                }
            }
            StepKind::Obtain => Action::Obtain(p, t),
            StepKind::Release => Action::Release(p, t),
            StepKind::Write => Action::Write(p, t),
            StepKind::Check => Action::Check(p, t),
            StepKind::Recheck => Action::Recheck(p, t),
        }
    }
}

impl Scenario {
    /// The enabled protocol steps of thread `(p, t)` (its process must be alive): the table's
    /// step (`native-blocking`: only once it would not be refused), its failing twin while the
    /// fault budget lasts, and for a holder also `EnsureValid` when it would pass (the first
    /// `BeginCheck` in `native-probe-last`).
    pub fn thread_actions(&self, s: &State, p: Pid, t: Tid, out: &mut Vec<Action>) {
        let pc = s.thread(p, t).pc;
        if pc == Pc::Holding {
            if self.variant.splits_ensure_valid() {
                out.push(Action::BeginCheck(p, t));
            } else if self.observe_ensure_valid(s, p, t) {
                out.push(Action::EnsureValid(p, t));
            }
        }
        let kind = step(self.variant, pc).kind;
        if !self.waits(s, p, t, kind) {
            out.push(kind.action(s, p, t));
        }
        let fails = match kind {
            StepKind::TryLock if s.budget.lock_error > 0 => Some(Action::LockFails(p, t)),
            StepKind::Unlock if s.budget.unlock_error > 0 => Some(Action::UnlockFails(p, t)),
            StepKind::Close if s.budget.close_error > 0 => Some(Action::CloseFails(p, t)),
            _ => None,
        };
        out.extend(fails);
    }

    /// Whether thread `(p, t)`'s next step `kind` is a blocking call that has to wait in `s`
    /// (`native-blocking`): `held_insert_wait` while the path is in its held set,
    /// `lock_blocking` while another owner holds a conflicting lock.
    pub fn waits(&self, s: &State, p: Pid, t: Tid, kind: StepKind) -> bool {
        if !self.variant.blocks() {
            return false;
        }
        match kind {
            StepKind::HeldInsert => s.held_of(p, t, self.variant.held_sets()),
            StepKind::TryLock => !s.os.lock_would_succeed(Self::desc(p, t), self.kind_of(p)),
            _ => false,
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
    pub(super) fn fault_actions(&self, s: &State, out: &mut Vec<Action>) {
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
        if s.budget.lose_lock > 0 {
            for p in 0..self.processes {
                if s.procs[p as usize].alive && s.os.owns_lock(p) {
                    out.push(Action::LoseLock(p));
                }
            }
        }
        if s.budget.write > 0 && s.os.path_inode().is_some_and(|i| !s.os.is_written(i)) {
            out.push(Action::WriteLockFile);
        }
    }

    /// `next_state` for the replayer: `None` if `action` is not enabled in `s`.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        self.enabled(s, action).then(|| self.apply(s, action))
    }
}
