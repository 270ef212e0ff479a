//! The model's transition function: a step's request goes to the store (unless lost), the
//! client reacts to the answer or to the timeout; faults and the clock.

use crate::docstore::protocol::{
    Action, ClientId, Delivery, Epoch, Event, Pc, Session, State, Step, DATA_ID,
};
use crate::docstore::scenario::{Role, Scenario, Variant};
use crate::docstore::store::{Shard, Source, StoreError, Time, Token, WriteOutcome, WriteResult};

impl Scenario {
    /// `next_state` for the replayer: `None` if `action` is not enabled in `s`.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        self.enabled(s, action).then(|| self.apply(s, action))
    }

    /// Performs an enabled action.
    pub fn apply(&self, s: &State, action: Action) -> State {
        let mut next = s.clone();
        self.apply_in_place(&mut next, action);
        next
    }

    /// [`Scenario::apply`] on a state the caller owns.
    pub fn apply_in_place(&self, s: &mut State, action: Action) {
        s.last = Event::None;
        s.lost_update = false;
        match action {
            Action::Call(c, Step::CheckLease, _) => {
                let cl = &mut s.clients[c as usize];
                if cl.deadline.is_some_and(|d| d > 0) {
                    cl.pc = Pc::Writing;
                } else {
                    cl.forget(); // the lease has passed: the lock is no longer ours
                }
            }
            Action::Call(c, Step::ReadData, _) => {
                // `GET files/_doc/1` changes nothing; the session begins at the first access.
                let data = s.files.get(&DATA_ID).copied();
                let cl = &mut s.clients[c as usize];
                if cl.session == Session::None {
                    cl.session = Session::Open;
                }
                cl.pc = Pc::Computing;
                if self.variant.conditions_writes() && self.writes.fenced() {
                    cl.read = data.map(|d| d.token());
                }
                // The fix: a claimed holder finds its own token in the fence, or stops (a newer
                // holder claimed, or the store lost its claim) and releases.
                if self.variant.checks_fence_on_read()
                    && self.writes.claims()
                    && data.and_then(|d| d.source.fence()) != cl.token
                {
                    cl.pc = Pc::Releasing;
                    cl.read = None;
                }
            }
            Action::Call(c, Step::VerifyLock, _) => {
                // `GET files-lock/_doc/1` changes nothing: the holder goes on only if the lock
                // document still carries its token (its acquiring write is not lost).
                // The owner too: a re-created index repeats `_seq_no`s, so the version alone
                // can match a document this client never wrote.
                let doc = s.locks.get(&self.variant.lock_id()).copied();
                let cl = &mut s.clients[c as usize];
                let current = doc.map(|d| d.token());
                if current.is_some()
                    && current == cl.lock_version()
                    && doc.and_then(|d| d.source.owner()) == Some(cl.owner(c))
                {
                    cl.pc = Pc::Holding;
                } else {
                    cl.forget();
                }
            }
            Action::Call(c, step, delivery) => self.call(s, c, step, delivery),
            Action::Crash(c) => {
                s.budget.crash -= 1;
                let cl = &mut s.clients[c as usize];
                if cl.pc != Pc::Idle {
                    s.orphaned = true;
                }
                cl.forget();
                cl.alive = false;
            }
            Action::Restart(c) => {
                s.budget.restart -= 1;
                let cl = &mut s.clients[c as usize];
                cl.alive = true;
                cl.incarnation += 1;
            }
            Action::StrayDelete => {
                s.budget.stray_delete -= 1;
                let _ = s.locks.delete(&self.variant.lock_id(), None);
                s.undo = None;
            }
            Action::Tick => Self::advance_clock(s, 1),
            Action::Pause(c) => {
                s.budget.pause -= 1;
                let d = s.clients[c as usize]
                    .deadline
                    .expect("a leased writer's deadline");
                Self::advance_clock(s, d);
            }
            Action::Failover => {
                s.budget.failover -= 1;
                s.locks.promote_replica();
                s.undo = None; // the new primary had the last write
            }
            Action::RecreateIndex => {
                s.budget.recreate_index -= 1;
                s.locks = Shard::new();
                s.undo = None;
            }
            Action::RecreateDoc => {
                s.budget.recreate_doc -= 1;
                let _ = s.files.delete(&DATA_ID, None);
                s.files
                    .create(DATA_ID, Source::Data { fence: None })
                    .expect("just deleted");
                s.undo = None;
            }
            Action::Rollback => {
                s.budget.rollback -= 1;
                let (index, before) = s.undo.take().expect("a write to roll back");
                s.shard_mut(index).roll_back_to(&before);
            }
            Action::LoseLockIndex => {
                s.budget.reinstall -= 1;
                s.locks = Shard::new();
                s.undo = None;
                s.reinstall_pending = true;
            }
            Action::ReinstallLock => {
                s.reinstall_pending = false;
                self.reinstall(s);
                s.undo = None;
            }
            Action::SkewClock(o) => s.clock_offset = o.into(),
        }
        if s.budget.rollback == 0 {
            s.undo = None;
        }
        self.canonicalize(s);
    }

    /// Installs the lost lock document again. The fix (`guards_reinstall`): created, never
    /// over an existing document, already leased to [`Owner::INSTALLER`] for one lease on the
    /// script clock, at a version above the data document's fence (the install writes the
    /// lock index until its `_seq_no` passes the fence's; enabled only where the fence's
    /// `_primary_term` is not above the index's). `leased-fix-unguarded-install`:
    /// `PUT files-lock/_create/1 {}`, a free lease, the counters as they are.
    fn reinstall(&self, s: &mut State) {
        let id = self.variant.lock_id();
        if !self.variant.guards_reinstall() {
            let _ = s.locks.create(id, Source::Empty);
            return;
        }
        if let Some(f) = s.files.get(&DATA_ID).and_then(|d| d.source.fence()) {
            if f.primary_term == s.locks.primary_term() && s.locks.next_seq_no() <= f.seq_no {
                s.locks.renumber(|x| x, f.seq_no + 1);
            }
        }
        let _ = self.install_request(s).execute(s);
    }

    /// Time passes by `d` ticks: every stored time moves `d` closer to now (0).
    fn advance_clock(s: &mut State, d: Time) {
        s.locks
            .map_sources(|src| src.map_times(|t| t.saturating_sub(d)));
        if let Some((_, shard)) = s.undo.as_mut() {
            shard.map_sources(|src| src.map_times(|t| t.saturating_sub(d)));
        }
        for cl in &mut s.clients {
            if let Some(t) = cl.deadline.as_mut() {
                *t = t.saturating_sub(d);
            }
        }
    }

    /// Client `c` sends `step`'s request; the store applies it unless it is lost; the client
    /// reacts to the answer or to the timeout.
    fn call(&self, s: &mut State, c: ClientId, step: Step, delivery: Delivery) {
        if delivery != Delivery::Answered {
            s.budget.lose_reply -= 1;
        }
        let cl = s.clients[c as usize];
        if matches!(step, Step::UpsertLock | Step::UpdateLock) && self.timed() && cl.pc == Pc::Idle
        {
            // The deadline counts from the first send: now (0) + lease.
            s.clients[c as usize].deadline = Some(self.fresh_deadline());
        }
        let request = self.request(s, c, step).expect("a request");
        let before = (s.budget.rollback > 0).then(|| s.shard(request.index()).clone());
        let outcome = match delivery {
            Delivery::RequestLost => None,
            _ => Some(request.execute(s)),
        };
        // The first item of a bulk brings no answer yet: the client goes on to the second.
        let first_bulk_item = step == Step::BulkCreateLocks && cl.pc != Pc::Bulk;
        if let (Some(before), Some(Ok(w))) = (before, outcome) {
            // The last applied write: a rollback may undo it if its client saw it succeed.
            if w.result != WriteResult::Noop {
                let acknowledged = delivery == Delivery::Answered && !first_bulk_item;
                s.undo = acknowledged.then_some((request.index(), before));
            }
        }
        if first_bulk_item {
            let cl = &mut s.clients[c as usize];
            cl.bulk = u8::from(matches!(outcome, Some(Ok(_))));
            cl.pc = Pc::Bulk;
            return;
        }
        if step == Step::ClaimData && matches!(outcome, Some(Ok(_))) {
            // The claim is the session's first access (applied, whether or not its reply came).
            let cl = &mut s.clients[c as usize];
            if cl.session == Session::None {
                cl.session = Session::Open;
            }
        }
        if step == Step::WriteData {
            Self::record_write(s, c, outcome);
        }
        let reply = match delivery {
            Delivery::Answered => outcome,
            _ => None,
        };
        self.react(s, c, step, reply);
    }

    /// Ghost bookkeeping of a data write the store applied (or refused), judged from the
    /// grants alone (epochs and sessions), never from the tokens the document compares:
    ///
    /// - "fenced writes are exclusive": an accepted write of an older grant after a newer
    ///   grant's accepted write;
    /// - "no lost update": an accepted write whose writer's session overlapped (since its
    ///   first access under its grant, a write made under another grant was accepted). The
    ///   accepted write then overlaps every other open session.
    fn record_write(s: &mut State, c: ClientId, outcome: Option<WriteOutcome>) {
        let epoch = s.clients[c as usize].epoch.expect("a writer has an epoch");
        let stale = s.written.is_some_and(|w| epoch < w);
        match outcome {
            Some(Ok(_)) => {
                if stale {
                    s.last = Event::StaleWriteAccepted;
                }
                s.written = Some(s.written.map_or(epoch, |w| w.max(epoch)));
                if s.clients[c as usize].session == Session::Overlapped {
                    s.lost_update = true;
                }
                for (i, cl) in s.clients.iter_mut().enumerate() {
                    if i != c as usize && cl.session == Session::Open && cl.epoch != Some(epoch) {
                        cl.session = Session::Overlapped;
                    }
                }
            }
            Some(Err(_)) if stale => s.last = Event::StaleWriteRejected,
            _ => {}
        }
    }

    /// Client `c`'s reaction to `step`'s reply (`None`: a timeout).
    fn react(&self, s: &mut State, c: ClientId, step: Step, reply: Option<WriteOutcome>) {
        use Step::*;
        let i = c as usize;
        match (step, reply) {
            (BulkCreateLocks, Some(o)) => {
                let created = s.clients[i].bulk | (u8::from(o.is_ok()) << 1);
                match (created, o) {
                    (0b11, Ok(w)) => self.grant(s, c, w.token),
                    (0, _) => {
                        s.clients[i].forget();
                        s.last = Event::Refused;
                    }
                    // Some created, some conflicting: delete the ones it created.
                    _ => {
                        s.clients[i].pc = Pc::Releasing;
                        s.clients[i].bulk = created;
                    }
                }
            }
            // No answer: which items were created is unknown; send the whole bulk again.
            (BulkCreateLocks, None) => {
                s.clients[i].pc = Pc::Retrying;
                s.clients[i].bulk = 0;
            }
            (BulkDeleteLocks, Some(_)) => s.clients[i].forget(),
            (BulkDeleteLocks, None) => s.clients[i].pc = Pc::Releasing,
            (CreateLock | UpsertLock | UpdateLock, Some(Ok(w))) => self.grant(s, c, w.token),
            // The fix: a missing lock document is an error, not a grant and not contention
            // (the client stops; nothing in the recipe creates the document again).
            (UpdateLock, Some(Err(StoreError::DocumentMissing))) => s.clients[i].forget(),
            // A 409 on an `_update` can only come from a concurrent update racing this one
            // (`retry_on_conflict` 0): the client retries, as on a timeout. This makes the race
            // a stutter, which is why `_update` is one atomic step in the model (never reached
            // here: see the `store` module docs).
            (UpsertLock | UpdateLock, Some(Err(StoreError::VersionConflict))) => {
                s.clients[i].pc = Pc::Retrying;
            }
            (UpdateUnlock, Some(Err(StoreError::VersionConflict))) => {
                s.clients[i].pc = Pc::Releasing;
            }
            (CreateLock | UpsertLock | UpdateLock, Some(Err(_))) => {
                s.clients[i].forget();
                s.last = Event::Refused;
            }
            // Retry the same request (leased: the deadline still counts from the first send).
            (CreateLock | UpsertLock | UpdateLock, None) => s.clients[i].pc = Pc::Retrying,
            // Released, or nothing left to release (404, 409 on compare-and-delete, a script
            // error on `rw-unlock`: the client gives up).
            // Renewed: the lease runs again from this send (now 0), the lock document's version
            // is the renewal's, and the fencing token stays the acquire's (the claimed data
            // document holds it). Refused (409/404: the document is not the one it wrote, or
            // gone): the lock is lost. No answer: the old deadline stands, and the version is
            // unknown (a later conditioned request meets 409 if the renewal landed).
            (RenewLease, Some(Ok(w))) => {
                let cl = &mut s.clients[i];
                cl.renewed = Some(w.token);
                cl.deadline = Some(self.fresh_deadline());
            }
            (RenewLease, Some(Err(_))) => s.clients[i].forget(),
            (RenewLease, None) => {}
            (UpdateUnlock | DeleteLock | CompareAndDelete | ReleaseLease, Some(_)) => {
                s.clients[i].forget();
            }
            (UpdateUnlock | DeleteLock | CompareAndDelete | ReleaseLease, None) => {
                s.clients[i].pc = Pc::Releasing;
            }
            // A fenced write or a claim refused: the lock is no longer ours; release (as the
            // recipe does).
            (WriteData | ClaimData, Some(Err(StoreError::Script(_)))) => {
                s.clients[i].pc = Pc::Releasing;
            }
            // Claimed (the fix: then read the lock document back); or no answer: claim again
            // (the same token: idempotent).
            (ClaimData, Some(_)) => {
                s.clients[i].pc = if self.variant.verifies_grant() {
                    Pc::Verifying
                } else {
                    Pc::Holding
                };
            }
            (ClaimData, None) => s.clients[i].pc = Pc::Claiming,
            // Written, or no answer (landed or not): the session goes on with a fresh read.
            (WriteData, _) => {
                s.clients[i].pc = Pc::Holding;
                s.clients[i].read = None;
            }
            (CheckLease | ReadData | VerifyLock, _) => {
                unreachable!("{step:?} sends no write request")
            }
        }
    }

    /// Client `c`'s acquire succeeded with the write `token`.
    fn grant(&self, s: &mut State, c: ClientId, token: Token) {
        let role = self.role(c);
        let epoch = match role {
            Role::Writer => Some(Self::fresh_epoch(s)),
            Role::Reader => None,
        };
        let cl = &mut s.clients[c as usize];
        cl.pc = if role == Role::Writer && self.writes.claims() {
            Pc::Claiming
        } else if self.variant.verifies_grant() {
            Pc::Verifying
        } else {
            Pc::Holding
        };
        cl.token = self.keeps_token(role).then_some(token);
        cl.epoch = epoch;
        cl.session = Session::None;
        cl.bulk = if self.variant == Variant::DocumentBulk {
            0b11
        } else {
            0
        };
        if s.orphaned {
            s.orphaned = false;
            s.last = Event::AcquiredAfterCrash;
        }
    }

    /// An epoch later than every one in `s`.
    fn fresh_epoch(s: &State) -> Epoch {
        let clients = s.clients.iter().filter_map(|cl| cl.epoch);
        clients.chain(s.written).max().map_or(0, |e| e + 1)
    }
}
