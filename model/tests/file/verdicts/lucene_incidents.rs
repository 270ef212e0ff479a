//! The Lucene bugs, replayed: LUCENE-6507 (4.10's close after held-set remove), LUCENE-5612
//! (delete on release), LUCENE-5738 (no held set under POSIX), and the variants that are safe.

use super::*;

/// LUCENE-6507: Lucene 4.10 removes the held-set entry before closing; the late close drops the next thread's POSIX lock.
#[test]
fn lucene_6507_native_4_10_posix_close_after_held_remove() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native410, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 9631,
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
                    "Unlock(p0, t0)",
                    "HeldRemove(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                    "Close(p0, t0)",
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
                    "Unlock(p0, t0)",
                    "HeldRemove(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "Close(p0, t0)",
                    "HeldRemove(p1, t0)",
                    "HeldInsert(p1, t1)",
                    "Open(p1, t1)",
                    "TryLock(p1, t1)",
                    "Close(p1, t0)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "HeldInsert(p0, t0)",
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "Unlock(p0, t0)",
                    "HeldRemove(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                    "Close(p0, t0)",
                    "EnsureValid(p0, t1)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// Twin of LUCENE-6507: with OFD locks a close drops only its own description's lock, so the 4.10 order is harmless.
#[test]
fn native_4_10_ofd_is_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::Native410, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 6441,
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

/// LUCENE-5612: deleting write.lock after release lets a thread that opened the old inode lock it while a newcomer locks a fresh one.
#[test]
fn lucene_5612_delete_on_release_two_inodes() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeDeleteOnRelease, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 16095,
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
                    "Unlock(p0, t0)",
                    "Close(p0, t0)",
                    "HeldRemove(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "Unlink(p0, t0)",
                    "TryLock(p0, t1)",
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
                    "Unlock(p0, t0)",
                    "Close(p0, t0)",
                    "HeldRemove(p0, t0)",
                    "HeldInsert(p0, t1)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                    "EnsureValid(p0, t1)",
                    "Unlink(p0, t0)",
                    "HeldInsert(p1, t0)",
                    "Open(p1, t0)",
                    "TryLock(p1, t0)",
                    "EnsureValid(p1, t0)",
                ],
            ),
        ],
    });
}

/// LUCENE-5738: without the held set a second descriptor in the same process re-locks a POSIX lock it already owns: two writers in one process.
#[test]
fn lucene_5738_no_held_set_posix_second_descriptor() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeNoHeldSet, LockKind::Posix)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 7144,
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
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                ],
            ),
            (
                "at most one valid writer",
                &[
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                ],
            ),
            (
                "writes are exclusive",
                &[
                    "Open(p0, t0)",
                    "TryLock(p0, t0)",
                    "EnsureValid(p0, t0)",
                    "Open(p0, t1)",
                    "TryLock(p0, t1)",
                    "EnsureValid(p0, t1)",
                ],
            ),
        ],
    });
}

/// Twin of LUCENE-5738: OFD locks conflict between descriptors of one process, so the held set is not needed for exclusion.
#[test]
fn native_no_held_set_ofd_is_safe() {
    expect(Expected {
        scenario: Scenario::new(Variant::NativeNoHeldSet, LockKind::Ofd)
            .with_parties(2, 2)
            .with_faults(faults("crash=1,restart=1")),
        unique_states: 2522,
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
