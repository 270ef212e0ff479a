//! The document-store model (`lockwright_model::docstore`): the states its verdict rows rely
//! on (`reach`; the verdicts, counts and counterexamples themselves are pinned once, in
//! `docs/results-docstore.json`, by `checks/report/tests/report_fresh.rs`), the store's
//! semantics row by row, the deep scenarios, Stateright's own
//! checker agreeing, and the replay API. `cargo test -p lockwright-model --test models docstore::`.

mod deep;
mod reach;
mod reinstall;
mod renew;
mod replay_api;
mod stale_write_reach;
mod stateright_agrees;
mod store;
