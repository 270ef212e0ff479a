//! The checker's result does not depend on how many threads search: the same unique states,
//! transitions, depth and the same first (shortest) counterexample and example for every
//! property, with 1 thread (the sequential search), 2 and 3 (level by level, the threads
//! claiming keys in a shared visited set), on every family's standard scenario and on full
//! and reduced spaces.

use std::time::Duration;

use lockwright_model::checker::{check_with, Checkable, Options, Report};
use lockwright_model::{docstore, file, replication, zk};

fn run<M>(model: &M, threads: usize) -> Report<M>
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    check_with(model, Options::threads(threads), Duration::MAX, |_| {})
}

fn same_for_any_thread_count<M>(model: &M)
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync + PartialEq,
{
    let one = run(model, 1);
    for threads in [2, 3] {
        let many = run(model, threads);
        assert_eq!(many.unique_states, one.unique_states, "{threads} threads");
        assert_eq!(many.transitions, one.transitions, "{threads} threads");
        assert_eq!(many.max_depth, one.max_depth, "{threads} threads");
        assert_eq!(many.verdicts, one.verdicts, "{threads} threads");
    }
}

#[test]
fn file_full_and_reduced() {
    let all = file::Scenario::all_faults(file::LockKind::Posix);
    same_for_any_thread_count(&all);
    same_for_any_thread_count(&all.with_parties(2, 2).with_symmetry(false));
    same_for_any_thread_count(&file::Scenario::standard().with_symmetry(false));
}

#[test]
fn zk_standard() {
    same_for_any_thread_count(&zk::Scenario::standard().with_clients(2));
}

#[test]
fn docstore_standard() {
    same_for_any_thread_count(&docstore::Scenario::standard());
}

#[test]
fn replication_standard() {
    same_for_any_thread_count(&replication::Scenario::standard());
}
