//! Interop with real Lucene 4.10.4 (Debian's `liblucene4.10-java`, OpenJDK): its
//! `LockVerifyServer` and `LockStressTest` against ours, on one directory and one lock file
//! (`test-test.lock`, what Lucene 4.10.4's stress client locks).
//!
//! These tests FAIL (they do not skip) when the jar or `java` is missing: CI installs them.
//! `LOCKWRIGHT_LUCENE_JAR` points at another lucene-core 4.10.x jar.

use lockwright_checks::stress::orchestrator::lucene_jar;
use lockwright_checks::stress::proc::{listening_port, Spawned};
use lockwright_checks::stress::LUCENE_4_LOCK_NAME;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lockwright");
const WAIT: Duration = Duration::from_secs(90);
const NATIVE: &str = "org.apache.lucene.store.NativeFSLockFactory";

fn jar() -> PathBuf {
    let jar = lucene_jar();
    assert!(
        jar.is_file(),
        "{} is missing: install Debian's liblucene4.10-java (apt-get install -y liblucene4.10-java), \
         or set LOCKWRIGHT_LUCENE_JAR to a lucene-core 4.10.x jar",
        jar.display()
    );
    let java = Command::new("java").arg("-version").output();
    assert!(
        java.is_ok_and(|o| o.status.success()),
        "`java` is missing: install a JRE (apt-get install -y openjdk-17-jre-headless; \
         liblucene4.10-java does not depend on one)"
    );
    jar
}

fn java(jar: &Path, class: &str) -> Command {
    let mut c = Command::new("java");
    c.arg("-cp")
        .arg(jar)
        .arg(format!("org.apache.lucene.store.{class}"));
    c
}

fn lucene_server(jar: &Path, clients: usize) -> (Spawned, u16) {
    let mut cmd = java(jar, "LockVerifyServer");
    cmd.args(["127.0.0.1", &clients.to_string()]);
    start_server("Lucene LockVerifyServer", &mut cmd)
}

fn our_server(clients: usize) -> (Spawned, u16) {
    let mut cmd = Command::new(BIN);
    cmd.args(["verify-server", "--clients", &clients.to_string()]);
    start_server("lockwright verify-server", &mut cmd)
}

fn start_server(name: &str, cmd: &mut Command) -> (Spawned, u16) {
    let mut s = Spawned::spawn(name, cmd).unwrap();
    let line = s
        .wait_for_line("Listening on", WAIT)
        .unwrap_or_else(|| panic!("no port\n{}", s.describe()));
    let port = listening_port(&line).unwrap_or_else(|| panic!("bad line {line:?}"));
    (s, port)
}

fn lucene_client(jar: &Path, id: u8, port: u16, dir: &Path, sleep_ms: u64, count: u64) -> Spawned {
    let mut cmd = java(jar, "LockStressTest");
    cmd.args([&id.to_string(), "127.0.0.1", &port.to_string(), NATIVE])
        .arg(dir)
        .args([&sleep_ms.to_string(), &count.to_string()]);
    Spawned::spawn(format!("Lucene LockStressTest {id}"), &mut cmd).unwrap()
}

fn our_client(id: u8, port: u16, dir: &Path, os_lock: &str, sleep_ms: u64, count: u64) -> Spawned {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "stress",
        "--id",
        &id.to_string(),
        "--server",
        &format!("127.0.0.1:{port}"),
    ])
    .args([
        "--factory",
        "native",
        "--os",
        os_lock,
        "--lock-name",
        LUCENE_4_LOCK_NAME,
    ])
    .arg("--dir")
    .arg(dir)
    .args([
        "--sleep-ms",
        &sleep_ms.to_string(),
        "--count",
        &count.to_string(),
    ]);
    Spawned::spawn(format!("lockwright stress {id} ({os_lock})"), &mut cmd).unwrap()
}

fn describe_all(all: &[&Spawned]) -> String {
    all.iter()
        .map(|p| p.describe())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Waits for every client, then the server; returns whether each succeeded.
fn finish(server: &mut Spawned, clients: &mut [Spawned]) -> (bool, Vec<bool>) {
    let oks: Vec<bool> = clients
        .iter_mut()
        .map(|c| c.wait(WAIT).is_some_and(|s| s.success()))
        .collect();
    let server_ok = server.wait(WAIT).is_some_and(|s| s.success());
    (server_ok, oks)
}

const LUCENE_VIOLATION: [&str; 2] = ["already holds the lock", "is the one holding the lock"];

/// OFD locks and Java's `FileChannel.tryLock` (POSIX `F_SETLK`) exclude each other.
#[test]
fn lucene_server_lucene_and_lockwright_ofd_clients_share_the_lock_safely() {
    let jar = jar();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = lucene_server(&jar, 4);
    let mut clients = vec![
        lucene_client(&jar, 1, port, dir.path(), 1, 300),
        lucene_client(&jar, 2, port, dir.path(), 1, 300),
        our_client(3, port, dir.path(), "ofd", 1, 300),
        our_client(4, port, dir.path(), "ofd", 1, 300),
    ];
    let (server_ok, oks) = finish(&mut server, &mut clients);
    let all: Vec<&Spawned> = std::iter::once(&server).chain(clients.iter()).collect();
    assert!(
        server_ok && oks.iter().all(|ok| *ok),
        "a process failed\n{}",
        describe_all(&all)
    );
    let err = server.stderr();
    assert!(
        !LUCENE_VIOLATION.iter().any(|v| err.contains(v)) && !err.contains("Exception"),
        "{}",
        describe_all(&all)
    );
    assert!(
        server.stdout().contains("Server terminated."),
        "{}",
        describe_all(&all)
    );
    for c in &clients[2..] {
        // "Finished 300 tries: A acquired, C contended, 0 double obtains."
        let out = c.stdout();
        let acquired: u64 = out
            .split("tries: ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no summary line\n{}", c.describe()));
        assert!(acquired > 0, "{}", c.describe());
    }
    assert!(dir.path().join(LUCENE_4_LOCK_NAME).exists());
}

/// The documented hazard: `flock` does not see Java's POSIX lock, so a lockwright `flock`
/// client and a Lucene client hold the lock at once, and Lucene's server catches it (it then
/// hangs up on every client, which fail with "Lock server died because of locking error").
#[test]
fn lucene_server_catches_lockwright_flock_clients_next_to_lucene() {
    let jar = jar();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = lucene_server(&jar, 4);
    // Hold 5 ms each time: with two independent lock kinds the overlap comes within a few tries.
    let mut clients = vec![
        lucene_client(&jar, 1, port, dir.path(), 5, 500),
        lucene_client(&jar, 2, port, dir.path(), 5, 500),
        our_client(3, port, dir.path(), "flock", 5, 500),
        our_client(4, port, dir.path(), "flock", 5, 500),
    ];
    let (_, oks) = finish(&mut server, &mut clients);
    let all: Vec<&Spawned> = std::iter::once(&server).chain(clients.iter()).collect();
    let err = server.stderr();
    assert!(
        LUCENE_VIOLATION.iter().any(|v| err.contains(v)),
        "Lucene's server saw no violation between flock and POSIX locks\n{}",
        describe_all(&all)
    );
    assert!(
        oks.iter().any(|ok| !*ok),
        "after a violation the clients must fail\n{}",
        describe_all(&all)
    );
}

/// Our server, Lucene's clients.
#[test]
fn lockwright_server_with_lucene_clients() {
    let jar = jar();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = our_server(2);
    let mut clients = vec![
        lucene_client(&jar, 1, port, dir.path(), 1, 300),
        lucene_client(&jar, 2, port, dir.path(), 1, 300),
    ];
    let (server_ok, oks) = finish(&mut server, &mut clients);
    let all: Vec<&Spawned> = std::iter::once(&server).chain(clients.iter()).collect();
    assert!(
        server_ok && oks.iter().all(|ok| *ok),
        "{}",
        describe_all(&all)
    );
    let out = server.stdout();
    assert!(out.contains("violations=0"), "{}", describe_all(&all));
    let acquisitions: u64 = out
        .split("acquisitions=")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(acquisitions > 0, "{}", describe_all(&all));
    for c in &clients {
        assert!(
            c.stdout().contains("Finished 300 tries."),
            "{}",
            c.describe()
        );
    }
}

/// Lucene's server, our clients.
#[test]
fn lucene_server_with_lockwright_clients() {
    let jar = jar();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, port) = lucene_server(&jar, 2);
    let mut clients = vec![
        our_client(1, port, dir.path(), "ofd", 1, 300),
        our_client(2, port, dir.path(), "posix", 1, 300),
    ];
    let (server_ok, oks) = finish(&mut server, &mut clients);
    let all: Vec<&Spawned> = std::iter::once(&server).chain(clients.iter()).collect();
    assert!(
        server_ok && oks.iter().all(|ok| *ok),
        "{}",
        describe_all(&all)
    );
    let err = server.stderr();
    assert!(
        !LUCENE_VIOLATION.iter().any(|v| err.contains(v)) && !err.contains("Exception"),
        "{}",
        describe_all(&all)
    );
    assert!(
        server.stdout().contains("Server terminated."),
        "{}",
        describe_all(&all)
    );
}
