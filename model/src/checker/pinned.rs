//! Pinned verdict rows, for every family's tests: one scenario's exact state count, the verdict
//! of every property, and the exact (shortest) counterexample of every violated `always`
//! property, asserted in one place so that each family's table reads as data.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::Hash;

use stateright::{Expectation, Model};

use super::{check, replay, Checkable, Report};

/// What a test pins about one scenario.
#[derive(Clone, Copy, Debug)]
pub struct Pinned<'a> {
    /// Unique states of the whole space (reduced, if the scenario reduces by symmetry).
    pub unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    pub verdicts: &'a [(&'a str, &'a str)],
    /// The counterexample of each violated `always` property, as the actions' `Display`.
    pub counterexamples: &'a [(&'a str, &'a [&'a str])],
}

/// Checks `model` exhaustively and asserts `row`; then that every discovery replays from the
/// initial state, a counterexample ending in the first state that violates its property and an
/// example in a state where it holds. Returns the report for further assertions.
///
/// # Panics
/// On the first difference, with the scenario's `label` in the message.
pub fn assert_pinned<M>(model: &M, label: &str, row: &Pinned<'_>) -> Report<M>
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync + PartialEq + fmt::Display,
{
    let report = check(model);
    let got: Vec<(&str, &str)> = report.verdicts.iter().map(|v| (v.name, v.word())).collect();
    assert_eq!(got, row.verdicts.to_vec(), "verdicts of {label}");
    assert_eq!(
        report.unique_states, row.unique_states,
        "unique states of {label}"
    );
    let got: Vec<(&str, Vec<String>)> = report
        .verdicts
        .iter()
        .filter(|v| v.expectation == Expectation::Always && !v.holds())
        .map(|v| {
            let path = v.path.as_ref().expect("a violation has a path");
            (v.name, path.iter().map(ToString::to_string).collect())
        })
        .collect();
    let want: Vec<(&str, Vec<String>)> = row
        .counterexamples
        .iter()
        .map(|(name, path)| (*name, path.iter().map(ToString::to_string).collect()))
        .collect();
    assert_eq!(got, want, "counterexamples of {label}");

    let properties = model.properties();
    for v in &report.verdicts {
        let Some(path) = &v.path else { continue };
        let states =
            replay(model, path).unwrap_or_else(|| panic!("{label}: {}'s path replays", v.name));
        let property = properties
            .iter()
            .find(|p| p.name == v.name)
            .expect("a reported property exists");
        let (last, before) = states.split_last().expect("non-empty");
        match v.expectation {
            Expectation::Always => {
                assert!(
                    !(property.condition)(model, last),
                    "{label}: \"{}\" holds at its counterexample's end",
                    v.name
                );
                for s in before {
                    assert!(
                        (property.condition)(model, s),
                        "{label}: \"{}\" is violated before its counterexample ends",
                        v.name
                    );
                }
            }
            _ => assert!(
                (property.condition)(model, last),
                "{label}: \"{}\" does not hold where its example ends",
                v.name
            ),
        }
    }
    report
}

/// Whether some reachable state satisfies `pred`: a plain breadth-first search over the
/// [`Model`] interface (the full space, no fingerprints), for the tests' "not vacuous" checks.
pub fn reachable<M: Model>(model: &M, pred: impl Fn(&M::State) -> bool) -> bool
where
    M::State: Hash + Eq + Clone,
{
    let mut seen: HashSet<M::State> = model.init_states().into_iter().collect();
    let mut queue: VecDeque<M::State> = seen.iter().cloned().collect();
    while let Some(s) = queue.pop_front() {
        if pred(&s) {
            return true;
        }
        for next in model.next_states(&s) {
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    false
}
