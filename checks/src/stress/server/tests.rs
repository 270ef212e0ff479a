//! Unit tests of `server`.

use super::*;
use std::net::Ipv4Addr;

fn start(
    clients: usize,
    on_violation: OnViolation,
    announced: bool,
) -> (SocketAddr, ServerHandle, JoinHandle<ServerReport>) {
    let cfg = ServerConfig {
        clients,
        on_violation,
        crash_grace: Duration::from_millis(300),
        kills_announced: announced,
        log: false,
    };
    let server = VerifyServer::bind((Ipv4Addr::LOCALHOST, 0).into(), cfg).unwrap();
    let addr = server.local_addr().unwrap();
    let handle = server.handle();
    let deadline = Instant::now() + Duration::from_secs(20);
    let t = thread::spawn(move || server.run(deadline, true).unwrap());
    (addr, handle, t)
}

fn client(addr: SocketAddr, id: u8) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&[id]).unwrap();
    s
}

fn gun(s: &mut TcpStream) {
    let mut b = [0u8];
    s.read_exact(&mut b).unwrap();
    assert_eq!(b[0], START);
}

fn send(s: &mut TcpStream, byte: u8) -> Option<u8> {
    s.write_all(&[byte]).unwrap();
    let mut b = [0u8];
    match s.read(&mut b) {
        Ok(1) => Some(b[0]),
        _ => None,
    }
}

#[test]
fn echoes_a_correct_handoff_and_exits_when_idle() {
    let (addr, _h, t) = start(2, OnViolation::Stop, false);
    let mut a = client(addr, 7);
    let mut b = client(addr, 9);
    gun(&mut a);
    gun(&mut b);
    assert_eq!(send(&mut a, OBTAINED), Some(OBTAINED));
    assert_eq!(send(&mut a, RELEASING), Some(RELEASING));
    assert_eq!(send(&mut b, OBTAINED), Some(OBTAINED));
    assert_eq!(send(&mut b, RELEASING), Some(RELEASING));
    drop((a, b));
    let r = t.join().unwrap();
    assert_eq!(r.stats.acquisitions, 2);
    assert_eq!(r.stats.violations, 0);
    assert!(!r.timed_out);
}

#[test]
fn two_live_holders_is_a_violation_and_stops_everyone() {
    let (addr, _h, t) = start(2, OnViolation::Stop, false);
    let mut a = client(addr, 1);
    let mut b = client(addr, 2);
    gun(&mut a);
    gun(&mut b);
    assert_eq!(send(&mut a, OBTAINED), Some(OBTAINED));
    // b's obtain waits the crash grace for a's EOF; a stays alive: violation, all closed.
    assert_eq!(send(&mut b, OBTAINED), None);
    let r = t.join().unwrap();
    assert_eq!(r.stats.violations, 1);
    assert_eq!(r.violation_messages.len(), 1);
    assert!(r.violation_messages[0]
        .starts_with("VIOLATION: id 2 got lock, but 1 already holds the lock"));
}

#[test]
fn a_dead_holder_hands_off_to_a_late_joiner() {
    let (addr, h, t) = start(1, OnViolation::Count, true);
    let mut a = client(addr, 1);
    gun(&mut a);
    assert_eq!(send(&mut a, OBTAINED), Some(OBTAINED));
    let mut b = client(addr, 2);
    gun(&mut b);
    h.announce_kill(1);
    drop(a);
    assert_eq!(send(&mut b, OBTAINED), Some(OBTAINED));
    assert_eq!(send(&mut b, RELEASING), Some(RELEASING));
    drop(b);
    let r = t.join().unwrap();
    assert_eq!(r.stats.violations, 0, "{:?}", r.violation_messages);
    assert_eq!(r.stats.crash_releases, 1);
    assert_eq!(r.stats.late_joins, 1);
}

#[test]
fn unannounced_conflict_is_counted_at_once_when_kills_are_announced() {
    let (addr, _h, t) = start(2, OnViolation::Count, true);
    let mut a = client(addr, 1);
    let mut b = client(addr, 2);
    gun(&mut a);
    gun(&mut b);
    assert_eq!(send(&mut a, OBTAINED), Some(OBTAINED));
    assert_eq!(send(&mut b, OBTAINED), Some(OBTAINED));
    assert_eq!(send(&mut a, RELEASING), Some(RELEASING));
    assert_eq!(send(&mut b, RELEASING), Some(RELEASING));
    drop((a, b));
    let r = t.join().unwrap();
    assert_eq!(r.stats.violations, 1);
    assert_eq!(r.stats.acquisitions, 2);
}
