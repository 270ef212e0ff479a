//! Symmetry reduction is sound here: with the interchangeable (non-reentrant) clients merged,
//! every verdict is the same as without, on 3-client scenarios of every variant. The counts
//! are pinned both ways (`docs/zookeeper.md` quotes them).
//!
//! `cargo test -p lockwright-model --test zk_symmetry -- --nocapture` prints them.

use lockwright_model::check;
use lockwright_model::zk::{Faults, Scenario, Variant, WriteMode};

/// `(scenario, reduced count, full count)`.
fn rows() -> Vec<(Scenario, usize, usize)> {
    let f = |s: &str| Faults::parse(s).unwrap();
    vec![
        (Scenario::standard(), 235_566, 470_441),
        // All three clients interchangeable (6 permutations).
        (
            Scenario::new(Variant::Curator, WriteMode::Unfenced)
                .with_reentrant(false)
                .with_faults(f("expire=1,lose-reply=1")),
            7_096,
            42_093,
        ),
        (
            Scenario::new(Variant::AdoptOldSession, WriteMode::Fenced)
                .with_reentrant(false)
                .with_faults(f("lose-reply=1,restart=1")),
            15_474,
            92_207,
        ),
        (
            Scenario::new(Variant::DeleteByNameRetry, WriteMode::Fenced)
                .with_reentrant(false)
                .with_faults(f("lose-reply=1,recreate-parent=1")),
            1_740,
            10_166,
        ),
        (
            Scenario::new(Variant::ReleaseForgets, WriteMode::CheckThenWrite)
                .with_faults(f("expire=1,lose-reply=1")),
            39_452,
            78_650,
        ),
        (
            Scenario::new(Variant::NoProtection, WriteMode::FencedBySequence)
                .with_faults(f("expire=1,recreate-parent=1")),
            25_006,
            49_641,
        ),
    ]
}

#[test]
fn reduced_and_full_runs_agree_on_every_verdict() {
    let mut counts = Vec::new();
    for (sc, reduced, full) in rows() {
        let with = check(&sc);
        let without = check(&sc.with_symmetry(false));
        println!(
            "{}: {} states reduced, {} full",
            sc.label(),
            with.unique_states,
            without.unique_states
        );
        let words = |r: &lockwright_model::Report<Scenario>| -> Vec<(&str, &str)> {
            r.verdicts.iter().map(|v| (v.name, v.word())).collect()
        };
        assert_eq!(words(&with), words(&without), "{}", sc.label());
        counts.push((
            sc.label(),
            (with.unique_states, without.unique_states),
            (reduced, full),
        ));
    }
    for (label, got, want) in counts {
        assert_eq!(got, want, "{label}");
    }
}
