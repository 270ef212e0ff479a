//! `lockwright verify-server`, `stress`, `stress-run` (not implemented yet).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct VerifyServerArgs {}
#[derive(clap::Args, Debug)]
pub struct StressArgs {}
#[derive(clap::Args, Debug)]
pub struct StressRunArgs {}

/// # Errors
/// Always: not landed yet.
pub fn run_verify_server(_a: VerifyServerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lockwright verify-server` is not implemented yet")
}
/// # Errors
/// Always: not landed yet.
pub fn run_stress(_a: StressArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lockwright stress` is not implemented yet")
}
/// # Errors
/// Always: not landed yet.
pub fn run_stress_run(_a: StressRunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lockwright stress-run` is not implemented yet")
}
