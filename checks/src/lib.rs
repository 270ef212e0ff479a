//! The `lockwright` binary's library: CLI subcommands and the stress tools. The simulators
//! and replayers the loom/shuttle suites use live in the dev-only `lockwright-testkit` crate;
//! the docs generator in the unpublished `lockwright-report` (`checks/report/`).

pub mod cli;
pub mod peers;
pub mod stress;
pub mod zkstress;
