//! A simulated Redis for shuttle: N instances with the model's semantics
//! (`lockwright_model::redis::server::Instance`, the module the model itself runs), one
//! simulated millisecond clock, and the protected resource (a counter) apart from Redis.
//!
//! Time: every command costs 1 ms (a round trip) and a sleep its length; each instance's keys
//! expire by it. The timing assumption the recipe relies on — a holder finishes its critical
//! section before the validity it computed runs out — is the environment's: while a client is
//! inside its critical section the clock does not pass the end of the validity that client
//! registered ([`World::enter`]). A recipe whose computed validity outlasts its keys (no
//! re-check) is then caught by the counter, which never asks the lock anything.
//!
//! Slow acquisition ([`World::slow_set`], the model's `slow-acquire`): the `k`-th `SET` the
//! instances grant is answered `slow_ms` later (the reply is delayed; the key's TTL runs
//! from when the instance set it), as far as the clients' critical sections allow.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use lockwright::redis::{Backend, Command, NoAnswer, Reply};
use lockwright_model::redis::server::{Instance, Reply as ModelReply};
use shuttle::sync::Mutex;

/// Everything the simulation shares.
#[derive(Debug)]
pub struct World {
    pub instances: Vec<Instance<String>>,
    pub now_ms: u32,
    /// Clients inside their critical section, by the end of their validity (ms).
    deadlines: BTreeMap<usize, u32>,
    /// The protected resource.
    pub counter: u64,
    /// Increments whose write the resource took (the workload's record).
    pub acknowledged: u64,
    /// `SET`s each instance granted, in order: `(instance, token)`.
    pub grants: Vec<(usize, String)>,
    /// The granted `SET` (1-based, counted over all instances) whose reply is slow.
    pub slow_set: Option<usize>,
    /// How much later that reply arrives (ms).
    pub slow_ms: u32,
    /// Slow replies delivered, and by how much the clock moved for them.
    pub slowed: Vec<u32>,
}

impl World {
    /// Time passes by `d` ms, but not past a registered deadline.
    fn advance(&mut self, d: u32) {
        let mut target = self.now_ms + d;
        if let Some(&cap) = self.deadlines.values().min() {
            target = target.min(cap.saturating_sub(1).max(self.now_ms));
        }
        let step = target - self.now_ms;
        for i in &mut self.instances {
            i.advance(step);
        }
        self.now_ms = target;
    }

    /// Client `c` enters its critical section believing its lock valid for `left`.
    pub fn enter(&mut self, c: usize, left: Duration) {
        self.deadlines
            .insert(c, self.now_ms + left.as_millis() as u32);
    }

    /// Client `c` leaves its critical section.
    pub fn leave(&mut self, c: usize) {
        self.deadlines.remove(&c);
    }
}

/// One client's view of the simulation: a [`Backend`].
#[derive(Clone, Debug)]
pub struct Sim {
    pub world: Arc<Mutex<World>>,
    client: usize,
    tokens: Arc<std::sync::atomic::AtomicU64>,
}

impl Sim {
    /// `n` empty instances, the `slow_set`-th granted `SET` answered `slow_ms` late.
    pub fn world_slow(n: usize, slow_set: Option<usize>, slow_ms: u32) -> Arc<Mutex<World>> {
        Arc::new(Mutex::new(World {
            instances: vec![Instance::new(false); n],
            now_ms: 0,
            deadlines: BTreeMap::new(),
            counter: 0,
            acknowledged: 0,
            grants: Vec::new(),
            slow_set,
            slow_ms,
            slowed: Vec::new(),
        }))
    }

    /// Client `client`'s backend on `world`.
    pub fn new(world: &Arc<Mutex<World>>, client: usize) -> Sim {
        Sim {
            world: Arc::clone(world),
            client,
            tokens: Arc::default(),
        }
    }
}

impl Backend for Sim {
    fn instances(&self) -> usize {
        self.world.lock().expect("world").instances.len()
    }

    fn call(&self, i: usize, command: Command<'_>) -> Result<Reply, NoAnswer> {
        let mut w = self.world.lock().expect("world");
        w.advance(1);
        let inst = &mut w.instances[i];
        let bool_reply = |r: ModelReply| match r {
            ModelReply::Ok => Reply::Int(1),
            _ => Reply::Int(0),
        };
        let (answer, granted) = match command {
            Command::SetNx { token, ttl_ms, .. } => {
                match inst.set_nx(token.to_string(), Some(ttl_ms as u32)) {
                    ModelReply::Ok => (Reply::Ok, Some(token)),
                    _ => (Reply::Nil, None),
                }
            }
            Command::SetNxFenced { token, ttl_ms, .. } => {
                match inst.set_nx_incr(token.to_string(), Some(ttl_ms as u32)) {
                    ModelReply::Int(n) => (Reply::Int(i64::from(n)), Some(token)),
                    _ => (Reply::Nil, None),
                }
            }
            Command::Release { token, .. } => (bool_reply(inst.del_if(token.to_string())), None),
            Command::Del { .. } => (bool_reply(inst.del()), None),
            Command::Extend { token, ttl_ms, .. } => (
                bool_reply(inst.extend_if(token.to_string(), ttl_ms as u32)),
                None,
            ),
        };
        if let Some(t) = granted {
            w.grants.push((i, t.to_string()));
            if w.slow_set == Some(w.grants.len()) {
                let before = w.now_ms;
                let by = w.slow_ms;
                w.advance(by);
                let moved = w.now_ms - before;
                w.slowed.push(moved);
            }
        }
        Ok(answer)
    }

    fn now(&self) -> Duration {
        Duration::from_millis(u64::from(self.world.lock().expect("world").now_ms))
    }

    fn sleep(&self, d: Duration) {
        self.world
            .lock()
            .expect("world")
            .advance(d.as_millis() as u32);
        shuttle::thread::yield_now();
    }

    fn token(&self) -> String {
        let n = self
            .tokens
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("c{}-{n}", self.client)
    }
}
