//! What every family's refinement replayer shares: a [`Cursor`] that walks a Stateright model
//! along a recorded run of the real code, one model action per mutating call, and checks the
//! enforced `always` properties on every state it reaches; the [`Divergence`] it reports
//! when the run leaves the model; the [`Summary`] of a run that did not.
//!
//! A family's replayer (`crate::file::refine` for file locks) maps its recorded calls to
//! model actions and observations; linearization (where a call that made several system
//! calls takes effect) and the shadow of the simulated system are family-specific.

use std::fmt;

use lockwright_model::Family;
use stateright::{Expectation, Model};

/// The model instance a family's recordings are checked against, and which of its `always`
/// properties are enforced on every state. A family adds its own `check` (its replayer) in
/// an inherent impl for its scenario type (the ZooKeeper and document-store families).
#[derive(Clone, Debug)]
pub struct Refinement<M> {
    /// The scenario; each family says how its fault budgets relate to the recording.
    pub model: M,
    /// The `always` properties checked on every state (default: all).
    pub enforce: Vec<&'static str>,
}

impl<M: Family> Refinement<M> {
    /// All of the family's `always` properties enforced.
    pub fn new(model: M) -> Self {
        Refinement {
            model,
            enforce: M::ALWAYS.to_vec(),
        }
    }

    /// Only these `always` properties enforced.
    #[must_use]
    pub fn enforcing(mut self, props: &[&'static str]) -> Self {
        self.enforce = props.to_vec();
        self
    }
}

/// Where and why a recording left the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the first diverging step in the recording.
    pub step: usize,
    /// The step, formatted.
    pub what: String,
    /// Why.
    pub reason: String,
    /// The `always` property violated, if that is the reason.
    pub property: Option<&'static str>,
}

impl Divergence {
    /// Whether this divergence is the named, known gap between the model and the real code
    /// (its reason starts with `name`), rather than a property violation.
    pub fn is_named(&self, name: &str) -> bool {
        self.property.is_none() && self.reason.starts_with(name)
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refinement: step #{} ({}): {}",
            self.step, self.what, self.reason
        )
    }
}

/// What a successful replay saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Model actions taken.
    pub actions: usize,
    /// Observations compared.
    pub observations: usize,
    /// States whose properties were checked.
    pub states: usize,
}

/// The model's side of a replay: the current state, advanced only by enabled actions.
pub struct Cursor<M: Model> {
    pub model: M,
    pub state: M::State,
    /// The `always` properties checked on every state.
    pub enforce: Vec<&'static str>,
    pub summary: Summary,
}

impl<M: Model> Cursor<M>
where
    M::Action: Clone + PartialEq + fmt::Display,
    M::State: Clone,
{
    /// At the model's first initial state.
    ///
    /// # Panics
    /// If the model has no initial state.
    pub fn new(model: M, enforce: Vec<&'static str>) -> Self {
        let state = model
            .init_states()
            .into_iter()
            .next()
            .expect("a model with an initial state");
        Cursor {
            model,
            state,
            enforce,
            summary: Summary::default(),
        }
    }

    /// Takes `action`, which must be enabled in the current state.
    ///
    /// # Errors
    /// `the model does not allow {action} here`, with the state left as it was.
    pub fn act(&mut self, action: M::Action) -> Result<(), String> {
        let mut enabled = Vec::new();
        self.model.actions(&self.state, &mut enabled);
        let next = if enabled.contains(&action) {
            self.model.next_state(&self.state, action.clone())
        } else {
            None
        };
        match next {
            Some(next) => {
                self.state = next;
                self.summary.actions += 1;
                Ok(())
            }
            None => Err(format!("the model does not allow {action} here")),
        }
    }

    /// Whether `action` is enabled in the current state (without taking it).
    pub fn allows(&self, action: &M::Action) -> bool {
        let mut enabled = Vec::new();
        self.model.actions(&self.state, &mut enabled);
        enabled.contains(action)
    }

    /// Counts one compared observation.
    pub fn observed(&mut self) {
        self.summary.observations += 1;
    }

    /// Checks the enforced `always` properties on the current state.
    ///
    /// # Errors
    /// The first enforced property (in the model's order) the state violates.
    pub fn check_properties(&mut self) -> Result<(), &'static str> {
        self.summary.states += 1;
        for p in self.model.properties() {
            if p.expectation == Expectation::Always
                && self.enforce.contains(&p.name)
                && !(p.condition)(&self.model, &self.state)
            {
                return Err(p.name);
            }
        }
        Ok(())
    }
}
