//! The replication model (`lockwright_model::replication`): the deep scenarios and
//! Stateright's own checker agreeing. Its verdict table is pinned once, in
//! `docs/results-replication.json`, by `checks/report/tests/report_fresh.rs`.
//! `cargo test -p lockwright-model --test models replication::`.

mod deep;
mod stateright_agrees;
