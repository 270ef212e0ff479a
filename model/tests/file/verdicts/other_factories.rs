//! The other factories and mixtures: `SimpleFSLockFactory`, the single-instance lock, no lock at
//! all, and flock and POSIX locks on one file.

use super::*;

/// SimpleFSLockFactory excludes as long as nothing crashes and nobody touches the file.
#[test]
fn simple_holds_without_faults() {
    expect(Expected {
        scenario: Scenario::new(Variant::Simple, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("none")),
        unique_states: 17,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[],
    });
}

/// SimpleFSLockFactory: a crashed holder's file stays; no writer can ever follow it.
#[test]
fn simple_crash_leaves_a_stale_lock() {
    expect(Expected {
        scenario: Scenario::new(Variant::Simple, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 58,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "VIOLATED"),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[("no stale lock", &["CreateExclusive(p0, t0)", "Crash(p0)"])],
    });
}

/// SimpleFSLockFactory with an operator delete: the old holder writes on while a newcomer creates the file again.
#[test]
fn simple_unlink_gives_two_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::Simple, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,unlink=1")),
        unique_states: 423,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "VIOLATED"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "CreateExclusive(p0, t0)",
                    "UnlinkLockFile",
                    "CreateExclusive(p0, t1)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "CreateExclusive(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "UnlinkLockFile",
                    "CreateExclusive(p0, t1)",
                    "EnsureValid(p0, t1)",
                ],
            ),
            ("no stale lock", &["CreateExclusive(p0, t0)", "Crash(p0)"]),
        ],
    });
}

/// An in-memory lock excludes nothing across processes.
#[test]
fn single_instance_across_processes_gives_two_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::SingleInstance, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 171,
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
                &["HeldInsert(p0, t0)", "HeldInsert(p1, t0)"],
            ),
            (
                "at most one valid writer",
                &["HeldInsert(p0, t0)", "HeldInsert(p1, t0)"],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// Twin: inside one process the in-memory set does exclude.
#[test]
fn single_instance_within_one_process_is_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::SingleInstance, LockKind::Ofd)
            .with_parties(1, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 23,
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

/// NoLockFactory: obtain always succeeds.
#[test]
fn no_lock_gives_two_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::NoLock, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 263,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "VIOLATED"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "NOT FOUND"),
        ],
        counterexamples: &[
            ("at most one writer", &["Obtain(p0, t0)", "Obtain(p0, t1)"]),
            (
                "at most one valid writer",
                &["Obtain(p0, t0)", "Obtain(p0, t1)"],
            ),
            (
                "writes are exclusive",
                &[
                    "Obtain(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "Obtain(p0, t1)",
                    "EnsureValid(p0, t1)",
                ],
            ),
        ],
    });
}

/// One process with flock, the other with POSIX fcntl on the same file: the kinds do not conflict.
#[test]
fn mixed_flock_and_posix_do_not_exclude() {
    expect(Expected {
        scenario: Scenario::new(Variant::Mixed, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 1079,
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
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}
