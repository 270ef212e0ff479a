//! redis-py's `Lock` (Debian's python3-redis 4.3.4, run with `/usr/bin/python3`) as a peer of
//! the Rust lock on one real server: their formats agree (`SET key token NX PX ttl`, a random
//! token as the value, Lua compare-and-delete), so each keeps the other out. The oracle is a
//! counter both increment under the lock (GET, a pause, SET): it keeps every increment; the
//! twin, where the Rust client locks another key, loses some.

use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use lockwright::redis::{RedisLock, RedisServers};

use crate::real_server::Server;

const PEER: &str = r#"
import sys, time, redis
port, key, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
r = redis.Redis(host="127.0.0.1", port=port)
r.ping()
print("ready", flush=True)
sys.stdin.readline()
for _ in range(n):
    with r.lock(key, timeout=5, sleep=0.001, blocking_timeout=30):
        v = int(r.get("counter") or 0)
        time.sleep(0.003)
        r.set("counter", v + 1)
print("done", n)
"#;

/// Rust and redis-py each make `n` increments under the locks named `rust_key` and `py_key`;
/// the counter at the end.
fn race(rust_key: &str, py_key: &str, n: u32) -> u64 {
    let server = Server::start();
    let mut peer = Command::new("/usr/bin/python3")
        .args(["-c", PEER, &server.port.to_string(), py_key, &n.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/python3 with python3-redis (.ci/prerequisites installs it)");
    let backend = RedisServers::new(&[server.address()], Duration::from_secs(2)).expect("address");
    let lock = RedisLock::new(backend, rust_key, Duration::from_secs(5))
        .with_retry_delay(Duration::from_millis(1));
    // Both start together: the peer has imported redis-py and connected.
    let mut ready = String::new();
    let mut out = std::io::BufReader::new(peer.stdout.take().expect("stdout"));
    out.read_line(&mut ready).expect("peer's ready line");
    assert_eq!(ready.trim_end(), "ready");
    writeln!(peer.stdin.as_mut().expect("stdin"), "go").expect("go");
    for _ in 0..n {
        let g = lock
            .lock_timeout(Duration::from_secs(30))
            .expect("the Rust client acquires");
        let v = crate::real_server::read_counter(&server);
        std::thread::sleep(Duration::from_millis(3));
        crate::real_server::write_counter(&server, v + 1);
        g.release().expect("still ours");
    }
    let mut rest = String::new();
    out.read_to_string(&mut rest).expect("peer's output");
    let status = peer.wait_with_output().expect("peer ran");
    assert!(
        status.status.success() && rest.contains("done"),
        "redis-py peer: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    crate::real_server::read_counter(&server)
}

#[test]
fn redis_py_and_the_rust_lock_exclude_each_other() {
    let _t = crate::timing();
    assert_eq!(race("lock", "lock", 40), 80, "no lost update");
}

#[test]
fn on_different_keys_they_lose_increments() {
    let _t = crate::timing();
    let counter = race("lock-rust", "lock-py", 40);
    assert!(
        counter < 80,
        "the oracle sees the missing exclusion: {counter}"
    );
}

const PAUSED_HOLDER: &str = r#"
import sys, redis
port, timeout = int(sys.argv[1]), sys.argv[2]
r = redis.Redis(host="127.0.0.1", port=port)
lock = r.lock("lock", timeout=None if timeout == "none" else float(timeout))
assert lock.acquire(blocking=False)
v = int(r.get("counter") or 0)
print("read", v, flush=True)
sys.stdin.readline()
r.set("counter", v + 1)
try:
    lock.release()
    print("released", flush=True)
except redis.exceptions.LockNotOwnedError:
    print("not-owner", flush=True)
"#;

/// Kleppmann's pause on a real server: a redis-py holder reads the counter and is stopped
/// (SIGSTOP) past its TTL; the Rust client acquires, increments and releases; the holder is
/// continued (SIGCONT) and writes. Returns (counter, increments made, whether Rust acquired,
/// what redis-py's release said).
fn paused_holder(timeout: &str) -> (u64, u64, bool, String) {
    let server = Server::start();
    let mut peer = Command::new("/usr/bin/python3")
        .args(["-c", PAUSED_HOLDER, &server.port.to_string(), timeout])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/python3 with python3-redis");
    let mut out = std::io::BufReader::new(peer.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("peer's read line");
    assert!(line.starts_with("read"), "{line}");
    let pid = peer.id() as libc::pid_t;
    // SAFETY: signals to the child this test spawned and still owns.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(500));
    let backend = RedisServers::new(&[server.address()], Duration::from_secs(2)).expect("address");
    let lock = RedisLock::new(backend, "lock", Duration::from_secs(5))
        .with_retry_delay(Duration::from_millis(5));
    let mut made = 1; // the paused holder's, once it writes
    let acquired = match lock.lock_timeout(Duration::from_millis(500)) {
        Ok(g) => {
            let v = crate::real_server::read_counter(&server);
            crate::real_server::write_counter(&server, v + 1);
            made += 1;
            g.release().expect("ours");
            true
        }
        Err(e) => {
            assert!(e.is_held(), "{e}");
            false
        }
    };
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    writeln!(peer.stdin.as_mut().expect("stdin"), "go").expect("go");
    let mut said = String::new();
    out.read_line(&mut said).expect("peer's release line");
    let status = peer.wait_with_output().expect("peer ran");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    (
        crate::real_server::read_counter(&server),
        made,
        acquired,
        said.trim_end().to_string(),
    )
}

/// The model's row 3 on a real server: with a 0.3 s TTL the stopped holder's key expires, the
/// Rust client is granted, and the holder's late write loses the Rust increment; redis-py only
/// learns at its release (`LockNotOwnedError`), after the damage.
#[test]
fn a_holder_stopped_past_its_ttl_loses_an_update_on_a_real_server() {
    let _t = crate::timing();
    let (counter, made, acquired, said) = paused_holder("0.3");
    assert!(acquired);
    assert_eq!((counter, made), (1, 2), "no lost update fails");
    assert_eq!(said, "not-owner");
}

/// The model's row 24: redis-py's default (no expiry) keeps the Rust client out for as long
/// as the holder is stopped — no lost update, and no progress.
#[test]
fn without_expiry_a_stopped_holder_keeps_the_lock() {
    let _t = crate::timing();
    let (counter, made, acquired, said) = paused_holder("none");
    assert!(!acquired);
    assert_eq!((counter, made), (1, 1));
    assert_eq!(said, "released");
}
