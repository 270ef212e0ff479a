//! What a check reports: a [`Verdict`] per property, the counts, the memory the checker's
//! tables held.

use std::fmt;
use std::time::Duration;

use stateright::{Expectation, Model};

/// What the run concluded about one property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict<A> {
    pub name: &'static str,
    /// `Always` or `Sometimes`.
    pub expectation: Expectation,
    /// For `always`: a shortest counterexample; for `sometimes`: a shortest example.
    pub path: Option<Vec<A>>,
}

impl<A> Verdict<A> {
    /// Whether the property holds: an `always` with no counterexample, a `sometimes` with an
    /// example.
    pub fn holds(&self) -> bool {
        match self.expectation {
            Expectation::Sometimes => self.path.is_some(),
            _ => self.path.is_none(),
        }
    }

    /// `"holds"`, `"VIOLATED"` (always) or `"NOT FOUND"` (sometimes).
    pub fn word(&self) -> &'static str {
        match (self.holds(), &self.expectation) {
            (true, _) => "holds",
            (false, Expectation::Sometimes) => "NOT FOUND",
            (false, _) => "VIOLATED",
        }
    }

    /// `"always"` or `"sometimes"`.
    pub fn kind(&self) -> &'static str {
        match self.expectation {
            Expectation::Sometimes => "sometimes",
            Expectation::Eventually => "eventually",
            Expectation::Always => "always",
        }
    }
}

/// The result of an exhaustive run.
pub struct Report<M: Model> {
    /// The model that was checked.
    pub model: M,
    /// Distinct reachable states (the whole space: the run never stops early); with
    /// symmetry reduction, distinct representatives.
    pub unique_states: usize,
    /// Transitions generated (including ones to already-seen states).
    pub transitions: u64,
    /// Length of the longest shortest path from the initial state.
    pub max_depth: usize,
    pub elapsed: Duration,
    /// One per property, in [`Model::properties`] order.
    pub verdicts: Vec<Verdict<M::Action>>,
    /// Bytes the visited set (64-bit fingerprints in a hash set) and the parent table (one
    /// `(parent id, action)` per state, for counterexamples) held at the end.
    pub memory: Memory,
}

/// What the checker's two per-state tables cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The visited set's allocation: a flat table at most 3/4 full of 8-byte fingerprints
    /// (one thread), or of 16-byte slots, a fingerprint and its claim (several threads).
    pub visited_set_bytes: usize,
    /// The parent table's allocation.
    pub parents_bytes: usize,
}

impl Memory {
    /// Visited-set bytes per unique state.
    pub fn visited_bytes_per_state(&self, states: usize) -> f64 {
        self.visited_set_bytes as f64 / states.max(1) as f64
    }
}

impl<M: Model + Clone> Clone for Report<M>
where
    M::Action: Clone,
{
    fn clone(&self) -> Self {
        Report {
            model: self.model.clone(),
            unique_states: self.unique_states,
            transitions: self.transitions,
            max_depth: self.max_depth,
            elapsed: self.elapsed,
            verdicts: self.verdicts.clone(),
            memory: self.memory,
        }
    }
}

impl<M: Model + fmt::Debug> fmt::Debug for Report<M>
where
    M::Action: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Report")
            .field("model", &self.model)
            .field("unique_states", &self.unique_states)
            .field("transitions", &self.transitions)
            .field("max_depth", &self.max_depth)
            .field("elapsed", &self.elapsed)
            .field("verdicts", &self.verdicts)
            .field("memory", &self.memory)
            .finish()
    }
}

impl<M: Model> Report<M> {
    /// The verdict for `name`. Panics on an unknown property name.
    pub fn verdict(&self, name: &str) -> &Verdict<M::Action> {
        self.verdicts
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no property named {name:?}"))
    }

    /// The names of the `always` properties that were violated.
    pub fn violated(&self) -> Vec<&'static str> {
        self.verdicts
            .iter()
            .filter(|v| v.expectation == Expectation::Always && !v.holds())
            .map(|v| v.name)
            .collect()
    }

    /// Whether every `always` holds and every `sometimes` has an example.
    pub fn all_hold(&self) -> bool {
        self.verdicts.iter().all(Verdict::holds)
    }

    /// Unique states per second.
    pub fn states_per_second(&self) -> f64 {
        self.unique_states as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Progress of a running check.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub unique_states: usize,
    pub queued: usize,
    pub depth: usize,
    pub elapsed: Duration,
}
