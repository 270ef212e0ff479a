//! The verdict table of `docs/replication.md`, pinned: for every scenario, each property's
//! verdict, the exact number of unique states, and the exact (shortest, BFS-first)
//! counterexample of every violated `always` property. A change to the model that alters the
//! state space or a counterexample shows up here as a diff.
//!
//! Every row runs exhaustively, so "holds" means "holds in every reachable state". Every row
//! that holds has a twin in which the check finds the bug (named in each test's comment).
//!
//! Check them all: `cargo test -p lockwright-model --test replication verdicts::`.

use lockwright_model::checker::describe_path;
use lockwright_model::checker::pinned::{assert_pinned, Pinned};
use lockwright_model::replication::{
    Faults, Pace, ReaderKind, Scenario, Variant, ALWAYS, SOMETIMES,
};

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 9],
    /// The counterexample of each violated `always` property (actions' `Display`).
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    let report = assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
    let names: Vec<&str> = report.verdicts.iter().map(|v| v.name).collect();
    let want: Vec<&str> = ALWAYS.iter().chain(SOMETIMES.iter()).copied().collect();
    assert_eq!(names, want, "property order of {label}");
    // Every counterexample reads as numbered calls (what docs/replication.md lists).
    for v in report.verdicts.iter().filter(|v| !v.holds()) {
        if let Some(path) = &v.path {
            assert_eq!(describe_path(&sc, path).len(), path.len());
        }
    }
}

mod copiers;
mod lucene_handlers;
mod wrong_orders;
