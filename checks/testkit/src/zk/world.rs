//! [`SimZk`]: the simulated ZooKeeper the real recipe runs on under shuttle, and [`SimCoord`],
//! one client's handle implementing `lockwright::zk::Coordination`.
//!
//! - **One call, one step.** Each coordination call does its whole effect on [`Core`] (the
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
//!   `ConnectionLoss`.
//! - **Background tasks** the recipe spawns (the release of a lost hold, of a dropped guard)
//!   run as shuttle tasks; [`SimCoord::quiesce`] waits until a client has none left (the
//!   model's client does its `DeleteLockNode` before it acquires again).
//! - **Online refinement.** With a [`Refinement`], every step is replayed through the model
//!   as it is recorded; the first divergence or property violation panics (under shuttle: a
//!   failing schedule) after keeping the recording for [`take_failure`].
//!
//! Names and ids: protection ids are the client's name (`c1`), so lock nodes are
//! `/locks/_c_c1-lock-0000000003` as in the model (which names a node by its client); session
//! ids encode (client, epoch); `czxid` is the model server's zxid.

use std::collections::BTreeMap;
use std::future::{poll_fn, Future};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use lockwright::zk::coord::{
    CoordError, Coordination, GuardedOp, LockNode, MultiError, NodeStat, OpResult, Search,
    SessionEvent, SessionId as WireSession, WatchOutcome,
};
use lockwright::zk::FencingToken;
use lockwright_model::zk::{ClientId, Name, SessionId, Znode};

use super::core::{Core, Wait};
use super::record::{format_trace, Call, Outcome, Step};
use super::refine::{Refinement, Replay};

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
    wakers: Vec<Waker>,
    start: Instant,
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
}

impl std::fmt::Debug for SimZk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SimZk({})", self.name)
    }
}

fn wire(s: SessionId) -> WireSession {
    WireSession(((i64::from(s.client) + 1) << 32) | i64::from(s.epoch))
}

fn stat(z: &Znode) -> NodeStat {
    NodeStat {
        czxid: i64::from(z.czxid),
        mzxid: i64::from(z.czxid),
        version: 0,
        ephemeral_owner: wire(z.owner),
    }
}

/// `_c_c1-lock-0000000003` or `lock-0000000003`.
pub fn child_name(name: Name) -> String {
    match name.uuid {
        Some(u) => format!("_c_c{u}-lock-{:010}", name.seq),
        None => format!("lock-{:010}", name.seq),
    }
}

/// The protection id in a create prefix or child name (`_c_c1-…` → `Some(1)`, `lock-…` →
/// `None`); the rest after `lock-`.
fn split_name(child: &str) -> Option<(Option<u8>, &str)> {
    if let Some(rest) = child.strip_prefix("_c_c") {
        let (u, rest) = rest.split_once("-lock-")?;
        Some((Some(u.parse().ok()?), rest))
    } else {
        Some((None, child.strip_prefix("lock-")?))
    }
}

fn parse_path(path: &str) -> Name {
    let child = path
        .strip_prefix(DIR)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or_else(|| panic!("a path outside {DIR}: {path}"));
    let (uuid, seq) = split_name(child).unwrap_or_else(|| panic!("not a lock node: {path}"));
    Name {
        seq: seq.parse().unwrap_or_else(|_| panic!("bad suffix: {path}")),
        uuid,
    }
}

impl SimZk {
    /// A fresh server for `clients` clients (each in its first session), the recording kept
    /// under `name` on failure, every step replayed through `refinement` if given.
    pub fn new(name: &str, clients: u8, refinement: Option<&Refinement>) -> SimZk {
        SimZk {
            world: Arc::new(Mutex::new(World {
                core: Core::new(clients),
                log: Vec::new(),
                replay: refinement.map(Refinement::replay),
                tasks: vec![0; usize::from(clients)],
                wakers: Vec::new(),
                start: Instant::now(),
            })),
            name: name.into(),
        }
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

    /// Client `c`'s next create or delete (in a live session) is applied or not, and its
    /// reply lost.
    pub fn arm(&self, c: ClientId, applied: bool) {
        self.env(Call::Arm { client: c, applied }, |core| {
            core.arm(c, applied)
        });
    }
}

/// One simulated client's ZooKeeper handle (one current session at a time).
#[derive(Clone, Debug)]
pub struct SimCoord {
    sim: SimZk,
    c: ClientId,
}

/// A watch set by [`Coordination::watch_node`].
#[derive(Debug)]
pub struct SimWatch {
    session: SessionId,
}

async fn after_step<T>(out: T) -> T {
    shuttle::future::yield_now().await;
    out
}

impl SimCoord {
    /// The client's index.
    pub fn id(&self) -> ClientId {
        self.c
    }

    /// The server this handle talks to.
    pub fn sim(&self) -> &SimZk {
        &self.sim
    }

    fn client_step<T>(&self, call: Call, f: impl FnOnce(&mut Core) -> (Outcome, T)) -> T {
        let c = self.c;
        self.sim.step(|w| {
            let (outcome, out) = f(&mut w.core);
            (
                Some(Step {
                    client: Some(c),
                    call,
                    outcome,
                }),
                out,
            )
        })
    }

    /// Records a workload event or a re-entrancy step (no request; not a scheduling point).
    pub fn note(&self, call: Call) {
        self.client_step(call, |_| (Outcome::Ok, ()));
    }

    /// A write to the fenced resource carrying `token`: accepted unless a higher token was.
    ///
    /// # Errors
    /// The resource refused the token.
    pub async fn fenced_write(&self, token: FencingToken) -> Result<(), ()> {
        let t = token.get();
        let o = self.client_step(Call::FencedWrite { token: t }, |core| {
            let o = core.fenced_write(t);
            (o, o)
        });
        after_step(if o == Outcome::Ok { Ok(()) } else { Err(()) }).await
    }

    /// A write without a token to the resource (after a passed `ensure_valid`).
    pub async fn write(&self) {
        self.client_step(Call::Write, |_| (Outcome::Ok, ()));
        after_step(()).await;
    }

    /// Waits until every background task this client's recipe spawned has finished.
    pub async fn quiesce(&self) {
        let c = usize::from(self.c);
        poll_fn(|cx| {
            let mut w = self.sim.lock();
            if w.tasks[c] == 0 {
                Poll::Ready(())
            } else {
                w.wakers.push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
    }

    fn session_now(&self) -> SessionId {
        self.sim.lock().core.session(self.c)
    }
}

fn expired<T>() -> Result<T, CoordError> {
    Err(CoordError::SessionExpired)
}

fn lost<T>() -> Result<T, CoordError> {
    Err(CoordError::ConnectionLoss {
        detail: "simulated lost reply".into(),
    })
}

impl Coordination for SimCoord {
    type Watch = SimWatch;

    fn create_lock_node<'a>(
        &'a self,
        prefix: &'a str,
        _data: &'a [u8],
    ) -> impl Future<Output = Result<LockNode, CoordError>> + Send + 'a {
        let child = prefix
            .strip_prefix(DIR)
            .and_then(|p| p.strip_prefix('/'))
            .unwrap_or_else(|| panic!("a create outside {DIR}: {prefix}"));
        let (uuid, rest) =
            split_name(child).unwrap_or_else(|| panic!("not a lock prefix: {prefix}"));
        assert!(rest.is_empty(), "not a lock prefix: {prefix}");
        let c = self.c;
        assert!(
            uuid.is_none_or(|u| u == c),
            "client c{c} creates with another client's protection id: {prefix}"
        );
        let r = self.client_step(Call::Create { uuid }, |core| {
            let (o, z) = core.create(c, uuid);
            let r = match (o, z) {
                (Outcome::Ok, Some(z)) => Ok(LockNode {
                    path: format!("{DIR}/{}", child_name(z.name)),
                    stat: stat(&z),
                }),
                (Outcome::SessionExpired, _) => expired(),
                _ => lost(),
            };
            (o, r)
        });
        after_step(r)
    }

    fn find_own_node<'a>(
        &'a self,
        dir: &'a str,
        prefix: Option<&'a str>,
    ) -> impl Future<Output = Result<Search, CoordError>> + Send + 'a {
        assert_eq!(dir, DIR);
        let c = self.c;
        let r = self.client_step(Call::FindOwnNode, |core| {
            let (o, children) = core.children(c);
            if o == Outcome::SessionExpired {
                return (o, expired());
            }
            let candidates = children
                .iter()
                .map(|z| (child_name(z.name), stat(z)))
                .filter(|(n, _)| prefix.is_none_or(|p| n.starts_with(p)))
                .collect();
            let session = wire(core.session(c));
            (
                o,
                Ok(Search {
                    session,
                    candidates,
                }),
            )
        });
        after_step(r)
    }

    fn list_children<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Future<Output = Result<Vec<String>, CoordError>> + Send + 'a {
        assert_eq!(dir, DIR);
        let c = self.c;
        let r = self.client_step(Call::ListChildren, |core| {
            let (o, children) = core.children(c);
            if o == Outcome::SessionExpired {
                return (o, expired());
            }
            (o, Ok(children.iter().map(|z| child_name(z.name)).collect()))
        });
        after_step(r)
    }

    fn watch_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<SimWatch, CoordError>> + Send + 'a {
        let name = parse_path(path);
        let c = self.c;
        let r = self.client_step(Call::Watch { name }, |core| {
            let o = core.watch(c, name);
            let r = match o {
                Outcome::Ok => Ok(SimWatch {
                    session: core.session(c),
                }),
                Outcome::NoNode => Err(CoordError::NoNode),
                _ => expired(),
            };
            (o, r)
        });
        after_step(r)
    }

    fn wait_watch_event(&self, watch: SimWatch) -> impl Future<Output = WatchOutcome> + Send + '_ {
        let c = self.c;
        async move {
            let out = poll_fn(|cx| {
                let waker = cx.waker().clone();
                self.sim.step(|w| match w.core.wait(c, watch.session) {
                    Wait::Pending => {
                        w.wakers.push(waker);
                        (None, Poll::Pending)
                    }
                    Wait::Replaced => (None, Poll::Ready(WatchOutcome::SessionExpired)),
                    Wait::Fired => (
                        Some(Step {
                            client: Some(c),
                            call: Call::WatchEvent,
                            outcome: Outcome::Ok,
                        }),
                        Poll::Ready(WatchOutcome::Fired),
                    ),
                    Wait::Expired => (
                        Some(Step {
                            client: Some(c),
                            call: Call::SessionEvent,
                            outcome: Outcome::Ok,
                        }),
                        Poll::Ready(WatchOutcome::SessionExpired),
                    ),
                })
            })
            .await;
            after_step(out).await
        }
    }

    fn delete_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a {
        let name = parse_path(path);
        let c = self.c;
        let r = self.client_step(Call::Delete { name }, |core| {
            let o = core.delete(c, name);
            let r = match o {
                Outcome::Ok => Ok(()),
                Outcome::NoNode => Err(CoordError::NoNode),
                Outcome::SessionExpired => expired(),
                _ => lost(),
            };
            (o, r)
        });
        after_step(r)
    }

    fn check_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Option<NodeStat>, CoordError>> + Send + 'a {
        let name = parse_path(path);
        let c = self.c;
        let r = self.client_step(Call::Check { name }, |core| {
            let (o, z) = core.check(c, name);
            let r = match o {
                Outcome::SessionExpired => expired(),
                _ => Ok(z.as_ref().map(stat)),
            };
            (o, r)
        });
        after_step(r)
    }

    fn guarded_write<'a>(
        &'a self,
        lock_node: Option<&'a str>,
        ops: &'a [GuardedOp],
    ) -> impl Future<Output = Result<Vec<OpResult>, MultiError>> + Send + 'a {
        let check = lock_node.map(parse_path);
        let c = self.c;
        let r = self.client_step(Call::GuardedWrite { check }, |core| {
            let o = core.multi(c, check);
            let r = match o {
                Outcome::Ok => {
                    let mut results: Vec<OpResult> = Vec::new();
                    if check.is_some() {
                        results.push(OpResult::Checked);
                    }
                    results.extend(ops.iter().map(|_| OpResult::SetData {
                        stat: NodeStat {
                            czxid: 0,
                            mzxid: 0,
                            version: 0,
                            ephemeral_owner: WireSession(0),
                        },
                    }));
                    Ok(results)
                }
                Outcome::NoNode => Err(MultiError {
                    index: Some(0),
                    error: CoordError::NoNode,
                }),
                _ => Err(MultiError {
                    index: None,
                    error: CoordError::SessionExpired,
                }),
            };
            (o, r)
        });
        after_step(r)
    }

    fn session(&self) -> WireSession {
        wire(self.session_now())
    }

    fn session_event(&self) -> SessionEvent {
        if self.sim.lock().core.live(self.c) {
            SessionEvent::Connected
        } else {
            SessionEvent::Expired
        }
    }

    fn new_session(
        &self,
        expired: WireSession,
    ) -> impl Future<Output = Result<WireSession, CoordError>> + Send + '_ {
        let c = self.c;
        async move {
            let current = self.session_now();
            if wire(current) != expired || self.sim.lock().core.live(c) {
                // Renewed already (in the step that answered `SessionExpired`), or alive.
                return Ok(wire(current));
            }
            self.client_step(Call::SessionEvent, |core| {
                assert!(core.learn(c));
                (Outcome::Ok, ())
            });
            after_step(Ok(wire(self.session_now()))).await
        }
    }

    fn ensure_dir<'a>(
        &'a self,
        _dir: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a {
        // The model's `/locks` always exists (a create in a reaped container makes it again).
        std::future::ready(Ok(()))
    }

    fn read_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(Vec<u8>, NodeStat), CoordError>> + Send + 'a {
        // Not a step: only words an error after giving up (not in the workloads).
        let name = parse_path(path);
        let r = match self.sim.lock().core.server.node(name) {
            Some(z) => Ok((Vec::new(), stat(&z))),
            None => Err(CoordError::NoNode),
        };
        std::future::ready(r)
    }

    fn new_protection_id(&self) -> String {
        format!("c{}", self.c)
    }

    fn now(&self) -> Instant {
        self.sim.lock().start
    }

    fn sleep(&self, _duration: Duration) -> impl Future<Output = ()> + Send + '_ {
        // Retry pauses take no simulated time; the next step is a scheduling point anyway.
        std::future::ready(())
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let c = usize::from(self.c);
        self.sim.lock().tasks[c] += 1;
        let sim = self.sim.clone();
        drop(shuttle::future::spawn(async move {
            task.await;
            let wakers = {
                let mut w = sim.lock();
                w.tasks[c] -= 1;
                std::mem::take(&mut w.wakers)
            };
            for wk in wakers {
                wk.wake();
            }
        }));
    }
}
