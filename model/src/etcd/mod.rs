//! etcd's lease mutex: `client/v3/concurrency.Mutex` (3.5 and 3.4), the v3 lock service, the
//! unlock retried by name (etcd-io/etcd#22082) and `contrib/lock`'s lease-id token, with
//! leases on the server's clock, keepalives, compaction, leader changes and restarts.
//!
//! - [`server`]: etcd's semantics for one lock prefix (shared with the simulated etcd the
//!   checks run the real recipe on).
//! - [`scenario`]: the options of a run — [`Variant`], [`WriteMode`], [`Guard`], [`Faults`],
//!   [`Scenario`].
//! - [`state`]: [`State`], the clients' views ([`Client`], [`Pc`]).
//! - [`protocol`]: the model — the steps, the Stateright `Model` impl, the property names
//!   ([`ALWAYS`], [`SOMETIMES`]).
//!
//! `docs/etcd.md` has the step table, the verdict table and the counterexamples.

mod family;
pub mod protocol;
pub mod scenario;
pub mod server;
pub mod state;

pub use protocol::{Action, ALWAYS, SOMETIMES};
pub use scenario::{ClientId, Faults, Guard, Scenario, Variant, WriteMode, TTL};
pub use server::{Counter, EtcdError, Lease, LeaseId, LockKey, LockTxn, Rev, Server};
pub use state::{Client, Pc, Resource, Session, State};
#[cfg(test)]
mod tests;
