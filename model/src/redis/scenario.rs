//! Which recipe, which write path, how many clients and instances, which faults: one
//! [`Scenario`] is one finite model instance.

use std::fmt;

use crate::redis::server::Time;

/// The bit width of the `redlock-wrapping-validity` client's unsigned arithmetic: the
/// `redlock` crate computes `ttl - elapsed - drift` in `u64`, which wraps (in a release build)
/// when acquiring took longer than the TTL; here it wraps at 4 bits, a few ticks away.
pub const WIDTH: u32 = 4;

/// A lock recipe (command-line name in [`Variant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// One instance: `SET k tok NX PX ttl` with a random token; the holder's validity is
    /// `ttl − elapsed − drift`, checked before it counts as held and before each use;
    /// release by the compare-and-delete script.
    Single,
    /// `single` releasing with a plain `DEL k` (no token check), as many blog recipes do.
    SingleUnchecked,
    /// Redlock over N instances: `SET NX PX` on each in turn, held with a majority and a
    /// validity `ttl − elapsed − drift` > 0 (the re-check after acquiring), else released
    /// everywhere; release everywhere by compare-and-delete.
    Redlock,
    /// `redlock` without the re-check: a majority is held for the full TTL, however long
    /// acquiring took.
    RedlockNoRecheck,
    /// `redlock` with the `redlock` crate's arithmetic: the validity subtracted in unsigned
    /// [`WIDTH`]-bit integers, so an acquisition slower than the TTL wraps to a huge validity.
    RedlockWrappingValidity,
    /// redis-py's `Lock` as written, with its default `timeout=None`: `SET k tok NX` with no
    /// expiry, Lua release with the token check (`LockNotOwnedError` otherwise).
    RedisPy,
}

impl Variant {
    pub const ALL: [Variant; 6] = [
        Variant::Single,
        Variant::SingleUnchecked,
        Variant::Redlock,
        Variant::RedlockNoRecheck,
        Variant::RedlockWrappingValidity,
        Variant::RedisPy,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Single => "single",
            Variant::SingleUnchecked => "single-unchecked",
            Variant::Redlock => "redlock",
            Variant::RedlockNoRecheck => "redlock-no-recheck",
            Variant::RedlockWrappingValidity => "redlock-wrapping-validity",
            Variant::RedisPy => "redis-py",
        }
    }

    /// Whether the recipe runs over N independent instances (Redlock).
    pub fn redlock(self) -> bool {
        matches!(
            self,
            Variant::Redlock | Variant::RedlockNoRecheck | Variant::RedlockWrappingValidity
        )
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a holder writes the protected resource (a store apart from Redis).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Writes {
    /// The resource accepts every write.
    Unfenced,
    /// The holder's `SET NX` is a script that also runs `INCR fence` when it sets the key
    /// (one atomic step per instance); its fencing token is the highest counter among the
    /// instances that granted. The resource accepts a write whose token is at least the
    /// highest it accepted.
    Fenced,
    /// `fenced`, and the holder claims the resource with its token before its first write
    /// (the resource raises its fence then, so an older holder is refused from that moment).
    FencedClaim,
    /// Check-and-set by the random value (Sanfilippo's reply): after acquiring, the holder
    /// sets the resource's owner to its random token; the resource accepts a write only from
    /// the current owner. No order between tokens.
    Cas,
}

impl Writes {
    pub const ALL: [Writes; 4] = [
        Writes::Unfenced,
        Writes::Fenced,
        Writes::FencedClaim,
        Writes::Cas,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Writes::Unfenced => "unfenced",
            Writes::Fenced => "fenced",
            Writes::FencedClaim => "fenced-claim",
            Writes::Cas => "cas",
        }
    }

    /// Whether the holder takes a fencing token (the `SET NX` + `INCR` script).
    pub fn counted(self) -> bool {
        matches!(self, Writes::Fenced | Writes::FencedClaim)
    }

    /// Whether the holder claims the resource before writing.
    pub fn claims(self) -> bool {
        matches!(self, Writes::FencedClaim | Writes::Cas)
    }
}

impl fmt::Display for Writes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Fault budgets: how many times each fault may happen in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// A holder that has checked its validity stops (a GC pause, a SIGSTOP) and time runs
    /// past its validity before its write.
    pub pause: u8,
    /// An acquisition takes longer than the TTL (slow network, a slow instance).
    pub slow_acquire: u8,
    /// An instance's wall clock jumps forward past every expiry.
    pub clock_jump: u8,
    /// An instance's clock runs fast: it gains one tick on the clients' clocks (its keys
    /// expire a tick early). The budget bounds the total gain of a run — the bounded skew the
    /// recipe's drift allowance must cover: the lock holds while no instance gains more than
    /// `drift` ticks (for Redlock too: two majorities share an instance, and its early expiry
    /// is enough).
    pub fast_clock: u8,
    /// An instance restarts without persistence and answers at once.
    pub restart: u8,
    /// An instance restarts without persistence and, by Sanfilippo's delayed-restart rule,
    /// answers only after the TTL has passed.
    pub delayed_restart: u8,
    /// An instance's primary dies and its replica is promoted with what asynchronous
    /// replication had brought it (every instance has a replica when this budget is > 0).
    pub failover: u8,
    /// A `SET NX` is applied but its reply is lost (the client sees an error).
    pub lose_reply: u8,
    /// A client crashes and never comes back.
    pub crash: u8,
}

impl Faults {
    pub const NONE: Faults = Faults {
        pause: 0,
        slow_acquire: 0,
        clock_jump: 0,
        fast_clock: 0,
        restart: 0,
        delayed_restart: 0,
        failover: 0,
        lose_reply: 0,
        crash: 0,
    };

    /// `(name, budget)` in command-line order.
    fn named(&self) -> [(&'static str, u8); 9] {
        [
            ("pause", self.pause),
            ("slow-acquire", self.slow_acquire),
            ("clock-jump", self.clock_jump),
            ("fast-clock", self.fast_clock),
            ("restart", self.restart),
            ("delayed-restart", self.delayed_restart),
            ("failover", self.failover),
            ("lose-reply", self.lose_reply),
            ("crash", self.crash),
        ]
    }

    /// Parses `pause=1,clock-jump=1` (or `none`).
    ///
    /// # Errors
    /// An unknown fault name or a count that is not 0..=255.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = Faults::NONE;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item == "none" {
                continue;
            }
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("fault `{item}`: expected NAME=COUNT"))?;
            let n: u8 = value
                .trim()
                .parse()
                .map_err(|_| format!("fault `{item}`: COUNT must be 0..=255"))?;
            let slot = match key.trim() {
                "pause" => &mut f.pause,
                "slow-acquire" => &mut f.slow_acquire,
                "clock-jump" => &mut f.clock_jump,
                "fast-clock" => &mut f.fast_clock,
                "restart" => &mut f.restart,
                "delayed-restart" => &mut f.delayed_restart,
                "failover" => &mut f.failover,
                "lose-reply" => &mut f.lose_reply,
                "crash" => &mut f.crash,
                other => {
                    return Err(format!(
                        "unknown fault `{other}` (expected pause, slow-acquire, clock-jump, \
                         fast-clock, restart, delayed-restart, failover, lose-reply, crash)"
                    ))
                }
            };
            *slot = n;
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .named()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        if items.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&items.join(","))
        }
    }
}

/// One model instance: the Stateright [`stateright::Model`] is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    pub writes: Writes,
    /// Clients (1..=3).
    pub clients: u8,
    /// Critical sections each client runs (1..=2).
    pub rounds: u8,
    /// Redis instances: 1 for the single-instance recipes, N (odd, 1..=5) for Redlock.
    pub instances: u8,
    /// The lock key's TTL in ticks.
    pub ttl: Time,
    /// The clock-drift allowance the recipe subtracts from the validity, in ticks.
    pub drift: Time,
    pub faults: Faults,
}

impl Scenario {
    /// `variant` with `writes`: 2 clients of one round, TTL 3 ticks, drift 1; three instances
    /// for Redlock, one otherwise; no faults.
    pub fn new(variant: Variant, writes: Writes) -> Scenario {
        Scenario {
            variant,
            writes,
            clients: 2,
            rounds: 1,
            instances: if variant.redlock() { 3 } else { 1 },
            ttl: 3,
            drift: 1,
            faults: Faults::NONE,
        }
    }

    /// The standard scenario (`lockwright check --family redis`): `single` with fenced-claim
    /// writes, a client pause and a lost reply — what the shipped lock guarantees.
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Single, Writes::FencedClaim).with_faults(Faults {
            pause: 1,
            lose_reply: 1,
            ..Faults::NONE
        })
    }

    /// The deep scenario: `redlock` over three instances with every fault that keeps it
    /// correct by its own assumptions (a pause, a slow acquire, a delayed restart, a lost
    /// reply, a crash), fenced-claim writes.
    pub fn deep() -> Scenario {
        Scenario::new(Variant::Redlock, Writes::FencedClaim).with_faults(Faults {
            pause: 1,
            slow_acquire: 1,
            delayed_restart: 1,
            lose_reply: 1,
            crash: 1,
            ..Faults::NONE
        })
    }

    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    pub fn with_writes(self, writes: Writes) -> Scenario {
        Scenario { writes, ..self }
    }

    pub fn with_clients(self, clients: u8) -> Scenario {
        Scenario { clients, ..self }
    }

    pub fn with_rounds(self, rounds: u8) -> Scenario {
        Scenario { rounds, ..self }
    }

    pub fn with_instances(self, instances: u8) -> Scenario {
        Scenario { instances, ..self }
    }

    /// The drift allowance the recipe subtracts (`drift 0`: the validity formula without
    /// its drift term, the twin of the `fast-clock` rows).
    pub fn with_drift(self, drift: Time) -> Scenario {
        Scenario { drift, ..self }
    }

    /// The majority Redlock needs (1 of 1 for the single-instance recipes).
    pub fn quorum(&self) -> u8 {
        self.instances / 2 + 1
    }

    /// The `PX` of the recipe's `SET` (`None`: redis-py's default, no expiry).
    pub fn px(&self) -> Option<Time> {
        (self.variant != Variant::RedisPy).then_some(self.ttl)
    }

    /// Whether instances have replicas (only where a fail-over can happen).
    pub fn replicated(&self) -> bool {
        self.faults.failover > 0
    }

    /// `redlock × fenced-claim, 2 clients × 1 round, 3 instances, ttl 3, drift 1, faults
    /// pause=1`.
    pub fn label(&self) -> String {
        let rounds = if self.rounds == 1 {
            "1 round".to_string()
        } else {
            format!("{} rounds", self.rounds)
        };
        let instances = if self.instances == 1 {
            "1 instance".to_string()
        } else {
            format!("{} instances", self.instances)
        };
        format!(
            "{} × {}, {} clients × {rounds}, {instances}, ttl {}, drift {}, faults {}",
            self.variant, self.writes, self.clients, self.ttl, self.drift, self.faults
        )
    }
}
