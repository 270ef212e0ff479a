//! Losing the lock on a real server: an expired session (forced from a second connection on
//! the same session, ZooKeeper's `KillSession`), a suspended connection (the server frozen with
//! SIGSTOP), and an acquire that timed out with its create in flight.

use crate::zk_support;

use std::time::Duration;

use lockwright::zk::{
    block_on, Cleanup, Coordination, GuardedOp, HighWaterMark, HoldState, LostReason, ZkClient,
    ZkLockError, ZkMutex,
};
use lockwright_checks::peers::zookeeper::{ZkServer, ZkServerConfig};
use zk_support::{children, client, client_with, dir, eventually, server};

#[test]
fn an_expired_session_makes_ensure_valid_and_guarded_writes_report_lock_lost() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("expire-holder");
    let resource = "/lockwright-test/expire-holder-resource";
    let ma = ZkMutex::new(a.clone(), &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    let store = HighWaterMark::new();
    let ga = block_on(ma.acquire()).unwrap();
    block_on(ga.guarded_write(&[GuardedOp::create(resource, "a")])).unwrap();
    store.write_fenced(ga.token(), |()| ()).unwrap();
    let old_session = a.session();
    let waiter = std::thread::spawn(move || block_on(mb.acquire()).unwrap());
    assert!(eventually(Duration::from_secs(10), || children(&b, &d)
        .len()
        == 2));

    block_on(a.kill_session()).unwrap();

    // The server deleted A's node: B is granted.
    let gb = waiter.join().unwrap();
    assert!(gb.token() > ga.token());
    // A has not asked yet, but the session state already says so.
    assert!(matches!(
        ga.state(),
        HoldState::Lost(LostReason::SessionExpired { .. })
    ));
    let e = block_on(ga.ensure_valid()).unwrap_err();
    assert_eq!(
        e.lost_reason(),
        Some(LostReason::SessionExpired {
            session: old_session
        }),
        "{e}"
    );
    assert!(e.to_string().contains("expired"), "{e}");
    assert_ne!(a.session(), old_session, "A learned: a new session");
    // Final: every later use says so, and nothing is written.
    let e = block_on(ga.guarded_write(&[GuardedOp::set_data(resource, "a-late")])).unwrap_err();
    assert!(e.is_lost(), "{e}");
    assert_eq!(block_on(b.read_node(resource)).unwrap().0, b"a");
    // B writes; a late fenced write by A is refused by the resource.
    block_on(gb.guarded_write(&[GuardedOp::set_data(resource, "b")])).unwrap();
    store.write_fenced(gb.token(), |()| ()).unwrap();
    assert!(store.write_fenced(ga.token(), |()| ()).is_err());
    block_on(ga.release()).unwrap();
    block_on(gb.release()).unwrap();
    block_on(b.delete_node(resource)).unwrap();
}

/// The lost update on a real server, and claim-at-acquire preventing it. A holds and reads;
/// its session expires; B is granted (a larger czxid) and reads. Without a claim (the twin, a
/// bare fence) A's late write is accepted — nobody has written B's token yet — and B's write,
/// computed from what it read, is accepted after it: A's update is lost. With `ZkGuard::claim`
/// B's claim comes before its read, and A's late write through its `Claimed` handle is refused.
#[test]
fn a_claim_at_acquire_refuses_the_expired_holders_write_inside_the_next_update() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("claim-at-acquire");
    let ma = ZkMutex::new(a.clone(), &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    let (bare, claimed_store) = (HighWaterMark::new(), HighWaterMark::new());
    let ga = block_on(ma.acquire()).unwrap();
    let ca = ga.claim(&claimed_store).expect("A's claim");
    assert_eq!(ca.read(HighWaterMark::highest), Some(ga.token()), "A read");
    let waiter = std::thread::spawn(move || block_on(mb.acquire()).unwrap());
    assert!(eventually(Duration::from_secs(10), || children(&b, &d)
        .len()
        == 2));
    block_on(a.kill_session()).unwrap();
    let gb = waiter.join().unwrap();
    assert!(gb.token() > ga.token(), "czxid tokens grow");

    // Twin, the bare fence: B reads (no mark), A's late write lands, then B's: a lost update.
    assert_eq!(bare.highest(), None, "B read");
    assert_eq!(
        bare.write_fenced(ga.token(), |()| ()),
        Ok(()),
        "A's late write is accepted"
    );
    assert_eq!(
        bare.write_fenced(gb.token(), |()| ()),
        Ok(()),
        "B's write overwrites it unseen"
    );

    // Claim at acquire: B claims before reading; A's late write is refused.
    let cb = gb.claim(&claimed_store).expect("B's claim");
    assert_eq!(cb.read(HighWaterMark::highest), Some(gb.token()), "B read");
    let late = ca.write(|_| ()).unwrap_err();
    assert_eq!((late.offered, late.highest), (ga.token(), gb.token()));
    assert_eq!(cb.write(|_| ()), Ok(()));
    block_on(ga.release()).unwrap();
    block_on(gb.release()).unwrap();
}

#[test]
fn a_guarded_write_right_after_the_expiry_is_refused_by_the_server() {
    let s = server();
    let a = client(&s);
    let d = dir("expire-write");
    let resource = "/lockwright-test/expire-write-resource";
    let m = ZkMutex::new(a.clone(), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    block_on(g.guarded_write(&[GuardedOp::create(resource, "before")])).unwrap();
    block_on(a.kill_session()).unwrap();
    let e = block_on(g.guarded_write(&[GuardedOp::set_data(resource, "after")])).unwrap_err();
    assert!(
        matches!(e.lost_reason(), Some(LostReason::SessionExpired { .. })),
        "{e}"
    );
    assert_eq!(block_on(a.read_node(resource)).unwrap().0, b"before");
    block_on(g.release()).unwrap();
    block_on(a.delete_node(resource)).unwrap();
}

#[test]
fn a_waiter_whose_session_expires_starts_over_and_still_acquires() {
    let _quiet = crate::timing();
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("expire-waiter");
    let ma = ZkMutex::new(a.clone(), &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    let ga = block_on(ma.acquire()).unwrap();
    let waiter = std::thread::spawn(move || block_on(mb.acquire()).unwrap());
    assert!(eventually(Duration::from_secs(10), || children(&a, &d)
        .len()
        == 2));
    let first = children(&a, &d);
    block_on(b.kill_session()).unwrap();
    // B's watch reports the expiry; B opens a new session and queues a new node.
    assert!(eventually(Duration::from_secs(10), || {
        let now = children(&a, &d);
        now.len() == 2 && now != first
    }));
    assert_eq!(b.stats().renewals, 1);
    block_on(ga.release()).unwrap();
    let gb = waiter.join().unwrap();
    assert_eq!(gb.session(), b.session());
    block_on(gb.ensure_valid()).unwrap();
    block_on(gb.release()).unwrap();
}

/// A server of its own: these tests freeze it.
fn frozen_server(container_check_ms: Option<u32>) -> ZkServer {
    ZkServer::start_with(ZkServerConfig {
        container_check_ms,
        ..ZkServerConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e:#}"))
}

#[test]
fn a_suspended_connection_is_reported_and_clears_when_the_session_survives() {
    let _quiet = crate::timing();
    let s = frozen_server(Some(100));
    // 4 s session: the client calls the connection lost after 1.6 s of silence and the session
    // expired after 5.6 s; the server expires it after 4 s. A 3 s freeze is in between.
    let zk = client_with(&s, Duration::from_secs(4));
    let m = ZkMutex::new(zk.clone(), "/locks/suspend").unwrap();
    let g = block_on(m.acquire()).unwrap();
    s.pause();
    let suspended = eventually(Duration::from_secs(3), || {
        g.state() == HoldState::Lost(LostReason::Suspended)
    });
    let e = block_on(g.ensure_valid()).unwrap_err();
    s.resume();
    assert!(suspended, "the disconnect was not noticed");
    assert_eq!(e.lost_reason(), Some(LostReason::Suspended), "{e}");
    assert!(!LostReason::Suspended.is_final());
    assert!(
        eventually(Duration::from_secs(5), || block_on(g.ensure_valid())
            .is_ok()),
        "the hold did not come back with the session"
    );
    block_on(g.release()).unwrap();
}

#[test]
fn an_acquire_dropped_with_its_create_in_flight_leaves_no_node_behind() {
    let _quiet = crate::timing();
    // CURATOR-79's setting: the caller gives up (drops the acquire future) while the create is
    // on its way; the node it makes must not be orphaned.
    // Containers are not reaped here, so the directory survives the freeze.
    let s = frozen_server(None);
    // A 10 s session: the connection is only called lost after 4 s of silence, longer than
    // the freeze, so the create queued in it is applied when the server thaws.
    let zk = client_with(&s, Duration::from_secs(10));
    let d = "/locks/in-flight";
    let m = ZkMutex::new(zk.clone(), d).unwrap();
    block_on(m.acquire()).unwrap().release_now();
    let (creates, deletes) = (zk.stats().creates, zk.stats().deletes);
    s.pause();
    let dropped = poll_for(m.acquire(), Duration::from_millis(400));
    assert!(dropped.is_none(), "acquired while the server was frozen?");
    assert_eq!(zk.stats().creates, creates + 1, "the create was sent");
    std::thread::sleep(Duration::from_millis(400));
    s.resume();
    assert!(
        eventually(Duration::from_secs(10), || children(&zk, d).is_empty()
            && zk.stats().deletes > deletes),
        "left behind: {:?} (deletes {} → {})",
        children(&zk, d),
        deletes,
        zk.stats().deletes
    );
}

#[test]
fn acquire_timeout_gives_up_waiting_but_not_a_connected_request() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("timeout-zero");
    let ma = ZkMutex::new(a, &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    // Uncontended, a zero timeout still gets the lock: the create and the listing are answered.
    let g = block_on(mb.acquire_timeout(Duration::ZERO)).unwrap();
    block_on(g.release()).unwrap();
    let g = block_on(ma.acquire()).unwrap();
    let e = block_on(mb.acquire_timeout(Duration::ZERO)).unwrap_err();
    assert!(
        matches!(
            e,
            ZkLockError::TimedOut {
                cleanup: Cleanup::Deleted { .. },
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(children(&b, &d).len(), 1);
    block_on(g.release()).unwrap();
}

/// Polls `fut` on this thread for at most `d`, then drops it (`None`).
fn poll_for<F: std::future::Future>(fut: F, d: Duration) -> Option<F::Output> {
    let end = std::time::Instant::now() + d;
    let mut fut = std::pin::pin!(fut);
    block_on(std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(v));
        }
        if std::time::Instant::now() >= end {
            return std::task::Poll::Ready(None);
        }
        std::thread::sleep(Duration::from_millis(2));
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }))
}

/// Releases and waits for the delete.
trait ReleaseNow {
    fn release_now(self);
}

impl ReleaseNow for lockwright::zk::ZkGuard<ZkClient> {
    fn release_now(self) {
        block_on(self.release()).unwrap();
    }
}

#[test]
fn a_lock_node_deleted_under_a_live_session_is_reported_by_ensure_valid_state_and_writes() {
    // Issue #20 item 7: an operator's `deleteall` (or a peer's delete by name) removes the held
    // node while our session lives. The first check must say so, and from then on `state()`
    // and guarded writes too.
    let s = server();
    let (a, other) = (client(&s), client(&s));
    let d = dir("deleted-under-live-session");
    let resource = "/lockwright-test/deleted-under-live-session-resource";
    let g = block_on(ZkMutex::new(a.clone(), &d).unwrap().acquire()).unwrap();
    block_on(g.ensure_valid()).unwrap();
    assert_eq!(g.state(), HoldState::Held);
    block_on(other.delete_node(g.node())).unwrap();
    let e = block_on(g.ensure_valid()).unwrap_err();
    assert_eq!(e.lost_reason(), Some(LostReason::NodeDeleted), "{e}");
    assert_eq!(g.state(), HoldState::Lost(LostReason::NodeDeleted));
    let e = block_on(g.guarded_write(&[GuardedOp::create(resource, "late")])).unwrap_err();
    assert_eq!(e.lost_reason(), Some(LostReason::NodeDeleted), "{e}");
    assert!(
        block_on(other.check_node(resource)).unwrap().is_none(),
        "nothing was written"
    );
    block_on(g.release()).unwrap();
}

/// The held node is deleted and a node of the same path made again by another session (an
/// operator, a peer whose names repeat). `ensure_valid` reports `NodeReplaced`, and the loss
/// must leave the new node alone: it is not ours. Before the fix the guard deleted the path by
/// name with version -1 as soon as it saw the loss (this test then fails: the other session's
/// node is gone).
#[test]
fn a_replaced_lock_node_is_reported_and_never_deleted() {
    let s = server();
    let (a, other) = (client(&s), client(&s));
    let d = dir("replaced-under-live-session");
    let g = block_on(ZkMutex::new(a.clone(), &d).unwrap().acquire()).unwrap();
    let node = g.node().to_string();
    block_on(other.delete_node(&node)).unwrap();
    block_on(other.guarded_write(None, &[GuardedOp::create(node.as_str(), "not yours")])).unwrap();
    let e = block_on(g.ensure_valid()).unwrap_err();
    assert!(
        matches!(e.lost_reason(), Some(LostReason::NodeReplaced { .. })),
        "{e}"
    );
    block_on(g.release()).unwrap();
    // The loss's background work (if any) has long run by now.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        block_on(other.check_node(&node)).unwrap().is_some(),
        "the lost hold deleted {node}, which another session made"
    );
    block_on(other.delete_node(&node)).unwrap();
}

#[test]
fn a_write_into_the_lock_node_is_reported_as_node_changed() {
    // Issue #20 item 6: Curator's revoker writes `__REVOKE__` into the holder's node; the
    // guarded write's version check fails with BADVERSION, which is its own reason (not a
    // node replaced by "session 0").
    let s = server();
    let (a, other) = (client(&s), client(&s));
    let d = dir("revoked");
    let resource = "/lockwright-test/revoked-resource";
    let g = block_on(ZkMutex::new(a.clone(), &d).unwrap().acquire()).unwrap();
    block_on(other.guarded_write(None, &[GuardedOp::set_data(g.node(), "__REVOKE__")])).unwrap();
    let e = block_on(g.guarded_write(&[GuardedOp::create(resource, "x")])).unwrap_err();
    assert_eq!(e.lost_reason(), Some(LostReason::NodeChanged), "{e}");
    assert!(e.to_string().contains("__REVOKE__"), "{e}");
    assert_eq!(g.state(), HoldState::Lost(LostReason::NodeChanged));
    // The node is still ours: the loss deletes it in the background.
    let node = g.node().to_string();
    assert!(
        eventually(Duration::from_secs(10), || block_on(
            other.check_node(&node)
        )
        .unwrap()
        .is_none()),
        "the changed node of a lost hold was not deleted"
    );
    block_on(g.release()).unwrap();
}

/// The loss notification: `lost()` stays pending while the lock is held, and completes with
/// `NodeDeleted` once an operator deletes the node under the live session (a watch, not a
/// poll: it completes well within the session timeout's checks).
#[test]
fn lost_completes_when_the_node_is_deleted_and_not_before() {
    let s = server();
    let (a, op) = (client(&s), client(&s));
    let d = dir("lost-notification");
    let m = ZkMutex::new(a, &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    // Held: still pending after half a second.
    assert!(poll_for(g.lost(), Duration::from_millis(500)).is_none());
    let node = g.node().to_string();
    let deleter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        block_on(op.delete_node(&node)).unwrap();
    });
    let reason = poll_for(g.lost(), Duration::from_secs(10))
        .expect("lost() completed")
        .expect("a loss, not a check error");
    deleter.join().unwrap();
    assert_eq!(reason, LostReason::NodeDeleted);
    assert!(!m.holds(), "a final loss is not held");
}

/// `lost()` after the session expired: `SessionExpired`.
#[test]
fn lost_completes_with_the_expired_session() {
    let s = server();
    let a = client(&s);
    let d = dir("lost-notification-expiry");
    let m = ZkMutex::new(a.clone(), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    let session = a.session();
    block_on(a.kill_session()).unwrap();
    let reason = poll_for(g.lost(), Duration::from_secs(10))
        .expect("lost() completed")
        .expect("a loss, not a check error");
    assert_eq!(reason, LostReason::SessionExpired { session });
}

/// The participant list (holder first, then the waiters in turn) and "held by this value".
#[test]
fn participants_list_the_holder_first_and_is_held_follows_the_guard() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("participants");
    let ma = ZkMutex::new(a, &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    assert!(block_on(ma.participants()).unwrap().is_empty());
    assert!(!ma.holds());
    let ga = block_on(ma.acquire()).unwrap();
    assert!(ma.holds());
    assert!(
        !ma.clone().holds(),
        "a clone is another value: it holds nothing"
    );
    assert!(!mb.holds());
    let mb2 = mb.clone();
    let waiter = std::thread::spawn(move || block_on(mb2.acquire()).unwrap());
    assert!(eventually(Duration::from_secs(10), || children(&b, &d)
        .len()
        == 2));
    let p = block_on(mb.participants()).unwrap();
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(p[0], ga.node(), "the holder comes first");
    block_on(ga.release()).unwrap();
    assert!(!ma.holds());
    let gb = waiter.join().unwrap();
    assert_eq!(
        block_on(ma.participants()).unwrap(),
        vec![gb.node().to_string()]
    );
    block_on(gb.release()).unwrap();
}

/// ACLs and authentication: two clients authenticated as the same digest user, creating with
/// `CreatorAll`, exclude each other as usual; a session without that identity can neither
/// delete the held node (the server answers `NoAuth`, so no one can pull the lock from under
/// the holder) nor take part (its acquire fails with a hard error naming the refusal, and
/// leaves nothing behind).
#[test]
fn creator_only_acls_keep_unauthenticated_sessions_away_from_the_lock() {
    let s = server();
    let authed = || {
        block_on(
            ZkClient::builder()
                .session_timeout(Duration::from_secs(4))
                .auth("digest", b"locker:secret")
                .acl(lockwright::zk::ZkAcl::CreatorAll)
                .connect(&s.connect_string()),
        )
        .unwrap()
    };
    let (a, b) = (authed(), authed());
    let stranger = client(&s);
    // A top-level path of its own: the authenticated client creates the missing ancestors
    // with its ACL, and an ancestor other tests share (`/lockwright-test`) would then refuse
    // them (a container, it may also be reaped and re-created by either side).
    let d = "/lockwright-acl-test/creator-all";
    let ma = ZkMutex::new(a, d).unwrap();
    let mb = ZkMutex::new(b, d).unwrap();
    let g = block_on(ma.acquire()).unwrap();
    assert!(block_on(mb.try_acquire()).unwrap_err().is_held());
    // The stranger cannot delete the held node.
    let e = block_on(stranger.delete_node(g.node())).unwrap_err();
    assert!(
        matches!(e, lockwright::zk::CoordError::Rejected { ref detail } if detail.contains("auth")),
        "{e}"
    );
    block_on(g.ensure_valid()).unwrap();
    // Nor take part: listing the directory is refused, a hard error.
    let e = block_on(ZkMutex::new(stranger.clone(), d).unwrap().try_acquire()).unwrap_err();
    assert!(matches!(e, ZkLockError::Zk { .. }), "{e}");
    g.release_now();
    let g = block_on(mb.try_acquire()).unwrap();
    assert_eq!(
        block_on(mb.participants()).unwrap(),
        vec![g.node().to_string()]
    );
    g.release_now();
}
