//! The file-lock model (`lockwright_model::file`): the states its verdict rows rely on
//! (`reach`; the verdicts, counts and counterexamples themselves are pinned once, in
//! `docs/results.json`, by `checks/report/tests/report_fresh.rs`), the deep scenarios, symmetry
//! reduction and the packed encoding checked against the full space, Stateright's own checker
//! and the checker's thread count agreeing, and the replay API the refinement replayer relies
//! on. A module of the models' one test binary: `cargo test -p lockwright-model --test models
//! file::` (a suite alone: e.g. `file::reach::`).

mod checker_threads;
mod deep;
mod held_set_check_is_redundant;
mod packed_states;
mod reach;
mod replay_api;
mod stateright_agrees;
mod symmetry;
mod three_processes;
