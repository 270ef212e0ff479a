//! Cross-checks of the document-store model:
//!
//! - Stateright's own breadth-first checker, run on the same `Model` implementation with
//!   symmetry reduction off, finds exactly as many unique states and exactly the same set of
//!   discoveries as `lockwright_model::checker` (guards the custom checker, the custom `Hash`
//!   and the dense renumbering against silently merging or skipping states);
//! - symmetry reduction changes no verdict: every row gives the same verdict word for every
//!   property with and without it (both state counts pinned).
//!
//! Stateright is told never to finish early (`AnyOf` an empty set).

use lockwright_model::check;
use lockwright_model::checker::pinned::assert_stateright_agrees;
use lockwright_model::docstore::{Faults, Scenario, Variant, Writes};

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

/// One fault list on every variant and write mode (symmetry off), as Stateright counts it.
fn stateright_agrees_on(f: &str, leased_only: bool) {
    let mut rows = 0;
    for variant in Variant::ALL {
        if leased_only && !variant.leased() {
            continue;
        }
        for writes in Writes::ALL {
            let sc = Scenario::new(variant, writes)
                .with_faults(faults(f))
                .with_symmetry(false);
            assert_stateright_agrees(&sc, &sc.label(), 1);
            rows += 1;
        }
    }
    assert!(rows > 0, "no variant takes {f}");
}

// Three tests, not one loop, so the harness runs them side by side.
#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries_under_crashes_and_lost_replies() {
    stateright_agrees_on("crash=1,restart=1,lose-reply=1", false);
}

#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries_under_stray_deletes_pauses_failovers() {
    stateright_agrees_on("stray-delete=1,pause=1,failover=1", false);
}

/// The store's own faults, for the leases (the fix renumbers the data index's sequence
/// numbers, which its conditioned writes compare).
#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries_under_the_stores_own_faults() {
    stateright_agrees_on("recreate-index=1,recreate-doc=1,rollback=1", true);
}

/// `(scenario, unique states with symmetry reduction, without)`.
fn symmetry_rows() -> Vec<(Scenario, usize, usize)> {
    let sc = |v, w, f| Scenario::new(v, w).with_faults(faults(f));
    use Variant::*;
    use Writes::*;
    vec![
        (sc(Global, Unfenced, "lose-reply=1"), 147, 288),
        (sc(Global, Fenced, "stray-delete=1,lose-reply=1"), 634, 1256),
        (
            sc(Document, Unfenced, "crash=1,restart=1,lose-reply=1"),
            606,
            1208,
        ),
        (sc(ReadWrite, Unfenced, "crash=1,restart=1"), 150, 252),
        (sc(ReadWrite, Unfenced, "lose-reply=1"), 165, 248),
        (
            sc(ReadWrite, Unfenced, "stray-delete=1").with_clients(4),
            266,
            600,
        ),
        (sc(LeasedUpsert, Unfenced, "pause=1"), 496, 989),
        (
            Scenario::standard().with_variant(LeasedUpsert),
            66_271,
            132_516,
        ),
        (Scenario::standard(), 256_907, 513_780),
        (
            sc(
                LeasedUpsert,
                Fenced,
                "crash=1,restart=1,stray-delete=1,lose-reply=1,failover=1",
            ),
            74_839,
            149_658,
        ),
        (sc(LeasedNoop, Unfenced, "none"), 788, 1574),
    ]
}

#[test]
fn symmetry_reduction_changes_no_verdict() {
    let mut got = Vec::new();
    let mut want = Vec::new();
    for (sc, reduced, unreduced) in symmetry_rows() {
        let with = check(&sc);
        let without = check(&sc.with_symmetry(false));
        let words = |r: &lockwright_model::Report<Scenario>| -> Vec<(&str, &str)> {
            r.verdicts.iter().map(|v| (v.name, v.word())).collect()
        };
        assert_eq!(words(&with), words(&without), "{}", sc.label());
        eprintln!(
            "{}: {} states reduced, {} unreduced",
            sc.label(),
            with.unique_states,
            without.unique_states
        );
        got.push((sc.label(), with.unique_states, without.unique_states));
        want.push((sc.label(), reduced, unreduced));
    }
    assert_eq!(
        got, want,
        "state counts with and without symmetry reduction"
    );
}
