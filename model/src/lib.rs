//! Stateright model of the writer-lock protocol family: a per-process held set plus an OS
//! advisory lock on `write.lock` (Lucene's `NativeFSLockFactory` and its relatives), with
//! crash, restart and operator faults, checked exhaustively.
//!
//! - [`os`]: Linux lock and file semantics for one lock path (shared with the simulated OS).
//! - [`protocol`]: the model — [`Scenario`] (implements [`stateright::Model`]), [`State`],
//!   [`Action`], the property names.
//! - [`checker`]: the exhaustive BFS that produces verdicts, state counts and shortest
//!   counterexamples.
//!
//! `docs/model.md` has the verdict table and the commands.

/// The model's version, for citations: bumped whenever a change to the model changes any
/// state count, verdict or counterexample pinned in `model/tests/verdicts.rs`.
pub const MODEL_VERSION: &str = "1";

pub mod checker;
pub mod os;
pub mod protocol;

pub use checker::{check, Report, Verdict};
pub use os::LockKind;
pub use protocol::{Action, Event, Faults, Pc, Pid, Proc, Scenario, State, Thread, Tid, Variant};
