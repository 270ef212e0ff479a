//! `etcdctl lock` (etcd 3.4's Go Mutex) and lockwright's mutex as peers on one prefix: both
//! increment one counter (a plain read and put) under the lock, and no increment is lost.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use lockwright::etcd::{EtcdMutex, Gateway, Session};

use crate::support::{need_etcd, put_counter, read_counter, Member};

const PREFIX: &str = "/it/peers";
const COUNTER: &str = "/it/peers-counter";
const EACH: i64 = 5;

#[test]
fn etcdctl_lock_and_lockwright_exclude_each_other() {
    need_etcd();
    let _g = crate::heavy();
    let m = Member::single();
    let base = m.client.clone();
    // The Go peers: each holds the lock while a shell reads the counter and puts it + 1.
    let script = format!(
        "v=$(etcdctl --endpoints {base} get --print-value-only {COUNTER}); \
         sleep 0.01; etcdctl --endpoints {base} put {COUNTER} $(( ${{v:-0}} + 1 )) >/dev/null"
    );
    let go: Vec<_> = (0..2)
        .map(|_| {
            let (base, script) = (base.clone(), script.clone());
            std::thread::spawn(move || {
                for _ in 0..EACH {
                    let st = Command::new("etcdctl")
                        .env("ETCDCTL_API", "3")
                        .args([
                            "--endpoints",
                            &base,
                            "lock",
                            PREFIX,
                            "--",
                            "sh",
                            "-c",
                            &script,
                        ])
                        .status()
                        .expect("etcdctl runs");
                    assert!(st.success(), "etcdctl lock failed: {st}");
                }
            })
        })
        .collect();
    let ours: Vec<_> = (0..2)
        .map(|_| {
            let base = base.clone();
            std::thread::spawn(move || {
                let etcd = Arc::new(Gateway::new(&base));
                let session =
                    Arc::new(Session::new(etcd, Duration::from_secs(5)).expect("session"));
                let mutex = EtcdMutex::new(session, PREFIX);
                for _ in 0..EACH {
                    let g = mutex.lock(Duration::from_secs(60)).expect("lock");
                    let v = read_counter(&base, COUNTER);
                    std::thread::sleep(Duration::from_millis(10));
                    put_counter(&base, COUNTER, v + 1);
                    g.unlock().expect("unlock");
                }
            })
        })
        .collect();
    for t in go.into_iter().chain(ours) {
        t.join().expect("client");
    }
    assert_eq!(
        read_counter(&base, COUNTER),
        4 * EACH,
        "an increment was lost"
    );
}
