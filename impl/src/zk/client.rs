//! [`ZkClient`]: the production [`Coordination`], on zookeeper-client (the wire protocol,
//! ZooKeeper 3.3–3.9) against a real ensemble.
//!
//! **No async runtime needed.** zookeeper-client does its I/O on async-io (its own reactor
//! thread) and spawns one session task per session through `spawns`. lockwright runs those
//! tasks, and its own background work (the release of a dropped guard, the cleanup of a
//! cancelled acquire), on one process-wide thread, `lockwright-zk`, with a small local
//! executor. The futures this crate returns can therefore be awaited from any executor (tokio,
//! smol, async-std) or blocked on from plain threads with [`crate::zk::block_on`].
//!
//! **Sessions.** A `ZkClient` has one current session. When a request answers
//! `SessionExpired` (or a watch reports the expiry), the recipe calls
//! [`Coordination::new_session`], which opens a fresh session (Curator does the same with a new
//! ZooKeeper handle). Clones share the session; so do all mutexes built on one client.
//!
//! **Lost replies.** zookeeper-client fails an in-flight request with whatever ended the
//! connection (`ConnectionLoss`, a timeout, an I/O error wrapped as `Custom`); all of these are
//! [`CoordError::ConnectionLoss`]: the outcome is unknown. Requests issued while disconnected
//! wait for the reconnect (or the expiry).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::channel::{mpsc, oneshot};
use futures::future::BoxFuture;
use futures::StreamExt;
use std::task::Poll;
use zookeeper_client::{
    Acls, Client, CreateMode, EventType, MultiWriteError, MultiWriteResult, OneshotWatcher,
    SessionState, Stat,
};

use crate::zk::coord::{
    CoordError, Coordination, GuardedOp, LockNode, MultiError, NodeKind, NodeStat, OpResult,
    Search, SessionEvent, SessionId, WatchOutcome,
};
use crate::zk::error::ZkLockError;
use crate::zk::names::{sequence_of, LOCK_MARKER};

// ---------------------------------------------------------------------------------------------
// The `lockwright-zk` thread: zookeeper-client's session tasks and lockwright's background work.
// ---------------------------------------------------------------------------------------------

struct Executor {
    tx: mpsc::UnboundedSender<BoxFuture<'static, ()>>,
}

/// zookeeper-client's `asyncs::spawn` lands here: the session task joins the queue of the
/// thread it was spawned on.
struct QueueSpawner(mpsc::UnboundedSender<BoxFuture<'static, ()>>);

impl spawns_core::Spawn for QueueSpawner {
    fn spawn(&self, task: spawns_core::Task) {
        // The receiver lives as long as its thread.
        let _ = self.0.unbounded_send(Box::into_pin(task.future));
    }
}

/// Runs every task sent on `rx` until `rx` closes (or, with `until_idle`, until no task is left)
/// and they are all done. Blocked on with
/// `async_io::block_on`, so while the tasks wait this thread itself waits on the sockets (the
/// reactor): a reply wakes the session task here directly, without a hop through async-io's
/// own thread.
async fn drive(mut rx: mpsc::UnboundedReceiver<BoxFuture<'static, ()>>, until_idle: bool) {
    use futures::stream::FuturesUnordered;
    let mut tasks = FuturesUnordered::new();
    let mut open = true;
    std::future::poll_fn(|cx| loop {
        let mut progressed = false;
        while open {
            match rx.poll_next_unpin(cx) {
                Poll::Ready(Some(t)) => {
                    tasks.push(t);
                    progressed = true;
                }
                Poll::Ready(None) => open = false,
                Poll::Pending => break,
            }
        }
        while let Poll::Ready(Some(())) = tasks.poll_next_unpin(cx) {
            progressed = true;
        }
        // Only a round that found nothing new may end: a task spawned while the others ran
        // (zookeeper-client's session task, spawned by a connect) is still in `rx`.
        if !progressed {
            if (!open || until_idle) && tasks.is_empty() {
                return Poll::Ready(());
            }
            return Poll::Pending;
        }
    })
    .await;
}

/// Starts a thread that runs `first` and every task sent on the returned sender (and
/// zookeeper-client's session tasks spawned from them) until that sender and every clone of it
/// are gone — with `until_idle`, until no task is left. `on_exit` runs on the thread at the end.
fn task_thread(
    name: &str,
    first: Option<BoxFuture<'static, ()>>,
    until_idle: bool,
    on_exit: impl FnOnce() + Send + 'static,
) -> std::io::Result<mpsc::UnboundedSender<BoxFuture<'static, ()>>> {
    let (tx, rx) = mpsc::unbounded::<BoxFuture<'static, ()>>();
    if let Some(task) = first {
        // Queued before the thread starts, so an `until_idle` thread finds it.
        let _ = tx.unbounded_send(task);
    }
    let for_zk = QueueSpawner(tx.clone());
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            {
                let _scope = spawns_core::enter(&for_zk);
                async_io::block_on(drive(rx, until_idle));
            }
            on_exit();
        })?;
    Ok(tx)
}

fn executor() -> &'static Executor {
    static EXECUTOR: OnceLock<Executor> = OnceLock::new();
    EXECUTOR.get_or_init(|| Executor {
        tx: task_thread("lockwright-zk", None, false, || {})
            .expect("cannot start the lockwright-zk thread"),
    })
}

fn spawn_task(task: impl Future<Output = ()> + Send + 'static) {
    // The receiver lives as long as the process.
    let _ = executor().tx.unbounded_send(Box::pin(task));
}

/// Runs `f` on the executor thread and awaits its result (sessions are opened there, so their
/// session task is spawned there).
async fn on_executor<T: Send + 'static>(f: impl Future<Output = T> + Send + 'static) -> Option<T> {
    let (tx, rx) = oneshot::channel();
    spawn_task(async move {
        let _ = tx.send(f.await);
    });
    rx.await.ok()
}

// ---------------------------------------------------------------------------------------------
// The client.
// ---------------------------------------------------------------------------------------------

/// How a [`ZkClient`] connects. Built by [`ZkClient::builder`].
#[derive(Clone, Debug)]
pub struct ZkClientBuilder {
    session_timeout: Option<Duration>,
    connection_timeout: Option<Duration>,
    fail_eagerly: bool,
}

impl ZkClientBuilder {
    /// The session timeout to ask for (default 6 s, zookeeper-client's). The server clamps it to
    /// its `minSessionTimeout`..`maxSessionTimeout` (2 and 20 ticks by default). A holder that
    /// stops hearing from the server for 1.4× the negotiated timeout declares its session
    /// expired and its locks lost.
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = Some(timeout);
        self
    }

    /// How long a connection may stay silent before it counts as lost (default 2/5 of the
    /// session timeout).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = Some(timeout);
        self
    }

    /// Fail [`ZkClientBuilder::connect`] as soon as every host has been tried once, instead of
    /// retrying until the session timeout (not for an ensemble behind one virtual IP).
    pub fn fail_eagerly(mut self) -> Self {
        self.fail_eagerly = true;
        self
    }

    /// Opens a session on `connect` (`host:port[,host:port...][/chroot]`).
    ///
    /// # Errors
    /// [`ZkLockError::Unreachable`] naming `connect`.
    pub async fn connect(self, connect: &str) -> Result<ZkClient, ZkLockError> {
        let client = open(connect, &self).await.map_err(|e| match e {
            CoordError::Unreachable { connect, detail } => {
                ZkLockError::Unreachable { connect, detail }
            }
            other => ZkLockError::Unreachable {
                connect: connect.to_string(),
                detail: other.to_string(),
            },
        })?;
        Ok(ZkClient {
            inner: Arc::new(Inner {
                connect: connect.to_string(),
                options: self,
                current: Mutex::new(client),
                renewing: futures::lock::Mutex::new(()),
                stats: Counters::default(),
            }),
        })
    }
}

async fn open(connect: &str, o: &ZkClientBuilder) -> Result<Client, CoordError> {
    let mut connector = Client::connector();
    if let Some(t) = o.session_timeout {
        connector = connector.with_session_timeout(t);
    }
    if let Some(t) = o.connection_timeout {
        connector = connector.with_connection_timeout(t);
    }
    if o.fail_eagerly {
        connector = connector.with_fail_eagerly();
    }
    let cs = connect.to_string();
    let r = on_executor(async move { connector.connect(&cs).await }).await;
    match r {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => Err(CoordError::Unreachable {
            connect: connect.to_string(),
            detail: e.to_string(),
        }),
        None => Err(CoordError::Unreachable {
            connect: connect.to_string(),
            detail: "the lockwright-zk thread is gone".to_string(),
        }),
    }
}

/// Request counters of a [`ZkClient`] (for benchmarks: requests per acquisition, watch events
/// per hand-off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// `create` (lock nodes; the lock directory's parents count as `other`).
    pub creates: u64,
    /// `getChildren` (listings and the protected search's listing).
    pub lists: u64,
    /// `getData` with a watch.
    pub watches: u64,
    /// `exists` (ensure_valid, the protected search's Stat reads).
    pub exists: u64,
    /// `delete` (releases and clean-ups).
    pub deletes: u64,
    /// `multi` (guarded writes).
    pub multis: u64,
    /// Other requests (directory creation, holder data reads).
    pub other: u64,
    /// Watch events received (each a waiter's wake-up).
    pub watch_events: u64,
    /// Sessions opened after the first (expiries learned).
    pub renewals: u64,
}

impl ClientStats {
    /// All requests sent.
    pub fn requests(&self) -> u64 {
        self.creates
            + self.lists
            + self.watches
            + self.exists
            + self.deletes
            + self.multis
            + self.other
    }
}

#[derive(Default)]
struct Counters {
    creates: AtomicU64,
    lists: AtomicU64,
    watches: AtomicU64,
    exists: AtomicU64,
    deletes: AtomicU64,
    multis: AtomicU64,
    other: AtomicU64,
    watch_events: AtomicU64,
    renewals: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

struct Inner {
    connect: String,
    options: ZkClientBuilder,
    current: Mutex<Client>,
    /// One renewal at a time.
    renewing: futures::lock::Mutex<()>,
    stats: Counters,
}

/// A ZooKeeper client for [`crate::zk::ZkMutex`]: one session at a time, renewed after an
/// expiry. Cheap to clone (clones share the session).
///
/// ```no_run
/// use lockwright::zk::{block_on, GuardedOp, ZkClient, ZkMutex};
///
/// block_on(async {
///     let zk = ZkClient::connect("127.0.0.1:2181").await?;
///     let mutex = ZkMutex::new(zk, "/locks/my-index")?;
///     let guard = mutex.acquire().await?;
///     println!("holding {} with fencing token {}", guard.node(), guard.token());
///     guard.guarded_write(&[GuardedOp::set_data("/my-index/owner", "me")]).await?;
///     guard.release().await
/// })?;
/// # Ok::<(), lockwright::zk::ZkLockError>(())
/// ```
#[derive(Clone)]
pub struct ZkClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ZkClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkClient")
            .field("connect", &self.inner.connect)
            .field("session", &self.session())
            .finish_non_exhaustive()
    }
}

impl ZkClient {
    /// Connects with the defaults (6 s session timeout).
    ///
    /// # Errors
    /// [`ZkLockError::Unreachable`] naming `connect`.
    pub async fn connect(connect: &str) -> Result<ZkClient, ZkLockError> {
        ZkClient::builder().connect(connect).await
    }

    /// A builder for the connection options.
    pub fn builder() -> ZkClientBuilder {
        ZkClientBuilder {
            session_timeout: None,
            connection_timeout: None,
            fail_eagerly: false,
        }
    }

    /// The connect string.
    pub fn connect_string(&self) -> &str {
        &self.inner.connect
    }

    /// The negotiated session timeout of the current session.
    pub fn session_timeout(&self) -> Duration {
        self.client().session_timeout()
    }

    /// Request counters since the client was made.
    pub fn stats(&self) -> ClientStats {
        let c = &self.inner.stats;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ClientStats {
            creates: l(&c.creates),
            lists: l(&c.lists),
            watches: l(&c.watches),
            exists: l(&c.exists),
            deletes: l(&c.deletes),
            multis: l(&c.multis),
            other: l(&c.other),
            watch_events: l(&c.watch_events),
            renewals: l(&c.renewals),
        }
    }

    /// Ends the current session from a second connection on the same session (ZooKeeper's and
    /// Curator's `KillSession` test utility): the server deletes the session's ephemeral nodes
    /// at once, and this client sees the session expire. For testing lock-lost handling.
    ///
    /// While the second connection attaches, the `lockwright-zk` thread is held still for a
    /// moment (every client of the process pauses): otherwise this client reconnects at once,
    /// and each connection keeps stealing the session from the other before its handshake
    /// reply is flushed.
    ///
    /// # Errors
    /// [`ZkLockError::Unreachable`] if the second connection cannot be made.
    pub async fn kill_session(&self) -> Result<(), ZkLockError> {
        let c = self.client();
        let info = c.session().clone();
        let cs = self.inner.connect.clone();
        let unreachable = |detail: String| ZkLockError::Unreachable {
            connect: self.inner.connect.clone(),
            detail,
        };
        // Hold the executor thread (and with it this client's session task) still.
        let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        spawn_task(async move {
            let _ = held_tx.send(());
            let _ = release_rx.recv_timeout(Duration::from_secs(20));
        });
        held_rx
            .recv()
            .map_err(|_| unreachable("the lockwright-zk thread is gone".to_string()))?;
        // The second connection runs on a thread and executor of its own; the thread ends
        // once the second session's task has sent CloseSession and finished.
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let (ended_tx, ended_rx) = std::sync::mpsc::channel::<()>();
        let killer = Box::pin(async move {
            let r = async {
                let other = Client::connector()
                    .with_session(info)
                    .with_fail_eagerly()
                    .connect(&cs)
                    .await?;
                // Dropping the last handle closes the session (CloseSession).
                drop(other);
                Ok::<(), zookeeper_client::Error>(())
            }
            .await;
            let _ = done_tx.send(r);
        });
        let started = task_thread("lockwright-zk-kill", Some(killer), true, move || {
            let _ = ended_tx.send(());
        });
        if let Err(e) = started {
            let _ = release_tx.send(());
            return Err(unreachable(e.to_string()));
        }
        let r = done_rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or(Err(zookeeper_client::Error::Timeout));
        let _ = ended_rx.recv_timeout(Duration::from_secs(10));
        let _ = release_tx.send(());
        r.map_err(|e| unreachable(e.to_string()))?;
        // Wait (bounded) until this client has seen it.
        let mut w = c.state_watcher();
        let deadline = Instant::now() + c.session_timeout() * 3;
        while !w.peek_state().is_terminated() && Instant::now() < deadline {
            let _ = with_timeout(w.changed(), Duration::from_millis(50)).await;
        }
        Ok(())
    }

    fn client(&self) -> Client {
        self.inner
            .current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// `fut`, or `None` after `d`.
async fn with_timeout<F: Future>(fut: F, d: Duration) -> Option<F::Output> {
    use futures::future::{select, Either};
    let fut = std::pin::pin!(fut);
    match select(fut, async_io::Timer::after(d)).await {
        Either::Left((v, _)) => Some(v),
        Either::Right(_) => None,
    }
}

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

/// zookeeper-client's errors as the recipe sees them.
fn map_err(e: zookeeper_client::Error) -> CoordError {
    use zookeeper_client::Error as E;
    match e {
        E::NoNode => CoordError::NoNode,
        E::NodeExists => CoordError::NodeExists,
        E::BadVersion => CoordError::BadVersion,
        E::NotEmpty => CoordError::NotEmpty,
        // Terminal for the session: a closed handle's session is as gone as an expired one.
        E::SessionExpired | E::ClientClosed | E::AuthFailed => CoordError::SessionExpired,
        E::NoHosts => CoordError::Unreachable {
            connect: String::new(),
            detail: "no available hosts".to_string(),
        },
        // The request may or may not have been applied.
        E::ConnectionLoss | E::Timeout | E::Custom(_) | E::SessionMoved => {
            CoordError::ConnectionLoss {
                detail: e.to_string(),
            }
        }
        e => CoordError::Rejected {
            detail: e.to_string(),
        },
    }
}

const fn ephemeral_sequential() -> zookeeper_client::CreateOptions<'static> {
    CreateMode::EphemeralSequential.with_acls(Acls::anyone_all())
}

impl Coordination for ZkClient {
    type Watch = OneshotWatcher;

    async fn create_lock_node(&self, prefix: &str, data: &[u8]) -> Result<LockNode, CoordError> {
        let c = self.client();
        bump(&self.inner.stats.creates);
        let options = ephemeral_sequential();
        let (stat, seq) = c.create(prefix, data, &options).await.map_err(map_err)?;
        Ok(LockNode {
            path: format!("{prefix}{seq}"),
            stat: node_stat(&stat),
        })
    }

    async fn find_own_node(&self, dir: &str, prefix: Option<&str>) -> Result<Search, CoordError> {
        let c = self.client();
        let session = sid(&c);
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

    async fn list_children(&self, dir: &str) -> Result<Vec<String>, CoordError> {
        let c = self.client();
        bump(&self.inner.stats.lists);
        c.list_children(dir).await.map_err(map_err)
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
        let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
        let ephemeral = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
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
        match self.client().state() {
            SessionState::SyncConnected | SessionState::ConnectedReadOnly => {
                SessionEvent::Connected
            }
            s if s.is_terminated() => SessionEvent::Expired,
            _ => SessionEvent::Suspended,
        }
    }

    async fn new_session(&self, expired: SessionId) -> Result<SessionId, CoordError> {
        let _one = self.inner.renewing.lock().await;
        let c = self.client();
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
        let container = CreateMode::Container.with_acls(Acls::anyone_all());
        match c.mkdir(dir, &container).await {
            // Servers before 3.5 have no containers.
            Err(zookeeper_client::Error::Unimplemented) => {
                let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
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
        spawn_task(task);
    }
}
