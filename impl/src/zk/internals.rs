//! The recipe's internals (Curator's `LockInternals`): the acquire loop, the release, the
//! background cleanup — the model's step table, written once over [`Coordination`].
//!
//! Every `coord.<step>()` call below is one model action (see [`crate::zk::coord`]); the
//! program counter [`Pc`] has the model's names (`model/src/zk/state.rs`), and what differs
//! between the variants is data ([`Rules`], the same table as the model's `Variant::rules`).
//!
//! | pc | step | outcome → next |
//! |---|---|---|
//! | `Idle` | `create_lock_node` | ok → `Created`; lost reply → `CreateLost` (**no-protection**: `Idle`); `SessionExpired` → learn; `NoNode` → make the directory (not a step), `Idle` |
//! | `CreateLost` | `find_own_node` | ours → `Created`; none → `Idle`. Ours = our protection id AND owned by the session the search ran in (**adopt-old-session**: any session; **plain names**: any child of our session) |
//! | `Created` | `list_children` | own node missing → `Idle`; lowest → granted (`Holding`); else → `MustWatch(predecessor)` (a try gives up) |
//! | `MustWatch` | `watch_node(predecessor)` | ok → `Waiting`; `NoNode` → `Created` |
//! | `Waiting` | `wait_watch_event` | fired → `Created`; session expired → learn |
//! | `Holding` | (the guard: `check_node`, `guarded_write`, re-enter, release) | — |
//! | `Releasing` | `delete_node` | ok / `NoNode` → done; lost reply → `Releasing` (**release-forgets**: done, node left); `SessionExpired` → learn, `Releasing` |
//!
//! **Learn** (a `SessionExpired` answer, or the session event): [`Coordination::new_session`],
//! then the session-change rules: `Created`/`MustWatch`/`Waiting` → `Idle` (the node belonged
//! to the old session), `CreateLost` → `Idle` (**adopt-old-session**: stays), `Releasing` stays
//! (the delete is retried in the new session; `NoNode` there is fine), a holder's guard reports
//! the lock lost. The same rules apply when the recipe finds, before a step, that the client
//! runs another session than the one it knew (a shared client renewed it).
//!
//! **Giving up** (a try that is not first, a timeout, a fatal error, a dropped acquire future)
//! is not a model step: the attempt goes to `Releasing` with its node and deletes it — inline
//! for an error, in the background for a dropped future or a lost delete reply. From
//! `CreateLost` the background task first runs the protected search, then deletes what it found.
//! `docs/zookeeper-client.md` lists this as the one addition to the model's table.
//!

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::zk::coord::{CoordError, Coordination, LockNode, SessionEvent, SessionId, WatchOutcome};
use crate::zk::error::{Cleanup, Holder, ZkLockError};
use crate::zk::names::{
    child_name, node_prefix, participants, protected_child_prefix, sequence_of, LOCK_MARKER,
};

/// Where an acquire is, with the model's names (`model/src/zk/state.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pc {
    /// No lock node; next `CreateLockNode`.
    Idle,
    /// The create's reply was lost: the node may exist; next `FindOwnNode`.
    CreateLost,
    /// Own node known; next `ListChildren`.
    Created,
    /// A lower node is ahead; next `WatchPredecessor`.
    MustWatch,
    /// A watch is set on the predecessor; next `ReceiveWatchEvent`.
    Waiting,
}

/// The recipe variants: Curator's (the contract) and the model's broken ones (constructed only
/// with the `defects` feature).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "defects"), allow(dead_code))]
pub(crate) enum Variant {
    Curator,
    NoProtection,
    ReleaseForgets,
    AdoptOldSession,
    DeleteByNameRetry,
}

/// What differs between the variants (the model's `Rules`, field for field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Names carry a protection id (`_c_<uuid>-lock-`), else plain `lock-`.
    pub protected_names: bool,
    /// After a create's lost reply: search for the node (else: create again at once).
    pub search_after_lost_create: bool,
    /// The search accepts a node of any session (CURATOR-498), and a session change does not
    /// end it.
    pub search_any_session: bool,
    /// After a delete's lost reply: delete again (else: forget the node).
    pub retry_lost_delete: bool,
}

impl Variant {
    pub(crate) const fn rules(self) -> Rules {
        const CURATOR: Rules = Rules {
            protected_names: true,
            search_after_lost_create: true,
            search_any_session: false,
            retry_lost_delete: true,
        };
        match self {
            Variant::Curator => CURATOR,
            Variant::NoProtection => Rules {
                protected_names: false,
                search_after_lost_create: false,
                ..CURATOR
            },
            Variant::ReleaseForgets => Rules {
                retry_lost_delete: false,
                ..CURATOR
            },
            Variant::AdoptOldSession => Rules {
                search_any_session: true,
                ..CURATOR
            },
            Variant::DeleteByNameRetry => Rules {
                protected_names: false,
                ..CURATOR
            },
        }
    }
}

/// Everything an acquire needs to know about its mutex.
#[derive(Clone, Debug)]
pub(crate) struct Spec {
    /// The lock directory (validated).
    pub dir: String,
    /// The lock node's data.
    pub data: Vec<u8>,
    pub variant: Variant,
    /// Defect: guarded writes without the lock-node check.
    pub unfenced_writes: bool,
    /// Defect: the token is the sequence suffix.
    pub fence_by_sequence: bool,
}

impl Spec {
    pub(crate) fn rules(&self) -> Rules {
        self.variant.rules()
    }
}

/// How long an acquire may wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Patience {
    /// Give up as soon as another node is ahead (Curator's `acquire(0, ms)`).
    Try,
    /// Give up at this instant.
    Until(Instant),
    /// Wait for as long as it takes.
    Forever,
}

/// A granted lock node.
#[derive(Clone, Debug)]
pub(crate) struct Granted {
    pub node: String,
    pub czxid: i64,
    pub seq: u64,
    /// The session owning the node.
    pub owner: SessionId,
    /// The session the acquire ran in when it was granted (the owner, except for the
    /// `adopt-old-session` defect): a guard whose client runs another session has lost the hold.
    pub session: SessionId,
}

/// The node an attempt knows as its own.
#[derive(Clone, Debug)]
struct Own {
    path: String,
    czxid: i64,
    seq: u64,
    owner: SessionId,
}

impl Own {
    fn from_created(node: LockNode) -> Own {
        let seq = sequence_of(child_name(&node.path)).unwrap_or(0);
        Own {
            czxid: node.stat.czxid,
            owner: node.stat.ephemeral_owner,
            seq,
            path: node.path,
        }
    }

    fn name(&self) -> &str {
        child_name(&self.path)
    }
}

/// Why an attempt stops without the lock.
enum Stop {
    /// A try found a node ahead.
    Held,
    /// The deadline passed.
    TimedOut,
    /// An error the recipe cannot go on from.
    Failed(ZkLockError),
}

/// What a background cleanup still has to do.
enum Leftover {
    /// A create's reply was lost: search for the node (by protection id, or our session's
    /// plain node), then delete it.
    Search { protection: Option<String> },
    /// Delete this node (retried while the session lives).
    Delete { node: String },
}

/// Retry pauses after a lost reply: 10 ms doubling to 1 s (a real client queues requests while
/// disconnected anyway, so these only pace a client that keeps failing at once).
struct Backoff(Duration);

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);

    fn new() -> Backoff {
        Backoff(Backoff::FIRST)
    }

    fn next(&mut self) -> Duration {
        let d = self.0;
        self.0 = (self.0 * 2).min(Backoff::MAX);
        d
    }
}

/// Polls `fut` until it completes or `deadline` passes (`None`), through the coordination's
/// clock. No runtime: a two-way poll.
async fn timed<C: Coordination, F: Future>(
    coord: &C,
    fut: F,
    deadline: Option<Instant>,
) -> Option<F::Output> {
    let Some(deadline) = deadline else {
        return Some(fut.await);
    };
    let mut fut = pin!(fut);
    let mut sleep = pin!(coord.sleep(deadline.saturating_duration_since(coord.now())));
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

/// A request under a deadline: while the session is connected the reply is awaited even past
/// the deadline (a healthy server answers at once, and cutting a request short only turns it
/// into a lost reply to clean up after); once the deadline has passed and the connection is
/// down, the request is abandoned (`None`: its outcome is unknown).
async fn timed_request<C: Coordination, F: Future>(
    coord: &C,
    fut: F,
    deadline: Option<Instant>,
) -> Option<F::Output> {
    /// How often a request running past its deadline looks at the connection again.
    const RECHECK: Duration = Duration::from_millis(50);
    let Some(deadline) = deadline else {
        return Some(fut.await);
    };
    let mut fut = pin!(fut);
    loop {
        let now = coord.now();
        let wait = if now < deadline {
            deadline - now
        } else {
            RECHECK
        };
        if let Some(v) = timed(coord, fut.as_mut(), Some(now + wait)).await {
            return Some(v);
        }
        if coord.now() >= deadline && coord.session_event() != SessionEvent::Connected {
            return None;
        }
    }
}

/// One acquire: the state the model keeps for a client between `Idle` and `Holding`.
/// Dropping it before it settled (the caller dropped the acquire future) hands whatever node it
/// may have to a background cleanup.
struct Attempt<C: Coordination> {
    coord: Arc<C>,
    spec: Arc<Spec>,
    pc: Pc,
    /// The session the attempt believes is current.
    known: SessionId,
    /// The protection id of the current create.
    protection: Option<String>,
    own: Option<Own>,
    pred: Option<String>,
    /// The lowest participant at the last listing (for "held by" errors).
    holder: Option<String>,
    /// A create was issued and no reply has been taken yet.
    create_in_flight: bool,
    /// Granted, or cleaned up: nothing left for `Drop`.
    settled: bool,
}

/// Acquires the lock node (or gives up per `patience`).
pub(crate) async fn acquire<C: Coordination>(
    coord: &Arc<C>,
    spec: &Arc<Spec>,
    patience: Patience,
) -> Result<Granted, ZkLockError> {
    let start = coord.now();
    let mut a = Attempt {
        coord: Arc::clone(coord),
        spec: Arc::clone(spec),
        pc: Pc::Idle,
        known: coord.session(),
        protection: None,
        own: None,
        pred: None,
        holder: None,
        create_in_flight: false,
        settled: false,
    };
    let result = match a.run(patience).await {
        Ok(g) => Ok(g),
        Err(stop) => Err(a.give_up(stop, start).await),
    };
    a.settled = true;
    result
}

impl<C: Coordination> Attempt<C> {
    /// The loop: one model step per iteration.
    async fn run(&mut self, patience: Patience) -> Result<Granted, Stop> {
        let coord = Arc::clone(&self.coord);
        let spec = Arc::clone(&self.spec);
        let coord = &*coord;
        let rules = spec.rules();
        let deadline = match patience {
            Patience::Until(d) => Some(d),
            Patience::Try | Patience::Forever => None,
        };
        let mut backoff = Backoff::new();
        let mut creates = 0u32;
        loop {
            // A session replaced under us (a shared client renewed it): the same rules as
            // learning it ourselves (the model's `RestartClient`, applied before our next step).
            let current = coord.session();
            if current != self.known {
                self.session_changed(current);
            }
            match self.pc {
                Pc::Idle => {
                    if creates > 0 && deadline.is_some_and(|d| coord.now() >= d) {
                        return Err(Stop::TimedOut);
                    }
                    creates += 1;
                    let id = rules.protected_names.then(|| coord.new_protection_id());
                    let prefix = node_prefix(&spec.dir, id.as_deref());
                    self.protection = id;
                    self.create_in_flight = true;
                    let create = coord.create_lock_node(&prefix, &spec.data);
                    let Some(reply) = timed_request(coord, create, deadline).await else {
                        // Outcome unknown, as with a lost reply.
                        self.create_in_flight = false;
                        self.pc = Pc::CreateLost;
                        return Err(Stop::TimedOut);
                    };
                    self.create_in_flight = false;
                    match reply {
                        Ok(node) => {
                            self.own = Some(Own::from_created(node));
                            self.pc = Pc::Created;
                            backoff = Backoff::new();
                        }
                        Err(e) if e.outcome_unknown() => {
                            // `LoseReply` on the create.
                            if rules.search_after_lost_create {
                                self.pc = Pc::CreateLost;
                            }
                            self.pause(&mut backoff, deadline).await;
                        }
                        Err(CoordError::SessionExpired) => self.learn().await?,
                        Err(CoordError::NoNode) => {
                            // The lock directory is missing: make it (containers, as Curator).
                            match timed_request(coord, coord.ensure_dir(&spec.dir), deadline).await
                            {
                                None => return Err(Stop::TimedOut),
                                // A create into a missing directory was no attempt at the lock.
                                Some(Ok(())) => creates -= 1,
                                Some(Err(CoordError::SessionExpired)) => self.learn().await?,
                                Some(Err(e)) if e.outcome_unknown() => {
                                    self.pause(&mut backoff, deadline).await;
                                }
                                Some(Err(e)) => {
                                    return Err(Stop::Failed(ZkLockError::from_coord(
                                        "create the lock directory",
                                        &spec.dir,
                                        e,
                                    )))
                                }
                            }
                        }
                        Err(e) => {
                            return Err(Stop::Failed(ZkLockError::from_coord(
                                "create the lock node",
                                &prefix,
                                e,
                            )))
                        }
                    }
                }
                Pc::CreateLost => {
                    let prefix = self.protection.as_deref().map(protected_child_prefix);
                    let Some(r) = timed_request(
                        coord,
                        coord.find_own_node(&spec.dir, prefix.as_deref()),
                        deadline,
                    )
                    .await
                    else {
                        return Err(Stop::TimedOut);
                    };
                    match r {
                        Ok(search) => {
                            match pick_own(
                                &search.candidates,
                                prefix.as_deref(),
                                search.session,
                                rules.search_any_session,
                            ) {
                                Some((name, stat)) => {
                                    self.own = Some(Own {
                                        path: format!("{}/{name}", spec.dir),
                                        czxid: stat.czxid,
                                        seq: sequence_of(&name).unwrap_or(0),
                                        owner: stat.ephemeral_owner,
                                    });
                                    self.pc = Pc::Created;
                                }
                                None => self.pc = Pc::Idle,
                            }
                        }
                        Err(CoordError::SessionExpired) => self.learn().await?,
                        Err(e) if e.outcome_unknown() => self.pause(&mut backoff, deadline).await,
                        Err(e) => {
                            return Err(Stop::Failed(ZkLockError::from_coord(
                                "search for our lock node",
                                &spec.dir,
                                e,
                            )))
                        }
                    }
                }
                Pc::Created => {
                    let Some(r) =
                        timed_request(coord, coord.list_children(&spec.dir), deadline).await
                    else {
                        return Err(Stop::TimedOut);
                    };
                    if let Some(g) = self.listed(r, patience).await? {
                        return Ok(g);
                    }
                    if self.pc == Pc::Created {
                        self.pause(&mut backoff, deadline).await;
                    }
                }
                Pc::MustWatch => {
                    let pred = self.pred.clone().expect("MustWatch has a predecessor");
                    let pred_path = format!("{}/{pred}", spec.dir);
                    let Some(r) =
                        timed_request(coord, coord.watch_node(&pred_path), deadline).await
                    else {
                        return Err(Stop::TimedOut);
                    };
                    match r {
                        Ok(watch) => {
                            self.pc = Pc::Waiting;
                            let Some(outcome) =
                                timed(coord, coord.wait_watch_event(watch), deadline).await
                            else {
                                return Err(Stop::TimedOut);
                            };
                            match outcome {
                                WatchOutcome::Fired => {
                                    self.pc = Pc::Created;
                                    self.pred = None;
                                }
                                WatchOutcome::SessionExpired => self.learn().await?,
                            }
                        }
                        Err(CoordError::NoNode) => {
                            self.pc = Pc::Created;
                            self.pred = None;
                        }
                        Err(CoordError::SessionExpired) => self.learn().await?,
                        Err(e) if e.outcome_unknown() => self.pause(&mut backoff, deadline).await,
                        Err(e) => {
                            return Err(Stop::Failed(ZkLockError::from_coord(
                                "watch the predecessor",
                                &pred_path,
                                e,
                            )))
                        }
                    }
                }
                Pc::Waiting => unreachable!("Waiting is handled inside MustWatch"),
            }
        }
    }

    /// The outcome of `ListChildren`: `Some` when granted.
    async fn listed(
        &mut self,
        r: Result<Vec<String>, CoordError>,
        patience: Patience,
    ) -> Result<Option<Granted>, Stop> {
        let children = match r {
            Ok(c) => c,
            // The directory vanished: no children, so our node is gone.
            Err(CoordError::NoNode) => Vec::new(),
            Err(CoordError::SessionExpired) => {
                self.learn().await?;
                return Ok(None);
            }
            Err(e) if e.outcome_unknown() => return Ok(None), // stay Created: list again
            Err(e) => {
                return Err(Stop::Failed(ZkLockError::from_coord(
                    "list the lock directory",
                    &self.spec.dir,
                    e,
                )))
            }
        };
        let own = self.own.clone().expect("Created has a node");
        let parts = participants(&children);
        self.holder = parts.first().map(|(_, n)| (*n).to_string());
        match parts.iter().position(|(_, n)| *n == own.name()) {
            None => {
                // Own node missing: it went with an expired session, or someone deleted it.
                self.own = None;
                self.pc = Pc::Idle;
                Ok(None)
            }
            Some(0) => {
                self.settled = true;
                Ok(Some(Granted {
                    node: own.path,
                    czxid: own.czxid,
                    seq: own.seq,
                    owner: own.owner,
                    session: self.known,
                }))
            }
            Some(i) => {
                self.pred = Some(parts[i - 1].1.to_string());
                self.pc = Pc::MustWatch;
                match patience {
                    Patience::Try => Err(Stop::Held),
                    Patience::Until(d) if self.coord.now() >= d => Err(Stop::TimedOut),
                    _ => Ok(None),
                }
            }
        }
    }

    /// Learn that the session is gone: open a new one, then the session-change rules.
    async fn learn(&mut self) -> Result<(), Stop> {
        match self.coord.new_session(self.known).await {
            Ok(new) => {
                self.session_changed(new);
                Ok(())
            }
            Err(e) => {
                // Whatever node we had went with the old session.
                self.own = None;
                self.pc = Pc::Idle;
                self.known = self.coord.session();
                Err(Stop::Failed(ZkLockError::from_coord(
                    "open a new session",
                    &self.spec.dir,
                    e,
                )))
            }
        }
    }

    /// The session-change rules (`docs/zookeeper.md`, "Session change").
    fn session_changed(&mut self, new: SessionId) {
        self.known = new;
        match self.pc {
            Pc::Idle => {}
            Pc::CreateLost if self.spec.rules().search_any_session => {}
            Pc::CreateLost | Pc::Created | Pc::MustWatch | Pc::Waiting => {
                self.own = None;
                self.pred = None;
                self.pc = Pc::Idle;
            }
        }
    }

    async fn pause(&self, backoff: &mut Backoff, deadline: Option<Instant>) {
        let coord = &*self.coord;
        let _ = timed(coord, coord.sleep(backoff.next()), deadline).await;
    }

    /// Stops the attempt: deletes its node (inline once; in the background if that fails),
    /// and builds the error.
    async fn give_up(&mut self, stop: Stop, start: Instant) -> ZkLockError {
        let cleanup = self.clean_up().await;
        let coord = &*self.coord;
        let path = self.spec.dir.clone();
        let holder = match &stop {
            Stop::Held | Stop::TimedOut => match self.holder.take() {
                Some(name) => {
                    let node = format!("{path}/{name}");
                    // Not a step: reads the holder's data for the message only.
                    let data = match timed(
                        coord,
                        coord.read_node(&node),
                        Some(coord.now() + Duration::from_secs(2)),
                    )
                    .await
                    {
                        Some(Ok((data, _))) => Some(data),
                        _ => None,
                    };
                    Some(Holder { node, data })
                }
                None => None,
            },
            Stop::Failed(_) => None,
        };
        match stop {
            Stop::Held => ZkLockError::Held {
                path,
                holder,
                cleanup,
            },
            Stop::TimedOut => ZkLockError::TimedOut {
                path,
                waited: coord.now().saturating_duration_since(start),
                holder,
                cleanup,
            },
            Stop::Failed(e) => e,
        }
    }

    /// Leaves nothing behind (`Releasing` with the attempt's node).
    async fn clean_up(&mut self) -> Cleanup {
        let pc = std::mem::replace(&mut self.pc, Pc::Idle);
        self.pred = None;
        match pc {
            Pc::Idle => Cleanup::NothingCreated,
            Pc::CreateLost => {
                let protection = self.protection.take();
                spawn_cleanup(
                    &self.coord,
                    &self.spec,
                    self.known,
                    Leftover::Search { protection },
                );
                Cleanup::Background { node: None }
            }
            Pc::Created | Pc::MustWatch | Pc::Waiting => {
                let own = self.own.take().expect("a node to delete");
                match self.coord.delete_node(&own.path).await {
                    Ok(()) | Err(CoordError::NoNode) => Cleanup::Deleted { node: own.path },
                    Err(CoordError::SessionExpired) => {
                        // Gone with the session; the retry in the new session (NoNode) runs in
                        // the background, as the model's `Releasing` does.
                        spawn_cleanup(
                            &self.coord,
                            &self.spec,
                            self.known,
                            Leftover::Delete { node: own.path },
                        );
                        Cleanup::SessionGone
                    }
                    Err(e) if e.outcome_unknown() && !self.spec.rules().retry_lost_delete => {
                        Cleanup::Background { node: None }
                    }
                    Err(_) => {
                        spawn_cleanup(
                            &self.coord,
                            &self.spec,
                            self.known,
                            Leftover::Delete {
                                node: own.path.clone(),
                            },
                        );
                        Cleanup::Background {
                            node: Some(own.path),
                        }
                    }
                }
            }
        }
    }
}

impl<C: Coordination> Drop for Attempt<C> {
    /// The acquire future was dropped mid-way: hand the node (or the uncertainty) to a
    /// background cleanup.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let leftover = match self.pc {
            Pc::Idle if self.create_in_flight => Leftover::Search {
                protection: self.protection.take(),
            },
            Pc::Idle => return,
            Pc::CreateLost => Leftover::Search {
                protection: self.protection.take(),
            },
            Pc::Created | Pc::MustWatch | Pc::Waiting => match self.own.take() {
                Some(own) => Leftover::Delete { node: own.path },
                None => return,
            },
        };
        spawn_cleanup(&self.coord, &self.spec, self.known, leftover);
    }
}

/// Which search candidate is our node: the first in suffix order (as the model's search)
/// with our protection id and owned by the session the search ran in (any session for
/// `adopt-old-session`); with plain names, the first `lock-` node of that session.
fn pick_own(
    candidates: &[(String, crate::zk::coord::NodeStat)],
    prefix: Option<&str>,
    session: SessionId,
    any_session: bool,
) -> Option<(String, crate::zk::coord::NodeStat)> {
    let mut mine: Vec<&(String, crate::zk::coord::NodeStat)> = candidates
        .iter()
        .filter(|(n, s)| match prefix {
            Some(p) => n.starts_with(p) && (any_session || s.ephemeral_owner == session),
            None => n.starts_with(LOCK_MARKER) && s.ephemeral_owner == session,
        })
        .collect();
    mine.sort_by_key(|(n, _)| sequence_of(n));
    mine.first().map(|c| (*c).clone())
}

fn spawn_cleanup<C: Coordination>(
    coord: &Arc<C>,
    spec: &Arc<Spec>,
    known: SessionId,
    leftover: Leftover,
) {
    let task_coord = Arc::clone(coord);
    let spec = Arc::clone(spec);
    coord.spawn(async move {
        background_cleanup(&*task_coord, &spec, known, leftover).await;
    });
}

/// The background half of giving up: the same steps, retried while the session lives.
async fn background_cleanup<C: Coordination>(
    coord: &C,
    spec: &Spec,
    mut known: SessionId,
    mut leftover: Leftover,
) {
    let rules = spec.rules();
    let mut backoff = Backoff::new();
    loop {
        match leftover {
            Leftover::Search { ref protection } => {
                let prefix = protection.as_deref().map(protected_child_prefix);
                match coord.find_own_node(&spec.dir, prefix.as_deref()).await {
                    Ok(search) => {
                        match pick_own(
                            &search.candidates,
                            prefix.as_deref(),
                            search.session,
                            rules.search_any_session,
                        ) {
                            Some((name, _)) => {
                                leftover = Leftover::Delete {
                                    node: format!("{}/{name}", spec.dir),
                                };
                                continue;
                            }
                            None => return,
                        }
                    }
                    // A node of the expired session went with it; learn, and stop.
                    Err(CoordError::SessionExpired) => {
                        let _ = coord.new_session(known).await;
                        return;
                    }
                    Err(e) if e.outcome_unknown() => {}
                    Err(_) => return,
                }
            }
            Leftover::Delete { ref node } => match release_node(coord, spec, node, known).await {
                Ok(_) | Err(_) => return,
            },
        }
        coord.sleep(backoff.next()).await;
        known = coord.session();
    }
}

/// What a release did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Released {
    /// Deleted (or found gone).
    Deleted,
    /// A lost delete reply and the `release-forgets` defect: the node may still be there.
    Forgotten,
}

/// `Releasing`: deletes the node, retrying after a lost reply (the model's guaranteed
/// delete) and in the new session after an expiry (`NoNode` there is fine).
///
/// # Errors
/// A refusal the retry cannot fix.
pub(crate) async fn release_node<C: Coordination>(
    coord: &C,
    spec: &Spec,
    node: &str,
    mut known: SessionId,
) -> Result<Released, ZkLockError> {
    let rules = spec.rules();
    let mut backoff = Backoff::new();
    loop {
        match coord.delete_node(node).await {
            Ok(()) | Err(CoordError::NoNode) => return Ok(Released::Deleted),
            Err(CoordError::SessionExpired) => match coord.new_session(known).await {
                Ok(new) => known = new,
                // No new session: the node went with the old one all the same.
                Err(_) => return Ok(Released::Deleted),
            },
            Err(e) if e.outcome_unknown() => {
                if !rules.retry_lost_delete {
                    return Ok(Released::Forgotten);
                }
                coord.sleep(backoff.next()).await;
            }
            Err(e) => return Err(ZkLockError::from_coord("delete the lock node", node, e)),
        }
    }
}
