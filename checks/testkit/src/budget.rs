//! How hard the loom and shuttle suites search: one place for the switches every suite
//! honours, so a red run reproduces and a long run is one variable away.
//!
//! - `LOCKWRIGHT_DEEP=1`: the suites' larger budgets ([`deep`]).
//! - `LOOM_MAX_PREEMPTIONS=N`: loom's own variable; when set it overrides a suite's
//!   preemption bound ([`loom_builder`]), as loom documents for its builder.
//! - Shuttle runs always use fixed seeds ([`shuttle_explore`]): the same executions on every
//!   run, so a failure in CI is the failure on a developer's machine.

/// Whether `LOCKWRIGHT_DEEP=1` asks for the long runs.
pub fn deep() -> bool {
    std::env::var_os("LOCKWRIGHT_DEEP").is_some_and(|v| v == "1")
}

/// A loom builder with preemption bound `LOOM_MAX_PREEMPTIONS` when that is set, else
/// `deep_bound` under `LOCKWRIGHT_DEEP=1`, else `bound` (`None`: unbounded).
///
/// # Panics
/// If `LOOM_MAX_PREEMPTIONS` is set but not a number.
pub fn loom_builder(bound: Option<usize>, deep_bound: Option<usize>) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = match std::env::var("LOOM_MAX_PREEMPTIONS") {
        Ok(v) => Some(v.parse().expect("LOOM_MAX_PREEMPTIONS must be a number")),
        Err(_) if deep() => deep_bound,
        Err(_) => bound,
    };
    builder
}

/// Runs `body` `n` times under shuttle's random scheduler, then `n` times under PCT with
/// depth `pct_depth`, both seeded with `seed`.
pub fn shuttle_explore(
    seed: u64,
    n: usize,
    pct_depth: usize,
    body: impl Fn() + Send + Sync + Clone + 'static,
) {
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    use shuttle::Runner;
    Runner::new(
        RandomScheduler::new_from_seed(seed, n),
        crate::schedules::persisting(),
    )
    .run(body.clone());
    Runner::new(
        PctScheduler::new_from_seed(seed, pct_depth, n),
        crate::schedules::persisting(),
    )
    .run(body);
}
