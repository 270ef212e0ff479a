//! The models' own tests, one module per family (one test binary: each extra binary links
//! the whole dependency tree again). What each module checks is in its own docs; the verdicts,
//! counts and counterexamples are pinned once, in `docs/results*.json`, by
//! `checks/report/tests/report_fresh.rs`.
//!
//! `cargo test -p lockwright-model --test models` runs them all; one family or one suite:
//! append a filter, e.g. `-- zk::` or `-- docstore::reach::`.

mod docstore;
mod file;
mod replication;
mod zk;
