//! The acquire: [`Attempt`], one model step per iteration of its loop, from `Idle` to
//! granted (or to a [`Stop`]).

use std::sync::Arc;
use std::time::Instant;

use super::{
    pick_own, synced_search, timed, timed_request, Backoff, Granted, Own, Patience, Pc, Spec, Stop,
    DIRECTORY_REMAKE_LIMIT, GIVE_UP_WAIT, SESSION_LIVED, SESSION_REOPEN_LIMIT,
};
use crate::zk::coord::{CoordError, Coordination, SessionId, WatchOutcome};
use crate::zk::error::ZkLockError;
use crate::zk::names::{
    counter_at_top, node_prefix, participants, protected_child_prefix, sequence_of,
};

/// One acquire: the state the model keeps for a client between `Idle` and `Holding`.
/// Dropping it before it settled (the caller dropped the acquire future) hands whatever node it
/// may have to a background cleanup.
pub(super) struct Attempt<C: Coordination> {
    pub(super) coord: Arc<C>,
    pub(super) spec: Arc<Spec>,
    pub(super) pc: Pc,
    /// The give-up instant, if any (`acquire_timeout`).
    pub(super) deadline: Option<Instant>,
    /// New sessions opened in a row without progress in them ([`SESSION_REOPEN_LIMIT`]).
    pub(super) reopens: u32,
    /// The pause before the next re-open after the first.
    pub(super) reopen_pause: Backoff,
    /// When the last new session was opened (`None`: none yet in this acquire).
    pub(super) reopened_at: Option<Instant>,
    /// The session the attempt believes is current.
    pub(super) known: SessionId,
    /// The protection id of the current create.
    pub(super) protection: Option<String>,
    pub(super) own: Option<Own>,
    pub(super) pred: Option<String>,
    /// The lowest participant at the last listing (for "held by" errors).
    pub(super) holder: Option<String>,
    /// A create was issued and no reply has been taken yet.
    pub(super) create_in_flight: bool,
    /// Granted, or cleaned up: nothing left for `Drop`.
    pub(super) settled: bool,
    /// Our node's suffix was the counter's top or negative: after its delete (`Releasing`)
    /// the acquire fails with [`ZkLockError::SequenceExhausted`].
    pub(super) at_top: Option<i64>,
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
        deadline: match patience {
            Patience::Until(d) => Some(d),
            Patience::Try | Patience::Forever => None,
        },
        reopens: 0,
        reopen_pause: Backoff::new(),
        reopened_at: None,
        known: coord.session(),
        protection: None,
        own: None,
        pred: None,
        holder: None,
        create_in_flight: false,
        settled: false,
        at_top: None,
    };
    let result = match a.run(patience).await {
        Ok(g) => Ok(g),
        Err(stop) => {
            let deadline = a.deadline;
            Err(a.give_up(stop, start, deadline).await)
        }
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
        let deadline = self.deadline;
        let mut backoff = Backoff::new();
        let mut creates = 0u32;
        let mut dirs_made = 0u32;
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
                    let Some(reply) = timed_request(coord, &spec, create, deadline).await else {
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
                            // Not yet progress for the re-open bound: a session that ends
                            // after every create would reset it forever. The listing that
                            // puts the node in line is (`listed`).
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
                            // A directory that keeps vanishing (deleted by someone, or an
                            // empty container reaped) ends the attempt: paced, bounded.
                            if dirs_made >= DIRECTORY_REMAKE_LIMIT {
                                return Err(Stop::Failed(ZkLockError::from_coord(
                                    "create the lock node (the lock directory keeps vanishing)",
                                    &spec.dir,
                                    CoordError::NoNode,
                                )));
                            }
                            if dirs_made > 0 {
                                self.pause(&mut backoff, deadline).await;
                            }
                            dirs_made += 1;
                            match timed_request(coord, &spec, coord.ensure_dir(&spec.dir), deadline)
                                .await
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
                        &spec,
                        synced_search(
                            coord,
                            &spec.dir,
                            prefix.as_deref(),
                            rules.sync_before_search,
                        ),
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
                        timed_request(coord, &spec, coord.list_children(&spec.dir), deadline).await
                    else {
                        return Err(Stop::TimedOut);
                    };
                    // A listing that ran in another session than the one we knew (a shared
                    // client renewed between our look and the request) says nothing about a
                    // node of our session: set it aside, and the loop's top applies the
                    // session-change rules (the model's `ListChildren` of a client that has
                    // not noticed the swap). `drop-own-on-session-swap` reads it anyway, and
                    // can be granted on a node of the abandoned session.
                    if matches!(&r, Ok(l) if l.session != self.known)
                        && rules.keep_own_on_session_swap
                    {
                        continue;
                    }
                    if let Some(g) = self.listed(r.map(|l| l.children), patience).await? {
                        return Ok(g);
                    }
                    // Listed again without news, or our node is missing (it starts over):
                    // pause first, so a node that keeps vanishing is no tight loop.
                    if matches!(self.pc, Pc::Created | Pc::Idle) {
                        self.pause(&mut backoff, deadline).await;
                    }
                }
                Pc::MustWatch => {
                    let pred = self.pred.clone().expect("MustWatch has a predecessor");
                    let pred_path = format!("{}/{pred}", spec.dir);
                    let Some(r) =
                        timed_request(coord, &spec, coord.watch_node(&pred_path), deadline).await
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
                                    self.progress();
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
                Pc::Releasing => {
                    let own = self.own.clone().expect("Releasing has a node");
                    let Some(r) =
                        timed_request(coord, &spec, coord.delete_node(&own.path), deadline).await
                    else {
                        return Err(Stop::TimedOut);
                    };
                    match r {
                        Ok(()) | Err(CoordError::NoNode) if self.at_top.is_some() => {
                            self.own = None;
                            self.pc = Pc::Idle;
                            return Err(Stop::Failed(ZkLockError::SequenceExhausted {
                                path: spec.dir.clone(),
                                node: own.name().to_string(),
                                suffix: self.at_top.take().unwrap_or_default(),
                            }));
                        }
                        Ok(()) | Err(CoordError::NoNode) => {
                            self.own = None;
                            self.pc = Pc::Idle;
                            // Pause before starting over: a name that keeps being misread
                            // makes no tight loop of creates.
                            self.pause(&mut backoff, deadline).await;
                        }
                        // Retried in the new session (`NoNode` there: it went with the old).
                        Err(CoordError::SessionExpired) => self.learn().await?,
                        Err(e) if e.outcome_unknown() && rules.retry_lost_delete => {
                            self.pause(&mut backoff, deadline).await;
                        }
                        Err(e) if e.outcome_unknown() => {
                            self.own = None;
                            self.pc = Pc::Idle;
                        }
                        Err(e) => {
                            return Err(Stop::Failed(ZkLockError::from_coord(
                                "delete our lock node (its name was not read as a lock node)",
                                &own.path,
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
            None if self.spec.rules().delete_unrecognized_own
                && children.iter().any(|c| c == own.name()) =>
            {
                // Our node is there, under a name we do not read as a lock node (a suffix our
                // parser rejects): delete it by that name (it carries our protection id, so it
                // is ours) before starting over, or it stays in our session, nobody's.
                self.pc = Pc::Releasing;
                Ok(None)
            }
            None => {
                // Own node missing: it went with an expired session, or someone deleted it
                // (or, `abandon-without-delete`, we did not recognize its name).
                self.own = None;
                self.pc = Pc::Idle;
                Ok(None)
            }
            // Our suffix is the counter's top or below 0 (ZooKeeper 3.8 repeats 2147483647 for
            // creates one at a time and wraps for creates in flight together): suffixes no
            // longer follow creation order, so the queue cannot say who came first. Delete our
            // node (it carries our protection id), then fail: the lock directory must be
            // re-created (docs/incidents.md, "The sequence counter at its top").
            Some(i) if self.spec.rules().refuse_counter_top && counter_at_top(parts[i].0) => {
                self.at_top = Some(parts[i].0);
                self.pc = Pc::Releasing;
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

    /// The attempt moved forward (its predecessor's watch fired, or the session it opened
    /// lived [`SESSION_LIVED`]): re-opens count from zero again. A create or a listing is not
    /// progress: a session that ends after each of them would reset the bound forever.
    fn progress(&mut self) {
        self.reopens = 0;
        self.reopen_pause = Backoff::new();
    }

    /// Learn that the session is gone: open a new one, then the session-change rules. Re-opens
    /// without progress in between are paced and bounded ([`SESSION_REOPEN_LIMIT`]), and the
    /// re-open is under the deadline (at most [`GIVE_UP_WAIT`] past it).
    async fn learn(&mut self) -> Result<(), Stop> {
        let coord = Arc::clone(&self.coord);
        let coord = &*coord;
        let gone = |a: &mut Self| {
            // Whatever node we had went with the old session.
            a.own = None;
            a.pc = Pc::Idle;
            a.known = a.coord.session();
        };
        // A session that lived for a while made progress (a waiter's session may end now and
        // then in a long `acquire()`): only sessions that keep ending soon count.
        if self
            .reopened_at
            .is_some_and(|at| coord.now().saturating_duration_since(at) >= SESSION_LIVED)
        {
            self.progress();
        }
        if self.reopens >= SESSION_REOPEN_LIMIT {
            gone(self);
            return Err(Stop::Failed(ZkLockError::SessionsKeepEnding {
                path: self.spec.dir.clone(),
                reopened: self.reopens,
            }));
        }
        if self.reopens > 0 {
            let pause = self.reopen_pause.next();
            if timed(coord, coord.sleep(pause), self.deadline)
                .await
                .is_none()
            {
                gone(self);
                return Err(Stop::TimedOut);
            }
        }
        self.reopens += 1;
        self.reopened_at = Some(coord.now());
        let bound = self
            .deadline
            .filter(|_| !self.spec.unbounded_past_deadline)
            .map(|d| d + GIVE_UP_WAIT);
        match timed(coord, coord.new_session(self.known), bound).await {
            Some(Ok(new)) => {
                self.session_changed(new);
                Ok(())
            }
            None => {
                gone(self);
                Err(Stop::TimedOut)
            }
            Some(Err(e)) => {
                gone(self);
                Err(Stop::Failed(ZkLockError::from_coord(
                    "open a new session",
                    &self.spec.dir,
                    e,
                )))
            }
        }
    }

    /// The session-change rules (`docs/zookeeper.md`, "Session change"): a node owned by the
    /// session we now run is ours, and kept. A client shared by several mutexes can renew the
    /// session between this attempt's session check and its create, so the create runs in the
    /// new session; dropping that node would leave it ahead of us for as long as the session
    /// lives (the model's `drop-own-on-session-swap`). A search after a lost create goes on
    /// in the new session: it adopts only a node that session owns, so a create that ran in
    /// the old session is not found (we start over), and one that ran in the renewed session
    /// is found and kept (`drop-own-on-session-swap` drops the search, and that node).
    fn session_changed(&mut self, new: SessionId) {
        self.known = new;
        let rules = self.spec.rules();
        let keep = rules.keep_own_on_session_swap;
        match self.pc {
            // The delete goes on in the new session (`NoNode` there is fine).
            Pc::Idle | Pc::Releasing => {}
            Pc::Created | Pc::MustWatch | Pc::Waiting
                if keep && self.own.as_ref().is_some_and(|o| o.owner == new) =>
            {
                // Ours in the live session: list again (a watch set in the old one is gone).
                self.pred = None;
                self.pc = Pc::Created;
            }
            Pc::CreateLost if rules.search_any_session || keep => {}
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
}
