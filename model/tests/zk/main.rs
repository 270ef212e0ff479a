//! The ZooKeeper model (`lockwright_model::zk`): its verdict table pinned (`verdicts/`), the
//! deep scenarios, symmetry, Stateright's own checker agreeing, and the "n/a" rule for
//! properties a fault list cannot reach. `cargo test -p lockwright-model --test zk`.

mod applies;
mod deep;
mod stateright_agrees;
mod symmetry;
mod verdicts;
