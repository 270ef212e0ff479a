//! `lockwright`: model-check, explore, stress and report on the writer-lock protocol family.

use clap::{Parser, Subcommand};
use lockwright_checks::cli;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lockwright",
    version,
    about = "Provable writer locks: model checks, stress tests and reports",
    after_help = "Exit status, every subcommand: 0 as expected; 1 a violation or a failed run; \
                  2 bad arguments or an error before the run started."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Model-check a protocol variant exhaustively and print every property's verdict.
    Check(cli::check::CheckArgs),
    /// Serve Stateright's Explorer for a scenario on loopback.
    Explore(cli::explore::ExploreArgs),
    /// Run a Lucene-compatible LockVerifyServer.
    VerifyServer(cli::stress::VerifyServerArgs),
    /// Run one Lucene-compatible LockStressTest client.
    Stress(cli::stress::StressArgs),
    /// Start a verify server and N stress clients (with crash injection) and summarize.
    StressRun(cli::stress::StressRunArgs),
    /// Moved to the repository's `lockwright-report` (says how to run it).
    #[command(hide = true)]
    Report(cli::report::ReportArgs),
    /// One ZooKeeper-mutex stress client (Lucene's LockStressTest protocol, against a verify server).
    ZkStress(cli::zk::ZkStressArgs),
    /// Benchmark the ZooKeeper mutex against Curator and kazoo on one real server.
    ZkBench(cli::zk::ZkBenchArgs),
    /// The ZooKeeper mutex under faults (kills, pauses, cut and stalled connections, server
    /// restarts) on a real server, with a fenced resource; fails on a stale write accepted.
    ZkStressRun(cli::zk::ZkStressRunArgs),
    /// One zk-stress-run client process (started by zk-stress-run).
    #[command(hide = true)]
    ZkStressClient(cli::zk::ZkStressClientArgs),
    /// The trace check of a recorded zk-stress-run, again (LOCKWRIGHT_TRACE_COPY,
    /// LOCKWRIGHT_TXNLOG_COPY).
    #[command(hide = true)]
    ZkTraceCheck(cli::zk::ZkTraceCheckArgs),
    /// The Redis lock under server stalls (DEBUG SLEEP past the TTL) on a real redis-server,
    /// judged by a counter the holders increment; fails on a lost increment.
    RedisStressRun(cli::redis::RedisStressRunArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(a) => cli::check::run(a),
        Command::Explore(a) => cli::explore::run(a),
        Command::VerifyServer(a) => cli::stress::run_verify_server(a),
        Command::Stress(a) => cli::stress::run_stress(a),
        Command::StressRun(a) => cli::stress::run_stress_run(a),
        Command::Report(a) => cli::report::run(a),
        Command::ZkStress(a) => cli::zk::run_zk_stress(a),
        Command::ZkBench(a) => cli::zk::run_zk_bench(a),
        Command::ZkStressRun(a) => cli::zk::run_zk_stress_run(a),
        Command::ZkStressClient(a) => cli::zk::run_zk_stress_client(a),
        Command::ZkTraceCheck(a) => cli::zk::run_zk_trace_check(a),
        Command::RedisStressRun(a) => cli::redis::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lockwright: error: {e:#}");
            for advice in cli::advice_lines(&e) {
                eprintln!("lockwright: what to do: {advice}");
            }
            cli::error_status(&e)
        }
    }
}
