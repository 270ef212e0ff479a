//! The verdict table of `docs/model.md`, pinned: for every scenario, each property's verdict,
//! the exact number of unique states, and the exact (shortest, BFS-first) counterexample of
//! every violated `always` property. A change to the model that alters the state space or a
//! counterexample shows up here as a diff.
//!
//! Every row runs exhaustively (the checker never stops early, see `lockwright_model::checker`),
//! so "holds" means "holds in every reachable state". Every scenario that holds has a twin in
//! which the check finds the bug (named in each test's comment).
//!
//! Check them all: `cargo test -p lockwright-model --test file verdicts::`.

use lockwright_model::checker::pinned::{assert_pinned, reachable, Pinned};
use lockwright_model::file::{Faults, LockKind, Pc, Scenario, State, Variant};
use stateright::Model;

/// `N`: how many properties the scenario has (7; 9 for the blocking variants, which add "a
/// blocking obtain returns a lock on the current lock file" and "a blocking obtain re-opens a
/// replaced file").
struct Expected<const N: usize> {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); N],
    /// The counterexample of each violated `always` property.
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

fn expect<const N: usize>(e: Expected<N>) {
    let sc = e.scenario;
    let label = sc.label();

    // "writes are exclusive" and "at most one valid writer" are not vacuous: in every
    // scenario some thread passes `EnsureValid` and is writing.
    assert!(
        reachable(&sc, |s: &State| s
            .live_threads()
            .any(|(_, _, th)| th.pc == Pc::Writing)),
        "{label}: no write ever begins"
    );

    // The verdicts, the count, every counterexample, and that every discovery replays
    // through the replayer's API (`Scenario::step`) to the first state that violates its
    // property (or, for an example, to a state where it holds).
    let report = assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
    // The file model's own name for what a state violates agrees with the property's condition.
    for v in report.verdicts.iter().filter(|v| !v.holds()) {
        let Some(path) = &v.path else { continue };
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, *a)
                .unwrap_or_else(|| panic!("{label}: {a} is enabled"));
        }
        assert!(sc.violated(&s).contains(&v.name), "{label}: {}", v.name);
    }
}

mod blocking_and_probe_order;
mod lucene_incidents;
mod native_order;
mod os_faults;
mod other_factories;
