//! One module per subcommand of the `lockwright` binary.
//!
//! Every subcommand speaks one dialect: the same flag for the same concept (`--os`,
//! `--faults`, `--quiet`/`-q`, and `--json` on every subcommand that reports a result, as one
//! JSON object on the last line of stdout), and one exit-status rule:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | the run went as expected (every verdict as expected; no violation; every check passed) |
//! | 1 | a violation, or a run that failed (a verdict that differs, an overlap the verify server saw, a peer or server that failed mid-run, a timeout) |
//! | 2 | bad arguments, or an error before the run could start |
//!
//! A subcommand returns `Ok(code)` for 0 and 1; an error is exit 2 unless it is wrapped in
//! [`RunFailed`] (see [`failed`]), which `main` reports as exit 1.

pub mod check;
pub mod explore;
pub mod redis;
pub mod report;
pub mod scenario;
pub mod stress;
pub mod zk;

use std::fmt;
use std::process::ExitCode;

/// The context of an error that happened while the run was under way: exit 1, not 2.
#[derive(Debug, Clone, Copy)]
pub struct RunFailed;

impl fmt::Display for RunFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the run failed")
    }
}

/// Marks `e` as a failed run (exit 1).
pub fn failed(e: anyhow::Error) -> anyhow::Error {
    e.context(RunFailed)
}

/// The exit status for an error a subcommand returned: 1 for a [`RunFailed`] one, else 2.
pub fn error_status(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<RunFailed>().is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::from(2)
    }
}

/// What to do about `e`: the `advice()` of each lockwright error in its chain, once each, in
/// chain order. The message itself says what happened (`{e:#}` prints each cause once).
pub fn advice_lines(e: &anyhow::Error) -> Vec<&'static str> {
    let mut lines: Vec<&'static str> = Vec::new();
    for cause in e.chain() {
        let advice = if let Some(l) = cause.downcast_ref::<lockwright::file::LockError>() {
            l.advice()
        } else if let Some(z) = cause.downcast_ref::<lockwright::zk::ZkLockError>() {
            z.advice()
        } else if let Some(r) = cause.downcast_ref::<lockwright::redis::RedisLockError>() {
            r.advice()
        } else {
            None
        };
        if let Some(a) = advice.filter(|a| !lines.contains(a)) {
            lines.push(a);
        }
    }
    lines
}

/// Exit status 1 after printing why, for a run that hit its `--max-secs`.
pub fn timed_out(command: &str, max_secs: u64) -> ExitCode {
    eprintln!("lockwright {command}: stopped after --max-secs {max_secs}: the run failed");
    ExitCode::from(1)
}
