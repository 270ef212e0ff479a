//! The replication copier's orders other than lockwright's, as step tables: the orders the
//! model (`lockwright_model::replication`) finds unsafe, which the real
//! `lockwright::replication::Copier` runs so that tests can show real readers failing exactly
//! where the model's counterexamples say (`checks/tests/replication_lucene/`). The library
//! ships only [`Order::Lockwright`]; these tables are data of the same shape
//! (`lockwright::replication::table`, behind the `test-util` feature), interpreted by the same
//! copier.
//!
//! | order | phases | data file copied | `segments_N` copied | a round keeps |
//! |---|---|---|---|---|
//! | [`SEGMENTS_FIRST`] | segments, data, delete | in place | in place | the new commit |
//! | [`ANY_ORDER`] | delete, segments, data | in place | in place | the new commit |
//! | [`SEED_RULE`] | data, segments, delete | in place | in place | the new and the previous commit |
//! | [`LUCENE_410_HANDLER`] | data, segments, delete | in place | in place | the new commit |
//! | [`LUCENE_5_HANDLER`] | data, segments, sync dir, delete | in place | temp, fsync, rename | the new commit |
//! | [`LOCKWRIGHT_NO_RETENTION`] | data, segments, sync dir, delete | temp, fsync, rename | temp, fsync, rename | the new commit |
//! | [`Order::Lockwright`] (the library's) | data, segments, sync dir, delete | temp, fsync, rename | temp, fsync, rename | the new and the previous commit |
//!
//! Each order is named as the model's variant ([`Order::name`] parses with
//! `Variant::from_name`), and each table is the model's `Variant::program` (checked by this
//! module's tests), except that the model's `any-order` explores every interleaving and
//! [`ANY_ORDER`] is one of them.

use lockwright::replication::table::{CopyMethod, Keep, Phase, Program};
use lockwright::replication::Order;
use lockwright_model::replication::Variant;

use CopyMethod::{InPlace, TempFsyncRename};
use Phase::{CopyData, CopySegments, DeleteOld, SyncDir};

/// `segments_N` first, then the data files, in place; then delete what the new commit does not
/// name.
pub const SEGMENTS_FIRST: Order = Order::from_program(
    "segments-first",
    Program {
        phases: &[CopySegments, CopyData, DeleteOld],
        data: InPlace,
        segments: InPlace,
        keep: Keep::New,
    },
);

/// One interleaving of a naive sync: every delete first, then `segments_N`, then the data
/// files, in place (the model explores every interleaving; this is the one its shortest
/// counterexamples start with).
pub const ANY_ORDER: Order = Order::from_program(
    "any-order",
    Program {
        phases: &[DeleteOld, CopySegments, CopyData],
        data: InPlace,
        segments: InPlace,
        keep: Keep::New,
    },
);

/// The seed's rule as written: data files, then `segments_N`, plain in-place copies, then
/// delete what belongs to neither this commit nor the previous one.
pub const SEED_RULE: Order = Order::from_program(
    "seed-rule",
    Program {
        phases: &[CopyData, CopySegments, DeleteOld],
        data: InPlace,
        segments: InPlace,
        keep: Keep::NewAndPrevious,
    },
);

/// Lucene 4.10's `IndexReplicationHandler`: the data files in place, then `segments_N` in
/// place, then delete every index file the new commit does not name.
pub const LUCENE_410_HANDLER: Order = Order::from_program(
    "lucene-4.10-handler",
    Program {
        phases: &[CopyData, CopySegments, DeleteOld],
        data: InPlace,
        segments: InPlace,
        keep: Keep::New,
    },
);

/// Lucene 5–9's `IndexReplicationHandler`: the data files in place, `segments_N` through a
/// temporary name and a `rename`, directory sync, then delete every index file the new commit
/// does not name.
pub const LUCENE_5_HANDLER: Order = Order::from_program(
    "lucene-5-handler",
    Program {
        phases: &[CopyData, CopySegments, SyncDir, DeleteOld],
        data: InPlace,
        segments: TempFsyncRename,
        keep: Keep::New,
    },
);

/// lockwright's own hybrid without retention: [`Order::Lockwright`]'s copies, then delete the
/// previous generation's files at once.
pub const LOCKWRIGHT_NO_RETENTION: Order = Order::from_program(
    "lockwright-no-retention",
    Program {
        phases: &[CopyData, CopySegments, SyncDir, DeleteOld],
        data: TempFsyncRename,
        segments: TempFsyncRename,
        keep: Keep::New,
    },
);

/// The orders the model finds unsafe, in the model's order ([`Variant::ALL`]).
pub const UNSAFE: [Order; 6] = [
    SEGMENTS_FIRST,
    ANY_ORDER,
    SEED_RULE,
    LUCENE_410_HANDLER,
    LUCENE_5_HANDLER,
    LOCKWRIGHT_NO_RETENTION,
];

/// The copier's order for the model's `variant`.
pub fn order(variant: Variant) -> Order {
    std::iter::once(Order::Lockwright)
        .chain(UNSAFE)
        .find(|o| o.name() == variant.name())
        .expect("every model variant has a table")
}

#[cfg(test)]
mod tests;
