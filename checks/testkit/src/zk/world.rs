//! [`SimZk`]: the simulated ZooKeeper the real recipe runs on under shuttle, and [`SimCoord`],
//! one client's handle implementing `lockwright::zk::Coordination`.
//!
//! - **One call, one step.** Each coordination call does its whole effect on `Core` (the
//!   model's `Server`) at its first poll, under the world lock, appends one [`Step`] to the
//!   recording, and only then yields to shuttle. So the recording's order is the
//!   linearization, and between the recipe's look at `session()` and its next request nothing
//!   else happens (as in the model, where a session change and the client's next request are
//!   separate steps). The yield after every call makes every call a scheduling point.
//! - **Watches** are delivered as separate steps: `wait_watch_event` parks (its waker is
//!   woken by every step of anyone) until the watch fired, the session expired, or the client
//!   restarted; taking the event is its own step.
//! - **Sessions.** A request in an expired session answers `SessionExpired` and the client
//!   opens its next session in the same step (the model's "learn"): `new_session` then returns
//!   that session without another step. Acting on the session event (`session_event()` says
//!   `Expired`, the recipe calls `new_session` of the dead session) is the step
//!   `ReceiveSessionEvent`.
//! - **Faults** are steps of the environment ([`SimZk::expire`], [`SimZk::restart`],
//!   [`SimZk::expire_old`], [`SimZk::recreate_parent`]) and lost replies armed per client
//!   ([`SimZk::arm`]): the client's next create or delete is applied or not and answered
//!   `ConnectionLoss`; and misreads armed per client ([`SimZk::arm_misread`]): the client's
//!   next applied create makes a node the server names to that client under a suffix its
//!   parser rejects, so its first listing of it is the model's `MisreadOwnNode`.
//! - **Lag** ([`SimZk::arm_lag`]): the client's next search that would find its node is
//!   answered without the nodes of its session (a server that has not applied its writes)
//!   unless its last request was a `sync`. `sync` is a recorded step (no model action, no
//!   scheduling point) so the shadow knows it.
//! - **A shared client** ([`SimZk::sharing`]): `c0` and `c1` are two mutexes of one client,
//!   one session. A mutex told a session it did not know (by `session()`, or by `new_session`
//!   of a session the other mutex already renewed) records `NoticeSessionChange`. A shared
//!   mutex's `session()` is a scheduling point after its look, so the other mutex can renew
//!   the session between this one's check and its next request (which then runs in the new
//!   session: the interleaving `drop-own-on-session-swap` gets wrong).
//! - **A suspended connection** (`suspend`, [`SimZk::arm_suspend`]): the client's next request
//!   that can carry it drops the connection (`Suspend`, with the create or retried delete the
//!   server keeps queued); its requests wait until `Reconnect` or until they learn that the
//!   session expired; the server may apply the queued request meanwhile (`ApplySent`).
//! - **Background tasks** the recipe spawns (the release of a lost hold, of a dropped guard)
//!   run as shuttle tasks; [`SimCoord::quiesce`] waits until a client has none left (the
//!   model's client does its `DeleteLockNode` before it acquires again).
//! - **Time** (`clock`): `now()` is the start plus simulated time, a sleep waits for the
//!   simulated clock, and the clock thread moves it, one recorded `Tick` per jump to the
//!   earliest pending deadline, at whatever point shuttle schedules it.
//! - **Online refinement.** With a [`Refinement`], every step is replayed through the model
//!   as it is recorded; the first divergence or property violation panics (under shuttle: a
//!   failing schedule) after keeping the recording for [`take_failure`].
//!
//! Names and ids: protection ids are the client's name (`c1`), so lock nodes are
//! `/locks/_c_c1-lock-0000000003` as in the model (which names a node by its client); session
//! ids encode (client, epoch); `czxid` is the model server's zxid.
//!
//! Here: the server, its recording and faults; `coordination`: [`SimCoord`]; `wire`: the
//! model's names, sessions and stats as `Coordination` returns them.

mod attempts;
mod clock;
mod coordination;
mod drops;
mod resource;
mod suspend;
mod wire;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::time::Instant;

use lockwright_model::zk::ClientId;

use super::core::Core;
use super::record::{format_trace, Call, Outcome, Step};
use super::refine::{Refinement, Replay};

pub use clock::SimSleep;
pub use coordination::{SimCoord, SimWatch};
pub use resource::{Counter, SimResource};
pub use wire::child_name;

/// The lock directory the workloads use.
pub const DIR: &str = "/locks";

/// A failed execution: the message and its recording.
#[derive(Clone, Debug)]
pub struct Failure {
    pub message: String,
    pub trace: Vec<Step>,
}

static FAILURES: Mutex<BTreeMap<String, Failure>> = Mutex::new(BTreeMap::new());

/// The first failure recorded under `name` (a workload's name), if any (taken).
pub fn take_failure(name: &str) -> Option<Failure> {
    FAILURES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(name)
}

pub(crate) struct World {
    pub(crate) core: Core,
    pub(crate) log: Vec<Step>,
    replay: Option<Replay>,
    /// Background tasks per client not finished yet.
    tasks: Vec<usize>,
    /// Per client: its acquire is parked in `wait_watch_event` (the model's `Waiting`).
    in_wait: Vec<bool>,
    /// Per client: an acquire runs (a spawn then is a give-up's hand-off: `GiveUp`).
    acquiring: Vec<bool>,
    /// Per client: a create's or a search's reply has been recorded and the recipe has not
    /// taken it yet (a drop then is not offered: the recipe would treat its node as unknown).
    in_flight: Vec<bool>,
    /// Per client: simulated time its requests took (step to reply taken).
    pub(crate) request_time: Vec<std::time::Duration>,
    /// Drops at random `Pending` polls still allowed in this run.
    drops_left: u8,
    wakers: Vec<Waker>,
    /// The environment's waker while it waits for a client's request (`suspend`).
    env_waker: Option<Waker>,
    /// `session_event()` answers `Connected` while suspended (a twin's broken client).
    hide_disconnects: bool,
    /// Simulated time each request and each session re-open takes (`clock`, issue #33).
    pub(crate) latency: std::time::Duration,
    start: Instant,
    clock: clock::Clock,
    /// Protection ids per attempt (`attempts`).
    attempts: attempts::Attempts,
}

impl World {
    /// Records `step` and replays it online; `Err` with the message to panic with.
    fn record(&mut self, step: Step) -> Result<(), String> {
        if std::env::var_os("LOCKWRIGHT_ZK_TRACE").is_some() {
            eprintln!("  #{:<3} {step}", self.log.len());
        }
        self.log.push(step);
        let i = self.log.len() - 1;
        let Some(replay) = self.replay.as_mut() else {
            return Ok(());
        };
        let r = replay
            .step(i, &self.log[i])
            .map_err(|d| format!("{d}\nrecording:\n{}", format_trace(&self.log)));
        if r.is_err() {
            // One report per execution: the steps other tasks take while the failing one
            // unwinds are recorded, not replayed.
            self.replay = None;
        }
        r
    }
}

/// The simulated server shared by the simulated clients of one run. Cheap to clone.
#[derive(Clone)]
pub struct SimZk {
    world: Arc<Mutex<World>>,
    name: Arc<str>,
    /// The fenced resource outside ZooKeeper (its lock is a shuttle mutex, not the world's).
    resource: Arc<resource::Shared>,
}

impl std::fmt::Debug for SimZk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimZk({})", self.name)
    }
}

impl SimZk {
    /// A fresh server for `clients` clients (each in its first session), the recording kept
    /// under `name` on failure, every step replayed through `refinement` if given.
    pub fn new(name: &str, clients: u8, refinement: Option<&Refinement>) -> SimZk {
        SimZk::sharing(name, clients, false, refinement)
    }

    /// [`SimZk::new`]; with `shared`, the mutexes `c0` and `c1` run in ONE simulated ZooKeeper
    /// client (one session, renewed by whichever learns of its expiry first; the model's
    /// `--shared-client`). Their handles differ only in the mutex the recording names.
    pub fn sharing(
        name: &str,
        clients: u8,
        shared: bool,
        refinement: Option<&Refinement>,
    ) -> SimZk {
        SimZk {
            world: Arc::new(Mutex::new(World {
                core: Core::new(clients, shared),
                log: Vec::new(),
                replay: refinement.map(Refinement::replay),
                tasks: vec![0; usize::from(clients)],
                in_wait: vec![false; usize::from(clients)],
                acquiring: vec![false; usize::from(clients)],
                in_flight: vec![false; usize::from(clients)],
                drops_left: 0,
                request_time: vec![std::time::Duration::ZERO; usize::from(clients)],
                wakers: Vec::new(),
                env_waker: None,
                hide_disconnects: false,
                latency: std::time::Duration::ZERO,
                start: Instant::now(),
                clock: clock::Clock::default(),
                attempts: attempts::Attempts::new(clients),
            })),
            name: name.into(),
            resource: Arc::default(),
        }
    }

    /// Gives each attempt a protection id of its own, as the real recipe's uuid per
    /// `acquire` (`attempts`): a cleanup's requests are then told apart from the next
    /// attempt's.
    pub fn fresh_ids(&self) {
        self.lock().attempts.set_fresh(true);
    }

    /// Lets the run's callers drop up to `n` futures at random `Pending` polls
    /// ([`SimCoord::try_drop`]).
    pub fn allow_drops(&self, n: u8) {
        self.lock().drops_left = n;
    }

    /// The lock nodes still on the server whose session is alive: after a run in which every
    /// client released and its cleanups finished, nobody holds or waits, so each one is an
    /// orphan (judged from the server's children alone, not from the recipe or the model).
    pub fn live_nodes(&self) -> Vec<String> {
        let w = self.lock();
        w.core
            .server
            .children()
            .iter()
            .filter(|z| w.core.server.is_alive(z.owner))
            .map(|z| {
                format!(
                    "{DIR}/{} (session of c{})",
                    child_name(z.name),
                    z.owner.client
                )
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the world; records the step it returns (waking every parked wait); panics
    /// on a divergence, after releasing the world.
    fn step<T>(&self, f: impl FnOnce(&mut World) -> (Option<Step>, T)) -> T {
        let (failure, wakers, out) = {
            let mut w = self.lock();
            let (step, out) = f(&mut w);
            // Only a step changes anything a parked wait could be waiting for.
            let (failure, wakers) = match step {
                Some(s) => (
                    w.record(s).err().map(|m| (m, w.log.clone())),
                    std::mem::take(&mut w.wakers),
                ),
                None => (None, Vec::new()),
            };
            (failure, wakers, out)
        };
        for wk in wakers {
            wk.wake();
        }
        if let Some((message, trace)) = failure {
            FAILURES
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(self.name.to_string())
                .or_insert_with(|| Failure {
                    message: message.clone(),
                    trace,
                });
            panic!("{message} [{}]", self.name);
        }
        out
    }

    /// The recording so far.
    pub fn trace(&self) -> Vec<Step> {
        self.lock().log.clone()
    }

    /// Client `c`'s coordination handle.
    pub fn client(&self, c: ClientId) -> SimCoord {
        SimCoord {
            sim: self.clone(),
            c,
        }
    }

    fn env(&self, call: Call, f: impl FnOnce(&mut Core) -> Outcome) {
        self.step(|w| {
            let outcome = f(&mut w.core);
            (
                Some(Step {
                    client: None,
                    call,
                    outcome,
                }),
                (),
            )
        });
        shuttle::thread::yield_now();
    }

    // ---- faults: one step each (skipped when they cannot happen) ----

    /// The server expires client `c`'s current session (skipped if it is gone already).
    pub fn expire(&self, c: ClientId) {
        self.env(Call::Expire(c), |core| core.expire(c));
    }

    /// Client `c` replaces its handle: a new session; the old one lives on, abandoned.
    pub fn restart(&self, c: ClientId) {
        self.env(Call::Restart(c), |core| core.restart(c));
    }

    /// The server times out the oldest session `c` abandoned (skipped if there is none).
    pub fn expire_old(&self, c: ClientId) {
        self.env(Call::ExpireOld(c), |core| core.expire_old(c));
    }

    /// The container `/locks` is reaped and made again (skipped unless it is empty).
    pub fn recreate_parent(&self) {
        self.env(Call::RecreateParent, Core::recreate_parent);
    }

    /// Client `c`'s next applied create makes a node the server names to `c` unreadably (its
    /// first listing of it is the model's `MisreadOwnNode`).
    pub fn arm_misread(&self, c: ClientId) {
        self.env(Call::ArmMisread(c), |core| core.arm_misread(c));
    }

    /// Client `c`'s next search that would find its node, unless a `sync` came first, is
    /// answered by a server that has not applied its writes (the model's `LaggedSearch`).
    pub fn arm_lag(&self, c: ClientId) {
        self.env(Call::ArmLag(c), |core| core.arm_lag(c));
    }

    /// Client `c`'s next create or delete (in a live session) is applied or not, and its
    /// reply lost.
    pub fn arm(&self, c: ClientId, applied: bool) {
        self.env(Call::Arm { client: c, applied }, |core| {
            core.arm(c, applied)
        });
    }
}
