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
