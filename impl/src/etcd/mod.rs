//! etcd's lease mutex (`concurrency.Mutex`, 3.5 semantics) with lock-lost detection and
//! create-revision fencing.
//!
//! - [`client`]: the small interface the recipe runs on ([`Etcd`]: transaction, range,
//!   watch for a delete, lease grant/keepalive/revoke, the clock).
//! - [`Gateway`]: that interface over etcd's JSON gateway (no async runtime, no protoc).
//! - [`Session`], [`EtcdMutex`], [`EtcdGuard`]: the recipe.
//! - [`EtcdError`], [`EtcdLockError`]: the errors, with one table from etcd's gRPC codes
//!   ([`ERROR_TABLE`]).
//!
//! What it guarantees and what a write must carry: `docs/etcd.md` §6.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use lockwright::etcd::{EtcdMutex, Gateway, Session};
//!
//! let etcd = Arc::new(Gateway::new("http://127.0.0.1:2379"));
//! let session = Arc::new(Session::new(etcd, Duration::from_secs(10))?);
//! let mutex = EtcdMutex::new(session, "/locks/index");
//! let guard = mutex.lock(Duration::from_secs(30))?;
//! guard.guarded_put(b"/index/generation", b"42")?; // refused once the lock is lost
//! guard.unlock()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod client;
mod error;
mod gateway;
mod mutex;
#[cfg(test)]
mod tests;

pub use client::{Etcd, Grant, LeaseId, Revision};
pub use error::{EtcdError, EtcdLockError, LostReason, ERROR_TABLE};
pub use gateway::Gateway;
pub use mutex::{EtcdGuard, EtcdMutex, HighWaterMark, Session};
