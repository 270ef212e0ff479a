//! Stateright models of writer-lock protocol families, each explored exhaustively with crashes
//! and other faults by one shared checker.
//!
//! - [`checker`]: the exhaustive BFS every family runs on: verdicts, state counts, shortest
//!   counterexamples.
//! - [`file`]: file locks — a per-process held set plus an OS advisory lock on `write.lock`
//!   (Lucene's `NativeFSLockFactory` and its relatives).
//! - [`replication`]: replication by generations — a copier brings each commit of a Lucene
//!   index into a replica that readers reopen continuously (the seed's rule, Lucene's
//!   replicator).
//!
//! Each family folder holds its semantics module (what the kernel or server does, shared with
//! the simulator the checks run the real implementation on) and its protocol.

/// The model's version, for citations: bumped whenever a change to a model changes any
/// state count, verdict or counterexample pinned in the tests.
pub const MODEL_VERSION: &str = "1";

pub mod checker;
pub mod file;
pub mod replication;

pub use checker::{check, Checkable, Report, Verdict};
