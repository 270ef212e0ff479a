//! What one Redis instance does with the commands a lock recipe sends — the semantics the
//! model and the simulated server of the checks (`checks/tests/redis/`) share.
//!
//! One lock key and one counter key (the fencing counter `INCR` hands out) per instance:
//!
//! - `SET k tok NX PX ttl` ([`Instance::set_nx`]): stores `tok` if `k` is absent, with an
//!   expiry `ttl` from now, or none (`PX` left out: redis-py's `timeout=None`).
//! - the compare-and-delete script ([`Instance::del_if`]) and the plain `DEL` of the unchecked
//!   recipe ([`Instance::del`]); the compare-and-`PEXPIRE` script ([`Instance::extend_if`]).
//! - `INCR fence` ([`Instance::incr`]), and the fenced acquire script that runs `SET NX` and,
//!   if it set the key, `INCR` in one step ([`Instance::set_nx_incr`]).
//!
//! **Time.** Redis keeps an expiry as an absolute Unix time in milliseconds (`PEXPIREAT`, a
//! signed 64-bit value) and a key is gone once the server's wall clock passes it. A 64-bit
//! millisecond clock does not wrap in any real run, so the model keeps each key's expiry as the
//! time *left* on that instance's clock ([`Entry::left`]) — exact for a clock that never wraps
//! and finite for the checker. What a clock can do that matters is jump: [`Instance::jump`]
//! moves this instance's clock forward past every expiry (an NTP step, an operator), so its
//! keys expire early while the clients' clocks (real time) have not moved. The wrap that a
//! real deployment does hit is in a *client's* arithmetic — the `redlock` crate subtracts
//! `u64`s — and is modelled there, at a small width ([`crate::redis::scenario::WIDTH`]).
//!
//! **Persistence.** None (`--save '' --appendonly no`): [`Instance::restart`] loses every key
//! and the counter. A replica ([`Replica`]) receives the primary's data asynchronously
//! ([`Instance::replicate`]); [`Instance::fail_over`] promotes it with whatever it had.

/// Time in ticks (the model) or milliseconds (the simulator).
pub type Time = u32;

/// A stored lock key: its value (the holder's random token) and the time left until it
/// expires (`None`: no expiry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entry<T> {
    pub token: T,
    pub left: Option<Time>,
}

/// A replica's copy of its primary's data, as of the last replication.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Replica<T> {
    pub key: Option<Entry<T>>,
    pub counter: u32,
}

/// One Redis instance (a primary, with at most one replica).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instance<T> {
    /// The lock key.
    pub key: Option<Entry<T>>,
    /// The fencing counter's value (`INCR` returns it after adding one; 0 = missing).
    pub counter: u32,
    /// Time left until a delayed restart lets the instance answer again (0: it answers).
    pub down: Time,
    /// The replica, if the instance has one.
    pub replica: Option<Replica<T>>,
}

/// What a command gets back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    /// `+OK`, or a script's `1`.
    Ok,
    /// A nil (`SET NX` on a present key) or a script's `0` (not the caller's key).
    Nil,
    /// An integer (`INCR`).
    Int(u32),
    /// No answer: the instance is down (connection refused, or `LOADING` while it waits out a
    /// delayed restart).
    Down,
}

impl<T: Clone + Eq> Instance<T> {
    /// An empty instance, with an empty replica if `replica`.
    pub fn new(replica: bool) -> Self {
        Instance {
            key: None,
            counter: 0,
            down: 0,
            replica: replica.then_some(Replica {
                key: None,
                counter: 0,
            }),
        }
    }

    /// Whether the instance answers commands.
    pub fn up(&self) -> bool {
        self.down == 0
    }

    /// `SET k token NX [PX ttl]`.
    pub fn set_nx(&mut self, token: T, ttl: Option<Time>) -> Reply {
        if !self.up() {
            return Reply::Down;
        }
        if self.key.is_some() {
            return Reply::Nil;
        }
        self.key = Some(Entry { token, left: ttl });
        Reply::Ok
    }

    /// The fenced acquire script: `SET k token NX [PX ttl]` and, if it set the key, `INCR
    /// fence` in the same script (one atomic step), answering the counter (`Int`) or nil.
    pub fn set_nx_incr(&mut self, token: T, ttl: Option<Time>) -> Reply {
        match self.set_nx(token, ttl) {
            Reply::Ok => self.incr(),
            other => other,
        }
    }

    /// The release script: `if get(k) == token then return del(k) else return 0`.
    pub fn del_if(&mut self, token: T) -> Reply {
        if !self.up() {
            return Reply::Down;
        }
        match &self.key {
            Some(e) if e.token == token => {
                self.key = None;
                Reply::Ok
            }
            _ => Reply::Nil,
        }
    }

    /// `DEL k`, whoever's key it is (the unchecked recipe): `Ok` if a key was deleted.
    pub fn del(&mut self) -> Reply {
        if !self.up() {
            return Reply::Down;
        }
        match self.key.take() {
            Some(_) => Reply::Ok,
            None => Reply::Nil,
        }
    }

    /// The extend script: `if get(k) == token then return pexpire(k, ttl) else return 0`.
    pub fn extend_if(&mut self, token: T, ttl: Time) -> Reply {
        if !self.up() {
            return Reply::Down;
        }
        match self.key.as_mut() {
            Some(e) if e.token == token => {
                e.left = Some(ttl);
                Reply::Ok
            }
            _ => Reply::Nil,
        }
    }

    /// `INCR fence`.
    pub fn incr(&mut self) -> Reply {
        if !self.up() {
            return Reply::Down;
        }
        self.counter += 1;
        Reply::Int(self.counter)
    }

    /// `d` of this instance's clock passes: keys whose time is up are gone (Redis expires a
    /// key lazily on access or by its active cycle; either way no command sees it again), and
    /// a delayed restart's wait runs down.
    pub fn advance(&mut self, d: Time) {
        fn expire<T>(key: &mut Option<Entry<T>>, d: Time) {
            if let Some(left) = key.as_mut().and_then(|e| e.left.as_mut()) {
                *left = left.saturating_sub(d);
                if *left == 0 {
                    *key = None;
                }
            }
        }
        expire(&mut self.key, d);
        if let Some(r) = self.replica.as_mut() {
            expire(&mut r.key, d);
        }
        self.down = self.down.saturating_sub(d);
    }

    /// This instance's wall clock jumps forward past every expiry: every key with an expiry
    /// is gone at once (real time, the clients' clocks, has not moved).
    pub fn jump(&mut self) {
        if self.key.as_ref().is_some_and(|e| e.left.is_some()) {
            self.key = None;
        }
        if let Some(r) = self.replica.as_mut() {
            if r.key.as_ref().is_some_and(|e| e.left.is_some()) {
                r.key = None;
            }
        }
    }

    /// The instance restarts without persistence: every key and the counter are lost; it
    /// answers again after `delay` (0: at once; Sanfilippo's delayed-restart rule waits out
    /// the longest TTL). The replica, if any, resyncs from the empty primary.
    pub fn restart(&mut self, delay: Time) {
        self.key = None;
        self.counter = 0;
        self.down = delay;
        if let Some(r) = self.replica.as_mut() {
            *r = Replica {
                key: None,
                counter: 0,
            };
        }
    }

    /// Whether the replica lags behind the primary.
    pub fn lagging(&self) -> bool {
        self.replica
            .as_ref()
            .is_some_and(|r| r.key != self.key || r.counter != self.counter)
    }

    /// Asynchronous replication catches up: the replica gets the primary's data.
    pub fn replicate(&mut self) {
        let (key, counter) = (self.key.clone(), self.counter);
        if let Some(r) = self.replica.as_mut() {
            *r = Replica { key, counter };
        }
    }

    /// The primary dies and its replica is promoted with what it had received; the new
    /// primary has no replica. No-op without a replica.
    pub fn fail_over(&mut self) {
        if let Some(r) = self.replica.take() {
            self.key = r.key;
            self.counter = r.counter;
            self.down = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_nx_grants_once_until_the_key_expires() {
        let mut i = Instance::new(false);
        assert_eq!(i.set_nx(1u8, Some(2)), Reply::Ok);
        assert_eq!(i.set_nx(2, Some(2)), Reply::Nil);
        i.advance(1);
        assert_eq!(i.set_nx(2, Some(2)), Reply::Nil);
        i.advance(1);
        assert_eq!(i.set_nx(2, Some(2)), Reply::Ok);
        assert_eq!(i.del_if(1), Reply::Nil, "not 1's key any more");
        assert_eq!(i.del(), Reply::Ok, "DEL deletes whoever's key");
    }

    #[test]
    fn a_key_without_expiry_outlives_every_clock_jump() {
        let mut i = Instance::new(false);
        i.set_nx(1u8, None);
        i.advance(100);
        i.jump();
        assert_eq!(i.key.map(|e| e.token), Some(1));
        let mut j = Instance::new(false);
        j.set_nx(1u8, Some(5));
        j.jump();
        assert_eq!(j.key, None, "a jump expires keys with a TTL at once");
    }

    #[test]
    fn failover_promotes_what_was_replicated() {
        let mut i = Instance::new(true);
        i.set_nx(1u8, Some(3));
        assert!(i.lagging());
        i.fail_over();
        assert_eq!(i.key, None, "the SET was never replicated");
        let mut j = Instance::new(true);
        j.set_nx(1u8, Some(3));
        assert_eq!(j.incr(), Reply::Int(1));
        j.replicate();
        j.fail_over();
        assert_eq!((j.key.map(|e| e.token), j.counter), (Some(1), 1));
    }

    #[test]
    fn restart_loses_keys_and_the_counter_and_a_delayed_one_refuses_meanwhile() {
        let mut i = Instance::new(false);
        i.set_nx(1u8, Some(3));
        i.incr();
        i.restart(2);
        assert_eq!(i.set_nx(2, Some(3)), Reply::Down);
        i.advance(2);
        assert_eq!(i.incr(), Reply::Int(1), "the counter starts again");
        assert_eq!(i.set_nx(2, Some(3)), Reply::Ok);
    }
}
