//! `lockwright verify-server`, `stress`, `stress-run`: Lucene-compatible multi-process stress.
//! See `docs/stress.md`.

use crate::stress::client::{self, ClientConfig, FactoryKind, OsLockArg};
use crate::stress::orchestrator::{self, ClientImpl, RunConfig};
use crate::stress::server::{OnViolation, ServerConfig, VerifyServer};
use crate::stress::LUCENE_4_LOCK_NAME;
use anyhow::{bail, Context};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct VerifyServerArgs {
    /// Fire the starting gun once this many clients have connected.
    #[arg(long)]
    pub clients: usize,
    /// Address to bind (loopback only).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Count violations and keep going instead of stopping at the first one (Lucene stops).
    #[arg(long)]
    pub keep_going: bool,
    /// How long a conflict may wait for a possibly crashed holder's connection to drop.
    #[arg(long, default_value_t = 1000)]
    pub crash_grace_ms: u64,
    /// Stop after this many seconds, whatever happens (exit 1: the run did not finish).
    #[arg(long, default_value_t = 600)]
    pub max_secs: u64,
    /// After Lucene's "Listening on" line (which scripts read the port from), print the
    /// result as one JSON object on the last line of stdout instead of the counters line.
    #[arg(long)]
    pub json: bool,
    /// No progress line on stderr (Lucene's own lines on stdout stay).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(clap::Args, Debug)]
pub struct StressArgs {
    /// This client's id, 0..=255 (unique per process).
    #[arg(long)]
    pub id: u8,
    /// The verify server, HOST:PORT.
    #[arg(long)]
    pub server: String,
    #[arg(long, value_enum, default_value = "native")]
    pub factory: FactoryKind,
    /// The OS lock `native` takes (Lucene/Java takes POSIX locks: `ofd` and `posix` exclude
    /// them, `flock` does not). The same flag as `lockwright check --os`.
    #[arg(long = "os", alias = "os-lock", value_enum, default_value = "ofd")]
    pub os_lock: OsLockArg,
    /// The lock directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// The lock file name (Lucene 4.10.4's LockStressTest uses test-test.lock).
    #[arg(long, default_value = LUCENE_4_LOCK_NAME)]
    pub lock_name: String,
    /// Hold time, and pause between tries, in milliseconds (Lucene's sleepTimeMS).
    #[arg(long)]
    pub sleep_ms: u64,
    /// Number of tries.
    #[arg(long)]
    pub count: u64,
    /// Count a successful second obtain in this process instead of failing.
    #[arg(long, hide = true)]
    pub keep_going: bool,
    /// Machine-readable progress every N tries, for `stress-run`.
    #[arg(long, hide = true)]
    pub report_every: Option<u64>,
    /// Print the result as one JSON object on stdout (and no Lucene progress lines), also
    /// when the run fails.
    #[arg(long)]
    pub json: bool,
    /// No progress line on stderr (Lucene's own lines on stdout stay).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(clap::Args, Debug)]
pub struct StressRunArgs {
    /// Number of client processes (at any time).
    #[arg(long)]
    pub clients: usize,
    /// Tries per client slot (a killed client's replacement does the rest).
    #[arg(long)]
    pub count: u64,
    #[arg(long, value_enum, default_value = "native")]
    pub factory: FactoryKind,
    /// The OS lock `native` takes (as `lockwright check --os`).
    #[arg(long = "os", alias = "os-lock", value_enum, default_value = "ofd")]
    pub os_lock: OsLockArg,
    /// Hold time and pause between tries, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub sleep_ms: u64,
    /// SIGKILLs per second (Poisson); three in four aim at the current holder.
    #[arg(long, default_value_t = 0.0)]
    pub kill_rate: f64,
    /// Lock directory (default: a fresh temporary directory, removed afterwards).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    #[arg(long, default_value = LUCENE_4_LOCK_NAME)]
    pub lock_name: String,
    /// Client program: this binary, or Lucene 4.10.4's LockStressTest (needs `java` and
    /// liblucene4.10-java).
    #[arg(long, value_enum, default_value = "lockwright")]
    pub client: ClientImpl,
    /// How long a conflict may wait for a killed holder's connection to drop.
    #[arg(long, default_value_t = 1000)]
    pub crash_grace_ms: u64,
    /// Kill everything and report a timeout after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub max_secs: u64,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Exit 0 only if violations were found (for `no-lock` in CI).
    #[arg(long)]
    pub expect_violations: bool,
}

/// `lockwright verify-server`: exit 0 with no violation, 1 on a violation or a timeout.
///
/// # Errors
/// Non-loopback address, bind or accept failures.
pub fn run_verify_server(a: VerifyServerArgs) -> anyhow::Result<ExitCode> {
    if !a.bind.is_loopback() {
        bail!(
            "--bind {}: the verify server binds to loopback only",
            a.bind
        );
    }
    if a.clients == 0 {
        bail!("--clients must be at least 1");
    }
    let cfg = ServerConfig {
        clients: a.clients,
        on_violation: if a.keep_going {
            OnViolation::Count
        } else {
            OnViolation::Stop
        },
        crash_grace: Duration::from_millis(a.crash_grace_ms),
        kills_announced: false,
        log: true,
    };
    let server = VerifyServer::bind(SocketAddr::new(a.bind, 0), cfg)
        .context("cannot bind the verify server")?;
    if !a.quiet {
        eprintln!(
            "lockwright verify-server: waiting for {} client(s), at most {} s",
            a.clients, a.max_secs
        );
    }
    // Lucene's exact line ("Listening on /127.0.0.1:PORT..."), so scripts written for Lucene's
    // server find the port the same way.
    println!("Listening on /{}...", server.local_addr()?);
    std::io::stdout().flush()?;
    let report = server
        .run(Instant::now() + Duration::from_secs(a.max_secs), true)
        .map_err(|e| super::failed(e.into()))?;
    let s = &report.stats;
    let passed = !report.timed_out && s.violations == 0 && s.protocol_errors == 0;
    if a.json {
        let out = serde_json::json!({
            "command": "verify-server",
            "passed": passed,
            "timed_out": report.timed_out,
            "stats": s,
            "violation_messages": report.violation_messages,
        });
        println!("{out}");
    } else {
        print_counters(s);
    }
    if report.timed_out {
        return Ok(super::timed_out("verify-server", a.max_secs));
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The verify server's counters, one `key=value` line.
fn print_counters(s: &crate::stress::server::ServerStats) {
    println!(
        "acquisitions={} releases={} violations={} crash_releases={} crash_handoffs={} stale_obtains={} connections={} late_joins={}",
        s.acquisitions,
        s.releases,
        s.violations,
        s.crash_releases,
        s.crash_handoffs,
        s.stale_obtains,
        s.connections,
        s.late_joins
    );
}

/// `lockwright stress`: one client process. Exit 0 when every try ran; a failed run (exit 1)
/// on a double obtain, a lock error other than "held", or the server hanging up (Lucene's
/// server does that on a violation).
///
/// # Errors
/// See [`client::run_client`]; every one of them is a failed run.
pub fn run_stress(a: StressArgs) -> anyhow::Result<ExitCode> {
    let cfg = ClientConfig {
        id: a.id,
        server: a.server,
        factory: a.factory,
        os_lock: a.os_lock,
        dir: a.dir,
        lock_name: a.lock_name,
        sleep: Duration::from_millis(a.sleep_ms),
        count: a.count,
        keep_going: a.keep_going,
        report_every: a.report_every.filter(|n| *n > 0),
    };
    if !a.quiet {
        eprintln!(
            "lockwright stress: client {}, {} tries on {} against {}",
            cfg.id,
            cfg.count,
            cfg.dir.join(&cfg.lock_name).display(),
            cfg.server
        );
    }
    if a.json {
        // Lucene's progress lines would break the one object; the result replaces them.
        let result = client::run_client(&cfg, &mut std::io::sink());
        let out = match &result {
            Ok(r) => serde_json::json!({
                "command": "stress",
                "passed": r.double_obtains == 0,
                "client": cfg.id,
                "tries": r.tries,
                "acquired": r.acquired,
                "contended": r.contended,
                "double_obtains": r.double_obtains,
            }),
            Err(e) => serde_json::json!({
                "command": "stress",
                "passed": false,
                "client": cfg.id,
                "error": format!("{e:#}"),
            }),
        };
        println!("{out}");
        return match result {
            Ok(r) if r.double_obtains == 0 => Ok(ExitCode::SUCCESS),
            Ok(_) => Ok(ExitCode::from(1)),
            Err(e) => Err(super::failed(e)),
        };
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // Without --keep-going a double obtain is an error already; with it, it is in the report.
    client::run_client(&cfg, &mut out).map_err(super::failed)?;
    Ok(ExitCode::SUCCESS)
}

/// `lockwright stress-run`: exit 0 if the run met its expectation (no violations, or with
/// `--expect-violations` at least one), 1 otherwise, on a timeout, or on client failures.
///
/// # Errors
/// Bad arguments, failures to bind or to start clients.
pub fn run_stress_run(a: StressRunArgs) -> anyhow::Result<ExitCode> {
    let cfg = RunConfig {
        clients: a.clients,
        count: a.count,
        factory: a.factory,
        os_lock: a.os_lock,
        sleep: Duration::from_millis(a.sleep_ms),
        kill_rate: a.kill_rate,
        dir: a.dir,
        lock_name: a.lock_name,
        max_duration: Duration::from_secs(a.max_secs),
        crash_grace: Duration::from_millis(a.crash_grace_ms),
        client_impl: a.client,
        exe: std::env::current_exe().context("cannot find the lockwright binary")?,
        progress: !a.quiet,
    };
    let summary = orchestrator::run(&cfg)?;
    orchestrator::print_summary(&summary, a.json, &mut std::io::stdout().lock())?;
    if summary.timed_out {
        return Ok(super::timed_out("stress-run", a.max_secs));
    }
    if !summary.client_failures.is_empty() {
        eprintln!(
            "lockwright stress-run: {} client(s) failed: the run failed",
            summary.client_failures.len()
        );
        return Ok(ExitCode::from(1));
    }
    let ok = if a.expect_violations {
        summary.violations > 0
    } else {
        summary.violations == 0
    };
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
