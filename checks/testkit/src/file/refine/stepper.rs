//! The replayer proper: each recorded step becomes a model action, an observation compared
//! with the model state, a fault, or a harness event (see the parent module's docs).
//!
//! Here: the replayer's state, taking a model action, properties and divergence reports;
//! `thread_steps`: a thread's step; `simple_release`: SimpleFs's release; `faults`: the
//! environment's steps.

mod faults;
mod simple_release;
mod thread_steps;

use std::collections::BTreeMap;

use lockwright_model::file::kernel::{Inode, Os};
use lockwright_model::file::{Action, Pc, Scenario};

use super::super::record::{Actor, Step};
use super::shadow::Shadow;
use super::{Divergence, Refinement};
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
}
