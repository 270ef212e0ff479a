//! Which actions are enabled in a state: each live client's steps (with the deliveries the
//! lost-reply budget allows), the faults their budgets allow, and the clock.

use crate::docstore::next;
use crate::docstore::protocol::{Action, ClientId, Delivery, Pc, State, Step};
use crate::docstore::scenario::Scenario;
use crate::docstore::store::Time;

impl Scenario {
    /// The enabled steps of live client `c`, each with every delivery the budget allows.
    pub(crate) fn client_actions(&self, s: &State, c: ClientId, out: &mut Vec<Action>) {
        let cl = s.clients[c as usize];
        for &step in next(self.variant, self.role(c), cl.pc) {
            // A renewal is sent only while the holder's own deadline has not passed (a lapsed
            // lease is anyone's: the client sends nothing and can only read, fail its lease
            // check, or release).
            if step == Step::RenewLease && cl.deadline.is_none_or(|d| d == 0) {
                continue;
            }
            out.push(Action::Call(c, step, Delivery::Answered));
            // The first item of a bulk brings no answer: only the step that ends it can lose it.
            let first_bulk_item = step == Step::BulkCreateLocks && cl.pc != Pc::Bulk;
            if !matches!(step, Step::CheckLease | Step::ReadData | Step::VerifyLock)
                && !first_bulk_item
                && s.budget.lose_reply > 0
            {
                out.push(Action::Call(c, step, Delivery::ReplyLost));
                out.push(Action::Call(c, step, Delivery::RequestLost));
            }
        }
    }

    /// The enabled faults and clock steps.
    pub(crate) fn fault_actions(&self, s: &State, out: &mut Vec<Action>) {
        for c in 0..self.clients {
            let cl = s.clients[c as usize];
            if cl.alive && s.budget.crash > 0 {
                out.push(Action::Crash(c));
            }
            if !cl.alive && s.budget.restart > 0 {
                out.push(Action::Restart(c));
            }
        }
        if s.budget.stray_delete > 0 && s.locks.get(&self.variant.lock_id()).is_some() {
            out.push(Action::StrayDelete);
        }
        if self.timed() {
            for c in 0..self.clients {
                let cl = s.clients[c as usize];
                if s.budget.pause > 0
                    && cl.alive
                    && cl.pc == Pc::Writing
                    && cl.deadline.is_some_and(|d| d > 0)
                {
                    out.push(Action::Pause(c));
                }
            }
            // The timing assumption the lease relies on: a client that passed its lease check
            // writes before the lease passes. Only `Pause` breaks it.
            let would_expire_a_writer = s
                .clients
                .iter()
                .any(|cl| cl.alive && cl.pc == Pc::Writing && cl.deadline.is_some_and(|d| d == 1));
            if Self::max_time(s) > 0 && !would_expire_a_writer {
                out.push(Action::Tick);
            }
        }
        if s.budget.failover > 0 {
            out.push(Action::Failover);
        }
        if s.budget.recreate_index > 0 {
            out.push(Action::RecreateIndex);
        }
        if s.budget.recreate_doc > 0 {
            out.push(Action::RecreateDoc);
        }
        if s.budget.rollback > 0 && s.undo.is_some() {
            out.push(Action::Rollback);
        }
        if s.budget.reinstall > 0 && self.variant.installs_lock_once() {
            out.push(Action::LoseLockIndex);
        }
        if s.reinstall_pending && self.reinstall_possible(s) {
            out.push(Action::ReinstallLock);
        }
        if self.timed() {
            for o in 0..=self.faults.skew {
                if Time::from(o) != s.clock_offset {
                    out.push(Action::SkewClock(o));
                }
            }
        }
    }

    /// Whether the re-install can be done: always unguarded; guarded, unless the data
    /// document's fence has a `_primary_term` above the re-created index's (no write can pass
    /// it: the install refuses, naming both).
    fn reinstall_possible(&self, s: &State) -> bool {
        !self.variant.guards_reinstall()
            || s.files
                .get(&crate::docstore::protocol::DATA_ID)
                .and_then(|d| d.source.fence())
                .is_none_or(|f| f.primary_term <= s.locks.primary_term())
    }

    fn max_time(s: &State) -> Time {
        let undone = s.undo.iter().flat_map(|(_, shard)| shard.docs());
        let docs = s.locks.docs().chain(undone);
        let docs = docs.filter_map(|(_, d)| d.source.times());
        let clients = s.clients.iter().filter_map(|cl| cl.deadline);
        docs.chain(clients).max().unwrap_or(0)
    }

    /// Whether `action` is enabled in `s`.
    pub fn enabled(&self, s: &State, action: Action) -> bool {
        let mut acts = Vec::new();
        match action {
            Action::Call(c, ..) => {
                if c >= self.clients || !s.clients[c as usize].alive {
                    return false;
                }
                self.client_actions(s, c, &mut acts);
            }
            _ => self.fault_actions(s, &mut acts),
        }
        acts.contains(&action)
    }
}
