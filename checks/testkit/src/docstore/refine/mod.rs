//! Refinement: every simulated run of the real document-store client is a path of the
//! Stateright model (`lockwright_model::docstore`).
//!
//! [`Refinement::check`] feeds a recording ([`Step`]s in linearization order) through the
//! model's transition function with the shared [`Cursor`](crate::refine::Cursor), one step at
//! a time:
//!
//! - a client's request is `Call(c, step, delivery)`: the step is the one of the model's step
//!   table at the client's program counter whose request (`Scenario::request`) equals the
//!   recorded one — index, id, body, script and params, with the recorded absolute times and
//!   sequence numbers mapped onto the model's relative, renumbered ones; none equal → the
//!   client sent something the recipe does not. The delivery is the recorded one (`Answered`,
//!   `ReplyLost`, `RequestLost`); an answered request's recorded answer must equal
//!   `Scenario::response` (result and error exactly, `_primary_term` exactly, `_seq_no` up to
//!   the model's renumbering: an existing document's number maps to the model's, a fresh one
//!   must be fresh in both);
//! - a clock read by a holding client of a leased recipe is its lease check,
//!   `Call(c, CheckLease, Answered)` (the model decides pass or fail; the client's next
//!   request must then be one the model allows — a write only after a pass); a clock read
//!   while not holding belongs to the acquire request that follows, whose `now` must be the
//!   clock then;
//! - faults are the model's fault actions (the store's own — `RecreateIndex`, `RecreateDoc`,
//!   `Rollback` — too, the shadow store doing each with the same [`Service`](super::service::Service) code as the
//!   simulation, so a rollback loses the write the model's would); a simulated tick is the model's `Tick`, or no step
//!   when every time in the model has passed already (the model's relative clock cannot
//!   advance then, and nothing changes); a pause must jump exactly to the paused client's
//!   deadline;
//! - the harness event `Acquired` must agree with the model: a lock ⇔ the model's client
//!   holds, with the model's token (when it keeps one) and deadline.
//!
//! After every step the simulation's state (rebuilt from the recording alone: a shadow store
//! fed the recorded requests, whose answers must be the recorded ones) must equal the model's
//! up to its renumbering — the lock documents (owner, lease relative to the clock, `_seq_no`,
//! `_primary_term`), the data document's fence, the tokens clients keep, which clients are
//! alive in which incarnation — and every enforced `always` property must hold. The first
//! mismatch is reported with its step number.

mod shadow;
mod stepper;
#[cfg(test)]
mod tests;

use lockwright_model::docstore::{Faults, Scenario};

pub use crate::refine::{Divergence, Summary};

use super::record::{format_trace, Call, Outcome, Step};
use stepper::Replay;

/// The model instance a recording is checked against: the scenario without faults (the
/// recording's faults become its budgets).
pub type Refinement = crate::refine::Refinement<Scenario>;

impl Refinement {
    /// The model scenario for `trace`: fault budgets = the faults the recording injects.
    pub fn scenario(&self, trace: &[Step]) -> Scenario {
        let mut f = Faults::NONE;
        for s in trace {
            let slot = match (&s.call, &s.outcome) {
                (_, Outcome::Skipped | Outcome::Dead) => continue,
                (Call::Crash(_), _) => &mut f.crash,
                (Call::Restart(_), _) => &mut f.restart,
                (Call::StrayDelete, _) => &mut f.stray_delete,
                (Call::Pause { .. }, _) => &mut f.pause,
                (Call::Failover, _) => &mut f.failover,
                (Call::RecreateIndex, _) => &mut f.recreate_index,
                (Call::RecreateDoc, _) => &mut f.recreate_doc,
                (Call::Rollback { .. }, _) => &mut f.rollback,
                (Call::Request(_), Outcome::ReplyLost(_) | Outcome::RequestLost) => {
                    &mut f.lose_reply
                }
                _ => continue,
            };
            *slot = slot.saturating_add(1);
        }
        self.model.with_faults(f)
    }

    /// Replays `trace` through the model. See the module docs.
    ///
    /// # Errors
    /// The first step at which the recording is not a model path, or a state violates an
    /// enforced property.
    pub fn check(&self, trace: &[Step]) -> Result<Summary, Divergence> {
        let mut replay = Replay::new(self.scenario(trace), self.enforce.clone());
        replay.check_properties(None)?;
        for (i, step) in trace.iter().enumerate() {
            replay.step(i, step)?;
        }
        Ok(replay.cur.summary)
    }
}

/// The refinement check as a workload [`Checker`](super::workload::Checker).
pub fn checker(refinement: Refinement) -> super::workload::Checker {
    std::sync::Arc::new(move |trace: &[Step]| check_trace(&refinement, trace).map(|_| ()))
}

/// Checks `trace` against `refinement`, formatting a divergence with the whole recording.
///
/// # Errors
/// The divergence and the recording, as one message.
pub fn check_trace(refinement: &Refinement, trace: &[Step]) -> Result<Summary, String> {
    refinement
        .check(trace)
        .map_err(|d| format!("{d}\nrecording:\n{}", format_trace(trace)))
}
