//! One stress client (`lockwright stress`): Lucene's `LockStressTest` loop over a
//! [`VerifyingLockFactory`], as a separate OS process.
//!
//! Per try: obtain once without waiting; if obtained, one time in ten try a second obtain in
//! this same process — through the same factory or, half of the time, a fresh factory instance
//! on the same connection — which must fail ("Double Obtain" otherwise); hold for the sleep;
//! release; sleep again. Progress goes to stdout as Lucene's (`N% done.` every 500 tries), plus,
//! for the orchestrator, machine-readable lines (see [`PROGRESS_PREFIX`], [`RESULT_PREFIX`]).

use anyhow::{bail, Context};
use lockwright::file::verifying::{VerifierConnection, VerifyingLockFactory};
use lockwright::{
    LockFactory, NativeFsLockFactory, NoLockFactory, OsLockKind, SimpleFsLockFactory,
    SingleInstanceLockFactory,
};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Prefix of the progress line printed every `report_every` tries:
/// `lockwright-progress tries=T acquired=A contended=C double=D lat=US,US,...` (totals so far,
/// and the obtain latencies since the previous line, so a killed client loses few samples).
pub const PROGRESS_PREFIX: &str = "lockwright-progress";
/// Prefix of the final line: `lockwright-result {json of ClientReport}`.
pub const RESULT_PREFIX: &str = "lockwright-result";

/// Bounds each step of the verify-server connection: the connect, the wait for the starting
/// gun (all clients must have started; on a loaded 2-core machine that can take seconds) and
/// each echo (the server may first wait out its crash grace). A server that stops answering
/// fails the client after this long instead of hanging it while it holds the lock.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// Which lock factory a client wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FactoryKind {
    /// `NativeFsLockFactory` (held set + OS advisory lock).
    Native,
    /// `SimpleFsLockFactory` (create-exclusive lock file; a crash leaves it stale).
    Simple,
    /// `SingleInstanceLockFactory` (in-process only: never safe across processes).
    SingleInstance,
    /// `NoLockFactory` (always succeeds: must produce violations).
    NoLock,
}

impl FactoryKind {
    /// Whether the factory excludes other processes (`stress-run` expects 0 violations).
    pub fn is_cross_process(self) -> bool {
        matches!(self, FactoryKind::Native | FactoryKind::Simple)
    }

    pub fn name(self) -> &'static str {
        match self {
            FactoryKind::Native => "native",
            FactoryKind::Simple => "simple",
            FactoryKind::SingleInstance => "single-instance",
            FactoryKind::NoLock => "no-lock",
        }
    }
}

/// The OS advisory lock `native` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OsLockArg {
    /// `fcntl(F_OFD_SETLK)`: excludes Java/Lucene's POSIX locks.
    Ofd,
    /// `fcntl(F_SETLK)`, process-owned.
    Posix,
    /// `flock(2)`: does NOT exclude Java/Lucene's POSIX locks.
    Flock,
}

impl OsLockArg {
    pub fn kind(self) -> OsLockKind {
        match self {
            OsLockArg::Ofd => OsLockKind::Ofd,
            OsLockArg::Posix => OsLockKind::Posix,
            OsLockArg::Flock => OsLockKind::Flock,
        }
    }
}

/// A fresh factory instance of the given kind.
pub fn make_factory(kind: FactoryKind, os_lock: OsLockArg) -> Box<dyn LockFactory> {
    match kind {
        FactoryKind::Native => Box::new(NativeFsLockFactory::new(os_lock.kind())),
        FactoryKind::Simple => Box::new(SimpleFsLockFactory::new()),
        FactoryKind::SingleInstance => Box::new(SingleInstanceLockFactory::new()),
        FactoryKind::NoLock => Box::new(NoLockFactory),
    }
}

/// What one client run does.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub id: u8,
    pub server: String,
    pub factory: FactoryKind,
    pub os_lock: OsLockArg,
    pub dir: PathBuf,
    pub lock_name: String,
    pub sleep: Duration,
    pub count: u64,
    /// Count a successful second obtain instead of failing with "Double Obtain".
    pub keep_going: bool,
    /// Print a [`PROGRESS_PREFIX`] line every this many tries and a [`RESULT_PREFIX`] line at
    /// the end, instead of Lucene's percentages.
    pub report_every: Option<u64>,
}

/// What a client did; the orchestrator parses it from the [`RESULT_PREFIX`] line.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClientReport {
    pub tries: u64,
    pub acquired: u64,
    /// Tries that found the lock held.
    pub contended: u64,
    /// Second obtains inside this process that succeeded (a violation).
    pub double_obtains: u64,
    /// Latency of each successful obtain, in microseconds, including the server's echo.
    pub obtain_latency_us: Vec<u32>,
}

/// Runs the client loop, writing progress to `out`.
///
/// # Errors
/// Connection and protocol failures (among them the server closing the connection after it
/// detected a violation), lock errors other than "held", and "Double Obtain" unless
/// `keep_going`.
pub fn run_client(cfg: &ClientConfig, out: &mut dyn Write) -> anyhow::Result<ClientReport> {
    if cfg.report_every.is_none() {
        writeln!(
            out,
            "Connecting to server {} and registering as client {}...",
            cfg.server, cfg.id
        )?;
    }
    let conn = VerifierConnection::connect(cfg.server.as_str(), cfg.id, VERIFY_TIMEOUT)
        .with_context(|| format!("cannot register with verify server {}", cfg.server))?;
    let conn = Arc::new(conn);
    let factory = VerifyingLockFactory::with_connection(
        make_factory(cfg.factory, cfg.os_lock),
        Arc::clone(&conn),
    );
    let mut rng = rand::rng();
    let mut rep = ClientReport::default();
    let mut reported = 0; // latency samples already in a progress line
    let dir = cfg.dir.as_path();
    let name = cfg.lock_name.as_str();
    for i in 0..cfg.count {
        let t0 = Instant::now();
        match factory.try_obtain(dir, name) {
            Ok(lock) => {
                let took = t0.elapsed();
                rep.acquired += 1;
                rep.obtain_latency_us
                    .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
                if rng.random_range(0..10) == 0 {
                    let fresh;
                    let second: &VerifyingLockFactory = if rng.random_bool(0.5) {
                        fresh = VerifyingLockFactory::with_connection(
                            make_factory(cfg.factory, cfg.os_lock),
                            Arc::clone(&conn),
                        );
                        &fresh
                    } else {
                        &factory
                    };
                    match second.try_obtain(dir, name) {
                        Ok(again) => {
                            rep.double_obtains += 1;
                            let _ = again.close();
                            if !cfg.keep_going {
                                bail!(
                                    "Double Obtain: {} obtained twice in process {}",
                                    lock.path().display(),
                                    std::process::id()
                                );
                            }
                        }
                        Err(e) if e.is_held() => {}
                        Err(e) => return Err(e).context("second obtain in the same process"),
                    }
                }
                std::thread::sleep(cfg.sleep);
                lock.close().context("release")?;
            }
            Err(e) if e.is_held() => rep.contended += 1,
            Err(e) => return Err(e).context("obtain"),
        }
        rep.tries = i + 1;
        match cfg.report_every {
            Some(every) if rep.tries % every == 0 => {
                progress_line(out, &rep, &mut reported)?;
            }
            None if i % 500 == 0 => {
                #[allow(clippy::cast_precision_loss)] // a percentage for humans
                let pct = i as f64 * 100.0 / cfg.count as f64;
                writeln!(out, "{pct:.1}% done.")?;
            }
            _ => {}
        }
        std::thread::sleep(cfg.sleep);
    }
    match cfg.report_every {
        Some(_) => {
            progress_line(out, &rep, &mut reported)?;
            writeln!(out, "{RESULT_PREFIX} {}", serde_json::to_string(&rep)?)?;
        }
        None => writeln!(
            out,
            "Finished {} tries: {} acquired, {} contended, {} double obtains.",
            cfg.count, rep.acquired, rep.contended, rep.double_obtains
        )?,
    }
    out.flush()?;
    Ok(rep)
}

fn progress_line(
    out: &mut dyn Write,
    rep: &ClientReport,
    reported: &mut usize,
) -> std::io::Result<()> {
    let lat: Vec<String> = rep.obtain_latency_us[*reported..]
        .iter()
        .map(u32::to_string)
        .collect();
    *reported = rep.obtain_latency_us.len();
    writeln!(
        out,
        "{PROGRESS_PREFIX} tries={} acquired={} contended={} double={} lat={}",
        rep.tries,
        rep.acquired,
        rep.contended,
        rep.double_obtains,
        lat.join(",")
    )?;
    out.flush()
}
