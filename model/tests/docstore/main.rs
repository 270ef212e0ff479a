//! The document-store model (`lockwright_model::docstore`): its verdict table pinned
//! (`verdicts/`), the store's semantics row by row, the deep scenarios, Stateright's own
//! checker agreeing, and the replay API. `cargo test -p lockwright-model --test docstore`.

mod deep;
mod replay_api;
mod stale_write_reach;
mod stateright_agrees;
mod store;
mod verdicts;
