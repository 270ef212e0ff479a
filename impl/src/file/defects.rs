//! Deliberately broken variants of [`crate::NativeFsLockFactory`], re-creating known
//! incidents so the checks can prove they catch them. Test-only: this module and
//! `NativeFsLockFactory::with_defect` exist only with the `test-util` cargo feature, which is
//! never on by default (the crate's own tests and the test kit enable it). Never enable it in
//! production.
//!
//! Each defect is a step table (`Defect::steps`) that differs from the production one
//! (`native::steps::NATIVE`) by a step: a step skipped, reordered or added. The production
//! code interprets whichever table its factory was built with and has no other switch, so a
//! twin test drives the very code users run.

use super::native::steps::{Check, Release, Steps, NATIVE};

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
    /// This project's first `ensure_valid` order (found by shuttle's refinement replay):
    /// `held_contains → fstat → stat → probe`, the probe LAST. The probe's condition is the
    /// only one that can turn from false back to true, so the checks can each pass at a
    /// different moment, at none of which the lock was valid: breaks "at most one valid
    /// writer" once a lock can be lost (POSIX foreign close, a lost lease) and the file
    /// unlinked. Model variant `native-probe-last`.
    ProbeLast,
    /// `ensure_valid` skips its inode checks (`fstat`: link count and length; `stat`: the path
    /// still names our inode): an unlinked or replaced lock file goes unnoticed, so a holder
    /// of the orphan and a newcomer on the fresh file both pass. Breaks "at most one valid
    /// writer" under the unlink or replace fault. Model variant `native-skip-inode-check`.
    SkipInodeCheck,
    /// `ensure_valid` skips `held_contains`. Undetectable: only the thread that inserted the
    /// entry removes it, so a writer's entry is always there and the check never fails (the
    /// model variant `native-skip-held-contains` has `native`'s state space exactly;
    /// `docs/incidents.md`). Kept so that the suites show it, rather than assume it.
    SkipHeldContains,
    /// An OS error from the lock call (`ENOLCK`, `EIO`, ...) is treated as "acquired": the
    /// obtain returns a lock that holds no OS lock ("carry on unlocked"). Breaks "at most one
    /// writer" under the `lock-error` fault. Model variant
    /// `native-carry-on-after-lock-error`.
    CarryOnAfterLockError,
    /// `obtain_blocking` returns as soon as its lock call does, without re-checking that the
    /// path still names the file it locked (this crate's `obtain_blocking` without its re-check):
    /// a lock file replaced or unlinked while it waited leaves it holding a lock on the old
    /// inode, which only its next `ensure_valid` reports. Model variant
    /// `native-blocking-no-recheck`.
    BlockingNoRecheck,
}

impl Defect {
    /// The step table that re-creates this incident: [`NATIVE`] with one step changed.
    pub(crate) fn steps(self) -> &'static Steps {
        match self {
            Defect::DeleteOnRelease => &Steps {
                name: "DeleteOnRelease",
                release: &[
                    Release::Unlock,
                    Release::Close,
                    Release::HeldRemove,
                    Release::Unlink,
                ],
                ..NATIVE
            },
            Defect::NoHeldSet => &Steps {
                name: "NoHeldSet",
                held_set: false,
                ..NATIVE
            },
            Defect::RemoveBeforeClose => &Steps {
                name: "RemoveBeforeClose",
                release: &[Release::Unlock, Release::HeldRemove, Release::Close],
                abandon: &[Release::HeldRemove, Release::Close],
                ..NATIVE
            },
            Defect::ProbeLast => &Steps {
                name: "ProbeLast",
                checks: &[Check::Held, Check::Inode, Check::Probe],
                ..NATIVE
            },
            Defect::SkipInodeCheck => &Steps {
                name: "SkipInodeCheck",
                checks: &[Check::Probe, Check::Held],
                ..NATIVE
            },
            Defect::SkipHeldContains => &Steps {
                name: "SkipHeldContains",
                checks: &[Check::Probe, Check::Inode],
                ..NATIVE
            },
            Defect::CarryOnAfterLockError => &Steps {
                name: "CarryOnAfterLockError",
                carry_on_after_lock_error: true,
                ..NATIVE
            },
            Defect::BlockingNoRecheck => &Steps {
                name: "BlockingNoRecheck",
                blocking_recheck: false,
                ..NATIVE
            },
        }
    }
}
