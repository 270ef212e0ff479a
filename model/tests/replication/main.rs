//! The replication model (`lockwright_model::replication`): its verdict table pinned
//! (`verdicts/`), the deep scenarios and Stateright's own checker agreeing.
//! `cargo test -p lockwright-model --test replication`.

mod deep;
mod stateright_agrees;
mod verdicts;
