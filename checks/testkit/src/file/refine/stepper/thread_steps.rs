//! One recorded step of a simulated thread (a call, an observation or a harness event)
//! matched against the model: the action it is, or the observation it must equal.

use lockwright_model::file::kernel::Inode;
use lockwright_model::file::kernel::{Desc, DescStat, FsError, OpenMode};
use lockwright_model::file::{step as step_table, Action, Pc, Variant};

use super::super::shadow::ReleaseCheck;
use super::super::Divergence;
use super::Replay;
use crate::file::record::{Actor, Call, Outcome, Step};

impl Replay {
    pub(super) fn step_inner(
        &mut self,
        i: usize,
        step: &Step,
        full: bool,
    ) -> Result<(), Divergence> {
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
                if self.cur.state.thread(p, t).pc == Pc::Locked {
                    // `native-blocking`'s re-check after the lock call.
                    return self.recheck(i, step, x);
                }
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
                let want = step_table(self.cur.model.variant, Pc::Opened).then;
                if pc != want {
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
                    return Ok(()); // placed by the linearization (see the `refine` module docs)
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

    /// `native-blocking`: the `stat(path)` after the blocking lock call is the model's
    /// `Recheck` (the path observation was compared already). The model's outcome must be the
    /// one the recorded inode implies: the path names the thread's file ⇔ `Holding`; the real
    /// code's next calls (the obtain returning, or the retry's `unlock`, `close`, `open`) must
    /// then be the model's next steps.
    fn recheck(&mut self, i: usize, step: &Step, x: Option<Inode>) -> Result<(), Divergence> {
        let Actor::Thread { pid: p, tid: t } = step.actor else {
            return Ok(());
        };
        let desc = Desc { pid: p, slot: t };
        let same = x.is_some() && x == self.shadow.os.desc_inode(desc);
        self.act(i, step, Action::Recheck(p, t))?;
        let pc = self.cur.state.thread(p, t).pc;
        if same != (pc == Pc::Holding) {
            return Err(self.fail(
                i,
                step,
                format!(
                    "the re-check's stat saw {} file, the model thread went to {pc:?}",
                    if same { "the locked" } else { "another" }
                ),
            ));
        }
        Ok(())
    }
}
