//! Multi-process stress tools, wire-compatible with Lucene's `LockVerifyServer` and
//! `LockStressTest` (the same protocol in Lucene 4.10.4 and 9.x):
//!
//! - [`server`]: the verify server. It sees every obtain (`1`) and release (`0`) of every client
//!   and fails on two holders at once. Unlike Lucene's it treats a holder's dropped connection
//!   as a crash (the OS released its lock) and accepts late joiners, so clients can be killed.
//! - [`client`]: one stress client process (`lockwright stress`), Lucene's loop over a
//!   [`lockwright::file::verifying::VerifyingLockFactory`].
//! - [`orchestrator`]: `lockwright stress-run`: a server plus N client processes, SIGKILLs and
//!   replacements.
//! - [`summary`]: what a `stress-run` reports, as text or JSON.
//! - [`proc`]: child processes with captured output, bounded waits and kill-on-drop.
//!
//! `docs/stress.md` documents the protocol and what crash detection can and cannot detect.

pub mod client;
pub mod orchestrator;
pub mod proc;
pub mod server;
pub mod summary;

pub use lockwright::file::verifying::{OBTAINED, RELEASING, START};

/// The lock file Lucene 4.10.4's `LockStressTest` uses: lock prefix `test` + `-` + `test.lock`.
/// (Lucene 5 and later use `test.lock`.)
pub const LUCENE_4_LOCK_NAME: &str = "test-test.lock";
