//! Deliberately broken variants of [`crate::NativeFsLockFactory`], re-creating known
//! incidents so the checks can prove they catch them. Test-only: this module, the factory's
//! defect field and `NativeFsLockFactory::with_defect` exist only with the `defects` cargo
//! feature, which is never on by default (the crate's own tests and the test kit enable it).
//! Never enable it in production.

/// A deliberate bug in [`crate::NativeFsLockFactory`]'s protocol, named after the incident it
/// re-creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Defect {
    /// LUCENE-5612 (Lucene 4.8): release deletes the lock file (after `held_remove`, an
    /// `unlink(path)`). A process that opened the old file before the delete locks the
    /// orphaned inode while a newcomer creates and locks a fresh one: two writers.
    DeleteOnRelease,
    /// LUCENE-5738 (Lucene 4.9): no held set. `held_insert`, `held_remove` and
    /// `held_contains` are skipped, so a second obtain in the same process opens a second
    /// descriptor; under POSIX semantics its `F_SETLK` "succeeds" and its `close` drops the
    /// first holder's lock.
    NoHeldSet,
    /// LUCENE-6507 (Lucene 4.10's order): the path leaves the held set BEFORE the descriptor is
    /// closed (release: `unlock → held_remove → close`; failed obtain: `held_remove → close`).
    /// Between the two, another thread can obtain; the late `close` then drops its POSIX lock.
    RemoveBeforeClose,
}
