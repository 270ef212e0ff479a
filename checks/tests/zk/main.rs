//! The ZooKeeper mutex on a real ZooKeeper 3.8 server (each test starts and stops its own on a
//! free loopback port): the mutex, the request table, a lost lock, faults and cancellation,
//! Curator and kazoo as peers, and the stress runs on one server and on an ensemble.
//! `cargo test -p lockwright-checks --test zk`.

mod zk_stress_support;
mod zk_support;

mod counter_top;
mod curator;
mod faults;
mod kazoo;
mod lock_lost;
mod mutex;
mod request_table;
mod sequence_back;
mod stress_ensemble;
mod stress_run;
mod trace;

/// Tests that assert on elapsed time take [`timing`] (exclusive). The suites that load the
/// machine take [`heavy`] (shared): the stress runs (one server and three), the Curator and
/// kazoo peers (a JVM, a Python process), and the request table (29 rows, 8 at a time). A
/// timing test then never runs beside them; it may run beside a light test of the mutex.
static QUIET: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Exclusive: no heavy suite runs meanwhile.
pub fn timing() -> std::sync::RwLockWriteGuard<'static, ()> {
    QUIET.write().unwrap_or_else(|p| p.into_inner())
}

/// Shared among the heavy suites.
pub fn heavy() -> std::sync::RwLockReadGuard<'static, ()> {
    QUIET.read().unwrap_or_else(|p| p.into_inner())
}
