//! Blocking obtain, and the order of the checks in `ensure_valid` (probe last).

use super::*;

/// The blocking obtain: HeldInsert waits while the path is in the held set, TryLock waits
/// until it would be acquired. Safe under POSIX because the wait for a holder of the same
/// process is on the held set, with no descriptor open (reachable below), and a kernel wait
/// is for another process (reachable too).
#[test]
fn native_blocking_posix_waits_on_the_held_set() {
    let e = Expected {
        scenario: Scenario::new(Variant::NativeBlocking, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("crash=2,restart=2")),
        unique_states: 1111,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "holds"),
            (
                "a blocking obtain returns a lock on the current lock file",
                "holds",
            ),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
            ("a blocking obtain re-opens a replaced file", "NOT FOUND"),
        ],
        counterexamples: &[],
    };
    let sc = e.scenario;
    expect(e);
    // A thread waits on the held set while its process holds the POSIX lock (where a
    // second descriptor's F_SETLKW would be granted at once), and one waits in the kernel
    // for another process.
    assert!(reachable(&sc, |s| (0..2).any(|p| (0..2).any(|t| {
        sc.is_waiting(s, p, t) && s.thread(p, t).pc == Pc::Idle && s.os.owns_lock(p)
    }))));
    assert!(reachable(&sc, |s| (0..2).any(|p| (0..2).any(|t| {
        sc.is_waiting(s, p, t) && s.thread(p, t).pc == Pc::Opened
    }))));
}

/// The blocking obtain's error path (EDEADLK/ENOLCK/EIO from the waiting lock call) and the
/// error-tolerant release.
#[test]
fn native_blocking_ofd_survives_os_errors() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeBlocking, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults(
                "crash=1,restart=1,lock-error=1,unlock-error=1,close-error=1",
            )),
        unique_states: 7136,
        verdicts: [
            ("at most one writer", "holds"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "holds"),
            ("no stale lock", "holds"),
            (
                "a blocking obtain returns a lock on the current lock file",
                "holds",
            ),
            ("writer exists", "holds"),
            ("writer after crash", "holds"),
            ("contention seen", "holds"),
            ("a blocking obtain re-opens a replaced file", "NOT FOUND"),
        ],
        counterexamples: &[],
    });
}

/// The lock file is replaced while a blocking obtain waits in the kernel. The
/// re-check after the lock call (`stat(path)` against the descriptor's inode) sees another
/// file, so the thread unlocks, closes, opens the new file and locks it: every blocking obtain
/// returns a lock on the file the path names (judged from the kernel state), and the re-open
/// path is taken (reachable). "at most one writer" still fails by design: a holder that
/// obtained before the replace keeps its orphan (only `ensure_valid` tells). Twin:
/// `native_blocking_no_recheck_returns_a_lock_on_a_replaced_file`.
#[test]
fn native_blocking_rechecks_a_replaced_file() {
    let e = Expected {
        scenario: Scenario::new(Variant::NativeBlocking, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("unlink=1,replace=1")),
        unique_states: 3915,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            (
                "a blocking obtain returns a lock on the current lock file",
                "holds",
            ),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
            ("contention seen", "holds"),
            ("a blocking obtain re-opens a replaced file", "holds"),
        ],
        counterexamples: &[
            (
                "at most one writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "Recheck(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "Recheck(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "Recheck(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "Recheck(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    };
    let sc = e.scenario;
    expect(e);
    // The re-check also sees an unlinked file (nothing at the path), not only a replaced one.
    assert!(reachable(&sc, |s| s
        .live_threads()
        .any(|(_, _, th)| th.pc == Pc::Stale)
        && s.os.path_inode().is_none()));
}

/// Defect BlockingNoRecheck (the crate's `obtain_blocking` without its re-check): the lock call
/// is granted on the inode opened before the file was unlinked (or replaced), and the obtain
/// returns it while the path names another file or none. The shortest path needs no other
/// holder: p0 opens, the file is unlinked, p0's lock call returns. With a holder, the window
/// is the whole wait (p1 opens and waits, the file is replaced, p0 releases, p1's lock call
/// returns: `impl/tests/file/blocking_obtain_rechecks_a_replaced_file.rs` on the real kernel).
/// Twin of `native_blocking_rechecks_a_replaced_file`.
#[test]
fn native_blocking_no_recheck_returns_a_lock_on_a_replaced_file() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeBlockingNoRecheck, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("unlink=1,replace=1")),
        unique_states: 2531,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            (
                "a blocking obtain returns a lock on the current lock file",
                "VIOLATED",
            ),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
            ("contention seen", "holds"),
            ("a blocking obtain re-opens a replaced file", "NOT FOUND"),
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
            (
                "a blocking obtain returns a lock on the current lock file",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "UnlinkLockFile",
                    "TryLock(p0, t0)",
                ],
            ),
        ],
    });
}

/// Defect ProbeLast (this project's first ensure_valid order, found by shuttle's refinement
/// replay): p0's lock is dropped (a foreign close) and p1 holds; p0's held-set, fstat and
/// stat checks pass; the file is unlinked; p1 releases; p0's probe finds no conflict and
/// ensure_valid returns Ok, the lock valid at no moment of the call; p1 obtains the fresh
/// file. Twin: `native_posix_lost_lock_and_unlink_one_valid_writer`.
#[test]
fn probe_last_posix_lost_lock_and_unlink_two_valid_writers() {
    let e = Expected {
        scenario: Scenario::new(Variant::NativeProbeLast, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("unlink=1,foreign=1")),
        unique_states: 18055,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "VIOLATED"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
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
                    "BeginCheck(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "UnlinkLockFile",
                    "Unlock(p1, t0)",
                    "Check(p0, t0)",
                    "Close(p1, t0)",
                    "HeldRemove(p1, t0)",
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
                    "BeginCheck(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                    "BeginCheck(p1, t0)",
                    "Check(p1, t0)",
                    "Check(p1, t0)",
                    "Check(p1, t0)",
                    "Check(p1, t0)",
                ],
            ),
        ],
    };
    let sc = e.scenario;
    expect(e);
    assert!(reachable(&sc, |s| s
        .live_threads()
        .any(|(_, _, th)| th.blind && th.pc == Pc::Writing)));
}

/// Twin of ProbeLast: with the probe first, the same faults keep "at most one valid writer".
#[test]
fn native_posix_lost_lock_and_unlink_one_valid_writer() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("unlink=1,foreign=1")),
        unique_states: 5319,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
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

/// ProbeLast needs a lost lock: with only unlink and replace every check that can fail late
/// is monotone, so each pass has a moment at which the lock was valid (no blind pass).
#[test]
fn probe_last_without_lost_locks_is_linearizable() {
    let e = Expected {
        scenario: Scenario::new(Variant::NativeProbeLast, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("unlink=1,replace=1")),
        unique_states: 16287,
        verdicts: [
            ("at most one writer", "VIOLATED"),
            ("at most one valid writer", "holds"),
            ("writes are exclusive", "VIOLATED"),
            ("no stale lock", "holds"),
            ("writer exists", "holds"),
            ("writer after crash", "NOT FOUND"),
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
                    "BeginCheck(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "UnlinkLockFile",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "BeginCheck(p1, t0)",
                    "Check(p1, t0)",
                    "Check(p1, t0)",
                    "Check(p1, t0)",
                    "Check(p1, t0)",
                ],
            ),
        ],
    };
    let sc = e.scenario;
    expect(e);
    assert!(!reachable(&sc, |s| s
        .live_threads()
        .any(|(_, _, th)| th.blind && th.pc == Pc::Writing)));
    // The checks are split, and one can pass while the lock is already invalid.
    assert!(reachable(&sc, |s| s.live_threads().any(|(p, t, th)| {
        matches!(th.pc, Pc::Checking(_)) && !sc.observe_ensure_valid(s, p, t)
    })));
}
