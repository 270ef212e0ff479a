//! File locks: a per-process held set plus an OS advisory lock on a lock file (Lucene's
//! `write.lock` and its relatives).
//!
//! - [`kernel`]: Linux lock and file semantics for one lock path (shared with the simulated
//!   OS of the loom/shuttle checks).
//! - [`protocol`]: the model — [`Scenario`] (implements [`stateright::Model`]), [`State`],
//!   [`Action`], the property names.
//!
//! `docs/model.md` has the verdict table and the commands.

pub mod kernel;
pub mod protocol;

pub use kernel::{LockKind, Pid};
pub use protocol::{Action, Event, Faults, Pc, Proc, Scenario, State, Thread, Tid, Variant};
