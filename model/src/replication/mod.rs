//! Replication by generations: a copier brings each commit of a source index into a replica
//! directory that readers search and reopen continuously (the seed's rule for searching a
//! copied Lucene index, and Lucene's replicator).
//!
//! - [`dir`]: what the replica filesystem and the source index do (shared with a simulated
//!   filesystem the checks can drive the real copier on).
//! - [`scenario`]: the copier's orders as a step table ([`Variant::program`]), the reader
//!   kinds, the pace, the fault budgets, [`Scenario`].
//! - [`protocol`]: the model — [`State`], [`Action`], the property names, the
//!   [`stateright::Model`] implementation.
//!
//! `docs/replication.md` has the verdict table and the commands.

mod describe;
pub mod dir;
mod family;
mod observe;
pub mod protocol;
pub mod scenario;

pub use dir::{Content, Dir, File, FsError, Gen, Name, Source};
pub use protocol::{
    Action, Copier, Event, Opening, Reader, Stage, State, ALWAYS, COMPLETE_COMMIT, NEWEST_OPENED,
    NO_IN_USE_DELETED, NO_LOST_FILE, NO_MISSING_FILE, NO_PARTIAL_READ, OLD_COMMIT_DELETED,
    OPENED_MID_ROUND, R, RECOVERED, SOMETIMES,
};
pub use scenario::{CopyMethod, Faults, Keep, Pace, Phase, Program, ReaderKind, Scenario, Variant};
