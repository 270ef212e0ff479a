//! The ZooKeeper mutex on a real ZooKeeper 3.8 server: names, release, exclusion, fairness,
//! re-entrancy, the fencing token, guarded writes, errors, and nothing left behind.

use crate::zk_support;

use std::time::{Duration, Instant};

use lockwright::zk::{
    block_on, BadPathReason, Cleanup, Coordination, GuardedOp, LostReason, OpResult, ZkClient,
    ZkLockError, ZkMutex,
};
use zk_support::{children, client, dir, eventually, server};

/// `<dir>/_c_<uuid>-lock-<10 digits>`: Curator's protected name.
fn assert_curator_name(node: &str, dir: &str) {
    let name = node
        .strip_prefix(&format!("{dir}/"))
        .unwrap_or_else(|| panic!("{node} not under {dir}"));
    let rest = name
        .strip_prefix("_c_")
        .unwrap_or_else(|| panic!("{name}: no _c_"));
    let (uuid, seq) = rest.split_at(36);
    assert!(
        uuid.len() == 36 && uuid.chars().filter(|c| *c == '-').count() == 4,
        "{name}: not a uuid"
    );
    let seq = seq
        .strip_prefix("-lock-")
        .unwrap_or_else(|| panic!("{name}: no -lock-"));
    assert!(
        seq.len() == 10 && seq.bytes().all(|b| b.is_ascii_digit()),
        "{name}"
    );
}

#[test]
fn acquire_creates_a_curator_named_ephemeral_node_and_release_deletes_it() {
    let s = server();
    let zk = client(&s);
    let d = dir("basic");
    let m = ZkMutex::new(zk.clone(), &d).unwrap();
    block_on(async {
        let g = m.acquire().await.unwrap();
        assert_curator_name(g.node(), &d);
        let stat = zk
            .check_node(g.node())
            .await
            .unwrap()
            .expect("the node exists");
        assert_eq!(stat.ephemeral_owner, zk.session(), "ephemeral, ours");
        assert_eq!(g.session(), zk.session());
        g.ensure_valid().await.unwrap();
        let node = g.node().to_string();
        g.release().await.unwrap();
        assert_eq!(
            zk.check_node(&node).await.unwrap(),
            None,
            "release deletes the node"
        );
    });
}

#[test]
fn try_acquire_while_held_names_the_holder_and_leaves_no_node() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("try-held");
    let ma = ZkMutex::new(a, &d).unwrap().with_data("holder A");
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    block_on(async {
        let g = ma.acquire().await.unwrap();
        let e = mb.try_acquire().await.unwrap_err();
        let holder = e.holder().expect("the holder is named");
        assert_eq!(holder.node, g.node());
        assert_eq!(holder.data.as_deref(), Some(&b"holder A"[..]));
        assert!(matches!(e.cleanup(), Some(Cleanup::Deleted { .. })), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(g.node()) && msg.contains("holder A"), "{msg}");
        assert!(e.is_held());
        assert_eq!(
            children(&b, &d),
            vec![lockwright::zk::names::child_name(g.node())]
        );
        g.release().await.unwrap();
    });
}

#[test]
fn acquire_timeout_names_the_holder_and_deletes_its_node() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("timeout");
    let ma = ZkMutex::new(a, &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    block_on(async {
        let g = ma.acquire().await.unwrap();
        let t = Instant::now();
        let e = mb
            .acquire_timeout(Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(t.elapsed() >= Duration::from_millis(300));
        match &e {
            ZkLockError::TimedOut {
                path,
                waited,
                holder: Some(h),
                cleanup: Cleanup::Deleted { .. },
            } => {
                assert_eq!(path, &d);
                assert!(*waited >= Duration::from_millis(300));
                assert_eq!(h.node, g.node());
                assert!(h
                    .data
                    .as_ref()
                    .is_some_and(|d| d.starts_with(b"lockwright ")));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("timed out after"), "{e}");
        assert_eq!(children(&b, &d).len(), 1, "only the holder's node is left");
        g.release().await.unwrap();
    });
}

#[test]
fn waiters_are_granted_in_request_order() {
    let s = server();
    let d = dir("fifo");
    let zks: Vec<ZkClient> = (0..3).map(|_| client(&s)).collect();
    let ms: Vec<ZkMutex> = zks
        .iter()
        .map(|z| ZkMutex::new(z.clone(), &d).unwrap())
        .collect();
    let g0 = block_on(ms[0].acquire()).unwrap();
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    for i in [1usize, 2] {
        let (m, order) = (ms[i].clone(), order.clone());
        waiters.push(std::thread::spawn(move || {
            block_on(async {
                let g = m.acquire().await.unwrap();
                order.lock().unwrap().push(i);
                std::thread::sleep(Duration::from_millis(50));
                g.release().await.unwrap();
            });
        }));
        // Client i's node is in the queue before the next one asks.
        assert!(eventually(Duration::from_secs(10), || children(
            &zks[0], &d
        )
        .len()
            == i + 1));
    }
    block_on(g0.release()).unwrap();
    for w in waiters {
        w.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![1, 2]);
}

#[test]
fn reentered_guards_share_one_node_and_the_last_release_deletes_it() {
    let s = server();
    let zk = client(&s);
    let d = dir("reentrant");
    let m = ZkMutex::new(zk.clone(), &d).unwrap();
    block_on(async {
        let outer = m.acquire().await.unwrap();
        let inner = outer.reenter();
        assert_eq!(inner.node(), outer.node());
        assert_eq!(inner.token(), outer.token());
        assert_eq!(outer.hold_count(), 2);
        let requests = zk.stats().requests();
        inner.release().await.unwrap();
        assert_eq!(
            zk.stats().requests(),
            requests,
            "an inner release sends nothing"
        );
        assert_eq!(outer.hold_count(), 1);
        outer.ensure_valid().await.unwrap();
        let node = outer.node().to_string();
        outer.release().await.unwrap();
        assert_eq!(zk.check_node(&node).await.unwrap(), None);
    });
}

#[test]
fn dropping_the_last_guard_releases_in_the_background() {
    let s = server();
    let zk = client(&s);
    let d = dir("drop");
    let m = ZkMutex::new(zk.clone(), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    let inner = g.reenter();
    drop(g);
    assert_eq!(children(&zk, &d).len(), 1, "the inner guard still holds");
    drop(inner);
    assert!(eventually(Duration::from_secs(5), || children(&zk, &d).is_empty()));
}

#[test]
fn fencing_token_is_the_czxid_and_keeps_growing_when_the_parent_is_recreated() {
    let s = server();
    let zk = client(&s);
    let d = dir("fence");
    let m = ZkMutex::new(zk.clone(), &d).unwrap();
    let mut last = None;
    let mut seqs = Vec::new();
    for _ in 0..2 {
        block_on(async {
            let g = m.acquire().await.unwrap();
            let stat = zk.check_node(g.node()).await.unwrap().unwrap();
            assert_eq!(g.token().get(), stat.czxid, "token = czxid");
            if let Some(prev) = last {
                assert!(g.token() > prev, "{} after {prev}", g.token());
            }
            last = Some(g.token());
            seqs.push(g.sequence());
            g.release().await.unwrap();
        });
        // The empty container is reaped (checkIntervalMs=100 on the test server).
        assert!(
            eventually(Duration::from_secs(10), || block_on(zk.check_node(&d))
                .unwrap()
                .is_none()),
            "the container lock directory was not reaped"
        );
    }
    assert_eq!(
        seqs[0], seqs[1],
        "the re-created parent restarted its sequence counter"
    );
}

#[test]
fn guarded_write_lands_while_held_and_is_refused_once_the_node_is_gone() {
    let s = server();
    let (zk, other) = (client(&s), client(&s));
    let d = dir("guarded");
    let resource = "/lockwright-test/guarded-resource";
    let m = ZkMutex::new(zk.clone(), &d).unwrap();
    block_on(async {
        let g = m.acquire().await.unwrap();
        let r = g
            .guarded_write(&[GuardedOp::create(resource, "v1")])
            .await
            .unwrap();
        assert_eq!(
            r,
            vec![OpResult::Created {
                path: resource.to_string()
            }]
        );
        // A failing operation of the caller's: nothing written, the index is the caller's.
        let e = g
            .guarded_write(&[
                GuardedOp::set_data(resource, "v2"),
                GuardedOp::create(resource, "x"),
            ])
            .await
            .unwrap_err();
        assert!(
            matches!(e, ZkLockError::WriteFailed { index: 1, .. }),
            "{e}"
        );
        assert_eq!(other.read_node(resource).await.unwrap().0, b"v1");
        // Someone deletes our lock node: the server refuses the next guarded write.
        other.delete_node(g.node()).await.unwrap();
        let e = g
            .guarded_write(&[GuardedOp::set_data(resource, "v3")])
            .await
            .unwrap_err();
        assert_eq!(e.lost_reason(), Some(LostReason::NodeDeleted), "{e}");
        assert_eq!(
            other.read_node(resource).await.unwrap().0,
            b"v1",
            "nothing was written"
        );
        let e = g.ensure_valid().await.unwrap_err();
        assert_eq!(e.lost_reason(), Some(LostReason::NodeDeleted));
        assert!(e.to_string().contains("is lost"), "{e}");
        g.release().await.unwrap();
        other.delete_node(resource).await.unwrap();
    });
}

#[test]
fn bad_lock_paths_are_refused_with_the_reason() {
    let s = server();
    let zk = client(&s);
    for (path, reason) in [
        ("locks/x", BadPathReason::NotAbsolute),
        ("/locks/x/", BadPathReason::TrailingSlash),
        ("/", BadPathReason::Root),
        ("/locks//x", BadPathReason::BadComponent),
        ("/zookeeper/x", BadPathReason::Reserved),
    ] {
        match ZkMutex::new(zk.clone(), path) {
            Err(e @ ZkLockError::BadPath { .. }) => {
                assert!(matches!(e, ZkLockError::BadPath { reason: r, .. } if r == reason));
                assert!(e.to_string().contains(path), "{e}");
            }
            other => panic!("{path}: {other:?}"),
        }
    }
}

#[test]
fn an_unreachable_server_is_reported_with_the_connect_string() {
    // Port 1 on loopback: nothing listens there.
    let e = block_on(
        ZkClient::builder()
            .session_timeout(Duration::from_secs(1))
            .fail_eagerly()
            .connect("127.0.0.1:1"),
    )
    .unwrap_err();
    assert!(matches!(&e, ZkLockError::Unreachable { connect, .. } if connect == "127.0.0.1:1"));
    assert!(e.to_string().contains("127.0.0.1:1"), "{e}");
}

#[test]
fn a_cancelled_acquire_leaves_no_node_behind() {
    let s = server();
    let (a, b) = (client(&s), client(&s));
    let d = dir("cancel");
    let ma = ZkMutex::new(a, &d).unwrap();
    let mb = ZkMutex::new(b.clone(), &d).unwrap();
    let g = block_on(ma.acquire()).unwrap();
    // B queues behind A, then gives up by dropping its acquire future mid-wait.
    let cancelled = block_on(async {
        let mut acquire = std::pin::pin!(mb.acquire());
        std::future::poll_fn(|cx| {
            if std::future::Future::poll(acquire.as_mut(), cx).is_ready() {
                return std::task::Poll::Ready(false);
            }
            if children(&b, &d).len() == 2 {
                return std::task::Poll::Ready(true);
            }
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
        .await
    });
    assert!(cancelled, "B's node was queued before the cancel");
    assert!(
        eventually(Duration::from_secs(5), || children(&b, &d).len() == 1),
        "the cancelled acquire's node was not deleted: {:?}",
        children(&b, &d)
    );
    block_on(g.release()).unwrap();
}

#[test]
fn a_second_acquire_through_the_holding_mutex_fails_at_once() {
    // Issue #20 item 8: it used to wait behind its own node forever. A clone queues as usual.
    let s = server();
    let zk = client(&s);
    let d = dir("second-acquire");
    let m = ZkMutex::new(zk.clone(), &d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    for e in [
        block_on(m.acquire()).unwrap_err(),
        block_on(m.acquire_timeout(Duration::from_secs(60))).unwrap_err(),
        block_on(m.try_acquire()).unwrap_err(),
    ] {
        assert!(
            matches!(&e, ZkLockError::AlreadyHeld { node, .. } if node == g.node()),
            "{e}"
        );
        assert!(e.advice().is_some_and(|a| a.contains("reenter")), "{e}");
    }
    assert_eq!(children(&zk, &d).len(), 1, "no second node was created");
    let e = block_on(m.clone().try_acquire()).unwrap_err();
    assert!(e.is_held(), "a clone queues behind the holder: {e}");
    let inner = g.reenter();
    block_on(inner.release()).unwrap();
    block_on(g.release()).unwrap();
    block_on(block_on(m.acquire()).unwrap().release()).unwrap();
}
