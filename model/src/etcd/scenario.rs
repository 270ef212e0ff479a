//! The options of an etcd run: the recipe ([`Variant`]), how the protected resource is written
//! ([`WriteMode`]), what ends a holder's belief ([`Guard`]), the fault budgets ([`Faults`]),
//! and [`Scenario`] (what each variant does differently is read from [`Variant`]:
//! [`Variant::rechecks`], [`Variant::server_keeps_alive`]).

use std::fmt;

/// A client's index (`c0`, `c1`, ...).
pub type ClientId = u8;

/// The recipe a client runs. All of them are etcd's `concurrency.Mutex` steps (lock = one
/// transaction, then `waitDeletes` on the youngest older key); they differ where the table in
/// `docs/etcd.md` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// etcd 3.5's Mutex: after waiting, re-read the own key and fail with `ErrSessionExpired`
    /// if it is gone. Unlock deletes by name, once.
    Etcd35,
    /// etcd 3.4's Mutex (Debian's 3.4.23): no re-check after waiting (etcd-io/etcd#11456).
    Etcd34,
    /// The v3 lock service (`/v3/lock/lock`): the 3.4 Mutex run inside the server on a
    /// session the server keeps alive and never closes (an orphaned session).
    LockService,
    /// A lost unlock reply is retried, by name, in the background (etcd-io/etcd#22082): the
    /// retry may delete the same session's next lock key.
    UnlockRetryByName,
    /// etcd's `contrib/lock`: the fencing token is the lease id, not the create revision.
    LeaseIdToken,
}

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Etcd35,
        Variant::Etcd34,
        Variant::LockService,
        Variant::UnlockRetryByName,
        Variant::LeaseIdToken,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Etcd35 => "etcd-3.5",
            Variant::Etcd34 => "etcd-3.4",
            Variant::LockService => "lock-service",
            Variant::UnlockRetryByName => "unlock-retry-by-name",
            Variant::LeaseIdToken => "lease-id-token",
        }
    }

    /// Whether the recipe re-reads its own key after waiting (3.5's `ErrSessionExpired`).
    pub fn rechecks(self) -> bool {
        !matches!(self, Variant::Etcd34 | Variant::LockService)
    }

    /// Whether the server keeps the session's lease alive (the lock service's own session).
    pub fn server_keeps_alive(self) -> bool {
        self == Variant::LockService
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a holder writes the protected resource (one read-modify-write of a counter per hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteMode {
    /// An external counter that accepts every write.
    Unfenced,
    /// An external counter that refuses a write whose token is below the highest it saw.
    Fenced,
    /// The same, and the holder first claims its token at the resource (before reading).
    FencedClaim,
    /// The counter is an etcd key, written in a transaction on `IsOwner()`
    /// (`CreateRevision(myKey) == myRev`).
    Guarded,
}

impl WriteMode {
    pub const ALL: [WriteMode; 4] = [
        WriteMode::Unfenced,
        WriteMode::Fenced,
        WriteMode::FencedClaim,
        WriteMode::Guarded,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            WriteMode::Unfenced => "unfenced",
            WriteMode::Fenced => "fenced",
            WriteMode::FencedClaim => "fenced-claim",
            WriteMode::Guarded => "guarded",
        }
    }
}

impl fmt::Display for WriteMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What ends a holder's belief that it holds, besides its own unlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Guard {
    /// The Mutex alone: a holder believes until it unlocks (a Go program that never looks at
    /// `Session.Done()`).
    None,
    /// Go's `Session.Done()`: the client-side deadline is measured from the keepalive reply's
    /// arrival, so it lies after the server's expiry by the reply's delay (the model takes one
    /// tick: the reply, or the once-a-second deadline check, comes one tick late).
    Session,
    /// lockwright's lock-lost detection: the deadline is measured from the keepalive's send,
    /// so it never lies after the server's expiry.
    Lockwright,
}

impl Guard {
    pub const ALL: [Guard; 3] = [Guard::None, Guard::Session, Guard::Lockwright];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Guard::None => "none",
            Guard::Session => "session",
            Guard::Lockwright => "lockwright",
        }
    }

    /// Ticks the client-side deadline lies after the server's expiry for a keepalive answered
    /// in time.
    pub fn late_by(self) -> u8 {
        match self {
            Guard::Session => 1,
            Guard::None | Guard::Lockwright => 0,
        }
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Fault budgets (each a count of how many times the environment may do it in one run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// A client's keepalives stop reaching the server (its other requests still do): its
    /// lease runs out by the server's time.
    pub expire: u8,
    /// A client stops taking steps (a GC pause, SIGSTOP) and later resumes; its session sends
    /// no keepalives meanwhile.
    pub pause: u8,
    /// The reply to a lock transaction or an unlock is lost after the server applied it.
    pub lose_reply: u8,
    /// A new leader: the server refreshes every lease to its full TTL, and lease ids are
    /// granted by another member (their top bits change).
    pub leader_change: u8,
    /// The server compacts its history up to the current revision: a watch created from an
    /// older revision is cancelled.
    pub compact: u8,
    /// A client process crashes and starts again, with a new session; its old lease is left
    /// to expire.
    pub restart: u8,
}

impl Faults {
    pub const NONE: Faults = Faults {
        expire: 0,
        pause: 0,
        lose_reply: 0,
        leader_change: 0,
        compact: 0,
        restart: 0,
    };

    /// The fault names, as `--faults` spells them.
    pub const NAMES: [&'static str; 6] = [
        "expire",
        "pause",
        "lose-reply",
        "leader-change",
        "compact",
        "restart",
    ];

    fn items(&self) -> [(&'static str, u8); 6] {
        [
            ("expire", self.expire),
            ("pause", self.pause),
            ("lose-reply", self.lose_reply),
            ("leader-change", self.leader_change),
            ("compact", self.compact),
            ("restart", self.restart),
        ]
    }

    /// Parses `expire=1,pause=1` (or `none`).
    ///
    /// # Errors
    /// An item that is not `NAME=COUNT`, a count above 255, or an unknown name.
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
            match key.trim() {
                "expire" => f.expire = n,
                "pause" => f.pause = n,
                "lose-reply" => f.lose_reply = n,
                "leader-change" => f.leader_change = n,
                "compact" => f.compact = n,
                "restart" => f.restart = n,
                other => {
                    return Err(format!(
                        "unknown fault `{other}` (expected {})",
                        Self::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .items()
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

/// The session TTL, in ticks of the server's clock. Keepalives go every TTL/3: one per tick.
pub const TTL: u8 = 3;

/// One model instance: the Stateright [`stateright::Model`] is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    pub writes: WriteMode,
    pub guard: Guard,
    /// Number of clients (1..=3).
    pub clients: u8,
    /// Lock attempts per client (each lock, update, unlock is one).
    pub cycles: u8,
    /// The revision counter's width in bits: its top is `2^width - 1`. etcd's is an int64 that
    /// no cluster reaches (at a billion writes a second, 292 years); the model stops there:
    /// a write that would pass the top is not enabled, so a run ends instead of wrapping.
    pub revision_width: u8,
    pub faults: Faults,
}

impl Scenario {
    /// `variant × writes` with two clients, one attempt each, the lockwright guard, no faults.
    pub fn new(variant: Variant, writes: WriteMode) -> Scenario {
        Scenario {
            variant,
            writes,
            guard: Guard::Lockwright,
            clients: 2,
            cycles: 1,
            revision_width: 4,
            faults: Faults::NONE,
        }
    }

    /// `lockwright check --family etcd`: etcd 3.5's Mutex with lockwright's lock-lost
    /// detection and guarded writes, two clients, every fault but `leader-change` once (with
    /// it too the space is five times larger, 2.4 million states: `--deep`).
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Etcd35, WriteMode::Guarded).with_faults(
            Faults::parse("expire=1,pause=1,lose-reply=1,compact=1,restart=1").expect("valid"),
        )
    }

    /// The deep scenario: the standard one with a leader change as well.
    pub fn deep() -> Scenario {
        let f = Scenario::standard().faults;
        Scenario::standard().with_faults(Faults {
            leader_change: 1,
            ..f
        })
    }

    pub fn with_variant(self, variant: Variant) -> Scenario {
        Scenario { variant, ..self }
    }
    pub fn with_writes(self, writes: WriteMode) -> Scenario {
        Scenario { writes, ..self }
    }
    pub fn with_guard(self, guard: Guard) -> Scenario {
        Scenario { guard, ..self }
    }
    pub fn with_clients(self, clients: u8) -> Scenario {
        Scenario { clients, ..self }
    }
    pub fn with_cycles(self, cycles: u8) -> Scenario {
        Scenario { cycles, ..self }
    }
    pub fn with_revision_width(self, revision_width: u8) -> Scenario {
        Scenario {
            revision_width,
            ..self
        }
    }
    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    /// Whether a client's lease can run out under it: its keepalives stop (`expire`) or it is
    /// paused; never with the lock service, whose own session keeps every lease alive.
    pub fn lease_can_end(&self) -> bool {
        (self.faults.expire > 0 || self.faults.pause > 0) && !self.variant.server_keeps_alive()
    }

    /// The highest revision the counter holds.
    pub fn revision_top(&self) -> u8 {
        ((1u16 << self.revision_width) - 1) as u8
    }

    /// One line naming the scenario.
    pub fn label(&self) -> String {
        let plural = if self.clients == 1 { "" } else { "s" };
        let cycles = if self.cycles == 1 {
            String::new()
        } else {
            format!(" × {} attempts", self.cycles)
        };
        format!(
            "{} × {}, guard {}, {} client{plural}{cycles}, {}-bit revision, faults {}",
            self.variant, self.writes, self.guard, self.clients, self.revision_width, self.faults
        )
    }
}
