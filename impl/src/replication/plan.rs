//! The copier's orders as data (the same step table as the model's
//! `lockwright_model::replication::Variant::program`), and the steps.

use std::fmt;

/// The prefix of the copier's temporary names (`pending__0.cfs`, `pending_segments_3`), as
/// Lucene 5+ names its pending `segments_N`. Lucene 4.10's reader parses only names that
/// start with `segments`, so it never looks at these.
pub const TEMP_PREFIX: &str = "pending_";

/// The order in which [`crate::replication::Copier`] replicates a commit: a step table (data)
/// that the copier interprets.
///
/// [`Order::Lockwright`] is the library's order. The orders the model finds unsafe (Lucene's
/// replication handlers' orders, `seed-rule`, `segments-first`, …) are other tables of the same
/// shape, kept in lockwright's test kit (`lockwright_testkit::replication`) so that tests can
/// run this copier in them and show real readers failing; building one needs the test-only
/// `test-util` cargo feature (`lockwright::replication::table`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Order {
    pub(super) name: &'static str,
    pub(super) program: Program,
}

impl Order {
    /// Every new data file to a temporary name, `fsync`, `rename`; then `segments_N` the same
    /// way; `fsync` the directory; then delete every index file that belongs neither to the
    /// new commit nor to the commit of the previous round (the seed's rule: a generation's
    /// files go only at the sync after the next).
    // Spelled as the enum variant it used to be, so that `Order::Lockwright` reads the same.
    #[allow(non_upper_case_globals)]
    pub const Lockwright: Order = Order {
        name: "lockwright",
        program: Program {
            phases: &[
                Phase::CopyData,
                Phase::CopySegments,
                Phase::SyncDir,
                Phase::DeleteOld,
            ],
            data: CopyMethod::TempFsyncRename,
            segments: CopyMethod::TempFsyncRename,
            keep: Keep::NewAndPrevious,
        },
    };

    /// The model's name of this order (`lockwright`, `seed-rule`, …).
    pub fn name(self) -> &'static str {
        self.name
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Order {
    /// `Order(lockwright)`: the name says which table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Order({})", self.name)
    }
}

/// What a round does: the phases in order, how each kind of file is copied, what the deletes
/// keep (the model's `lockwright_model::replication::Program`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    /// The phases, in order.
    pub phases: &'static [Phase],
    /// How a data file is copied.
    pub data: CopyMethod,
    /// How `segments_N` is copied.
    pub segments: CopyMethod,
    /// Which names survive the round's deletes.
    pub keep: Keep,
}

/// One phase of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Copy each data file of the new commit that the last completed revision does not name.
    CopyData,
    /// Copy `segments_N` of the new commit.
    CopySegments,
    /// `fsync` the replica directory.
    SyncDir,
    /// Delete every index file the round does not keep ([`Keep`]).
    DeleteOld,
}

/// How one file is copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyMethod {
    /// `create` (the name appears, empty), then `fill` (test tables only: the production
    /// table never copies in place).
    InPlace,
    /// `copy_to_temp` (under [`TEMP_PREFIX`]), `fsync`, `rename`.
    TempFsyncRename,
}

/// Which names survive a round's deletes (temporary names never do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// The new commit's files (test tables only: the production table keeps the previous
    /// commit too).
    New,
    /// The new commit's files and those of the copier's previous round; a copier that has
    /// forgotten that round keeps every index file.
    NewAndPrevious,
}

/// One mutating call of the copier's [`crate::replication::ReplicaFs`]: exactly one action of
/// the model (`lockwright_model::replication::Action`, named in `Step::model_action`, with `test-util`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // the fields are the file names each call takes, named as in the calls
pub enum Step {
    /// `create(name)`: an in-place copy begins; the name exists, empty.
    Create { name: String },
    /// `fill(name)`: the source's bytes into the file `create` made; close.
    Fill { name: String },
    /// `copy_to_temp(name, temp)`: the whole source file under the temporary name.
    CopyToTemp { name: String, temp: String },
    /// `fsync(temp)`.
    Fsync { temp: String },
    /// `rename(temp, name)`.
    Rename { temp: String, name: String },
    /// `sync_dir()`: `fsync` of the replica directory.
    SyncDir,
    /// `delete(name)`.
    Delete { name: String },
}

impl Step {
    /// The model action this call is (`Create`, `Fill`, `CopyToTemp`, `Fsync`, `Rename`,
    /// `SyncDir`, `Delete`).
    #[cfg(feature = "test-util")]
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub fn model_action(&self) -> &'static str {
        match self {
            Step::Create { .. } => "Create",
            Step::Fill { .. } => "Fill",
            Step::CopyToTemp { .. } => "CopyToTemp",
            Step::Fsync { .. } => "Fsync",
            Step::Rename { .. } => "Rename",
            Step::SyncDir => "SyncDir",
            Step::Delete { .. } => "Delete",
        }
    }

    /// The replica name the step makes appear under its own name with all its bytes, if any
    /// (`Fill`, `Rename`): after it, a reader can open that file.
    pub fn completes(&self) -> Option<&str> {
        match self {
            Step::Fill { name } | Step::Rename { name, .. } => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for Step {
    /// `rename(pending__0.cfs, _0.cfs)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Create { name } => write!(f, "create({name})"),
            Step::Fill { name } => write!(f, "fill({name})"),
            Step::CopyToTemp { name, temp } => write!(f, "copy_to_temp({name}, {temp})"),
            Step::Fsync { temp } => write!(f, "fsync({temp})"),
            Step::Rename { temp, name } => write!(f, "rename({temp}, {name})"),
            Step::SyncDir => f.write_str("sync_dir()"),
            Step::Delete { name } => write!(f, "delete({name})"),
        }
    }
}

/// Whether `name` is a file a round may delete: a Lucene index file (`segments*`, `_*`) or
/// one of the copier's temporary names. Anything else in the replica (`write.lock`, a user's
/// file) is never touched.
pub fn is_replicated_name(name: &str) -> bool {
    name.starts_with("segments") || name.starts_with('_') || name.starts_with(TEMP_PREFIX)
}

/// The temporary name of `name`.
pub fn temp_name(name: &str) -> String {
    format!("{TEMP_PREFIX}{name}")
}
