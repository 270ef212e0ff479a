//! How the tools present the document-store family ([`Family`]).

use super::protocol::{
    Action, ALWAYS, AT_MOST_ONE_WRITER, NO_LOST_UPDATE, NO_STALE_LOCK, SOMETIMES,
};
use super::scenario::{Faults, Scenario, Variant, Writes};
use crate::family::Family;

impl Scenario {
    /// The declared verdicts of the variant's recipe, before the writes mode adds its own.
    fn documented_recipe(&self, f: Faults) -> Vec<(&'static str, &'static str)> {
        match self.variant {
            Variant::LeasedUpsert => Self::documented_upsert(f),
            Variant::Leased => {
                let mut out = Vec::new();
                match (f.pause > 0, f.rollback > 0) {
                    (true, false) => out.push((
                        AT_MOST_ONE_WRITER,
                        "a holder paused past its lease still believes it may write",
                    )),
                    (_, true) => out.push((
                        AT_MOST_ONE_WRITER,
                        "a holder paused past its lease, or whose acquire or renewal a \
                         fail-over rolled back, still believes it may write (the fence, its \
                         read-back and its conditioned writes keep its writes out)",
                    )),
                    (false, false) => {}
                }
                if f.recreate_index > 0 || f.stray_delete > 0 || f.reinstall > 0 {
                    out.push((
                        NO_STALE_LOCK,
                        "the recipe never creates a missing lock document again: after a \
                         re-created index or a stray delete it is installed apart (the guarded \
                         install, safe at any time)",
                    ));
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// `leased-upsert` (the corrected recipe before the fix): what the page documents.
    fn documented_upsert(f: Faults) -> Vec<(&'static str, &'static str)> {
        let lost_lock_document = f.recreate_index > 0 || f.rollback > 0;
        let reason = match (f.pause > 0, f.stray_delete > 0) {
            _ if lost_lock_document => {
                "a holder paused past its lease, or whose lock document was deleted, re-created \
                 or rolled back, still believes it may write"
            }
            (true, false) => "a holder paused past its lease still believes it may write",
            (false, true) => "a stray delete of the lock document frees it under its holder",
            (true, true) => {
                "a holder paused past its lease, or whose lock document a stray delete \
                 removed, still believes it may write"
            }
            (false, false) => return Vec::new(),
        };
        vec![(AT_MOST_ONE_WRITER, reason)]
    }
}

impl Family for Scenario {
    const NAME: &'static str = "docstore";
    const ALWAYS: &'static [&'static str] = &ALWAYS;
    const SOMETIMES: &'static [&'static str] = &SOMETIMES;

    fn label(&self) -> String {
        Scenario::label(self)
    }

    fn parameters(&self) -> serde_json::Map<String, serde_json::Value> {
        let f = self.faults;
        let json = serde_json::json!({
            "variant": self.variant.name(),
            "writes": self.writes.name(),
            "clients": self.clients,
            "readers": self.readers,
            "lease": self.lease,
            "symmetry": self.symmetry,
            "faults": {
                "crash": f.crash,
                "restart": f.restart,
                "stray-delete": f.stray_delete,
                "lose-reply": f.lose_reply,
                "pause": f.pause,
                "failover": f.failover,
                "recreate-index": f.recreate_index,
                "recreate-doc": f.recreate_doc,
                "rollback": f.rollback,
                "reinstall": f.reinstall,
                "skew": f.skew,
            },
        });
        match json {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object literal"),
        }
    }

    fn actor(action: &Action) -> serde_json::Map<String, serde_json::Value> {
        let client = match action {
            Action::Call(c, ..) | Action::Crash(c) | Action::Restart(c) | Action::Pause(c) => {
                Some(*c)
            }
            Action::StrayDelete
            | Action::Tick
            | Action::Failover
            | Action::RecreateIndex
            | Action::RecreateDoc
            | Action::Rollback
            | Action::LoseLockIndex
            | Action::ReinstallLock
            | Action::SkewClock(_) => None,
        };
        let mut m = serde_json::Map::new();
        m.insert("client".into(), client.into());
        m
    }

    fn step_name(action: &Action) -> String {
        match action {
            Action::Call(_, step, _) => format!("{step:?}"),
            Action::Crash(_) => "Crash".into(),
            Action::Restart(_) => "Restart".into(),
            Action::StrayDelete => "StrayDelete".into(),
            Action::Tick => "Tick".into(),
            Action::Pause(_) => "Pause".into(),
            Action::Failover => "Failover".into(),
            Action::RecreateIndex => "RecreateIndex".into(),
            Action::RecreateDoc => "RecreateDoc".into(),
            Action::Rollback => "Rollback".into(),
            Action::LoseLockIndex => "LoseLockIndex".into(),
            Action::ReinstallLock => "ReinstallLock".into(),
            Action::SkewClock(_) => "SkewClock".into(),
        }
    }

    fn applies(&self, property: &str) -> bool {
        Scenario::applies(self, property)
    }

    /// The corrected recipe cannot stop a holder that stops running past its lease, nor (before
    /// the fix, `leased-upsert`) the loss of its lock document (an operator's stray delete,
    /// the lock index re-created, an acknowledged acquire rolled back at a fail-over:
    /// docs/docstore.md, rows 17–20 and 26–30); its fence keeps the old holder's writes out
    /// where the fence itself survives. The fixed `leased` trades liveness for that: a lock
    /// document that is gone is never created again by the recipe, so "no stale lock" fails
    /// once it is deleted or its index re-created (an operator installs it again). The recipes
    /// as written and the `leased-fix-*` twins declare nothing: their violations are the bugs
    /// the page shows.
    fn documented(&self) -> Vec<(&'static str, &'static str)> {
        let f = self.faults;
        if self.clients < 2 {
            return Vec::new();
        }
        let mut out = self.documented_recipe(f);
        // With a bare `fenced` resource (no claim at acquire) the same two holders lose an
        // update (row 18): the fence learns of the new holder only at its first write.
        if self.writes == Writes::Fenced && out.iter().any(|(p, _)| *p == AT_MOST_ONE_WRITER) {
            out.push((
                NO_LOST_UPDATE,
                "a bare fence learns of a new holder only at its first write (fenced-claim closes it)",
            ));
        }
        out
    }
    fn check_args(&self) -> String {
        let mut args = format!(
            "--variant {} --writes {} --clients {}",
            self.variant, self.writes, self.clients
        );
        if self.variant == Variant::ReadWrite {
            args.push_str(&format!(" --readers {}", self.readers));
        }
        if self.variant.leased() {
            args.push_str(&format!(" --lease {}", self.lease));
        }
        args.push_str(&format!(
            " --faults {} --symmetry {}",
            self.faults,
            if self.symmetry { "on" } else { "off" }
        ));
        args
    }
}

impl Scenario {
    /// Whether `property` can be exercised in this scenario at all: the reader properties
    /// ("readers and writer exclusive", "readers share") need a `read-write` scenario with
    /// readers and a writer; "acquired after crash" needs a crash budget; "stale write
    /// attempted" needs a second client and a fault that can hand the lock to it behind a
    /// holder's back ([`Scenario::can_supersede`]). The CLI prints "n/a" for a property that
    /// does not apply and was not reached.
    pub fn applies(&self, property: &str) -> bool {
        use crate::docstore::protocol::{
            ACQUIRED_AFTER_CRASH, READERS_AND_WRITER_EXCLUSIVE, READERS_SHARE,
            STALE_WRITE_ATTEMPTED,
        };
        if property == READERS_AND_WRITER_EXCLUSIVE || property == READERS_SHARE {
            self.variant == Variant::ReadWrite && self.readers > 0
        } else if property == ACQUIRED_AFTER_CRASH {
            self.faults.crash > 0
        } else if property == STALE_WRITE_ATTEMPTED {
            self.clients >= 2 && self.can_supersede()
        } else {
            true
        }
    }

    /// Whether some fault in the budget can let a second client acquire while a holder still
    /// writes (so that a stale write can be attempted), per recipe. Found by checking each
    /// recipe under each single fault and kept honest by a test that checks every recipe ×
    /// write mode × single fault again (`model/tests/models/docstore/stale_write_reach.rs`):
    /// `global` and `document` by a stray delete, a lost reply, a re-created index or a
    /// rollback; `leased` and the fix's twins by a pause past the lease, and by a rollback
    /// unless the writes claim the data document at acquire (`fenced-claim`; always for
    /// `leased-fix-unverified`, which has no read-back), plus a stray delete or re-created
    /// index for `leased-fix-upsert` (its upsert grants a missing lock document); `leased-upsert` by a
    /// pause, a stray delete, a re-created index or a rollback; `leased-noop` with no fault
    /// (its own bug); `document-bulk` by a lost reply or a re-created index; `read-write`
    /// never. A fault set that reaches it only in combination still gets its verdict printed
    /// when reached.
    pub fn can_supersede(&self) -> bool {
        let f = self.faults;
        let (pause, delete, lost, recreate, rollback) = (
            f.pause > 0,
            f.stray_delete > 0,
            f.lose_reply > 0,
            f.recreate_index > 0,
            f.rollback > 0,
        );
        let claimed = self.writes == Writes::FencedClaim;
        match self.variant {
            Variant::Global | Variant::Document => delete || lost || recreate || rollback,
            // A rolled-back renewal (`RenewLease`) shortens the server's lease under a holder
            // that believes it renewed, claimed or not. The guarded re-install lets no grant
            // in before the old leases have passed; the unguarded one grants at once.
            Variant::Leased
            | Variant::LeasedFixUnconditional
            | Variant::LeasedFixUnchecked
            | Variant::LeasedFixUnverified => pause || rollback,
            Variant::LeasedFixUnguardedInstall => pause || rollback || f.reinstall > 0,
            Variant::LeasedFixUpsert => pause || delete || recreate || (rollback && !claimed),
            Variant::LeasedUpsert => pause || delete || recreate || rollback,
            Variant::LeasedNoop => true,
            Variant::DocumentBulk => lost || recreate,
            Variant::ReadWrite => false,
        }
    }
}
