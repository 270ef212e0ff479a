//! SimpleFs's release (`stat → read_file → unlink`) against the model's one atomic step:
//! where a release is refused, and the check-then-unlink window.

use lockwright_model::file::kernel::Inode;
use lockwright_model::file::Action;

use super::super::shadow::ReleaseCheck;
use super::super::{Divergence, CHECK_THEN_UNLINK_WINDOW};
use super::Replay;
use crate::file::record::{Actor, Step};

impl Replay {
    /// A SimpleFs release observation (`stat` or `read_file` of the file at the path, `x` in
    /// simulation numbering) by a thread that is releasing: its own file → note it in `slot`;
    /// anything else → the real release is refused here, the model's `ReleaseRefused`.
    pub(super) fn release_observation(
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
    pub(super) fn simple_window(
        &self,
        i: usize,
        step: &Step,
        check: ReleaseCheck,
    ) -> Result<(), Divergence> {
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
}
