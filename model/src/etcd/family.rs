//! How the tools present the etcd family ([`Family`]).

use super::protocol::{
    Action, ACQUIRED_AFTER_CRASH, AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, CONTENTION_SEEN,
    FENCED_WRITES_ARE_EXCLUSIVE, HANDOFF_AFTER_EXPIRY, LOCK_LOST_REPORTED, NO_GRANT_WITHOUT_A_KEY,
    NO_LOST_UPDATE, NO_ORPHAN_KEY, WAITER_WOKEN_BY_WATCH,
};
use super::scenario::{Guard, Scenario, Variant, WriteMode};
use super::{ALWAYS, SOMETIMES};
use crate::family::Family;

impl Family for Scenario {
    const NAME: &'static str = "etcd";
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
            "guard": self.guard.name(),
            "clients": self.clients,
            "cycles": self.cycles,
            "revision-width": self.revision_width,
            "faults": {
                "expire": f.expire,
                "pause": f.pause,
                "lose-reply": f.lose_reply,
                "leader-change": f.leader_change,
                "compact": f.compact,
                "restart": f.restart,
            },
        });
        match json {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object literal"),
        }
    }

    fn actor(action: &Action) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert(
            "client".into(),
            action.client().map_or(serde_json::Value::Null, Into::into),
        );
        m
    }

    fn step_name(action: &Action) -> String {
        action.name().to_owned()
    }

    /// Where the `sometimes` properties can be reached: "handoff after expiry" needs a lease
    /// to run out under a holder (`expire` or `pause`; the lock service's leases never run
    /// out); "lock lost reported" needs the same with a guard or 3.5's re-check, or a retried
    /// unlock that deletes the next key of its own session; "acquired after crash" needs a
    /// restart; the two waiting properties need a second client.
    fn applies(&self, property: &str) -> bool {
        let f = self.faults;
        let two = self.clients >= 2;
        let retry_deletes_own = self.variant == Variant::UnlockRetryByName
            && f.lose_reply > 0
            && self.cycles >= 2
            && two;
        match property {
            HANDOFF_AFTER_EXPIRY => self.lease_can_end() && two,
            LOCK_LOST_REPORTED => {
                (self.lease_can_end()
                    && (self.guard != Guard::None || (self.variant.rechecks() && two)))
                    || retry_deletes_own
            }
            ACQUIRED_AFTER_CRASH => f.restart > 0,
            CONTENTION_SEEN | WAITER_WOKEN_BY_WATCH => two,
            _ => true,
        }
    }

    /// The `always` verdicts by design (each row of `docs/etcd.md`'s table is checked against
    /// this rule). The standard scenario documents nothing: with lockwright's guard (the
    /// deadline from the keepalive's send) and guarded writes every property holds.
    fn documented(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        let f = self.faults;
        let two = self.clients >= 2;
        let ends = self.lease_can_end() && two;
        let retry_deletes_own = self.variant == Variant::UnlockRetryByName
            && f.lose_reply > 0
            && self.cycles >= 2
            && two;
        if (ends && self.guard != Guard::Lockwright) || retry_deletes_own {
            out.push((
                AT_MOST_ONE_HOLDER,
                "a holder whose lease ran out, or whose key a retried unlock deleted, still believes it holds",
            ));
        }
        if retry_deletes_own {
            out.push((
                AT_MOST_ONE_LIVE_HOLDER,
                "etcd-io/etcd#22082: a retried unlock by name deletes the session's next key",
            ));
        }
        let unordered_token = self.variant == Variant::LeaseIdToken && f.leader_change > 0;
        let stale_lands = ends
            && (self.writes == WriteMode::Unfenced
                || (unordered_token && self.writes == WriteMode::Fenced)
                || (unordered_token
                    && self.writes == WriteMode::FencedClaim
                    && self.guard != Guard::Lockwright));
        if stale_lands {
            out.push((
                FENCED_WRITES_ARE_EXCLUSIVE,
                "a stale holder's write lands after a newer grant's (unfenced, or a lease-id token)",
            ));
        }
        // A claim reads after claiming: a stale write lands, but on what it read then.
        if (stale_lands && self.writes != WriteMode::FencedClaim)
            || (ends && self.writes == WriteMode::Fenced)
        {
            out.push((
                NO_LOST_UPDATE,
                "a stale holder's write in flight lands after the next holder read (a bare fence learns of it too late)",
            ));
        }
        if self.variant == Variant::Etcd34 && ends {
            out.push((
                NO_GRANT_WITHOUT_A_KEY,
                "etcd-io/etcd#11456: a waiter whose lease expired is told it holds",
            ));
        }
        if self.variant == Variant::LockService && f.restart > 0 {
            out.push((
                NO_ORPHAN_KEY,
                "the lock service's own session keeps a restarted client's key alive",
            ));
        }
        out
    }

    fn check_args(&self) -> String {
        format!(
            "--variant {} --writes {} --guard {} --clients {} --cycles {} --revision-width {} --faults {}",
            self.variant,
            self.writes,
            self.guard,
            self.clients,
            self.cycles,
            self.revision_width,
            self.faults
        )
    }
}
