//! The etcd mutex (`lockwright::etcd`) on real etcd 3.4.23 servers that each test starts and
//! stops on free loopback ports, with etcd's own `etcdctl lock` (the 3.4 Go Mutex) as a peer.
//! The oracles share nothing with the lock: a counter written with plain puts (a lost
//! increment shows a second holder), and etcd's own revision history of the lock prefix.
//! `cargo test -p lockwright-checks --test etcd`; fails where `etcd` is not installed
//! (`bash .ci/prerequisites`).

mod sim;
mod support;

mod go_peer;
mod issue_11456;
mod one_member;
mod peers;
mod shuttle_sim;
mod three_members;

/// Tests that assert on elapsed time take [`timing`] (exclusive); the others [`heavy`].
static QUIET: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Exclusive: no other etcd test runs meanwhile.
pub fn timing() -> std::sync::RwLockWriteGuard<'static, ()> {
    QUIET.write().unwrap_or_else(|p| p.into_inner())
}

/// Shared among the tests that start servers.
pub fn heavy() -> std::sync::RwLockReadGuard<'static, ()> {
    QUIET.read().unwrap_or_else(|p| p.into_inner())
}
