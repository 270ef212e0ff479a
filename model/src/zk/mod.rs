//! The ZooKeeper mutex: Curator's `InterProcessMutex` and the lockwright recipe built on the
//! same steps, with sessions, expiry, lost replies and a re-created parent.
//!
//! - [`server`]: ZooKeeper's semantics for one lock directory (shared with the simulated
//!   server the checks run the real recipe on).
//! - [`scenario`]: the options of a run — [`Variant`], [`WriteMode`], [`Guard`], [`Faults`],
//!   [`Scenario`] — and the per-variant rules.
//! - [`state`]: [`State`], the clients' views ([`Client`], [`Pc`]), renumbering.
//! - [`protocol`]: the model — the step logic, the Stateright `Model` impl, the property names
//!   ([`ALWAYS`], [`SOMETIMES`]); its actions ([`Action`]) are in `action.rs`, what each
//!   does to the state in `apply.rs`, symmetry reduction in `symmetry.rs`, step descriptions
//!   in `describe.rs` (whole paths, with stable numbers, in `describe_path.rs`).
//!
//! `docs/zookeeper.md` has the step table, the verdict table and the counterexamples.

mod action;
mod apply;
mod describe;
mod describe_cleanup;
mod describe_path;
mod family;
pub mod protocol;
pub mod scenario;
pub mod server;
pub mod state;
mod state_debug;
mod symmetry;

pub use protocol::{Action, ALWAYS, SOMETIMES};
pub use scenario::{ClientId, Faults, Guard, Rules, Scenario, Variant, WriteMode};
pub use server::{Name, Seq, Server, SessionId, Uuid, ZkError, Znode, Zxid};
pub use state::{Cleanup, Client, Event, Own, Pc, Resource, Sent, State, PREVIOUS_ATTEMPT};
