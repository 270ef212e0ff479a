//! What each action does to the state: the kernel call it makes (through
//! [`super::kernel`]), and where the thread goes next (from the step table,
//! [`super::steps::step`]).

use std::collections::BTreeSet;

use super::kernel::{Inode, OpenMode, TryLockResult};
use super::steps::step;
use super::{Action, Event, Pc, Pid, Scenario, State, Thread, Tid};

impl Scenario {
    /// A protocol step of thread `(p, t)`: the call's effect on the kernel and the held set,
    /// then the program counter from the step table ([`step`]): `then` when the call
    /// succeeded, `refused` when it was refused.
    fn thread_step(&self, s: &mut State, p: Pid, t: Tid, action: Action) {
        use Action::*;
        let pc = s.thread(p, t).pc;
        if let EnsureValid(..) = action {
            s.thread_mut(p, t).pc = Pc::Writing; // enabled only when it passes
            return;
        }
        let next = step(self.variant, pc);
        let desc = Self::desc(p, t);
        let ok = match action {
            HeldInsert(..) => {
                let proc = &mut s.procs[p as usize];
                !std::mem::replace(&mut proc.held, true) // refused: "held by this process"
            }
            Open(..) => {
                let inode =
                    s.os.open(desc, OpenMode::Create)
                        .expect("O_CREAT open cannot fail");
                s.thread_mut(p, t).inode = Some(inode);
                true
            }
            TryLock(..) => s.os.try_lock(desc, self.kind_of(p)) == TryLockResult::Acquired,
            Unlock(..) => {
                s.os.unlock(desc, self.kind_of(p));
                true
            }
            Close(..) => {
                s.os.close(desc);
                s.thread_mut(p, t).inode = None;
                true
            }
            HeldRemove(..) => {
                s.procs[p as usize].held = false;
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
            Obtain(..) | Write(..) => true,
            _ => unreachable!("{action} is not a protocol step"),
        };
        let to = if ok { next.then } else { next.refused };
        s.thread_mut(p, t).pc = to;
        if !ok {
            s.last = Event::Refused;
        } else if to == Pc::Holding && pc != Pc::Writing {
            // An obtain succeeded.
            if s.orphaned {
                s.orphaned = false;
                s.last = Event::ObtainedAfterCrash;
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
        if let Some((p, t)) = action.thread() {
            self.thread_step(s, p, t, action);
        }
        match action {
            HeldInsert(..) | Open(..) | TryLock(..) | Unlock(..) | Close(..) | HeldRemove(..)
            | Unlink(..) | CreateExclusive(..) | ReleaseRefused(..) | Obtain(..) | Release(..)
            | EnsureValid(..) | Write(..) => {}
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
}
