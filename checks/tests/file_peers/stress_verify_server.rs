//! `lockwright verify-server` as a process: Lucene's wire protocol byte for byte, Lucene's
//! stop-on-violation behaviour, and the crash handling Lucene's server lacks.

use lockwright_checks::stress::proc::{listening_port, Spawned};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lockwright");
const WAIT: Duration = Duration::from_secs(30);

fn server(args: &[&str]) -> (Spawned, u16) {
    let mut s = Spawned::spawn(
        "verify-server",
        Command::new(BIN).arg("verify-server").args(args),
    )
    .unwrap();
    let line = s
        .wait_for_line("Listening on", WAIT)
        .unwrap_or_else(|| panic!("no port\n{}", s.describe()));
    let port = listening_port(&line).unwrap_or_else(|| panic!("bad line {line:?}"));
    (s, port)
}

fn connect(port: u16, id: u8) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    s.write_all(&[id]).unwrap();
    s
}

fn read_byte(s: &mut TcpStream) -> Option<u8> {
    let mut b = [0u8];
    match s.read(&mut b) {
        Ok(1) => Some(b[0]),
        _ => None,
    }
}

fn send(s: &mut TcpStream, byte: u8) -> Option<u8> {
    s.write_all(&[byte]).unwrap();
    read_byte(s)
}

#[test]
fn verify_server_speaks_lucenes_protocol_byte_for_byte() {
    let (mut srv, port) = server(&["--clients", "2"]);
    let mut a = connect(port, 17);
    let mut b = connect(port, 200);
    assert_eq!(read_byte(&mut a), Some(43), "starting gun");
    assert_eq!(read_byte(&mut b), Some(43), "starting gun");
    for _ in 0..3 {
        assert_eq!(send(&mut a, 1), Some(1));
        assert_eq!(send(&mut a, 0), Some(0));
        assert_eq!(send(&mut b, 1), Some(1));
        assert_eq!(send(&mut b, 0), Some(0));
    }
    drop((a, b));
    let status = srv.wait(WAIT);
    assert!(status.is_some_and(|s| s.success()), "{}", srv.describe());
    let out = srv.stdout();
    assert!(
        out.contains("All clients started, fire gun...") && out.contains("Server terminated."),
        "{out}"
    );
    assert!(
        out.contains("acquisitions=6 releases=6 violations=0"),
        "{out}"
    );
}

#[test]
fn verify_server_stops_everyone_on_two_live_holders() {
    let (mut srv, port) = server(&["--clients", "2", "--crash-grace-ms", "100"]);
    let mut a = connect(port, 1);
    let mut b = connect(port, 2);
    assert_eq!(read_byte(&mut a), Some(43));
    assert_eq!(read_byte(&mut b), Some(43));
    assert_eq!(send(&mut a, 1), Some(1));
    // a is alive and holds: b's obtain is a violation; like Lucene, the server hangs up on all.
    assert_eq!(send(&mut b, 1), None);
    assert_eq!(read_byte(&mut a), None);
    let status = srv.wait(WAIT);
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{}", srv.describe());
    assert!(
        srv.stderr()
            .contains("id 2 got lock, but 1 already holds the lock"),
        "{}",
        srv.describe()
    );
}

#[test]
fn verify_server_rejects_a_release_by_a_non_holder() {
    let (mut srv, port) = server(&["--clients", "1"]);
    let mut a = connect(port, 5);
    assert_eq!(read_byte(&mut a), Some(43));
    assert_eq!(send(&mut a, 0), None);
    assert_eq!(
        srv.wait(WAIT).and_then(|s| s.code()),
        Some(1),
        "{}",
        srv.describe()
    );
    assert!(
        srv.stderr()
            .contains("id 5 released the lock, but -1 is the one holding the lock"),
        "{}",
        srv.describe()
    );
}

#[test]
fn verify_server_treats_a_dropped_holder_as_crashed_and_accepts_late_joiners() {
    let (mut srv, port) = server(&["--clients", "1"]);
    let mut a = connect(port, 1);
    assert_eq!(read_byte(&mut a), Some(43));
    // b joins after the gun: it gets the gun at once.
    let mut b = connect(port, 2);
    assert_eq!(read_byte(&mut b), Some(43));
    assert_eq!(send(&mut a, 1), Some(1));
    drop(a); // the holder "crashes": its connection drops while it holds the lock
    assert_eq!(send(&mut b, 1), Some(1), "{}", srv.describe());
    assert_eq!(send(&mut b, 0), Some(0));
    drop(b);
    assert!(
        srv.wait(WAIT).is_some_and(|s| s.success()),
        "{}",
        srv.describe()
    );
    let out = srv.stdout();
    assert!(out.contains("violations=0 crash_releases=1"), "{out}");
    assert!(out.contains("late_joins=1"), "{out}");
}

#[test]
fn lockwright_stress_clients_pass_against_lockwright_verify_server() {
    let (mut srv, port) = server(&["--clients", "2"]);
    let dir = tempfile::tempdir().unwrap();
    let server = format!("127.0.0.1:{port}");
    let mut clients: Vec<Spawned> = (0..2)
        .map(|id| {
            let mut c = Command::new(BIN);
            c.args([
                "stress",
                "--id",
                &id.to_string(),
                "--server",
                &server,
                "--factory",
                "native",
                "--os",
                "ofd",
            ])
            .arg("--dir")
            .arg(dir.path())
            .args(["--sleep-ms", "1", "--count", "200"]);
            Spawned::spawn(format!("client {id}"), &mut c).unwrap()
        })
        .collect();
    for c in &mut clients {
        assert!(
            c.wait(WAIT).is_some_and(|s| s.success()),
            "{}",
            c.describe()
        );
        assert!(
            c.stdout().contains("Finished 200 tries"),
            "{}",
            c.describe()
        );
    }
    assert!(
        srv.wait(WAIT).is_some_and(|s| s.success()),
        "{}",
        srv.describe()
    );
    assert!(dir.path().join("test-test.lock").exists());
}
