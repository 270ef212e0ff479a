//! Three processes × two threads with every fault, exhaustively, in plain `cargo test`: the
//! scenario a design review cites. Symmetry reduction (`file::symmetry`) makes it small; each
//! row pins the reduced state count and every counterexample, and the standard scenario also
//! pins its full (unreduced) count. `model/tests/file_symmetry.rs` shows that reduction
//! changes no verdict and no counterexample length.

use lockwright_model::check;
use lockwright_model::checker::replay;
use lockwright_model::file::{LockKind, Scenario};

fn row(sc: Scenario, unique_states: usize, violated: &[(&str, &[&str])]) {
    let label = sc.label();
    let report = check(&sc);
    assert!(
        report
            .verdicts
            .iter()
            .filter(|v| v.kind() == "sometimes")
            .all(|v| v.holds()),
        "{label}: a sometimes property is not reached: {:?}",
        report.verdicts
    );
    let got: Vec<(&str, Vec<String>)> = report
        .verdicts
        .iter()
        .filter(|v| v.kind() == "always" && !v.holds())
        .map(|v| {
            let path = v.path.as_ref().expect("a violation has a path");
            assert!(replay(&sc, path).is_some(), "{label}: {} replays", v.name);
            (v.name, path.iter().map(ToString::to_string).collect())
        })
        .collect();
    let want: Vec<(&str, Vec<String>)> = violated
        .iter()
        .map(|(n, p)| (*n, p.iter().map(ToString::to_string).collect()))
        .collect();
    assert_eq!(got, want, "counterexamples of {label}");
    assert_eq!(
        report.unique_states, unique_states,
        "unique states of {label}"
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
