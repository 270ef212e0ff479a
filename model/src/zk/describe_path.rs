//! Numbered step listings of a whole path, with stable zxids and suffixes (what the docs and
//! traces print), built on the one-step descriptions of `describe.rs`.

use crate::zk::action::Action;
use crate::zk::scenario::Scenario;
use crate::zk::state::State;

impl Scenario {
    /// Numbered descriptions of `path` (`1. c0 CreateLockNode: …`) with stable numbers: zxids
    /// and suffixes are shown as a real server would hand them out (never renumbered), so a
    /// node keeps its name from line to line. The model itself renumbers after every step
    /// (`State::compact`); a display copy of the run is kept beside it and checked against
    /// the model at each step. Where the two would part (after a re-created parent, the
    /// model reaches an old suffix after fewer creates than the display copy would), the
    /// lines continue in the model's own numbering, which is always correct. `None` if the
    /// path does not replay.
    pub fn describe_path(&self, path: &[Action]) -> Option<Vec<String>> {
        let steps = self.describe_path_with_states(path)?;
        Some(steps.into_iter().map(|(line, _)| line).collect())
    }

    /// [`Scenario::describe_path`] with, after each line, the state the line's numbers belong
    /// to: the display copy after the step (stable numbers), or the model's own state where
    /// the two part. The report draws the server's view from these, so the diagram and the
    /// numbered steps name the same nodes. `None` if the path does not replay.
    pub fn describe_path_with_states(&self, path: &[Action]) -> Option<Vec<(String, State)>> {
        let states = crate::checker::replay(self, path)?;
        let mut display = states[0].clone();
        let mut lines = Vec::with_capacity(path.len());
        for (i, &action) in path.iter().enumerate() {
            let mut next = display.clone();
            let small = next.server.next_zxid() < 120 && next.server.next_seq() < 120;
            let same = small && {
                self.apply_uncompacted(&mut next, action);
                let mut canonical = next.clone();
                canonical.compact();
                canonical == states[i + 1]
            };
            if same {
                let line = format!("{}. {}", i + 1, self.describe(&display, action));
                display = next;
                lines.push((line, display.clone()));
            } else {
                let line = format!("{}. {}", i + 1, self.describe(&states[i], action));
                display = states[i + 1].clone();
                lines.push((line, display.clone()));
            }
        }
        Some(lines)
    }
}
