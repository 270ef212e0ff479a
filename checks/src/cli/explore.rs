//! `lockwright explore` (not implemented yet).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ExploreArgs {}

/// # Errors
/// Always: this subcommand has not landed yet.
pub fn run(_args: ExploreArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lockwright explore` is not implemented yet")
}
