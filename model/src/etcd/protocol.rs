//! etcd's lease mutex (`client/v3/concurrency.Mutex`), as a model: clients with sessions
//! (leases kept alive every TTL/3) lock by one transaction on `pfx/<lease>`, wait for the
//! youngest older key's delete, and hold; the server's clock expires leases that are not kept
//! alive. The incident behind it: Jepsen's analysis of etcd 3.4.3 (2020) and
//! etcd-io/etcd#11456 — a waiter whose lease expired while it waited is told it holds when
//! the holder unlocks, beside the waiter behind it.
//!
//! Client steps (each one request of the recipe): `Lock(c)` (a session if it has none, then
//! the lock transaction), `Find(c)` (waitDeletes' range), `Watch(c)`, `Woken(c)`,
//! `Recheck(c)` (3.5 only), `Read(c)`/`Write(c)` (one update of the counter, see
//! [`WriteMode`]), `Unlock(c)`, `NoticeLost(c)` (the guard's deadline passed),
//! `RetryDelete(c)` (`unlock-retry-by-name`). Faults: `LockReplyLost(c)`,
//! `UnlockReplyLost(c)`, `Expire(c)` (keepalives stop reaching the server), `Pause(c)` /
//! `Resume(c)`, `LeaderChange`, `Compact`, `Restart(c)`; and the clock, `Tick`, which runs
//! only while some lease is not kept alive (a live, running client's keepalive is never late:
//! time passes only where a fault lets it matter).
//!
//! All etcd semantics come from [`super::server`].

use std::fmt;

use stateright::{Model, Property};

use super::scenario::{ClientId, Guard, Scenario, Variant, WriteMode, TTL};
use super::server::{LeaseId, Server};
use super::state::{Client, Pc, Resource, Session, State};
use crate::checker::Checkable;

// ---------------------------------------------------------------------------------------------
// Properties (names used verbatim in tests, CLI output and docs).
// ---------------------------------------------------------------------------------------------

pub const AT_MOST_ONE_HOLDER: &str = "at most one holder";
pub const AT_MOST_ONE_LIVE_HOLDER: &str = "at most one live holder";
pub const FENCED_WRITES_ARE_EXCLUSIVE: &str = "fenced writes are exclusive";
pub const NO_LOST_UPDATE: &str = "no lost update";
pub const NO_GRANT_WITHOUT_A_KEY: &str = "no grant without a key";
pub const NO_ORPHAN_KEY: &str = "no orphan key";
pub const HOLDER_EXISTS: &str = "holder exists";
pub const HANDOFF_AFTER_EXPIRY: &str = "handoff after expiry";
pub const CONTENTION_SEEN: &str = "contention seen";
pub const WAITER_WOKEN_BY_WATCH: &str = "waiter woken by watch";
pub const LOCK_LOST_REPORTED: &str = "lock lost reported";
pub const UPDATE_COMPLETED: &str = "update completed";
pub const ACQUIRED_AFTER_CRASH: &str = "acquired after crash";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 6] = [
    AT_MOST_ONE_HOLDER,
    AT_MOST_ONE_LIVE_HOLDER,
    FENCED_WRITES_ARE_EXCLUSIVE,
    NO_LOST_UPDATE,
    NO_GRANT_WITHOUT_A_KEY,
    NO_ORPHAN_KEY,
];

/// The `sometimes` properties, in report order. The twins: "holder exists" for "at most one
/// holder"; "handoff after expiry" for "at most one live holder"; "update completed" for the
/// two write properties; "waiter woken by watch" for "no grant without a key"; "acquired
/// after crash" for "no orphan key".
pub const SOMETIMES: [&str; 7] = [
    HOLDER_EXISTS,
    HANDOFF_AFTER_EXPIRY,
    CONTENTION_SEEN,
    WAITER_WOKEN_BY_WATCH,
    LOCK_LOST_REPORTED,
    UPDATE_COMPLETED,
    ACQUIRED_AFTER_CRASH,
];

/// One step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Lock(ClientId),
    LockReplyLost(ClientId),
    Find(ClientId),
    Watch(ClientId),
    Woken(ClientId),
    Recheck(ClientId),
    Read(ClientId),
    Write(ClientId),
    Unlock(ClientId),
    UnlockReplyLost(ClientId),
    RetryDelete(ClientId),
    NoticeLost(ClientId),
    Expire(ClientId),
    Pause(ClientId),
    Resume(ClientId),
    Restart(ClientId),
    LeaderChange,
    Compact,
    Tick,
}

impl Action {
    /// The client that acts, or `None` for the server, the clock or an operator.
    pub fn client(self) -> Option<ClientId> {
        use Action::*;
        match self {
            Lock(c) | LockReplyLost(c) | Find(c) | Watch(c) | Woken(c) | Recheck(c) | Read(c)
            | Write(c) | Unlock(c) | UnlockReplyLost(c) | RetryDelete(c) | NoticeLost(c)
            | Expire(c) | Pause(c) | Resume(c) | Restart(c) => Some(c),
            LeaderChange | Compact | Tick => None,
        }
    }

    /// The step's name without arguments.
    pub fn name(self) -> &'static str {
        use Action::*;
        match self {
            Lock(_) => "Lock",
            LockReplyLost(_) => "LockReplyLost",
            Find(_) => "Find",
            Watch(_) => "Watch",
            Woken(_) => "Woken",
            Recheck(_) => "Recheck",
            Read(_) => "Read",
            Write(_) => "Write",
            Unlock(_) => "Unlock",
            UnlockReplyLost(_) => "UnlockReplyLost",
            RetryDelete(_) => "RetryDelete",
            NoticeLost(_) => "NoticeLost",
            Expire(_) => "Expire",
            Pause(_) => "Pause",
            Resume(_) => "Resume",
            Restart(_) => "Restart",
            LeaderChange => "LeaderChange",
            Compact => "Compact",
            Tick => "Tick",
        }
    }

    /// Whether the step is a fault (a lost reply, a pause, a cut keepalive, a crash, a leader
    /// change, a compaction).
    pub fn fault(self) -> bool {
        use Action::*;
        matches!(
            self,
            LockReplyLost(_)
                | UnlockReplyLost(_)
                | Expire(_)
                | Pause(_)
                | Resume(_)
                | Restart(_)
                | LeaderChange
                | Compact
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.client() {
            Some(c) => write!(f, "{}(c{c})", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

impl Scenario {
    /// The initial state.
    pub fn initial(&self) -> State {
        State {
            server: Server::new(self.revision_top()),
            clients: vec![Client::NEW; usize::from(self.clients)],
            resource: Resource::default(),
            used: super::Faults::NONE,
            grants: 0,
            acked: 0,
            last_write_grant: 0,
            stale_write: false,
            granted_without_key: false,
            granted_after_restart: false,
            server_kept: 0,
        }
    }

    /// Whether client `c` believes it holds: told it holds, not unlocked, and (with a guard)
    /// its client-side deadline not passed.
    pub fn believes(&self, s: &State, c: usize) -> bool {
        let cl = &s.clients[c];
        cl.pc.holding() && (self.guard == Guard::None || cl.session.is_some_and(|x| x.deadline > 0))
    }

    /// The clients that believe they hold.
    pub fn holders<'a>(&'a self, s: &'a State) -> impl Iterator<Item = usize> + 'a {
        (0..s.clients.len()).filter(move |&c| self.believes(s, c))
    }

    /// The holders whose lease the server still has.
    pub fn live_holders<'a>(&'a self, s: &'a State) -> impl Iterator<Item = usize> + 'a {
        self.holders(s).filter(move |&c| {
            s.clients[c]
                .lease()
                .is_some_and(|l| s.server.lease(l).is_some())
        })
    }

    /// The keys no live process will ever delete and no clock will expire: the lock service's
    /// keys whose client restarted (its session is the server's own, never closed).
    pub fn orphan_keys<'a>(&'a self, s: &'a State) -> impl Iterator<Item = LeaseId> + 'a {
        s.server.keys.iter().map(|k| k.lease).filter(move |&l| {
            s.server_kept & (1 << l) != 0 && !s.clients.iter().any(|c| c.lease() == Some(l))
        })
    }

    /// The token a holder writes with: its key's create revision, or (`lease-id-token`) its
    /// lease id.
    fn token(&self, cl: &Client) -> u8 {
        match self.variant {
            Variant::LeaseIdToken => cl.lease().unwrap_or(0),
            _ => cl.my_rev,
        }
    }

    /// Whether a lease is kept alive this tick: by its running client's keepalives, or by the
    /// server's own session (`lock-service`).
    fn kept(&self, s: &State, lease: LeaseId) -> bool {
        s.server_kept & (1 << lease) != 0
            || s.clients
                .iter()
                .any(|c| !c.paused && c.session.is_some_and(|x| x.lease == lease && !x.cut))
    }

    /// Leases the next tick would revoke that still have a key (one revision each).
    fn revokes_with_keys(&self, s: &State) -> u8 {
        s.server
            .leases
            .iter()
            .filter(|l| l.left <= 1 && !self.kept(s, l.id) && s.server.key(l.id).is_some())
            .count() as u8
    }

    fn grant(&self, s: &mut State, c: usize) {
        s.grants += 1;
        let others_restarted = s.used.restart > 0;
        let cl = &mut s.clients[c];
        cl.pc = Pc::Held;
        cl.grant = s.grants;
        let lease = cl.lease();
        let my_rev = cl.my_rev;
        if lease.and_then(|l| s.server.key(l)).map(|k| k.create) != Some(my_rev) {
            s.granted_without_key = true;
        }
        if others_restarted {
            s.granted_after_restart = true;
        }
    }

    /// End of an attempt.
    fn finish(&self, cl: &mut Client) {
        cl.pc = if cl.attempts >= self.cycles {
            Pc::Done
        } else {
            Pc::Idle
        };
        cl.woken = false;
    }

    /// The successor of `s` under `action`, or `None` if it is not enabled.
    pub fn step(&self, s: &State, action: Action) -> Option<State> {
        let mut n = s.clone();
        self.apply(&mut n, action).then_some(n)
    }

    /// Applies `action` to `s` in place; false if it is not enabled (then `s` is unspecified).
    #[allow(clippy::too_many_lines)]
    fn apply(&self, s: &mut State, action: Action) -> bool {
        use Action::*;
        let f = self.faults;
        if let Some(c) = action.client() {
            let cl = s.clients[usize::from(c)];
            let own_step = !matches!(action, Expire(_) | Pause(_) | Resume(_) | Restart(_));
            if own_step && cl.paused {
                return false;
            }
        }
        match action {
            Lock(c) | LockReplyLost(c) => {
                let c = usize::from(c);
                let cl = s.clients[c];
                let lost = matches!(action, LockReplyLost(_));
                if lost && s.used.lose_reply >= f.lose_reply {
                    return false;
                }
                let fresh = cl.pc == Pc::Idle;
                if !(fresh && cl.attempts < self.cycles || cl.pc == Pc::LockRetry) {
                    return false;
                }
                let lease = match cl.session {
                    Some(x) => x.lease,
                    None => {
                        // No id left: the model's width, not etcd's behaviour.
                        let Ok(id) = s.server.grant(TTL) else {
                            return false;
                        };
                        // The deadline counts from the grant's reply, as from a keepalive's.
                        s.clients[c].session = Some(Session {
                            lease: id,
                            deadline: TTL + self.guard.late_by(),
                            cut: false,
                        });
                        id
                    }
                };
                if s.server.key(lease).is_none() && !s.server.room(1) {
                    return false;
                }
                if self.variant.server_keeps_alive() {
                    s.server_kept |= 1 << lease;
                }
                match s.server.lock_txn(lease) {
                    Err(_) => {
                        // The session's lease is gone: this attempt fails; a new session next.
                        if lost {
                            return false;
                        }
                        s.clients[c].session = None;
                        s.clients[c].pc = Pc::Idle;
                    }
                    Ok(t) => {
                        let cl = &mut s.clients[c];
                        if fresh {
                            cl.attempts += 1;
                        }
                        cl.my_rev = t.my_rev;
                        if lost {
                            s.used.lose_reply += 1;
                            cl.pc = Pc::LockRetry;
                        } else if t.owner_rev == t.my_rev {
                            self.grant(s, c);
                        } else {
                            cl.pc = Pc::Find;
                        }
                    }
                }
                true
            }
            Find(c) => {
                let c = usize::from(c);
                if s.clients[c].pc != Pc::Find {
                    return false;
                }
                match s.server.last_before(s.clients[c].my_rev) {
                    Some((key, from)) => s.clients[c].pc = Pc::Watch { key, from },
                    None if self.variant.rechecks() => s.clients[c].pc = Pc::Recheck,
                    None => self.grant(s, c),
                }
                true
            }
            Watch(c) => {
                let c = usize::from(c);
                let Pc::Watch { key, from } = s.clients[c].pc else {
                    return false;
                };
                match s.server.watch(from) {
                    Ok(()) => s.clients[c].pc = Pc::Waiting { key },
                    Err(_) => {
                        // waitDeletes failed: the Mutex deletes its key and returns the error.
                        let lease = s.clients[c].lease().expect("a waiter has a session");
                        if s.server.key(lease).is_some() && !s.server.room(1) {
                            return false;
                        }
                        let _ = s.server.delete(lease);
                        self.finish(&mut s.clients[c]);
                    }
                }
                true
            }
            Woken(c) => {
                let c = usize::from(c);
                let Pc::Waiting { key } = s.clients[c].pc else {
                    return false;
                };
                if !s.server.deleted(key) {
                    return false;
                }
                s.clients[c].pc = Pc::Find;
                s.clients[c].woken = true;
                true
            }
            Recheck(c) => {
                let c = usize::from(c);
                let cl = s.clients[c];
                if cl.pc != Pc::Recheck {
                    return false;
                }
                let mine = cl.lease().and_then(|l| s.server.key(l));
                if mine.map(|k| k.create) == Some(cl.my_rev) {
                    self.grant(s, c);
                } else {
                    // ErrSessionExpired.
                    let cl = &mut s.clients[c];
                    cl.lost_reported = true;
                    self.finish(cl);
                }
                true
            }
            Read(c) => {
                let c = usize::from(c);
                let cl = s.clients[c];
                if cl.pc != Pc::Held || !self.believes(s, c) {
                    return false;
                }
                let token = self.token(&cl);
                let read = match self.writes {
                    WriteMode::Unfenced | WriteMode::Fenced => s.resource.value,
                    WriteMode::FencedClaim => {
                        if s.resource.max_token.is_some_and(|m| token < m) {
                            s.clients[c].pc = Pc::Unlock;
                            return true;
                        }
                        s.resource.max_token = Some(token);
                        s.resource.value
                    }
                    WriteMode::Guarded => s.server.counter.value,
                };
                s.clients[c].pc = Pc::Updating { read };
                true
            }
            Write(c) => {
                let c = usize::from(c);
                let cl = s.clients[c];
                let Pc::Updating { read } = cl.pc else {
                    return false;
                };
                let token = self.token(&cl);
                let accepted = match self.writes {
                    WriteMode::Unfenced => {
                        s.resource.value = read + 1;
                        true
                    }
                    WriteMode::Fenced | WriteMode::FencedClaim => {
                        if s.resource.max_token.is_some_and(|m| token < m) {
                            false
                        } else {
                            s.resource.max_token = Some(token);
                            s.resource.value = read + 1;
                            true
                        }
                    }
                    WriteMode::Guarded => {
                        let owner = cl
                            .lease()
                            .and_then(|l| s.server.key(l))
                            .is_some_and(|k| k.create == cl.my_rev);
                        if owner && !s.server.room(1) {
                            return false;
                        }
                        let lease = cl.lease().expect("a holder has a session");
                        s.server
                            .put_counter_if_owner(lease, cl.my_rev, read + 1)
                            .expect("room checked")
                    }
                };
                if accepted {
                    s.acked += 1;
                    if cl.grant < s.last_write_grant {
                        s.stale_write = true;
                    }
                    s.last_write_grant = cl.grant;
                }
                s.clients[c].pc = Pc::Unlock;
                true
            }
            Unlock(c) | UnlockReplyLost(c) => {
                let c = usize::from(c);
                let cl = s.clients[c];
                let lost = matches!(action, UnlockReplyLost(_));
                if cl.pc != Pc::Unlock {
                    return false;
                }
                if lost
                    && (self.variant != Variant::UnlockRetryByName
                        || s.used.lose_reply >= f.lose_reply)
                {
                    return false;
                }
                let lease = cl.lease().expect("a holder has a session");
                if s.server.key(lease).is_some() && !s.server.room(1) {
                    return false;
                }
                let _ = s.server.delete(lease);
                let cl = &mut s.clients[c];
                if lost {
                    s.used.lose_reply += 1;
                    cl.retry_delete = Some(lease);
                }
                self.finish(cl);
                true
            }
            RetryDelete(c) => {
                let c = usize::from(c);
                let Some(lease) = s.clients[c].retry_delete else {
                    return false;
                };
                if s.server.key(lease).is_some() && !s.server.room(1) {
                    return false;
                }
                let _ = s.server.delete(lease);
                s.clients[c].retry_delete = None;
                true
            }
            NoticeLost(c) => {
                let c = usize::from(c);
                let cl = s.clients[c];
                if self.guard == Guard::None || !cl.pc.holding() || self.believes(s, c) {
                    return false;
                }
                let cl = &mut s.clients[c];
                cl.lost_reported = true;
                self.finish(cl);
                true
            }
            Expire(c) => {
                let c = usize::from(c);
                if s.used.expire >= f.expire {
                    return false;
                }
                match &mut s.clients[c].session {
                    Some(x) if !x.cut && s.server.lease(x.lease).is_some() => x.cut = true,
                    _ => return false,
                }
                s.used.expire += 1;
                true
            }
            Pause(c) => {
                let c = usize::from(c);
                if s.used.pause >= f.pause || s.clients[c].paused {
                    return false;
                }
                s.used.pause += 1;
                s.clients[c].paused = true;
                true
            }
            Resume(c) => {
                let c = usize::from(c);
                if !s.clients[c].paused {
                    return false;
                }
                s.clients[c].paused = false;
                true
            }
            Restart(c) => {
                let c = usize::from(c);
                if s.used.restart >= f.restart || s.clients[c].session.is_none() {
                    return false;
                }
                s.used.restart += 1;
                let attempts = s.clients[c].attempts;
                s.clients[c] = Client {
                    attempts,
                    ..Client::NEW
                };
                if attempts >= self.cycles {
                    s.clients[c].pc = Pc::Done;
                }
                true
            }
            LeaderChange => {
                if s.used.leader_change >= f.leader_change {
                    return false;
                }
                s.used.leader_change += 1;
                s.server.leader_change(TTL);
                true
            }
            Compact => {
                if s.used.compact >= f.compact || s.server.compacted == s.server.rev {
                    return false;
                }
                s.used.compact += 1;
                s.server.compact();
                true
            }
            Tick => {
                let kept: Vec<LeaseId> = s
                    .server
                    .leases
                    .iter()
                    .map(|l| l.id)
                    .filter(|&l| self.kept(s, l))
                    .collect();
                if kept.len() == s.server.leases.len() || !s.server.room(self.revokes_with_keys(s))
                {
                    return false;
                }
                s.server.tick(TTL, |l| kept.contains(&l));
                let late = self.guard.late_by();
                for cl in &mut s.clients {
                    let paused = cl.paused;
                    if let Some(x) = &mut cl.session {
                        if paused || x.cut {
                            // No keepalive got through: the deadline runs down.
                            x.deadline = x.deadline.saturating_sub(1);
                        } else if s.server.lease(x.lease).is_none() {
                            // The keepalive's answer: lease not found.
                            x.deadline = 0;
                        } else {
                            x.deadline = TTL + late;
                        }
                    }
                }
                true
            }
        }
    }
}

impl Model for Scenario {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial()]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        use Action::*;
        for c in 0..self.clients {
            for a in [
                Lock(c),
                LockReplyLost(c),
                Find(c),
                Watch(c),
                Woken(c),
                Recheck(c),
                Read(c),
                Write(c),
                Unlock(c),
                UnlockReplyLost(c),
                RetryDelete(c),
                NoticeLost(c),
                Expire(c),
                Pause(c),
                Resume(c),
                Restart(c),
            ] {
                if self.step(s, a).is_some() {
                    actions.push(a);
                }
            }
        }
        for a in [LeaderChange, Compact, Tick] {
            if self.step(s, a).is_some() {
                actions.push(a);
            }
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        self.step(s, action)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(AT_MOST_ONE_HOLDER, |m: &Scenario, s: &State| {
                m.holders(s).count() <= 1
            }),
            Property::always(AT_MOST_ONE_LIVE_HOLDER, |m: &Scenario, s: &State| {
                m.live_holders(s).count() <= 1
            }),
            Property::always(FENCED_WRITES_ARE_EXCLUSIVE, |_: &Scenario, s: &State| {
                !s.stale_write
            }),
            Property::always(NO_LOST_UPDATE, |m: &Scenario, s: &State| {
                let value = match m.writes {
                    WriteMode::Guarded => s.server.counter.value,
                    _ => s.resource.value,
                };
                value == s.acked
            }),
            Property::always(NO_GRANT_WITHOUT_A_KEY, |_: &Scenario, s: &State| {
                !s.granted_without_key
            }),
            Property::always(NO_ORPHAN_KEY, |m: &Scenario, s: &State| {
                m.orphan_keys(s).next().is_none()
            }),
            Property::sometimes(HOLDER_EXISTS, |m: &Scenario, s: &State| {
                m.holders(s).next().is_some()
            }),
            Property::sometimes(HANDOFF_AFTER_EXPIRY, |m: &Scenario, s: &State| {
                // A holder whose lease the server revoked, and a holder granted after it.
                let dead = s.clients.iter().any(|c| {
                    c.pc.holding() && c.lease().is_some_and(|l| s.server.lease(l).is_none())
                });
                dead && m.live_holders(s).next().is_some()
            }),
            Property::sometimes(CONTENTION_SEEN, |_: &Scenario, s: &State| {
                s.clients.iter().any(|c| matches!(c.pc, Pc::Waiting { .. }))
            }),
            Property::sometimes(WAITER_WOKEN_BY_WATCH, |_: &Scenario, s: &State| {
                s.clients.iter().any(|c| c.pc.holding() && c.woken)
            }),
            Property::sometimes(LOCK_LOST_REPORTED, |_: &Scenario, s: &State| {
                s.clients.iter().any(|c| c.lost_reported)
            }),
            Property::sometimes(UPDATE_COMPLETED, |_: &Scenario, s: &State| s.acked > 0),
            Property::sometimes(ACQUIRED_AFTER_CRASH, |_: &Scenario, s: &State| {
                s.granted_after_restart
            }),
        ]
    }
}

impl Scenario {
    /// The server in one line: revision, lock keys (`pfx/<lease>@<create revision>`), leases
    /// with their ticks left, the counter.
    pub fn server_view(&self, s: &State) -> String {
        let keys: Vec<String> = s
            .server
            .keys
            .iter()
            .map(|k| format!("pfx/{:x}@{}", k.lease, k.create))
            .collect();
        let leases: Vec<String> = s
            .server
            .leases
            .iter()
            .map(|l| format!("{:x}:{}", l.id, l.left))
            .collect();
        let mut v = format!(
            "rev {}; keys [{}]; leases [{}]",
            s.server.rev,
            keys.join(" "),
            leases.join(" ")
        );
        if self.writes == WriteMode::Guarded {
            v.push_str(&format!("; counter {}", s.server.counter.value));
        } else {
            v.push_str(&format!("; resource {}", s.resource.value));
            if let Some(m) = s.resource.max_token {
                v.push_str(&format!(" (token ≥ {m})"));
            }
        }
        if s.server.compacted > 0 {
            v.push_str(&format!("; compacted at {}", s.server.compacted));
        }
        v
    }

    /// What `action` did to its client, in words.
    fn effect(&self, before: &State, action: Action, after: &State) -> String {
        let Some(c) = action.client() else {
            return match action {
                Action::Tick => "a tick of the server's clock".into(),
                Action::LeaderChange => "a new leader refreshes every lease".into(),
                Action::Compact => format!("compact at revision {}", after.server.compacted),
                _ => String::new(),
            };
        };
        let (b, a) = (
            &before.clients[usize::from(c)],
            &after.clients[usize::from(c)],
        );
        let pc = match a.pc {
            Pc::Held => "holds".to_string(),
            Pc::Waiting { key } => format!("watches pfx/{:x}", key.lease),
            Pc::Watch { key, from } => format!("will watch pfx/{:x} from rev {from}", key.lease),
            Pc::Updating { read } => format!("read {read}"),
            Pc::Unlock
                if b.pc == Pc::Updating { read: 0 } || matches!(b.pc, Pc::Updating { .. }) =>
            {
                let accepted = after.acked > before.acked;
                if accepted {
                    "write accepted".into()
                } else {
                    "write refused".into()
                }
            }
            Pc::Idle | Pc::Done if a.lost_reported && !b.lost_reported => {
                "told the lock is lost".into()
            }
            other => format!("{other:?}").to_lowercase(),
        };
        let token = match a.session {
            Some(x)
                if a.pc.holding()
                    || matches!(
                        a.pc,
                        Pc::Find | Pc::Waiting { .. } | Pc::Watch { .. } | Pc::Recheck
                    ) =>
            {
                format!(
                    " (key pfx/{:x}@{}, deadline {})",
                    x.lease, a.my_rev, x.deadline
                )
            }
            _ => String::new(),
        };
        format!("{pc}{token}")
    }
}

impl Checkable for Scenario {
    fn successor_into(&self, s: &State, action: Action, out: &mut State) -> bool {
        out.clone_from(s);
        self.apply(out, action)
    }

    fn describe_step(&self, before: &State, action: &Action, after: &State) -> String {
        let who = action
            .client()
            .map_or("etcd".to_string(), |c| format!("c{c}"));
        format!(
            "{who} {}: {}",
            action.name(),
            self.effect(before, *action, after)
        )
    }
}
