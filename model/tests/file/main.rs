//! The file-lock model (`lockwright_model::file`): its verdict table pinned (`verdicts/`), the
//! deep scenarios, symmetry reduction and the packed encoding checked against the full space,
//! Stateright's own checker and the checker's thread count agreeing, and the replay API the
//! refinement replayer relies on. One test binary, one module per former suite:
//! `cargo test -p lockwright-model --test file` (a module alone: append its name, e.g.
//! `-- verdicts::`).

mod checker_threads;
mod deep;
mod held_set_check_is_redundant;
mod packed_states;
mod replay_api;
mod stateright_agrees;
mod symmetry;
mod three_processes;
mod verdicts;
