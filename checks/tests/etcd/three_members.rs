//! The mutex on a three-member cluster while the leader is killed (SIGKILL) and restarted, or
//! paused (SIGSTOP) past the election timeout and resumed:
//! clients on the followers keep incrementing a counter under the lock, and no acknowledged
//! increment is lost (a second holder would lose one). A leader change refreshes every lease
//! to its full TTL at the server, so no hold is lost to it.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lockwright::etcd::{EtcdLockError, EtcdMutex, Gateway, Session};

use crate::support::{need_etcd, read_counter, try_put_counter, try_read_counter, Cluster};

const COUNTER: &str = "/it/three-counter";

/// Retries `f` while etcd is unreachable (an election under way), at most 10 s.
fn retry<T>(mut f: impl FnMut() -> Result<T, String>) -> T {
    let until = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match f() {
            Ok(t) => return t,
            Err(e) => {
                assert!(std::time::Instant::now() < until, "still failing: {e}");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// How the leader is taken away.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// SIGKILL, then a restart with the same data directory.
    Kill,
    /// SIGSTOP for 1.5 s (six election timeouts), then SIGCONT: it comes back as a follower.
    Pause,
}

#[test]
fn leader_kill_loses_no_increment() {
    leader_fault_loses_no_increment(Fault::Kill);
}

#[test]
fn leader_pause_loses_no_increment() {
    leader_fault_loses_no_increment(Fault::Pause);
}

fn leader_fault_loses_no_increment(fault: Fault) {
    need_etcd();
    let _g = crate::heavy();
    let mut cluster = Cluster::three();
    let (leader, leader_id) = cluster.leader(None, Duration::from_secs(10));
    let followers: Vec<String> = (0..3)
        .filter(|&i| i != leader)
        .map(|i| cluster.client(i))
        .collect();
    let acked = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..3)
        .map(|c| {
            let base = followers[c % followers.len()].clone();
            let (acked, stop) = (acked.clone(), stop.clone());
            std::thread::spawn(move || {
                let etcd = Arc::new(Gateway::new(&base));
                let session =
                    Arc::new(Session::new(etcd, Duration::from_secs(5)).expect("session"));
                let mutex = EtcdMutex::new(session, "/it/three");
                let mut done = 0;
                while !stop.load(Ordering::SeqCst) || done < 5 {
                    let g = match mutex.lock(Duration::from_secs(10)) {
                        Ok(g) => g,
                        Err(EtcdLockError::Etcd { .. } | EtcdLockError::TimedOut { .. }) => {
                            std::thread::sleep(Duration::from_millis(50));
                            continue;
                        }
                        Err(e) => panic!("client {c}: {e}"),
                    };
                    let v = retry(|| try_read_counter(&base, COUNTER));
                    // A plain put of an absolute value: a retry after an unanswered one is
                    // harmless.
                    retry(|| try_put_counter(&base, COUNTER, v + 1));
                    acked.fetch_add(1, Ordering::SeqCst);
                    done += 1;
                    let _ = g.unlock();
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let new_leader = match fault {
        Fault::Kill => {
            cluster.kill(leader);
            let (new_leader, _) = cluster.leader(Some(&leader_id), Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(800));
            cluster.restart(leader);
            new_leader
        }
        Fault::Pause => {
            cluster.signal(leader, libc::SIGSTOP);
            std::thread::sleep(Duration::from_millis(1500));
            cluster.signal(leader, libc::SIGCONT);
            cluster.leader(Some(&leader_id), Duration::from_secs(10)).0
        }
    };
    assert_ne!(new_leader, leader);
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().expect("client thread");
    }
    let n = acked.load(Ordering::SeqCst);
    assert!(n >= 15, "only {n} increments");
    assert_eq!(
        read_counter(&cluster.client(new_leader), COUNTER),
        n,
        "an acknowledged increment was lost"
    );
}
