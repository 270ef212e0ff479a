//! Model-checking throughput, side by side in one run: our checker with 1 and 2 worker
//! threads, with and without symmetry reduction, against Stateright 0.31's own BFS with 1 and
//! 2 threads, on identical scenarios of the file family. Each iteration is one whole
//! exhaustive run, so criterion's `thrpt` is unique states per second; the reduced runs count
//! their (fewer) reduced states, so compare their *time* with the full runs', not `thrpt`.
//!
//! `cargo bench -p lockwright-model --bench throughput`
//!
//! Before the timings the bench prints each scenario's unique states, transitions and the
//! visited set's bytes per state. Results and the machine they came from:
//! `docs/performance.md`, "Model checking throughput".

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lockwright_model::checker::{check_with, Options};
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use stateright::{Checker, HasDiscoveries, Model};

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

fn ours(sc: &Scenario, threads: usize) -> usize {
    check_with(sc, Options::threads(threads), Duration::MAX, |_| {}).unique_states
}

fn stateright(sc: &Scenario, threads: usize) -> usize {
    let c = sc
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

criterion_group!(benches, throughput);
criterion_main!(benches);
