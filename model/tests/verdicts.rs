//! The verdict table of `docs/model.md`, pinned: for every scenario, each property's verdict,
//! the exact number of unique states, and the exact (shortest, BFS-first) counterexample of
//! every violated `always` property. A change to the model that alters the state space or a
//! counterexample shows up here as a diff.
//!
//! Every row runs exhaustively (the checker never stops early, see `lockwright_model::checker`),
//! so "holds" means "holds in every reachable state". Every scenario that holds has a twin in
//! which the check finds the bug (named in each test's comment).
//!
//! Check them all: `cargo test -p lockwright-model --test verdicts`.

use lockwright_model::checker::pinned::{assert_pinned, reachable, Pinned};
use lockwright_model::file::{Faults, LockKind, Pc, Scenario, State, Variant};
use stateright::Model;

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 7],
    /// The counterexample of each violated `always` property.
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();

    // "writes are exclusive" and "at most one valid writer" are not vacuous: in every
    // scenario some thread passes `EnsureValid` and is writing.
    assert!(
        reachable(&sc, |s: &State| s
            .live_threads()
            .any(|(_, _, th)| th.pc == Pc::Writing)),
        "{label}: no write ever begins"
    );

    // The verdicts, the count, every counterexample, and that every discovery replays
    // through the replayer's API (`Scenario::step`) to the first state that violates its
    // property (or, for an example, to a state where it holds).
    let report = assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
    // The file model's own name for what a state violates agrees with the property's condition.
    for v in report.verdicts.iter().filter(|v| !v.holds()) {
        let Some(path) = &v.path else { continue };
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, *a)
                .unwrap_or_else(|| panic!("{label}: {a} is enabled"));
        }
        assert!(sc.violated(&s).contains(&v.name), "{label}: {}", v.name);
    }
}

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

// ---- Faults, variants and defects of issue #10 §3-4 (and the blocking obtain of #9) ----

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
        unique_states: 799,
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
        unique_states: 5280,
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
