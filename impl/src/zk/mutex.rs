//! [`ZkMutex`] and [`ZkGuard`]: the public face of the recipe (Curator's `InterProcessMutex`):
//! acquire, re-enter, check, write under the lock, release.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::zk::client::ZkClient;
use crate::zk::coord::{
    CoordError, Coordination, GuardedOp, MultiError, OpResult, SessionEvent, SessionId,
};
use crate::zk::error::{LostReason, ZkLockError};
use crate::zk::fencing::{Claimed, FencedResource, FencingToken};
use crate::zk::internals::{self, Granted, Patience, Released, Spec, Variant};
use crate::zk::names::validate_dir;

/// A fair, fenced, re-entrant mutex on a ZooKeeper directory, compatible with Curator's
/// `InterProcessMutex` (and so with every Curator client locking the same directory).
///
/// Each acquire creates an ephemeral-sequential node `<dir>/_c_<uuid>-lock-<seq>`; the lowest
/// node holds the lock, every other waiter watches only the node just ahead of it (one wake-up
/// per release, first come first served). The node goes with the session, so a crashed holder
/// releases when its session expires.
///
/// Several `ZkMutex` values (in this process or others) on one directory exclude each other.
/// One value holds at most once: an acquire through a value whose last grant is still held
/// fails at once with [`ZkLockError::AlreadyHeld`] (it would otherwise wait behind its own
/// node forever). Re-entering is explicit, through the guard: [`ZkGuard::reenter`]; tasks
/// that should queue for the lock each take a clone, a value of its own.
///
/// The mutex is generic over the [`Coordination`] interface; production uses [`ZkClient`].
pub struct ZkMutex<C: Coordination = ZkClient> {
    coord: Arc<C>,
    spec: Arc<Spec>,
    /// The hold of this value's last grant (not shared with clones).
    last: Mutex<Weak<Hold<C>>>,
}

impl<C: Coordination> Clone for ZkMutex<C> {
    /// Another value on the same directory and client, holding nothing yet.
    fn clone(&self) -> Self {
        ZkMutex {
            coord: Arc::clone(&self.coord),
            spec: Arc::clone(&self.spec),
            last: Mutex::new(Weak::new()),
        }
    }
}

impl<C: Coordination> fmt::Debug for ZkMutex<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZkMutex")
            .field("path", &self.spec.dir)
            .finish_non_exhaustive()
    }
}

impl<C: Coordination> ZkMutex<C> {
    /// A mutex on the lock directory `path` (created, as containers, on first use).
    ///
    /// # Errors
    /// [`ZkLockError::BadPath`] if `path` is not a usable absolute ZooKeeper path.
    pub fn new(coord: C, path: &str) -> Result<Self, ZkLockError> {
        Self::with_shared(Arc::new(coord), path)
    }

    /// Like [`ZkMutex::new`], sharing an `Arc` of the coordination (a simulator kept by a test).
    ///
    /// # Errors
    /// [`ZkLockError::BadPath`].
    pub fn with_shared(coord: Arc<C>, path: &str) -> Result<Self, ZkLockError> {
        validate_dir(path)?;
        Ok(ZkMutex {
            coord,
            spec: Arc::new(Spec {
                dir: path.to_string(),
                data: default_node_data(),
                variant: Variant::Curator,
                unfenced_writes: false,
                fence_by_sequence: false,
                unbounded_past_deadline: false,
            }),
            last: Mutex::new(Weak::new()),
        })
    }

    /// The data each lock node carries, shown to whoever finds the lock held (default:
    /// `lockwright <host> pid <pid>`; Curator's default is the client's IP address).
    pub fn with_data(mut self, data: impl Into<Vec<u8>>) -> Self {
        Arc::make_mut(&mut self.spec).data = data.into();
        self
    }

    /// Re-creates a known incident. Test-only; see [`crate::zk::ZkDefect`].
    #[cfg(feature = "test-util")]
    #[doc(hidden)]
    pub fn with_defect(mut self, defect: crate::zk::ZkDefect) -> Self {
        use crate::zk::ZkDefect;
        let spec = Arc::make_mut(&mut self.spec);
        match defect {
            ZkDefect::UnfencedWrites => spec.unfenced_writes = true,
            ZkDefect::FenceBySequence => spec.fence_by_sequence = true,
            ZkDefect::UnboundedPastDeadline => spec.unbounded_past_deadline = true,
            recipe => spec.variant = recipe.variant(),
        }
        self
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.spec.dir
    }

    /// The coordination this mutex runs on.
    pub fn coordination(&self) -> &Arc<C> {
        &self.coord
    }

    /// Whether this value holds the lock now: its last grant has a guard that was not released
    /// (or dropped), has seen no final loss, and its client still runs the session it was
    /// granted in (Curator's `isAcquiredInThisProcess`, per value). No request: for the
    /// server's view, ask the guard ([`ZkGuard::ensure_valid`]).
    pub fn holds(&self) -> bool {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        // The hold may outlive its guards for a moment (a released node's delete runs in a
        // task that keeps it): held means a guard not yet released.
        last.upgrade().is_some_and(|h| {
            h.lost().is_none() && h.replaced().is_none() && h.count.load(Ordering::Acquire) > 0
        })
    }

    /// Renamed [`ZkMutex::holds`]: `is_held` said the opposite of [`ZkLockError::is_held`]
    /// (someone else holds) in the same module.
    #[deprecated(
        since = "0.1.0",
        note = "renamed `holds()`; `ZkLockError::is_held()` means someone else holds"
    )]
    pub fn is_held(&self) -> bool {
        self.holds()
    }

    /// Every participant's lock node, full paths, in queue order: the first holds the lock,
    /// the others wait in turn (Curator's `getParticipantNodes`), as one `getChildren` of the
    /// lock directory shows them. Empty when the directory does not exist.
    ///
    /// # Errors
    /// [`ZkLockError::Zk`] when the listing fails.
    pub async fn participants(&self) -> Result<Vec<String>, ZkLockError> {
        let children = match self.coord.list_children(&self.spec.dir).await {
            Ok(l) => l.children,
            Err(CoordError::NoNode) => Vec::new(),
            Err(e) => {
                return Err(ZkLockError::from_coord(
                    "list the lock directory",
                    &self.spec.dir,
                    e,
                ))
            }
        };
        Ok(crate::zk::names::participants(&children)
            .into_iter()
            .map(|(_, name)| format!("{}/{name}", self.spec.dir))
            .collect())
    }

    /// Waits for the lock for as long as it takes. A session that expires while waiting is
    /// replaced and the wait starts over (with a new node at the back of the queue).
    ///
    /// # Errors
    /// [`ZkLockError::Unreachable`] when no session can be (re)opened;
    /// [`ZkLockError::Zk`] for a request the server refuses for good (ACLs, ...). Nothing is
    /// left behind: the node of a failed acquire is deleted.
    pub async fn acquire(&self) -> Result<ZkGuard<C>, ZkLockError> {
        self.run(Patience::Forever).await
    }

    /// Takes the lock only if nobody is ahead: creates a node, lists, and deletes the node
    /// again if another one is lower (Curator's `acquire(0, ms)`).
    ///
    /// # Errors
    /// [`ZkLockError::Held`] naming the holder's node and data, and saying that our node was
    /// deleted; otherwise as [`ZkMutex::acquire`].
    pub async fn try_acquire(&self) -> Result<ZkGuard<C>, ZkLockError> {
        self.run(Patience::Try).await
    }

    /// Waits for the lock at most `timeout`. The timeout bounds the wait for a holder (and
    /// retry pauses); a request to a connected server is answered even past it, so
    /// `acquire_timeout(Duration::ZERO)` takes a free lock. Once the connection is down, a
    /// request still in flight at the deadline is abandoned (and its node cleaned up).
    ///
    /// # Errors
    /// [`ZkLockError::TimedOut`] naming the holder's node and data, and what became of our node
    /// (deleted, or handed to a background delete); otherwise as [`ZkMutex::acquire`].
    pub async fn acquire_timeout(&self, timeout: Duration) -> Result<ZkGuard<C>, ZkLockError> {
        let deadline = self
            .coord
            .now()
            .checked_add(timeout)
            .map_or(Patience::Forever, Patience::Until);
        self.run(deadline).await
    }

    async fn run(&self, patience: Patience) -> Result<ZkGuard<C>, ZkLockError> {
        if let Some(h) = self.held() {
            return Err(ZkLockError::AlreadyHeld {
                path: self.spec.dir.clone(),
                node: h.node.clone(),
            });
        }
        let g = internals::acquire(&self.coord, &self.spec, patience).await?;
        let guard = ZkGuard::new(Arc::clone(&self.coord), Arc::clone(&self.spec), g);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Arc::downgrade(&guard.hold);
        Ok(guard)
    }

    /// This value's last grant, while a guard of it lives and it is not known lost. A hold
    /// whose client runs another session now is lost (`SessionReplaced`): its delete starts
    /// here, and the next acquire goes ahead instead of failing with `AlreadyHeld`.
    fn held(&self) -> Option<Arc<Hold<C>>> {
        let h = self
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .upgrade()?;
        if h.count.load(Ordering::Acquire) == 0 || h.lost().is_some() {
            return None;
        }
        if let Some(now) = h.replaced() {
            let _ = h.mark_lost(LostReason::SessionReplaced { now });
            return None;
        }
        Some(h)
    }
}

/// What a guard knows without asking the server ([`ZkGuard::state`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldState {
    /// Held, as far as the client can tell.
    Held,
    /// Lost, or not trustworthy now ([`LostReason::Suspended`] may clear).
    Lost(LostReason),
}

struct Hold<C: Coordination> {
    coord: Arc<C>,
    spec: Arc<Spec>,
    node: String,
    czxid: i64,
    seq: i64,
    /// The session the node belongs to.
    owner: SessionId,
    /// The session the client ran when granted: once it runs another one (a restarted handle,
    /// a shared client renewed by another mutex) the hold is lost, as the model's session
    /// change says for a holder.
    granted_in: SessionId,
    /// Guards alive (the re-entrancy count).
    count: AtomicUsize,
    /// A final loss, once seen (the node's delete was started then).
    lost: Mutex<Option<LostReason>>,
}

impl<C: Coordination> Hold<C> {
    fn lost(&self) -> Option<LostReason> {
        *self.lost.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The client's current session, if it is no longer the one the lock was granted in.
    fn replaced(&self) -> Option<SessionId> {
        let now = self.coord.session();
        (now != self.granted_in).then_some(now)
    }

    /// Records a loss. A final one ends the hold as the model's "lock lost" does: the client
    /// stops believing it holds, and its next step is the node's delete (`Releasing`), started
    /// here in the background — unless the node is gone or not ours (`Idle`: nothing to
    /// delete); the guards' release then has nothing left to delete.
    fn mark_lost(self: &Arc<Self>, reason: LostReason) -> ZkLockError {
        if reason.is_final() {
            let first = {
                let mut l = self.lost.lock().unwrap_or_else(|p| p.into_inner());
                let first = l.is_none();
                l.get_or_insert(reason);
                first
            };
            if first {
                let hold = Arc::clone(self);
                self.coord.spawn(async move {
                    let h = &*hold;
                    internals::delete_after_loss(&*h.coord, &h.spec, &h.node, h.czxid, reason)
                        .await;
                });
            }
        }
        self.lost_error(reason)
    }

    fn lost_error(&self, reason: LostReason) -> ZkLockError {
        ZkLockError::LockLost {
            path: self.spec.dir.clone(),
            node: self.node.clone(),
            reason,
        }
    }

    /// The loss an `AuthFailed` or `ClientClosed` answer means: the session the lock was
    /// granted in can no longer be reached, and no new one is opened.
    fn ended(&self, e: &CoordError) -> LostReason {
        match e {
            CoordError::ClientClosed => LostReason::ClientClosed {
                session: self.owner,
            },
            _ => LostReason::AuthFailed {
                session: self.owner,
            },
        }
    }

    /// A `SessionExpired` answer or event about session `expired`: learn (a new session), and
    /// the lock is lost.
    async fn learn_lost(self: &Arc<Self>, expired: SessionId) -> ZkLockError {
        let _ = self.coord.new_session(expired).await;
        self.mark_lost(LostReason::SessionExpired { session: expired })
    }
}

/// How many refused checks in a row end [`ZkGuard::lost`] with the error (a throttled server
/// answers again after a pause; a check refused for good is refused every time).
pub const REFUSED_CHECKS: u32 = 5;

/// A held ZooKeeper lock. Dropping the last guard of a hold releases it (in the background;
/// call [`ZkGuard::release`] to wait for the delete and see its errors).
///
/// Re-entrancy is by guard: [`ZkGuard::reenter`] returns another guard of the same hold, and
/// only the last one released deletes the node (Curator's per-thread count, without the
/// thread: async tasks move between threads and share them, so a thread is no holder identity;
/// the guard is the proof of holding, as with `std::sync::MutexGuard`).
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct ZkGuard<C: Coordination = ZkClient> {
    hold: Arc<Hold<C>>,
    released: bool,
}

impl<C: Coordination> fmt::Debug for ZkGuard<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZkGuard")
            .field("node", &self.hold.node)
            .field("token", &self.token())
            .field("session", &self.hold.owner)
            .finish_non_exhaustive()
    }
}

impl<C: Coordination> ZkGuard<C> {
    fn new(coord: Arc<C>, spec: Arc<Spec>, g: Granted) -> Self {
        ZkGuard {
            hold: Arc::new(Hold {
                coord,
                spec,
                node: g.node,
                czxid: g.czxid,
                seq: g.seq,
                owner: g.owner,
                granted_in: g.session,
                count: AtomicUsize::new(1),
                lost: Mutex::new(None),
            }),
            released: false,
        }
    }

    /// The lock node, full path (`/locks/x/_c_<uuid>-lock-0000000007`).
    pub fn node(&self) -> &str {
        &self.hold.node
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.hold.spec.dir
    }

    /// The fencing token: the lock node's `czxid`. Every later grant of this lock has a larger
    /// one; pass it to the protected resource with each write (see [`crate::zk::fencing`]).
    pub fn token(&self) -> FencingToken {
        if self.hold.spec.fence_by_sequence {
            // Defect `fenced-by-sequence`: the suffix restarts with a re-created parent.
            return FencingToken::new(self.hold.seq);
        }
        FencingToken::new(self.hold.czxid)
    }

    /// Claims `resource` for this hold (claim at acquire, [`crate::zk::fencing`]): writes the
    /// [`ZkGuard::token`] to it before anything is read, so from now on it refuses every
    /// holder granted before this one — also one whose write would otherwise land between
    /// this hold's read and its write (a lost update; the model's "no lost update"). Call it
    /// once per grant, right after acquiring; reads and writes then go through the returned
    /// [`Claimed`], which carries the token to every write. A hold the guard already knows is
    /// lost (a final loss seen, or its client runs another session) claims nothing.
    ///
    /// What `resource` must do with tokens: keep the highest one claimed or written, refuse
    /// lower ones in the same step as the write they guard, and never forget the mark (see
    /// [`FencedResource`]). A resource kept in ZooKeeper can use [`ZkGuard::guarded_write`]
    /// instead, which needs no token.
    ///
    /// # Errors
    /// [`ZkLockError::LockLost`]: the guard knows the lock is lost; the resource was not
    /// touched. [`ZkLockError::Superseded`]: a holder granted after this one has claimed or
    /// written; this hold has lost the lock (release the guard; do not touch the resource).
    pub fn claim<'a, R: FencedResource + ?Sized>(
        &'a self,
        resource: &'a R,
    ) -> Result<Claimed<'a, R>, ZkLockError> {
        let h = &self.hold;
        if let Some(r) = h.lost() {
            return Err(h.lost_error(r));
        }
        if let Some(now) = h.replaced() {
            return Err(h.mark_lost(LostReason::SessionReplaced { now }));
        }
        let token = self.token();
        resource
            .claim(token)
            .map_err(|source| ZkLockError::Superseded {
                path: h.spec.dir.clone(),
                node: h.node.clone(),
                source,
            })?;
        Ok(Claimed::new(resource, token))
    }

    /// The sequence suffix of the lock node (NOT a fencing token).
    pub fn sequence(&self) -> i64 {
        self.hold.seq
    }

    /// The session the lock node belongs to.
    pub fn session(&self) -> SessionId {
        self.hold.owner
    }

    /// How many guards share this hold (1 unless re-entered).
    pub fn hold_count(&self) -> usize {
        self.hold.count.load(Ordering::Acquire)
    }

    /// Re-enters the lock (the model's `Reenter`; no request): another guard of the same hold.
    /// The node is deleted when the last guard is released.
    pub fn reenter(&self) -> ZkGuard<C> {
        self.hold.count.fetch_add(1, Ordering::AcqRel);
        ZkGuard {
            hold: Arc::clone(&self.hold),
            released: false,
        }
    }

    /// What the client knows now, without a request: a final loss seen before, an expired or
    /// suspended session. [`ZkGuard::ensure_valid`] asks the server.
    pub fn state(&self) -> HoldState {
        if let Some(r) = self.hold.lost() {
            return HoldState::Lost(r);
        }
        if let Some(now) = self.hold.replaced() {
            return HoldState::Lost(LostReason::SessionReplaced { now });
        }
        match self.hold.coord.session_event() {
            SessionEvent::Connected => HoldState::Held,
            SessionEvent::Suspended => HoldState::Lost(LostReason::Suspended),
            SessionEvent::Expired => HoldState::Lost(LostReason::SessionExpired {
                session: self.hold.owner,
            }),
            SessionEvent::AuthFailed => HoldState::Lost(LostReason::AuthFailed {
                session: self.hold.owner,
            }),
            SessionEvent::Closed => HoldState::Lost(LostReason::ClientClosed {
                session: self.hold.owner,
            }),
        }
    }

    /// Checks, with one request, that the lock is still held: the session has not expired, the
    /// connection is up, and the lock node still exists, owned by our session, with our czxid
    /// (the model's `CheckLockNode`). A point-in-time check: for writes that must never land
    /// after a loss use [`ZkGuard::guarded_write`] or the [`ZkGuard::token`].
    ///
    /// # Errors
    /// [`ZkLockError::LockLost`] with the [`LostReason`]. Every reason but
    /// [`LostReason::Suspended`] is final: the guard reports it from then on, and deletes its
    /// node (if it still exists) in the background at once.
    pub async fn ensure_valid(&self) -> Result<(), ZkLockError> {
        let h = &self.hold;
        if let Some(r) = h.lost() {
            return Err(h.lost_error(r));
        }
        if let Some(now) = h.replaced() {
            return Err(h.mark_lost(LostReason::SessionReplaced { now }));
        }
        match h.coord.session_event() {
            SessionEvent::Connected => {}
            SessionEvent::Suspended => return Err(h.lost_error(LostReason::Suspended)),
            // `ReceiveSessionEvent`.
            SessionEvent::Expired => return Err(h.learn_lost(h.coord.session()).await),
            SessionEvent::AuthFailed => {
                return Err(h.mark_lost(LostReason::AuthFailed { session: h.owner }))
            }
            SessionEvent::Closed => {
                return Err(h.mark_lost(LostReason::ClientClosed { session: h.owner }))
            }
        }
        let session = h.coord.session();
        // Current data first: a follower that has not applied the delete of our node (an
        // operator's, or our session's expiry) would still show it.
        match h.coord.sync(&h.spec.dir).await {
            Ok(()) => {}
            Err(CoordError::SessionExpired) => return Err(h.learn_lost(session).await),
            Err(e @ (CoordError::AuthFailed { .. } | CoordError::ClientClosed)) => {
                return Err(h.mark_lost(h.ended(&e)))
            }
            Err(e) if e.outcome_unknown() => return Err(h.lost_error(LostReason::Suspended)),
            Err(e) => {
                return Err(ZkLockError::from_coord(
                    "sync the lock directory",
                    &h.spec.dir,
                    e,
                ))
            }
        }
        let answer = h.coord.check_node(&h.node).await;
        // Judged by the session the client runs after the answer, not the one read before the
        // `sync`: a shared client renewed or restarted in between has lost the hold
        // (`SessionReplaced`, whose delete removes the node of the abandoned session), and the
        // node, still ours, must not read as another's (`NodeReplaced` deletes nothing).
        if let Some(now) = h.replaced() {
            return Err(h.mark_lost(LostReason::SessionReplaced { now }));
        }
        match answer {
            // Owned by the session the client runs now (the one granted in: not replaced).
            Ok(Some(stat)) if stat.ephemeral_owner == h.granted_in && stat.czxid == h.czxid => {
                Ok(())
            }
            Ok(Some(stat)) => Err(h.mark_lost(LostReason::NodeReplaced {
                owner: stat.ephemeral_owner,
                czxid: stat.czxid,
            })),
            Ok(None) => Err(h.mark_lost(LostReason::NodeDeleted)),
            Err(CoordError::SessionExpired) => Err(h.learn_lost(session).await),
            Err(e @ (CoordError::AuthFailed { .. } | CoordError::ClientClosed)) => {
                Err(h.mark_lost(h.ended(&e)))
            }
            Err(e) if e.outcome_unknown() => Err(h.lost_error(LostReason::Suspended)),
            Err(e) => Err(ZkLockError::from_coord("check the lock node", &h.node, e)),
        }
    }

    /// Completes when the lock is lost, with the reason: a loss notification to wait on
    /// (Curator users watch the connection state for this). It checks with
    /// [`ZkGuard::ensure_valid`], then sets a watch on the lock node and waits for it to fire
    /// (the node deleted or changed) or for the session to expire, and checks again; while
    /// the connection is down (`Suspended`, not final) it checks again every 100 ms. Never
    /// completes with a reason while the lock is held. Race it against your work (`select!`),
    /// or drop it: a dropped wait leaves nothing behind but an unfired watch.
    ///
    /// # Errors
    /// The check or the watch refused by the server [`REFUSED_CHECKS`] times in a row (an
    /// error that is neither a loss nor a lost connection — no auth, throttled, an unknown
    /// code — with a growing pause between tries): whether the lock is still held is then
    /// unknown. The guard does not mark itself lost on this (its `state()` stays as it was):
    /// treat it as a loss — stop writing under the lock — and release.
    pub async fn lost(&self) -> Result<LostReason, ZkLockError> {
        let h = &self.hold;
        let mut refused = 0u32;
        let mut pause = Duration::from_millis(100);
        loop {
            let error = match self.ensure_valid().await {
                Ok(()) => match h.coord.watch_node(&h.node).await {
                    // Fired (deleted, changed) or the session expired: check again.
                    Ok(w) => {
                        let _ = h.coord.wait_watch_event(w).await;
                        refused = 0;
                        continue;
                    }
                    // Gone already, or no answer: the next check says which.
                    Err(e) if e.outcome_unknown() || e == CoordError::NoNode => {
                        h.coord.sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                    Err(e) => ZkLockError::from_coord("watch the lock node", &h.node, e),
                },
                Err(e) => match e.lost_reason() {
                    Some(LostReason::Suspended) => {
                        h.coord.sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                    Some(reason) => return Ok(reason),
                    None => e,
                },
            };
            refused += 1;
            if refused >= REFUSED_CHECKS {
                return Err(error);
            }
            h.coord.sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Writes to ZooKeeper under the lock: one `multi` that first checks that the lock node
    /// still exists, then applies `ops`; all or nothing (the model's `GuardedWrite`). The server
    /// refuses the whole write if the lock was lost, however long this client paused.
    /// Returns the results of `ops`.
    ///
    /// # Errors
    /// [`ZkLockError::LockLost`] (nothing was written); [`ZkLockError::WriteFailed`] when one
    /// of `ops` failed (nothing was written); [`ZkLockError::Zk`] with
    /// [`CoordError::ConnectionLoss`] when the reply was lost (the write may or may not have
    /// been applied).
    pub async fn guarded_write(&self, ops: &[GuardedOp]) -> Result<Vec<OpResult>, ZkLockError> {
        let h = &self.hold;
        if let Some(r) = h.lost() {
            return Err(h.lost_error(r));
        }
        if let Some(now) = h.replaced() {
            return Err(h.mark_lost(LostReason::SessionReplaced { now }));
        }
        let check = (!h.spec.unfenced_writes).then_some(h.node.as_str());
        let offset = usize::from(check.is_some());
        let session = h.coord.session();
        match h.coord.guarded_write(check, ops).await {
            Ok(mut results) => {
                results.drain(..offset.min(results.len()));
                Ok(results)
            }
            Err(MultiError {
                index: Some(0),
                error,
            }) if offset == 1 => match error {
                CoordError::NoNode => Err(h.mark_lost(LostReason::NodeDeleted)),
                CoordError::BadVersion => Err(h.mark_lost(LostReason::NodeChanged)),
                e => Err(ZkLockError::from_coord(
                    "guarded write (lock check)",
                    &h.node,
                    e,
                )),
            },
            Err(MultiError {
                index: Some(i),
                error,
            }) => {
                let index = i - offset;
                Err(ZkLockError::WriteFailed {
                    index,
                    path: ops
                        .get(index)
                        .map_or_else(String::new, |o| o.path().to_string()),
                    source: error,
                })
            }
            Err(MultiError {
                index: None,
                error: CoordError::SessionExpired,
            }) => Err(h.learn_lost(session).await),
            Err(MultiError {
                index: None,
                error: e @ (CoordError::AuthFailed { .. } | CoordError::ClientClosed),
            }) => Err(h.mark_lost(h.ended(&e))),
            Err(MultiError { index: None, error }) => Err(ZkLockError::from_coord(
                "guarded write (outcome unknown if the connection was lost)",
                &h.node,
                error,
            )),
        }
    }

    /// Releases this guard: the last guard of a hold deletes the lock node (the model's
    /// `DeleteLockNode`, retried after a lost reply and in a new session after an expiry);
    /// an inner one only counts down (`ReleaseInner`).
    ///
    /// Safe to cancel: the delete runs in a task of its own, started before this future first
    /// waits, and this future only waits for its answer. A caller that drops it (a timeout
    /// around `release()`) stops waiting; the delete goes on, retried after lost replies for
    /// at most [`crate::zk::CLEANUP_LIMIT`] while the session lives.
    ///
    /// # Errors
    /// [`ZkLockError::Zk`] if the server refuses the delete for good, or its replies were lost
    /// for longer than [`crate::zk::CLEANUP_LIMIT`]. A lock that was lost releases without
    /// error.
    pub async fn release(mut self) -> Result<(), ZkLockError> {
        self.released = true;
        if self.hold.count.fetch_sub(1, Ordering::AcqRel) > 1 || self.hold.lost().is_some() {
            return Ok(());
        }
        if !self.hold.spec.rules().cancel_safe_release {
            // `release-cancel-unsafe` (test-only): the delete awaited here, the hold already
            // marked released, so a caller that drops this future leaves the node.
            let h = &*self.hold;
            let r = internals::release_node(&*h.coord, &h.spec, &h.node, h.coord.session()).await;
            return r.map(|_| ());
        }
        let (tx, rx) = futures::channel::oneshot::channel();
        let hold = Arc::clone(&self.hold);
        self.hold.coord.spawn(async move {
            let h = &*hold;
            let r = internals::release_node(&*h.coord, &h.spec, &h.node, h.coord.session()).await;
            let _ = tx.send(r);
        });
        let retry = self.hold.spec.rules().retry_lost_delete;
        match rx.await {
            Ok(r) => r.map(|r| debug_assert!(r != Released::Forgotten || !retry)),
            // The executor dropped the task (it is shutting down): nobody can delete now; the
            // node goes with its session.
            Err(_) => Ok(()),
        }
    }
}

impl<C: Coordination> Drop for ZkGuard<C> {
    fn drop(&mut self) {
        if self.released
            || self.hold.count.fetch_sub(1, Ordering::AcqRel) > 1
            || self.hold.lost().is_some()
        {
            return;
        }
        let hold = Arc::clone(&self.hold);
        self.hold.coord.spawn(async move {
            let h = &*hold;
            let _ = internals::release_node(&*h.coord, &h.spec, &h.node, h.coord.session()).await;
        });
    }
}

/// `lockwright <host> pid <pid>`: what a contender that finds us holding sees.
fn default_node_data() -> Vec<u8> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // fails (the last byte is kept 0 so a truncated name still ends).
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    let host = match (ok, std::str::from_utf8(&buf[..end])) {
        (true, Ok(h)) if !h.is_empty() => h.to_string(),
        _ => "unknown-host".to_string(),
    };
    format!("lockwright {host} pid {}", std::process::id()).into_bytes()
}
