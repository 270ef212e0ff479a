//! `impl Coordination for ZkClient`: each recipe step as one zookeeper-client request, and
//! zookeeper-client's errors as the recipe sees them.

use std::future::Future;
use std::time::{Duration, Instant};

use zookeeper_client::{
    Client, CreateMode, EventType, MultiWriteError, MultiWriteResult, OneshotWatcher, SessionState,
    Stat,
};

use super::executor::spawn_task;
use super::{bump, open, ZkClient};
use crate::zk::coord::{
    CoordError, Coordination, GuardedOp, Listing, LockNode, MultiError, NodeKind, NodeStat,
    OpResult, Search, SessionEvent, SessionId, WatchOutcome,
};
use crate::zk::names::{sequence_of, LOCK_MARKER};

fn node_stat(s: &Stat) -> NodeStat {
    NodeStat {
        czxid: s.czxid,
        mzxid: s.mzxid,
        version: s.version,
        ephemeral_owner: SessionId(s.ephemeral_owner),
    }
}

fn sid(c: &Client) -> SessionId {
    SessionId(c.session_id().0)
}

/// zookeeper-client's errors as the recipe sees them. Every variant's row is in
/// `error_table.rs` (and `docs/zookeeper-client.md`, "Every client error, classified").
pub(super) fn map_err(e: zookeeper_client::Error) -> CoordError {
    use zookeeper_client::Error as E;
    match e {
        E::NoNode => CoordError::NoNode,
        E::NodeExists => CoordError::NodeExists,
        E::BadVersion => CoordError::BadVersion,
        E::NotEmpty => CoordError::NotEmpty,
        E::SessionExpired => CoordError::SessionExpired,
        // Terminal too, but no new session cures them: their own errors, so that the recipe
        // stops instead of opening sessions in a loop (issue #33).
        E::AuthFailed => CoordError::AuthFailed {
            detail: e.to_string(),
        },
        E::ClientClosed => CoordError::ClientClosed,
        E::NoHosts => CoordError::Unreachable {
            connect: String::new(),
            detail: "no available hosts".to_string(),
        },
        // The request may or may not have been applied. `UnmarshalError`/`UnexpectedError`
        // are replies the client could not decode (a create's reply included): the server may
        // have applied the request, and zookeeper-client's `has_no_data_change` does not list
        // them. Reading them as refused left an orphan lock node (found by the error table).
        E::ConnectionLoss
        | E::Timeout
        | E::Custom(_)
        | E::SessionMoved
        | E::UnmarshalError { .. }
        | E::UnexpectedError(_) => CoordError::ConnectionLoss {
            detail: e.to_string(),
        },
        e => CoordError::Rejected {
            detail: e.to_string(),
        },
    }
}

impl Coordination for ZkClient {
    type Watch = OneshotWatcher;

    async fn create_lock_node(&self, prefix: &str, data: &[u8]) -> Result<LockNode, CoordError> {
        let c = self.client();
        bump(&self.inner.stats.creates);
        let options = CreateMode::EphemeralSequential.with_acls(self.acls());
        let (stat, seq) = c.create(prefix, data, &options).await.map_err(map_err)?;
        Ok(LockNode {
            path: format!("{prefix}{seq}"),
            stat: node_stat(&stat),
        })
    }

    async fn find_own_node(&self, dir: &str, prefix: Option<&str>) -> Result<Search, CoordError> {
        let c = self.client();
        let session = sid(&c);
        bump(&self.inner.stats.searches);
        bump(&self.inner.stats.lists);
        let children = match c.list_children(dir).await {
            Ok(ch) => ch,
            Err(zookeeper_client::Error::NoNode) => Vec::new(),
            Err(e) => return Err(map_err(e)),
        };
        let names: Vec<String> = children
            .into_iter()
            .filter(|n| match prefix {
                Some(p) => n.starts_with(p),
                None => n.starts_with(LOCK_MARKER) && sequence_of(n).is_some(),
            })
            .collect();
        let mut candidates = Vec::with_capacity(names.len());
        for name in names {
            bump(&self.inner.stats.exists);
            match c.check_stat(&format!("{dir}/{name}")).await {
                Ok(Some(stat)) => candidates.push((name, node_stat(&stat))),
                Ok(None) => {}
                Err(e) => return Err(map_err(e)),
            }
        }
        Ok(Search {
            session,
            candidates,
        })
    }

    async fn list_children(&self, dir: &str) -> Result<Listing, CoordError> {
        let c = self.client();
        let session = sid(&c);
        bump(&self.inner.stats.lists);
        let children = c.list_children(dir).await.map_err(map_err)?;
        Ok(Listing { session, children })
    }

    async fn watch_node(&self, path: &str) -> Result<OneshotWatcher, CoordError> {
        let c = self.client();
        bump(&self.inner.stats.watches);
        let (_, _, w) = c.get_and_watch_data(path).await.map_err(map_err)?;
        Ok(w)
    }

    async fn wait_watch_event(&self, watch: OneshotWatcher) -> WatchOutcome {
        let ev = watch.changed().await;
        bump(&self.inner.stats.watch_events);
        match ev.event_type {
            EventType::Session if ev.session_state.is_terminated() => WatchOutcome::SessionExpired,
            _ => WatchOutcome::Fired,
        }
    }

    async fn delete_node(&self, path: &str) -> Result<(), CoordError> {
        let c = self.client();
        bump(&self.inner.stats.deletes);
        c.delete(path, None).await.map_err(map_err)
    }

    async fn sync(&self, path: &str) -> Result<(), CoordError> {
        let c = self.client();
        c.sync(path).await.map_err(map_err)
    }

    async fn check_node(&self, path: &str) -> Result<Option<NodeStat>, CoordError> {
        let c = self.client();
        bump(&self.inner.stats.exists);
        Ok(c.check_stat(path)
            .await
            .map_err(map_err)?
            .as_ref()
            .map(node_stat))
    }

    async fn guarded_write(
        &self,
        lock_node: Option<&str>,
        ops: &[GuardedOp],
    ) -> Result<Vec<OpResult>, MultiError> {
        let c = self.client();
        bump(&self.inner.stats.multis);
        let persistent = CreateMode::Persistent.with_acls(self.acls());
        let ephemeral = CreateMode::Ephemeral.with_acls(self.acls());
        let mut w = c.new_multi_writer();
        let offset = usize::from(lock_node.is_some());
        let refused = |index: usize, e: zookeeper_client::Error| MultiError {
            index: Some(index),
            error: map_err(e),
        };
        if let Some(node) = lock_node {
            w.add_check_version(node, 0).map_err(|e| refused(0, e))?;
        }
        for (i, op) in ops.iter().enumerate() {
            let r = match op {
                GuardedOp::Create { path, data, kind } => {
                    let o = match kind {
                        NodeKind::Persistent => &persistent,
                        NodeKind::Ephemeral => &ephemeral,
                    };
                    w.add_create(path, data, o)
                }
                GuardedOp::SetData {
                    path,
                    data,
                    version,
                } => w.add_set_data(path, data, *version),
                GuardedOp::Delete { path, version } => w.add_delete(path, *version),
                GuardedOp::Check { path, version } => w.add_check_version(path, *version),
            };
            r.map_err(|e| refused(i + offset, e))?;
        }
        match w.commit().await {
            Ok(results) => Ok(results
                .into_iter()
                .map(|r| match r {
                    MultiWriteResult::Check => OpResult::Checked,
                    MultiWriteResult::Delete => OpResult::Deleted,
                    MultiWriteResult::Create { path, .. } => OpResult::Created { path },
                    MultiWriteResult::SetData { stat } => OpResult::SetData {
                        stat: node_stat(&stat),
                    },
                    // `non_exhaustive`: nothing else answers these four operations.
                    #[allow(unreachable_patterns)]
                    _ => OpResult::Checked,
                })
                .collect()),
            Err(MultiWriteError::OperationFailed { index, source }) => Err(refused(index, source)),
            Err(MultiWriteError::RequestFailed { source }) => Err(MultiError {
                index: None,
                error: map_err(source),
            }),
        }
    }

    fn session(&self) -> SessionId {
        sid(&self.client())
    }

    fn session_event(&self) -> SessionEvent {
        session_event_of(self.client().state())
    }

    async fn new_session(&self, expired: SessionId) -> Result<SessionId, CoordError> {
        let _one = self.inner.renewing.lock().await;
        let c = self.client();
        if let Some(refused) = reopen_refused(c.state()) {
            return Err(refused);
        }
        if sid(&c) != expired && !c.state().is_terminated() {
            return Ok(sid(&c));
        }
        let fresh = open(&self.inner.connect, &self.inner.options).await?;
        let id = sid(&fresh);
        let old = std::mem::replace(
            &mut *self.inner.current.lock().unwrap_or_else(|p| p.into_inner()),
            fresh,
        );
        drop(old);
        bump(&self.inner.stats.renewals);
        Ok(id)
    }

    async fn ensure_dir(&self, dir: &str) -> Result<(), CoordError> {
        let c = self.client();
        bump(&self.inner.stats.other);
        let container = CreateMode::Container.with_acls(self.acls());
        match c.mkdir(dir, &container).await {
            // Servers before 3.5 have no containers.
            Err(zookeeper_client::Error::Unimplemented) => {
                let persistent = CreateMode::Persistent.with_acls(self.acls());
                c.mkdir(dir, &persistent).await.map_err(map_err)
            }
            r => r.map_err(map_err),
        }
    }

    async fn read_node(&self, path: &str) -> Result<(Vec<u8>, NodeStat), CoordError> {
        let c = self.client();
        bump(&self.inner.stats.other);
        let (data, stat) = c.get_data(path).await.map_err(map_err)?;
        Ok((data, node_stat(&stat)))
    }

    fn new_protection_id(&self) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    async fn sleep(&self, duration: Duration) {
        async_io::Timer::after(duration).await;
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        // Counted while it runs (or until the executor drops it): `background_tasks`.
        let running = super::Running::start(&self.inner.background);
        spawn_task(async move {
            let _running = running;
            task.await;
        });
    }
}

/// The session's state as the recipe reads it. `AuthFailed` and `Closed` are terminal like
/// `Expired`, but a new session would not help: each is its own event, never an expiry.
fn session_event_of(state: SessionState) -> SessionEvent {
    match state {
        SessionState::SyncConnected | SessionState::ConnectedReadOnly => SessionEvent::Connected,
        SessionState::AuthFailed => SessionEvent::AuthFailed,
        SessionState::Closed => SessionEvent::Closed,
        s if s.is_terminated() => SessionEvent::Expired,
        _ => SessionEvent::Suspended,
    }
}

/// Why no new session may be opened in place of one in `state`: the server refused the
/// authentication (a new session would be refused too, and each attempt costs the server a
/// handshake), or the client was closed (opening a session would bring it back to life).
fn reopen_refused(state: SessionState) -> Option<CoordError> {
    match state {
        SessionState::AuthFailed => Some(CoordError::AuthFailed {
            detail: "the server refused the session's authentication".to_string(),
        }),
        SessionState::Closed => Some(CoordError::ClientClosed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #33: the terminal states that are not an expiry are read as what they are, and
    /// stop a re-open; an expired session may be replaced.
    #[test]
    fn auth_failed_and_closed_are_their_own_ends_and_refuse_a_new_session() {
        assert_eq!(
            session_event_of(SessionState::AuthFailed),
            SessionEvent::AuthFailed
        );
        assert_eq!(session_event_of(SessionState::Closed), SessionEvent::Closed);
        assert_eq!(
            session_event_of(SessionState::Expired),
            SessionEvent::Expired
        );
        assert_eq!(
            session_event_of(SessionState::Disconnected),
            SessionEvent::Suspended
        );
        assert_eq!(
            session_event_of(SessionState::SyncConnected),
            SessionEvent::Connected
        );
        assert!(matches!(
            reopen_refused(SessionState::AuthFailed),
            Some(CoordError::AuthFailed { .. })
        ));
        assert_eq!(
            reopen_refused(SessionState::Closed),
            Some(CoordError::ClientClosed)
        );
        assert_eq!(reopen_refused(SessionState::Expired), None);
        assert_eq!(reopen_refused(SessionState::Disconnected), None);
    }
}
