//! The replayer proper: each recorded step becomes a model action, an observation compared
//! with the model state, a fault, or a harness event (see the parent module's docs).

use std::collections::BTreeMap;

use lockwright_model::file::kernel::{Desc, DescStat, FsError, Inode, OpenMode, Os};
use lockwright_model::file::{Action, Pc, Scenario, Variant};

use super::super::record::{Actor, Call, Outcome, Step};
use super::shadow::{ReleaseCheck, Shadow};
use super::{Divergence, Refinement, CHECK_THEN_UNLINK_WINDOW};
use crate::refine::Cursor;

pub(super) struct Replay {
    /// The model side: scenario, current state, enforced properties, counts.
    pub(super) cur: Cursor<Scenario>,
    shadow: Shadow,
}

impl Replay {
    pub(super) fn new(refinement: &Refinement, scenario: Scenario) -> Self {
        let n = usize::from(scenario.processes);
        Replay {
            cur: Cursor::new(scenario, refinement.enforce.clone()),
            shadow: Shadow {
                os: Os::new(),
                alive: vec![true; n],
                crashed: vec![false; n],
                held: vec![[false; 2]; n],
                remembered: BTreeMap::new(),
                releasing: BTreeMap::new(),
                released: BTreeMap::new(),
            },
        }
    }

    /// Which of its process's held sets thread `t` uses.
    fn copy(&self, t: u8) -> usize {
        if self.cur.model.variant.held_sets() > 1 {
            usize::from(t % 2)
        } else {
            0
        }
    }

    /// `native-probe-last`: if thread `(p, t)` is inside `ensure_valid` and its next check is
    /// number `n` (the one this recorded observation makes), take that `Check` step.
    fn split_check(&mut self, i: usize, step: &Step, n: u8) -> Result<(), Divergence> {
        let Actor::Thread { pid: p, tid: t } = step.actor else {
            return Ok(());
        };
        if !self.cur.model.variant.splits_ensure_valid() {
            return Ok(());
        }
        let at = match self.cur.state.thread(p, t).pc {
            Pc::Checking(k) => k,
            Pc::Holding => {
                // A call that never returned (its thread crashed before its `Validated`) has
                // no window: it begins at its first check. (It never passes, so where its
                // window starts does not matter.)
                self.act(i, step, Action::BeginCheck(p, t))?;
                0
            }
            _ => return Ok(()), // not inside ensure_valid (obtain's setup, a refused obtain)
        };
        if at != n {
            return Err(self.fail(
                i,
                step,
                format!("ensure_valid's check #{n} made where the model expects check #{at}"),
            ));
        }
        self.act(i, step, Action::Check(p, t))
    }

    fn fail(&self, i: usize, step: &Step, reason: String) -> Divergence {
        Divergence {
            step: i,
            what: step.to_string(),
            reason,
            property: None,
        }
    }

    pub(super) fn check_properties(
        &mut self,
        at: Option<(usize, &Step)>,
    ) -> Result<(), Divergence> {
        self.cur.check_properties().map_err(|name| {
            let (step, what) = match at {
                Some((i, s)) => (i, s.to_string()),
                None => (0, "initial state".to_owned()),
            };
            Divergence {
                step,
                what,
                reason: format!("the model state violates \"{name}\""),
                property: Some(name),
            }
        })
    }

    /// Takes model action `action` (must be enabled), then syncs remembered inodes.
    pub(super) fn act(&mut self, i: usize, step: &Step, action: Action) -> Result<(), Divergence> {
        if let Err(e) = self.cur.act(action) {
            let pc = action
                .thread()
                .filter(|&(p, _)| usize::from(p) < self.cur.state.procs.len())
                .map(|(p, t)| {
                    format!(
                        " (model thread p{p}.t{t} is at {:?})",
                        self.cur.state.thread(p, t).pc
                    )
                })
                .unwrap_or_default();
            return Err(self.fail(i, step, format!("{e}{pc}")));
        }
        // Mirror the model's forgetting of remembered inodes (close, unlink, crash ...).
        let model = &self.cur.state;
        self.shadow
            .remembered
            .retain(|&(p, t), _| model.thread(p, t).inode.is_some());
        if matches!(action, Action::EnsureValid(..) | Action::Write(..)) {
            self.check_properties(Some((i, step)))?;
        }
        Ok(())
    }

    /// Replays one recorded step. `full`: also check properties and take the
    /// EnsureValid/Write steps (pass 2).
    pub(super) fn step(&mut self, i: usize, step: &Step, full: bool) -> Result<(), Divergence> {
        let r = self.step_inner(i, step, full);
        r?;
        self.shadow
            .compare(&self.cur.state)
            .map_err(|e| self.fail(i, step, format!("after this step the states differ: {e}")))?;
        if full {
            self.check_properties(Some((i, step)))?;
        }
        Ok(())
    }

    fn step_inner(&mut self, i: usize, step: &Step, full: bool) -> Result<(), Divergence> {
        let err = |this: &Self, reason: String| Err(this.fail(i, step, reason));
        let (p, t) = match step.actor {
            Actor::Env => return self.fault(i, step),
            Actor::Thread { pid, tid } => (pid, tid),
        };
        if usize::from(p) >= self.cur.state.procs.len() {
            return err(self, format!("process p{p} is not in the model"));
        }
        if step.outcome == Outcome::Dead {
            // A thread of a crashed incarnation: no effect (its threads stopped).
            let proc = self.cur.state.procs[usize::from(p)];
            if proc.alive && !self.shadow.crashed[usize::from(p)] {
                return err(
                    self,
                    format!("a call failed as dead, but p{p} never crashed in the model"),
                );
            }
            return Ok(());
        }
        if step.outcome == Outcome::BadDesc {
            return err(
                self,
                "the protocol used a descriptor that is not open".to_owned(),
            );
        }
        let desc = Desc { pid: p, slot: t };
        match (step.call, step.outcome) {
            // ---- constant observations ----
            (Call::CreateDirAll | Call::CanonicalizeDir, _) => {
                self.cur.summary.observations += 1;
                Ok(())
            }
            // ---- observations ----
            (Call::Stat, Outcome::Stat(x)) => {
                self.path_observation(i, step, "stat", x)?;
                self.release_observation(i, step, x, |c| &mut c.stat)?;
                self.split_check(i, step, 2)
            }
            (Call::HeldContains, Outcome::Bool(b)) => {
                self.cur.summary.observations += 1;
                let model = self
                    .cur
                    .model
                    .observe_held_contains_of(&self.cur.state, p, t);
                if b != model {
                    return err(
                        self,
                        format!("held_contains returned {b}, the model says {model}"),
                    );
                }
                self.split_check(i, step, 0)
            }
            (Call::Fstat, Outcome::Fstat(st)) => {
                self.cur.summary.observations += 1;
                let inode = self
                    .shadow
                    .map_inode(&self.cur.state, st.inode)
                    .map_err(|e| self.fail(i, step, e))?;
                let ours = DescStat {
                    inode,
                    nlink: st.nlink,
                    written: st.written,
                };
                let model = self.cur.model.observe_fstat(&self.cur.state, p, t);
                if Some(ours) != model {
                    return err(
                        self,
                        format!(
                            "fstat returned {ours:?} (model numbering), the model says {model:?}"
                        ),
                    );
                }
                self.split_check(i, step, 1)
            }
            (Call::Probe(kind), Outcome::Probe(r)) => {
                self.cur.summary.observations += 1;
                if kind != self.cur.model.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "probe with {kind}, the model's p{p} uses {}",
                            self.cur.model.kind_of(p)
                        ),
                    );
                }
                let model = self.cur.model.observe_probe(&self.cur.state, p, t);
                if r != model {
                    return err(
                        self,
                        format!("probe returned {r:?}, the model says {model:?}"),
                    );
                }
                self.split_check(i, step, 3)
            }
            (Call::ReadFile, Outcome::Stat(Some(_)) | Outcome::Failed(FsError::NotFound)) => {
                let x = match step.outcome {
                    Outcome::Stat(x) => x,
                    _ => None,
                };
                self.path_observation(i, step, "read_file", x)?;
                self.release_observation(i, step, x, |c| &mut c.read)
            }
            // ---- mutating calls ----
            (Call::HeldInsert, Outcome::Bool(added)) => {
                let copy = self.copy(t);
                if added == self.shadow.held[usize::from(p)][copy] {
                    return err(
                        self,
                        "recorded held_insert result is not what the calls before it produce"
                            .to_owned(),
                    );
                }
                self.shadow.held[usize::from(p)][copy] = true;
                self.act(i, step, Action::HeldInsert(p, t))?;
                let pc = self.cur.state.thread(p, t).pc;
                let model_added = pc != Pc::Idle;
                if added != model_added {
                    return err(
                        self,
                        format!("held_insert returned {added}, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            (Call::HeldInsertWait, Outcome::Done) => {
                let copy = self.copy(t);
                if self.shadow.held[usize::from(p)][copy] {
                    return err(
                        self,
                        "held_insert_wait returned while the calls before it leave the path held"
                            .to_owned(),
                    );
                }
                self.shadow.held[usize::from(p)][copy] = true;
                // Enabled in the model only while the path is absent: the wait is over.
                self.act(i, step, Action::HeldInsert(p, t))?;
                let pc = self.cur.state.thread(p, t).pc;
                if pc == Pc::Idle {
                    return err(
                        self,
                        format!("held_insert_wait returned, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            (Call::HeldRemove, Outcome::Bool(_)) => {
                let copy = self.copy(t);
                self.shadow.held[usize::from(p)][copy] = false;
                self.act(i, step, Action::HeldRemove(p, t))
            }
            (Call::TryLock(kind) | Call::LockBlocking(kind), Outcome::Errno(_)) => {
                if kind != self.cur.model.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "lock call with {kind}, the model's p{p} uses {}",
                            self.cur.model.kind_of(p)
                        ),
                    );
                }
                // No lock taken: the model's failing lock call (its budget: the recording's
                // failed lock calls).
                self.act(i, step, Action::LockFails(p, t))
            }
            (Call::LockBlocking(kind), Outcome::Done) => {
                if kind != self.cur.model.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "lock_blocking with {kind}, the model's p{p} uses {}",
                            self.cur.model.kind_of(p)
                        ),
                    );
                }
                let got = self.shadow.os.try_lock(desc, kind);
                if got != lockwright_model::file::kernel::TryLockResult::Acquired {
                    return err(
                        self,
                        format!("lock_blocking returned, but the calls before it give {got:?}"),
                    );
                }
                // Enabled in the model only while it would be acquired: the wait is over.
                self.act(i, step, Action::TryLock(p, t))?;
                let pc = self.cur.state.thread(p, t).pc;
                if pc != Pc::Holding {
                    return err(
                        self,
                        format!("lock_blocking returned, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            (Call::Unlock(_), Outcome::Errno(_)) => {
                // EIO: the lock stays (in the shadow kernel too).
                self.act(i, step, Action::UnlockFails(p, t))
            }
            (Call::Close, Outcome::Errno(_)) => {
                // EIO, but the descriptor and its locks are gone.
                self.shadow.os.close(desc);
                self.act(i, step, Action::CloseFails(p, t))
            }
            (Call::Open, Outcome::Opened(x)) => {
                let got = self.shadow.os.open(desc, OpenMode::Create);
                if got != Ok(x) {
                    return err(
                        self,
                        format!("recorded open {x} but the calls before it produce {got:?}"),
                    );
                }
                self.shadow.remembered.insert((p, t), x);
                self.act(i, step, Action::Open(p, t))?;
                let ours = self
                    .shadow
                    .map_inode(&self.cur.state, x)
                    .map_err(|e| self.fail(i, step, e))?;
                let model = self.cur.state.thread(p, t).inode;
                if Some(ours) != model {
                    return err(
                        self,
                        format!("open gave inode {ours} (model numbering), the model {model:?}"),
                    );
                }
                Ok(())
            }
            (Call::TryLock(kind), Outcome::TryLock(r)) => {
                if kind != self.cur.model.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "try_lock with {kind}, the model's p{p} uses {}",
                            self.cur.model.kind_of(p)
                        ),
                    );
                }
                let got = self.shadow.os.try_lock(desc, kind);
                if got != r {
                    return err(
                        self,
                        format!("recorded {r:?} but the calls before it produce {got:?}"),
                    );
                }
                self.act(i, step, Action::TryLock(p, t))?;
                let pc = self.cur.state.thread(p, t).pc;
                let acquired = r == lockwright_model::file::kernel::TryLockResult::Acquired;
                if acquired != (pc == Pc::Holding) {
                    return err(
                        self,
                        format!("try_lock returned {r:?}, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            (Call::Unlock(kind), Outcome::Done) => {
                if kind != self.cur.model.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "unlock with {kind}, the model's p{p} uses {}",
                            self.cur.model.kind_of(p)
                        ),
                    );
                }
                self.shadow.os.unlock(desc, kind);
                self.act(i, step, Action::Unlock(p, t))
            }
            (Call::Close, Outcome::Done) => {
                self.shadow.os.close(desc);
                self.act(i, step, Action::Close(p, t))
            }
            (Call::Unlink, Outcome::Done | Outcome::Failed(FsError::NotFound)) => {
                if let Some(check) = self.shadow.releasing.remove(&(p, t)) {
                    self.simple_window(i, step, check)?;
                    self.shadow.released.insert((p, t), true);
                }
                let got = self.shadow.os.unlink();
                let expect = match step.outcome {
                    Outcome::Done => Ok(()),
                    _ => Err(FsError::NotFound),
                };
                if got != expect {
                    return err(
                        self,
                        format!(
                            "recorded unlink {:?} but the calls before it produce {got:?}",
                            step.outcome
                        ),
                    );
                }
                self.act(i, step, Action::Unlink(p, t))
            }
            (Call::CreateExclusive, Outcome::Opened(x)) => {
                let got = self.shadow.os.create_exclusive();
                if got != Ok(x) {
                    return err(
                        self,
                        format!("recorded create {x} but the calls before it produce {got:?}"),
                    );
                }
                self.shadow.remembered.insert((p, t), x);
                self.act(i, step, Action::CreateExclusive(p, t))
            }
            (Call::CreateExclusive, Outcome::Failed(FsError::AlreadyExists)) => {
                if self.shadow.os.path_inode().is_none() {
                    return err(
                        self,
                        "recorded create failed with AlreadyExists, but the calls before it leave no file"
                            .to_owned(),
                    );
                }
                self.act(i, step, Action::CreateExclusive(p, t))?;
                let pc = self.cur.state.thread(p, t).pc;
                if pc != Pc::Idle {
                    return err(
                        self,
                        format!("create_new_file found the file, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            // ---- harness events ----
            (Call::Obtained { ok }, _) => {
                let pc = self.cur.state.thread(p, t).pc;
                if ok != pc.is_writer() {
                    return err(
                        self,
                        format!(
                            "obtain returned {}, but the model thread is at {pc:?}",
                            if ok { "Ok" } else { "an error" }
                        ),
                    );
                }
                if !ok && pc != Pc::Idle {
                    return err(
                        self,
                        format!("obtain failed, but the model thread is at {pc:?}, not Idle"),
                    );
                }
                Ok(())
            }
            (Call::Validated { ok }, _) => {
                if !self.cur.model.variant.splits_ensure_valid() {
                    return Ok(()); // placed by the linearization (see the module docs)
                }
                let pc = self.cur.state.thread(p, t).pc;
                let want = if ok { Pc::Writing } else { Pc::Holding };
                if pc != want {
                    return err(
                        self,
                        format!(
                            "ensure_valid returned {}, but the model thread is at {pc:?}",
                            if ok { "Ok" } else { "an error" }
                        ),
                    );
                }
                Ok(())
            }
            (Call::Write, _) => {
                // `native-probe-last`'s checks are steps in both passes, so its writes are too.
                if full || self.cur.model.variant.splits_ensure_valid() {
                    self.act(i, step, Action::Write(p, t))
                } else {
                    Ok(())
                }
            }
            (Call::Release, _) => {
                let pc = self.cur.state.thread(p, t).pc;
                if pc != Pc::Holding {
                    return err(
                        self,
                        format!("release began, but the model thread is at {pc:?}, not Holding"),
                    );
                }
                if self.cur.model.variant == Variant::Simple {
                    self.shadow
                        .releasing
                        .insert((p, t), ReleaseCheck::default());
                    self.shadow.released.remove(&(p, t));
                }
                Ok(())
            }
            (Call::Closed { ok }, _) => {
                if self.cur.model.variant != Variant::Simple {
                    return Ok(());
                }
                let pc = self.cur.state.thread(p, t).pc;
                if pc != Pc::Idle || self.shadow.releasing.contains_key(&(p, t)) {
                    return err(
                        self,
                        format!("the release returned, but the model thread is still at {pc:?} (no unlink and no refusal recorded)"),
                    );
                }
                let unlinked = self.shadow.released.get(&(p, t)).copied();
                if unlinked != Some(ok) {
                    return err(
                        self,
                        format!(
                            "the release returned {}, but the model's release was {}",
                            if ok { "Ok" } else { "an error" },
                            match unlinked {
                                Some(true) => "Unlink",
                                Some(false) => "ReleaseRefused",
                                None => "not taken",
                            }
                        ),
                    );
                }
                Ok(())
            }
            (call, outcome) => err(self, format!("unexpected outcome {outcome:?} for {call:?}")),
        }
    }

    /// A SimpleFs release observation (`stat` or `read_file` of the file at the path, `x` in
    /// simulation numbering) by a thread that is releasing: its own file → note it in `slot`;
    /// anything else → the real release is refused here, the model's `ReleaseRefused`.
    /// A recorded observation of the inode the lock path names (`stat`, or the file `read_file`
    /// read): it must be what the simulated kernel had at that point, and, in model numbering,
    /// what the model's path names.
    fn path_observation(
        &mut self,
        i: usize,
        step: &Step,
        call: &str,
        x: Option<Inode>,
    ) -> Result<(), Divergence> {
        self.cur.summary.observations += 1;
        if x != self.shadow.os.path_inode() {
            return Err(self.fail(
                i,
                step,
                format!("recorded {call} of {x:?} is not what the calls before it produce"),
            ));
        }
        let ours = x
            .map(|x| self.shadow.map_inode(&self.cur.state, x))
            .transpose()
            .map_err(|e| self.fail(i, step, e))?;
        let model = self.cur.model.observe_stat(&self.cur.state);
        if ours != model {
            return Err(self.fail(
                i,
                step,
                format!(
                    "{call} saw inode {ours:?} (model numbering), the model's path names {model:?}"
                ),
            ));
        }
        Ok(())
    }

    fn release_observation(
        &mut self,
        i: usize,
        step: &Step,
        x: Option<Inode>,
        slot: impl FnOnce(&mut ReleaseCheck) -> &mut Option<usize>,
    ) -> Result<(), Divergence> {
        let Actor::Thread { pid: p, tid: t } = step.actor else {
            return Ok(());
        };
        let Some(check) = self.shadow.releasing.get_mut(&(p, t)) else {
            return Ok(());
        };
        let mine = self.shadow.remembered.get(&(p, t)).copied();
        if x.is_some() && x == mine {
            *slot(check) = Some(i);
            return Ok(());
        }
        self.shadow.releasing.remove(&(p, t));
        self.shadow.released.insert((p, t), false);
        self.act(i, step, Action::ReleaseRefused(p, t))
    }

    /// A SimpleFs release's `unlink`: the model's `Unlink` must be enabled (the path still
    /// names the thread's file). If the real check saw the thread's file and the path changed
    /// since, name the check-then-unlink window.
    fn simple_window(&self, i: usize, step: &Step, check: ReleaseCheck) -> Result<(), Divergence> {
        let Actor::Thread { pid: p, tid: t } = step.actor else {
            return Ok(());
        };
        let action = Action::Unlink(p, t);
        if self.cur.allows(&action) {
            return Ok(());
        }
        let (Some(stat), Some(read)) = (check.stat, check.read) else {
            return Ok(()); // not the window: `act` reports the plain divergence
        };
        let now = match self.shadow.os.path_inode() {
            Some(x) => format!("inode {x}"),
            None => "no file".to_owned(),
        };
        let mine = self
            .shadow
            .remembered
            .get(&(p, t))
            .map_or_else(|| "-".to_owned(), ToString::to_string);
        Err(self.fail(
            i,
            step,
            format!(
                "{CHECK_THEN_UNLINK_WINDOW}: p{p}.t{t}'s release saw its own file (inode {mine}) at step #{stat} (stat) and #{read} (read_file), but the path names {now} at this unlink (recorded {:?}); the model's simple release checks and unlinks in one atomic step (it allows no {action} here), the real stat → read_file → unlink cannot",
                step.outcome
            ),
        ))
    }

    fn fault(&mut self, i: usize, step: &Step) -> Result<(), Divergence> {
        match step.call {
            Call::Crash(p) => {
                self.shadow.os.crash(p);
                self.shadow.alive[usize::from(p)] = false;
                self.shadow.crashed[usize::from(p)] = true;
                self.shadow.held[usize::from(p)] = [false; 2];
                self.shadow.releasing.retain(|&(q, _), _| q != p);
                self.act(i, step, Action::Crash(p))
            }
            Call::Restart(p) => {
                if self.shadow.alive[usize::from(p)] {
                    return Ok(()); // restarting a live process is a no-op
                }
                self.shadow.alive[usize::from(p)] = true;
                self.act(i, step, Action::Restart(p))
            }
            Call::UnlinkLockFile => match step.outcome {
                Outcome::Failed(FsError::NotFound) => Ok(()),
                _ => {
                    if self.shadow.os.unlink().is_err() {
                        return Err(self.fail(
                            i,
                            step,
                            "recorded unlink succeeded on a missing file".to_owned(),
                        ));
                    }
                    self.act(i, step, Action::UnlinkLockFile)
                }
            },
            Call::ReplaceLockFile => {
                self.shadow.os.replace();
                self.act(i, step, Action::ReplaceLockFile)
            }
            Call::ForeignOpenClose(p) => {
                if step.outcome == Outcome::Dead || self.shadow.os.path_inode().is_none() {
                    return Ok(()); // dead process, or no file to open: nothing happens
                }
                self.shadow.os.foreign_open_close(p);
                self.act(i, step, Action::ForeignOpenClose(p))
            }
            Call::LoseLock(p) => {
                if step.outcome == Outcome::Dead {
                    return Ok(()); // a dead process owns no locks: nothing happens
                }
                let lost = self.shadow.os.lose_locks(p);
                if step.outcome != Outcome::Bool(lost) {
                    return Err(self.fail(
                        i,
                        step,
                        format!(
                            "recorded {:?} but the calls before it lose {lost}",
                            step.outcome
                        ),
                    ));
                }
                if !lost {
                    return Ok(()); // owned nothing: no step
                }
                self.act(i, step, Action::LoseLock(p))
            }
            Call::WriteLockFile => {
                let changed = self
                    .shadow
                    .os
                    .path_inode()
                    .is_some_and(|x| !self.shadow.os.is_written(x));
                if step.outcome != Outcome::Bool(changed) {
                    return Err(self.fail(
                        i,
                        step,
                        format!(
                            "recorded {:?} but the calls before it give {changed}",
                            step.outcome
                        ),
                    ));
                }
                if !changed {
                    return Ok(()); // no file, or written already: no step
                }
                self.shadow.os.write_path();
                self.act(i, step, Action::WriteLockFile)
            }
            // Arming an error is the environment's choice, not a step: the call that returns
            // the error is.
            Call::Inject(_) => Ok(()),
            call => Err(self.fail(i, step, format!("{call:?} by the environment"))),
        }
    }
}
