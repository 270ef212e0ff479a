//! Model-checking throughput, side by side in one run: our checker with 1 and 2 worker
//! threads, with and without symmetry reduction, against Stateright 0.31's own BFS with 1 and
//! 2 threads, on identical scenarios of the file family; then, unreduced, the file family's
//! 3 × 2 every-fault space (1.66 M states) and the ZooKeeper and document-store standard
//! scenarios: ours with 1 and 2 workers against Stateright's BFS with 1. Each iteration is one
//! whole exhaustive run, so criterion's `thrpt` is unique states per second; the reduced runs
//! count their (fewer) reduced states, so compare their *time* with the full runs', not `thrpt`.
//!
//! `cargo bench -p lockwright-bench --bench throughput` (all groups, about 10 minutes);
//! `... -- unreduced` for the second part only.
//!
//! Before the timings the bench prints each scenario's unique states, transitions and the
//! visited set's bytes per state. Results and the machine they came from:
//! `docs/performance.md`, "Model checking throughput".

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lockwright_model::checker::{check_with, Checkable, Options};
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use lockwright_model::{docstore, zk};
use stateright::{Checker, HasDiscoveries};

/// The scenarios: the standard one (3 × 2), and every fault together at 2 × 2 (small enough
/// for Stateright's full space in a criterion loop). The 3 × 2 all-faults scenario's full
/// space (1.66 M states) is timed as whole commands instead (`docs/performance.md`).
fn scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        ("standard-3x2", Scenario::standard().with_symmetry(false)),
        (
            "all-faults-2x2",
            Scenario::new(Variant::Native, LockKind::Ofd).with_faults(
                Faults::parse("crash=2,restart=2,unlink=1,replace=1,foreign=1").unwrap(),
            ),
        ),
    ]
}

fn ours<M>(sc: &M, threads: usize) -> usize
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    check_with(sc, Options::threads(threads), Duration::MAX, |_| {}).unique_states
}

fn stateright<M>(sc: &M, threads: usize) -> usize
where
    M: Checkable + Clone + Send + Sync + 'static,
    M::State: std::fmt::Debug + PartialEq + Send + Sync + 'static,
    M::Action: PartialEq + Send + Sync + 'static,
{
    let c = sc
        .clone()
        .checker()
        .threads(threads)
        .finish_when(HasDiscoveries::AnyOf(BTreeSet::new()))
        .spawn_bfs()
        .join();
    c.unique_state_count()
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("model-check");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (name, full) in scenarios() {
        let reduced = full.with_symmetry(true);
        let f = check_with(&full, Options::SINGLE, Duration::MAX, |_| {});
        let r = check_with(&reduced, Options::SINGLE, Duration::MAX, |_| {});
        println!(
            "{name}: full {} states, {} transitions, visited set {:.1} B/state; \
             reduced {} states, visited set {:.1} B/state",
            f.unique_states,
            f.transitions,
            f.memory.visited_bytes_per_state(f.unique_states),
            r.unique_states,
            r.memory.visited_bytes_per_state(r.unique_states),
        );
        group.throughput(Throughput::Elements(f.unique_states as u64));
        for threads in [1, 2] {
            group.bench_with_input(
                BenchmarkId::new(format!("lockwright-{threads}t"), name),
                &full,
                |b, sc| b.iter(|| assert_eq!(ours(black_box(sc), threads), f.unique_states)),
            );
            group.bench_with_input(
                BenchmarkId::new(format!("stateright-{threads}t"), name),
                &full,
                |b, sc| b.iter(|| assert_eq!(stateright(black_box(sc), threads), f.unique_states)),
            );
        }
        group.throughput(Throughput::Elements(r.unique_states as u64));
        for threads in [1, 2] {
            group.bench_with_input(
                BenchmarkId::new(format!("lockwright-symmetry-{threads}t"), name),
                &reduced,
                |b, sc| b.iter(|| assert_eq!(ours(black_box(sc), threads), r.unique_states)),
            );
        }
    }
    group.finish();
}

/// One unreduced space: ours with 1 and 2 workers, Stateright's BFS with 1 thread.
fn unreduced<M>(c: &mut Criterion, name: &str, sc: &M)
where
    M: Checkable + Clone + Send + Sync + 'static,
    M::State: std::fmt::Debug + PartialEq + Send + Sync + 'static,
    M::Action: PartialEq + Send + Sync + 'static,
{
    let report = check_with(sc, Options::SINGLE, Duration::MAX, |_| {});
    let states = report.unique_states;
    println!(
        "{name}: {states} states, {} transitions, visited set {:.1} B/state",
        report.transitions,
        report.memory.visited_bytes_per_state(states),
    );
    let mut group = c.benchmark_group("unreduced");
    // Each iteration is a whole run (up to 10 s for Stateright on the largest space): the
    // fewest samples criterion takes, and no more time than they need.
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(1));
    group.measurement_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(states as u64));
    for threads in [1, 2] {
        group.bench_with_input(
            BenchmarkId::new(format!("lockwright-{threads}t"), name),
            sc,
            |b, sc| b.iter(|| assert_eq!(ours(black_box(sc), threads), states)),
        );
    }
    group.bench_with_input(BenchmarkId::new("stateright-1t", name), sc, |b, sc| {
        b.iter(|| assert_eq!(stateright(black_box(sc), 1), states))
    });
    group.finish();
}

/// The file family's 3 × 2 every-fault space and the other families' standard scenarios,
/// all without symmetry reduction.
fn unreduced_spaces(c: &mut Criterion) {
    let file = Scenario::all_faults(LockKind::Ofd).with_symmetry(false);
    unreduced(c, "file-all-faults-3x2", &file);
    unreduced(
        c,
        "zk-standard",
        &zk::Scenario::standard().with_symmetry(false),
    );
    unreduced(
        c,
        "docstore-standard",
        &docstore::Scenario::standard().with_symmetry(false),
    );
}

criterion_group!(benches, throughput, unreduced_spaces);
criterion_main!(benches);
