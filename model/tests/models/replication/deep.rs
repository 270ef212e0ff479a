//! The standard scenario (runs in every `cargo test`) and the deep scenarios (more readers,
//! rounds, files and crashes; ignored by default: about 10 s in release, a minute or two in the
//! test profile).
//!
//! `cargo test --release -p lockwright-model --test models replication::deep:: -- --ignored --nocapture`

use lockwright_model::check;
use lockwright_model::replication::{
    Faults, Pace, ReaderKind, Scenario, Variant, NO_IN_USE_DELETED, NO_MISSING_FILE,
};

#[test]
fn standard_scenario_is_pinned_in_the_golden_file() {
    let sc = Scenario::standard();
    assert_eq!(
        sc.label(),
        "lockwright × open-handles × keep-up, 3 rounds of 3-file commits (1 shared), 2 readers, \
         faults crash=1"
    );
    assert_pinned_once("results-replication.json", &sc.label());
}

/// The standard scenario's row in the committed golden file, which pins its verdicts, counts
/// and counterexample paths (`report_fresh` replays every row; regenerate with
/// `cargo run -p lockwright-report --`). Pinned there only, so this test checks that it is.
fn assert_pinned_once(file: &str, label: &str) {
    let path = format!("{}/../docs/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let golden: serde_json::Value = serde_json::from_str(&text).expect("the golden file parses");
    let rows: Vec<&serde_json::Value> = golden["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["scenario"] == label)
        .collect();
    assert_eq!(
        rows.len(),
        1,
        "{path} must pin the standard scenario ({label}) once"
    );
}

/// `(scenario, unique states, violated always properties)`.
fn deep_rows() -> Vec<(Scenario, usize, Vec<&'static str>)> {
    vec![
        (Scenario::deep(), 574_529, vec![]),
        (
            Scenario::new(Variant::Lucene5Handler, ReaderKind::OpenHandles)
                .with_readers(4)
                .with_rounds(5)
                .with_data_files(3)
                .with_faults(Faults { crash: 2 }),
            830_720,
            vec![NO_IN_USE_DELETED],
        ),
        (
            Scenario::new(Variant::Lockwright, ReaderKind::OpenHandles)
                .with_pace(Pace::Unbounded)
                .with_readers(2)
                .with_rounds(4)
                .with_data_files(3)
                .with_faults(Faults { crash: 1 }),
            289_896,
            vec![NO_MISSING_FILE, NO_IN_USE_DELETED],
        ),
    ]
}

#[test]
#[ignore = "slow (a minute or two in the test profile); cargo test --release -p lockwright-model --test models replication::deep:: -- --ignored"]
fn deep_scenarios() {
    let mut wrong = Vec::new();
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
        if report.violated() != violated || report.unique_states != states {
            wrong.push(format!(
                "{}: {} states, violated {:?} (pinned: {states}, {violated:?})",
                sc.label(),
                report.unique_states,
                report.violated()
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
