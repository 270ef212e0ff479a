//! `lockwright stress-run`: a verify server in this process, N client processes on loopback,
//! crash injection, and the summary.
//!
//! Crash injection: kills arrive as a Poisson process of `kill_rate` per second. Each kill
//! picks, three times in four, a client that holds the lock right now (as the server sees it),
//! else any running client; announces the kill to the server, SIGKILLs the process, reaps it,
//! and starts a replacement under the same id with the tries the dead one had not reported as
//! done. The server treats the dead holder's EOF as the OS releasing its lock (see
//! [`super::server`]).

use super::client::{ClientReport, FactoryKind, OsLockArg, PROGRESS_PREFIX, RESULT_PREFIX};
use super::server::{OnViolation, ServerConfig, ServerHandle, ServerReport, VerifyServer};
use anyhow::{bail, Context};
use rand::Rng;
use serde::Serialize;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Percentiles {
    pub samples: usize,
    pub p50: u32,
    pub p90: u32,
    pub p99: u32,
    pub p999: u32,
    pub max: u32,
}

impl Percentiles {
    fn of(mut v: Vec<u32>) -> Self {
        if v.is_empty() {
            return Percentiles::default();
        }
        v.sort_unstable();
        let at = |q: f64| {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let i = ((v.len() - 1) as f64 * q).round() as usize;
            v[i]
        };
        Percentiles {
            samples: v.len(),
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            p999: at(0.999),
            max: v[v.len() - 1],
        }
    }
}

/// The result of a `stress-run` (`--json` prints it).
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub client_impl: ClientImpl,
    pub clients: usize,
    pub count: u64,
    pub factory: FactoryKind,
    pub os_lock: OsLockArg,
    pub sleep_ms: u64,
    pub kill_rate: f64,
    pub lock_path: PathBuf,
    /// Obtains the server accepted.
    pub acquisitions: u64,
    /// Tries that found the lock held (reported by the clients; lockwright clients only).
    pub contended: u64,
    /// Tries reported done by the clients (lockwright clients only).
    pub tries: u64,
    pub violations: u64,
    /// Second obtains inside one process that succeeded (also counted by the server).
    pub double_obtains: u64,
    pub kills: u64,
    /// Kills aimed at a client the server saw as holder when the kill was decided.
    pub kills_aimed_at_holder: u64,
    pub replacements: u64,
    /// Holders whose connection dropped while they held the lock (the server's count).
    pub crash_releases: u64,
    pub crash_handoffs: u64,
    pub stale_obtains: u64,
    pub late_joins: u64,
    /// Clients that exited with an error without having been killed.
    pub client_failures: Vec<String>,
    pub wall_secs: f64,
    /// From the starting gun to the last message.
    pub active_secs: f64,
    /// `acquisitions / active_secs`.
    pub acquisitions_per_sec: f64,
    /// Obtain latency (inner obtain + the server's echo) over the successful obtains
    /// (a killed client loses the samples of its last < 10 tries).
    pub obtain_latency_us: Percentiles,
    pub violation_messages: Vec<String>,
    pub timed_out: bool,
}

impl RunSummary {
    /// Human-readable summary.
    pub fn render(&self) -> String {
        let l = &self.obtain_latency_us;
        let mut s = String::new();
        s += &format!(
            "lockwright stress-run: {} {} clients, factory {}{}, count {}, sleep {} ms, kill rate {}/s\n",
            self.clients,
            match self.client_impl {
                ClientImpl::Lockwright => "lockwright",
                ClientImpl::Lucene => "Lucene 4.10.4",
            },
            self.factory.name(),
            if self.factory == FactoryKind::Native && self.client_impl == ClientImpl::Lockwright {
                format!(" ({})", self.os_lock.kind().name())
            } else {
                String::new()
            },
            self.count,
            self.sleep_ms,
            self.kill_rate
        );
        s += &format!("  lock file            {}\n", self.lock_path.display());
        s += &format!("  acquisitions         {}\n", self.acquisitions);
        let lucene = self.client_impl == ClientImpl::Lucene;
        if lucene {
            s += "  contended attempts   n/a (Lucene's client does not report them)\n";
        } else {
            s += &format!("  contended attempts   {}\n", self.contended);
        }
        s += &format!("  violations           {}\n", self.violations);
        if !lucene {
            s += &format!("  double obtains       {}\n", self.double_obtains);
        }
        s += &format!(
            "  kills                {} (aimed at the holder: {}), replacements {}, late joins {}\n",
            self.kills, self.kills_aimed_at_holder, self.replacements, self.late_joins
        );
        s += &format!(
            "  crash releases       {} (holder's connection dropped), crash handoffs {}, stale obtains {}\n",
            self.crash_releases, self.crash_handoffs, self.stale_obtains
        );
        s += &format!(
            "  elapsed              {:.2} s wall, {:.2} s active\n",
            self.wall_secs, self.active_secs
        );
        s += &format!("  acquisitions/s       {:.0}\n", self.acquisitions_per_sec);
        if !lucene {
            s += &format!(
                "  obtain latency (us)  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({} samples)\n",
                l.p50, l.p90, l.p99, l.p999, l.max, l.samples
            );
        }
        for m in &self.violation_messages {
            s += &format!("  {m}\n");
        }
        for f in &self.client_failures {
            s += &format!("  client failure: {f}\n");
        }
        if self.timed_out {
            s += "  TIMED OUT: the run hit --max-secs\n";
        }
        s
    }
}

#[derive(Default)]
struct Progress {
    tries: u64,
    acquired: u64,
    contended: u64,
    double_obtains: u64,
    latencies: Vec<u32>,
    result: Option<ClientReport>,
}

struct Proc {
    child: Child,
    progress: Arc<Mutex<Progress>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<JoinHandle<()>>,
}

impl Proc {
    fn finish(mut self) -> (Progress, Vec<String>) {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let p = std::mem::take(&mut *self.progress.lock().unwrap_or_else(PoisonError::into_inner));
        let tail = self
            .stderr_tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        (p, tail)
    }
}

struct Slot {
    id: u8,
    remaining: u64,
    proc: Option<Proc>,
}

/// Kills and reaps every child still running, on every exit path.
struct Children(Vec<Slot>);

impl Drop for Children {
    fn drop(&mut self) {
        for s in &mut self.0 {
            if let Some(p) = s.proc.as_mut() {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
        }
    }
}

struct Spawner<'a> {
    cfg: &'a RunConfig,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Spawner<'_> {
    fn spawn(&self, id: u8, count: u64) -> anyhow::Result<Proc> {
        let cfg = self.cfg;
        let sleep = cfg.sleep.as_millis().to_string();
        let mut cmd = match cfg.client_impl {
            ClientImpl::Lockwright => {
                let mut c = Command::new(&cfg.exe);
                c.arg("stress")
                    .args(["--id", &id.to_string(), "--server", &self.addr.to_string()])
                    .args([
                        "--factory",
                        cfg.factory.name(),
                        "--os-lock",
                        cfg.os_lock.kind().name(),
                    ])
                    .arg("--dir")
                    .arg(&self.dir)
                    .args([
                        "--lock-name",
                        &cfg.lock_name,
                        "--sleep-ms",
                        &sleep,
                        "--count",
                        &count.to_string(),
                    ])
                    .args(["--keep-going", "--report-every", "10"]);
                c
            }
            ClientImpl::Lucene => {
                let mut c = Command::new("java");
                c.arg("-cp")
                    .arg(lucene_jar())
                    .arg("org.apache.lucene.store.LockStressTest")
                    .args([
                        &id.to_string(),
                        "127.0.0.1",
                        &self.addr.port().to_string(),
                        lucene_factory_class(cfg.factory),
                    ])
                    .arg(&self.dir)
                    .args([&sleep, &count.to_string()]);
                c
            }
        };
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start client {id} ({:?})", cmd.get_program()))?;
        let progress = Arc::new(Mutex::new(Progress::default()));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let p = Arc::clone(&progress);
            readers.push(thread::spawn(move || read_progress(out, &p)));
        }
        if let Some(err) = child.stderr.take() {
            let t = Arc::clone(&stderr_tail);
            readers.push(thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let mut t = t.lock().unwrap_or_else(PoisonError::into_inner);
                    if t.len() == 8 {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }));
        }
        Ok(Proc {
            child,
            progress,
            stderr_tail,
            readers,
        })
    }
}

fn read_progress(out: impl std::io::Read, p: &Mutex<Progress>) {
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        if let Some(rest) = line.strip_prefix(PROGRESS_PREFIX) {
            let mut g = p.lock().unwrap_or_else(PoisonError::into_inner);
            for kv in rest.split_whitespace() {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                if k == "lat" {
                    g.latencies
                        .extend(v.split(',').filter_map(|x| x.parse::<u32>().ok()));
                    continue;
                }
                let v = v.parse().unwrap_or(0);
                match k {
                    "tries" => g.tries = v,
                    "acquired" => g.acquired = v,
                    "contended" => g.contended = v,
                    "double" => g.double_obtains = v,
                    _ => {}
                }
            }
        } else if let Some(rest) = line.strip_prefix(RESULT_PREFIX) {
            if let Ok(r) = serde_json::from_str::<ClientReport>(rest.trim()) {
                p.lock().unwrap_or_else(PoisonError::into_inner).result = Some(r);
            }
        }
    }
}

#[derive(Default)]
struct Totals {
    tries: u64,
    contended: u64,
    double_obtains: u64,
    latencies: Vec<u32>,
}

impl Totals {
    /// The final report if the client finished, else its last progress line; latencies
    /// always from the progress lines (a killed client's since its last line are lost).
    fn add(&mut self, p: Progress) {
        self.latencies.extend(p.latencies);
        match p.result {
            Some(r) => {
                self.tries += r.tries;
                self.contended += r.contended;
                self.double_obtains += r.double_obtains;
            }
            None => {
                self.tries += p.tries;
                self.contended += p.contended;
                self.double_obtains += p.double_obtains;
            }
        }
    }
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

fn run_in(cfg: &RunConfig, dir: &std::path::Path) -> anyhow::Result<RunSummary> {
    let server_cfg = ServerConfig {
        clients: cfg.clients,
        on_violation: OnViolation::Count,
        crash_grace: cfg.crash_grace,
        kills_announced: true,
        log: false,
    };
    let server = VerifyServer::bind((Ipv4Addr::LOCALHOST, 0).into(), server_cfg)
        .context("cannot bind the verify server")?;
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

    let mut slots = Children(Vec::new());
    for i in 0..cfg.clients {
        let id = u8::try_from(i).context("client id")?;
        let proc = spawner.spawn(id, cfg.count)?;
        slots.0.push(Slot {
            id,
            remaining: cfg.count,
            proc: Some(proc),
        });
    }

    let mut rng = rand::rng();
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    let (mut kills, mut aimed, mut replacements) = (0u64, 0u64, 0u64);
    let mut next_kill = next_kill_at(&mut rng, cfg.kill_rate, Instant::now());
    let mut next_progress = Instant::now() + Duration::from_secs(1);
    let mut timed_out = false;
    loop {
        // Reap the clients that ended by themselves.
        for slot in &mut slots.0 {
            let Some(p) = slot.proc.as_mut() else {
                continue;
            };
            if let Some(status) = p.child.try_wait()? {
                let p = slot.proc.take().expect("present");
                let (progress, tail) = p.finish();
                totals.add(progress);
                slot.remaining = 0;
                if !status.success() {
                    failures.push(format!(
                        "client {} exited with {status}: {}",
                        slot.id,
                        tail.join(" | ")
                    ));
                }
            }
        }
        let running = slots.0.iter().filter(|s| s.proc.is_some()).count();
        if running == 0 {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            break;
        }
        if cfg.progress && now >= next_progress {
            let s = handle.stats();
            eprintln!(
                "[{:6.1}s] acquisitions {:>8}  violations {}  kills {}  crash releases {}  running {running}/{}",
                start.elapsed().as_secs_f64(),
                s.acquisitions,
                s.violations,
                kills,
                s.crash_releases,
                cfg.clients
            );
            next_progress = now + Duration::from_secs(1);
        }
        if let Some(at) = next_kill {
            if now >= at && handle.started() {
                if let Some((i, was_holder)) = pick_victim(&mut rng, &slots.0, &handle) {
                    kill_and_replace(&mut slots.0[i], &handle, &spawner, &mut totals)?;
                    kills += 1;
                    aimed += u64::from(was_holder);
                    if slots.0[i].proc.is_some() {
                        replacements += 1;
                    }
                }
                next_kill = next_kill_at(&mut rng, cfg.kill_rate, Instant::now());
            }
        }
        thread::sleep(Duration::from_millis(2));
    }
    drop(slots); // kills whatever is left (timeout)
    handle.shutdown();
    let report: ServerReport = server_thread
        .join()
        .map_err(|_| anyhow::anyhow!("verify server thread panicked"))?
        .context("verify server")?;
    let st = report.stats;
    let active = st.active_secs;
    #[allow(clippy::cast_precision_loss)]
    let per_sec = if active > 0.0 {
        st.acquisitions as f64 / active
    } else {
        0.0
    };
    Ok(RunSummary {
        client_impl: cfg.client_impl,
        clients: cfg.clients,
        count: cfg.count,
        factory: cfg.factory,
        os_lock: cfg.os_lock,
        sleep_ms: u64::try_from(cfg.sleep.as_millis()).unwrap_or(u64::MAX),
        kill_rate: cfg.kill_rate,
        lock_path: dir.join(&cfg.lock_name),
        acquisitions: st.acquisitions,
        contended: totals.contended,
        tries: totals.tries,
        violations: st.violations,
        double_obtains: totals.double_obtains,
        kills,
        kills_aimed_at_holder: aimed,
        replacements,
        crash_releases: st.crash_releases,
        crash_handoffs: st.crash_handoffs,
        stale_obtains: st.stale_obtains,
        late_joins: st.late_joins,
        client_failures: failures,
        wall_secs: start.elapsed().as_secs_f64(),
        active_secs: active,
        acquisitions_per_sec: per_sec,
        obtain_latency_us: Percentiles::of(totals.latencies),
        violation_messages: report.violation_messages,
        timed_out: timed_out || report.timed_out,
    })
}

fn next_kill_at(rng: &mut impl Rng, rate: f64, now: Instant) -> Option<Instant> {
    if rate <= 0.0 {
        return None;
    }
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    Some(now + Duration::from_secs_f64(-u.ln() / rate))
}

/// Three times in four the current holder (if it runs a process we may kill), else any
/// running client. Returns the slot index and whether it was chosen as holder.
fn pick_victim(rng: &mut impl Rng, slots: &[Slot], handle: &ServerHandle) -> Option<(usize, bool)> {
    let running: Vec<usize> = (0..slots.len())
        .filter(|&i| slots[i].proc.is_some())
        .collect();
    if running.is_empty() {
        return None;
    }
    if rng.random_bool(0.75) {
        let holders = handle.holder_ids();
        if let Some(&i) = running.iter().find(|&&i| holders.contains(&slots[i].id)) {
            return Some((i, true));
        }
    }
    Some((running[rng.random_range(0..running.len())], false))
}

fn kill_and_replace(
    slot: &mut Slot,
    handle: &ServerHandle,
    spawner: &Spawner<'_>,
    totals: &mut Totals,
) -> anyhow::Result<()> {
    let Some(mut p) = slot.proc.take() else {
        return Ok(());
    };
    handle.announce_kill(slot.id);
    let _ = p.child.kill(); // SIGKILL
    let _ = p.child.wait();
    let (progress, _) = p.finish();
    let done = progress.result.as_ref().map_or(progress.tries, |r| r.tries);
    let exited_by_itself = progress.result.is_some();
    totals.add(progress);
    slot.remaining = if exited_by_itself {
        0
    } else {
        slot.remaining.saturating_sub(done)
    };
    if slot.remaining > 0 {
        slot.proc = Some(spawner.spawn(slot.id, slot.remaining)?);
    }
    Ok(())
}

/// Writes the summary (text or JSON) to `out`.
///
/// # Errors
/// Write failures.
pub fn print_summary(summary: &RunSummary, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(summary)?)?;
    } else {
        write!(out, "{}", summary.render())?;
    }
    Ok(())
}
