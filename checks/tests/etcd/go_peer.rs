//! etcd 3.4's own Go Mutex (`clientv3/concurrency`, built offline from Debian's
//! `golang-etcd-server-dev` by the test: `GO111MODULE=off GOPATH=<dir>:/usr/share/gocode
//! GOPROXY=off go build`, cached in the target folder by source) and lockwright's mutex on one
//! prefix: both increment one counter under the lock, and none is lost.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use lockwright::etcd::{EtcdMutex, Gateway, Session};

use crate::support::{need_etcd, put_counter, read_counter, Member};

const SOURCE: &str = include_str!("go/lockpeer.go");
const PREFIX: &str = "/it/go-peer";
const COUNTER: &str = "/it/go-peer-counter";
const EACH: i64 = 5;

/// The Go peer's binary, built once per source text.
fn go_peer() -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    SOURCE.hash(&mut h);
    let root =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("etcd-go-peer-{:x}", h.finish()));
    let bin = root.join("lockpeer");
    if bin.exists() {
        return bin;
    }
    let src = root.join("src/lockpeer");
    std::fs::create_dir_all(&src).expect("source folder");
    std::fs::write(src.join("main.go"), SOURCE).expect("source");
    let out = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GO111MODULE", "off")
        .env("GOPROXY", "off")
        .env("GOPATH", format!("{}:/usr/share/gocode", root.display()))
        .env("GOCACHE", root.join("cache"))
        .output()
        .expect("go runs: install golang-go golang-etcd-server-dev (bash .ci/prerequisites)");
    assert!(
        out.status.success(),
        "go build of the etcd Go peer failed (golang-etcd-server-dev installed?):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

#[test]
fn go_mutex_and_lockwright_exclude_each_other() {
    need_etcd();
    let bin = go_peer();
    let _g = crate::heavy();
    let m = Member::single();
    let base = m.client.clone();
    let go: Vec<_> = (0..2)
        .map(|_| {
            let (base, bin) = (base.clone(), bin.clone());
            std::thread::spawn(move || {
                let out = Command::new(&bin)
                    .args([base.as_str(), PREFIX, COUNTER, &EACH.to_string()])
                    .output()
                    .expect("the Go peer runs");
                assert!(
                    out.status.success(),
                    "Go peer: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                String::from_utf8_lossy(&out.stdout).lines().count()
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
    let held: usize = go.into_iter().map(|t| t.join().expect("Go peer")).sum();
    for t in ours {
        t.join().expect("client");
    }
    assert_eq!(held, 2 * EACH as usize, "each Go hold printed HELD");
    assert_eq!(
        read_counter(&base, COUNTER),
        4 * EACH,
        "an increment was lost"
    );
}
