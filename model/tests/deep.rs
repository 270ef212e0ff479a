//! The standard scenario (runs in every `cargo test`) and the deep scenarios (3 processes,
//! larger fault budgets; only with `LOCKWRIGHT_DEEP=1`, they take minutes).
//!
//! `LOCKWRIGHT_DEEP=1 cargo test --release -p lockwright-model --test deep -- --nocapture`

use lockwright_model::check;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};

fn deep_enabled() -> bool {
    std::env::var("LOCKWRIGHT_DEEP").is_ok_and(|v| v == "1")
}

#[test]
fn standard_scenario_holds_exhaustively() {
    let sc = Scenario::standard();
    assert_eq!(
        sc.label(),
        "native × ofd, 2 processes × 2 threads, faults crash=2,restart=2,foreign=2"
    );
    let report = check(&sc);
    assert!(report.all_hold(), "{:?}", report.verdicts);
    assert_eq!(report.unique_states, 13216);
}

/// `(scenario, unique states, violated always properties)`.
fn deep_rows() -> Vec<(Scenario, usize, Vec<&'static str>)> {
    let f = |s: &str| Faults::parse(s).unwrap();
    vec![
        (Scenario::deep(), 759_620, vec![]),
        (
            Scenario::new(Variant::Native, LockKind::Posix)
                .with_parties(3, 2)
                .with_faults(f("crash=2,restart=2")),
            119_914,
            vec![],
        ),
        (
            Scenario::new(Variant::Native410, LockKind::Posix)
                .with_parties(3, 2)
                .with_faults(f("crash=1,restart=1")),
            940_074,
            vec![
                "at most one writer",
                "at most one valid writer",
                "writes are exclusive",
            ],
        ),
        (
            Scenario::new(Variant::Native, LockKind::Ofd)
                .with_parties(3, 2)
                .with_faults(f("crash=2,restart=2,unlink=1,replace=1,foreign=1")),
            5_049_313,
            vec!["at most one writer", "writes are exclusive"],
        ),
    ]
}

#[test]
fn deep_scenarios() {
    if !deep_enabled() {
        eprintln!("skipped: set LOCKWRIGHT_DEEP=1 to run the deep scenarios");
        return;
    }
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
