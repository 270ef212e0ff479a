//! A TLS failure is not a lost reply (issue #35, item 5): it fails at once, with a message that
//! says so. Before, it read as "no answer" and `acquire` sent it again until its timeout.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use lockwright::docstore::{HttpStore, LeaseLock};

#[test]
fn a_tls_failure_fails_at_once_and_says_so() {
    // A listener that accepts and never speaks TLS.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let _accept = std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { break };
            use std::io::Write;
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\nnot tls");
        }
    });
    let url = format!("https://127.0.0.1:{port}");
    let store =
        HttpStore::with_timeouts(&url, Duration::from_millis(300), Duration::from_millis(600));
    let a = LeaseLock::new(store, "files-lock", "1", Duration::from_secs(30)).with_owner("owner-a");
    let started = Instant::now();
    let err = a
        .acquire(Duration::from_secs(3), Duration::from_millis(50))
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "not retried until the timeout: {err}"
    );
    assert!(crate::chain(&err).to_lowercase().contains("tls"), "{err}");
    assert!(!err.store_error().is_some_and(|e| e.no_answer()), "{err}");
}
