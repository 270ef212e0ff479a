//! The protocol's steps where its incident variants differ from it, as data: which checks
//! `ensure_valid` makes and in what order, what a release and a failed obtain do after the
//! lock call, whether the held set is used at all, what an OS error from the lock call means,
//! and whether `obtain_blocking` re-checks the path. Production always runs [`NATIVE`]; the
//! broken tables (one per [`crate::file::defects::Defect`], each differing from [`NATIVE`] by
//! a step) live in the test-only `defects` module, and `NativeFsLockFactory::with_defect` is
//! the one way to select one.

use std::io;
use std::path::Path;

use crate::file::sys::{OsLockKind, System};

/// One `ensure_valid` check, a [`super::NativeFsLock`] method each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// `probe`: no other owner holds a conflicting lock.
    Probe,
    /// `held_contains`: the path is still in this process's held set.
    Held,
    /// `fstat` then `stat`: the file is linked and empty, and the path still names it.
    Inode,
}

/// One step of giving a descriptor up: a release, or a failed obtain after the open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Release {
    /// `unlock(file)` (a release only; a failed obtain holds no lock).
    Unlock,
    /// `close(file)`.
    Close,
    /// `held_remove(path)` (skipped when the table uses no held set).
    HeldRemove,
    /// `unlink(path)`: only LUCENE-5612's table deletes the lock file.
    // Constructed only by the test-only incident tables (LUCENE-5612).
    #[cfg_attr(not(feature = "test-util"), allow(dead_code))]
    Unlink,
}

/// The step table a factory and its locks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Steps {
    /// The table's name: `native`, or the incident's `Defect` (for `Debug`).
    pub(crate) name: &'static str,
    /// Whether `held_insert`, `held_insert_wait`, `held_remove` and `held_contains` run at all
    /// (LUCENE-5738: no).
    pub(crate) held_set: bool,
    /// `ensure_valid`'s checks, in order. The probe comes FIRST: see
    /// [`super::NativeFsLock::ensure_valid`].
    pub(crate) checks: &'static [Check],
    /// A release, after "closed?": every step runs even if an earlier one failed.
    pub(crate) release: &'static [Release],
    /// A failed obtain after the lock file was opened: close FIRST, then leave the held set
    /// (LUCENE-6507).
    pub(crate) abandon: &'static [Release],
    /// An OS error from the lock call is treated as "acquired" (never: no silent fallback).
    pub(crate) carry_on_after_lock_error: bool,
    /// `obtain_blocking` checks, once the kernel granted the lock, that the path still names
    /// the file it locked.
    pub(crate) blocking_recheck: bool,
}

/// The protocol of the module docs: the only table production code runs.
pub(crate) const NATIVE: Steps = Steps {
    name: "native",
    held_set: true,
    checks: &[Check::Probe, Check::Held, Check::Inode],
    release: &[Release::Unlock, Release::Close, Release::HeldRemove],
    abandon: &[Release::Close, Release::HeldRemove],
    carry_on_after_lock_error: false,
    blocking_recheck: true,
};

/// Gives `file` up along `steps` (a table's `release` or `abandon`): every step runs even if
/// an earlier one failed; returns the first error. `held_remove` runs only if `held_set`.
pub(crate) fn give_up<S: System>(
    sys: &S,
    steps: &[Release],
    held_set: bool,
    file: S::File,
    kind: OsLockKind,
    path: &Path,
) -> Option<io::Error> {
    let mut file = Some(file);
    let mut first = None;
    for step in steps {
        let result = match step {
            Release::Unlock => file.as_ref().map_or(Ok(()), |open| sys.unlock(open, kind)),
            Release::Close => file.take().map_or(Ok(()), |open| sys.close(open)),
            Release::HeldRemove => {
                if held_set {
                    sys.held_remove(path);
                }
                Ok(())
            }
            Release::Unlink => sys.unlink(path),
        };
        if let Err(e) = result {
            first.get_or_insert(e);
        }
    }
    first
}
