//! Lost replies and a replaced session on a real server, through a fault-injecting
//! `Coordination` wrapped around `ZkClient`: the model's `LoseReply(applied | not applied)` on
//! a create or a delete, `RestartClient` (a new session while the old one lives on), and a
//! follower that has not applied a lost create yet (`LaggedSearch`, answered by `sync`). The
//! recipe handles each as the model's `curator` variant does, and every test-only defect switch
//! (the model's broken variants) shows its bug on the real server.

mod zk_support;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockwright::zk::{
    block_on, CoordError, Coordination, GuardedOp, LockNode, LostReason, MultiError, NodeStat,
    OpResult, Search, SessionEvent, SessionId, WatchOutcome, ZkClient, ZkDefect, ZkMutex,
};
use lockwright_checks::peers::zookeeper::ZkServer;
use zk_support::{children, client, dir, eventually, server};

/// A lost reply (the model's `LoseReply`).
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// The next create's reply is lost; `applied`: the server made the node.
    Create { applied: bool },
    /// The next delete's reply is lost.
    Delete { applied: bool },
    /// The next delete hangs for `ms` (a disconnected client's request), then its reply is
    /// lost, unapplied.
    StallDelete { ms: u64 },
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
}

/// `ZkClient` with scripted faults.
struct Faulty {
    old: ZkClient,
    new: ZkClient,
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
        match self.next_if(|f| !matches!(f, Fault::Delete { .. } | Fault::StallDelete { .. })) {
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
            Some(Fault::SwapThenCreate) => {
                self.restarted.store(true, Ordering::SeqCst);
                self.c().create_lock_node(prefix, data).await
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
    ) -> impl Future<Output = Result<Vec<String>, CoordError>> + Send + 'a {
        self.c().list_children(dir)
    }

    fn watch_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Self::Watch, CoordError>> + Send + 'a {
        self.c().watch_node(path)
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
        self.c().sync(path).await?;
        // The follower has caught up with the leader.
        *self.lagging.lock().unwrap() = None;
        Ok(())
    }

    fn check_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<Option<NodeStat>, CoordError>> + Send + 'a {
        self.c().check_node(path)
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
fn faulty(script: &[Fault]) -> (Arc<Faulty>, ZkClient, Arc<ZkServer>) {
    let s = server();
    let (a, b, observer) = (client(&s), client(&s), client(&s));
    (Faulty::new(a, b, script), observer, s)
}

#[test]
fn a_create_whose_reply_was_lost_is_found_by_the_protected_search() {
    let (f, obs, _server) = faulty(&[Fault::Create { applied: true }]);
    let d = dir("lost-create");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    assert_eq!(
        children(&obs, &d),
        vec![lockwright::zk::names::child_name(g.node())],
        "the node the lost create made is the one held: no orphan"
    );
    block_on(g.release()).unwrap();
    assert!(children(&obs, &d).is_empty());
}

/// The search after a lost create sends `sync` first (the model's `search-without-sync` is the
/// recipe without it). Here the session's searches are answered as by a follower that has not
/// applied the create until a `sync`: without the `sync` the search missed the node, the
/// recipe created a second one behind it, and the try failed, held by its own orphan (two
/// children: this test fails on the recipe before the fix).
#[test]
fn the_search_after_a_lost_create_syncs_so_a_lagging_server_cannot_hide_the_node() {
    let (f, obs, _server) = faulty(&[Fault::CreateLagging]);
    let d = dir("lagging-search");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.try_acquire()).expect("the node the lost create made is found");
    assert_eq!(
        children(&obs, &d),
        vec![lockwright::zk::names::child_name(g.node())],
        "one node, the one held: no orphan"
    );
    block_on(g.release()).unwrap();
    assert!(children(&obs, &d).is_empty());
}

/// A node owned by the session the client runs now is kept when the attempt notices the
/// session changed under it (a shared client renewed it between the attempt's session check
/// and its create). Before the fix the attempt dropped the node as an old session's, created
/// a second one behind it, and the try failed, held by its own first node (this test then
/// fails: two children).
#[test]
fn a_node_created_in_a_session_renewed_under_the_attempt_is_kept() {
    let (f, obs, _server) = faulty(&[Fault::SwapThenCreate]);
    let d = dir("session-swap");
    // The directory exists, so the swapped create is the one that makes the node.
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.try_acquire()).expect("its own node is the lowest");
    assert_eq!(g.session(), f.new.session());
    assert_eq!(
        children(&obs, &d),
        vec![lockwright::zk::names::child_name(g.node())],
        "one node, the one held: no orphan"
    );
    block_on(g.release()).unwrap();
    assert!(children(&obs, &d).is_empty());
}

#[test]
fn a_create_whose_reply_was_lost_unapplied_is_made_again() {
    let (f, obs, _server) = faulty(&[Fault::Create { applied: false }]);
    let d = dir("lost-create-unapplied");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    assert_eq!(children(&obs, &d).len(), 1);
    block_on(g.release()).unwrap();
}

#[test]
fn no_protection_orphans_the_node_of_a_lost_create_and_waits_behind_it() {
    // CURATOR-79: without the protected search the client cannot find its node again.
    let (f, obs, _server) = faulty(&[Fault::Create { applied: true }]);
    let d = dir("no-protection");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::NoProtection);
    let e = block_on(m.try_acquire()).unwrap_err();
    let orphan = e.holder().expect("named").node.clone();
    assert!(
        orphan.starts_with(&format!("{d}/lock-")),
        "plain names: {orphan}"
    );
    let stat = block_on(obs.check_node(&orphan)).unwrap().unwrap();
    assert_eq!(
        stat.ephemeral_owner,
        f.session(),
        "blocked by its own orphan"
    );
    block_on(obs.delete_node(&orphan)).unwrap();
}

#[test]
fn a_delete_whose_reply_was_lost_is_retried() {
    let (f, obs, _server) = faulty(&[Fault::Delete { applied: false }]);
    let d = dir("lost-delete");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    block_on(g.release()).unwrap();
    assert!(
        children(&obs, &d).is_empty(),
        "the retried delete removed the node"
    );
}

#[test]
fn release_forgets_leaves_the_node_after_a_lost_delete_reply() {
    // CURATOR-486 / CURATOR-678: the hold is dropped, the node stays while the session lives.
    let (f, obs, _server) = faulty(&[Fault::Delete { applied: false }]);
    let d = dir("release-forgets");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::ReleaseForgets);
    let g = block_on(m.acquire()).unwrap();
    let node = g.node().to_string();
    block_on(g.release()).unwrap();
    assert!(
        block_on(obs.check_node(&node)).unwrap().is_some(),
        "the node was left behind"
    );
    let other = ZkMutex::new(obs.clone(), &d).unwrap();
    let e = block_on(other.try_acquire()).unwrap_err();
    assert_eq!(e.holder().map(|h| h.node.as_str()), Some(node.as_str()));
    block_on(obs.delete_node(&node)).unwrap();
}

#[test]
fn after_a_lost_create_and_a_new_session_the_old_sessions_node_is_not_adopted() {
    // The CURATOR-498 fix: the search compares the node's owner with the current session.
    let (f, obs, _server) = faulty(&[Fault::CreateThenRestart]);
    let d = dir("restart-curator");
    let old_session = f.old.session();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let waiter = {
        let m = m.clone();
        std::thread::spawn(move || block_on(m.acquire()).unwrap())
    };
    // A fresh node in the new session queues behind the old session's node ...
    assert!(eventually(Duration::from_secs(10), || children(&obs, &d)
        .len()
        == 2));
    // ... which goes when the abandoned session ends (the model's ExpireOldSession).
    block_on(f.old.kill_session()).unwrap();
    let g = waiter.join().unwrap();
    assert_ne!(g.session(), old_session);
    assert_eq!(g.session(), f.new.session());
    block_on(g.ensure_valid()).unwrap();
    block_on(g.release()).unwrap();
}

#[test]
fn adopt_old_session_holds_through_a_node_of_the_abandoned_session() {
    // CURATOR-498 / CURATOR-604: the search takes our uuid's node from the old session.
    let (f, _obs, _server) = faulty(&[Fault::CreateThenRestart]);
    let d = dir("restart-adopt");
    let old_session = f.old.session();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::AdoptOldSession);
    let g = block_on(m.acquire()).unwrap();
    assert_eq!(
        g.session(),
        old_session,
        "it holds through the old session's node"
    );
    // The node dies with a session this client no longer runs: the check catches it.
    let e = block_on(g.ensure_valid()).unwrap_err();
    assert!(
        matches!(e.lost_reason(), Some(LostReason::NodeReplaced { owner, .. }) if owner == old_session),
        "{e}"
    );
}

#[test]
fn delete_by_name_retry_uses_plain_names() {
    let (f, _obs, _server) = faulty(&[]);
    let d = dir("plain-names");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::DeleteByNameRetry);
    let g = block_on(m.acquire()).unwrap();
    assert!(g.node().starts_with(&format!("{d}/lock-")), "{}", g.node());
    block_on(g.release()).unwrap();
}

#[test]
fn unfenced_writes_land_after_the_lock_is_lost() {
    let (f, obs, _server) = faulty(&[]);
    let d = dir("unfenced");
    let resource = "/lockwright-test/unfenced-resource";
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::UnfencedWrites);
    let g = block_on(m.acquire()).unwrap();
    block_on(obs.delete_node(g.node())).unwrap();
    block_on(g.guarded_write(&[GuardedOp::create(resource, "late")])).unwrap();
    assert_eq!(
        block_on(obs.read_node(resource)).unwrap().0,
        b"late",
        "the write landed"
    );
    block_on(obs.delete_node(resource)).unwrap();
}

#[test]
fn fence_by_sequence_tokens_restart_with_a_recreated_parent() {
    let (f, obs, _server) = faulty(&[]);
    let d = dir("fence-by-sequence");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::FenceBySequence);
    let mut tokens = Vec::new();
    for _ in 0..2 {
        let g = block_on(m.acquire()).unwrap();
        assert_eq!(g.token().get(), g.sequence());
        tokens.push(g.token());
        block_on(g.release()).unwrap();
        assert!(eventually(Duration::from_secs(10), || block_on(
            obs.check_node(&d)
        )
        .unwrap()
        .is_none()));
    }
    assert_eq!(
        tokens[0], tokens[1],
        "a later holder's token is not larger: unsafe"
    );
}

/// Polls `fut` until it completes or `d` passes (the caller's timeout around a call): `None`
/// when the timeout fired, and `fut` was dropped where it stood.
fn within<T>(f: &Faulty, d: Duration, fut: impl Future<Output = T>) -> Option<T> {
    use std::pin::pin;
    use std::task::Poll;
    let mut fut = pin!(fut);
    let mut timer = pin!(f.sleep(d));
    block_on(std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    }))
}

#[test]
fn a_release_dropped_after_a_lost_delete_reply_still_deletes_the_node() {
    // Issue #20 item 1 (the CURATOR-486 class): the delete's reply is lost, and the caller's
    // timeout drops `release()` while it waits to retry. The node must not stay behind.
    let (f, obs, _server) = faulty(&[Fault::Delete { applied: false }]);
    let d = dir("release-dropped");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    let node = g.node().to_string();
    assert!(
        within(&f, Duration::from_millis(5), g.release()).is_none(),
        "the release outlived its timeout (the retry pause is 10 ms)"
    );
    assert!(
        eventually(Duration::from_secs(10), || block_on(obs.check_node(&node))
            .unwrap()
            .is_none()),
        "{node} was left behind by a dropped release: every other client waits behind it"
    );
    let other = ZkMutex::new(obs.clone(), &d).unwrap();
    block_on(block_on(other.try_acquire()).unwrap().release()).unwrap();
}

/// `obs` holds `d`; returns the guard and the holder's child name.
fn hold(obs: &ZkClient, d: &str) -> (lockwright::zk::ZkGuard, String) {
    let g = block_on(ZkMutex::new(obs.clone(), d).unwrap().acquire()).unwrap();
    let name = lockwright::zk::names::child_name(g.node()).to_string();
    (g, name)
}

#[test]
fn a_try_acquire_dropped_while_giving_up_still_deletes_its_node() {
    // Issue #20 item 2: the try finds the lock held and deletes its node; that delete hangs
    // (a disconnected client) and the caller drops the future meanwhile.
    let (f, obs, _server) = faulty(&[Fault::StallDelete { ms: 2000 }]);
    let d = dir("give-up-dropped");
    let (held, holder) = hold(&obs, &d);
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    assert!(
        within(&f, Duration::from_millis(300), m.try_acquire()).is_none(),
        "the give-up's delete hangs for 2 s"
    );
    assert!(
        eventually(Duration::from_secs(10), || children(&obs, &d)
            == [holder.clone()]),
        "the node of the dropped try was left behind: {:?}",
        children(&obs, &d)
    );
    block_on(held.release()).unwrap();
}

#[test]
fn acquire_timeout_returns_within_its_timeout_plus_one_bounded_request() {
    // Issue #20 item 2: a give-up's delete that hangs must not hold the caller past its
    // timeout by more than one bounded request; the node is deleted in the background.
    let (f, obs, _server) = faulty(&[Fault::StallDelete { ms: 4000 }]);
    let d = dir("timeout-bounded");
    let (held, holder) = hold(&obs, &d);
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let start = Instant::now();
    let e = block_on(m.acquire_timeout(Duration::from_millis(100))).unwrap_err();
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(100)
            + lockwright::zk::GIVE_UP_WAIT
            + Duration::from_millis(500),
        "acquire_timeout(100 ms) took {took:?}: {e}"
    );
    assert!(
        matches!(
            &e,
            lockwright::zk::ZkLockError::TimedOut {
                cleanup: lockwright::zk::Cleanup::Background { node: Some(_) },
                ..
            }
        ),
        "{e}"
    );
    assert!(
        eventually(Duration::from_secs(10), || children(&obs, &d)
            == [holder.clone()]),
        "the background delete did not remove our node: {:?}",
        children(&obs, &d)
    );
    block_on(held.release()).unwrap();
}
