//! Bounded time: the document-store client never blocks much longer than asked,
//! measured against the loopback store answering slowly (`LoopbackServer::answer_slowly`:
//! every request applied, its answer sent only after `SLOW`, well past the client's request
//! timeout `REQUEST`).
//!
//! The oracle is outside the client: the wall time each call took (`Instant`) and the
//! requests the server saw. Each bound has a twin that runs a variant which does block longer
//! (more attempts per request, an explicit release with retries) and shows the same
//! measurement catching it.
//!
//! - `try_acquire` sends one request and returns within one request timeout.
//! - `acquire(timeout)` returns no later than `timeout` plus one request.
//! - Dropping a guard sends one release and returns within one request timeout.

use std::time::{Duration, Instant};

use lockwright::docstore::{DocLockError, HttpStore, LeaseLock};
use lockwright_testkit::docstore::LoopbackServer;

const LOCKS: &str = "files-lock";
/// The client's timeout for a whole request.
const REQUEST: Duration = Duration::from_millis(300);
/// How late the slow store answers.
const SLOW: Duration = Duration::from_millis(1_500);
/// Room for a loaded machine on top of a bound.
const SLACK: Duration = Duration::from_millis(350);

fn lock(server: &LoopbackServer, owner: &str) -> LeaseLock<HttpStore> {
    let store = HttpStore::with_timeouts(&server.url(), REQUEST, REQUEST);
    LeaseLock::new(store, LOCKS, "1", Duration::from_secs(30)).with_owner(owner)
}

fn sent(server: &LoopbackServer, prefix: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.starts_with(prefix))
        .count()
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

#[test]
fn try_acquire_sends_one_request_and_returns_within_one_request_timeout() {
    let _quiet = crate::timing();
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    server.answer_slowly(Some(SLOW));
    let (got, took) = timed(|| a.try_acquire());
    let e = got.expect_err("no answer within the request timeout");
    assert!(
        e.store_error().is_some_and(|s| s.no_answer()),
        "no answer: {e}"
    );
    assert_eq!(sent(&server, "POST /files-lock/_update/1"), 1);
    assert!(took < REQUEST + SLACK, "took {took:?}");

    // Twin: three attempts per request block for three request timeouts.
    let b = lock(&server, "owner-b").with_attempts(3);
    let (got, took) = timed(|| b.try_acquire());
    assert!(got.is_err());
    assert_eq!(sent(&server, "POST /files-lock/_update/1"), 1 + 3);
    assert!(took >= REQUEST * 3, "took {took:?}");
    assert!(took >= REQUEST + SLACK, "the bound catches it");
}

#[test]
fn acquire_never_passes_its_timeout_by_more_than_one_request() {
    let _quiet = crate::timing();
    let timeout = Duration::from_millis(600);
    let poll = Duration::from_millis(100);
    let bound = timeout + REQUEST + SLACK;
    let server = LoopbackServer::start();
    let a = lock(&server, "owner-a");
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let _held = a.try_acquire().unwrap();
    server.answer_slowly(Some(SLOW));
    let b = lock(&server, "owner-b");
    let (got, took) = timed(|| b.acquire(timeout, poll));
    assert!(matches!(got, Err(DocLockError::TimedOut { .. })), "{got:?}");
    assert!(took >= timeout && took < bound, "took {took:?}");

    // Twin: five attempts per try overshoot the timeout by four request timeouts.
    let c = lock(&server, "owner-c").with_attempts(5);
    let (got, took) = timed(|| c.acquire(timeout, poll));
    assert!(got.is_err());
    assert!(took >= REQUEST * 5, "took {took:?}");
    assert!(took >= bound, "the bound catches it: took {took:?}");
}

#[test]
fn dropping_a_guard_sends_one_release_and_returns_within_one_request_timeout() {
    let _quiet = crate::timing();
    let server = LoopbackServer::start();
    // Three attempts: an explicit release may retry, a drop never does.
    let a = lock(&server, "owner-a").with_attempts(3);
    lockwright_testkit::docstore::install_fresh(&a).unwrap();
    let g = a.try_acquire().unwrap();
    server.answer_slowly(Some(SLOW));
    let ((), took) = timed(|| drop(g));
    assert_eq!(sent(&server, "POST /files-lock/_update/1?if_seq_no"), 1);
    assert!(took < REQUEST + SLACK, "took {took:?}");

    // Twin: an explicit release with three attempts blocks for three request timeouts.
    server.answer_slowly(None);
    let g = a.try_acquire().unwrap();
    server.answer_slowly(Some(SLOW));
    let (got, took) = timed(|| g.release());
    assert!(got.is_err(), "no answer");
    assert_eq!(sent(&server, "POST /files-lock/_update/1?if_seq_no"), 1 + 3);
    assert!(took >= REQUEST * 3, "took {took:?}");
    assert!(took >= REQUEST + SLACK, "the bound catches it");
}
