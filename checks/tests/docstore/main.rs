//! The document-store client (`lockwright::docstore`): its HTTP layer and error table against
//! the loopback store, the client's tables against the model's, the server's clock, bounded
//! time, the fixed recipe's requests, shuttle runs refined against the model, and the opt-in
//! real cluster. `cargo test -p lockwright-checks --test docstore`.

mod docstore_bodies;
mod docstore_shuttle_support;

mod bounded;
mod client_fixes;
mod client_tables;
mod clock;
mod clock_margin;
mod error_table;
mod fixed_recipe;
mod http;
mod install;
mod loopback_bodies;
mod owned_guard;
mod real_cluster;
mod renew_claimed;
mod shuttle;
mod shuttle_store_faults;
mod tls_errors;
mod versions;

/// Tests that assert on elapsed time take [`timing`] (exclusive); this binary's CPU-heavy
/// suites take [`heavy`] (shared). On this 2-core machine a timing test then never runs beside
/// them, as it never did when each suite was a binary of its own.
static QUIET: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Exclusive: no heavy suite runs meanwhile.
pub fn timing() -> std::sync::RwLockWriteGuard<'static, ()> {
    QUIET.write().unwrap_or_else(|p| p.into_inner())
}

/// Shared among the heavy suites.
pub fn heavy() -> std::sync::RwLockReadGuard<'static, ()> {
    QUIET.read().unwrap_or_else(|p| p.into_inner())
}

/// An error and its causes on one line, as an error-chain printer shows them (`a: b: c`): the
/// messages follow the std style, so a cause is in its own message only.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}
