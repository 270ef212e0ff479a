//! What the checker needs of a model ([`Checkable`]) and how to run it ([`Options`]).

use std::fmt;
use std::hash::Hash;

use stateright::Model;

use super::{fingerprint, replay};

/// What the checker needs of a model beyond [`Model`]: both methods have defaults.
pub trait Checkable: Model<State: Hash + Clone, Action: Clone + fmt::Debug> {
    /// Writes the successor of `s` under `action` into `out` and returns `true`; `false` if
    /// the action has no successor (Stateright's `next_state` returning `None`). `action`
    /// comes from [`Model::actions`]`(s)`; `out` holds some earlier state, to be overwritten.
    /// The default calls [`Model::next_state`]; a model overrides it to reuse `out`'s
    /// allocations (`out.clone_from(s)`, then mutate: the checker passes one scratch state for
    /// all successors, and most successors are already known).
    fn successor_into(&self, s: &Self::State, action: Self::Action, out: &mut Self::State) -> bool {
        match self.next_state(s, action) {
            Some(next) => {
                *out = next;
                true
            }
            None => false,
        }
    }

    /// Symmetry reduction: the representative of `s`'s class (for example, interchangeable
    /// processes sorted), or `None` to fingerprint `s` itself. The checker deduplicates by
    /// the representative's fingerprint but keeps exploring from the concrete state, so every
    /// path it reports replays from the initial state as it is. Only sound when every
    /// property gives the same answer on every member of a class.
    fn representative(&self, s: &Self::State) -> Option<Self::State> {
        let _ = s;
        None
    }

    /// The visited set's key for `s`: equal for states the checker may merge. The default is
    /// the fingerprint of [`Checkable::representative`] (or of `s` itself); a model with
    /// symmetry may override it with a cheaper fingerprint of the class that never builds
    /// the representative state.
    fn visited_key(&self, s: &Self::State) -> u64 {
        match self.representative(s) {
            Some(r) => fingerprint(&r),
            None => fingerprint(s),
        }
    }

    /// One line saying what `action` did between `before` and `after`, for counterexample
    /// listings. The default is [`Model::format_action`].
    fn describe_step(
        &self,
        before: &Self::State,
        action: &Self::Action,
        after: &Self::State,
    ) -> String {
        let _ = (before, after);
        self.format_action(action)
    }

    /// Numbered descriptions of a path from the initial state (`1. p0 t0 HeldInsert: …`).
    /// The default replays the path and describes each step with [`Checkable::describe_step`];
    /// a model that renumbers its state (to stay finite) may override it to show stable
    /// names. `None` if the path does not replay.
    fn describe_path(&self, path: &[Self::Action]) -> Option<Vec<String>>
    where
        Self::Action: PartialEq,
    {
        let states = replay(self, path)?;
        Some(
            path.iter()
                .enumerate()
                .map(|(i, a)| {
                    format!(
                        "{}. {}",
                        i + 1,
                        self.describe_step(&states[i], a, &states[i + 1])
                    )
                })
                .collect(),
        )
    }
}

/// How to run a check.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Worker threads that generate successors (1: everything on the calling thread). The
    /// result does not depend on it: same counts, same shortest paths.
    pub threads: usize,
}

impl Default for Options {
    /// Every core the machine has.
    fn default() -> Options {
        Options {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl Options {
    /// One thread.
    pub const SINGLE: Options = Options { threads: 1 };

    /// `threads` worker threads (at least one).
    pub fn threads(threads: usize) -> Options {
        Options {
            threads: threads.max(1),
        }
    }
}
