//! Step descriptions for a dropped future and its cleanup task (`Abandon`, `CleanupFind`,
//! `CleanupDelete`, `LoseCleanupReply`): what the caller dropped, what the task took, and
//! what each of its requests did beside the client's next acquire.

use crate::zk::action::Action;
use crate::zk::scenario::{ClientId, Scenario};
use crate::zk::state::{Cleanup, Pc, State};

impl Scenario {
    /// `c0 Abandon: the caller drops the acquire future after its create's reply was lost; its
    /// cleanup task searches for the node (uuid c0p), c0 is free to acquire again`.
    pub(crate) fn describe_abandon(&self, before: &State, after: &State, c: ClientId) -> String {
        let cl = before.clients[c as usize];
        let what = if cl.pc == Pc::Releasing {
            "release"
        } else {
            "acquire"
        };
        let node = cl.own.map_or("?".to_string(), |o| {
            format!("{} (czxid {})", o.name, o.czxid)
        });
        let renamed = match self.previous_uuid(c) {
            Some(u) if u >= 8 => format!(" (the dropped attempt's uuid, now shown as c{}p)", u - 8),
            _ => String::new(),
        };
        let awaited = match cl.pc {
            Pc::CreateLost => " after its create's reply was lost",
            Pc::Idle => " while its create is queued behind the dropped connection",
            _ => "",
        };
        let next = match after.clients[c as usize].cleanup {
            Some(Cleanup::Search) => format!(
                "; its cleanup task searches for the node it may have made{renamed}, and c{c} is free to acquire again"
            ),
            Some(Cleanup::Delete(_)) => format!(
                "; its cleanup task deletes its node {node}{renamed}, and c{c} is free to acquire again"
            ),
            None if matches!(cl.pc, Pc::Idle | Pc::CreateLost) => {
                "; nobody searches for the node it may have made".to_string()
            }
            None => format!("; nobody deletes its node {node} any more"),
        };
        format!("c{c} Abandon: the caller drops the {what} future{awaited}{next}")
    }

    /// `c0 CleanupFind`, `c0 CleanupDelete`, `c0 LoseCleanupReply`.
    pub(crate) fn describe_cleanup(
        &self,
        before: &State,
        after: &State,
        action: Action,
        c: ClientId,
    ) -> String {
        let session = before.session(c);
        let alive = before.server.is_alive(session);
        let task = before.clients[c as usize].cleanup;
        let target = match task {
            Some(Cleanup::Delete(n)) => n.to_string(),
            _ => "?".to_string(),
        };
        let looked_for = match self.previous_uuid(c) {
            Some(u) if u >= 8 => format!("uuid c{}p", u - 8),
            Some(u) => format!("uuid c{u}"),
            None => format!("a child owned by {session}"),
        };
        match action {
            Action::CleanupFind(c) if !alive => format!(
                "c{c} CleanupFind: getChildren /locks → SessionExpired ({session}); the client opens a new session"
            ),
            Action::CleanupFind(c) => match after.clients[c as usize].cleanup {
                Some(Cleanup::Delete(n)) => format!(
                    "c{c} CleanupFind: getChildren /locks, look for {looked_for} → {n}: the cleanup deletes it next"
                ),
                _ => format!(
                    "c{c} CleanupFind: getChildren /locks, look for {looked_for} → none: nothing to clean up"
                ),
            },
            Action::CleanupDelete(c) if !alive => format!(
                "c{c} CleanupDelete: delete {target} → SessionExpired ({session}); the client opens a new session, the cleanup retries there"
            ),
            Action::CleanupDelete(c) => {
                let exists = match task {
                    Some(Cleanup::Delete(n)) => before.server.node(n).is_some(),
                    _ => false,
                };
                let outcome = if exists {
                    "ok"
                } else {
                    "NoNode (already gone)"
                };
                format!("c{c} CleanupDelete: delete {target} → {outcome}: the cleanup is done")
            }
            Action::LoseCleanupReply(c, applied) => {
                let request = match task {
                    Some(Cleanup::Search) => {
                        format!("search (getChildren /locks) for {looked_for} answered")
                    }
                    _ if applied => format!("delete {target} applied"),
                    _ => format!("delete {target} not applied"),
                };
                format!(
                    "c{c} LoseCleanupReply: the cleanup's {request}, reply lost (ConnectionLoss); it will ask again"
                )
            }
            _ => unreachable!("a cleanup step"),
        }
    }
}
