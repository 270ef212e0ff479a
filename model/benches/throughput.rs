//! Model-checking throughput: unique states per second of the exhaustive checker on the
//! standard scenario, a larger 2-process scenario with every fault, and the deep scenario;
//! plus Stateright's own single-threaded BFS on the standard scenario for comparison.
//!
//! `cargo bench -p lockwright-model --bench throughput` (criterion reports `thrpt` in
//! unique states per second, because each iteration is one whole exhaustive run).
//! Results and the machine they came from: `docs/performance.md`, "Model checking throughput".

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lockwright_model::check;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use stateright::{Checker, HasDiscoveries, Model};

fn scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        ("standard", Scenario::standard()),
        (
            "all-faults-2x2",
            Scenario::new(Variant::Native, LockKind::Ofd).with_faults(
                Faults::parse("crash=2,restart=2,unlink=1,replace=1,foreign=1").unwrap(),
            ),
        ),
        ("deep", Scenario::deep()),
    ]
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("model-check");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for (name, sc) in scenarios() {
        let states = check(&sc).unique_states as u64;
        group.throughput(Throughput::Elements(states));
        group.bench_with_input(BenchmarkId::new("lockwright-bfs", name), &sc, |b, sc| {
            b.iter(|| {
                let r = check(black_box(sc));
                assert_eq!(r.unique_states as u64, states);
                r
            });
        });
    }
    // Stateright 0.31's BFS (single thread, never finishing early) on the same model.
    let sc = Scenario::standard();
    let states = check(&sc).unique_states;
    group.throughput(Throughput::Elements(states as u64));
    group.bench_with_input(
        BenchmarkId::new("stateright-bfs", "standard"),
        &sc,
        |b, sc| {
            b.iter(|| {
                let c = black_box(*sc)
                    .checker()
                    .finish_when(HasDiscoveries::AnyOf(BTreeSet::new()))
                    .spawn_bfs()
                    .join();
                assert_eq!(c.unique_state_count(), states);
            });
        },
    );
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
