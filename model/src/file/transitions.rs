//! What each action does to the state: the kernel call it makes (through
//! [`super::kernel`]), and where the thread goes next (from the step table,
//! [`super::steps::step`]).

use super::kernel::{OpenMode, TryLockResult};
use super::steps::{check_step, step};
use super::{Action, Event, Pc, Pid, Scenario, State, Thread, Tid};
#[cfg(doc)]
use stateright::Model;

impl Scenario {
    /// A protocol step of thread `(p, t)`: the call's effect on the kernel and the held set,
    /// then the program counter from the step table ([`step`]): `then` when the call
    /// succeeded, `refused` when it was refused.
    fn thread_step(&self, s: &mut State, p: Pid, t: Tid, action: Action) {
        use Action::*;
        let pc = s.thread(p, t).pc;
        let sets = self.variant.held_sets();
        match action {
            EnsureValid(..) => {
                s.thread_mut(p, t).pc = Pc::Writing; // enabled only when it passes
                return;
            }
            BeginCheck(..) => {
                // The call's window starts here: it is blind until it sees a valid state.
                let blind = !self.observe_ensure_valid(s, p, t);
                let th = s.thread_mut(p, t);
                th.pc = Pc::Checking(0);
                th.blind = blind;
                return;
            }
            Check(..) => {
                self.check(s, p, t);
                return;
            }
            LockFails(..) => {
                // No lock is taken; the thread takes the failure path of its variant. Not
                // contention: nobody holds the lock because of it.
                s.budget.lock_error -= 1;
                let to = step(self.variant, pc).failed;
                s.thread_mut(p, t).pc = to;
                if to == Pc::Holding && s.orphaned {
                    s.orphaned = false;
                    s.last = Event::ObtainedAfterCrash;
                }
                return;
            }
            _ => {}
        }
        let next = step(self.variant, pc);
        let desc = Self::desc(p, t);
        let ok = match action {
            HeldInsert(..) => {
                // refused: "held by this process"
                !std::mem::replace(s.held_of_mut(p, t, sets), true)
            }
            Open(..) => {
                let inode =
                    s.os.open(desc, OpenMode::Create)
                        .expect("O_CREAT open cannot fail");
                s.thread_mut(p, t).inode = Some(inode);
                true
            }
            TryLock(..) => s.os.try_lock(desc, self.kind_of(p)) == TryLockResult::Acquired,
            Recheck(..) => {
                // `stat(path)` against `fstat(fd)`: the locked inode is still the lock file.
                let locked = s.os.desc_inode(desc);
                locked.is_some() && locked == s.os.path_inode()
            }
            Unlock(..) => {
                s.os.unlock(desc, self.kind_of(p));
                true
            }
            UnlockFails(..) => {
                // EIO: the lock stays as it was; the release goes on (`close` drops it).
                s.budget.unlock_error -= 1;
                true
            }
            Close(..) | CloseFails(..) => {
                // A failing close(2) still frees the descriptor, and with it its locks.
                if let CloseFails(..) = action {
                    s.budget.close_error -= 1;
                }
                s.os.close(desc);
                s.thread_mut(p, t).inode = None;
                true
            }
            HeldRemove(..) => {
                *s.held_of_mut(p, t, sets) = false;
                true
            }
            Unlink(..) => {
                // delete-on-release ignores ENOENT; simple only gets here for its own file.
                let _ = s.os.unlink();
                s.thread_mut(p, t).inode = None;
                true
            }
            CreateExclusive(..) => match s.os.create_exclusive() {
                Ok(inode) => {
                    s.thread_mut(p, t).inode = Some(inode);
                    true
                }
                Err(_) => false,
            },
            ReleaseRefused(..) | Release(..) => {
                s.thread_mut(p, t).inode = None;
                true
            }
            Write(..) => {
                s.thread_mut(p, t).blind = false;
                true
            }
            Obtain(..) => true,
            _ => unreachable!("{action} is not a protocol step"),
        };
        let to = if ok { next.then } else { next.refused };
        s.thread_mut(p, t).pc = to;
        if !ok {
            // A failed re-check is no contention: the obtain goes on (it retries).
            if !matches!(action, Recheck(..)) {
                s.last = Event::Refused;
            }
        } else if to == Pc::Holding && pc != Pc::Writing {
            // An obtain succeeded.
            if s.orphaned {
                s.orphaned = false;
                s.last = Event::ObtainedAfterCrash;
            }
            if self.variant.blocks() {
                s.thread_mut(p, t).just_obtained = true;
            }
        }
    }

    /// `native-probe-last`: thread `(p, t)` makes its next `ensure_valid` check (number `n`
    /// from `Checking(n)`): passed → the next check or `Writing`, failed → `Holding`. Whether
    /// the call has seen a state in which the lock is valid (`Thread::blind`) is tracked from
    /// its `BeginCheck` on (see [`Scenario::track_blind_checks`]).
    fn check(&self, s: &mut State, p: Pid, t: Tid) {
        let n = match s.thread(p, t).pc {
            Pc::Checking(n) => n,
            pc => unreachable!("Check at {pc:?}"),
        };
        let next = check_step(n);
        let passed = self.observe_check(s, p, t, n);
        let th = s.thread_mut(p, t);
        th.pc = if passed { next.then } else { next.refused };
        if !passed {
            th.blind = false; // a failed ensure_valid tells nobody anything
        }
    }

    /// `native-probe-last`: after every step, each `ensure_valid` in progress (and one that
    /// just passed its last check) whose window has not yet contained a valid state looks at
    /// the new state. What is left `blind` when the write begins was never valid.
    fn track_blind_checks(&self, s: &mut State, action: Action) {
        let n = s.threads_per_process();
        for i in 0..s.threads.len() {
            let (p, t) = ((i / n) as Pid, (i % n) as Tid);
            let th = s.threads[i];
            if !th.blind || !s.procs[p as usize].alive {
                continue;
            }
            let in_window = match th.pc {
                Pc::Checking(_) => true,
                Pc::Writing => action == Action::Check(p, t),
                _ => false,
            };
            if in_window && self.observe_ensure_valid(s, p, t) {
                s.threads[i].blind = false;
            }
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
        if self.variant.blocks() {
            for th in &mut s.threads {
                th.just_obtained = false;
            }
        }
        if let Some((p, t)) = action.thread() {
            self.thread_step(s, p, t, action);
        }
        match action {
            HeldInsert(..) | Open(..) | TryLock(..) | Unlock(..) | Close(..) | HeldRemove(..)
            | Unlink(..) | CreateExclusive(..) | ReleaseRefused(..) | Obtain(..) | Release(..)
            | EnsureValid(..) | Write(..) | LockFails(..) | UnlockFails(..) | CloseFails(..)
            | Recheck(..) | BeginCheck(..) | Check(..) => {}
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
                proc.held2 = false;
            }
            Restart(p) => {
                s.budget.restart -= 1;
                // A restarted process is a fresh one: nothing of the old one survives (the
                // state keeps no restart count, which nothing reads).
                s.procs[p as usize].alive = true;
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
            LoseLock(p) => {
                s.budget.lose_lock -= 1;
                s.os.lose_locks(p);
            }
            WriteLockFile => {
                s.budget.write -= 1;
                s.os.write_path();
            }
        }
        if self.variant.splits_ensure_valid() {
            self.track_blind_checks(s, action);
        }
        // Keep inode generations dense so repeated creates do not grow the space.
        // Only these steps create, drop or forget an inode.
        let may_renumber = matches!(
            action,
            Open(..)
                | Close(..)
                | CloseFails(..)
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
        let renaming = s.os.compact(s.threads.iter().filter_map(|th| th.inode));
        for th in &mut s.threads {
            if let Some(i) = th.inode.as_mut() {
                *i = renaming.get(*i);
            }
        }
    }
}
