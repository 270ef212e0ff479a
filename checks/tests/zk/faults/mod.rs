//! Lost replies and a replaced session on a real server, through a fault-injecting
//! `Coordination` wrapped around `ZkClient` (`faulty.rs`): the model's `LoseReply(applied | not
//! applied)` on a create or a delete, `RestartClient` (a new session while the old one lives
//! on), a follower that has not applied a lost create yet (`LaggedSearch`, answered by `sync`),
//! and a lock node whose name the recipe does not read (`MisreadOwnNode`). The recipe handles
//! each as the model's `curator` variant does, and every test-only defect switch (the model's
//! broken variants) shows its bug on the real server. `cancel.rs`: dropped futures.

use crate::zk_support;

mod cancel;
mod faulty;
mod stopped;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use faulty::{faulty, Fault};
use lockwright::zk::{block_on, Coordination, GuardedOp, LostReason, ZkDefect, ZkMutex};
use zk_support::{children, dir, eventually};

/// Waits (up to 10 s) until the lock directory `d` holds exactly one node, and returns its path
/// and its Stat as the observer reads them.
fn the_only_node_left(
    obs: &lockwright::zk::ZkClient,
    d: &str,
) -> (String, lockwright::zk::NodeStat) {
    assert!(
        eventually(Duration::from_secs(10), || children(obs, d).len() == 1),
        "{:?}",
        children(obs, d)
    );
    let left = format!("{d}/{}", children(obs, d)[0]);
    let stat = block_on(obs.check_node(&left))
        .unwrap()
        .expect("still there");
    (left, stat)
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

/// The twin: with the `drop-own-on-session-swap` defect the attempt drops the node its
/// create made in the renewed session, creates a second one behind it, and the try fails,
/// held by its own first node, which stays while the session lives.
#[test]
fn drop_own_on_session_swap_waits_behind_its_own_node() {
    let (f, obs, _server) = faulty(&[Fault::SwapThenCreate]);
    let d = dir("drop-own-on-session-swap");
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::DropOwnOnSessionSwap);
    let e = block_on(m.try_acquire()).expect_err("held by its own first node");
    assert!(matches!(e, lockwright::zk::ZkLockError::Held { .. }), "{e}");
    // The try's second node is deleted as it gives up; the dropped one stays.
    let (_, stat) = the_only_node_left(&obs, &d);
    assert_eq!(
        stat.ephemeral_owner,
        f.new.session(),
        "a node of the live session"
    );
}

/// Two mutexes share one client; the session is renewed under the first one's attempt (as the
/// other mutex does when it learns the old session expired), and that attempt's create, run in
/// the renewed session, loses its reply. The attempt notices the renewal before its search and
/// searches on in the new session: it finds the node and holds through it, and once it releases
/// the other mutex acquires at once. Before the fix the search was dropped on the session
/// change: a second node was created behind the first, the try failed, held by its own first
/// node (this test then fails).
#[test]
fn a_lost_create_in_a_session_renewed_under_the_attempt_is_found() {
    let (f, obs, _server) = faulty(&[Fault::SwapThenCreateLost]);
    let d = dir("session-swap-lost-create");
    block_on(obs.ensure_dir(&d)).unwrap();
    let first = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let other = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(first.try_acquire()).expect("the lost create's node is found and lowest");
    assert_eq!(g.session(), f.new.session());
    assert_eq!(
        children(&obs, &d),
        vec![lockwright::zk::names::child_name(g.node())],
        "one node, the one held: no orphan"
    );
    block_on(g.release()).unwrap();
    let g = block_on(other.try_acquire()).expect("nothing left ahead of the other mutex");
    block_on(g.release()).unwrap();
    assert!(children(&obs, &d).is_empty());
}

/// The twin: with `drop-own-on-session-swap` the attempt drops its search when it notices the
/// renewal, creates a second node behind the one its lost create made, and the try fails, held
/// by that first node; it stays, owned by the live session, and the other mutex sharing the
/// client is held behind it too.
#[test]
fn drop_own_on_session_swap_drops_the_search_and_orphans_the_lost_create() {
    let (f, obs, _server) = faulty(&[Fault::SwapThenCreateLost]);
    let d = dir("drop-own-search");
    block_on(obs.ensure_dir(&d)).unwrap();
    let first = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::DropOwnOnSessionSwap);
    let other = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let e = block_on(first.try_acquire()).expect_err("held by its own first node");
    assert!(matches!(e, lockwright::zk::ZkLockError::Held { .. }), "{e}");
    let (left, stat) = the_only_node_left(&obs, &d);
    assert_eq!(
        stat.ephemeral_owner,
        f.new.session(),
        "a node of the live session"
    );
    let e = block_on(other.try_acquire()).expect_err("the orphan is ahead of everyone");
    assert!(matches!(e, lockwright::zk::ZkLockError::Held { .. }), "{e}");
    block_on(obs.delete_node(&left)).unwrap();
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

/// The listing shows our node under a name the recipe does not read as a lock node (here a
/// create whose name the wrapper bends to `…-lock-x0000000007`; on a real server, a sequence
/// suffix past 2^31, `-2147483648`, before the parser read signed suffixes). The recipe
/// deletes that node by its name and creates again; the old recipe started over at once and
/// left the node in its live session (this test then fails: two children).
#[test]
fn a_node_whose_name_the_listing_does_not_read_is_deleted_before_starting_over() {
    let (f, obs, _server) = faulty(&[Fault::UnreadableName]);
    let d = dir("unreadable-name");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.try_acquire()).expect("the second node is the only lock node");
    assert_eq!(
        children(&obs, &d),
        vec![lockwright::zk::names::child_name(g.node())],
        "one node, the one held: the unread one was deleted"
    );
    block_on(g.release()).unwrap();
    assert!(children(&obs, &d).is_empty());
}

#[test]
fn abandon_without_delete_leaves_the_node_whose_name_it_did_not_read() {
    let (f, obs, _server) = faulty(&[Fault::UnreadableName]);
    let d = dir("abandon-without-delete");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::AbandonWithoutDelete);
    let g = block_on(m.try_acquire()).expect("the unread node is no lock node to wait for");
    let held = lockwright::zk::names::child_name(g.node()).to_string();
    let left: Vec<String> = children(&obs, &d)
        .into_iter()
        .filter(|c| *c != held)
        .collect();
    assert_eq!(
        left.len(),
        1,
        "the unread node stays in the live session: {left:?}"
    );
    assert!(left[0].contains("-lock-x"), "{left:?}");
    block_on(g.release()).unwrap();
}

/// Two mutexes share one client; the handle is restarted (the old session lives on) between
/// the attempt's look at the session and its listing, so the listing runs in the new session
/// and shows the attempt's node of the old session lowest. The attempt sets that listing
/// aside (it ran in another session than the one it knew), drops the old session's node as
/// not its own, creates again in the new session and waits behind the old node: a try is
/// `Held`. Before the fix the listing was read as one of the old session: the try was granted
/// on the old session's node (this test then fails), and once that session timed out another
/// client would be granted beside it.
#[test]
fn a_listing_in_a_session_restarted_under_the_attempt_grants_nothing() {
    let (f, obs, _server) = faulty(&[Fault::SwapThenList]);
    let d = dir("swap-then-list");
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let e = block_on(m.try_acquire()).expect_err("held by the old session's node");
    assert!(matches!(e, lockwright::zk::ZkLockError::Held { .. }), "{e}");
    // The try's own node (new session) is deleted as it gives up; the old session's stays,
    // that session's to time out.
    let (_, stat) = the_only_node_left(&obs, &d);
    assert_eq!(
        stat.ephemeral_owner,
        f.old.session(),
        "the old session's node"
    );
}

/// The twin: the rule as it was (`drop-own-on-session-swap`) reads the listing anyway and is
/// granted on its node of the abandoned session.
#[test]
fn drop_own_on_session_swap_is_granted_on_a_node_of_the_abandoned_session() {
    let (f, obs, _server) = faulty(&[Fault::SwapThenList]);
    let d = dir("swap-then-list-defect");
    block_on(obs.ensure_dir(&d)).unwrap();
    let m = ZkMutex::with_shared(Arc::clone(&f), &d)
        .unwrap()
        .with_defect(ZkDefect::DropOwnOnSessionSwap);
    let g = block_on(m.try_acquire()).expect("granted on the listing of the new session");
    assert_eq!(
        g.session(),
        f.old.session(),
        "granted through the old session's node"
    );
    assert_ne!(g.session(), f.new.session());
}

/// `ensure_valid` on a shared client whose handle is restarted while its `sync` is in flight
/// (the old session lives on). The check must judge by the session the client runs after the
/// answer. Before the fix it compared the node's owner with the session read before the
/// `sync`: the node of the old session passed, and `ensure_valid` said the lock was held
/// while the client ran another session (this test then fails at `expect_err`). Now the loss
/// is `SessionReplaced`, and the node, in the abandoned session, is deleted in the background
/// (judged by the observer's listing).
#[test]
fn ensure_valid_judges_by_the_session_after_its_sync() {
    let (f, obs, _server) = faulty(&[Fault::SwapInSync]);
    let d = dir("swap-in-sync");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    assert_eq!(g.session(), f.old.session());
    let e = block_on(g.ensure_valid()).expect_err("the client runs another session now");
    assert_eq!(
        e.lost_reason(),
        Some(LostReason::SessionReplaced {
            now: f.new.session()
        }),
        "{e}"
    );
    assert!(
        eventually(Duration::from_secs(10), || children(&obs, &d).is_empty()),
        "the old session's node is deleted: {:?}",
        children(&obs, &d)
    );
    drop(g);
}

/// A mutex whose client was restarted under its hold (a shared client; the old session lives
/// on): the hold is lost, so `is_held()` says no and the next acquire through the same value
/// goes ahead. Before the fix `is_held()` said yes and the acquire failed at once with
/// `AlreadyHeld` (this test then fails); now the hold's delete starts and the acquire is
/// granted in the new session (the observer sees only the new node).
#[test]
fn a_hold_of_a_replaced_session_is_not_held() {
    let (f, obs, _server) = faulty(&[]);
    let d = dir("held-after-restart");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    assert!(m.holds());
    f.restart();
    assert!(!m.holds(), "the client runs another session: not held");
    let again = block_on(m.acquire_timeout(Duration::from_secs(10)))
        .unwrap_or_else(|e| panic!("the next acquire goes ahead: {e}"));
    assert_eq!(again.session(), f.new.session());
    assert_eq!(
        children(&obs, &d),
        vec![lockwright::zk::names::child_name(again.node())],
        "only the new hold's node is left"
    );
    drop(g);
    block_on(again.release()).unwrap();
}

/// `claim` on a guard that already knows its lock is lost (its node was deleted, and
/// `ensure_valid` said so) claims nothing: the resource keeps no mark of the lost hold. Before
/// the fix the claim went through (the resource had no higher token), and the lost holder
/// could read and write (this test then fails).
#[test]
fn claim_refuses_a_loss_the_guard_knows() {
    let (f, obs, _server) = faulty(&[]);
    let d = dir("claim-after-loss");
    let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    block_on(obs.delete_node(g.node())).unwrap();
    let e = block_on(g.ensure_valid()).expect_err("the node is gone");
    assert_eq!(e.lost_reason(), Some(LostReason::NodeDeleted), "{e}");
    let store = lockwright::zk::HighWaterMark::new();
    let e = g.claim(&store).expect_err("a known loss claims nothing");
    assert_eq!(e.lost_reason(), Some(LostReason::NodeDeleted), "{e}");
    assert_eq!(store.highest(), None, "the resource was not touched");
    block_on(g.release()).unwrap();
}

/// `lost()` when the server refuses the check (`exists`) or the watch (`getData`) for good: it
/// completes with that error after `REFUSED_CHECKS` tries — whether the lock is held is
/// unknown, and the caller must stop writing — instead of trying again every 100 ms forever
/// (before, both runs timed out: `lost()` never completed). The guard deletes nothing on it.
#[test]
fn lost_completes_with_an_error_when_the_check_is_refused_for_good() {
    for (fault, says) in [
        (Fault::RejectChecks, "the check is refused"),
        (Fault::RejectWatches, "the watch is refused"),
    ] {
        let (f, obs, _server) = faulty(&[fault]);
        let d = dir("lost-refused-check");
        let m = ZkMutex::with_shared(Arc::clone(&f), &d).unwrap();
        let g = block_on(m.acquire()).unwrap();
        // Polled for at most 10 s (five tries, 0.1 + 0.2 + 0.4 + 0.8 s apart).
        let end = std::time::Instant::now() + Duration::from_secs(10);
        let mut lost = std::pin::pin!(g.lost());
        let r = block_on(std::future::poll_fn(|cx| {
            if let std::task::Poll::Ready(v) = lost.as_mut().poll(cx) {
                return std::task::Poll::Ready(Some(v));
            }
            if std::time::Instant::now() >= end {
                return std::task::Poll::Ready(None);
            }
            std::thread::sleep(Duration::from_millis(2));
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }))
        .unwrap_or_else(|| panic!("{fault:?}: lost() completed within 10 s"));
        let e = r.expect_err("a refused check is no loss reason");
        assert!(
            matches!(
                &e,
                lockwright::zk::ZkLockError::Zk {
                    source: lockwright::zk::CoordError::Rejected { detail },
                    ..
                } if detail.contains(says)
            ),
            "{fault:?}: {e:?}"
        );
        // Still there a moment later: a refused check deletes nothing (the caller releases).
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(children(&obs, &d).len(), 1, "{fault:?}");
    }
}
