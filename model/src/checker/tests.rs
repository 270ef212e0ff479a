//! The checker's own behaviour on tiny models.

use std::time::Duration;

use stateright::{Model, Property};

use super::{check_with, Checkable, Options};

/// A counter from 0 that steps by 1 up to 3 000; `next_state` panics on entering `panic_at`
/// (with several threads, every successor is built by a worker).
#[derive(Clone)]
struct Counter {
    panic_at: Option<u16>,
}

impl Model for Counter {
    type State = u16;
    type Action = u16;
    fn init_states(&self) -> Vec<u16> {
        vec![0]
    }
    fn actions(&self, s: &u16, actions: &mut Vec<u16>) {
        if *s < 3_000 {
            actions.push(1);
        }
    }
    fn next_state(&self, s: &u16, d: u16) -> Option<u16> {
        assert_ne!(Some(s + d), self.panic_at, "the model panics");
        Some(s + d)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::sometimes("reaches 3000", |_, s: &u16| {
            *s == 3_000
        })]
    }
}

impl Checkable for Counter {}

#[test]
fn two_workers_count_the_whole_counter() {
    let report = check_with(
        &Counter { panic_at: None },
        Options::threads(2),
        Duration::MAX,
        |_| {},
    );
    assert_eq!(report.unique_states, 3_001);
    assert!(report.all_hold());
}

/// The twin: a model that panics inside a worker makes the check panic, instead of leaving the
/// merge waiting forever for that worker's chunk.
#[test]
#[should_panic(expected = "panicked")]
fn a_panic_in_a_worker_ends_the_check() {
    check_with(
        &Counter {
            panic_at: Some(1_500),
        },
        Options::threads(2),
        Duration::MAX,
        |_| {},
    );
}

/// A space whose third level is 20 000 states wide after two levels of one state each: the
/// search with several threads sizes its visited set for each level from the one before, so
/// this level finds the table full, grows it and expands its chunks again.
#[derive(Clone)]
struct Burst;

impl Model for Burst {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, s: &u32, actions: &mut Vec<u32>) {
        match *s {
            0 | 1 => actions.push(*s + 1),
            2 => actions.extend(3..20_003),
            // Every state of the wide level has two successors, shared with its neighbours.
            s if s < 20_003 => actions.extend([100_000 + s / 2, 100_000 + s / 3]),
            _ => {}
        }
    }
    fn next_state(&self, _: &u32, a: u32) -> Option<u32> {
        Some(a)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("below 106000", |_, s: &u32| *s < 106_000),
            Property::sometimes("reaches 9000", |_, s: &u32| *s == 9_000),
        ]
    }
}

impl Checkable for Burst {}

#[test]
fn a_level_that_outgrows_the_table_is_expanded_again_with_the_same_result() {
    let before = super::parallel::REDONE.load(std::sync::atomic::Ordering::Relaxed);
    let one = check_with(&Burst, Options::SINGLE, Duration::MAX, |_| {});
    let two = check_with(&Burst, Options::threads(2), Duration::MAX, |_| {});
    assert!(super::parallel::REDONE.load(std::sync::atomic::Ordering::Relaxed) > before);
    assert_eq!(one.unique_states, 3 + 20_000 + 10_001);
    assert_eq!(two.unique_states, one.unique_states);
    assert_eq!(two.transitions, one.transitions);
    assert_eq!(two.max_depth, one.max_depth);
    assert_eq!(two.verdicts, one.verdicts);
    // The first counterexample in breadth-first order: 12000 is the first parent whose
    // successor reaches 106000.
    assert_eq!(one.verdicts[0].path, Some(vec![1, 2, 12_000, 106_000]));
    assert_eq!(one.verdicts[1].path, Some(vec![1, 2, 9_000]));
}
