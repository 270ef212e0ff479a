//! The ZooKeeper mutex (feature `zookeeper`): Curator's `InterProcessMutex` protocol as a
//! fair, re-entrant, fenced lock, interoperable with Curator on the same lock directory.
//!
//! ```no_run
//! use lockwright::zk::{block_on, HighWaterMark, ZkClient, ZkMutex};
//! use std::time::Duration;
//!
//! block_on(async {
//!     let zk = ZkClient::connect("127.0.0.1:2181").await?;
//!     let mutex = ZkMutex::new(zk, "/locks/my-index")?;
//!     let guard = mutex.acquire_timeout(Duration::from_secs(10)).await?;
//!     // Claim the resource with the fencing token before reading it: from now on it refuses
//!     // every holder that lost the lock before us, so none can overwrite what we read.
//!     let store = HighWaterMark::new(); // your resource implements `FencedResource`
//!     let claimed = guard.claim(&store)?;
//!     let seen = claimed.read(|s| s.highest());
//!     claimed.write(|_s| { /* write what you computed from `seen` */ })?;
//!     # let _ = seen;
//!     guard.release().await?; // or drop it: released in the background
//!     Ok::<(), Box<dyn std::error::Error>>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Structure (as Curator's `locks/` package)
//!
//! - [`ZkMutex`] / [`ZkGuard`] (module `mutex`): the public API: acquire, try, timeout,
//!   re-enter by guard, `ensure_valid`, guarded writes, the fencing token and the claim of a
//!   fenced resource ([`ZkGuard::claim`], module [`fencing`]), release on drop.
//! - `internals`: the acquire loop and the release, the model's step table per variant.
//! - [`Coordination`] (module [`coord`]): the interface the recipe runs on, one request per
//!   model step; [`ZkClient`] implements it on zookeeper-client; the checks implement it on a
//!   simulated ZooKeeper that shares the model's server semantics.
//!
//! `docs/zookeeper-client.md` has the API tour, the error table, the fencing pattern, the
//! lock-lost semantics and the interop table (Curator, kazoo); `docs/zookeeper.md` the protocol.

mod client;
pub mod coord;
#[cfg(feature = "test-util")]
mod defects;
mod error;
pub mod fencing;
mod internals;
mod mutex;
pub mod names;

pub use client::{ClientStats, ZkAcl, ZkClient, ZkClientBuilder};
pub use coord::{
    CoordError, Coordination, GuardedOp, Listing, LockNode, MultiError, NodeKind, NodeStat,
    OpResult, Search, SessionEvent, SessionId, WatchOutcome,
};
/// The re-created incidents and the model's recipe rules: test-only, behind `test-util`.
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub use defects::{recipe_rules, ZkDefect};
pub use error::{BadPathReason, Cleanup, Holder, LostReason, ZkLockError};
pub use fencing::{Claimed, FencedResource, FencingToken, HighWaterMark, StaleToken};
pub use internals::{
    CLEANUP_LIMIT, DIRECTORY_REMAKE_LIMIT, GIVE_UP_WAIT, SESSION_LIVED, SESSION_REOPEN_LIMIT,
};
pub use mutex::{HoldState, ZkGuard, ZkMutex, REFUSED_CHECKS};

/// Blocks the current thread on a future: the way to use this module from synchronous code.
/// The futures here need no runtime (see [`ZkClient`]).
pub use async_io::block_on;
