//! Faults of the OS itself: lost locks (leases), lock/unlock/close errors, a written lock file,
//! the inode-check defect, and two held sets in one process.

use super::*;

/// A writer whose ensure_valid fails only because someone wrote into the lock file: its probe,
/// held set, link count and inode are all fine.
fn written_invalidates_a_holder(sc: &Scenario, s: &State) -> bool {
    s.writers().any(|(p, t)| {
        let Some(st) = sc.observe_fstat(s, p, t) else {
            return false;
        };
        st.written
            && st.nlink > 0
            && sc.observe_stat(s) == Some(st.inode)
            && sc.observe_held_contains_of(s, p, t)
            && !sc.observe_ensure_valid(s, p, t)
    })
}

/// An NFSv4 lease lost (`lose-lock`): the holder's OFD lock vanishes and a newcomer obtains. The
/// probe in ensure_valid sees the newcomer, so only "at most one valid writer" survives: the
/// OFD twin of POSIX's foreign open-close (same space, 3,754 states).
#[test]
fn native_ofd_lost_lease_gives_two_writers_but_one_valid() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,lose-lock=1")),
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
                    "LoseLock(p0)",
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
                    "LoseLock(p0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// Two lost leases: the second holder loses its lock too, neither probe sees a conflict, and
/// both pass ensure_valid (as two foreign closes do under POSIX).
#[test]
fn native_ofd_two_lost_leases_give_two_valid_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("lose-lock=2")),
        unique_states: 2132,
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
                    "LoseLock(p0)",
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
                    "LoseLock(p0)",
                    "TryLock(p1, t0)",
                    "LoseLock(p1)",
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
                    "LoseLock(p0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// flock cannot be probed: one lost lock already gives two valid writers.
#[test]
fn native_flock_lost_lock_goes_unnoticed() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Flock)
            .with_parties(2, 2)
            .with_faults(faults("lose-lock=1")),
        unique_states: 1315,
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
                    "LoseLock(p0)",
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
                    "LoseLock(p0)",
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
                    "LoseLock(p0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// ENOLCK/EIO from try_lock, EIO from unlock and close: the obtain error path (close, then
/// leave the held set, fail) and the error-tolerant release (every step runs) keep every
/// property. Twin: `carry_on_after_lock_error_gives_two_writers`.
#[test]
fn native_posix_os_errors_fail_closed_and_release_fully() {
    let e = Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults(
                "crash=1,restart=1,lock-error=1,unlock-error=1,close-error=1",
            )),
        unique_states: 12804,
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
    };
    let sc = e.scenario;
    expect(e);
    // The error paths are taken, and the lock is obtained again after each.
    assert!(reachable(&sc, |s| s.budget.lock_error == 0
        && s.writers().next().is_some()));
    assert!(reachable(&sc, |s| s.budget.unlock_error == 0
        && s.budget.close_error == 0
        && s.writers().next().is_some()));
}

/// Defect CarryOnAfterLockError: a failed lock call taken as "acquired" makes an unlocked
/// writer; the next obtain elsewhere succeeds. The probe still sees the real holder, so "at
/// most one valid writer" holds with OFD (with flock it does not).
#[test]
fn carry_on_after_lock_error_gives_two_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeCarryOnAfterLockError, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("lock-error=1")),
        unique_states: 1315,
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
                    "LockFails(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "LockFails(p0, t0)",
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

/// Someone writes into the lock file (`write`): no second writer, but ensure_valid's length
/// check refuses every holder of that file from then on (until it is deleted or replaced).
#[test]
fn native_ofd_written_lock_file_invalidates_the_holder() {
    let e = Expected {
        scenario: Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,write=1")),
        unique_states: 2858,
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
    };
    let sc = e.scenario;
    expect(e);
    assert!(reachable(&sc, |s| written_invalidates_a_holder(&sc, s)));
}

/// Twin of the written lock file: without the inode checks no holder is ever refused for it
/// (the same states, other transitions: a holder passes ensure_valid on a written file).
#[test]
fn skip_inode_check_misses_a_written_lock_file() {
    let e = Expected {
        scenario: Scenario::new(Variant::NativeSkipInodeCheck, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,write=1")),
        unique_states: 2858,
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
    };
    let sc = e.scenario;
    expect(e);
    assert!(!reachable(&sc, |s| written_invalidates_a_holder(&sc, s)));
}

/// Defect SkipInodeCheck: after an unlink the orphan's holder and the newcomer on the fresh
/// file both pass (their probes look at different inodes). Twin: the same faults with the
/// inode checks, `native_ofd_unlink_gives_two_writers_but_one_valid`, hold "at most one
/// valid writer".
#[test]
fn skip_inode_check_unlink_gives_two_valid_writers() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeSkipInodeCheck, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1,unlink=1,foreign=1")),
        unique_states: 11702,
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
                    "UnlinkLockFile",
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

/// Two copies of the crate in one process, each with its own static held set: the second
/// copy's thread opens a second descriptor and, under POSIX rules, its F_SETLK is granted.
#[test]
fn two_held_sets_posix_is_lucene_5738_again() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeTwoHeldSets, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 31387,
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
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                ],
            ),
            (
                "at most one valid writer",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                    "EnsureValid(p0, t1)",
                ],
            ),
        ],
    });
}

/// Twin: with OFD locks the second copy's descriptor conflicts in the kernel.
#[test]
fn two_held_sets_ofd_is_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeTwoHeldSets, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 14151,
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
