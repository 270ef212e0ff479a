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

use std::collections::{HashSet, VecDeque};

use lockwright_model::check;
use lockwright_model::checker::replay;
use lockwright_model::file::{Faults, LockKind, Pc, Scenario, State, Variant};
use stateright::{Expectation, Model};

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

/// Whether some reachable state satisfies `pred` (plain BFS over the `Model` interface).
fn reachable(sc: &Scenario, pred: impl Fn(&State) -> bool) -> bool {
    let mut seen: HashSet<State> = sc.init_states().into_iter().collect();
    let mut queue: VecDeque<State> = seen.iter().cloned().collect();
    while let Some(s) = queue.pop_front() {
        if pred(&s) {
            return true;
        }
        for next in sc.next_states(&s) {
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    false
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    let report = check(&sc);

    // "writes are exclusive" and "at most one valid writer" are not vacuous: in every
    // scenario some thread passes `EnsureValid` and is writing.
    assert!(
        reachable(&sc, |s| s
            .live_threads()
            .any(|(_, _, th)| th.pc == Pc::Writing)),
        "{label}: no write ever begins"
    );

    let got: Vec<(&str, &str)> = report.verdicts.iter().map(|v| (v.name, v.word())).collect();
    assert_eq!(got, e.verdicts.to_vec(), "verdicts of {label}");
    assert_eq!(
        report.unique_states, e.unique_states,
        "unique states of {label}"
    );

    let got: Vec<(&str, Vec<String>)> = report
        .verdicts
        .iter()
        .filter(|v| v.expectation == Expectation::Always && !v.holds())
        .map(|v| {
            let path = v.path.as_ref().expect("a violation has a path");
            (v.name, path.iter().map(ToString::to_string).collect())
        })
        .collect();
    let want: Vec<(&str, Vec<String>)> = e
        .counterexamples
        .iter()
        .map(|(name, path)| (*name, path.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert_eq!(got, want, "counterexamples of {label}");

    // Every discovery replays through the replayer's API (`Scenario::step`): a counterexample
    // ends in the first state that violates its property; an example ends where it holds.
    for v in &report.verdicts {
        let Some(path) = &v.path else { continue };
        let states = replay(&sc, path).unwrap_or_else(|| panic!("{} replays", v.name));
        let last = states.last().expect("non-empty");
        let property = sc.property(v.name);
        match v.expectation {
            Expectation::Always => {
                assert!(sc.violated(last).contains(&v.name), "{label}: {}", v.name);
                for s in &states[..states.len() - 1] {
                    assert!((property.condition)(&sc, s), "{label}: {} earlier", v.name);
                }
            }
            _ => assert!((property.condition)(&sc, last), "{label}: {}", v.name),
        }
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
