//! Pinned verdict rows, for every family's tests: one scenario's exact state count, the verdict
//! of every property, and the exact (shortest) counterexample of every violated `always`
//! property, asserted in one place so that each family's table reads as data; and the
//! cross-check against Stateright's own checker ([`assert_stateright_agrees`]).

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use stateright::{Checker, Expectation, HasDiscoveries, Model};

use super::{check, check_with, replay, Checkable, Options, Report};

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

    assert_discoveries_replay(model, label, &report);
    report
}

/// Asserts that every discovery of `report` (a run of [`check`] on `model`) replays from the
/// initial state: a counterexample of an `always` property violates it at its last state and
/// nowhere before; an example of a `sometimes` property satisfies it at its last state. What
/// [`assert_pinned`] checks after comparing the pinned values; the report crate's golden tests
/// (`checks/report/tests/report_fresh.rs`) call it on every row of the results JSON.
///
/// # Panics
/// On the first discovery that does not, with `label` in the message.
pub fn assert_discoveries_replay<M>(model: &M, label: &str, report: &Report<M>)
where
    M: Checkable,
    M::Action: PartialEq,
{
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

/// Runs Stateright's own breadth-first checker on `model` with `threads` threads, to the end
/// (told never to finish early: by default it stops once every property has a discovery), and
/// asserts that it counts exactly the unique states of [`check_with`] and finds the same set of
/// discoveries (violated `always`, found `sometimes`). This guards the shared checker, its
/// fingerprints and a model's canonical renumbering against silently merging or skipping
/// states. Returns our report for further assertions.
///
/// # Panics
/// On a difference, with `model`'s `label` in the message.
pub fn assert_stateright_agrees<M>(model: &M, label: &str, threads: usize) -> Report<M>
where
    M: Checkable + Clone + Send + Sync + 'static,
    M::State: fmt::Debug + Hash + PartialEq + Send + Sync + 'static,
    M::Action: fmt::Debug + PartialEq + Send + Sync + 'static,
{
    let ours = check_with(model, Options::threads(threads), Duration::MAX, |_| {});
    let theirs = model
        .clone()
        .checker()
        .threads(threads)
        .finish_when(HasDiscoveries::AnyOf(BTreeSet::new()))
        .spawn_bfs()
        .join();
    assert!(theirs.is_done(), "{label}: Stateright did not finish");
    assert_eq!(
        theirs.unique_state_count(),
        ours.unique_states,
        "{label}: unique states (Stateright, ours)"
    );
    let mut found: Vec<&str> = theirs.discoveries().into_keys().collect();
    found.sort_unstable();
    let mut ours_found: Vec<&str> = ours
        .verdicts
        .iter()
        .filter(|v| v.path.is_some())
        .map(|v| v.name)
        .collect();
    ours_found.sort_unstable();
    assert_eq!(found, ours_found, "{label}: discoveries (Stateright, ours)");
    ours
}

#[cfg(test)]
mod tests {
    use stateright::{Model, Property};

    use super::{assert_stateright_agrees, Checkable};

    /// A counter from 0 that steps by 1 or 2 up to 6. With `skip: Some(n)`, our checker's
    /// successor hook never enters `n`, while Stateright (through `next_state`) does: the two
    /// checkers then explore different spaces.
    #[derive(Clone)]
    struct Counter {
        skip: Option<u8>,
    }

    impl Model for Counter {
        type State = u8;
        type Action = u8;
        fn init_states(&self) -> Vec<u8> {
            vec![0]
        }
        fn actions(&self, s: &u8, actions: &mut Vec<u8>) {
            actions.extend([1, 2].into_iter().filter(|d| s + d <= 6));
        }
        fn next_state(&self, s: &u8, d: u8) -> Option<u8> {
            Some(s + d)
        }
        fn properties(&self) -> Vec<Property<Self>> {
            vec![Property::sometimes("reaches 5", |_, s: &u8| *s == 5)]
        }
    }

    impl Checkable for Counter {
        fn successor_into(&self, s: &u8, d: u8, out: &mut u8) -> bool {
            if self.skip == Some(s + d) {
                return false;
            }
            *out = s + d;
            true
        }
    }

    #[test]
    fn agreement_holds_for_a_faithful_checker() {
        let ours = assert_stateright_agrees(&Counter { skip: None }, "counter", 1);
        assert_eq!(ours.unique_states, 7);
    }

    /// The twin: our checker misses state 5 (6 is still reached from 4), so it counts 6 states
    /// where Stateright counts 7.
    #[test]
    #[should_panic(expected = "skipping 5: unique states")]
    fn a_checker_that_skips_a_state_is_caught() {
        assert_stateright_agrees(&Counter { skip: Some(5) }, "skipping 5", 1);
    }
}
