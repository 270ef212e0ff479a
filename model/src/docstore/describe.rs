//! Human-readable steps (for counterexample listings) and states (for the Explorer).

use std::fmt;

use crate::docstore::protocol::{
    Action, Delivery, Event, Pc, Session, State, Step, DATA_INDEX, LOCK_INDEX,
};
use crate::docstore::requests::{Index, Request};
use crate::docstore::scenario::{Scenario, BULK_IDS};
use crate::docstore::store::{Script, StoreError, UpdateBody, WriteOutcome, WriteResult};

/// `PUT files-lock/_create/global {}`, `POST files-lock/_update/1 {upsert: .., script: ..}`,
/// `DELETE files-lock/_doc/1?if_seq_no=0&if_primary_term=1`.
pub fn request_text(r: &Request) -> String {
    match *r {
        Request::Create { index, id, source } => {
            format!("PUT {}/_create/{id} {source}", index.name())
        }
        Request::Update {
            index,
            id,
            body,
            upsert,
            cond,
        } => {
            let body = match body {
                UpdateBody::Doc => "doc: {name}".to_string(),
                UpdateBody::Script(s) => format!("script: {}", script_text(s)),
            };
            let cond = match cond {
                None => String::new(),
                Some(t) => format!("?if_seq_no={}&if_primary_term={}", t.seq_no, t.primary_term),
            };
            match upsert {
                Some(u) => format!(
                    "POST {}/_update/{id}{cond} {{upsert: {u}, {body}}}",
                    index.name()
                ),
                None => format!("POST {}/_update/{id}{cond} {{{body}}}", index.name()),
            }
        }
        Request::BulkCreate {
            index,
            id,
            source,
            item,
        } => format!(
            "POST {}/_bulk item {}: {{create: {{_id: {id}}}}} {source}",
            index.name(),
            item + 1
        ),
        Request::BulkDelete { index, ids } => {
            let items: Vec<String> = BULK_IDS
                .iter()
                .enumerate()
                .filter(|(i, _)| ids & (1 << i) != 0)
                .map(|(_, id)| format!("{{delete: {{_id: {id}}}}}"))
                .collect();
            format!("POST {}/_bulk {}", index.name(), items.join(" "))
        }
        Request::Delete { index, id, cond } => match cond {
            None => format!("DELETE {}/_doc/{id}", index.name()),
            Some(t) => format!(
                "DELETE {}/_doc/{id}?if_seq_no={}&if_primary_term={}",
                index.name(),
                t.seq_no,
                t.primary_term
            ),
        },
    }
}

fn script_text(s: Script) -> String {
    match s {
        Script::DocumentLock { process_id } => format!("document-lock(process_id {process_id})"),
        Script::LeaseAcquire {
            owner,
            now,
            expires,
        } => format!("lease-acquire(owner {owner}, now {now}, expires {expires})"),
        Script::LeaseAcquireNoop {
            owner,
            now,
            expires,
        } => format!("lease-acquire-noop(owner {owner}, now {now}, expires {expires})"),
        Script::LeaseRenew {
            owner,
            now,
            expires,
        } => format!("lease-renew(owner {owner}, now {now}, expires {expires})"),
        Script::LeaseRelease { owner } => format!("lease-release(owner {owner})"),
        Script::FencedWrite { token } => format!("fenced-write({token})"),
        Script::FenceClaim { token } => format!("fence-claim({token})"),
        s => s.id().to_string(),
    }
}

/// `201 created (seq 0/term 1)`, `200 deleted`, `409 version_conflict_engine_exception`: the
/// `_seq_no`/`_primary_term` are shown where a client may keep them (an acquire's), not for
/// deletes and not for the data index (`with_token` false).
pub fn outcome_text(o: &WriteOutcome, with_token: bool) -> String {
    match o {
        Ok(w)
            if with_token && !matches!(w.result, WriteResult::Deleted | WriteResult::NotFound) =>
        {
            format!("{} {} ({})", w.result.status(), w.result.name(), w.token)
        }
        Ok(w) => format!("{} {}", w.result.status(), w.result.name()),
        Err(e) => e.to_string(),
    }
}

impl Scenario {
    /// One line: who acts, the request, the store's answer, and what the client makes of it.
    pub(crate) fn describe(&self, before: &State, action: Action, after: &State) -> String {
        match action {
            Action::Call(c, Step::CheckLease, _) => {
                let d = before.clients[c as usize].deadline.unwrap_or(0);
                if after.clients[c as usize].pc == Pc::Writing {
                    format!("c{c} CheckLease: now 0 < deadline {d} → the write begins")
                } else {
                    format!("c{c} CheckLease: now 0 ≥ deadline {d} → lease passed, c{c} stops")
                }
            }
            Action::Call(c, Step::ReadData, _) => {
                let doc = before.files.get(&crate::docstore::protocol::DATA_ID);
                let mut fence = doc.map_or("no document".to_string(), |d| d.source.to_string());
                if self.variant.conditions_writes() && self.writes.fenced() {
                    if let Some(d) = doc {
                        fence.push_str(&format!(" ({})", d.token()));
                    }
                }
                let then = if after.clients[c as usize].pc == Pc::Releasing {
                    "the fence is not its token: releases"
                } else {
                    "computes its write"
                };
                format!("c{c} ReadData: GET {DATA_INDEX}/_doc/1 → {fence}; {then}")
            }
            Action::Call(c, Step::VerifyLock, _) => {
                let id = self.variant.lock_id();
                let doc = before
                    .locks
                    .get(&id)
                    .map_or("404 not found".to_string(), |d| {
                        format!("{} ({})", d.source, d.token())
                    });
                let then = if after.clients[c as usize].pc == Pc::Holding {
                    "its token: holds"
                } else {
                    "not its token: stops"
                };
                format!("c{c} VerifyLock: GET {LOCK_INDEX}/_doc/{id} → {doc}; {then}")
            }
            Action::Call(c, step, delivery) => {
                let request = self.request(before, c, step).expect("a request");
                let outcome = self.response(before, c, step).expect("a response");
                let with_token = !matches!(step, Step::WriteData | Step::ClaimData);
                let answer = match delivery {
                    Delivery::Answered => format!("→ {}", outcome_text(&outcome, with_token)),
                    Delivery::ReplyLost => format!(
                        "→ applied ({}), reply lost: timeout",
                        outcome_text(&outcome, with_token)
                    ),
                    Delivery::RequestLost => "→ request lost, nothing applied: timeout".into(),
                };
                let reaction = self.reaction(after, c, step, delivery, &outcome);
                format!(
                    "c{c} {step:?}: {} {answer}{reaction}",
                    request_text(&request)
                )
            }
            Action::Crash(c) => format!("c{c} Crash: the process dies; its documents stay"),
            Action::Restart(c) => format!(
                "c{c} Restart: new incarnation, process_id {}",
                after.clients[c as usize].owner(c)
            ),
            Action::StrayDelete => {
                let id = self.variant.lock_id();
                let mut scratch = before.clone();
                let o = scratch.locks.delete(&id, None);
                format!(
                    "operator StrayDelete: DELETE {LOCK_INDEX}/_doc/{id} → {}",
                    outcome_text(&o, false)
                )
            }
            Action::Tick => "clock Tick: one tick passes".to_string(),
            Action::Pause(c) => format!(
                "c{c} Pause: not scheduled for {} ticks after its lease check; its lease passes",
                before.clients[c as usize].deadline.unwrap_or(0)
            ),
            Action::Failover => format!(
                "cluster Failover: a replica of {LOCK_INDEX} becomes primary, _primary_term {}",
                after.locks.primary_term()
            ),
            Action::RecreateIndex => format!(
                "operator RecreateIndex: DELETE {LOCK_INDEX}, PUT {LOCK_INDEX} → every lock \
                 document gone; _primary_term 1, _seq_no from 0 again"
            ),
            Action::RecreateDoc => format!(
                "operator RecreateDoc: DELETE {DATA_INDEX}/_doc/1, PUT {DATA_INDEX}/_doc/1 \
                 {{name}} → the fence is gone"
            ),
            Action::LoseLockIndex => format!(
                "operator LoseLockIndex: {LOCK_INDEX} lost (DELETE, PUT) → every lock document \
                 gone; _primary_term 1, _seq_no from 0 again; a client will re-install it"
            ),
            Action::ReinstallLock => {
                let id = self.variant.lock_id();
                let doc = after.locks.get(&id).map_or("nothing".to_string(), |d| {
                    format!("{} ({})", d.source, d.token())
                });
                if self.variant.guards_reinstall() {
                    format!(
                        "client ReinstallLock: POST {LOCK_INDEX}/_update/{id} (lease-install, \
                         scripted_upsert: created only if missing, reserved for one lease, \
                         written past the data fence) → {doc}"
                    )
                } else {
                    format!("client ReinstallLock: PUT {LOCK_INDEX}/_create/{id} {{}} → {doc}")
                }
            }
            Action::SkewClock(o) => format!(
                "cluster SkewClock: the scripts' clock (ctx._now) now runs {o} ahead of true time"
            ),
            Action::Rollback => {
                let index = before.undo.as_ref().map_or(LOCK_INDEX, |(i, _)| i.name());
                let term = after.shard(before.undo.as_ref().map_or(Index::Locks, |u| u.0));
                format!(
                    "cluster Rollback: a replica of {index} that lacked the last acknowledged \
                     write becomes primary, _primary_term {} → that write is lost",
                    term.primary_term()
                )
            }
        }
    }

    /// What the client makes of the answer, for the step description.
    fn reaction(
        &self,
        after: &State,
        c: u8,
        step: Step,
        delivery: Delivery,
        outcome: &WriteOutcome,
    ) -> String {
        let pc = after.clients[c as usize].pc;
        let note = match (step, delivery, pc) {
            (_, Delivery::Answered, _) if after.lost_update => "lost update: accepted",
            (_, _, _) if after.lost_update => "lost update: accepted unseen",
            (_, Delivery::Answered, _) if after.last == Event::StaleWriteAccepted => {
                "stale write accepted"
            }
            (_, _, _) if after.last == Event::StaleWriteAccepted => "stale write accepted unseen",
            (_, Delivery::Answered, _) if after.last == Event::StaleWriteRejected => {
                "stale write refused; releases"
            }
            (Step::BulkCreateLocks, _, Pc::Bulk) => "the bulk goes on",
            (Step::BulkCreateLocks, Delivery::Answered, Pc::Holding | Pc::Claiming) => {
                "every item created: acquired"
            }
            (Step::BulkCreateLocks, Delivery::Answered, Pc::Releasing) => {
                "only some items created: deletes those"
            }
            (Step::BulkCreateLocks, Delivery::Answered, _) => "no item created: refused",
            (Step::BulkCreateLocks, _, _) => "will send the whole bulk again",
            (
                Step::CreateLock | Step::UpsertLock | Step::UpdateLock,
                Delivery::Answered,
                Pc::Holding,
            ) => "acquired",
            (
                Step::CreateLock | Step::UpsertLock | Step::UpdateLock,
                Delivery::Answered,
                Pc::Claiming,
            ) => "acquired; claims next",
            (Step::UpsertLock | Step::UpdateLock, Delivery::Answered, Pc::Verifying) => {
                "acquired; reads the lock document back next"
            }
            (Step::UpdateLock, Delivery::Answered, _)
                if *outcome == Err(StoreError::DocumentMissing) =>
            {
                "no lock document: an error, not a grant"
            }
            (Step::CreateLock | Step::UpsertLock | Step::UpdateLock, Delivery::Answered, _) => {
                "refused"
            }
            (Step::CreateLock | Step::UpsertLock | Step::UpdateLock, _, _) => "will retry",
            (Step::WriteData, Delivery::Answered, Pc::Releasing) => "write refused; releases",
            (Step::WriteData, Delivery::Answered, _)
                if *outcome == Err(StoreError::VersionConflict) =>
            {
                "the document changed since its read: reads again"
            }
            (Step::WriteData, Delivery::Answered, _) => "",
            (Step::WriteData, _, _) => "write outcome unknown",
            (Step::ClaimData, Delivery::Answered, Pc::Releasing) => "claim refused; releases",
            (Step::ClaimData, Delivery::Answered, Pc::Verifying) => {
                "claimed; reads the lock document back next"
            }
            (Step::ClaimData, Delivery::Answered, _) => "claimed",
            (Step::ClaimData, _, _) => "will claim again",
            (Step::RenewLease, Delivery::Answered, Pc::Holding) => {
                "renewed; the token stays the acquire's"
            }
            (Step::RenewLease, Delivery::Answered, _) => "not its lock document: stops",
            (Step::RenewLease, _, _) => "renewal unknown: the old deadline stands",
            (_, Delivery::Answered, _) => match outcome {
                Err(StoreError::VersionConflict) => "no longer ours",
                Err(_) => "gives up",
                Ok(_) => "released",
            },
            _ => "will retry the release",
        };
        if note.is_empty() {
            String::new()
        } else {
            format!("; {note}")
        }
    }
}

impl fmt::Debug for State {
    /// ```text
    /// files-lock/1: {owner: c0-i0, expires: 2} (seq 0/term 1)
    /// files/1: {name, fence: seq 0/term 1}
    /// c0 alive (incarnation 0): Writing, token seq 0/term 1, deadline 2, epoch 0
    /// c1 crashed (incarnation 0): Idle
    /// faults left: lose-reply=1; written by epoch 0; last step: contention
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, shard) in [(LOCK_INDEX, &self.locks), (DATA_INDEX, &self.files)] {
            let docs: Vec<String> = shard
                .docs()
                .map(|(id, d)| format!("{index}/{id}: {} ({})", d.source, d.token()))
                .collect();
            if docs.is_empty() {
                writeln!(f, "{index}: no documents")?;
            } else {
                writeln!(f, "{}", docs.join(", "))?;
            }
        }
        for (c, cl) in self.clients.iter().enumerate() {
            let mut parts = vec![format!("{:?}", cl.pc)];
            if let Some(t) = cl.token {
                parts.push(format!("token {t}"));
            }
            if let Some(t) = cl.renewed {
                parts.push(format!("renewed {t}"));
            }
            if let Some(d) = cl.deadline {
                parts.push(format!("deadline {d}"));
            }
            if let Some(e) = cl.epoch {
                parts.push(format!("epoch {e}"));
            }
            match cl.session {
                Session::None => {}
                Session::Open => parts.push("session open".into()),
                Session::Overlapped => parts.push("session overlapped".into()),
            }
            writeln!(
                f,
                "c{c} {} (incarnation {}): {}",
                if cl.alive { "alive" } else { "crashed" },
                cl.incarnation,
                parts.join(", ")
            )?;
        }
        let written = match self.written {
            Some(e) => format!("; written by epoch {e}"),
            None => String::new(),
        };
        let last = match self.last {
            Event::None => "",
            Event::Refused => "; last step: contention",
            Event::AcquiredAfterCrash => "; last step: acquired after a crash",
            Event::StaleWriteAccepted => "; last step: stale write accepted",
            Event::StaleWriteRejected => "; last step: stale write refused",
        };
        write!(
            f,
            "faults left: {}{written}{}{last}{}",
            self.budget,
            if self.orphaned {
                "; a client crashed while not idle"
            } else {
                ""
            },
            if self.lost_update {
                "; last step: lost update"
            } else {
                ""
            }
        )
    }
}
