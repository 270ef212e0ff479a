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
//!
//! A holder may, any number of times before releasing, pass `EnsureValid` (enabled only when
//! the real `ensure_valid` would pass) and then `Write`.

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
}

/// The next step of a thread and where it leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub kind: StepKind,
    /// The program counter after the step succeeds (inserted, acquired, created, done).
    pub then: Pc,
    /// The program counter after the step is refused ("held by this process", would block,
    /// the file exists); equal to `then` for steps that cannot be refused.
    pub refused: Pc,
}

/// The step table.
#[rustfmt::skip]
pub fn step(v: Variant, pc: Pc) -> Step {
    use Pc::*;
    use StepKind::*;
    use Variant::*;
    let go = |kind, then| Step { kind, then, refused: then };
    let attempt = |kind, then, refused| Step { kind, then, refused };
    match (pc, v) {
        // Obtain.
        (Idle, Simple)                           => attempt(CreateExclusive, Holding, Idle),
        (Idle, NoLock)                           => go(Obtain, Holding),
        (Idle, SingleInstance)                   => attempt(HeldInsert, Holding, Idle),
        (Idle, NativeNoHeldSet)                  => go(Open, Opened),
        (Idle, _)                                => attempt(HeldInsert, Inserted, Idle),
        (Inserted, _)                            => go(Open, Opened),
        (Opened, _)                              => attempt(TryLock, Holding, Blocked),
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
        }
    }
}

impl Scenario {
    /// The enabled protocol steps of thread `(p, t)` (its process must be alive): the table's
    /// step, and for a holder also `EnsureValid` when it would pass.
    pub fn thread_actions(&self, s: &State, p: Pid, t: Tid, out: &mut Vec<Action>) {
        let pc = s.thread(p, t).pc;
        if pc == Pc::Holding && self.observe_ensure_valid(s, p, t) {
            out.push(Action::EnsureValid(p, t));
        }
        out.push(step(self.variant, pc).kind.action(s, p, t));
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
    }

    /// `next_state` for the replayer: `None` if `action` is not enabled in `s`.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        self.enabled(s, action).then(|| self.apply(s, action))
    }
}
