//! Cancel safety on the real server: a `release()` dropped after a lost delete reply, a
//! `try_acquire` dropped while its give-up's delete hangs, an `acquire` dropped while its
//! create's reply is awaited, `acquire_timeout` bounded by its timeout plus one bounded request.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lockwright::zk::{block_on, Coordination, ZkClient, ZkDefect, ZkMutex};

use super::faulty::{faulty, Fault, Faulty};
use crate::zk_support::{children, dir, eventually};

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
    let _quiet = crate::timing();
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

/// The caller drops an `acquire` while its create's reply is awaited; the server has made the
/// node (the model's `LoseReply(applied)`, the reply never read, then `Abandon` at
/// `CreateLost`). The dropped attempt hands a search to a task of its own, which finds the node
/// by its protection id in the session and deletes it (the model's cleanup slot: `CleanupFind`, then
/// `CleanupDelete`). Twin:
/// `give_up_cancel_unsafe_leaves_the_node_of_a_create_whose_reply_was_awaited`.
#[test]
fn an_acquire_dropped_while_its_create_reply_is_awaited_still_deletes_the_node() {
    let (f, obs, _server) = faulty(&[Fault::StallCreate { ms: 2000 }]);
    let d = dir("create-dropped");
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    assert!(
        within(&f, Duration::from_millis(300), m.acquire()).is_none(),
        "the create's reply hangs for 2 s"
    );
    assert!(
        eventually(Duration::from_secs(10), || children(&obs, &d).is_empty()),
        "the node of the dropped acquire was left behind: {:?}",
        children(&obs, &d)
    );
    let other = ZkMutex::new(obs.clone(), &d).unwrap();
    block_on(block_on(other.try_acquire()).unwrap().release()).unwrap();
}

/// The twin: with `give-up-cancel-unsafe` the dropped acquire hands nothing on, and the node
/// its create made stays in the live session, ahead of every other client.
#[test]
fn give_up_cancel_unsafe_leaves_the_node_of_a_create_whose_reply_was_awaited() {
    let (f, obs, _server) = faulty(&[Fault::StallCreate { ms: 2000 }]);
    let d = dir("create-dropped-unsafe");
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::GiveUpCancelUnsafe);
    assert!(within(&f, Duration::from_millis(300), m.acquire()).is_none());
    // Longer than the stalled reply and any cleanup would take.
    std::thread::sleep(Duration::from_secs(3));
    let left = children(&obs, &d);
    assert_eq!(left.len(), 1, "{left:?}");
    let node = format!("{d}/{}", left[0]);
    let stat = block_on(obs.check_node(&node))
        .unwrap()
        .expect("still there");
    assert_eq!(
        stat.ephemeral_owner,
        f.session(),
        "a node of the live session"
    );
    let other = ZkMutex::new(obs.clone(), &d).unwrap();
    assert!(
        block_on(other.try_acquire()).is_err(),
        "the orphan is ahead"
    );
    block_on(obs.delete_node(&node)).unwrap();
}

/// Issue #33, identifiers as the production code makes them: an acquire dropped while its
/// create's reply hangs (the create was applied), and the next acquire on the same mutex and
/// client started at once, while the dropped one's cleanup still runs (its delete hangs
/// 1.5 s, then loses its reply and is retried). The cleanup finds the dropped attempt's node
/// by that attempt's protection id (a fresh uuid per acquire, `new_protection_id`), so it
/// deletes that node and never the next attempt's: the next acquire waits behind the old node
/// and is granted when the cleanup has deleted it, and only its own node is left (the
/// observer's listing).
#[test]
fn a_dropped_acquires_cleanup_beside_the_next_acquire_deletes_only_its_own_node() {
    let (f, obs, _server) = faulty(&[
        Fault::StallCreate { ms: 800 },
        Fault::StallDelete { ms: 1500 },
    ]);
    let d = dir("cleanup-beside-next");
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    assert!(
        within(&f, Duration::from_millis(100), m.acquire()).is_none(),
        "the create's reply hangs for 800 ms"
    );
    let first = children(&obs, &d);
    assert_eq!(first.len(), 1, "the dropped create was applied: {first:?}");
    let started = Instant::now();
    let g = block_on(m.acquire_timeout(Duration::from_secs(15))).expect("the next acquire");
    let mine = lockwright::zk::names::child_name(g.node()).to_string();
    assert_ne!(mine, first[0], "a node of its own");
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "granted after {:?}: it did not wait behind the dropped attempt's node",
        started.elapsed()
    );
    assert_eq!(
        children(&obs, &d),
        vec![mine.clone()],
        "only the grant's node"
    );
    block_on(g.ensure_valid()).expect("the cleanup did not touch the next attempt's node");
    block_on(g.release()).unwrap();
    assert!(children(&obs, &d).is_empty());
}
