//! The document-store verdict table of `docs/docstore.md`, pinned: for every scenario, each
//! property's verdict, the exact number of unique states (with symmetry reduction), and the
//! exact shortest counterexample of every violated `always` property. Row numbers match the
//! docs. A change to the model that alters a state space or a counterexample shows up here.
//!
//! Every row runs exhaustively, so "holds" means "holds in every reachable state"; every row
//! that holds has a twin in which the check finds the bug (named in its comment).
//!
//! `cargo test -p lockwright-model --test docstore verdicts::`

use lockwright_model::checker::pinned::{assert_pinned, reachable, Pinned};
use lockwright_model::docstore::{Faults, Scenario, Variant, Writes};

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 11],
    /// The counterexample of each violated `always` property.
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    // Not vacuous: in every row the data document accepts some write.
    assert!(
        reachable(&sc, |s| s.written.is_some()),
        "{label}: no write is ever accepted"
    );
    assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
}

mod bulk;
mod fix;
mod global_and_document;
mod leased;
mod read_write;
mod store_faults;
