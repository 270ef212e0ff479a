//! How the tools present the Redis family ([`Family`]).

use super::protocol::{Action, ALWAYS, SOMETIMES};
use super::scenario::Scenario;
use crate::family::Family;

impl Family for Scenario {
    const NAME: &'static str = "redis";
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
            "rounds": self.rounds,
            "instances": self.instances,
            "ttl": self.ttl,
            "drift": self.drift,
            "faults": {
                "pause": f.pause,
                "slow-acquire": f.slow_acquire,
                "clock-jump": f.clock_jump,
                "fast-clock": f.fast_clock,
                "restart": f.restart,
                "delayed-restart": f.delayed_restart,
                "failover": f.failover,
                "lose-reply": f.lose_reply,
                "crash": f.crash,
            },
        });
        match json {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object literal"),
        }
    }

    fn actor(action: &Action) -> serde_json::Map<String, serde_json::Value> {
        let client = match action {
            Action::Call(c, ..) | Action::Pause(c) | Action::SlowAcquire(c) | Action::Crash(c) => {
                Some(*c)
            }
            _ => None,
        };
        let mut m = serde_json::Map::new();
        m.insert("client".into(), client.into());
        m
    }

    fn step_name(action: &Action) -> String {
        match action {
            Action::Call(_, step, _) => match step {
                super::Step::Set(_) => "Set".into(),
                other => format!("{other:?}"),
            },
            Action::Tick => "Tick".into(),
            Action::Pause(_) => "Pause".into(),
            Action::SlowAcquire(_) => "SlowAcquire".into(),
            Action::Crash(_) => "Crash".into(),
            Action::ClockJump(_) => "ClockJump".into(),
            Action::FastClock(_) => "FastClock".into(),
            Action::Restart(_) => "Restart".into(),
            Action::DelayedRestart(_) => "DelayedRestart".into(),
            Action::Replicate(_) => "Replicate".into(),
            Action::Failover(_) => "Failover".into(),
        }
    }

    fn applies(&self, property: &str) -> bool {
        Scenario::applies(self, property)
    }

    fn documented(&self) -> Vec<(&'static str, &'static str)> {
        Scenario::documented(self)
    }

    fn check_args(&self) -> String {
        let drift = if self.drift == 1 {
            String::new()
        } else {
            format!(" --drift {}", self.drift)
        };
        format!(
            "--variant {} --writes {} --clients {} --rounds {} --instances {}{drift} --faults {}",
            self.variant, self.writes, self.clients, self.rounds, self.instances, self.faults
        )
    }
}
