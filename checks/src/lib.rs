//! Checks for the lockwright protocols: CLI subcommands, the simulated OS for loom and shuttle,
//! the stress tools and the report generator.

pub mod cli;
pub mod report;
pub mod sim;
pub mod stress;
