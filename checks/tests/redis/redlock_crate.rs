//! The `redlock` crate (2.0.0, the `redlock-rs` the Redlock page once listed) against real
//! servers: its two defects, reproduced, with lockwright's lock on the same servers as the
//! twin (docs/incidents.md, "The redlock crate").
//!
//! 1. `lock()` propagates the first instance error with `?`: one unreachable instance of
//!    three makes every acquisition fail, though a majority is up.
//! 2. The validity is `ttl - drift - elapsed` in `usize`: an acquisition slower than the TTL
//!    wraps (a release build; this workspace builds the crate without overflow checks, as
//!    release does: `[profile.test.package.redlock]`) and is reported as acquired with a
//!    validity of about 1.8e19 ms. The model's `redlock-wrapping-validity` (row 22).

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use lockwright::redis::{RedisLock, RedisLockError, RedisServers};

use crate::real_server::Server;

fn uris(s: &[&Server]) -> Vec<String> {
    s.iter()
        .map(|s| format!("redis://{}/", s.address()))
        .collect()
}

#[test]
fn one_unreachable_instance_of_three_fails_every_redlock_crate_lock() {
    let _t = crate::timing();
    let (a, b, mut c) = (Server::start(), Server::start(), Server::start());
    let all = uris(&[&a, &b, &c]);
    let addresses = [a.address(), b.address(), c.address()];
    c.kill();
    let rl = redlock::RedLock::new(all);
    let got = rl.lock(b"lock", 1000);
    assert!(
        got.is_err(),
        "the redlock crate fails with two of three up: {:?}",
        got.map(|l| l.is_some())
    );
    // lockwright's lock on the same three instances: a majority is enough.
    let ours = RedisLock::new(
        RedisServers::new(&addresses, Duration::from_secs(1)).expect("addresses"),
        "lock2",
        Duration::from_secs(1),
    );
    ours.try_lock()
        .expect("two of three grant")
        .release()
        .expect("released");
}

#[test]
fn an_acquisition_slower_than_the_ttl_wraps_the_redlock_crate_validity() {
    let _t = crate::timing();
    let s = [Server::start(), Server::start(), Server::start()];
    let stall = |server: &Server| {
        let mut c = TcpStream::connect(server.address()).expect("connect");
        c.write_all(b"*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$3\r\n0.4\r\n")
            .expect("DEBUG SLEEP");
        c
    };
    // The first instance stalls 400 ms; the TTL is 100 ms.
    let _c = stall(&s[0]);
    std::thread::sleep(Duration::from_millis(20));
    let rl = redlock::RedLock::new(uris(&[&s[0], &s[1], &s[2]]));
    let lock = rl
        .lock(b"lock", 100)
        .expect("no error")
        .expect("reported as acquired");
    assert!(
        lock.validity_time > 1 << 60,
        "validity wrapped: {} ms",
        lock.validity_time
    );
    eprintln!("redlock crate validity: {} ms", lock.validity_time);
    rl.unlock(&lock);
    // lockwright's lock in the same stall: refused (checked arithmetic).
    std::thread::sleep(Duration::from_millis(500));
    let _c = stall(&s[0]);
    std::thread::sleep(Duration::from_millis(20));
    let addresses = [s[0].address(), s[1].address(), s[2].address()];
    let ours = RedisLock::new(
        RedisServers::new(&addresses, Duration::from_secs(2)).expect("addresses"),
        "lock",
        Duration::from_millis(100),
    );
    let e = ours.try_lock().expect_err("no validity left");
    assert!(matches!(e, RedisLockError::TooSlow { .. }), "{e}");
}
