//! The ZooKeeper model (`lockwright_model::zk`): the states its verdict rows rely on (`reach`;
//! the verdicts, counts and counterexamples themselves are pinned once, in
//! `docs/results-zk.json`, by `checks/report/tests/report_fresh.rs`), the deep scenarios,
//! symmetry, Stateright's own checker agreeing, and the "n/a" rule for properties a fault list
//! cannot reach. `cargo test -p lockwright-model --test models zk::`.

mod applies;
mod counter_top;
mod deep;
mod reach;
mod stateright_agrees;
mod symmetry;
