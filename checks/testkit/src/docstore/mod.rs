//! The real document-store lock client (`lockwright::docstore`) on a simulated store, for
//! shuttle, and a loopback HTTP server for its HTTP layer. Neither is an Elasticsearch: both
//! serve this project's reading of Elasticsearch's documented semantics, which is the model's
//! (`lockwright_model::docstore::store`, used verbatim).
//!
//! - [`service`]: the store on the model's semantics, and the mapping of the wire vocabulary
//!   (JSON bodies, script ids and params, owner ids) onto the model's types.
//! - [`record`]: what a run records ([`Step`]s: actor, call, outcome).
//! - [`world`]: [`SimStore`], the store and a simulated clock behind one mutex; faults.
//! - [`client`]: [`SimClient`], one simulated client's `lockwright::docstore::DocStore`.
//! - [`workload`]: which simulated threads do what on the real `LeaseLock`.
//! - [`recipes`]: the broken recipes as tables of the library's shape, and [`Defect`], the
//!   switch that puts one in a real `LeaseLock` (they are not in the shipped library).
//! - [`refine`]: replays a recording through the Stateright model step by step.
//! - [`loopback`]: [`LoopbackServer`], the service over HTTP on 127.0.0.1.

pub mod client;
pub mod loopback;
pub mod recipes;
pub mod record;
pub mod refine;
pub mod service;
pub mod workload;
pub mod world;

pub use client::SimClient;
pub use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX, LOCK_INDEX};
pub use loopback::LoopbackServer;
pub use recipes::{create_lock_document, install_fresh, Defect, WithDefect};
pub use record::{format_trace, Actor, Call, Outcome, Step};
pub use workload::{Op, ThreadPlan, Workload};
pub use world::SimStore;
