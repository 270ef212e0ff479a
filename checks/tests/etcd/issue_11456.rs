//! etcd-io/etcd#11456 on the real 3.4.23 server: a waiter whose lease expires while it waits
//! (here etcd drops it, as its expiry does) is told by the 3.4 Mutex (`etcdctl lock`) that it
//! holds when the holder unlocks — beside the waiter behind it. lockwright's mutex (3.5's
//! re-check) reports the lock lost instead.
//!
//! The judge is etcd's own revision history of the lock prefix (a watch from revision 1),
//! not anything the lock computes: a hold is legitimate only if the holder's key was still
//! there when every older key had been deleted.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lockwright::etcd::{EtcdMutex, Gateway, Session};

use crate::support::{history, lock_keys, need_etcd, revoke, Event, Member};

const PREFIX: &str = "/it/11456";

/// Whether `key`'s hold was legitimate by etcd's history: after its put, the moment no older
/// key was left came before its delete.
fn legitimate(history: &[Event], key: &str) -> bool {
    let Some(put) = history
        .iter()
        .find(|e| e.1 == "PUT" && e.2 == key)
        .map(|e| e.0)
    else {
        return false;
    };
    let deleted = history
        .iter()
        .find(|e| e.1 == "DELETE" && e.2 == key && e.0 > put)
        .map_or(i64::MAX, |e| e.0);
    // Keys put before `key` and still there at its put.
    let older: Vec<&str> = history
        .iter()
        .filter(|e| e.1 == "PUT" && e.0 < put)
        .map(|e| e.2.as_str())
        .filter(|k| {
            let last = history.iter().rfind(|e| e.2 == *k && e.0 < put);
            last.is_some_and(|e| e.1 == "PUT")
        })
        .collect();
    let free_at = older
        .iter()
        .map(|k| {
            history
                .iter()
                .find(|e| e.1 == "DELETE" && e.2 == *k && e.0 > put)
                .map_or(i64::MAX, |e| e.0)
        })
        .max()
        .unwrap_or(put);
    free_at < deleted
}

/// `etcdctl lock --ttl T PREFIX -- sh -c 'echo HELD; sleep S'`, its stdout lines on a channel.
fn etcdctl_lock(base: &str, ttl: u32, hold_secs: u32) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args([
            "--endpoints",
            base,
            "lock",
            "--ttl",
            &ttl.to_string(),
            PREFIX,
            "--",
        ])
        .args([
            "sh",
            "-c",
            &format!("echo HELD $ETCD_LOCK_KEY; sleep {hold_secs}"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("etcdctl starts");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

fn wait_keys(base: &str, n: usize) -> Vec<(String, i64, i64)> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let keys = lock_keys(base, PREFIX);
        if keys.len() == n {
            return keys;
        }
        assert!(Instant::now() < until, "expected {n} keys, have {keys:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The 3.4 half, expected to fail: two `etcdctl lock` waiters are both told they hold, and
/// etcd's history shows the first one's key was gone before it was ever first in line.
#[test]
fn etcdctl_lock_34_grants_a_waiter_whose_lease_expired() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let base = m.client.clone();
    // The holder: lockwright's mutex (a peer on the same prefix).
    let etcd = Arc::new(Gateway::new(&base));
    let holder_session = Arc::new(Session::new(etcd, Duration::from_secs(10)).expect("session"));
    let holder = EtcdMutex::new(holder_session, PREFIX);
    let held = holder.lock(Duration::from_secs(5)).expect("holder locks");
    // Waiter 1 (3.4 Mutex), then its lease dropped while it waits.
    let (mut w1, w1_out) = etcdctl_lock(&base, 10, 3);
    let keys = wait_keys(&base, 2);
    let w1_key = keys[1].0.clone();
    revoke(&base, keys[1].2);
    wait_keys(&base, 1);
    // Waiter 2 behind the holder.
    let (mut w2, w2_out) = etcdctl_lock(&base, 10, 3);
    let keys = wait_keys(&base, 2);
    let w2_key = keys[1].0.clone();
    held.unlock().expect("holder unlocks");
    let got1 = w1_out.recv_timeout(Duration::from_secs(5));
    let got2 = w2_out.recv_timeout(Duration::from_secs(5));
    let _ = w1.kill();
    let _ = w2.kill();
    let _ = (w1.wait(), w2.wait());
    let h = history(&base, PREFIX);
    assert!(legitimate(&h, &w2_key), "waiter 2's hold: {h:?}");
    // The 3.4 Mutex's failure (#11456): both told they hold, waiter 1 without a key.
    assert!(
        got1.as_deref().is_ok_and(|l| l.starts_with("HELD")),
        "3.4 waiter 1 said {got1:?}"
    );
    assert!(got2.is_ok(), "waiter 2 said {got2:?}");
    assert!(!legitimate(&h, &w1_key), "history: {h:?}");
}

/// The lockwright half, the same steps: the waiter whose lease was dropped is told its lock
/// is lost; the waiter behind the holder holds, legitimately by etcd's history.
#[test]
fn lockwright_reports_the_lost_lock_where_34_grants_it() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let base = m.client.clone();
    let session = |ttl| {
        Arc::new(
            Session::new(Arc::new(Gateway::new(&base)), Duration::from_secs(ttl)).expect("session"),
        )
    };
    let holder = EtcdMutex::new(session(10), PREFIX);
    let held = holder.lock(Duration::from_secs(5)).expect("holder locks");
    let w1_session = session(10);
    let w1_lease = w1_session.lease().0;
    let w1 = std::thread::spawn(move || {
        let mutex = EtcdMutex::new(w1_session, PREFIX);
        mutex.lock(Duration::from_secs(10)).map(|g| {
            let t = g.token();
            std::mem::forget(g);
            t
        })
    });
    wait_keys(&base, 2);
    revoke(&base, w1_lease);
    wait_keys(&base, 1);
    let w2_session = session(10);
    let w2 = std::thread::spawn(move || {
        let mutex = EtcdMutex::new(w2_session, PREFIX);
        let key = mutex.key();
        let g = mutex.lock(Duration::from_secs(10));
        let ok = g.as_ref().map(|g| g.token()).ok();
        (key, ok)
    });
    wait_keys(&base, 2);
    held.unlock().expect("holder unlocks");
    let r1 = w1.join().expect("waiter 1");
    let (w2_key, r2) = w2.join().expect("waiter 2");
    let e = r1.expect_err("waiter 1 must not hold");
    assert!(e.is_lost(), "{e}");
    assert!(r2.is_some(), "waiter 2 holds");
    assert!(legitimate(&history(&base, PREFIX), &w2_key));
}
