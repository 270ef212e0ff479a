//! `acquire_timeout(t)` against a server stopped by SIGSTOP (issue #33): the connection still
//! reads as up until the client's own read timeout (4 s of silence with a 10 s session), so
//! "abandon a request once the connection is down" alone waited that long. The acquire must
//! return within `t + GIVE_UP_WAIT`, with its create in flight, and with a session to re-open
//! (the connect to the stopped server hangs). Both tests fail on the recipe before the fix
//! (about 5 s and 10 s).

use std::time::{Duration, Instant};

use lockwright::zk::{block_on, ZkLockError, ZkMutex, GIVE_UP_WAIT};
use lockwright_checks::peers::zookeeper::{ZkServer, ZkServerConfig};

use crate::zk_support::{children, client_with, eventually};

/// The timeout asked for.
const T: Duration = Duration::from_millis(300);
/// The test thread's own scheduling on a loaded 2-core machine (not the recipe's time).
const SLACK: Duration = Duration::from_millis(500);

/// A server of its own (these tests stop it); containers are not reaped.
fn own_server() -> ZkServer {
    ZkServer::start_with(ZkServerConfig {
        container_check_ms: None,
        ..ZkServerConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e:#}"))
}

/// Runs `acquire_timeout(T)` on `m` while `s` is stopped; the error and the time it took.
fn timed_out_while_stopped(s: &ZkServer, m: &ZkMutex) -> (ZkLockError, Duration) {
    s.pause();
    let start = Instant::now();
    let r = block_on(m.acquire_timeout(T));
    let took = start.elapsed();
    s.resume();
    match r {
        Ok(g) => panic!("granted by a stopped server: {}", g.node()),
        Err(e) => (e, took),
    }
}

#[test]
fn acquire_timeout_returns_in_time_with_its_create_sent_to_a_stopped_server() {
    let _quiet = crate::timing();
    let s = own_server();
    let zk = client_with(&s, Duration::from_secs(10));
    let d = "/locks/stopped-create";
    let m = ZkMutex::new(zk.clone(), d).unwrap();
    // The directory exists: the acquire's first request is its create.
    block_on(block_on(m.acquire()).unwrap().release()).unwrap();
    let creates = zk.stats().creates;
    let (e, took) = timed_out_while_stopped(&s, &m);
    assert_eq!(zk.stats().creates, creates + 1, "the create was sent");
    assert!(matches!(e, ZkLockError::TimedOut { .. }), "{e}");
    assert!(
        took <= T + GIVE_UP_WAIT + SLACK,
        "returned after {took:?}, past t + GIVE_UP_WAIT = {:?}: {e}",
        T + GIVE_UP_WAIT
    );
    // Thawed: the create may have been applied; its cleanup deletes it.
    assert!(
        eventually(Duration::from_secs(15), || children(&zk, d).is_empty()),
        "left behind: {:?}",
        children(&zk, d)
    );
}

#[test]
fn acquire_timeout_returns_in_time_when_its_session_must_be_reopened_on_a_stopped_server() {
    let _quiet = crate::timing();
    let s = own_server();
    let zk = client_with(&s, Duration::from_secs(10));
    let m = ZkMutex::new(zk.clone(), "/locks/stopped-reopen").unwrap();
    block_on(zk.kill_session()).unwrap();
    let (e, took) = timed_out_while_stopped(&s, &m);
    assert!(matches!(e, ZkLockError::TimedOut { .. }), "{e}");
    assert!(
        took <= T + GIVE_UP_WAIT + SLACK,
        "returned after {took:?}, past t + GIVE_UP_WAIT = {:?}: {e}",
        T + GIVE_UP_WAIT
    );
    // Thawed, the client goes on: the next acquire re-opens the session and is granted.
    let g = block_on(m.acquire_timeout(Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("after the thaw: {e}"));
    block_on(g.release()).unwrap();
}

/// A guard dropped just before the process exits: its delete runs in the background, and
/// dies with the process. The client reports it (`background_tasks`) and lets the caller wait
/// for it (`wait_background`). Here the server is stopped when the guard is dropped, so the
/// delete cannot be done yet: it is counted, a short wait reports it still running, and once
/// the server is back the wait ends with none left and the node gone.
#[test]
fn a_dropped_guards_delete_is_reported_until_it_is_done() {
    let _quiet = crate::timing();
    let s = own_server();
    let zk = client_with(&s, Duration::from_secs(10));
    let d = "/locks/dropped-before-exit";
    let m = ZkMutex::new(zk.clone(), d).unwrap();
    let g = block_on(m.acquire()).unwrap();
    assert_eq!(zk.background_tasks(), 0);
    s.pause();
    drop(g);
    assert_eq!(zk.background_tasks(), 1, "the delete is counted");
    assert_eq!(
        block_on(zk.wait_background(Duration::from_millis(200))),
        1,
        "still running while the server is stopped"
    );
    s.resume();
    assert_eq!(block_on(zk.wait_background(Duration::from_secs(15))), 0);
    assert!(children(&zk, d).is_empty(), "{:?}", children(&zk, d));
}
