//! The mutex on one real member: exclusion judged by a counter written with plain puts, a
//! held lock lost when etcd drops its lease (refused guarded write, `is_held` false), and the
//! counter oracle's twin (it does catch two holders).

use std::sync::Arc;
use std::time::{Duration, Instant};

use lockwright::etcd::{EtcdMutex, Gateway, Session};

use crate::support::{need_etcd, put_counter, read_counter, revoke, Member};

const TTL: Duration = Duration::from_secs(5);

/// Three clients, each with its own session, add 8 to a counter each, one read and one plain
/// put per increment under the lock: no increment is lost (a second holder would lose one).
#[test]
fn lockwright_mutex_loses_no_increment_on_one_member() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let base = m.client.clone();
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let base = base.clone();
            std::thread::spawn(move || {
                let etcd = Arc::new(Gateway::new(&base));
                let session = Arc::new(Session::new(etcd, TTL).expect("session"));
                let mutex = EtcdMutex::new(session, "/it/counter-lock");
                let mut tokens = Vec::new();
                for _ in 0..8 {
                    let g = mutex.lock(Duration::from_secs(30)).expect("lock");
                    let v = read_counter(&base, "/it/counter");
                    std::thread::sleep(Duration::from_millis(2));
                    put_counter(&base, "/it/counter", v + 1);
                    tokens.push(g.token());
                    g.unlock().expect("unlock");
                }
                tokens
            })
        })
        .collect();
    let mut tokens: Vec<i64> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("client thread"))
        .collect();
    assert_eq!(
        read_counter(&base, "/it/counter"),
        24,
        "an increment was lost"
    );
    // Every hold had its own fencing token.
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 24);
}

/// The counter's twin: two clients that both read before either writes (what two holders
/// do) lose an increment, and the oracle says so.
#[test]
fn the_counter_oracle_catches_two_holders() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let a = read_counter(&m.client, "/it/twin");
    let b = read_counter(&m.client, "/it/twin");
    put_counter(&m.client, "/it/twin", a + 1);
    put_counter(&m.client, "/it/twin", b + 1);
    assert_ne!(
        read_counter(&m.client, "/it/twin"),
        2,
        "two increments acknowledged"
    );
}

/// When etcd drops the holder's lease (what its expiry does), the guarded write is refused
/// at once, and the session learns of it at its next keepalive (TTL/3): `is_held` turns
/// false and `unlock` reports the loss.
#[test]
fn a_dropped_lease_is_a_lost_lock() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let etcd = Arc::new(Gateway::new(&m.client));
    let session = Arc::new(Session::new(etcd, Duration::from_secs(3)).expect("session"));
    let lease = session.lease().0;
    let mutex = EtcdMutex::new(session, "/it/lost");
    let g = mutex.lock(Duration::from_secs(5)).expect("lock");
    g.guarded_put(b"/it/data", b"1")
        .expect("guarded write while held");
    assert!(g.is_held());
    revoke(&m.client, lease);
    let e = g.guarded_put(b"/it/data", b"2").expect_err("refused");
    assert!(e.is_lost(), "{e}");
    let until = Instant::now() + Duration::from_secs(3);
    while g.is_held() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!g.is_held(), "the session never noticed its lease is gone");
    assert!(g.unlock().expect_err("the key is gone").is_lost());
}

/// etcd raises a TTL below its minimum (`1.5 × election timeout`, 1.5 s by default, rounded
/// up to 2 s) and answers the granted one: the session's TTL, and so its deadline and its
/// keepalive period, is etcd's 2 s, not the 1 s asked for.
#[test]
fn the_session_takes_the_ttl_etcd_grants() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let etcd = Arc::new(Gateway::new(&m.client));
    let session = Session::new(etcd, Duration::from_secs(1)).expect("session");
    assert_eq!(session.ttl(), Duration::from_secs(2));
}

/// The gateway's watch answers from a real member: a watch from a compacted revision is a
/// compaction (with etcd's compact revision); a member shut down under a watch is a
/// cancelled watch, not a compaction and not a quiet timeout.
#[test]
fn only_compaction_reads_as_compaction_on_a_real_member() {
    use lockwright::etcd::{Etcd, EtcdError};
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let gw = Gateway::new(&m.client);
    put_counter(&m.client, "/it/w", 1);
    put_counter(&m.client, "/it/w", 2);
    let rev = crate::support::post(
        &m.client,
        "/v3/kv/range",
        &serde_json::json!({"key": crate::support::b64(b"/it/w")}),
    )
    .expect("range")["header"]["revision"]
        .as_str()
        .and_then(|r| r.parse::<i64>().ok())
        .expect("a revision");
    crate::support::post(
        &m.client,
        "/v3/kv/compaction",
        &serde_json::json!({"revision": rev.to_string()}),
    )
    .expect("compaction");
    match gw.wait_delete(b"/it/w", 1, Duration::from_secs(3)) {
        Err(EtcdError::Compacted { compact_revision }) => assert_eq!(compact_revision, rev),
        other => panic!("a watch from a compacted revision answered {other:?}"),
    }
    // A watch from the current revision, and the member stopped under it.
    let watcher = {
        let gw = gw.clone();
        std::thread::spawn(move || gw.wait_delete(b"/it/w", rev + 1, Duration::from_secs(10)))
    };
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    drop(m);
    let end = watcher.join().expect("watcher");
    assert!(
        matches!(end, Err(EtcdError::WatchCanceled { .. })),
        "a stopped member's watch answered {end:?} after {:?}",
        started.elapsed()
    );
}
