//! How the tools present the ZooKeeper family ([`Family`]).

use super::protocol::{
    AT_MOST_ONE_HOLDER, HANDOFF_AFTER_EXPIRY, LOCK_LOST_REPORTED, NO_LOST_UPDATE,
};
use super::scenario::{Guard, Scenario, Variant, WriteMode};
use super::Action;
use super::{ALWAYS, SOMETIMES};
use crate::family::Family;

impl Family for Scenario {
    const NAME: &'static str = "zk";
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
            "reentrant": self.reentrant,
            "symmetry": self.symmetry,
            "shared-client": self.shared_client,
            "faults": {
                "expire": f.expire,
                "lose-reply": f.lose_reply,
                "restart": f.restart,
                "recreate-parent": f.recreate_parent,
                "abandon": f.abandon,
                "suspend": f.suspend,
                "lag": f.lag,
                "misread": f.misread,
            },
        });
        // Only when set: the rows pinned before this fault keep their description.
        let mut json = json;
        if f.refuse_session > 0 {
            json["faults"]["refuse-session"] = f.refuse_session.into();
        }
        match json {
            serde_json::Value::Object(mut map) => {
                // Only where set, so the rows from before the option keep their parameters.
                if let Some(w) = self.sequence_width {
                    map.insert("sequence-width".into(), w.into());
                }
                map
            }
            _ => unreachable!("an object literal"),
        }
    }

    fn actor(action: &Action) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("client".into(), action.client().into());
        m
    }

    fn step_name(action: &Action) -> String {
        action.name().to_owned()
    }

    /// Where the two session properties can be reached, as the model finds it for every
    /// recipe, guard and client sharing under each single fault (`model/tests/models/zk/applies.rs`
    /// checks this rule against the model, both ways):
    /// - "handoff after expiry" needs a holder's session to end while it still believes it
    ///   holds: an `expire`, or a `restart` whose abandoned session then times out — but with
    ///   the lockwright guard on its own client the restart itself reports the loss, so no
    ///   holder still believes when that session ends (it can with the Curator guard, or with
    ///   a shared client whose other mutex restarted the handle).
    /// - "lock lost reported" needs a session to end (`expire`, `restart`). A lost reply, a
    ///   re-created parent, a dropped future, a suspension, a lagging read or a misread name
    ///   never takes a hold away — except in `delete-by-name-retry` with a shared client,
    ///   where the retried delete removes the other mutex's node.
    fn applies(&self, property: &str) -> bool {
        let f = self.faults;
        match property {
            HANDOFF_AFTER_EXPIRY => {
                f.expire > 0
                    || (f.restart > 0 && (self.guard == Guard::Curator || self.shared_client))
            }
            LOCK_LOST_REPORTED => {
                f.expire > 0
                    || f.restart > 0
                    || (self.variant == Variant::DeleteByNameRetry
                        && self.shared_client
                        && f.lose_reply > 0)
            }
            _ => true,
        }
    }

    /// Once a session can expire and a second client can be granted, "at most one holder"
    /// is violated in every variant (docs/zookeeper.md §5, every row with `expire`): the
    /// expired holder learns of it only with its next reply or session event. With a bare
    /// `fenced` resource the same expiry loses an update (§5, "Fencing and lost updates"):
    /// the fence learns of the new holder only at its first write.
    fn documented(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        // A holder's session can end while it still believes it holds: an expiry, or a
        // restart it does not hear of at once (the Curator guard never revokes; a mutex of a
        // shared client notices the other's restart only at its next step).
        let f = self.faults;
        let unheard_restart = f.restart > 0 && (self.guard == Guard::Curator || self.shared_client);
        if (f.expire > 0 || unheard_restart) && self.clients >= 2 {
            out.push((
                AT_MOST_ONE_HOLDER,
                "a holder whose session ended still believes it holds",
            ));
            if self.writes == WriteMode::Fenced {
                out.push((
                    NO_LOST_UPDATE,
                    "a bare fence learns of a new holder only at its first write (fenced-claim closes it)",
                ));
            }
        }
        out
    }

    fn check_args(&self) -> String {
        let mut args = format!(
            "--variant {} --writes {} --clients {}",
            self.variant, self.writes, self.clients
        );
        if self.guard != Guard::Lockwright {
            args.push_str(&format!(" --guard {}", self.guard));
        }
        if self.shared_client {
            args.push_str(" --shared-client");
        }
        if let Some(w) = self.sequence_width {
            args.push_str(&format!(" --sequence-width {w}"));
        }
        args.push_str(&format!(
            " --faults {} --symmetry {}",
            self.faults,
            if self.symmetry { "on" } else { "off" }
        ));
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check;
    use crate::zk::{Faults, Variant};

    /// A lost reply and a re-created parent end no session: neither session property applies,
    /// and neither is reached. A restart reports the loss at once with the lockwright guard,
    /// so no holder is left believing when its old session ends ("handoff after expiry" n/a);
    /// with the Curator guard it is. `model/tests/models/zk/applies.rs` checks the whole rule.
    #[test]
    fn session_properties_need_a_session_to_end() {
        let sc = Scenario::new(Variant::Curator, WriteMode::Fenced)
            .with_clients(2)
            .with_faults(Faults::parse("lose-reply=1,recreate-parent=1").expect("faults"));
        assert!(!sc.applies(HANDOFF_AFTER_EXPIRY) && !sc.applies(LOCK_LOST_REPORTED));
        let report = check(&sc);
        assert!(!report.verdict(HANDOFF_AFTER_EXPIRY).holds());
        assert!(!report.verdict(LOCK_LOST_REPORTED).holds());
        let restart = sc.with_faults(Faults::parse("restart=1").expect("faults"));
        assert!(!restart.applies(HANDOFF_AFTER_EXPIRY) && restart.applies(LOCK_LOST_REPORTED));
        let curator = restart.with_guard(Guard::Curator);
        assert!(curator.applies(HANDOFF_AFTER_EXPIRY));
        assert!(check(&curator).verdict(HANDOFF_AFTER_EXPIRY).holds());
    }
}
