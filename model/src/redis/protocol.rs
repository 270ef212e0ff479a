//! The Redis lock model: clients running a recipe (the step table [`next`] and [`recipe`])
//! against one or N instances ([`crate::redis::server`]), a protected resource apart from
//! Redis, time as ticks, and the faults of [`Faults`](crate::redis::Faults).
//!
//! A client's round: `Set` on each instance in turn (one for the single-instance recipes;
//! with fenced writes the `SET NX` + `INCR` script, whose counters give the fencing token) →
//! `Decide` (held, or — Redlock — released everywhere and retried) → `Check` (the validity
//! check) → `Claim` (fenced-claim, cas) → `Read` (the resource's version) → `Write` →
//! `Release`.
//!
//! **Timing assumptions** (what the recipes rely on, and what the faults break): an
//! acquisition ends while `elapsed + drift < ttl` (broken by `slow-acquire`); a holder
//! finishes its round before its validity runs out (broken by `pause`: a holder stops, and
//! time runs on; paused before its `Check`, the check sees the lock lost; paused after it, the
//! holder carries on believing). No other bound: any interleaving of the clients, the
//! instances and the clock.
//!
//! Ghost state, never read by a client: the order of the holds (`seq`: taken by the `SET` that
//! gave a client its majority, the moment the hold exists at the servers), the newest hold
//! granted, and, on the resource, the hold of the last accepted write — so that "fenced writes
//! are exclusive" and "no lost update" are judged by what the resource accepted, not by what
//! the lock computed.

use std::fmt;

use stateright::{Model, Property};

use crate::checker::Checkable;
use crate::redis::scenario::{Scenario, Variant, Writes, WIDTH};
use crate::redis::server::{Instance, Reply, Time};

/// A client's index.
pub type ClientId = u8;

/// A lock token: the random value of one acquisition attempt. `lockwright::redis` draws a
/// fresh one per attempt (`RedisLock::try_lock`, each retry of `lock_timeout`); redis-py
/// draws one per `acquire()` call and keeps it across that call's retries
/// ([`Recipe::fresh_token`]), so its `attempt` stays 0. Tokens never repeat: the code's are
/// random 128-bit values (UUID v4), whose collisions the model leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    pub client: ClientId,
    pub round: u8,
    /// The attempt within the round (0 for recipes that keep one token per round).
    pub attempt: u8,
}

impl fmt::Display for Token {
    /// `tok0.1` (client 0, round 1, first attempt), `tok0.1+1` (its second attempt).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tok{}.{}", self.client, self.round)?;
        if self.attempt > 0 {
            write!(f, "+{}", self.attempt)?;
        }
        Ok(())
    }
}

/// What a holder believes of its lock's remaining validity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Validity {
    /// Not holding.
    None,
    /// Valid for this many more ticks (0: run out).
    Until(Time),
    /// Longer than any key's TTL: no expiry (redis-py's default), or a wrapped validity.
    Long,
}

impl Validity {
    fn live(self) -> bool {
        matches!(self, Validity::Until(1..) | Validity::Long)
    }
}

/// Where a client is in its round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pc {
    /// Between rounds (or retrying after a failed acquisition).
    Idle,
    /// Sending `SET NX` to instance `.0` (after the first).
    Acquire(u8),
    Decide,
    Check,
    Claim,
    Read,
    Write,
    Release,
    /// Every round done, or crashed.
    Done,
}

impl Pc {
    /// Whether a client at this step believes it holds the lock.
    pub fn holding(self) -> bool {
        matches!(
            self,
            Pc::Check | Pc::Claim | Pc::Read | Pc::Write | Pc::Release
        )
    }

    fn acquiring(self) -> bool {
        matches!(self, Pc::Acquire(_) | Pc::Decide)
    }
}

/// One client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    pub pc: Pc,
    /// Rounds completed.
    pub round: u8,
    pub alive: bool,
    /// Ticks since this attempt's first `SET` (capped: [`Scenario::elapsed_cap`]).
    pub elapsed: Time,
    /// Instances that answered `OK` to this attempt's `SET` (bit per instance).
    pub acks: u8,
    /// Failed attempts in this round (the client gives the round up after [`TRIES`]).
    pub tries: u8,
    pub validity: Validity,
    /// Ghost: the order of this attempt's hold at the servers (0: no majority yet).
    pub grant: u8,
    /// The fencing token: the highest counter the fenced `SET` script answered (0: none).
    pub fence: u32,
    /// The resource version this hold read.
    pub read: Option<u8>,
    /// Stopped by a `pause` fault (exempt from the timing assumption until its next step).
    pub paused: bool,
    /// This acquisition is slow (`slow-acquire`: exempt from the acquisition bound).
    pub slow: bool,
}

impl Client {
    fn new() -> Client {
        Client {
            pc: Pc::Idle,
            round: 0,
            alive: true,
            elapsed: 0,
            acks: 0,
            tries: 0,
            validity: Validity::None,
            grant: 0,
            fence: 0,
            read: None,
            paused: false,
            slow: false,
        }
    }

    /// The token of this client's current attempt: a fresh one per attempt with
    /// `fresh` ([`Recipe::fresh_token`]), one per round otherwise.
    fn token(&self, c: ClientId, fresh: bool) -> Token {
        Token {
            client: c,
            round: self.round,
            attempt: if fresh { self.tries } else { 0 },
        }
    }
}

/// The protected resource (a store apart from Redis).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Resource {
    /// Accepted writes.
    pub version: u8,
    /// The highest fencing token accepted or claimed.
    pub fence: u32,
    /// The owner set by a `cas` claim.
    pub owner: Option<Token>,
    /// Ghost: the grant of the last accepted write.
    pub last_grant: u8,
}

/// What the last step did that a `sometimes` or transition property looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    None,
    Contention,
    Granted {
        after_crash: bool,
    },
    LockLost,
    /// A write reached the resource: whether it was accepted, came from a grant older than
    /// the newest, came from a grant older than the last accepted write's, and read a
    /// version another write has since replaced.
    Write {
        accepted: bool,
        superseded: bool,
        stale: bool,
        lost_update: bool,
    },
}

/// The whole system.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub instances: Vec<Instance<Token>>,
    pub clients: Vec<Client>,
    pub resource: Resource,
    pub budget: crate::redis::Faults,
    /// Ghost: the holds the servers have given (a majority of `SET`s), in order.
    pub seq: u8,
    /// Ghost: acquisitions that ended held.
    pub grants: u8,
    /// Ghost: the newest hold that ended held (its `seq`).
    pub latest: u8,
    /// Ghost: whether a client has crashed while holding a key somewhere.
    pub crashed_holder: bool,
    pub last: Event,
}

impl State {
    /// Clients that believe they hold the lock.
    pub fn holders(&self) -> impl Iterator<Item = ClientId> + '_ {
        (0..self.clients.len() as u8).filter(|&c| {
            let cl = &self.clients[c as usize];
            cl.alive && cl.pc.holding()
        })
    }

    /// Holders whose own validity has not run out.
    pub fn live_holders(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.holders()
            .filter(|&c| self.clients[c as usize].validity.live())
    }
}

/// A client step (what it sends, or decides locally).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// `SET k tok NX [PX ttl]` on instance `.0`.
    Set(u8),
    /// Held or not; Redlock releases everywhere when not.
    Decide,
    /// The validity check before using the lock.
    Check,
    /// Claim the resource (fenced-claim: raise its fence; cas: set its owner).
    Claim,
    /// Read the resource's version.
    Read,
    Write,
    /// Release on every instance.
    Release,
}

/// Whether a `SET`'s reply arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    Answered,
    /// Applied, but the reply is lost: the client sees an error.
    Lost,
}

/// A transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Call(ClientId, Step, Delivery),
    /// One tick of real time: every clock moves.
    Tick,
    Pause(ClientId),
    SlowAcquire(ClientId),
    Crash(ClientId),
    ClockJump(u8),
    /// Instance `.0`'s clock gains one tick on everyone else's (`fast-clock`).
    FastClock(u8),
    Restart(u8),
    DelayedRestart(u8),
    /// Asynchronous replication brings instance `.0`'s replica up to date (not a fault).
    Replicate(u8),
    Failover(u8),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Call(c, Step::Set(i), Delivery::Answered) => write!(f, "c{c} Set(i{i})"),
            Action::Call(c, Step::Set(i), Delivery::Lost) => write!(f, "c{c} Set(i{i}) lost"),
            Action::Call(c, step, _) => write!(f, "c{c} {step:?}"),
            Action::Tick => f.write_str("Tick"),
            Action::Pause(c) => write!(f, "c{c} Pause"),
            Action::SlowAcquire(c) => write!(f, "c{c} SlowAcquire"),
            Action::Crash(c) => write!(f, "c{c} Crash"),
            Action::ClockJump(i) => write!(f, "ClockJump(i{i})"),
            Action::FastClock(i) => write!(f, "FastClock(i{i})"),
            Action::Restart(i) => write!(f, "Restart(i{i})"),
            Action::DelayedRestart(i) => write!(f, "DelayedRestart(i{i})"),
            Action::Replicate(i) => write!(f, "Replicate(i{i})"),
            Action::Failover(i) => write!(f, "Failover(i{i})"),
        }
    }
}

/// Attempts a client makes per round before it gives the round up (a `try_lock_for` with a
/// deadline): keeps the fencing counters, which every granting `SET` of a failed Redlock
/// attempt also increments, finite.
pub const TRIES: u8 = 2;

// ---------------------------------------------------------------------------------------------
// The recipes as data.
// ---------------------------------------------------------------------------------------------

/// How a recipe releases a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseBy {
    /// The compare-and-delete script.
    Script,
    /// `DEL k`.
    Del,
}

/// How a recipe computes the validity it believes in after a majority said `OK`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidityBy {
    /// `ttl − elapsed − drift`, held only if > 0.
    Checked,
    /// The full TTL, whatever the elapsed time (no re-check).
    FullTtl,
    /// `ttl − drift − elapsed` in unsigned [`WIDTH`]-bit arithmetic, held if ≠ 0.
    Wrapping,
    /// No expiry: held until released.
    Forever,
}

/// A recipe: what differs between the variants, in one screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recipe {
    pub release: ReleaseBy,
    pub validity: ValidityBy,
    /// Whether a failed acquisition is released everywhere before retrying (Redlock).
    pub release_on_failure: bool,
    /// Whether each attempt draws a new token (`lockwright::redis`: `try_lock` calls
    /// `Backend::token` per attempt) or the round keeps one (redis-py's `acquire()`).
    pub fresh_token: bool,
}

/// The recipe of `variant`.
pub fn recipe(variant: Variant) -> Recipe {
    use ReleaseBy::*;
    use ValidityBy::*;
    let (release, validity, release_on_failure) = match variant {
        Variant::Single => (Script, Checked, false),
        Variant::SingleUnchecked => (Del, Checked, false),
        Variant::Redlock => (Script, Checked, true),
        Variant::RedlockNoRecheck => (Script, FullTtl, true),
        Variant::RedlockWrappingValidity => (Script, Wrapping, true),
        Variant::RedisPy => (Script, Forever, false),
    };
    Recipe {
        release,
        validity,
        release_on_failure,
        fresh_token: variant != Variant::RedisPy,
    }
}

/// The step table: what a client at `pc` does next (`None`: nothing, it is done).
pub fn next(pc: Pc) -> Option<Step> {
    Some(match pc {
        Pc::Idle => Step::Set(0),
        Pc::Acquire(i) => Step::Set(i),
        Pc::Decide => Step::Decide,
        Pc::Check => Step::Check,
        Pc::Claim => Step::Claim,
        Pc::Read => Step::Read,
        Pc::Write => Step::Write,
        Pc::Release => Step::Release,
        Pc::Done => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Properties (names used verbatim in tests, CLI output and docs).
// ---------------------------------------------------------------------------------------------

pub const AT_MOST_ONE_HOLDER: &str = "at most one holder";
pub const AT_MOST_ONE_LIVE_HOLDER: &str = "at most one live holder";
pub const FENCED_WRITES_ARE_EXCLUSIVE: &str = "fenced writes are exclusive";
pub const NO_LOST_UPDATE: &str = "no lost update";
pub const NO_STALE_LOCK: &str = "no stale lock";
pub const HOLDER_EXISTS: &str = "holder exists";
pub const SECOND_GRANT: &str = "second grant";
pub const STALE_WRITE_ATTEMPTED: &str = "stale write attempted";
pub const UPDATE_COMPLETED: &str = "update completed";
pub const ACQUIRED_AFTER_CRASH: &str = "acquired after crash";
pub const CONTENTION_SEEN: &str = "contention seen";
pub const LOCK_LOST_REPORTED: &str = "lock lost reported";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 5] = [
    AT_MOST_ONE_HOLDER,
    AT_MOST_ONE_LIVE_HOLDER,
    FENCED_WRITES_ARE_EXCLUSIVE,
    NO_LOST_UPDATE,
    NO_STALE_LOCK,
];

/// The `sometimes` properties, in report order: the twins of the `always` ones in the same
/// order ("holder exists", "second grant", "stale write attempted", "update completed",
/// "acquired after crash"), then two more.
pub const SOMETIMES: [&str; 7] = [
    HOLDER_EXISTS,
    SECOND_GRANT,
    STALE_WRITE_ATTEMPTED,
    UPDATE_COMPLETED,
    ACQUIRED_AFTER_CRASH,
    CONTENTION_SEEN,
    LOCK_LOST_REPORTED,
];

// ---------------------------------------------------------------------------------------------
// The model.
// ---------------------------------------------------------------------------------------------

impl Scenario {
    /// The elapsed time a client keeps count of: past it every validity is run out (or, in
    /// the wrapping arithmetic, wrapped).
    pub fn elapsed_cap(&self) -> Time {
        self.ttl + self.drift + 1
    }

    /// The validity a client believes in after a majority said `OK` with `elapsed` ticks
    /// gone, or `None` if the recipe does not hold.
    pub fn validity(&self, elapsed: Time) -> Option<Validity> {
        let v = match recipe(self.variant).validity {
            ValidityBy::Checked => {
                let v = i64::from(self.ttl) - i64::from(elapsed) - i64::from(self.drift);
                (v > 0).then_some(Validity::Until(v as Time))?
            }
            ValidityBy::FullTtl => Validity::Until(self.ttl),
            ValidityBy::Wrapping => {
                let mask = (1u32 << WIDTH) - 1;
                let v = self.ttl.wrapping_sub(self.drift).wrapping_sub(elapsed) & mask;
                match v {
                    0 => return None,
                    v if v > self.ttl => Validity::Long,
                    v => Validity::Until(v),
                }
            }
            ValidityBy::Forever => Validity::Long,
        };
        Some(v)
    }

    /// Whether a tick may pass now (the timing assumptions, and whether time changes
    /// anything at all).
    fn tick_enabled(&self, s: &State) -> bool {
        let timed = s.instances.iter().any(|i| {
            i.down > 0
                || i.key.is_some_and(|e| e.left.is_some())
                || i.replica
                    .is_some_and(|r| r.key.is_some_and(|e| e.left.is_some()))
        }) || s.clients.iter().any(|c| {
            c.alive
                && ((c.pc.acquiring() && c.elapsed < self.elapsed_cap())
                    || (c.pc.holding() && matches!(c.validity, Validity::Until(1..))))
        });
        let breaks_assumption = s.clients.iter().any(|c| {
            c.alive
                && ((c.pc.holding() && !c.paused && c.validity == Validity::Until(1))
                    || (c.pc.acquiring() && !c.slow && c.elapsed + 1 + self.drift >= self.ttl))
        });
        timed && !breaks_assumption
    }

    fn client_steps(&self, s: &State, out: &mut Vec<Action>) {
        for c in 0..self.clients {
            let cl = &s.clients[c as usize];
            if !cl.alive {
                continue;
            }
            let Some(step) = next(cl.pc) else { continue };
            out.push(Action::Call(c, step, Delivery::Answered));
            if let Step::Set(i) = step {
                if s.budget.lose_reply > 0 && s.instances[i as usize].up() {
                    out.push(Action::Call(c, step, Delivery::Lost));
                }
            }
        }
    }

    fn fault_steps(&self, s: &State, out: &mut Vec<Action>) {
        let b = s.budget;
        for c in 0..self.clients {
            let cl = &s.clients[c as usize];
            if !cl.alive || cl.pc == Pc::Done {
                continue;
            }
            if b.pause > 0 && cl.pc.holding() && cl.pc != Pc::Release && !cl.paused {
                out.push(Action::Pause(c));
            }
            if b.slow_acquire > 0 && cl.pc.acquiring() && !cl.slow {
                out.push(Action::SlowAcquire(c));
            }
            if b.crash > 0 && cl.pc != Pc::Idle {
                out.push(Action::Crash(c));
            }
        }
        for (i, inst) in s.instances.iter().enumerate() {
            let i = i as u8;
            if b.clock_jump > 0 && inst.key.is_some_and(|e| e.left.is_some()) {
                out.push(Action::ClockJump(i));
            }
            if b.fast_clock > 0 && inst.key.is_some_and(|e| e.left.is_some()) {
                out.push(Action::FastClock(i));
            }
            let has_data = inst.key.is_some() || inst.counter > 0;
            if b.restart > 0 && has_data {
                out.push(Action::Restart(i));
            }
            if b.delayed_restart > 0 && has_data {
                out.push(Action::DelayedRestart(i));
            }
            if inst.lagging() {
                out.push(Action::Replicate(i));
            }
            if b.failover > 0 && inst.replica.is_some() && inst.lagging() {
                out.push(Action::Failover(i));
            }
        }
    }

    /// Applies `action` to `s` (in place).
    pub fn apply(&self, s: &mut State, action: Action) {
        s.last = Event::None;
        match action {
            Action::Call(c, step, delivery) => self.call(s, c, step, delivery),
            Action::Tick => {
                for i in &mut s.instances {
                    i.advance(1);
                }
                let cap = self.elapsed_cap();
                for cl in &mut s.clients {
                    if cl.pc.acquiring() {
                        cl.elapsed = (cl.elapsed + 1).min(cap);
                    }
                    if let Validity::Until(n) = &mut cl.validity {
                        *n = n.saturating_sub(1);
                    }
                }
            }
            Action::Pause(c) => {
                s.budget.pause -= 1;
                s.clients[c as usize].paused = true;
            }
            Action::SlowAcquire(c) => {
                s.budget.slow_acquire -= 1;
                s.clients[c as usize].slow = true;
            }
            Action::Crash(c) => {
                s.budget.crash -= 1;
                let round = s.clients[c as usize].round;
                // A key of this round's attempts (a failed attempt's lost reply included).
                if s.instances.iter().any(|i| {
                    i.key
                        .is_some_and(|e| e.token.client == c && e.token.round == round)
                }) {
                    s.crashed_holder = true;
                }
                let cl = &mut s.clients[c as usize];
                cl.alive = false;
                cl.pc = Pc::Done;
            }
            Action::ClockJump(i) => {
                s.budget.clock_jump -= 1;
                s.instances[i as usize].jump();
            }
            Action::FastClock(i) => {
                s.budget.fast_clock -= 1;
                s.instances[i as usize].advance(1);
            }
            Action::Restart(i) => {
                s.budget.restart -= 1;
                s.instances[i as usize].restart(0);
            }
            Action::DelayedRestart(i) => {
                s.budget.delayed_restart -= 1;
                s.instances[i as usize].restart(self.ttl);
            }
            Action::Replicate(i) => s.instances[i as usize].replicate(),
            Action::Failover(i) => {
                s.budget.failover -= 1;
                s.instances[i as usize].fail_over();
            }
        }
    }

    fn call(&self, s: &mut State, c: ClientId, step: Step, delivery: Delivery) {
        let r = recipe(self.variant);
        let mut cl = s.clients[c as usize];
        let token = cl.token(c, r.fresh_token);
        cl.paused = false;
        match step {
            Step::Set(i) => {
                if i == 0 {
                    cl.elapsed = 0;
                    cl.acks = 0;
                    cl.fence = 0;
                    cl.grant = 0;
                }
                let inst = &mut s.instances[i as usize];
                let reply = if self.writes.counted() {
                    inst.set_nx_incr(token, self.px())
                } else {
                    inst.set_nx(token, self.px())
                };
                let set = matches!(reply, Reply::Ok | Reply::Int(_));
                if set && cl.acks.count_ones() + 1 == u32::from(self.quorum()) {
                    // The hold exists at the servers from this step on (whether or not the
                    // client learns it).
                    s.seq += 1;
                    cl.grant = s.seq;
                }
                match (reply, delivery) {
                    (_, Delivery::Lost) => s.budget.lose_reply -= 1,
                    (Reply::Ok, _) => cl.acks |= 1 << i,
                    (Reply::Int(n), _) => {
                        cl.acks |= 1 << i;
                        cl.fence = cl.fence.max(n);
                    }
                    (Reply::Nil, _) => s.last = Event::Contention,
                    (Reply::Down, _) => {}
                }
                cl.pc = if i + 1 < self.instances {
                    Pc::Acquire(i + 1)
                } else {
                    Pc::Decide
                };
            }
            Step::Decide => {
                let majority = cl.acks.count_ones() >= u32::from(self.quorum());
                let held = if majority {
                    self.validity(cl.elapsed)
                } else {
                    None
                };
                cl.slow = false;
                cl.acks = 0;
                match held {
                    Some(v) => {
                        s.grants += 1;
                        s.latest = s.latest.max(cl.grant);
                        cl.validity = v;
                        cl.pc = Pc::Check;
                        s.last = Event::Granted {
                            after_crash: s.crashed_holder,
                        };
                    }
                    None => {
                        cl.grant = 0;
                        cl.fence = 0;
                        if r.release_on_failure {
                            for inst in &mut s.instances {
                                inst.del_if(token);
                            }
                        }
                        cl.tries += 1;
                        if cl.tries == TRIES {
                            // `try_lock_for` ran out: the round ends without the lock.
                            cl.tries = 0;
                            cl.round += 1;
                            cl.pc = if cl.round < self.rounds {
                                Pc::Idle
                            } else {
                                Pc::Done
                            };
                        } else {
                            cl.pc = Pc::Idle;
                        }
                    }
                }
            }
            Step::Check => {
                if cl.validity.live() {
                    cl.pc = if self.writes.claims() {
                        Pc::Claim
                    } else {
                        Pc::Read
                    };
                } else {
                    s.last = Event::LockLost;
                    cl.pc = Pc::Release;
                }
            }
            Step::Read => {
                cl.read = Some(s.resource.version);
                cl.pc = Pc::Write;
            }
            Step::Claim => {
                let res = &mut s.resource;
                match self.writes {
                    Writes::FencedClaim if cl.fence >= res.fence => {
                        res.fence = cl.fence;
                        cl.pc = Pc::Read;
                    }
                    Writes::Cas => {
                        res.owner = Some(token);
                        cl.pc = Pc::Read;
                    }
                    // Refused: a newer token has claimed the resource.
                    _ => cl.pc = Pc::Release,
                }
            }
            Step::Write => {
                let res = &mut s.resource;
                let accepted = match self.writes {
                    Writes::Unfenced => true,
                    Writes::Fenced | Writes::FencedClaim => cl.fence >= res.fence,
                    Writes::Cas => res.owner == Some(token),
                };
                let superseded = cl.grant < s.latest;
                let stale = accepted && cl.grant < res.last_grant;
                let lost_update = accepted && cl.read != Some(res.version);
                if accepted {
                    res.version += 1;
                    res.last_grant = cl.grant;
                    if self.writes.counted() {
                        res.fence = res.fence.max(cl.fence);
                    }
                }
                s.last = Event::Write {
                    accepted,
                    superseded,
                    stale,
                    lost_update,
                };
                cl.pc = Pc::Release;
            }
            Step::Release => {
                for inst in &mut s.instances {
                    match r.release {
                        ReleaseBy::Script => inst.del_if(token),
                        ReleaseBy::Del => inst.del(),
                    };
                }
                cl.round += 1;
                cl.tries = 0;
                cl.validity = Validity::None;
                cl.grant = 0;
                cl.fence = 0;
                cl.read = None;
                cl.pc = if cl.round < self.rounds {
                    Pc::Idle
                } else {
                    Pc::Done
                };
            }
        }
        s.clients[c as usize] = cl;
    }

    /// "no stale lock": no key without an expiry whose owner no longer holds or acquires it
    /// (crashed, gave up after a lost reply, or moved on): nobody can ever acquire again.
    fn no_stale_lock(&self, s: &State) -> bool {
        s.instances.iter().all(|i| match i.key {
            Some(e) if e.left.is_none() => {
                let cl = &s.clients[e.token.client as usize];
                cl.alive && cl.round == e.token.round && (cl.pc.holding() || cl.pc.acquiring())
            }
            _ => true,
        })
    }
}

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.clone_from(s);
        self.apply(out, action);
        true
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            instances: vec![Instance::new(self.replicated()); self.instances as usize],
            clients: vec![Client::new(); self.clients as usize],
            resource: Resource::default(),
            budget: self.faults,
            seq: 0,
            grants: 0,
            latest: 0,
            crashed_holder: false,
            last: Event::None,
        }]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        self.client_steps(s, actions);
        if self.tick_enabled(s) {
            actions.push(Action::Tick);
        }
        self.fault_steps(s, actions);
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        let mut next = s.clone();
        self.apply(&mut next, action);
        Some(next)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(AT_MOST_ONE_HOLDER, |_, s: &State| s.holders().count() <= 1),
            Property::always(AT_MOST_ONE_LIVE_HOLDER, |_, s: &State| {
                s.live_holders().count() <= 1
            }),
            Property::always(FENCED_WRITES_ARE_EXCLUSIVE, |_, s: &State| {
                !matches!(s.last, Event::Write { stale: true, .. })
            }),
            Property::always(NO_LOST_UPDATE, |_, s: &State| {
                !matches!(
                    s.last,
                    Event::Write {
                        lost_update: true,
                        ..
                    }
                )
            }),
            Property::always(NO_STALE_LOCK, |m: &Scenario, s: &State| m.no_stale_lock(s)),
            Property::sometimes(HOLDER_EXISTS, |_, s: &State| s.holders().next().is_some()),
            Property::sometimes(SECOND_GRANT, |_, s: &State| s.grants >= 2),
            Property::sometimes(STALE_WRITE_ATTEMPTED, |_, s: &State| {
                matches!(
                    s.last,
                    Event::Write {
                        superseded: true,
                        ..
                    }
                )
            }),
            Property::sometimes(UPDATE_COMPLETED, |_, s: &State| {
                matches!(
                    s.last,
                    Event::Write {
                        accepted: true,
                        lost_update: false,
                        ..
                    }
                )
            }),
            Property::sometimes(ACQUIRED_AFTER_CRASH, |_, s: &State| {
                s.last == Event::Granted { after_crash: true }
            }),
            Property::sometimes(CONTENTION_SEEN, |_, s: &State| s.last == Event::Contention),
            Property::sometimes(LOCK_LOST_REPORTED, |_, s: &State| s.last == Event::LockLost),
        ]
    }
}
