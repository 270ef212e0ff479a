//! How the tools present the replication family ([`Family`]).

use super::protocol::{Action, ALWAYS, RECOVERED, SOMETIMES};
use super::scenario::Scenario;
use crate::family::Family;

impl Family for Scenario {
    const NAME: &'static str = "replication";
    const ALWAYS: &'static [&'static str] = &ALWAYS;
    const SOMETIMES: &'static [&'static str] = &SOMETIMES;

    fn label(&self) -> String {
        Scenario::label(self)
    }

    fn parameters(&self) -> serde_json::Map<String, serde_json::Value> {
        let json = serde_json::json!({
            "variant": self.variant.name(),
            "reader": self.reader.name(),
            "pace": self.pace.name(),
            "readers": self.readers,
            "rounds": self.rounds,
            "data_files": self.data_files,
            "symmetry": self.symmetry,
            "faults": { "crash": self.faults.crash },
        });
        match json {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object literal"),
        }
    }

    fn actor(action: &Action) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let reader = match action {
            Action::List(r) | Action::Open(r) => Some(u32::from(*r)),
            _ => None,
        };
        m.insert("reader".into(), reader.into());
        m
    }

    fn step_name(action: &Action) -> String {
        action.name().to_owned()
    }

    /// "a round completes after a crash" needs a copier crash (`crash` faults).
    fn applies(&self, property: &str) -> bool {
        property != RECOVERED || self.faults.crash > 0
    }

    fn check_args(&self) -> String {
        format!(
            "--variant {} --reader {} --pace {} --readers {} --rounds {} --data-files {} --faults {} \
             --symmetry {}",
            self.variant,
            self.reader,
            self.pace,
            self.readers,
            self.rounds,
            self.data_files,
            self.faults,
            if self.symmetry { "on" } else { "off" }
        )
    }
}
