//! [`SimStore`]: the simulated document store — the model's document semantics
//! ([`super::service::Service`] on `lockwright_model::docstore::store`) and a simulated clock,
//! behind one mutex of a [`Runtime`] (shuttle or std), with a linearized recording.
//!
//! - One call, one step: each interface call of a [`SimClient`] takes the world mutex once,
//!   does its whole effect, appends one [`Step`] and releases it. The mutex acquisition is the
//!   scheduling point; the log order is the linearization order.
//! - The clock: [`SimStore::tick`] advances it by [`TICK_MS`] (one model tick). The model
//!   treats a client's clock read and the request that carries it as one step, so a tick waits
//!   (is skipped) while any live client is between a `now()` and its next request — which
//!   also keeps a client that passed its lease check from losing its lease before its write,
//!   the timing assumption the model's `Tick` respects. Only [`SimStore::pause`] breaks it, as
//!   the model's `Pause` does.
//! - Faults are steps of the environment: crash and restart of a client (a crashed
//!   incarnation's calls fail without effect, recorded as [`Outcome::Dead`]), an operator's
//!   stray `DELETE` of the lock document, a fail-over (the lock index's `_primary_term` grows),
//!   the store's own faults — the lock index re-created, the data document re-created, the
//!   last acknowledged write rolled back (each done by [`Service`] on the model's shard
//!   operations) — and lost replies: [`SimStore::arm`] makes the next request of any client be applied with
//!   its reply lost, or not applied; the client sees no answer either way.

use std::fmt;
use std::sync::Arc;

use lockwright::docstore::{StoreError as WireError, Token as WireToken};
use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX, LOCK_INDEX};
use lockwright_model::docstore::store::{ScriptError, StoreError as ModelError, Token};
use lockwright_model::docstore::{ClientId, Delivery};

use super::client::SimClient;
use super::record::*;
use super::service::{Answer, Service};
use crate::prims::Runtime;

#[derive(Clone, Copy, Debug)]
pub(crate) struct ClientSlot {
    pub(crate) incarnation: u8,
    pub(crate) alive: bool,
    /// Read the clock, no request since: ticks wait.
    pub(crate) pending_read: Option<Millis>,
    /// The deadline of the lock it last reported acquired, until it sends a request to the
    /// lock index (a release; or the next acquire) or, the fixed recipe, its read-back of the
    /// lock document finds another token: a pause takes effect only while it may still write.
    pub(crate) holding_until: Option<Millis>,
    /// The token of that lock.
    pub(crate) holding_token: Option<Token>,
}

/// Everything behind the one mutex.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) service: Service,
    pub(crate) clock: Millis,
    pub(crate) clients: Vec<ClientSlot>,
    pub(crate) armed: Option<Delivery>,
    pub(crate) lock_id: &'static str,
    pub(crate) log: Vec<Step>,
}

impl World {
    pub(crate) fn record(&mut self, actor: Actor, call: Call, outcome: Outcome) {
        self.log.push(Step {
            actor,
            call,
            outcome,
        });
    }

    pub(crate) fn alive(&self, c: ClientId, incarnation: u8) -> bool {
        let s = &self.clients[usize::from(c)];
        s.alive && s.incarnation == incarnation
    }
}

/// The simulated store shared by all simulated clients of one run. Cheap to clone.
pub struct SimStore<R: Runtime> {
    pub(crate) world: Arc<R::Mutex<World>>,
}

impl<R: Runtime> Clone for SimStore<R> {
    fn clone(&self) -> Self {
        SimStore {
            world: Arc::clone(&self.world),
        }
    }
}

impl<R: Runtime> fmt::Debug for SimStore<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SimStore<{}>", R::NAME)
    }
}

/// The model's answer as the interface returns it (`line`: the request, for messages).
pub(crate) fn wire_result(
    line: &str,
    a: &Answer,
) -> Result<lockwright::docstore::Written, WireError> {
    use lockwright::docstore::{WriteResult as W, Written};
    use lockwright_model::docstore::store::WriteResult as M;
    match a {
        Answer::Model(Ok(w)) => Ok(Written {
            result: match w.result {
                M::Created => W::Created,
                M::Updated => W::Updated,
                M::Deleted => W::Deleted,
                M::Noop => W::Noop,
                M::NotFound => W::NotFound,
            },
            token: WireToken {
                primary_term: w.token.primary_term,
                seq_no: w.token.seq_no,
            },
        }),
        refused => {
            let (error_type, reason) =
                super::service::error_parts(refused).expect("a refusal has parts");
            // A `Debug.explain` carries its value, as Elasticsearch's body does (the loopback
            // server sends that body; `HttpStore` reads it back into the same field).
            let explained = match refused {
                Answer::Model(Err(ModelError::Script(ScriptError::Explain(m)))) => {
                    Some((*m).to_owned())
                }
                _ => None,
            };
            Err(WireError::Rejected {
                request: line.to_owned(),
                status: refused.status(),
                error_type: error_type.to_owned(),
                detail: Box::new(lockwright::docstore::Refusal {
                    reason,
                    explained,
                    body: String::new(),
                }),
            })
        }
    }
}

impl<R: Runtime> SimStore<R> {
    /// A fresh store for `clients` clients (all alive, incarnation 0): the data document
    /// `files/1` exists, the lock index is empty (`installed`: holds the lock document, a free
    /// lease, as the fixed `leased` installs it once before any client runs), the clock reads
    /// [`CLOCK_START`]. `lock_id` is the lock document's id (the recipe's), which a stray
    /// delete removes.
    pub fn new(clients: u8, lock_id: &'static str, installed: bool) -> Self {
        let world = World {
            service: Service::with_model_documents(installed.then_some(lock_id)),
            clock: CLOCK_START,
            clients: vec![
                ClientSlot {
                    incarnation: 0,
                    alive: true,
                    pending_read: None,
                    holding_until: None,
                    holding_token: None,
                };
                usize::from(clients)
            ],
            armed: None,
            lock_id,
            log: Vec::new(),
        };
        SimStore {
            world: Arc::new(R::mutex(world)),
        }
    }

    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        R::with(&self.world, f)
    }

    /// Client `c`'s store interface, bound to its current incarnation (a client of a crashed
    /// incarnation stays dead after a restart).
    pub fn client(&self, c: ClientId) -> SimClient<R> {
        let incarnation = self.with(|w| w.clients[usize::from(c)].incarnation);
        SimClient {
            store: self.clone(),
            c,
            incarnation,
        }
    }

    /// Client `c`'s store interface in `incarnation` (dead unless that is the current one).
    pub fn client_at(&self, c: ClientId, incarnation: u8) -> SimClient<R> {
        SimClient {
            store: self.clone(),
            c,
            incarnation,
        }
    }

    /// The recording so far.
    pub fn trace(&self) -> Vec<Step> {
        self.with(|w| w.log.clone())
    }

    /// The clock now.
    pub fn clock(&self) -> Millis {
        self.with(|w| w.clock)
    }

    /// A copy of the store (for assertions at the end of a run).
    pub fn service(&self) -> Service {
        self.with(|w| w.service.clone())
    }

    // ---- injected faults: each is one step ----

    fn env(&self, f: impl FnOnce(&mut World) -> (Call, Outcome)) {
        self.with(|w| {
            let (call, outcome) = f(w);
            w.record(Actor::Env, call, outcome);
        });
    }

    /// Client `c`'s process dies; its documents stay. Skipped if it is dead.
    pub fn crash(&self, c: ClientId) {
        self.env(|w| {
            let slot = &mut w.clients[usize::from(c)];
            if !slot.alive {
                return (Call::Crash(c), Outcome::Skipped);
            }
            slot.alive = false;
            slot.pending_read = None;
            slot.holding_until = None;
            (Call::Crash(c), Outcome::Done)
        });
    }

    /// Crashed client `c` starts again with a new incarnation (a new owner id). Skipped if it
    /// is alive.
    pub fn restart(&self, c: ClientId) {
        self.env(|w| {
            let slot = &mut w.clients[usize::from(c)];
            if slot.alive {
                return (Call::Restart(c), Outcome::Skipped);
            }
            slot.alive = true;
            slot.incarnation += 1;
            (Call::Restart(c), Outcome::Done)
        });
    }

    /// An operator deletes the lock document. Skipped if there is none.
    pub fn stray_delete(&self) {
        self.env(|w| match w.service.stray_delete(LOCK_INDEX, w.lock_id) {
            Some(answer) => (Call::StrayDelete, Outcome::Answered(answer)),
            None => (Call::StrayDelete, Outcome::Skipped),
        });
    }

    /// Another copy of the lock index's shard becomes primary: `_primary_term` + 1.
    pub fn failover(&self) {
        self.env(|w| {
            w.service.failover(LOCK_INDEX);
            (Call::Failover, Outcome::Done)
        });
    }

    /// The lock index is deleted and created again: no lock document, `_primary_term` 1,
    /// `_seq_no` 0 (the model's `RecreateIndex`).
    pub fn recreate_index(&self) {
        self.env(|w| {
            w.service.recreate_index(LOCK_INDEX);
            (Call::RecreateIndex, Outcome::Done)
        });
    }

    /// The data document is deleted and created again without its fence (the model's
    /// `RecreateDoc`).
    pub fn recreate_doc(&self) {
        self.env(|w| {
            w.service.recreate_doc(DATA_INDEX, DATA_ID);
            (Call::RecreateDoc, Outcome::Done)
        });
    }

    /// A fail-over loses the last write the store applied, if its client saw it succeed (the
    /// model's `Rollback`): its index goes back to the state before it. Skipped when there is
    /// no such write (the last one's reply was lost, or a fault since means it survived).
    pub fn rollback(&self) {
        self.env(|w| match w.service.rollback() {
            Some(index) => (Call::Rollback { index }, Outcome::Done),
            None => (
                Call::Rollback {
                    index: String::new(),
                },
                Outcome::Skipped,
            ),
        });
    }

    /// One tick passes, unless a live client is between a clock read and its request
    /// (skipped: see the module docs).
    pub fn tick(&self) {
        self.env(|w| {
            if w.clients
                .iter()
                .any(|s| s.alive && s.pending_read.is_some())
            {
                return (Call::Tick, Outcome::Skipped);
            }
            w.clock += TICK_MS;
            (Call::Tick, Outcome::Done)
        });
    }

    /// Client `c` is paused after a passed lease check (its last call read the clock before
    /// its deadline, while holding) until its deadline: the clock jumps there. Skipped
    /// otherwise, and while another client is between a clock read and its request.
    pub fn pause(&self, c: ClientId) {
        self.env(|w| {
            let slot = w.clients[usize::from(c)];
            // Like a tick, the jump waits for every other client's clock read to reach the
            // store with its request.
            let others_reading = w
                .clients
                .iter()
                .enumerate()
                .any(|(i, s)| i != usize::from(c) && s.alive && s.pending_read.is_some());
            match (slot.alive, slot.pending_read, slot.holding_until) {
                (true, Some(read), Some(until))
                    if read < until && w.clock < until && !others_reading =>
                {
                    w.clock = until;
                    (Call::Pause { c, to: until }, Outcome::Done)
                }
                _ => (Call::Pause { c, to: w.clock }, Outcome::Skipped),
            }
        });
    }

    /// The next request of any client is lost: `ReplyLost` (applied, reply lost) or
    /// `RequestLost` (never applied).
    pub fn arm(&self, delivery: Delivery) {
        self.env(|w| {
            w.armed = Some(delivery);
            (Call::Arm(delivery), Outcome::Done)
        });
    }

    /// `POST _scripts/<id>` as setup (actor: env).
    pub fn put_script(&self, id: &str, source: &str) {
        self.env(|w| {
            w.service.put_script(id, source);
            let call = Call::PutScript {
                id: id.to_owned(),
                source: source.to_owned(),
            };
            (call, Outcome::Done)
        });
    }
}
