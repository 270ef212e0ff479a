//! `lockwright check` (not implemented yet).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {}

/// # Errors
/// Always: this subcommand has not landed yet.
pub fn run(_args: CheckArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lockwright check` is not implemented yet")
}
