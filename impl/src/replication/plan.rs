//! The copier's orders as data (the same step table as the model's
//! `lockwright_model::replication::Variant::program`), and the steps.

use std::fmt;

/// The prefix of the copier's temporary names (`pending__0.cfs`, `pending_segments_3`), as
/// Lucene 5+ names its pending `segments_N`. Lucene 4.10's reader parses only names that
/// start with `segments`, so it never looks at these.
pub const TEMP_PREFIX: &str = "pending_";

/// The order in which [`crate::replication::Copier`] replicates a commit.
///
/// [`Order::Lockwright`] is the one to use. The others re-create the orders the model finds
/// unsafe, so that tests can show real readers failing under them: test-only, they need the
/// `defects` cargo feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Order {
    /// Every new data file to a temporary name, `fsync`, `rename`; then `segments_N` the same
    /// way; `fsync` the directory; then delete every index file that belongs neither to the
    /// new commit nor to the commit of the previous round (the seed's rule: a generation's
    /// files go only at the sync after the next).
    Lockwright,
    /// `segments_N` first, then the data files, in place; then delete what the new commit does
    /// not name.
    #[cfg(feature = "defects")]
    SegmentsFirst,
    /// One interleaving of a naive sync: every delete first, then `segments_N`, then the data
    /// files, in place (the model explores every interleaving; this is the one its shortest
    /// counterexamples start with).
    #[cfg(feature = "defects")]
    AnyOrder,
    /// The seed's rule as written: data files, then `segments_N`, plain in-place copies, then
    /// delete what belongs to neither this commit nor the previous one.
    #[cfg(feature = "defects")]
    SeedRule,
    /// Lucene 4.10's `IndexReplicationHandler`: the data files in place, then `segments_N` in
    /// place, then delete every index file the new commit does not name.
    #[cfg(feature = "defects")]
    Lucene410Handler,
    /// Lucene 5–9's `IndexReplicationHandler`: the data files in place, `segments_N` through a
    /// temporary name and a `rename`, directory sync, then delete every index file the new
    /// commit does not name.
    #[cfg(feature = "defects")]
    Lucene5Handler,
    /// lockwright's own hybrid without retention: [`Order::Lockwright`]'s copies, then delete
    /// the previous generation's files at once.
    #[cfg(feature = "defects")]
    LockwrightNoRetention,
}

impl Order {
    /// The model's name of this order (`lockwright`, `seed-rule`, …).
    pub fn name(self) -> &'static str {
        match self {
            Order::Lockwright => "lockwright",
            #[cfg(feature = "defects")]
            Order::SegmentsFirst => "segments-first",
            #[cfg(feature = "defects")]
            Order::AnyOrder => "any-order",
            #[cfg(feature = "defects")]
            Order::SeedRule => "seed-rule",
            #[cfg(feature = "defects")]
            Order::Lucene410Handler => "lucene-4.10-handler",
            #[cfg(feature = "defects")]
            Order::Lucene5Handler => "lucene-5-handler",
            #[cfg(feature = "defects")]
            Order::LockwrightNoRetention => "lockwright-no-retention",
        }
    }

    /// The step table.
    pub(crate) fn program(self) -> Program {
        #[cfg(feature = "defects")]
        use CopyMethod::InPlace;
        use CopyMethod::TempFsyncRename;
        use Phase::*;
        let (phases, data, segments, keep): (&'static [Phase], _, _, _) = match self {
            Order::Lockwright => (
                &[CopyData, CopySegments, SyncDir, DeleteOld],
                TempFsyncRename,
                TempFsyncRename,
                Keep::NewAndPrevious,
            ),
            #[cfg(feature = "defects")]
            Order::SegmentsFirst => (
                &[CopySegments, CopyData, DeleteOld],
                InPlace,
                InPlace,
                Keep::New,
            ),
            #[cfg(feature = "defects")]
            Order::AnyOrder => (
                &[DeleteOld, CopySegments, CopyData],
                InPlace,
                InPlace,
                Keep::New,
            ),
            #[cfg(feature = "defects")]
            Order::SeedRule => (
                &[CopyData, CopySegments, DeleteOld],
                InPlace,
                InPlace,
                Keep::NewAndPrevious,
            ),
            #[cfg(feature = "defects")]
            Order::Lucene410Handler => (
                &[CopyData, CopySegments, DeleteOld],
                InPlace,
                InPlace,
                Keep::New,
            ),
            #[cfg(feature = "defects")]
            Order::Lucene5Handler => (
                &[CopyData, CopySegments, SyncDir, DeleteOld],
                InPlace,
                TempFsyncRename,
                Keep::New,
            ),
            #[cfg(feature = "defects")]
            Order::LockwrightNoRetention => (
                &[CopyData, CopySegments, SyncDir, DeleteOld],
                TempFsyncRename,
                TempFsyncRename,
                Keep::New,
            ),
        };
        Program {
            phases,
            data,
            segments,
            keep,
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a round does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Program {
    pub phases: &'static [Phase],
    /// How a data file is copied.
    pub data: CopyMethod,
    /// How `segments_N` is copied.
    pub segments: CopyMethod,
    pub keep: Keep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    CopyData,
    CopySegments,
    SyncDir,
    DeleteOld,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyMethod {
    // Only the test-only orders copy in place.
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    InPlace,
    TempFsyncRename,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    // Only the test-only orders delete the previous commit at once.
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    New,
    NewAndPrevious,
}

/// One mutating call of the copier's [`crate::replication::ReplicaFs`]: exactly one action of
/// the model (`lockwright_model::replication::Action`, named in [`Step::model_action`]).
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
