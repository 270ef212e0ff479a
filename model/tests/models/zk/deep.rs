//! The ZooKeeper family's deep scenarios: 3 clients with every fault and larger budgets, 4
//! clients, and each broken variant with 3 clients. The broken variants write with plain
//! `fenced` tokens (no claim), so each also loses an update ("no lost update", the write
//! mode's flaw, pinned in `docs/results-zk.json`); the corrected design (`fenced-claim`) does not. They take minutes, so they are ignored by
//! plain `cargo test` (the standard scenario is row 1 of `docs/results-zk.json`, run by `report_fresh.rs`):
//!
//! `LOCKWRIGHT_DEEP=1 cargo test --release -p lockwright-model --test models zk::deep:: -- --ignored --nocapture`

use lockwright_model::check;
use lockwright_model::zk::{Faults, Scenario, Variant, WriteMode};

/// `(scenario, unique states, violated always properties)`.
fn deep_rows() -> Vec<(Scenario, usize, Vec<&'static str>)> {
    let f = |s: &str| Faults::parse(s).unwrap();
    let all = "expire=1,lose-reply=1,restart=1";
    let all_recreate = "expire=1,lose-reply=1,restart=1,recreate-parent=1";
    vec![
        (Scenario::deep(), 9_916_293, vec!["at most one holder"]),
        (
            Scenario::new(Variant::Curator, WriteMode::FencedClaim)
                .with_clients(4)
                .with_faults(f(all)),
            4_761_282,
            vec!["at most one holder"],
        ),
        (
            Scenario::new(Variant::NoProtection, WriteMode::Fenced).with_faults(f(all)),
            821_301,
            vec!["at most one holder", "no lost update", "no orphan node"],
        ),
        (
            Scenario::new(Variant::ReleaseForgets, WriteMode::Fenced).with_faults(f(all)),
            725_829,
            vec!["at most one holder", "no lost update", "no orphan node"],
        ),
        (
            Scenario::new(Variant::AdoptOldSession, WriteMode::Fenced).with_faults(f(all)),
            831_155,
            vec![
                "at most one holder",
                "at most one live holder",
                "no lost update",
                "no orphan node",
                "grants in request order",
            ],
        ),
        (
            Scenario::new(Variant::DeleteByNameRetry, WriteMode::Fenced)
                .with_faults(f(all_recreate)),
            1_821_369,
            vec![
                "at most one holder",
                "at most one live holder",
                "no lost update",
                "grants in request order",
            ],
        ),
        (
            Scenario::new(Variant::Curator, WriteMode::FencedBySequence)
                .with_faults(f(all_recreate)),
            2_536_204,
            vec![
                "at most one holder",
                "fenced writes are exclusive",
                "no lost update",
            ],
        ),
    ]
}

#[test]
#[ignore = "minutes; run with LOCKWRIGHT_DEEP=1 cargo test --release -p lockwright-model --test models zk::deep:: -- --ignored"]
fn deep_scenarios() {
    assert_eq!(
        std::env::var("LOCKWRIGHT_DEEP").as_deref(),
        Ok("1"),
        "set LOCKWRIGHT_DEEP=1 to run the deep scenarios"
    );
    let mut failures = Vec::new();
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
        assert!(
            report
                .verdicts
                .iter()
                .filter(|v| v.expectation == stateright::Expectation::Sometimes)
                .all(|v| v.holds()),
            "{}: every sometimes is reachable",
            sc.label()
        );
        if report.violated() != violated || report.unique_states != states {
            failures.push(format!(
                "{}: {} states, violated {:?} (pinned: {states}, {violated:?})",
                sc.label(),
                report.unique_states,
                report.violated()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
