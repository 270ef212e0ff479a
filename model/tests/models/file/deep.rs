//! The deep scenarios: four processes, larger fault budgets, and the full (unreduced) space
//! of the all-faults scenario against Stateright's own checker. They take minutes, so they
//! are ignored by plain `cargo test`:
//!
//! `LOCKWRIGHT_DEEP=1 cargo test --release -p lockwright-model --test models file::deep:: -- --ignored --nocapture`

use lockwright_model::check;
use lockwright_model::checker::pinned::assert_stateright_agrees;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};

/// Fails instead of silently passing when run without the switch (`--ignored` alone).
fn require_deep() {
    assert!(
        std::env::var("LOCKWRIGHT_DEEP").is_ok_and(|v| v == "1"),
        "deep scenarios: run with LOCKWRIGHT_DEEP=1 (see the module docs)"
    );
}

/// `(scenario, unique states, violated always properties)`.
fn deep_rows() -> Vec<(Scenario, usize, Vec<&'static str>)> {
    let f = |s: &str| Faults::parse(s).unwrap();
    vec![
        (
            Scenario::deep(),
            223_465,
            vec!["at most one writer", "writes are exclusive"],
        ),
        (
            Scenario::new(Variant::Native, LockKind::Posix)
                .with_parties(4, 2)
                .with_faults(f("crash=3,restart=3,foreign=2"))
                .with_symmetry(true),
            15_375,
            vec![
                "at most one writer",
                "at most one valid writer",
                "writes are exclusive",
            ],
        ),
        (
            Scenario::new(Variant::Native410, LockKind::Posix)
                .with_parties(4, 2)
                .with_faults(f("crash=2,restart=2"))
                .with_symmetry(true),
            96_748,
            vec![
                "at most one writer",
                "at most one valid writer",
                "writes are exclusive",
            ],
        ),
        (
            Scenario::new(Variant::Native, LockKind::Ofd)
                .with_parties(5, 2)
                .with_faults(f("crash=2,restart=2,unlink=1,replace=1,foreign=1"))
                .with_symmetry(true),
            400_938,
            vec!["at most one writer", "writes are exclusive"],
        ),
    ]
}

#[test]
#[ignore = "minutes; LOCKWRIGHT_DEEP=1 cargo test --release -p lockwright-model --test models file::deep:: -- --ignored"]
fn deep_scenarios() {
    require_deep();
    for (sc, states, violated) in deep_rows() {
        let report = check(&sc);
        eprintln!(
            "{}: {} states in {:.1?} ({:.0} states/s), violated {:?}",
            sc.label(),
            report.unique_states,
            report.elapsed,
            report.states_per_second(),
            report.violated()
        );
        assert_eq!(report.violated(), violated, "{}", sc.label());
        assert!(
            report
                .verdicts
                .iter()
                .filter(|v| v.expectation == stateright::Expectation::Sometimes)
                .all(|v| v.holds()),
            "{}: every sometimes is reachable",
            sc.label()
        );
        assert_eq!(report.unique_states, states, "{}", sc.label());
    }
}

/// The unreduced all-faults scenario (3 × 2): our checker and Stateright's BFS count the
/// same states and make the same discoveries; the reduced run (plain `cargo test`, the
/// "3 processes × 2 threads" section of `docs/results.json`) gives the same verdicts.
#[test]
#[ignore = "minutes; LOCKWRIGHT_DEEP=1 cargo test --release -p lockwright-model --test models file::deep:: -- --ignored"]
fn full_all_faults_space_agrees_with_stateright() {
    require_deep();
    let full = Scenario::all_faults(LockKind::Ofd).with_symmetry(false);
    let ours = assert_stateright_agrees(&full, &full.label(), 2);
    let reduced = check(&full.with_symmetry(true));
    eprintln!(
        "{}: ours and Stateright {} states in {:.1?}; reduced {} states",
        full.label(),
        ours.unique_states,
        ours.elapsed,
        reduced.unique_states
    );
    assert_eq!(ours.unique_states, 1_659_524);
    for (f, r) in ours.verdicts.iter().zip(&reduced.verdicts) {
        assert_eq!(
            (f.word(), f.path.as_ref().map(Vec::len)),
            (r.word(), r.path.as_ref().map(Vec::len)),
            "{}",
            f.name
        );
    }
}
