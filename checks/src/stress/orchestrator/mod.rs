//! `lockwright stress-run`: a verify server in this process, N client processes on loopback,
//! crash injection, and the summary.
//!
//! Crash injection: kills arrive as a Poisson process of `kill_rate` per second. Each kill
//! picks, three times in four, a client that holds the lock right now (as the server sees it),
//! else any running client; announces the kill to the server, SIGKILLs the process, reaps it,
//! and starts a replacement under the same id with the tries the dead one had not reported as
//! done. The server treats the dead holder's EOF as the OS releasing its lock (see
//! [`super::server`]).
//!
//! [`run`] makes the lock directory; the rest of the run is phases of a `Run`: bind the verify
//! server and start the clients, the loop (reap, progress, kills), stop the clients and the
//! server, and the summary ([`RunSummary`], in `super::summary`). `fleet` holds the client
//! processes: starting them, what they report, the kills and replacements.

mod fleet;

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use rand::rngs::ThreadRng;
use serde::Serialize;

use super::client::{FactoryKind, OsLockArg};
use super::server::{OnViolation, ServerConfig, ServerHandle, ServerReport, VerifyServer};
use fleet::{Children, Spawner, Totals};

pub use super::summary::{print_summary, Percentiles, RunSummary};

/// Which program the client processes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientImpl {
    /// `lockwright stress` (this binary).
    Lockwright,
    /// Lucene 4.10.4's `org.apache.lucene.store.LockStressTest` on `java` (no kills: its
    /// progress cannot be resumed).
    Lucene,
}

/// Lucene's class for a factory kind (Lucene 4.10 names).
pub fn lucene_factory_class(kind: FactoryKind) -> &'static str {
    match kind {
        FactoryKind::Native => "org.apache.lucene.store.NativeFSLockFactory",
        FactoryKind::Simple => "org.apache.lucene.store.SimpleFSLockFactory",
        FactoryKind::SingleInstance => "org.apache.lucene.store.SingleInstanceLockFactory",
        FactoryKind::NoLock => "org.apache.lucene.store.NoLockFactory",
    }
}

/// Where Debian's `liblucene4.10-java` puts the jar; `LOCKWRIGHT_LUCENE_JAR` overrides it.
pub fn lucene_jar() -> PathBuf {
    std::env::var_os("LOCKWRIGHT_LUCENE_JAR").map_or_else(
        || PathBuf::from("/usr/share/java/lucene-core-4.10.4.jar"),
        PathBuf::from,
    )
}

/// One `stress-run`.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub clients: usize,
    /// Tries per client slot (a killed client's replacement does the rest).
    pub count: u64,
    pub factory: FactoryKind,
    pub os_lock: OsLockArg,
    pub sleep: Duration,
    /// SIGKILLs per second (0: none).
    pub kill_rate: f64,
    /// The lock directory; `None`: a fresh temporary directory, removed afterwards.
    pub dir: Option<PathBuf>,
    pub lock_name: String,
    pub max_duration: Duration,
    pub crash_grace: Duration,
    pub client_impl: ClientImpl,
    /// The `lockwright` binary for the clients.
    pub exe: PathBuf,
    /// Print a progress line to stderr every second.
    pub progress: bool,
}

/// Runs the server and the clients to the end and summarizes.
///
/// # Errors
/// Bad configuration, failures to bind or to start a client process. Violations, client
/// failures and timeouts are not errors: they are in the summary.
pub fn run(cfg: &RunConfig) -> anyhow::Result<RunSummary> {
    if cfg.clients == 0 || cfg.clients > 256 {
        bail!("--clients must be 1..=256 (client ids are one byte)");
    }
    if cfg.client_impl == ClientImpl::Lucene && cfg.kill_rate > 0.0 {
        bail!("--kill-rate needs lockwright clients: a killed Lucene client's progress cannot be resumed");
    }
    if !(cfg.kill_rate >= 0.0 && cfg.kill_rate.is_finite()) {
        bail!("--kill-rate must be a finite number >= 0");
    }
    if cfg.client_impl == ClientImpl::Lucene && !lucene_jar().is_file() {
        bail!(
            "{} not found: install Debian's liblucene4.10-java (or set LOCKWRIGHT_LUCENE_JAR)",
            lucene_jar().display()
        );
    }
    let (dir, temp) = match &cfg.dir {
        Some(d) => (d.clone(), false),
        None => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let d = std::env::temp_dir()
                .join(format!("lockwright-stress-{}-{nanos}", std::process::id()));
            (d, true)
        }
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let result = run_in(cfg, &dir);
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

/// Runs the server and the clients in `dir` to the end and summarizes.
fn run_in(cfg: &RunConfig, dir: &Path) -> anyhow::Result<RunSummary> {
    let server = bind_verify_server(cfg)?;
    let addr = server.local_addr()?;
    let handle = server.handle();
    let start = Instant::now();
    let deadline = start + cfg.max_duration;
    // The server's own deadline is a backstop; the loop below shuts it down first.
    let server_thread = thread::spawn(move || server.run(deadline + Duration::from_secs(5), false));
    let spawner = Spawner {
        cfg,
        addr,
        dir: dir.to_path_buf(),
    };
    let slots = spawner.spawn_all()?;
    // The clients run: from here a failure is a failed run (exit 1), not a set-up error.
    let mut run = Run::new(cfg, &handle, &spawner, slots, start, deadline);
    run.kill_loop().map_err(crate::cli::failed)?;
    let tally = run.stop_clients();
    handle.shutdown();
    let report: ServerReport = server_thread
        .join()
        .map_err(|_| anyhow::anyhow!("verify server thread panicked"))
        .and_then(|r| r.context("verify server"))
        .map_err(crate::cli::failed)?;
    Ok(tally.into_summary(cfg, dir, start, report))
}

/// The verify server in counting mode, kills announced.
fn bind_verify_server(cfg: &RunConfig) -> anyhow::Result<VerifyServer> {
    let server_cfg = ServerConfig {
        clients: cfg.clients,
        on_violation: OnViolation::Count,
        crash_grace: cfg.crash_grace,
        kills_announced: true,
        log: false,
    };
    VerifyServer::bind((Ipv4Addr::LOCALHOST, 0).into(), server_cfg)
        .context("cannot bind the verify server")
}

/// A run between starting the clients and the summary.
struct Run<'a> {
    cfg: &'a RunConfig,
    handle: &'a ServerHandle,
    spawner: &'a Spawner<'a>,
    start: Instant,
    deadline: Instant,
    slots: Children,
    /// Picks the kill times and the victims.
    rng: ThreadRng,
    next_kill: Option<Instant>,
    next_progress: Instant,
    tally: Tally,
}

/// What a run saw, for the summary.
#[derive(Default)]
struct Tally {
    totals: Totals,
    /// Clients that exited with an error without having been killed.
    failures: Vec<String>,
    kills: u64,
    /// Kills aimed at the holder.
    aimed: u64,
    replacements: u64,
    timed_out: bool,
}

impl<'a> Run<'a> {
    fn new(
        cfg: &'a RunConfig,
        handle: &'a ServerHandle,
        spawner: &'a Spawner<'a>,
        slots: Children,
        start: Instant,
        deadline: Instant,
    ) -> Self {
        let mut rng = rand::rng();
        let next_kill = fleet::next_kill_at(&mut rng, cfg.kill_rate, Instant::now());
        Run {
            cfg,
            handle,
            spawner,
            start,
            deadline,
            slots,
            rng,
            next_kill,
            next_progress: Instant::now() + Duration::from_secs(1),
            tally: Tally::default(),
        }
    }

    /// Reaps, reports progress and kills until every client has ended or the deadline.
    ///
    /// # Errors
    /// A client that cannot be waited for, or a replacement that cannot be started.
    fn kill_loop(&mut self) -> anyhow::Result<()> {
        loop {
            self.reap()?;
            let running = self.slots.0.iter().filter(|s| s.proc.is_some()).count();
            if running == 0 {
                break;
            }
            let now = Instant::now();
            if now >= self.deadline {
                self.tally.timed_out = true;
                break;
            }
            self.progress_line(now, running);
            self.kill_if_due(now)?;
            thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    }

    /// With `progress`, one line on stderr per second.
    fn progress_line(&mut self, now: Instant, running: usize) {
        if self.cfg.progress && now >= self.next_progress {
            let s = self.handle.stats();
            eprintln!(
                "[{:6.1}s] acquisitions {:>8}  violations {}  kills {}  crash releases {}  running {running}/{}",
                self.start.elapsed().as_secs_f64(),
                s.acquisitions,
                s.violations,
                self.tally.kills,
                s.crash_releases,
                self.cfg.clients
            );
            self.next_progress = now + Duration::from_secs(1);
        }
    }

    /// Kills whatever is left (after a timeout); what the run saw is left.
    fn stop_clients(self) -> Tally {
        drop(self.slots);
        self.tally
    }
}

impl Tally {
    /// The summary, from what the run saw and the verify server's report.
    fn into_summary(
        self,
        cfg: &RunConfig,
        dir: &Path,
        start: Instant,
        report: ServerReport,
    ) -> RunSummary {
        let st = report.stats;
        let active = st.active_secs;
        #[allow(clippy::cast_precision_loss)]
        let per_sec = if active > 0.0 {
            st.acquisitions as f64 / active
        } else {
            0.0
        };
        RunSummary {
            client_impl: cfg.client_impl,
            clients: cfg.clients,
            count: cfg.count,
            factory: cfg.factory,
            os_lock: cfg.os_lock,
            sleep_ms: u64::try_from(cfg.sleep.as_millis()).unwrap_or(u64::MAX),
            kill_rate: cfg.kill_rate,
            lock_path: dir.join(&cfg.lock_name),
            acquisitions: st.acquisitions,
            contended: self.totals.contended,
            tries: self.totals.tries,
            violations: st.violations,
            double_obtains: self.totals.double_obtains,
            kills: self.kills,
            kills_aimed_at_holder: self.aimed,
            replacements: self.replacements,
            crash_releases: st.crash_releases,
            crash_handoffs: st.crash_handoffs,
            stale_obtains: st.stale_obtains,
            late_joins: st.late_joins,
            client_failures: self.failures,
            wall_secs: start.elapsed().as_secs_f64(),
            active_secs: active,
            acquisitions_per_sec: per_sec,
            obtain_latency_us: Percentiles::of(self.totals.latencies),
            violation_messages: report.violation_messages,
            timed_out: self.timed_out || report.timed_out,
        }
    }
}
