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
    /// Print the result as one JSON object on stdout instead of the progress lines, also when
    /// the run fails.
    #[arg(long)]
    pub json: bool,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `lockwright zk-stress`: exit 0 after `--count` acquisitions; a failed run (exit 1) on a
/// connection or lock error or the verify server hanging up (it does on a violation).
///
/// # Errors
/// Connection, lock and protocol failures (a failed run); a lock path ZooKeeper cannot take
/// (bad arguments).
pub fn run_zk_stress(a: ZkStressArgs) -> anyhow::Result<ExitCode> {
    if !a.quiet {
        eprintln!(
            "lockwright zk-stress: client {}, {} acquisitions of {} on {} against {}",
            a.id, a.count, a.path, a.connect, a.server
        );
    }
    let (json, id) = (a.json, a.id);
    let result = zk_stress(a);
    if json {
        let out = match &result {
            Ok(done) => serde_json::json!({
                "command": "zk-stress",
                "passed": true,
                "client": id,
                "acquisitions": done.acquisitions,
                "secs": done.secs,
            }),
            Err(e) => serde_json::json!({
                "command": "zk-stress",
                "passed": false,
                "client": id,
                "error": format!("{e:#}"),
            }),
        };
        println!("{out}");
    }
    match result {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) if e.downcast_ref::<BadPath>().is_some() => Err(e),
        Err(e) => Err(super::failed(e)),
    }
}

/// What a finished `zk-stress` run did.
struct ZkStressDone {
    acquisitions: u64,
    secs: f64,
}

/// The context of a `--path` the mutex refuses: bad arguments (exit 2), not a failed run.
#[derive(Debug)]
struct BadPath(String);

impl std::fmt::Display for BadPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--path {}", self.0)
    }
}

fn zk_stress(a: ZkStressArgs) -> anyhow::Result<ZkStressDone> {
    block_on(async {
        let zk = ZkClient::builder()
            .session_timeout(Duration::from_millis(a.session_timeout_ms))
            .connect(&a.connect)
            .await?;
        let mutex = ZkMutex::new(zk, &a.path).context(BadPath(a.path.clone()))?;
        let conn = VerifierConnection::connect(a.server.as_str(), a.id, Duration::from_secs(5))
            .with_context(|| format!("cannot register with verify server {}", a.server))?;
        let start = Instant::now();
        for i in 0..a.count {
            let guard = mutex.acquire().await?;
            if i == 0 && !a.json {
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
        let secs = start.elapsed().as_secs_f64();
        if !a.json {
            println!("lockwright {} done {} in {secs:.3}s", a.id, a.count);
        }
        Ok(ZkStressDone {
            acquisitions: a.count,
            secs,
        })
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
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
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
        progress: !a.quiet,
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", bench::render_markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// `lockwright zk-stress-run`: the ZooKeeper mutex under faults on a real server. See
/// `docs/zookeeper-stress.md`.
#[derive(clap::Args, Debug)]
pub struct ZkStressRunArgs {
    /// lockwright client processes.
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
    /// Curator 5.4 client processes besides them (Debian's libcurator-*-java and a JDK).
    #[arg(long, default_value_t = 0)]
    pub curator: usize,
    /// Stop after this many acquisitions (once every fault kind has happened --min-each times).
    #[arg(long, default_value_t = 1000)]
    pub acquisitions: u64,
    /// Hold time between a holder's two fenced writes, in milliseconds.
    #[arg(long, default_value_t = 2)]
    pub hold_ms: u64,
    /// The session timeout the clients ask for (a pause lasts twice this plus a second).
    #[arg(long, default_value_t = 2000)]
    pub session_timeout_ms: u64,
    /// The faults to inject, as `lockwright check --faults` spells them: `KIND[=N],...` or
    /// `none`, KIND one of kill, pause, cut, stall, restart (one server) or leader-kill,
    /// server-pause, partition, lag (`--servers 3`); N is how many of that kind must happen
    /// before the run may end (the same N for every kind; default --min-each) [default: every
    /// kind for the servers given; every kind but restart with --connect].
    #[arg(long, value_name = "KIND[=N],...|none")]
    pub faults: Option<String>,
    /// No faults at all (the old spelling of `--faults none`).
    #[arg(long, hide = true, conflicts_with = "faults")]
    pub no_faults: bool,
    /// Mean gap between faults, in milliseconds.
    #[arg(long, default_value_t = 1500)]
    pub fault_every_ms: u64,
    /// Every fault kind at least this many times before the run may end (1 unless
    /// `--faults` gives a count).
    #[arg(long)]
    pub min_each: Option<u64>,
    /// The seed of the fault schedule (default: from the clock; printed in the report).
    #[arg(long)]
    pub seed: Option<u64>,
    /// `guarded` (a counter znode written with guarded_write, the lost-update check),
    /// `checked` (the token-checking ledger alone) or `unchecked` (the counter written without
    /// the lock check and a ledger that accepts everything: shows what the fences stop).
    #[arg(long, value_enum, default_value = "guarded")]
    pub resource: crate::zkstress::ledger::ResourceMode,
    /// Use this running ZooKeeper (HOST:PORT, `dump` whitelisted) instead of a throwaway one
    /// (no `restart` fault then).
    #[arg(long)]
    pub connect: Option<String>,
    /// Throwaway ZooKeeper servers: 1, or an ensemble of 3 (5, 7) on loopback, the clients
    /// spread over them, with the faults leader-kill, server-pause, partition and lag instead
    /// of restart.
    #[arg(long, default_value_t = 1)]
    pub servers: usize,
    /// The lock directory.
    #[arg(long, default_value = "/lockwright/zk-stress-run")]
    pub path: String,
    /// Give up after this many seconds (exit 1: the run did not finish).
    #[arg(long, default_value_t = 900)]
    pub max_secs: u64,
    /// The lockwright clients run this deliberately broken recipe variant (the model's name:
    /// no-protection, release-forgets, adopt-old-session, delete-by-name-retry,
    /// search-without-sync, text-order, unfenced); their trace is still judged by the correct
    /// model, so the run must fail. Needs a binary built with `--features client-variants`.
    #[arg(long)]
    pub client_variant: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--faults` of `zk-stress-run`: the kinds, and the count every kind must reach if one was
/// given.
///
/// # Errors
/// An unknown kind, a count that is not a number, or different counts.
fn parse_stress_faults(
    text: &str,
) -> anyhow::Result<(Vec<crate::zkstress::orchestrator::FaultKind>, Option<u64>)> {
    use crate::zkstress::orchestrator::FaultKind;
    if text == "none" {
        return Ok((Vec::new(), None));
    }
    let mut kinds = Vec::new();
    let mut count = None;
    for item in text.split(',') {
        let (name, n) = match item.split_once('=') {
            Some((name, n)) => {
                let n: u64 = n.parse().map_err(|_| {
                    anyhow::anyhow!("--faults {text}: `{item}`: the count must be a number")
                })?;
                (name, Some(n))
            }
            None => (item, None),
        };
        let every = FaultKind::ALL.into_iter().chain(FaultKind::ENSEMBLE);
        let kind = every.clone().find(|k| k.name() == name).ok_or_else(|| {
            let mut names: Vec<&str> = every.map(FaultKind::name).collect();
            names.dedup();
            names.sort_unstable();
            names.dedup();
            anyhow::anyhow!(
                "--faults {text}: unknown fault `{name}` (one of: {}, or `none`)",
                names.join(", ")
            )
        })?;
        match (count, n) {
            (Some(c), Some(n)) if c != n => anyhow::bail!(
                "--faults {text}: give every kind the same count (the minimum each must reach \
                 before the run may end)"
            ),
            (_, Some(n)) => count = Some(n),
            _ => {}
        }
        if n == Some(0) {
            continue; // `KIND=0`: not injected, as in `lockwright check`
        }
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Ok((kinds, count))
}

/// `lockwright zk-stress-run`: exit 0 if every check passed, 1 if one failed or the run timed
/// out.
///
/// # Errors
/// Bad arguments; missing packages (named), a server or client that cannot start.
pub fn run_zk_stress_run(a: ZkStressRunArgs) -> anyhow::Result<ExitCode> {
    use crate::zkstress::orchestrator::{self, FaultKind, RunConfig};
    let (faults, count) = match (a.no_faults, &a.faults) {
        (true, _) => (Vec::new(), None),
        (false, Some(f)) => parse_stress_faults(f)?,
        // An ensemble gets its own server faults; a server we did not start cannot be
        // restarted.
        (false, None) if a.servers > 1 => (FaultKind::ENSEMBLE.to_vec(), None),
        (false, None) => (
            FaultKind::ALL
                .into_iter()
                .filter(|k| a.connect.is_none() || *k != FaultKind::Restart)
                .collect(),
            None,
        ),
    };
    let min_each = match (count, a.min_each) {
        (Some(c), Some(m)) if c != m => {
            anyhow::bail!("--faults gives {c} of each kind but --min-each {m}")
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => 1,
    };
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let cfg = RunConfig {
        clients: a.clients,
        curator_clients: a.curator,
        acquisitions: a.acquisitions,
        hold: Duration::from_millis(a.hold_ms),
        session_timeout: Duration::from_millis(a.session_timeout_ms),
        faults,
        fault_every: Duration::from_millis(a.fault_every_ms),
        min_each_fault: min_each,
        seed,
        resource: a.resource,
        connect: a.connect,
        servers: a.servers,
        lock_path: a.path,
        exe: std::env::current_exe().context("cannot find this binary")?,
        peers_dir: None,
        max_duration: Duration::from_secs(a.max_secs),
        progress: !a.quiet,
        client_variant: a.client_variant,
        trace_copy: std::env::var_os("LOCKWRIGHT_TRACE_COPY").map(std::path::PathBuf::from),
    };
    let summary = orchestrator::run(&cfg)?;
    orchestrator::print_summary(&summary, a.json, &mut std::io::stdout())?;
    Ok(if summary.timed_out {
        super::timed_out("zk-stress-run", a.max_secs)
    } else if summary.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One `zk-stress-run` client (started by the orchestrator).
#[derive(clap::Args, Debug)]
pub struct ZkStressClientArgs {
    #[arg(long)]
    pub connect: String,
    #[arg(long)]
    pub path: String,
    #[arg(long)]
    pub id: u8,
    /// The verify server.
    #[arg(long)]
    pub server: String,
    /// The fenced resource.
    #[arg(long)]
    pub ledger: String,
    #[arg(long, default_value_t = 2)]
    pub hold_ms: u64,
    #[arg(long, default_value_t = 2000)]
    pub session_timeout_ms: u64,
    #[arg(long, default_value_t = u64::MAX)]
    pub count: u64,
    /// How the counter is written (`guarded`, `unchecked`; `checked`: no counter).
    #[arg(long, value_enum, default_value = "checked")]
    pub resource: crate::zkstress::ledger::ResourceMode,
    /// The counter znode.
    #[arg(long, default_value = "")]
    pub counter: String,
    /// Record every request and answer to this file (one JSON line each).
    #[arg(long)]
    pub trace: Option<std::path::PathBuf>,
    /// Run a deliberately broken recipe variant (test builds: `client-variants` feature).
    #[arg(long)]
    pub client_variant: Option<String>,
}

/// `lockwright zk-stress-client`.
///
/// # Errors
/// See [`crate::zkstress::client::run`].
pub fn run_zk_stress_client(a: ZkStressClientArgs) -> anyhow::Result<ExitCode> {
    crate::zkstress::client::run(&crate::zkstress::client::ClientConfig {
        connect: a.connect,
        path: a.path,
        id: a.id,
        server: a.server,
        ledger: a.ledger,
        hold: Duration::from_millis(a.hold_ms),
        session_timeout: Duration::from_millis(a.session_timeout_ms),
        count: a.count,
        resource: a.resource,
        counter: a.counter,
        trace: a.trace,
        variant: a.client_variant,
    })
}

/// `lockwright zk-trace-check` (hidden): a recorded run's trace check, made again from the
/// copies a `zk-stress-run` leaves with `LOCKWRIGHT_TRACE_COPY=DIR` (the clients' traces and
/// each server's transaction log, `DIR/txnlog-N.txt`). Guarded writes only.
#[derive(clap::Args, Debug)]
pub struct ZkTraceCheckArgs {
    /// The trace files' directory.
    #[arg(long)]
    pub traces: std::path::PathBuf,
    /// One transaction log as `TxnLogToolkit` printed it [default: the members' copies,
    /// TRACES/txnlog-N.txt].
    #[arg(long)]
    pub txnlog: Option<std::path::PathBuf>,
    /// lockwright clients in the run.
    #[arg(long, default_value_t = 4)]
    pub clients: u8,
    #[arg(long, default_value = "/lockwright/zk-stress-run")]
    pub path: String,
    /// The counter's value before the clients started.
    #[arg(long, default_value_t = 0)]
    pub counter_initial: u64,
    /// Print the merged steps at these log points (`FROM-TO`) on stderr.
    #[arg(long)]
    pub show: Option<String>,
}

/// See [`ZkTraceCheckArgs`]. Exit 1 when a step is unmatched.
///
/// # Errors
/// Files that cannot be read.
pub fn run_zk_trace_check(a: ZkTraceCheckArgs) -> anyhow::Result<ExitCode> {
    use crate::zkstress::{trace, txnlog};
    use lockwright_model::zk::WriteMode;
    // The members' logs as the run copied them (`txnlog-N.txt`), or the one file given.
    let files: Vec<std::path::PathBuf> = match a.txnlog {
        Some(f) => vec![f],
        None => {
            let mut v: Vec<_> = std::fs::read_dir(&a.traces)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("txnlog-"))
                })
                .collect();
            v.sort();
            v
        }
    };
    let mut members = Vec::new();
    for f in &files {
        let text = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
        members.push(txnlog::parse(&text));
    }
    let txns = txnlog::committed(&members);
    let procs = trace::read_dir(&a.traces)?;
    let model = trace::model_for(a.clients, WriteMode::Guarded);
    let counter = format!("{}.counter", a.path.trim_end_matches('/'));
    if let Some((from, to)) = a.show.as_deref().and_then(|r| r.split_once('-')) {
        let (from, to): (usize, usize) = (from.parse()?, to.parse()?);
        let merged = trace::merge(&procs, &txns, &a.path, &counter, Some(a.counter_initial));
        for p in merged
            .steps
            .iter()
            .filter(|p| (from..=to).contains(&p.key.0))
        {
            eprintln!("{:?} c{} {:?}  {}", p.key, p.client, p.kind, p.what);
        }
    }
    let v = trace::check(
        &procs,
        &txns,
        &a.path,
        &counter,
        Some(a.counter_initial),
        model,
    );
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(
        if v.trace_unmatched == 0 && v.trace_grant_violations.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}
