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

mod coordination;
#[cfg(test)]
mod error_table;
mod executor;

#[cfg(feature = "test-util")]
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
#[cfg(feature = "test-util")]
use std::time::Instant;

use zookeeper_client::Client;

use self::executor::on_executor;
#[cfg(feature = "test-util")]
use self::executor::{spawn_task, task_thread};
use crate::zk::coord::{CoordError, Coordination};
use crate::zk::error::ZkLockError;

/// The ACL the client gives the nodes it creates (lock nodes, the lock directory, the nodes a
/// guarded write creates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ZkAcl {
    /// ZooKeeper's `OPEN_ACL_UNSAFE` (`world:anyone`, every permission): Curator's default.
    #[default]
    Open,
    /// `CREATOR_ALL_ACL` (`auth::`, every permission): only sessions with the creator's
    /// authentication may read, list or delete the nodes. Needs an authenticated session
    /// ([`ZkClientBuilder::auth`]); without one the server refuses the create.
    CreatorAll,
}

impl ZkAcl {
    fn acls(self) -> zookeeper_client::Acls<'static> {
        match self {
            ZkAcl::Open => zookeeper_client::Acls::anyone_all(),
            ZkAcl::CreatorAll => zookeeper_client::Acls::creator_all(),
        }
    }
}

/// How a [`ZkClient`] connects. Built by [`ZkClient::builder`].
#[derive(Clone)]
pub struct ZkClientBuilder {
    session_timeout: Option<Duration>,
    connection_timeout: Option<Duration>,
    fail_eagerly: bool,
    /// `(scheme, credentials)`, sent after every session is opened (renewals too).
    auth: Vec<(String, Vec<u8>)>,
    acl: ZkAcl,
}

impl std::fmt::Debug for ZkClientBuilder {
    /// The credentials are not printed, only their schemes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let schemes: Vec<&str> = self.auth.iter().map(|(s, _)| s.as_str()).collect();
        f.debug_struct("ZkClientBuilder")
            .field("session_timeout", &self.session_timeout)
            .field("connection_timeout", &self.connection_timeout)
            .field("fail_eagerly", &self.fail_eagerly)
            .field("auth_schemes", &schemes)
            .field("acl", &self.acl)
            .finish()
    }
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

    /// Authenticates every session with `scheme` and `credentials` (ZooKeeper's `addAuthInfo`,
    /// Curator's `authorization`), e.g. `("digest", b"user:password")`. Call it once per
    /// scheme; a renewed session authenticates again.
    pub fn auth(mut self, scheme: &str, credentials: &[u8]) -> Self {
        self.auth.push((scheme.to_string(), credentials.to_vec()));
        self
    }

    /// The ACL of the nodes this client creates (default [`ZkAcl::Open`], as Curator's).
    pub fn acl(mut self, acl: ZkAcl) -> Self {
        self.acl = acl;
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
            CoordError::AuthFailed { detail } => ZkLockError::AuthFailed {
                connect: connect.to_string(),
                detail,
            },
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
                background: Arc::default(),
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
    for (scheme, credentials) in &o.auth {
        connector = connector.with_auth(scheme, credentials);
    }
    let cs = connect.to_string();
    let r = on_executor(async move { connector.connect(&cs).await }).await;
    match r {
        Some(Ok(c)) => Ok(c),
        Some(Err(e @ zookeeper_client::Error::AuthFailed)) => Err(CoordError::AuthFailed {
            detail: e.to_string(),
        }),
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
    /// Protected searches for our node after a create whose reply was lost (each also
    /// counts one `getChildren` in `lists`).
    pub searches: u64,
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
    searches: AtomicU64,
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
    /// Background tasks spawned and not finished ([`ZkClient::background_tasks`]).
    background: Arc<AtomicU64>,
}

/// One background task counted in `Inner::background` until it is dropped (finished, or
/// dropped unfinished by the executor).
pub(super) struct Running(Arc<AtomicU64>);

impl Running {
    pub(super) fn start(count: &Arc<AtomicU64>) -> Running {
        count.fetch_add(1, Ordering::AcqRel);
        Running(Arc::clone(count))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
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
            auth: Vec::new(),
            acl: ZkAcl::Open,
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

    /// The ACL of the nodes this client creates.
    fn acls(&self) -> zookeeper_client::Acls<'static> {
        self.inner.options.acl.acls()
    }

    /// Releases and cleanups this client still runs in the background: the delete of a
    /// dropped guard's node, of a lost hold's, the cleanup of a cancelled or failed acquire.
    /// They run on the `lockwright-zk` thread, which dies with the process: a guard dropped
    /// just before the process exits loses its delete, and its node stays until the session
    /// expires (one session timeout; other clients wait that long). Before exiting, call
    /// [`ZkClient::wait_background`] (or release guards with `release().await`).
    pub fn background_tasks(&self) -> u64 {
        self.inner.background.load(Ordering::Acquire)
    }

    /// Waits until no background task of this client is left ([`ZkClient::background_tasks`]),
    /// at most `timeout`; returns how many are still running (0: every delete was sent and
    /// answered, or given up as documented).
    pub async fn wait_background(&self, timeout: Duration) -> u64 {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = self.background_tasks();
            if left == 0 || std::time::Instant::now() >= deadline {
                return left;
            }
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
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
            searches: l(&c.searches),
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
    /// A test utility: behind the `test-util` feature (never in production builds), because it
    /// stalls every ZooKeeper client of the process for a moment.
    ///
    /// # Errors
    /// [`ZkLockError::Unreachable`] if the second connection cannot be made.
    #[cfg(feature = "test-util")]
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
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
#[cfg(feature = "test-util")]
async fn with_timeout<F: Future>(fut: F, d: Duration) -> Option<F::Output> {
    use futures::future::{select, Either};
    let fut = std::pin::pin!(fut);
    match select(fut, async_io::Timer::after(d)).await {
        Either::Left((v, _)) => Some(v),
        Either::Right(_) => None,
    }
}
