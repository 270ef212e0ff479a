//! Checks for the lockwright protocols: CLI subcommands, the simulated OS for loom and shuttle,
//! and the stress tools.

pub mod cli;
