//! Redis locks in the report (`docs/redis.md`): its rows — each of Kleppmann's and
//! Sanfilippo's scenarios among them — and how its traces are drawn: a lane per client, and
//! on the right the Redis instances (the model's; no real server was run for these rows) with
//! the lock key, its time left and the fencing counter, and the protected resource.

use lockwright_model::redis::protocol::{
    AT_MOST_ONE_HOLDER, AT_MOST_ONE_LIVE_HOLDER, FENCED_WRITES_ARE_EXCLUSIVE, NO_LOST_UPDATE,
    NO_STALE_LOCK,
};
use lockwright_model::redis::{Action, Faults, Scenario, State, Validity, Variant, Writes};

use super::{clients_list, faults_slug, Presenter};
use crate::trace::Words;

const WORDS: Words = Words {
    server_title: "Redis instances (modelled) and the resource",
    server_width: 620,
    intro: "Lanes: one per client; on the right the Redis instances `i0`, `i1`, … (the model \
            of Redis 7.0's `SET NX PX`, the Lua release, key expiry by each instance's own \
            clock; no real server was run for these rows, see redis.md) and the protected \
            resource, where the clock's `Tick`, a `ClockJump`, a `Restart`, a replica's \
            `Replicate` and a `Failover` happen. *What happened* is the step as `lockwright \
            check --family redis` prints it. *Instances after* shows, per instance, the lock \
            key's token (`tok<client>.<round>`, `+<n>` for a round's later attempt) and its time left in ticks (`∞`: no expiry), \
            the fencing counter, and the resource's version, fence and owner; *holders after* \
            lists the clients that believe they hold the lock, with the validity they believe \
            in (`∞`: longer than any TTL). Red: a fault.",
    effect_column: "what happened",
    server_column: "instances after",
    local_note: "(no command)",
    legend: "green bar: the client believes it holds the lock · arrow: a command to Redis or \
             to the resource · red: fault · brown: the instances after the step",
    results_page: "results-redis.md",
    footer: "All rows: [results-redis.md](../../results-redis.md). The recipes, the faults, \
             the timing assumptions and what each property means: [redis.md](../../redis.md).",
    keep_answer: true,
};

fn new(variant: Variant, writes: Writes, faults: &str) -> Scenario {
    Scenario::new(variant, writes).with_faults(Faults::parse(faults).expect("valid fault list"))
}

impl Presenter for Scenario {
    const TITLE: &'static str = "Redis locks (the single-instance lock and Redlock)";
    const PAGE: &'static str = "redis.md";
    const ROW_HEADERS: &'static [&'static str] =
        &["recipe × writes", "clients × rounds, instances", "faults"];

    fn words() -> &'static Words {
        &WORDS
    }

    /// `docs/redis.md`, the verdict table (`results-redis.json` pins them).
    fn rows() -> Vec<Scenario> {
        use Variant::*;
        use Writes::*;
        vec![
            Scenario::standard(),
            new(Single, Unfenced, "none"),
            new(Single, Unfenced, "pause=1"),
            new(Single, Fenced, "pause=1"),
            new(Single, FencedClaim, "pause=1"),
            new(Single, Cas, "pause=1"),
            new(Single, FencedClaim, "clock-jump=1"),
            new(Single, Unfenced, "restart=1"),
            new(Single, Unfenced, "delayed-restart=1"),
            new(Single, FencedClaim, "failover=1"),
            new(Single, Unfenced, "pause=1").with_rounds(2),
            new(SingleUnchecked, Unfenced, "pause=1").with_rounds(2),
            new(Redlock, Unfenced, "none"),
            new(Redlock, Unfenced, "pause=1"),
            new(Redlock, FencedClaim, "pause=1"),
            new(Redlock, Unfenced, "clock-jump=1"),
            new(Redlock, Unfenced, "restart=1"),
            new(Redlock, Unfenced, "delayed-restart=1"),
            new(Redlock, Unfenced, "slow-acquire=1"),
            new(RedlockNoRecheck, Unfenced, "none"),
            new(RedlockWrappingValidity, Unfenced, "none"),
            new(RedlockWrappingValidity, Unfenced, "slow-acquire=1"),
            new(Redlock, FencedClaim, "lose-reply=1,crash=1"),
            new(RedisPy, Unfenced, "pause=1,clock-jump=1"),
            new(RedisPy, Unfenced, "crash=1"),
            new(RedisPy, Unfenced, "lose-reply=1"),
            new(RedisPy, Unfenced, "failover=1"),
            new(Redlock, Unfenced, "fast-clock=1"),
            new(Redlock, Unfenced, "fast-clock=1").with_drift(0),
        ]
    }

    fn row_cells(&self) -> Vec<String> {
        vec![
            format!("`{} × {}`", self.variant, self.writes),
            format!("{} × {}, {}", self.clients, self.rounds, self.instances),
            if self.drift == 1 {
                format!("`{}`", self.faults)
            } else {
                format!("`{}`, drift {}", self.faults, self.drift)
            },
        ]
    }

    fn slug(&self) -> String {
        let drift = if self.drift == 1 {
            String::new()
        } else {
            format!(".drift{}", self.drift)
        };
        format!(
            "{}.{}.{}c{}r{}i.{}{drift}",
            self.variant,
            self.writes,
            self.clients,
            self.rounds,
            self.instances,
            faults_slug(&self.faults.to_string())
        )
    }

    fn clients(&self) -> Vec<(u8, String)> {
        (0..self.clients).map(|c| (c, String::new())).collect()
    }

    fn lane(action: &Action) -> Option<u8> {
        match *action {
            Action::Call(c, ..) | Action::Pause(c) | Action::SlowAcquire(c) | Action::Crash(c) => {
                Some(c)
            }
            _ => None,
        }
    }

    /// Every client step but the local ones (`Decide`, `Check`) sends a command.
    fn request(action: &Action) -> bool {
        use lockwright_model::redis::Step;
        matches!(action, Action::Call(_, step, _) if !matches!(step, Step::Decide | Step::Check))
    }

    fn fault(action: &Action) -> bool {
        use lockwright_model::redis::Delivery;
        matches!(
            action,
            Action::Call(_, _, Delivery::Lost)
                | Action::Pause(_)
                | Action::SlowAcquire(_)
                | Action::Crash(_)
                | Action::ClockJump(_)
                | Action::FastClock(_)
                | Action::Restart(_)
                | Action::DelayedRestart(_)
                | Action::Failover(_)
        )
    }

    /// `i0: tok0.0 (2 left), counter 1; i1: empty (down 2) | resource v1, fence 1`.
    fn server_view(&self, s: &State) -> String {
        let instances: Vec<String> = s
            .instances
            .iter()
            .enumerate()
            .map(|(i, inst)| {
                let key = match inst.key {
                    Some(e) => match e.left {
                        Some(l) => format!("{} ({l} left)", e.token),
                        None => format!("{} (∞)", e.token),
                    },
                    None => "empty".to_string(),
                };
                let mut out = format!("i{i}: {key}");
                if inst.counter > 0 {
                    out.push_str(&format!(", counter {}", inst.counter));
                }
                if inst.down > 0 {
                    out.push_str(&format!(", down {}", inst.down));
                }
                if let Some(r) = inst.replica {
                    let rk = r.key.map_or("empty".to_string(), |e| e.token.to_string());
                    out.push_str(&format!(", replica {rk}"));
                }
                out
            })
            .collect();
        let r = s.resource;
        let mut res = format!("resource v{}", r.version);
        if r.fence > 0 {
            res.push_str(&format!(", fence {}", r.fence));
        }
        if let Some(o) = r.owner {
            res.push_str(&format!(", owner {o}"));
        }
        format!("{} | {res}", instances.join("; "))
    }

    fn holders(&self, s: &State) -> Vec<u8> {
        s.holders().collect()
    }

    fn explain(&self, s: &State, property: &str) -> String {
        let belief = |c: u8| match s.clients[c as usize].validity {
            Validity::Until(n) => format!("c{c} (validity {n})"),
            Validity::Long => format!("c{c} (validity ∞)"),
            Validity::None => format!("c{c}"),
        };
        let holders: Vec<u8> = s.holders().collect();
        let described: Vec<String> = holders.iter().map(|&c| belief(c)).collect();
        match property {
            AT_MOST_ONE_HOLDER => format!(
                "{} all believe they hold the lock: {}",
                clients_list(&holders),
                described.join(", ")
            ),
            AT_MOST_ONE_LIVE_HOLDER => format!(
                "{} believe they hold the lock with validity left: {}",
                clients_list(&s.live_holders().collect::<Vec<_>>()),
                described.join(", ")
            ),
            FENCED_WRITES_ARE_EXCLUSIVE => format!(
                "the resource accepted a write from an earlier hold after a later hold's \
                 write (resource v{}, fence {})",
                s.resource.version, s.resource.fence
            ),
            NO_LOST_UPDATE => format!(
                "the resource accepted a write based on a version another hold's write had \
                 already replaced (now v{})",
                s.resource.version
            ),
            NO_STALE_LOCK => "a lock key without expiry belongs to a client that no longer \
                              holds or acquires it: nobody can acquire again"
                .to_string(),
            other => format!("violates “{other}”"),
        }
    }
}
