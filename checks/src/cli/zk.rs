//! `lockwright zk-stress` and `lockwright zk-bench`: the ZooKeeper mutex against a verify
//! server and side by side with Curator and kazoo. See `docs/zookeeper-client.md`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use lockwright::file::verifying::{VerifierConnection, OBTAINED, RELEASING};
use lockwright::zk::{block_on, ZkClient, ZkMutex};

use crate::peers::bench::{self, BenchConfig};

/// One stress client on the ZooKeeper mutex, speaking Lucene's LockVerifyServer protocol (as
/// `lockwright stress` does), so `lockwright verify-server` (or Lucene's) counts overlaps with
/// any other client on the same lock: Curator, kazoo, other lockwright processes.
#[derive(clap::Args, Debug)]
pub struct ZkStressArgs {
    /// The ZooKeeper connect string, HOST:PORT[,HOST:PORT...].
    #[arg(long)]
    pub connect: String,
    /// The lock directory (`/locks/NAME`).
    #[arg(long)]
    pub path: String,
    /// This client's id, 0..=255 (unique per process).
    #[arg(long)]
    pub id: u8,
    /// The verify server, HOST:PORT.
    #[arg(long)]
    pub server: String,
    /// Acquisitions.
    #[arg(long)]
    pub count: u64,
    /// Hold time per acquisition, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub sleep_ms: u64,
    /// The session timeout to ask for.
    #[arg(long, default_value_t = 4000)]
    pub session_timeout_ms: u64,
}

/// `lockwright zk-stress`: exit 0 after `--count` acquisitions; errors (exit 2) on a lock error or
/// the verify server hanging up (it does on a violation).
///
/// # Errors
/// Connection, lock and protocol failures.
pub fn run_zk_stress(a: ZkStressArgs) -> anyhow::Result<ExitCode> {
    block_on(async {
        let zk = ZkClient::builder()
            .session_timeout(Duration::from_millis(a.session_timeout_ms))
            .connect(&a.connect)
            .await?;
        let mutex = ZkMutex::new(zk, &a.path)?;
        let conn = VerifierConnection::connect(a.server.as_str(), a.id, Duration::from_secs(5))
            .with_context(|| format!("cannot register with verify server {}", a.server))?;
        let start = Instant::now();
        for i in 0..a.count {
            let guard = mutex.acquire().await?;
            if i == 0 {
                println!(
                    "lockwright {} acquired {} (token {})",
                    a.id,
                    guard.node(),
                    guard.token()
                );
            }
            conn.verify(OBTAINED)?;
            if a.sleep_ms > 0 {
                std::thread::sleep(Duration::from_millis(a.sleep_ms));
            }
            conn.verify(RELEASING)?;
            guard.release().await?;
        }
        println!(
            "lockwright {} done {} in {:.3}s",
            a.id,
            a.count,
            start.elapsed().as_secs_f64()
        );
        Ok(ExitCode::SUCCESS)
    })
}

/// lockwright, Curator 5.4 and kazoo 2.8 side by side on one throwaway ZooKeeper server:
/// uncontended latency and requests, hand-off latency with 2/4/8 contenders.
#[derive(clap::Args, Debug)]
pub struct ZkBenchArgs {
    /// Timed uncontended acquire+release iterations per client.
    #[arg(long, default_value_t = 2000)]
    pub iterations: usize,
    /// Warm-up iterations before them (warms the JVM's JIT).
    #[arg(long, default_value_t = 400)]
    pub warmup: usize,
    /// Contender counts for the hand-off runs.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8")]
    pub contenders: Vec<usize>,
    /// Acquisitions per contender in a hand-off run.
    #[arg(long, default_value_t = 200)]
    pub rounds: usize,
    /// Hold time per acquisition in a hand-off run, in milliseconds (the other contenders are
    /// parked on their watches by then, so each release should wake exactly one).
    #[arg(long, default_value_t = 2)]
    pub hold_ms: u64,
    /// Leave Curator out.
    #[arg(long)]
    pub no_curator: bool,
    /// Leave kazoo out.
    #[arg(long)]
    pub no_kazoo: bool,
    /// Print JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
}

/// `lockwright zk-bench`: prints the tables of `docs/performance.md`.
///
/// # Errors
/// Missing packages (named), failing peers.
pub fn run_zk_bench(a: ZkBenchArgs) -> anyhow::Result<ExitCode> {
    let report = bench::run(&BenchConfig {
        iterations: a.iterations,
        warmup: a.warmup,
        contenders: a.contenders,
        rounds: a.rounds,
        hold: Duration::from_millis(a.hold_ms),
        curator: !a.no_curator,
        kazoo: !a.no_kazoo,
        peers_dir: None,
        progress: true,
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", bench::render_markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}
