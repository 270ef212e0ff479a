//! Three processes × two threads with every fault, exhaustively, in plain `cargo test`: the
//! scenario a design review cites. Symmetry reduction (`file::symmetry`) makes it small; each
//! row pins the reduced state count and every counterexample, and the standard scenario also
//! pins its full (unreduced) count. `model/tests/file/symmetry.rs` shows that reduction
//! changes no verdict and no counterexample length.

use lockwright_model::checker::pinned::{assert_pinned, Pinned};
use lockwright_model::file::{LockKind, Scenario};
use lockwright_model::Family;
use stateright::{Expectation, Model};

/// Pins a row: every `sometimes` property is reached (or, where the scenario cannot produce
/// it, not found), every `always` property holds except those in `violated`, whose
/// counterexamples are exactly these; and the state count (`checker::pinned`, which also
/// replays every discovery).
fn row(sc: Scenario, unique_states: usize, violated: &[(&str, &[&str])]) {
    let label = sc.label();
    let verdicts: Vec<(&str, &str)> = sc
        .properties()
        .iter()
        .map(|p| {
            let word = match p.expectation {
                Expectation::Sometimes if !sc.applies(p.name) => "NOT FOUND",
                Expectation::Sometimes => "holds",
                _ if violated.iter().any(|(n, _)| *n == p.name) => "VIOLATED",
                _ => "holds",
            };
            (p.name, word)
        })
        .collect();
    assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states,
            verdicts: &verdicts,
            counterexamples: violated,
        },
    );
}

#[test]
fn standard_scenario_holds() {
    let sc = Scenario::standard();
    assert_eq!(
        sc.label(),
        "native × ofd, 3 processes × 2 threads, faults crash=2,restart=2,foreign=2, symmetry"
    );
    row(sc, 2096, &[]);
}

#[test]
fn standard_scenario_full_space_holds() {
    row(Scenario::standard().with_symmetry(false), 118815, &[]);
}

#[test]
fn all_faults_ofd() {
    row(
        Scenario::all_faults(LockKind::Ofd),
        23106,
        &[
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
    );
}

#[test]
fn all_faults_posix() {
    row(
        Scenario::all_faults(LockKind::Posix),
        32590,
        &[
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
    );
}

#[test]
fn all_faults_flock() {
    row(
        Scenario::all_faults(LockKind::Flock),
        23106,
        &[
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
    );
}

#[test]
fn all_faults_nfs_flock() {
    row(
        Scenario::all_faults(LockKind::NfsFlock),
        32590,
        &[
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
    );
}

fn faults(s: &str) -> lockwright_model::file::Faults {
    lockwright_model::file::Faults::parse(s).expect("valid fault list")
}

/// OS errors from every lock, unlock and close call, and a written lock file, on top of the
/// standard crashes: the obtain error path, the error-tolerant release and ensure_valid's
/// length check break nothing.
#[test]
fn os_errors_and_a_written_lock_file_ofd() {
    use lockwright_model::file::Variant;
    let sc = Scenario::new(Variant::Native, LockKind::Ofd)
        .with_parties(3, 2)
        .with_faults(faults(
            "crash=2,restart=2,lock-error=1,unlock-error=1,close-error=1,write=1",
        ))
        .with_symmetry(true);
    row(sc, 12236, &[]);
}

/// The blocking obtain under POSIX with crashes: waiting on the held set, then in the kernel,
/// never makes a second writer (`docs/model.md`, "Why waiting is safe").
#[test]
fn blocking_obtain_posix() {
    use lockwright_model::file::Variant;
    let sc = Scenario::new(Variant::NativeBlocking, LockKind::Posix)
        .with_parties(3, 2)
        .with_faults(faults("crash=2,restart=2"))
        .with_symmetry(true);
    row(sc, 522, &[]);
}

/// Defect ProbeLast in the scenario where shuttle's refinement replay found it (POSIX, a
/// crash, an unlink, a foreign open-close): p0's passes each come at a different moment, at
/// none of which its lock was valid, while p2 becomes the valid writer of the fresh file.
#[test]
fn probe_last_posix_found_where_shuttle_found_it() {
    use lockwright_model::file::Variant;
    let sc = Scenario::new(Variant::NativeProbeLast, LockKind::Posix)
        .with_parties(3, 2)
        .with_faults(faults("crash=1,restart=1,unlink=1,foreign=1"))
        .with_symmetry(true);
    row(
        sc,
        24891,
        &[
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
                    "HeldInsert(p2, t0)",
                    "ForeignOpenClose(p0)",
                    "TryLock(p1, t0)",
                    "BeginCheck(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "Check(p0, t0)",
                    "UnlinkLockFile",
                    "Unlock(p1, t0)",
                    "Check(p0, t0)",
                    "Open(p2, t0)",
                    "TryLock(p2, t0)",
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
    );
}
