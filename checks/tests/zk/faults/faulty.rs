//! The fault-injecting `Coordination`: `ZkClient` with scripted faults.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockwright::zk::{
    CoordError, Coordination, GuardedOp, LockNode, MultiError, NodeStat, OpResult, Search,
    SessionEvent, SessionId, WatchOutcome, ZkClient,
};
use lockwright_checks::peers::zookeeper::ZkServer;

use crate::zk_support::{client, server};

/// A lost reply (the model's `LoseReply`).
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// The next create's reply is lost; `applied`: the server made the node.
    Create { applied: bool },
    /// The next delete's reply is lost.
    Delete { applied: bool },
    /// The next delete hangs for `ms` (a disconnected client's request), then its reply is
    /// lost, unapplied.
    StallDelete { ms: u64 },
    /// The next create is applied, then its reply hangs for `ms` and is lost (a caller that
    /// drops the acquire meanwhile: the model's `LoseReply(applied)`, then `Abandon`).
    StallCreate { ms: u64 },
    /// The next create's reply is lost (applied), and the client then switches to a second
    /// session while the first lives on (the model's `LoseReply` then `RestartClient`).
    CreateThenRestart,
    /// The next create's reply is lost (applied), and the session's searches are then answered
    /// as by a follower that has not applied that create yet, until the client sends `sync`
    /// (the model's `LoseReply` then `LaggedSearch`).
    CreateLagging,
    /// Right before the next create, the client switches to its second session (another
    /// mutex sharing the client renewed it), so the create runs in the new session, unknown to
    /// the attempt (the `drop-own-on-session-swap` story; the model has no shared client yet).
    SwapThenCreate,
    /// As `SwapThenCreate`, and the create's reply is lost (applied, in the new session): the
    /// attempt searches, and notices the renewal before its search (the model's
    /// `LoseReply(applied)` after another mutex renewed the session, then
    /// `NoticeSessionChange`).
    SwapThenCreateLost,
    /// Right before the next listing, the client switches to its second session (another
    /// mutex sharing the client restarted the handle; the first session lives on), so the
    /// listing runs in the new session while the attempt's node is the old session's (the
    /// model's `RestartClient` of a shared client, then `ListChildren` before
    /// `NoticeSessionChange`).
    SwapThenList,
    /// The next create makes a node whose name the recipe does not read as a lock node: the
    /// wrapper puts an `x` before the server's suffix (`…-lock-x0000000007`), as a suffix past
    /// 2^31 (`-2147483648`) was unreadable before the parser read signed suffixes (the model's
    /// `MisreadOwnNode`).
    UnreadableName,
    /// The next `sync` switches the client to its second session when it returns (another
    /// mutex sharing the client restarted the handle while the `sync` was in flight; the first
    /// session lives on).
    SwapInSync,
    /// Every `check_node` (`exists`, on any path) from now on is refused for good
    /// (`Rejected`: a server that will not answer that check, whatever the client does).
    /// Never popped: put it last in a script.
    RejectChecks,
    /// Every `watch_node` (`getData` with a watch) from now on is refused for good, while
    /// `exists` is answered (ZooKeeper checks READ on `getData`, not on `exists`). Never
    /// popped: put it last in a script.
    RejectWatches,
}

/// `ZkClient` with scripted faults.
pub struct Faulty {
    pub old: ZkClient,
    pub new: ZkClient,
    restarted: AtomicBool,
    script: Mutex<VecDeque<Fault>>,
    /// The node a lagging follower has not applied yet (`Fault::CreateLagging`).
    lagging: Mutex<Option<String>>,
}

impl Faulty {
    fn new(old: ZkClient, new: ZkClient, script: &[Fault]) -> Arc<Faulty> {
        Arc::new(Faulty {
            old,
            new,
            restarted: AtomicBool::new(false),
            script: Mutex::new(script.iter().copied().collect()),
            lagging: Mutex::new(None),
        })
    }

    /// Switches to the second session now (another mutex of the shared client restarted the
    /// handle; the first session lives on).
    pub fn restart(&self) {
        self.restarted.store(true, Ordering::SeqCst);
    }

    fn c(&self) -> &ZkClient {
        if self.restarted.load(Ordering::SeqCst) {
            &self.new
        } else {
            &self.old
        }
    }

    /// The real request behind a lost reply: if it failed (say NoNode before the directory
    /// exists), the fault is put back for the retry and the real answer returned.
    fn applied<T>(&self, fault: Fault, r: Result<T, CoordError>) -> Result<T, CoordError> {
        if r.is_err() {
            self.script.lock().unwrap().push_front(fault);
        }
        r
    }

    fn next_if(&self, f: impl Fn(Fault) -> bool) -> Option<Fault> {
        let mut s = self.script.lock().unwrap();
        match s.front() {
            Some(&x) if f(x) => s.pop_front(),
            _ => None,
        }
    }
}

fn lost() -> CoordError {
    CoordError::ConnectionLoss {
        detail: "injected".to_string(),
    }
}

impl Coordination for Faulty {
    type Watch = <ZkClient as Coordination>::Watch;

    async fn create_lock_node(&self, prefix: &str, data: &[u8]) -> Result<LockNode, CoordError> {
        match self.next_if(|f| {
            !matches!(
                f,
                Fault::Delete { .. }
                    | Fault::StallDelete { .. }
                    | Fault::SwapThenList
                    | Fault::SwapInSync
                    | Fault::RejectChecks
                    | Fault::RejectWatches
            )
        }) {
            Some(fault @ Fault::Create { applied }) => {
                if applied {
                    self.applied(fault, self.c().create_lock_node(prefix, data).await)?;
                }
                Err(lost())
            }
            Some(fault @ Fault::CreateThenRestart) => {
                self.applied(fault, self.c().create_lock_node(prefix, data).await)?;
                self.restarted.store(true, Ordering::SeqCst);
                Err(lost())
            }
            Some(fault @ Fault::UnreadableName) => {
                let bent = format!("{prefix}x");
                self.applied(fault, self.c().create_lock_node(&bent, data).await)
            }
            Some(Fault::SwapThenCreate) => {
                self.restarted.store(true, Ordering::SeqCst);
                self.c().create_lock_node(prefix, data).await
            }
            Some(fault @ Fault::StallCreate { ms }) => {
                self.applied(fault, self.c().create_lock_node(prefix, data).await)?;
                self.c().sleep(Duration::from_millis(ms)).await;
                Err(lost())
            }
            Some(fault @ Fault::SwapThenCreateLost) => {
                self.restarted.store(true, Ordering::SeqCst);
                self.applied(fault, self.c().create_lock_node(prefix, data).await)?;
                Err(lost())
            }
            Some(fault @ Fault::CreateLagging) => {
                let node = self.applied(fault, self.c().create_lock_node(prefix, data).await)?;
                *self.lagging.lock().unwrap() = Some(node.path);
                Err(lost())
            }
            _ => self.c().create_lock_node(prefix, data).await,
        }
    }

    async fn find_own_node(&self, dir: &str, prefix: Option<&str>) -> Result<Search, CoordError> {
        let hidden = self.lagging.lock().unwrap().clone();
        let mut search = self.c().find_own_node(dir, prefix).await?;
        search
            .candidates
            .retain(|(name, _)| hidden.as_deref() != Some(format!("{dir}/{name}").as_str()));
        Ok(search)
    }

    fn list_children<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Future<Output = Result<lockwright::zk::Listing, CoordError>> + Send + 'a {
        if self.next_if(|f| matches!(f, Fault::SwapThenList)).is_some() {
            self.restarted.store(true, Ordering::SeqCst);
        }
        self.c().list_children(dir)
    }

    fn watch_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Self::Watch, CoordError>> + Send + 'a {
        let reject = matches!(
            self.script.lock().unwrap().front(),
            Some(Fault::RejectWatches)
        );
        async move {
            if reject {
                return Err(CoordError::Rejected {
                    detail: "injected: the watch is refused".to_string(),
                });
            }
            self.c().watch_node(path).await
        }
    }

    fn wait_watch_event(&self, w: Self::Watch) -> impl Future<Output = WatchOutcome> + Send + '_ {
        self.c().wait_watch_event(w)
    }

    async fn delete_node(&self, path: &str) -> Result<(), CoordError> {
        match self.next_if(|f| matches!(f, Fault::Delete { .. } | Fault::StallDelete { .. })) {
            Some(fault @ Fault::Delete { applied }) => {
                if applied {
                    self.applied(fault, self.c().delete_node(path).await)?;
                }
                Err(lost())
            }
            Some(Fault::StallDelete { ms }) => {
                self.c().sleep(Duration::from_millis(ms)).await;
                Err(lost())
            }
            _ => self.c().delete_node(path).await,
        }
    }

    async fn sync(&self, path: &str) -> Result<(), CoordError> {
        let swap = self.next_if(|f| matches!(f, Fault::SwapInSync)).is_some();
        self.c().sync(path).await?;
        if swap {
            self.restarted.store(true, Ordering::SeqCst);
        }
        // The follower has caught up with the leader.
        *self.lagging.lock().unwrap() = None;
        Ok(())
    }

    fn check_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Option<NodeStat>, CoordError>> + Send + 'a {
        let reject = matches!(
            self.script.lock().unwrap().front(),
            Some(Fault::RejectChecks)
        );
        async move {
            if reject {
                return Err(CoordError::Rejected {
                    detail: "injected: the check is refused".to_string(),
                });
            }
            self.c().check_node(path).await
        }
    }

    fn guarded_write<'a>(
        &'a self,
        lock_node: Option<&'a str>,
        ops: &'a [GuardedOp],
    ) -> impl Future<Output = Result<Vec<OpResult>, MultiError>> + Send + 'a {
        self.c().guarded_write(lock_node, ops)
    }

    fn session(&self) -> SessionId {
        self.c().session()
    }

    fn session_event(&self) -> SessionEvent {
        self.c().session_event()
    }

    fn new_session(
        &self,
        expired: SessionId,
    ) -> impl Future<Output = Result<SessionId, CoordError>> + Send + '_ {
        self.c().new_session(expired)
    }

    fn ensure_dir<'a>(
        &'a self,
        dir: &'a str,
    ) -> impl Future<Output = Result<(), CoordError>> + Send + 'a {
        self.c().ensure_dir(dir)
    }

    fn read_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(Vec<u8>, NodeStat), CoordError>> + Send + 'a {
        self.c().read_node(path)
    }

    fn new_protection_id(&self) -> String {
        self.c().new_protection_id()
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send + '_ {
        self.c().sleep(d)
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.c().spawn(task);
    }
}

/// A faulty client (two sessions: the first, and the one a restart switches to), an observer
/// client, and the server they share (keep it: the last holder stops it).
pub fn faulty(script: &[Fault]) -> (Arc<Faulty>, ZkClient, Arc<ZkServer>) {
    let s = server();
    let (a, b, observer) = (client(&s), client(&s), client(&s));
    (Faulty::new(a, b, script), observer, s)
}
