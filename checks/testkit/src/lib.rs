//! Dev-only support for the checks: the simulated systems the real `lockwright` code runs on
//! under loom and shuttle, and the replayers that check every simulated run against the
//! Stateright model. Never a dependency of a shipped binary: loom, shuttle and the
//! `lockwright/defects` switches stay out of what users install.
//!
//! - [`budget`]: the `LOCKWRIGHT_DEEP`/`LOOM_MAX_PREEMPTIONS` switches and fixed-seed shuttle
//!   runs every suite uses.
//! - [`prims`]: the one sync facade (loom, shuttle, std) with identical signatures.
//! - [`schedules`]: shuttle's fixed-seed search for a broken variant's failure, its persisted
//!   schedule, and replaying it.
//! - [`refine`]: what every family's refinement replayer shares (the model cursor, the
//!   divergence report).
//! - [`file`](mod@file): file locks — the simulated OS, the workloads, the refinement replayer.
//! - [`docstore`]: document-store locks — the simulated store, the workloads, the refinement
//!   replayer, and a loopback HTTP server on the model's semantics.
//! - [`replication`]: the replication copier's unsafe orders (Lucene's handlers', the seed's
//!   rule, …) as step tables the real copier runs.
//! - [`etcd`]: etcd 3.4's Mutex as a wrapper of the [`Etcd`](lockwright::etcd::Etcd)
//!   interface that drives the shipped `EtcdMutex` (the broken variant the #11456 twins
//!   catch).
//! - [`redis`](mod@redis): the Redis lock's broken variants, as `Backend` wrappers around the
//!   production lock's backend.
//! - [`zk`]: the ZooKeeper mutex — a simulated ZooKeeper on the model's server semantics, the
//!   workloads, the refinement replayer.

pub mod budget;
pub mod docstore;
pub mod etcd;
pub mod file;
pub mod prims;
pub mod redis;
pub mod refine;
pub mod replication;
pub mod schedules;
pub mod zk;

pub use prims::{Loom, Runtime, Shuttle, Std};
