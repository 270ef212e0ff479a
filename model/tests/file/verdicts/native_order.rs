//! Lucene's modern order (`NativeFSLockFactory`) on each lock kind: crash, restart, foreign
//! open-close, and the unlink and replace faults under which two writers exist by design.

use super::*;

/// The standard scenario: modern Lucene order on OFD locks holds under crash, restart and foreign open-close.
#[test]
fn native_ofd_survives_crash_restart_and_foreign_open_close() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=2,restart=2,foreign=2")),
        unique_states: 6981,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[],
    });
}

/// flock is owned by the description: a foreign open-close cannot drop it.
#[test]
fn native_flock_survives_crash_restart_and_foreign_open_close() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Flock)
            .with_parties(2, 2)
            .with_faults(faults("crash=2,restart=2,foreign=2")),
        unique_states: 6981,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[],
    });
}

/// POSIX locks are safe under the modern order while nobody else in the process touches the file.
#[test]
fn native_posix_survives_crash_and_restart() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("crash=2,restart=2")),
        unique_states: 2375,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[],
    });
}

/// Any foreign open+close of the lock file inside the holder's process drops a POSIX lock; the probe in ensure_valid notices, so only "at most one valid writer" survives.
#[test]
fn native_posix_foreign_open_close_drops_the_lock() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,foreign=1")),
        unique_states: 3754,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// flock on NFS is a POSIX lock in disguise: a foreign open+close drops it, and since flock cannot be probed, ensure_valid cannot notice.
#[test]
fn native_nfs_flock_foreign_open_close_goes_unnoticed() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::NfsFlock)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,foreign=1")),
        unique_states: 3754,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "VIOLATED"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                ],
            ),
            (
                "at most one valid writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// An operator deleting write.lock lets a newcomer lock a fresh inode; ensure_valid's link check flags the old holder, but a write already under way continues.
#[test]
fn native_ofd_unlink_gives_two_writers_but_one_valid() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,foreign=1,unlink=1")),
        unique_states: 11702,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// A backup tool renaming a file over write.lock: same as unlink, caught by the inode identity check.
#[test]
fn native_ofd_replace_gives_two_writers_but_one_valid() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,foreign=1,replace=1")),
        unique_states: 10008,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "ReplaceLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "ReplaceLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// Unlink with flock: the same two-inode split.
#[test]
fn native_flock_unlink_gives_two_writers_but_one_valid() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Flock)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,foreign=1,unlink=1")),
        unique_states: 11702,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}
