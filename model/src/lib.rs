//! Stateright models of writer-lock protocol families, each explored exhaustively with crashes
//! and other faults by one shared checker.
//!
//! - [`checker`]: the exhaustive BFS every family runs on: verdicts, state counts, shortest
//!   counterexamples.
//! - [`family`]: what the CLI, the report and the Explorer need of every family's model.
//! - [`file`](mod@file): file locks — a per-process held set plus an OS advisory lock on `write.lock`
//!   (Lucene's `NativeFSLockFactory` and its relatives).
//! - [`docstore`]: document-store locks — the Elasticsearch recipes (global, document,
//!   read/write) as written, and a corrected recipe with leases and fencing tokens.
//! - [`zk`]: the ZooKeeper mutex — Curator's `InterProcessMutex` and the lockwright recipe,
//!   with session expiry, lost replies and a re-created parent.
//! - [`etcd`]: etcd's lease mutex — `concurrency.Mutex` 3.5 and 3.4 (etcd-io/etcd#11456), the
//!   lock service, with leases on the server's clock, compaction and leader changes.
//! - [`replication`]: replication by generations — a copier brings each commit of a Lucene
//!   index into a replica that readers reopen continuously (the seed's rule, Lucene's
//!   replicator).
//! - [`redis`]: Redis locks — the single-instance lock and Redlock over N instances, with
//!   clock jumps, pauses, restarts and fail-overs (Kleppmann's and Sanfilippo's scenarios).
//!
//! Each family folder holds its semantics module (what the kernel or server does, shared with
//! the simulator the checks run the real implementation on) and its protocol.

/// The model's version, for citations: bumped whenever a change to a model changes any
/// state count, verdict or counterexample pinned in the tests.
pub const MODEL_VERSION: &str = "6";

pub mod checker;
pub mod docstore;
pub mod etcd;
pub mod family;
pub mod file;
pub mod redis;
pub mod replication;
pub mod zk;

pub use checker::{check, Checkable, Report, Verdict};
pub use family::Family;
