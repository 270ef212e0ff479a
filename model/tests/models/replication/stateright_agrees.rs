//! Cross-checks of the replication model's exhaustive runs:
//!
//! - Stateright's own breadth-first checker, on the same `Model` implementation, finds
//!   exactly as many unique states and the same set of discoveries as
//!   `lockwright_model::checker`, for every variant × reader kind × pace with a crash budget
//!   (symmetry off: Stateright knows nothing of our representatives).
//! - Symmetry reduction (readers sorted) changes no verdict: the reduced and unreduced runs
//!   agree on every property, for every variant × reader kind × pace, with three readers.
//!
//! `cargo test -p lockwright-model --test models replication::stateright_agrees:: -- --nocapture` prints
//! both state counts of each symmetry row.

use lockwright_model::check;
use lockwright_model::checker::pinned::assert_stateright_agrees;
use lockwright_model::replication::{Faults, Pace, ReaderKind, Scenario, Variant};

fn all_scenarios() -> impl Iterator<Item = Scenario> {
    Variant::ALL.into_iter().flat_map(|v| {
        ReaderKind::ALL.into_iter().flat_map(move |k| {
            Pace::ALL
                .into_iter()
                .map(move |p| Scenario::new(v, k).with_pace(p))
        })
    })
}

#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries() {
    for sc in all_scenarios() {
        let sc = sc
            .with_rounds(2)
            .with_faults(Faults { crash: 1 })
            .without_symmetry();
        assert_stateright_agrees(&sc, &sc.label(), 1);
    }
}

#[test]
fn symmetry_reduction_changes_no_verdict() {
    for sc in all_scenarios() {
        let sc = sc
            .with_readers(3)
            .with_rounds(2)
            .with_faults(Faults { crash: 1 });
        let reduced = check(&sc);
        let full = check(&sc.without_symmetry());
        let words = |r: &lockwright_model::Report<Scenario>| {
            r.verdicts
                .iter()
                .map(|v| (v.name, v.word()))
                .collect::<Vec<_>>()
        };
        assert_eq!(words(&reduced), words(&full), "{}", sc.label());
        assert!(
            reduced.unique_states <= full.unique_states,
            "{}",
            sc.label()
        );
        // Shortest counterexamples have the same length (a reader permutation of a path is a
        // path of the same length).
        for (a, b) in reduced.verdicts.iter().zip(&full.verdicts) {
            assert_eq!(
                a.path.as_ref().map(Vec::len),
                b.path.as_ref().map(Vec::len),
                "{}: {}",
                sc.label(),
                a.name
            );
        }
        println!(
            "{}: {} states reduced, {} unreduced",
            sc.label(),
            reduced.unique_states,
            full.unique_states
        );
    }
}
