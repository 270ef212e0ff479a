//! The Redis lock against real `redis-server`s (Redis 7.0, Debian's package) that the tests
//! start on free loopback ports and kill when the guard drops. The oracles are not the lock's:
//! a counter in a separate key that loses increments when exclusion fails, and the server's
//! own command stream (`MONITOR`) read back as the record of who set and deleted the key.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockwright::redis::{Backend, RedisLock, RedisLockError, RedisServers};
use lockwright_testkit::redis::{NoRecheck, UncheckedRelease};

/// A `redis-server` on a free loopback port, without persistence; killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// A server with extra arguments (`--replicaof`, or `--sentinel` with a config file).
    pub fn start_with(extra: &[&str]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = tempfile::tempdir().expect("temporary folder");
        let sentinel = extra.first() == Some(&"--sentinel");
        let mut cmd = Command::new("redis-server");
        if sentinel {
            let conf = dir.path().join("sentinel.conf");
            let text = format!(
                "port {port}\nbind 127.0.0.1\nsentinel monitor m 127.0.0.1 {} 2\n\
                 sentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 5000\n",
                extra[1]
            );
            std::fs::write(&conf, text).expect("sentinel.conf");
            cmd.arg(&conf).arg("--sentinel");
        } else {
            cmd.args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--daemonize", "no"])
            .args(["--enable-debug-command", "local"])
            .args(extra);
        }
        let child = cmd
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (apt-get install redis-server; .ci/prerequisites installs it)");
        let server = Server {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.raw(&["PING"]).as_deref() != Some("+PONG") {
            assert!(
                Instant::now() < deadline,
                "redis-server on {port} did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// One command over a fresh connection; the first line of the answer.
    pub fn raw(&self, args: &[&str]) -> Option<String> {
        let mut s = TcpStream::connect(self.address()).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        s.write_all(&resp(args)).ok()?;
        let mut line = String::new();
        let mut r = BufReader::new(s);
        r.read_line(&mut line).ok()?;
        if line.starts_with('$') && !line.starts_with("$-1") {
            line.clear();
            r.read_line(&mut line).ok()?;
        }
        Some(line.trim_end().to_string())
    }

    /// `MONITOR` on its own connection: every command the server runs from now on, as its
    /// lines, collected until the returned handle is read.
    fn monitor(&self) -> Arc<Mutex<Vec<String>>> {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let mut s = TcpStream::connect(self.address()).expect("monitor connection");
        s.write_all(&resp(&["MONITOR"])).expect("MONITOR");
        let mut r = BufReader::new(s);
        let mut ok = String::new();
        r.read_line(&mut ok).expect("MONITOR answer");
        assert_eq!(ok.trim_end(), "+OK");
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in r.lines() {
                let Ok(line) = line else { break };
                sink.lock().expect("monitor lines").push(line);
            }
        });
        lines
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn resp(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    out.into_bytes()
}

fn servers(s: &[&Server]) -> RedisServers {
    let addresses: Vec<String> = s.iter().map(|s| s.address()).collect();
    RedisServers::new(&addresses, Duration::from_millis(2000)).expect("addresses")
}

/// The counter oracle: `GET counter`, then `SET counter n+1` (two commands, not atomic).
pub fn read_counter(s: &Server) -> u64 {
    s.raw(&["GET", "counter"])
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn write_counter(s: &Server, n: u64) {
    assert_eq!(
        s.raw(&["SET", "counter", &n.to_string()]).as_deref(),
        Some("+OK")
    );
}

/// A holder slow to release (its key expired first) meets the next holder. With the checked
/// release (the script) the third client is refused and the counter keeps both increments;
/// over the test kit's `UncheckedRelease` wrapper (a plain `DEL`, the model's
/// `single-unchecked`) the slow holder deletes the next holder's key, a third client is
/// granted beside it, and the counter loses an increment — and the server's own `MONITOR`
/// record shows the slow holder's `DEL`.
fn slow_release_then_third_client<B: Backend>(
    wrap: impl Fn(RedisServers) -> B,
) -> (u64, u64, Vec<String>) {
    let server = Server::start();
    let monitor = server.monitor();
    let ttl = Duration::from_millis(200);
    let make = || RedisLock::new(wrap(servers(&[&server])), "lock", ttl);
    let (a, b, c) = (make(), make(), make());
    let ga = a.try_lock().expect("a acquires");
    std::thread::sleep(ttl + Duration::from_millis(100));
    let gb = b.try_lock().expect("b acquires after a's key expired");
    let _ = ga.release();
    let gc = c.try_lock();
    let mut made = 0;
    let rb = read_counter(&server);
    let rc = gc.as_ref().ok().map(|_| read_counter(&server));
    write_counter(&server, rb + 1);
    made += 1;
    if let Some(rc) = rc {
        write_counter(&server, rc + 1);
        made += 1;
    }
    drop(gb);
    drop(gc);
    std::thread::sleep(Duration::from_millis(100));
    let lines = monitor.lock().expect("monitor").clone();
    (read_counter(&server), made, lines)
}

#[test]
fn checked_release_keeps_the_third_client_out_on_a_real_server() {
    let _t = crate::timing();
    let (counter, made, lines) = slow_release_then_third_client(|s| s);
    assert_eq!((counter, made), (1, 1), "only b incremented");
    assert!(
        !lines.iter().any(|l| l.contains("\"DEL\" \"lock\"")),
        "the checked release never sends DEL: {lines:#?}"
    );
}

#[test]
fn unchecked_release_loses_an_increment_on_a_real_server() {
    let _t = crate::timing();
    let (counter, made, lines) = slow_release_then_third_client(UncheckedRelease);
    assert_eq!(made, 2, "b and c both held");
    assert_eq!(
        counter, 1,
        "no lost update fails: one of two increments is lost"
    );
    // The server's record: a's SET, b's SET, a DEL of the key while it held b's token, c's SET.
    let sets: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("\"SET\" \"lock\""))
        .collect();
    let dels: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("\"DEL\" \"lock\""))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(sets.len(), 3, "{lines:#?}");
    let at = |set: &String| {
        lines
            .iter()
            .position(|l| std::ptr::eq(l, set))
            .expect("a SET")
    };
    let (second_set, third_set) = (at(sets[1]), at(sets[2]));
    // a's stale DEL lands while b holds: between b's SET and c's (the DELs of b's and c's own
    // releases come after c's SET, so they cannot satisfy this).
    assert!(
        dels.iter().any(|&d| d > second_set && d < third_set),
        "MONITOR shows a DEL between b's SET and c's: {lines:#?}"
    );
}

/// `DEBUG SLEEP` stalls the server past the TTL: a contender's `SET NX` sent during the stall
/// is answered `OK` when the server wakes — after the TTL. The re-check after acquiring
/// refuses that grant (`TooSlow`, and the key is released again); over the test kit's
/// `NoRecheck` wrapper (the model's `redlock-no-recheck`, here on one instance) the same grant
/// is taken. The
/// stalled holder's guard detects its loss by its own clock (`Expired`), and its release
/// reports the key is not its own.
fn stall<B: Backend>(
    wrap: impl Fn(RedisServers, Duration) -> B,
) -> (Result<(), RedisLockError>, Result<(), RedisLockError>, bool) {
    let server = Server::start();
    let ttl = Duration::from_millis(300);
    let a = RedisLock::new(servers(&[&server]), "lock", ttl);
    let b = RedisLock::new(wrap(servers(&[&server]), a.drift()), "lock", ttl);
    let ga = a.try_lock().expect("a acquires");
    let addr = server.address();
    let sleeper = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.write_all(&resp(&["DEBUG", "SLEEP", "0.6"]))
            .expect("DEBUG SLEEP");
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).expect("answer");
        line
    });
    std::thread::sleep(Duration::from_millis(50));
    let gb = b.try_lock();
    assert_eq!(sleeper.join().expect("sleeper").trim_end(), "+OK");
    let b_holds = gb.is_ok();
    let key_after = server.raw(&["GET", "lock"]);
    let valid = ga.ensure_valid();
    let released = ga.release();
    // The server's own record: the key holds b's token exactly when b took the grant.
    assert_eq!(
        key_after.as_deref() != Some("$-1") && key_after.is_some(),
        b_holds,
        "{key_after:?}"
    );
    (valid, released, b_holds)
}

#[test]
fn a_server_stall_past_the_ttl_is_refused_by_the_recheck() {
    let _t = crate::timing();
    let (valid, released, b_holds) = stall(|s, _| s);
    assert!(
        !b_holds,
        "the re-check refuses a grant that came after the TTL"
    );
    assert!(
        matches!(valid, Err(RedisLockError::Expired { .. })),
        "{valid:?}"
    );
    assert!(
        released.as_ref().is_err_and(RedisLockError::is_lost),
        "{released:?}"
    );
}

#[test]
fn a_server_stall_past_the_ttl_is_taken_without_the_recheck() {
    let _t = crate::timing();
    let (valid, released, b_holds) = stall(NoRecheck::new);
    assert!(b_holds, "without the re-check the late grant is taken");
    assert!(
        matches!(valid, Err(RedisLockError::Expired { .. })),
        "{valid:?}"
    );
    assert!(
        released.as_ref().is_err_and(RedisLockError::is_lost),
        "{released:?}"
    );
}

/// Redlock over three real servers: held with all three, still with two when one is killed,
/// refused as unavailable with one; a second client is refused while the first holds.
#[test]
fn redlock_over_three_servers_needs_a_majority() {
    let _t = crate::timing();
    let s = [Server::start(), Server::start(), Server::start()];
    let ttl = Duration::from_secs(5);
    let a = RedisLock::new(servers(&[&s[0], &s[1], &s[2]]), "lock", ttl);
    let b = RedisLock::new(servers(&[&s[0], &s[1], &s[2]]), "lock", ttl);
    let ga = a.try_lock().expect("a acquires on three");
    let held = b.try_lock().expect_err("b is refused");
    assert!(held.is_held(), "{held}");
    ga.release().expect("released everywhere");
    let [mut s0, s1, s2] = s;
    s0.kill();
    let g = a.try_lock().expect("two of three are a majority");
    g.release().expect("released on the majority");
    drop(s1);
    let e = a.try_lock().expect_err("one of three is not");
    assert!(matches!(e, RedisLockError::Unavailable { .. }), "{e}");
    assert!(e.advice().is_some());
    drop(s2);
}

/// Sentinel fail-over loses a lock (DESIGN.md's recipe): a primary, a replica and three
/// sentinels; replication cut on the primary (`ACL SETUSER default -psync -sync` and `CLIENT
/// KILL TYPE replica`: on loopback a killed link resyncs in about 1 ms); client a takes the
/// lock on the primary; the primary is SIGKILLed; the sentinels promote the replica, which never
/// got the key, and client b takes the lock there. Both increment a counter on a separate
/// server (the resource): one increment is lost. The model's row 10 (`failover`).
#[test]
fn sentinel_failover_to_a_replica_without_the_key_makes_two_holders() {
    let _t = crate::timing();
    let resource = Server::start();
    let mut primary = Server::start();
    let p = primary.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &p]);
    let _sentinels = [
        Server::start_with(&["--sentinel", &p]),
        Server::start_with(&["--sentinel", &p]),
        Server::start_with(&["--sentinel", &p]),
    ];
    // Wait for the replica to sync, then cut replication.
    let deadline = Instant::now() + Duration::from_secs(10);
    while replica.raw(&["GET", "synced"]).as_deref() != Some("yes") {
        primary.raw(&["SET", "synced", "yes"]);
        assert!(Instant::now() < deadline, "replica never synced");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2)); // the sentinels discover the replica
    assert_eq!(
        primary
            .raw(&["ACL", "SETUSER", "default", "-psync", "-sync"])
            .as_deref(),
        Some("+OK")
    );
    primary.raw(&["CLIENT", "KILL", "TYPE", "replica"]);
    let ttl = Duration::from_secs(30);
    let a = RedisLock::new(servers(&[&primary]), "lock", ttl);
    let ga = a.try_lock().expect("a acquires on the primary");
    let ra = read_counter(&resource);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        replica.raw(&["GET", "lock"]).as_deref(),
        Some("$-1"),
        "the cut held"
    );
    primary.kill();
    let deadline = Instant::now() + Duration::from_secs(20);
    while replica.raw(&["SET", "promoted", "1"]).as_deref() != Some("+OK") {
        assert!(Instant::now() < deadline, "the replica was never promoted");
        std::thread::sleep(Duration::from_millis(100));
    }
    let b = RedisLock::new(servers(&[&replica]), "lock", ttl);
    let gb = b.try_lock().expect("b acquires on the promoted replica");
    assert!(
        ga.validity_left().is_some(),
        "a still holds by its own clock"
    );
    let rb = read_counter(&resource);
    write_counter(&resource, ra + 1);
    write_counter(&resource, rb + 1);
    assert_eq!(
        read_counter(&resource),
        1,
        "no lost update fails: 1 of 2 increments"
    );
    drop(gb);
    drop(ga);
}
