//! A recorded environment step (an injected fault) as the model's fault action, or no step
//! when it changes nothing.

use lockwright_model::file::kernel::FsError;
use lockwright_model::file::Action;

use super::super::Divergence;
use super::Replay;
use crate::file::record::{Call, Outcome, Step};

impl Replay {
    pub(super) fn fault(&mut self, i: usize, step: &Step) -> Result<(), Divergence> {
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
