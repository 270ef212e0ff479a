//! Symmetry reduction is sound here: with the interchangeable (non-reentrant) clients merged,
//! every verdict is the same as without, on 3-client scenarios of every variant. The counts
//! are pinned both ways (`docs/zookeeper.md` quotes them).
//!
//! `cargo test -p lockwright-model --test models zk::symmetry:: -- --nocapture` prints them.

use lockwright_model::check;
use lockwright_model::zk::{Faults, Scenario, Variant, WriteMode};

/// `(scenario, reduced count, full count)`.
fn rows() -> Vec<(Scenario, usize, usize)> {
    let f = |s: &str| Faults::parse(s).unwrap();
    vec![
        (Scenario::standard(), 396_936, 793_057),
        // All three clients interchangeable (6 permutations).
        (
            Scenario::new(Variant::Curator, WriteMode::Unfenced)
                .with_reentrant(false)
                .with_faults(f("expire=1,lose-reply=1")),
            18_328,
            109_266,
        ),
        (
            Scenario::new(Variant::AdoptOldSession, WriteMode::Fenced)
                .with_reentrant(false)
                .with_faults(f("lose-reply=1,restart=1")),
            31_778,
            189_800,
        ),
        (
            Scenario::new(Variant::DeleteByNameRetry, WriteMode::Fenced)
                .with_reentrant(false)
                .with_faults(f("lose-reply=1,recreate-parent=1")),
            4_645,
            27_458,
        ),
        (
            Scenario::new(Variant::ReleaseForgets, WriteMode::CheckThenWrite)
                .with_faults(f("expire=1,lose-reply=1")),
            91_849,
            183_288,
        ),
        (
            Scenario::new(Variant::NoProtection, WriteMode::FencedBySequence)
                .with_faults(f("expire=1,recreate-parent=1")),
            41_706,
            82_859,
        ),
        // A suspension with a queued create or delete (whose name the permutation renames), and
        // a cleanup slot beside the next acquire (its node, and the dropped attempt's uuid,
        // renamed too). 113,505 / 679,306 before the cleanup slot (model v5).
        (
            Scenario::new(Variant::Curator, WriteMode::Fenced)
                .with_reentrant(false)
                .with_faults(f("suspend=1,lose-reply=1,abandon=1")),
            297_120,
            1_779_562,
        ),
        // A 3-bit sequence counter (rows 38–39's scope, issue #33): nodes that share the
        // stuck top suffix sort by their protection ids, which the permutation renames.
        (
            Scenario::standard()
                .with_faults(f("expire=1,lose-reply=1"))
                .with_sequence_width(Some(3)),
            124_112,
            247_605,
        ),
        (
            Scenario::new(Variant::TextOrder, WriteMode::Fenced)
                .with_reentrant(false)
                .with_sequence_width(Some(3)),
            6_290,
            29_184,
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
