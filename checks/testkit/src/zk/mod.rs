//! The real ZooKeeper mutex (`lockwright::zk::ZkMutex`) on a simulated ZooKeeper, for shuttle.
//! The simulated server is no copy of ZooKeeper's semantics: it runs the model's
//! (`lockwright_model::zk::server::Server`, used verbatim), so the model and the simulation
//! cannot drift.
//!
//! - [`record`]: what a run records ([`Step`]s: client or environment, call, answer).
//! - `core`: the server's state and the effect of each call (shared by the simulation and the
//!   replayer's shadow).
//! - [`world`]: [`SimZk`], the simulated server behind one lock, its faults, and [`SimCoord`],
//!   one client's `Coordination` handle.
//! - [`workload`]: which simulated clients do what with the real `ZkMutex`.
//! - [`refine`]: replays a recording through the Stateright model step by step.
//! - `suspend`: a suspended connection (the connection drops while the session lives), in the
//!   server's state; `world/suspend.rs` has what a suspended client's requests do.
//! - [`suite`]: what the shuttle suites share (explore with refinement, find and pin a broken
//!   variant's schedule).

mod core;
pub mod record;
pub mod refine;
pub mod suite;
pub mod suspend;
pub mod workload;
pub mod world;

pub use record::{format_trace, Call, Outcome, Queued, Step};
pub use refine::Refinement;
pub use workload::{Fault, GiveUp, GiveUps, Workload, Writes};
pub use world::{take_failure, Failure, SimCoord, SimZk, DIR};
