//! [`SimCoord`]: one simulated client's `Coordination` handle on [`SimZk`], each request one
//! step of the world; and [`SimWatch`], a watch it set.

use std::future::{poll_fn, Future};
use std::task::Poll;
use std::time::{Duration, Instant};

use lockwright::zk::coord::{
    CoordError, Coordination, GuardedOp, Listing, LockNode, MultiError, NodeStat, OpResult, Search,
    SessionEvent, SessionId as WireSession, WatchOutcome,
};
use lockwright::zk::FencingToken;
use lockwright_model::zk::{ClientId, SessionId, PREVIOUS_ATTEMPT};

use super::super::core::{Core, Wait};
use super::super::record::{Call, Outcome, Step};
use super::super::suspend::Request;
use super::drops::HeldBack;
use super::suspend::Pending;
use super::wire::{parse_path, split_name, stat, view_name, wire};
use super::{SimZk, DIR};

/// One simulated client's ZooKeeper handle (one current session at a time).
#[derive(Clone, Debug)]
pub struct SimCoord {
    pub(super) sim: SimZk,
    pub(super) c: ClientId,
}

/// A watch set by [`Coordination::watch_node`].
#[derive(Debug)]
pub struct SimWatch {
    session: SessionId,
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

    pub(super) fn client_step<T>(
        &self,
        call: Call,
        f: impl FnOnce(&mut Core) -> (Outcome, T),
    ) -> T {
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
        self.replied(if o == Outcome::Ok { Ok(()) } else { Err(()) }, false)
            .await
    }

    /// A read of the resource: the start of an update (read, compute, write).
    pub async fn read(&self) {
        self.client_step(Call::Read, |_| (Outcome::Ok, ()));
        self.replied((), false).await;
    }

    /// A write without a token to the resource (after a passed `ensure_valid`).
    pub async fn write(&self) {
        self.client_step(Call::Write, |_| (Outcome::Ok, ()));
        self.replied((), false).await;
    }

    /// Whether the caller may drop this client's acquire now: it is parked waiting for its
    /// predecessor (the model's `Waiting`). If so, records `DropAcquire` (the caller drops it in
    /// the same step). Its waker is the acquire's own, woken by every step.
    pub fn try_drop_acquire(&self) -> bool {
        let c = self.c;
        self.sim.step(|w| {
            if std::mem::take(&mut w.in_wait[usize::from(c)]) {
                // The dropped attempt's hand-off is this drop's, not a give-up.
                w.acquiring[usize::from(c)] = false;
                let step = Step {
                    client: Some(c),
                    call: Call::DropAcquire,
                    outcome: Outcome::Ok,
                };
                (Some(step), true)
            } else {
                (None, false)
            }
        })
    }

    /// Whether the caller may drop this client's release now: its delete lost a reply and no
    /// delete was sent since. If so, records `Abandon` (the caller drops it in the same step);
    /// if not, `waker` is woken at the next step of anyone.
    pub fn try_abandon(&self, waker: &std::task::Waker) -> bool {
        let c = self.c;
        let waker = waker.clone();
        self.sim.step(|w| {
            if w.core.lost_delete[usize::from(c)] {
                assert_eq!(w.core.abandon(c), Outcome::Ok);
                let step = Step {
                    client: Some(c),
                    call: Call::Abandon,
                    outcome: Outcome::Ok,
                };
                (Some(step), true)
            } else {
                w.wakers.push(waker);
                (None, false)
            }
        })
    }

    /// An acquire of this client starts (`true`) or has returned: while one runs, a task the
    /// recipe spawns is a give-up's hand-off of its node (recorded `GiveUp`).
    pub fn set_acquiring(&self, on: bool) {
        self.sim.lock().acquiring[usize::from(self.c)] = on;
    }

    /// Records that `try_acquire`/`acquire_timeout` returned `Held`/`TimedOut` after `waited`.
    pub fn gave_up(&self, waited: Duration) {
        let waited_ms = u64::try_from(waited.as_millis()).unwrap_or(u64::MAX);
        self.note(Call::GaveUp { waited_ms });
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

    /// The mutex looks at its client's current session; if another mutex sharing the client
    /// renewed it since this one was last told, that is the step `NoticeSessionChange`.
    /// Returns the session and whether the client is shared.
    fn look(&self) -> (SessionId, bool) {
        let c = self.c;
        self.sim.step(|w| {
            let out = (w.core.session(c), w.core.shares(c));
            let step = w.core.notice(c).then_some(Step {
                client: Some(c),
                call: Call::NoticeSessionChange,
                outcome: Outcome::Ok,
            });
            (step, out)
        })
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
            uuid.is_none_or(|u| u % PREVIOUS_ATTEMPT == c),
            "client c{c} creates with another client's protection id: {prefix}"
        );
        let f = move |core: &mut Core| {
            let (o, z) = core.create(c, uuid);
            let r = match (o, z) {
                (Outcome::Ok, Some(z)) => Ok(LockNode {
                    path: format!("{DIR}/{}", view_name(core, c, z.name)),
                    stat: stat(&z),
                }),
                (Outcome::SessionExpired, _) => expired(),
                _ => lost(),
            };
            (o, r)
        };
        let req = Request::Create { uuid };
        self.request(req, Call::Create { uuid }, true, f, Err)
    }

    fn find_own_node<'a>(
        &'a self,
        dir: &'a str,
        prefix: Option<&'a str>,
    ) -> impl Future<Output = Result<Search, CoordError>> + Send + 'a {
        assert_eq!(dir, DIR);
        let c = self.c;
        // A search for an older attempt's id is its cleanup's (`attempts`).
        let id = super::attempts::prefix_id(prefix);
        let call = if self.sim.lock().attempts.is_older(c, id) {
            Call::CleanupFind { uuid: id }
        } else {
            Call::FindOwnNode
        };
        let f = move |core: &mut Core| {
            let (o, children) = core.search(c);
            if o == Outcome::SessionExpired {
                return (o, expired());
            }
            let candidates = children
                .iter()
                .map(|z| (view_name(core, c, z.name), stat(z)))
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
        };
        self.request(Request::Read, call, true, f, Err)
    }

    fn list_children<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Future<Output = Result<Listing, CoordError>> + Send + 'a {
        assert_eq!(dir, DIR);
        let c = self.c;
        let f = move |core: &mut Core| {
            let (o, children) = core.listing(c);
            if o == Outcome::SessionExpired {
                return (o, expired());
            }
            let names = children
                .iter()
                .map(|z| view_name(core, c, z.name))
                .collect();
            let session = wire(core.session(c));
            (
                o,
                Ok(Listing {
                    session,
                    children: names,
                }),
            )
        };
        self.request(Request::Read, Call::ListChildren, false, f, Err)
    }

    fn watch_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<SimWatch, CoordError>> + Send + 'a {
        let name = parse_path(path);
        let c = self.c;
        let f = move |core: &mut Core| {
            let o = core.watch(c, name);
            let r = match o {
                Outcome::Ok => Ok(SimWatch {
                    session: core.session(c),
                }),
                Outcome::NoNode => Err(CoordError::NoNode),
                _ => expired(),
            };
            (o, r)
        };
        self.request(Request::Read, Call::Watch { name }, false, f, Err)
    }

    fn wait_watch_event(&self, watch: SimWatch) -> impl Future<Output = WatchOutcome> + Send + '_ {
        let c = self.c;
        struct Parked<'a>(&'a SimZk, usize);
        impl Drop for Parked<'_> {
            fn drop(&mut self) {
                self.0.lock().in_wait[self.1] = false;
            }
        }
        async move {
            // A wait given up (a timeout) is no longer parked.
            let _parked = Parked(&self.sim, usize::from(c));
            let out = poll_fn(|cx| {
                let waker = cx.waker().clone();
                self.sim.step(|w| {
                    let r = w.core.wait(c, watch.session);
                    w.in_wait[usize::from(c)] = r == Wait::Pending;
                    match r {
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
                    }
                })
            })
            .await;
            self.replied(out, false).await
        }
    }

    fn delete_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a {
        let name = parse_path(path);
        let c = self.c;
        let f = move |core: &mut Core| {
            let o = core.delete(c, name);
            let r = match o {
                Outcome::Ok => Ok(()),
                Outcome::NoNode => Err(CoordError::NoNode),
                Outcome::SessionExpired => expired(),
                _ => lost(),
            };
            (o, r)
        };
        let req = Request::Delete { name };
        self.request(req, Call::Delete { name }, false, f, Err)
    }

    /// `sync`: the client's next search reads current data (a lag armed by [`SimZk::arm_lag`]
    /// then does not apply). A recorded step without a model action, and no scheduling point:
    /// the model has no step for it (its `sync_before_search` rule decides whether a search can
    /// lag), and adding one would move every pinned schedule.
    fn sync<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a {
        assert!(
            path == DIR,
            "sync of {path}: the recipe syncs its lock directory"
        );
        let c = self.c;
        match self.gate(Request::Read) {
            None => {
                self.client_step(Call::Sync, |core| (core.sync(c), ()));
                Box::pin(std::future::ready(Ok(()))) as Pending<'a, _>
            }
            Some(held) => Box::pin(async move {
                match self.held(held).await {
                    None => {
                        self.client_step(Call::Sync, |core| (core.sync(c), ()));
                        Ok(())
                    }
                    Some(e) => Err(e),
                }
            }),
        }
    }

    fn check_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Option<NodeStat>, CoordError>> + Send + 'a {
        let name = parse_path(path);
        let c = self.c;
        let f = move |core: &mut Core| {
            let (o, z) = core.check(c, name);
            let r = match o {
                Outcome::SessionExpired => expired(),
                _ => Ok(z.as_ref().map(stat)),
            };
            (o, r)
        };
        self.request(Request::Read, Call::Check { name }, false, f, Err)
    }

    fn guarded_write<'a>(
        &'a self,
        lock_node: Option<&'a str>,
        ops: &'a [GuardedOp],
    ) -> impl Future<Output = Result<Vec<OpResult>, MultiError>> + Send + 'a {
        let check = lock_node.map(parse_path);
        let c = self.c;
        let f = move |core: &mut Core| {
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
        };
        let call = Call::GuardedWrite { check };
        if check.is_none() {
            // Without its check it is the model's write to a resource outside ZooKeeper.
            let out = self.client_step(call, f);
            return Box::pin(self.replied(out, false)) as Pending<'a, _>;
        }
        let cut = |error| Err(MultiError { index: None, error });
        self.request(Request::Read, call, false, f, cut)
    }

    fn session(&self) -> WireSession {
        let (session, shares) = self.look();
        if shares {
            // The other mutex may renew the session between this look and the next request.
            shuttle::thread::yield_now();
        }
        wire(session)
    }

    fn session_event(&self) -> SessionEvent {
        let w = self.sim.lock();
        if w.core.suspended(self.c) && !w.hide_disconnects {
            // Disconnected: live or not at the server, the client cannot tell yet.
            SessionEvent::Suspended
        } else if w.core.live(self.c) {
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
                // Renewed already (in the step that answered `SessionExpired`, or by a mutex
                // sharing the client: then this is how this one is told), or alive. Opening
                // it takes the simulated time of a request (issue #33; zero unless set).
                let latency = self.sim.lock().latency;
                if !latency.is_zero() {
                    self.sim.sleep(None, latency).await;
                }
                return Ok(wire(self.look().0));
            }
            // Opening the next session takes the simulated time of a request.
            let latency = self.sim.lock().latency;
            if !latency.is_zero() {
                self.sim.sleep(None, latency).await;
            }
            self.client_step(Call::SessionEvent, |core| {
                assert!(core.learn(c));
                (Outcome::Ok, ())
            });
            self.replied(Ok(wire(self.session_now())), false).await
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
        self.sim.lock().attempts.next_id(self.c)
    }

    fn now(&self) -> Instant {
        let w = self.sim.lock();
        w.start + w.clock.elapsed
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + '_ {
        // Pending until the simulated clock reaches the deadline (the clock thread moves it).
        self.sim.sleep(Some(usize::from(self.c)), duration)
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let c = usize::from(self.c);
        let client = self.c;
        // Spawned while an acquire runs: a give-up hands its node to a cleanup (`GiveUp`).
        self.sim.step(|w| {
            w.tasks[c] += 1;
            let step = w.acquiring[c].then_some(Step {
                client: Some(client),
                call: Call::GiveUp,
                outcome: Outcome::Ok,
            });
            (step, ())
        });
        let sim = self.sim.clone();
        // Spawning is a scheduling point: the clock may move before this client goes on.
        let before = self.sim.elapsed();
        let _back = HeldBack(&self.sim, c, before);
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
