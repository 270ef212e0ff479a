//! `Releasing`: giving up an attempt (inline, or in the background for a dropped acquire or a
//! lost delete reply), and the release of a granted node.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::attempt::Attempt;
use super::{pick_own, timed, Backoff, Pc, Spec, Stop};
use crate::zk::coord::{CoordError, Coordination, SessionId};
use crate::zk::error::{Cleanup, Holder, ZkLockError};
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
    /// Stops the attempt: deletes its node (inline once; in the background if that fails),
    /// and builds the error.
    pub(super) async fn give_up(&mut self, stop: Stop, start: Instant) -> ZkLockError {
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
