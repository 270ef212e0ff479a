//! Document-store locks: the Elasticsearch recipes of "Elasticsearch系列---实现分布式锁"
//! (global, document and read/write locks, exactly as written), the Definitive Guide's
//! document lock over several documents as a `_bulk` of `create`s (`document-bulk`), and a
//! corrected recipe (owner, lease, fencing tokens claimed at acquire): `leased`, fixed against
//! the store's own faults, and `leased-upsert`, the same before that fix.
//!
//! - [`store`]: Elasticsearch's per-document write semantics for one index (create-if-absent,
//!   get, scripted update with upsert, delete, `if_seq_no`/`if_primary_term`, fail-over), and
//!   the stored scripts; shared with the simulated store and the loopback HTTP server of the
//!   checks.
//! - [`scenario`]: recipes, write modes, roles, fault budgets, [`Scenario`].
//! - [`protocol`]: the model — [`State`], the step table [`next`] (kept in `table.rs`),
//!   [`Action`], the property names, the [`stateright::Model`] impl; what each step sends
//!   ([`Request`], `Scenario::request`) and the transition function are in private files next
//!   to it.
//!
//! `docs/docstore.md` has the verdict table and the commands.

mod apply;
mod canon;
mod describe;
mod enabled;
mod family;
mod holders;
pub mod protocol;
pub mod requests;
pub mod scenario;
pub mod store;
mod table;

pub use describe::{outcome_text, request_text};
pub use protocol::{
    next, Action, Client, ClientId, Delivery, Event, Pc, Session, State, Step, ALWAYS, SOMETIMES,
};
pub use requests::{Index, Request};
pub use scenario::{Faults, Role, Scenario, Variant, Writes};
