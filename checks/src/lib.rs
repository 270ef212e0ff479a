//! The `lockwright` binary's library: CLI subcommands, the stress tools and (with the
//! maintainers' `report` feature) the report generator. The simulators and replayers the
//! loom/shuttle suites use live in the dev-only `lockwright-testkit` crate.

pub mod cli;
pub mod peers;
#[cfg(feature = "report")]
pub mod report;
pub mod stress;
pub mod zkstress;
