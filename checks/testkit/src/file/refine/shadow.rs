//! The simulation's side of a replay, rebuilt from the recording alone (a shadow kernel fed
//! the recorded calls), and its comparison with the model state after every step.

use std::collections::{BTreeMap, BTreeSet};

use lockwright_model::file::kernel::{Desc, Inode, LockRec, Os, Pid};
use lockwright_model::file::State;

use super::super::Tid;

/// The simulation side, rebuilt from the recording.
#[derive(Clone, Debug)]
pub(super) struct Shadow {
    pub(super) os: Os,
    pub(super) alive: Vec<bool>,
    /// Whether each process has crashed at least once (a later call of an old thread of it
    /// fails as dead).
    pub(super) crashed: Vec<bool>,
    /// Per process, its held sets (the second only in `native-two-held-sets`).
    pub(super) held: Vec<[bool; 2]>,
    /// Inode each thread remembers (mirrors the model's `Thread::inode`).
    pub(super) remembered: BTreeMap<(Pid, Tid), Inode>,
    /// SimpleFs threads between their `Release` event and the end of their release (model
    /// `Unlink` or `ReleaseRefused`): which release observations saw their own file.
    pub(super) releasing: BTreeMap<(Pid, Tid), ReleaseCheck>,
    /// SimpleFs: how each thread's last release ended (`true`: `Unlink`), for `Closed`.
    pub(super) released: BTreeMap<(Pid, Tid), bool>,
}

/// The steps of a SimpleFs release's check that saw the thread's own file.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ReleaseCheck {
    pub(super) stat: Option<usize>,
    pub(super) read: Option<usize>,
}

impl Shadow {
    /// The order-preserving renaming of simulation inodes to model inodes: both sides create
    /// inodes in the same order and the model renumbers densely in creation order.
    pub(super) fn renaming(&self, model: &State) -> Result<BTreeMap<Inode, Inode>, String> {
        let mut sim: BTreeSet<Inode> = self.remembered.values().copied().collect();
        sim.extend(self.os.path_inode());
        sim.extend(self.os.descs().map(|(_, i)| i));
        let mut ours: BTreeSet<Inode> = model.threads.iter().filter_map(|t| t.inode).collect();
        ours.extend(model.os.path_inode());
        ours.extend(model.os.descs().map(|(_, i)| i));
        if sim.len() != ours.len() {
            return Err(format!(
                "the simulation has {} live or remembered inodes, the model {}",
                sim.len(),
                ours.len()
            ));
        }
        Ok(sim.into_iter().zip(ours).collect())
    }

    pub(super) fn map_inode(&self, model: &State, i: Inode) -> Result<Inode, String> {
        self.renaming(model)?
            .get(&i)
            .copied()
            .ok_or_else(|| format!("inode {i} is not live in the simulation"))
    }

    /// Compares the whole kernel state, held sets and liveness.
    pub(super) fn compare(&self, model: &State) -> Result<(), String> {
        let m = self.renaming(model)?;
        let map = |i: Inode| m[&i];
        let sim_path = self.os.path_inode().map(map);
        if sim_path != model.os.path_inode() {
            return Err(format!(
                "lock path: simulation has inode {sim_path:?}, model {:?}",
                model.os.path_inode()
            ));
        }
        let sim_descs: BTreeMap<Desc, Inode> = self.os.descs().map(|(d, i)| (d, map(i))).collect();
        let model_descs: BTreeMap<Desc, Inode> = model.os.descs().collect();
        if sim_descs != model_descs {
            return Err(format!(
                "open descriptions: simulation {sim_descs:?}, model {model_descs:?}"
            ));
        }
        let sim_locks: BTreeSet<LockRec> = self.os.locks().map(|l| l.map_inode(map)).collect();
        let model_locks: BTreeSet<LockRec> = model.os.locks().collect();
        if sim_locks != model_locks {
            return Err(format!(
                "lock table: simulation {sim_locks:?}, model {model_locks:?}"
            ));
        }
        for (p, proc) in model.procs.iter().enumerate() {
            if proc.alive != self.alive[p] {
                return Err(format!(
                    "process p{p}: simulation alive={}, model alive={}",
                    self.alive[p], proc.alive
                ));
            }
            if [proc.held, proc.held2] != self.held[p] {
                return Err(format!(
                    "held sets of p{p}: simulation {:?}, model {:?}",
                    self.held[p],
                    [proc.held, proc.held2]
                ));
            }
        }
        Ok(())
    }
}
