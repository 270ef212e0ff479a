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
