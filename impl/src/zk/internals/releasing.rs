//! `Releasing`: giving up an attempt (inline, or in the background for a dropped acquire or a
//! lost delete reply), and the release of a granted node.

use std::sync::Arc;
use std::time::Instant;

use super::attempt::Attempt;
use futures::channel::oneshot;

use super::{
    pick_own, synced_search, timed, Backoff, Pc, Spec, Stop, CLEANUP_LIMIT, GIVE_UP_WAIT,
    SESSION_REOPEN_LIMIT,
};
use crate::zk::coord::{CoordError, Coordination, GuardedOp, SessionId};
use crate::zk::error::{Cleanup, Holder, LostReason, ZkLockError};
use crate::zk::names::protected_child_prefix;

/// What a background cleanup still has to do.
enum Leftover {
    /// A create's reply was lost: search for the node (by protection id, or our session's
    /// plain node), then delete it.
    Search { protection: Option<String> },
    /// Delete this node (retried while the session lives).
    Delete { node: String },
}

impl<C: Coordination> Attempt<C> {
    /// Stops the attempt: hands its node to a cleanup task (before anything is awaited, so a
    /// caller that drops this future loses nothing), waits for that task at most
    /// [`GIVE_UP_WAIT`] (with a deadline: until the deadline plus [`GIVE_UP_WAIT`], which a
    /// request running past the deadline has already used up in part), and builds the error.
    pub(super) async fn give_up(
        &mut self,
        stop: Stop,
        start: Instant,
        deadline: Option<Instant>,
    ) -> ZkLockError {
        let pending = self.hand_off();
        let coord = &*self.coord;
        // One bounded request: the holder's data and the cleanup's answer share it, and with a
        // deadline so does whatever ran past it.
        let now = coord.now();
        let by = deadline.map_or(now + GIVE_UP_WAIT, |d| (d + GIVE_UP_WAIT).max(now));
        let path = self.spec.dir.clone();
        let holder = match &stop {
            Stop::Held | Stop::TimedOut => match self.holder.take() {
                Some(name) => {
                    let node = format!("{path}/{name}");
                    // Not a step: reads the holder's data for the message only.
                    let data = match timed(coord, coord.read_node(&node), Some(by)).await {
                        Some(Ok((data, _))) => Some(data),
                        _ => None,
                    };
                    Some(Holder { node, data })
                }
                None => None,
            },
            Stop::Failed(_) => None,
        };
        let cleanup = match pending {
            Pending::Done(c) => c,
            Pending::Running { rx, meanwhile } => match timed(coord, rx, Some(by)).await {
                Some(Ok(c)) => c,
                // Still running (or gone with the executor): it goes on in the background.
                Some(Err(_)) | None => meanwhile,
            },
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

    /// Takes the attempt's node (or the uncertainty of a lost create) out of the attempt and
    /// into a cleanup task, without awaiting anything (the model's `Releasing`).
    fn hand_off(&mut self) -> Pending {
        let pc = std::mem::replace(&mut self.pc, Pc::Idle);
        self.pred = None;
        let (leftover, meanwhile) = match pc {
            Pc::Idle => return Pending::Done(Cleanup::NothingCreated),
            Pc::CreateLost => (
                Leftover::Search {
                    protection: self.protection.take(),
                },
                Cleanup::Background { node: None },
            ),
            Pc::Created | Pc::MustWatch | Pc::Waiting | Pc::Releasing => {
                let own = self.own.take().expect("a node to delete");
                (
                    Leftover::Delete {
                        node: own.path.clone(),
                    },
                    Cleanup::Background {
                        node: Some(own.path),
                    },
                )
            }
        };
        let rx = spawn_cleanup(&self.coord, &self.spec, self.known, leftover);
        Pending::Running { rx, meanwhile }
    }
}

/// A cleanup handed to its task.
enum Pending {
    /// Nothing to clean up.
    Done(Cleanup),
    /// The task's answer, and what to report if it does not come in time.
    Running {
        rx: oneshot::Receiver<Cleanup>,
        meanwhile: Cleanup,
    },
}

impl<C: Coordination> Drop for Attempt<C> {
    /// The acquire future was dropped mid-way: hand the node (or the uncertainty) to a
    /// background cleanup.
    fn drop(&mut self) {
        // `give-up-cancel-unsafe` (test-only): nothing handed on, the node is left.
        if self.settled || !self.spec.rules().cancel_safe_give_up {
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
            Pc::Created | Pc::MustWatch | Pc::Waiting | Pc::Releasing => match self.own.take() {
                Some(own) => Leftover::Delete { node: own.path },
                None => return,
            },
        };
        drop(spawn_cleanup(&self.coord, &self.spec, self.known, leftover));
    }
}

/// Starts the cleanup task; its answer comes on the receiver (drop it to detach).
fn spawn_cleanup<C: Coordination>(
    coord: &Arc<C>,
    spec: &Arc<Spec>,
    known: SessionId,
    leftover: Leftover,
) -> oneshot::Receiver<Cleanup> {
    let (tx, rx) = oneshot::channel();
    let task_coord = Arc::clone(coord);
    let spec = Arc::clone(spec);
    coord.spawn(async move {
        let done = background_cleanup(&*task_coord, &spec, known, leftover).await;
        let _ = tx.send(done);
    });
    rx
}

/// The cleanup of giving up: the same steps, retried after lost replies while the session
/// lives, for at most [`CLEANUP_LIMIT`].
async fn background_cleanup<C: Coordination>(
    coord: &C,
    spec: &Spec,
    mut known: SessionId,
    mut leftover: Leftover,
) -> Cleanup {
    let rules = spec.rules();
    let mut backoff = Backoff::new();
    let limit = coord.now() + CLEANUP_LIMIT;
    // The session expired under the search: nothing found after that went with it.
    let mut expired = false;
    let mut reopens = 0u32;
    loop {
        match leftover {
            Leftover::Search { ref protection } => {
                let prefix = protection.as_deref().map(protected_child_prefix);
                match synced_search(
                    coord,
                    &spec.dir,
                    prefix.as_deref(),
                    spec.rules().sync_before_search,
                )
                .await
                {
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
                            None if expired => return Cleanup::SessionGone,
                            None => return Cleanup::NothingCreated,
                        }
                    }
                    // Learn, then search on in the new session, as the attempt does (the
                    // model's session-change rule for a search): it finds only a node that
                    // session owns, so a create of the expired session (gone with it) is not
                    // found, and one a shared client ran after renewing it is.
                    // (**drop-own-on-session-swap**: stop.)
                    // Re-opens are paced and bounded as the attempt's ([`SESSION_REOPEN_LIMIT`]).
                    Err(CoordError::SessionExpired) if reopens < SESSION_REOPEN_LIMIT => {
                        if reopens > 0 {
                            coord.sleep(backoff.next()).await;
                        }
                        reopens += 1;
                        match coord.new_session(known).await {
                            Ok(new)
                                if rules.search_any_session || rules.keep_own_on_session_swap =>
                            {
                                known = new;
                                expired = true;
                                continue;
                            }
                            _ => return Cleanup::SessionGone,
                        }
                    }
                    Err(CoordError::SessionExpired) => return Cleanup::SessionGone,
                    Err(e) if e.outcome_unknown() && coord.now() < limit => {}
                    Err(_) => return Cleanup::Background { node: None },
                }
            }
            Leftover::Delete { ref node } => {
                return match release_node_until(coord, spec, node, known, limit).await {
                    Ok(Released::Deleted) => Cleanup::Deleted { node: node.clone() },
                    Ok(Released::SessionGone) => Cleanup::SessionGone,
                    Ok(Released::Forgotten) | Err(_) => Cleanup::Background { node: None },
                }
            }
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
    /// The session expired on the way; the node went with it (or was found gone in the new
    /// session).
    SessionGone,
    /// A lost delete reply and the `release-forgets` defect: the node may still be there.
    Forgotten,
}

/// `Releasing`: deletes the node, retrying after a lost reply (the model's guaranteed
/// delete) and in the new session after an expiry (`NoNode` there is fine), for at most
/// [`CLEANUP_LIMIT`] of lost replies.
///
/// # Errors
/// A refusal the retry cannot fix; lost replies for longer than [`CLEANUP_LIMIT`].
pub(crate) async fn release_node<C: Coordination>(
    coord: &C,
    spec: &Spec,
    node: &str,
    known: SessionId,
) -> Result<Released, ZkLockError> {
    release_node_until(coord, spec, node, known, coord.now() + CLEANUP_LIMIT).await
}

/// [`release_node`], retrying lost replies only until `limit` (a cleanup's search and its
/// delete share one [`CLEANUP_LIMIT`]).
async fn release_node_until<C: Coordination>(
    coord: &C,
    spec: &Spec,
    node: &str,
    mut known: SessionId,
    limit: Instant,
) -> Result<Released, ZkLockError> {
    let rules = spec.rules();
    let mut backoff = Backoff::new();
    let mut expired = false;
    let mut reopens = 0u32;
    loop {
        match coord.delete_node(node).await {
            Ok(()) | Err(CoordError::NoNode) if expired => return Ok(Released::SessionGone),
            Ok(()) | Err(CoordError::NoNode) => return Ok(Released::Deleted),
            // The node went with the first expired session; the delete in a new one only
            // confirms it, so sessions that keep ending stop the retries
            // ([`SESSION_REOPEN_LIMIT`], paced as the attempt's re-opens).
            Err(CoordError::SessionExpired) if reopens >= SESSION_REOPEN_LIMIT => {
                return Ok(Released::SessionGone)
            }
            Err(CoordError::SessionExpired) => {
                if reopens > 0 {
                    coord.sleep(backoff.next()).await;
                }
                reopens += 1;
                match coord.new_session(known).await {
                    Ok(new) => {
                        known = new;
                        expired = true;
                    }
                    // No new session: the node went with the old one all the same.
                    Err(_) => return Ok(Released::SessionGone),
                }
            }
            Err(e) if e.outcome_unknown() => {
                if !rules.retry_lost_delete {
                    return Ok(Released::Forgotten);
                }
                if coord.now() >= limit {
                    return Err(ZkLockError::from_coord(
                        "delete the lock node (lost replies past the cleanup limit; the node \
                         goes when its session ends)",
                        node,
                        e,
                    ));
                }
                coord.sleep(backoff.next()).await;
            }
            Err(e) => return Err(ZkLockError::from_coord("delete the lock node", node, e)),
        }
    }
}

/// The delete after a final loss (the model's `lock lost → Releasing`), except where the node
/// at our path is gone or not ours (`NodeDeleted`, `NodeReplaced`: the model's `Idle`): a
/// delete by name would remove whoever holds that name now. A node someone wrote to
/// (`NodeChanged`, a revoker's `__REVOKE__`) is deleted only while its Stat shows our `czxid`,
/// conditioned on the version that Stat showed, so a node made again at the path in between is
/// not touched (no model step: the model has no writes into lock nodes). Errors are left to
/// the node's session: it goes when the session ends.
pub(crate) async fn delete_after_loss<C: Coordination>(
    coord: &C,
    spec: &Spec,
    node: &str,
    czxid: i64,
    reason: LostReason,
) {
    match reason {
        LostReason::NodeDeleted | LostReason::NodeReplaced { .. } => {}
        // No session can send the delete: the node goes with its session at the server.
        LostReason::AuthFailed { .. } | LostReason::ClientClosed { .. } => {}
        LostReason::NodeChanged => {
            if let Ok(Some(stat)) = coord.check_node(node).await {
                if stat.czxid == czxid {
                    let delete = [GuardedOp::Delete {
                        path: node.to_string(),
                        version: Some(stat.version),
                    }];
                    let _ = coord.guarded_write(None, &delete).await;
                }
            }
        }
        _ => {
            let _ = release_node(coord, spec, node, coord.session()).await;
        }
    }
}
