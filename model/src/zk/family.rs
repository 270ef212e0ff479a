//! How the tools present the ZooKeeper family ([`Family`]).

use super::scenario::{Guard, Scenario};
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
            "faults": {
                "expire": f.expire,
                "lose-reply": f.lose_reply,
                "restart": f.restart,
                "recreate-parent": f.recreate_parent,
            },
        });
        match json {
            serde_json::Value::Object(map) => map,
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

    fn check_args(&self) -> String {
        let mut args = format!(
            "--variant {} --writes {} --clients {}",
            self.variant, self.writes, self.clients
        );
        if self.guard != Guard::Lockwright {
            args.push_str(&format!(" --guard {}", self.guard));
        }
        args.push_str(&format!(
            " --faults {} --symmetry {}",
            self.faults,
            if self.symmetry { "on" } else { "off" }
        ));
        args
    }
}
