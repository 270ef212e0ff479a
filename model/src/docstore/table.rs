//! The step table of the document-store recipes ([`next`]): per recipe and role, which request
//! ([`Step`]) a client sends at each program counter ([`Pc`]). One screen shows what differs
//! between the recipes; `crate::docstore::protocol` re-exports both, and the reference client's
//! own table (`lockwright::docstore::recipe::next`) must equal it cell for cell.

use crate::docstore::protocol::Pc;
use crate::docstore::scenario::{Role, Variant};

/// A client step: one request to the store (or, `CheckLease`, one clock read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// `PUT files-lock/_create/<id>`.
    CreateLock,
    /// `POST files-lock/_update/1` with an `upsert` body and the acquire script.
    UpsertLock,
    /// `POST files-lock/_update/1` with the `rw-unlock` script.
    UpdateUnlock,
    /// `leased` (the fix): `POST files-lock/_update/1` with the `lease-acquire` script and no
    /// `upsert`: a missing lock document is a 404 (an error), never a grant.
    UpdateLock,
    /// `leased` (the fix): `POST files-lock/_update/1?if_seq_no=..&if_primary_term=..` with the
    /// `lease-release` script: the lease is freed, the document stays.
    ReleaseLease,
    /// `leased` (the fix): `POST files-lock/_update/1?if_seq_no=..&if_primary_term=..` with the
    /// `lease-acquire` script, conditioned on the lock document's version the holder last
    /// wrote (its acquire or its last renewal): the lease is extended and the fencing token
    /// stays the acquire's, so a claimed data document keeps accepting the holder's writes.
    /// Taken only while the holder's own deadline has not passed (the client checks its clock
    /// first and sends nothing otherwise).
    RenewLease,
    /// `leased` (the fix): `GET files-lock/_doc/1` after the claim: the client goes on only
    /// if the document still carries its token (changes nothing; never lost in the model).
    VerifyLock,
    /// `DELETE files-lock/_doc/<id>`.
    DeleteLock,
    /// `DELETE files-lock/_doc/1?if_seq_no=..&if_primary_term=..`.
    CompareAndDelete,
    /// `document-bulk`: `POST files-lock/_bulk` with a `create` item per lock document, one
    /// item per step (the first at `Idle`/`Retrying`, the second and the answer at `Bulk`).
    BulkCreateLocks,
    /// `document-bulk`: `POST files-lock/_bulk` with a `delete` item per lock document the
    /// client created (all of them, holding).
    BulkDeleteLocks,
    /// Leased: read the clock; the lease check passes if now < deadline.
    CheckLease,
    /// `POST files/_update/1` with the `fence-claim` script and an `upsert` (`fenced-claim`).
    ClaimData,
    /// `GET files/_doc/1`: the session's read (changes nothing; never lost in the model — a
    /// read that gets no answer is simply sent again).
    ReadData,
    /// `POST files/_update/1`, unfenced (`doc`) or fenced (`fenced-write` script).
    WriteData,
}

/// The step table: which steps client `role` of `variant` may take at `pc` (one screen shows
/// what differs between the recipes). A writer is at `Claiming` only with `fenced-claim`.
pub fn next(variant: Variant, role: Role, pc: Pc) -> &'static [Step] {
    use Step::*;
    // Columns: Idle, Retrying, Claiming, Holding, Computing, Writing, Releasing, Bulk,
    // Verifying.
    let row: [&'static [Step]; 9] = match (variant, role) {
        (Variant::Global, _) | (Variant::ReadWrite, Role::Writer) => [
            &[CreateLock],
            &[CreateLock],
            &[ClaimData],
            &[ReadData, DeleteLock],
            &[WriteData],
            &[],
            &[DeleteLock],
            &[],
            &[],
        ],
        (Variant::Document, _) => [
            &[UpsertLock],
            &[UpsertLock],
            &[ClaimData],
            &[ReadData, DeleteLock],
            &[WriteData],
            &[],
            &[DeleteLock],
            &[],
            &[],
        ],
        (Variant::ReadWrite, Role::Reader) => [
            &[UpsertLock],
            &[UpsertLock],
            &[],
            &[UpdateUnlock],
            &[],
            &[],
            &[UpdateUnlock],
            &[],
            &[],
        ],
        // The fix: the lock document installed once; `VerifyLock` after the claim (the
        // `Verifying` column is reached only where `Variant::verifies_grant`).
        (
            Variant::Leased
            | Variant::LeasedFixUnverified
            | Variant::LeasedFixUnconditional
            | Variant::LeasedFixUnchecked
            | Variant::LeasedFixUnguardedInstall,
            _,
        ) => [
            &[UpdateLock],
            &[UpdateLock],
            &[ClaimData],
            &[ReadData, RenewLease, ReleaseLease],
            &[CheckLease],
            &[WriteData],
            &[ReleaseLease],
            &[],
            &[VerifyLock],
        ],
        (Variant::LeasedFixUpsert, _) => [
            &[UpsertLock],
            &[UpsertLock],
            &[ClaimData],
            &[ReadData, CompareAndDelete],
            &[CheckLease],
            &[WriteData],
            &[CompareAndDelete],
            &[],
            &[VerifyLock],
        ],
        (Variant::LeasedUpsert | Variant::LeasedNoop, _) => [
            &[UpsertLock],
            &[UpsertLock],
            &[ClaimData],
            &[ReadData, CompareAndDelete],
            &[CheckLease],
            &[WriteData],
            &[CompareAndDelete],
            &[],
            &[],
        ],
        (Variant::DocumentBulk, _) => [
            &[BulkCreateLocks],
            &[BulkCreateLocks],
            &[ClaimData],
            &[ReadData, BulkDeleteLocks],
            &[WriteData],
            &[],
            &[BulkDeleteLocks],
            &[BulkCreateLocks],
            &[],
        ],
    };
    row[pc as usize]
}
