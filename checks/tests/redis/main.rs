//! The Redis lock (`lockwright::redis`): the real client code under shuttle on a simulated
//! Redis built on the model's instance semantics (`sim`, `shuttle`), and against real
//! `redis-server`s started by the tests (`real_server`). `cargo test -p lockwright-checks
//! --test redis`.

mod error_table;
mod peers;
mod real_server;
mod redlock_crate;
mod shuttle;
mod sim;
mod stress;

/// Tests that assert on elapsed time take [`timing`] (exclusive); this binary's CPU-heavy
/// suites take [`heavy`] (shared). On this 2-core machine a timing test then never runs beside
/// them.
static QUIET: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Exclusive: no heavy suite runs meanwhile.
pub fn timing() -> std::sync::RwLockWriteGuard<'static, ()> {
    QUIET.write().unwrap_or_else(|p| p.into_inner())
}

/// Shared among the heavy suites.
pub fn heavy() -> std::sync::RwLockReadGuard<'static, ()> {
    QUIET.read().unwrap_or_else(|p| p.into_inner())
}
