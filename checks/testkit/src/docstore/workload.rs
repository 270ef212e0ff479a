//! Which simulated clients do what on the REAL `lockwright::docstore::LeaseLock` over a
//! [`SimStore`]: written once, run under shuttle or on std threads.
//!
//! A client's round is the model's loop once: `try_acquire` (refused: the round ends, the next
//! round tries again); with `fenced-claim`, `claim` the data document; while holding, a few
//! read-then-write sessions — `read`, then `fenced_write` (a leased client checks its lease
//! before each write; a refused fenced write or claim, or a passed lease, ends the writes);
//! release. A reader of the read/write recipe only acquires and releases. After each execution the whole
//! recording is replayed through the model ([`super::refine`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use lockwright::docstore::testing::Role as WireRole;
use lockwright::docstore::LeaseLock;
use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX, LOCK_INDEX};
use lockwright_model::docstore::{ClientId, Delivery, Role, Scenario, Variant, Writes};
use serde_json::json;

use super::client::SimClient;
use super::recipes::{Defect, WithDefect};
use super::record::{format_trace, Step, TICK_MS};
use super::refine::Refinement;
use super::world::SimStore;
use crate::prims::Runtime;

/// One operation of a simulated thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As the plan's client: acquire → `writes` fenced writes (writers) → release.
    Round { writes: u8 },
    /// Fault: client `c` crashes.
    Crash(ClientId),
    /// Fault: crashed client `c` restarts (a new incarnation).
    Restart(ClientId),
    /// Fault: an operator deletes the lock document.
    StrayDelete,
    /// Fault: the lock index fails over (`_primary_term` + 1).
    Failover,
    /// Fault: the lock index is deleted and created again (every lock document gone).
    RecreateIndex,
    /// Fault: the data document is deleted and created again without its fence.
    RecreateDoc,
    /// Fault: a fail-over loses the last acknowledged write (skipped if there is none).
    Rollback,
    /// The clock advances one tick (skipped while a client is between a clock read and its
    /// request).
    Tick,
    /// Fault: client `c`, between a passed lease check and its write, sleeps past its lease.
    Pause(ClientId),
    /// Fault: the next request is applied and its reply lost.
    LoseReply,
    /// Fault: the next request is lost before the store.
    LoseRequest,
}

/// One simulated thread: the client incarnation it is (for [`Op::Round`]) and what it does, in
/// order. The incarnation is fixed by the plan, not by when the thread first runs: a thread
/// of incarnation 0 whose client has crashed stops at its next round, and a thread that
/// restarts a client and then runs rounds as its new incarnation names that incarnation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPlan {
    pub client: ClientId,
    pub incarnation: u8,
    pub ops: Vec<Op>,
}

impl ThreadPlan {
    /// Client `client` (first incarnation) doing `rounds` rounds of `writes` writes each.
    pub fn client(client: ClientId, rounds: usize, writes: u8) -> Self {
        ThreadPlan {
            client,
            incarnation: 0,
            ops: vec![Op::Round { writes }; rounds],
        }
    }

    /// A thread whose rounds run as `client` in `incarnation` (after it restarts the client
    /// itself, in `ops`).
    pub fn as_incarnation(client: ClientId, incarnation: u8, ops: Vec<Op>) -> Self {
        ThreadPlan {
            client,
            incarnation,
            ops,
        }
    }

    /// A thread that only injects `ops` (it runs no round).
    pub fn env(ops: Vec<Op>) -> Self {
        ThreadPlan {
            client: ClientId::MAX,
            incarnation: 0,
            ops,
        }
    }
}

/// A scenario: the recipe (as the model's variant and write mode), the clients, the lease, the
/// threads.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Keys recorded failures ([`take_failure`]).
    pub name: &'static str,
    pub variant: Variant,
    pub writes: Writes,
    pub clients: u8,
    /// `read-write`: clients `0..readers` are readers.
    pub readers: u8,
    /// The lease, in model ticks ([`TICK_MS`] each).
    pub lease_ticks: u64,
    pub threads: Vec<ThreadPlan>,
}

impl Workload {
    /// The corrected recipe with claim-at-acquire (`leased × fenced-claim`, fixed against the
    /// store's own faults), `clients` clients, a lease of 2 ticks.
    pub fn leased(name: &'static str, clients: u8, threads: Vec<ThreadPlan>) -> Self {
        Workload {
            name,
            variant: Variant::Leased,
            writes: Writes::FencedClaim,
            clients,
            readers: 0,
            lease_ticks: 2,
            threads,
        }
    }

    /// The same workload on another recipe (the defect twins).
    pub fn with_recipe(mut self, variant: Variant, writes: Writes) -> Self {
        self.variant = variant;
        self.writes = writes;
        self
    }

    /// The same workload with `readers` readers (`read-write`).
    pub fn with_readers(mut self, readers: u8) -> Self {
        self.readers = readers;
        self
    }

    /// The model scenario (no faults: [`Refinement::scenario`] counts them in a recording).
    pub fn model(&self) -> Scenario {
        Scenario::new(self.variant, self.writes)
            .with_clients(self.clients)
            .with_readers(self.readers)
            .with_lease(self.lease_ticks)
            .with_symmetry(false)
    }

    /// The refinement check of this workload's runs, all `always` properties enforced.
    pub fn refinement(&self) -> Refinement {
        Refinement::new(self.model())
    }

    /// The client defect that implements this recipe for client `c` (`None`: the corrected
    /// recipe).
    ///
    /// # Panics
    /// For a recipe × write mode the client has no switch for (e.g. `global × fenced`).
    pub fn defect(&self, c: ClientId) -> Option<Defect> {
        let role = match self.model().role(c) {
            Role::Writer => WireRole::Writer,
            Role::Reader => WireRole::Reader,
        };
        match (self.variant, self.writes) {
            (Variant::Leased, Writes::Fenced | Writes::FencedClaim) => None,
            (Variant::LeasedUpsert, Writes::Fenced | Writes::FencedClaim) => {
                Some(Defect::LeasedUpsert)
            }
            (Variant::LeasedUpsert, Writes::Unfenced) => Some(Defect::UnfencedWrites),
            (Variant::LeasedNoop, Writes::Fenced) => Some(Defect::LeasedNoop),
            (Variant::LeasedFixUnverified, Writes::Fenced | Writes::FencedClaim) => {
                Some(Defect::LeasedFixUnverified)
            }
            (Variant::LeasedFixUnconditional, Writes::Fenced | Writes::FencedClaim) => {
                Some(Defect::LeasedFixUnconditional)
            }
            (Variant::LeasedFixUnchecked, Writes::Fenced | Writes::FencedClaim) => {
                Some(Defect::LeasedFixUnchecked)
            }
            (Variant::Global, Writes::Unfenced) => Some(Defect::Global),
            (Variant::Document, Writes::Unfenced) => Some(Defect::Document),
            (Variant::ReadWrite, Writes::Unfenced) => Some(Defect::ReadWrite(role)),
            (v, w) => panic!("the reference client has no switch for {v} × {w}"),
        }
    }

    /// The real lock client `client` uses: the recipe's lock document, the model's owner id
    /// (`c<client>-i<incarnation>`), enough attempts that no fault budget here exhausts them,
    /// and no clock margin: the simulated store's scripts read the true clock (the model's
    /// `skew` 0, whose margin is 0).
    pub fn lock_for<R: Runtime>(&self, client: SimClient<R>) -> LeaseLock<SimClient<R>> {
        let c = client.id();
        let owner = client.owner();
        let lock = LeaseLock::new(
            client,
            LOCK_INDEX,
            self.variant.lock_id(),
            std::time::Duration::from_millis(self.lease_ticks * TICK_MS),
        )
        .with_owner(owner)
        .with_attempts(16)
        .with_clock_margin(std::time::Duration::ZERO);
        match self.defect(c) {
            Some(d) => lock.with_defect(d),
            None => lock,
        }
    }
}

/// Checks a finished recording (the refinement replayer, usually).
pub type Checker = Arc<dyn Fn(&[Step]) -> Result<(), String> + Send + Sync>;

/// A failed execution: the message and its recording.
#[derive(Clone, Debug)]
pub struct Failure {
    pub message: String,
    pub trace: Vec<Step>,
}

static FAILURES: Mutex<BTreeMap<&'static str, Failure>> = Mutex::new(BTreeMap::new());

/// The first failure recorded for workload `name`, if any (taken).
pub fn take_failure(name: &'static str) -> Option<Failure> {
    FAILURES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(name)
}

/// What a session's outcome means for the round.
enum Session {
    /// Written, or no answer (the write may or may not have landed): read and write again.
    Next,
    /// The lease passed (nothing to release) or the fence refused (release).
    Stop,
    /// This incarnation crashed: release nothing.
    Dead,
}

fn session_end<R: Runtime>(
    client: &SimClient<R>,
    done: Result<lockwright::docstore::Written, lockwright::docstore::DocLockError>,
) -> Session {
    match done {
        Ok(_) => Session::Next,
        Err(_) if client.is_dead() => Session::Dead,
        Err(e) if e.is_lost() => Session::Stop,
        Err(_) => Session::Next,
    }
}

fn run_round<R: Runtime>(w: &Workload, lock: &LeaseLock<SimClient<R>>, writes: u8) {
    let client = lock.store();
    let mut guard = match lock.try_acquire() {
        Ok(g) => g,
        Err(_) => {
            client.note_acquired(None);
            return;
        }
    };
    if !client.note_acquired(Some((guard.token(), guard.valid_until()))) {
        std::mem::forget(guard); // a crashed process releases nothing
        return;
    }
    if w.model().role(client.id()) == Role::Writer {
        if w.writes == Writes::FencedClaim {
            // Claim-at-acquire, through the handle the claim returns.
            let mut claimed = match guard.claim(DATA_INDEX, DATA_ID) {
                Ok(c) => c,
                Err(_) if client.is_dead() => {
                    std::mem::forget(guard);
                    return;
                }
                Err(_) => {
                    let _ = guard.release();
                    return;
                }
            };
            for i in 0..writes {
                let name = json!({ "name": format!("{}-{i}", client.owner()) });
                let done = claimed.read().and_then(|_| claimed.write(&name));
                match session_end(client, done) {
                    Session::Next => {}
                    Session::Stop => break,
                    Session::Dead => {
                        std::mem::forget(guard);
                        return;
                    }
                }
            }
        } else {
            for i in 0..writes {
                let name = json!({ "name": format!("{}-{i}", client.owner()) });
                let done = guard
                    .read(DATA_INDEX, DATA_ID)
                    .and_then(|_| guard.fenced_write(DATA_INDEX, DATA_ID, &name));
                match session_end(client, done) {
                    Session::Next => {}
                    Session::Stop => break,
                    Session::Dead => {
                        std::mem::forget(guard);
                        return;
                    }
                }
            }
        }
    }
    let _ = guard.release();
}

fn run_thread<R: Runtime>(w: &Workload, store: &SimStore<R>, plan: &ThreadPlan) {
    let mut lock: Option<LeaseLock<SimClient<R>>> = None;
    for op in &plan.ops {
        match *op {
            Op::Crash(c) => store.crash(c),
            Op::Restart(c) => store.restart(c),
            Op::StrayDelete => store.stray_delete(),
            Op::Failover => store.failover(),
            Op::RecreateIndex => store.recreate_index(),
            Op::RecreateDoc => store.recreate_doc(),
            Op::Rollback => store.rollback(),
            Op::Tick => store.tick(),
            Op::Pause(c) => store.pause(c),
            Op::LoseReply => store.arm(Delivery::ReplyLost),
            Op::LoseRequest => store.arm(Delivery::RequestLost),
            Op::Round { writes } => {
                let lock = lock.get_or_insert_with(|| {
                    w.lock_for(store.client_at(plan.client, plan.incarnation))
                });
                if lock.store().is_dead() {
                    return; // this incarnation crashed (or never started): its thread stops
                }
                run_round(w, lock, writes);
            }
        }
    }
}

/// Runs one execution of `w`: installs the recipe's scripts, spawns one thread per plan,
/// joins them, then runs `check` on the recording (panicking with its message, after keeping
/// the failure for [`take_failure`]). Returns the recording.
pub fn run<R: Runtime>(w: &Workload, check: Option<&Checker>) -> Vec<Step> {
    assert!(!w.threads.is_empty(), "a workload needs a thread");
    let store = SimStore::<R>::new(
        w.clients,
        w.variant.lock_id(),
        w.variant.installs_lock_once(),
    );
    // Setup, before any client runs: the stored scripts of the recipe (as the client installs
    // them; the defect switch changes which).
    let setup = w.lock_for(store.client(0));
    for (id, source) in setup.rules().scripts_to_install() {
        store.put_script(id, source);
    }
    let w2 = Arc::new(w.clone());
    let handles: Vec<_> = w
        .threads
        .iter()
        .map(|plan| {
            let (store, plan, w) = (store.clone(), plan.clone(), Arc::clone(&w2));
            R::spawn(move || run_thread(&w, &store, &plan))
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(R::join).collect();
    if let Some(Err(panic)) = results.into_iter().find(Result::is_err) {
        std::panic::resume_unwind(panic);
    }
    let trace = store.trace();
    if let Some(check) = check {
        if let Err(message) = check(&trace) {
            FAILURES
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(w.name)
                .or_insert_with(|| Failure {
                    message: message.clone(),
                    trace: trace.clone(),
                });
            panic!(
                "{message} [{}, {}]\nrecording:\n{}",
                w.name,
                R::NAME,
                format_trace(&trace)
            );
        }
    }
    trace
}
