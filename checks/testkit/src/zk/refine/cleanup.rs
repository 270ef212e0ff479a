//! Which recorded requests are a cleanup task's (issue #20's overlap). A dropped acquire's or
//! release's cleanup runs in a task of its own beside the client's next acquire; the model
//! gives it actions of its own (`CleanupFind`, `CleanupDelete`, `LoseCleanupReply`). A request
//! of client `c` is its cleanup's when the model's client has that cleanup pending and
//!
//! - it is a search for an older attempt's id (`Call::CleanupFind`, recorded with fresh ids
//!   per attempt), or a search while the model's acquire has none to make;
//! - it is a delete of a node with another id than the client's latest create's, or a delete
//!   while the model's acquire has none to make.
//!
//! With one id per client (the workloads that wait for the cleanup before acquiring again)
//! the second half of each rule decides alone.

use lockwright_model::zk::{Action, Cleanup, ClientId};

use super::super::record::{Call, Outcome, Step};
use super::Replay;

impl Replay {
    /// Notes the protection id of `c`'s latest create (its current attempt's).
    pub(super) fn note_attempt(&mut self, step: &Step) {
        if let (Some(c), Call::Create { uuid }) = (step.client, &step.call) {
            self.attempt_uuid[usize::from(c)] = *uuid;
        }
    }

    /// The model action of `step` if it is a request of `c`'s cleanup task.
    pub(super) fn cleanup_action(&self, c: ClientId, step: &Step) -> Option<Action> {
        let pending = self.cur.state.clients[usize::from(c)].cleanup?;
        match (&step.call, pending) {
            (Call::CleanupFind { .. }, _) => Some(Action::CleanupFind(c)),
            (Call::FindOwnNode, Cleanup::Search)
                if !self.cur.allows(&Action::FindOwnNode(c))
                    && !self.cur.allows(&Action::LaggedSearch(c)) =>
            {
                Some(Action::CleanupFind(c))
            }
            (Call::Delete { name }, Cleanup::Delete(_))
                if !self.cur.allows(&Action::DeleteLockNode(c))
                    || name.uuid != self.attempt_uuid[usize::from(c)] =>
            {
                Some(match step.outcome {
                    Outcome::ReplyLost { applied } => Action::LoseCleanupReply(c, applied),
                    _ => Action::CleanupDelete(c),
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use lockwright_model::zk::{Faults, Name, Pc, Scenario, Variant, WriteMode};

    use super::super::Refinement;
    use crate::zk::record::{Call, Outcome, Step};

    fn step(call: Call, outcome: Outcome) -> Step {
        Step {
            client: Some(0),
            call,
            outcome,
        }
    }

    const DROPPED: Name = Name {
        seq: 0,
        uuid: Some(0),
    };

    /// c0 creates (id 0), its acquire is dropped with that node (the cleanup's), the next
    /// attempt creates (id 8, the simulation's fresh id) and lists (behind the cleanup's
    /// node), then a delete of `deleted` is recorded, then the watch on the dropped node
    /// (answered `NoNode` once it is gone, else `Ok`).
    fn overlap(deleted: Name) -> Vec<Step> {
        let watched = if deleted == DROPPED {
            Outcome::NoNode
        } else {
            Outcome::Ok
        };
        vec![
            step(Call::Create { uuid: Some(0) }, Outcome::Ok),
            step(Call::Drop { at: Pc::Created }, Outcome::Ok),
            step(Call::Create { uuid: Some(8) }, Outcome::Ok),
            step(Call::ListChildren, Outcome::Ok),
            step(Call::Delete { name: deleted }, Outcome::Ok),
            step(Call::Watch { name: DROPPED }, watched),
        ]
    }

    fn model() -> Refinement {
        Refinement::new(
            Scenario::new(Variant::Curator, WriteMode::Fenced)
                .with_clients(1)
                .with_reentrant(false)
                .with_symmetry(false)
                .with_faults(Faults::parse("abandon=1").expect("faults")),
        )
    }

    /// The cleanup deletes the dropped attempt's node while the next attempt waits behind it:
    /// `CleanupDelete`, a model path. Its teeth: a recorded delete of the next attempt's own
    /// node there is no cleanup's. The model's cleanup deletes the dropped node, so the watch
    /// the simulation then sets on that node (still there) is a step the model's client did
    /// not take (it found the node gone).
    #[test]
    fn a_cleanup_delete_beside_the_next_attempt_refines() {
        let next = Name {
            seq: 1,
            uuid: Some(8),
        };
        model()
            .check_trace(&overlap(DROPPED))
            .expect("a model path");
        let d = model().check(&overlap(next)).expect_err("not a model path");
        assert_eq!(d.step, 5, "{d}");
        assert!(d.reason.contains("[Waiting]"), "{d}");
    }
}
