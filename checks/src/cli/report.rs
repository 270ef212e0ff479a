//! `lockwright report` (not implemented yet).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {}

/// # Errors
/// Always: this subcommand has not landed yet.
pub fn run(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lockwright report` is not implemented yet")
}
