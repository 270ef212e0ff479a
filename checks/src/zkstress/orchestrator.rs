//! `lockwright zk-stress-run`: N client processes contend for one ZooKeeper mutex through a
//! proxy while faults arrive on a seeded schedule; the verify server counts believed-holder
//! overlaps, the ledger checks every fenced write, and the run fails on a stale write
//! accepted, an overlap that no expired session explains, or a rejected write the recipe still
//! believed held.
//!
//! # Faults
//!
//! The schedule (which kind, when, how long) comes from a seeded RNG: the same seed gives the
//! same sequence of kinds, gaps and durations. Kinds come in shuffled rounds, each kind once
//! per round, so the first round already has every enabled kind. The victim is a client the
//! verify server sees holding the lock (waiting up to [`HOLDER_PATIENCE`] for one), else any
//! running client not already under a fault; which one depends on timing, so victims are not
//! reproducible.
//!
//! - `kill`: SIGKILL, announced to the verify server first; a replacement starts under the same
//!   id. The dead holder's node stays until its session times out.
//! - `pause`: SIGSTOP for twice the session timeout plus a second, then SIGCONT (Curator tech
//!   note 10). Its session expires meanwhile; another client takes the lock; the paused one
//!   wakes up believing it holds and writes: the fence must refuse it.
//! - `cut`: every connection of the client reset through the proxy (connection loss; the
//!   session survives if the client reconnects in time).
//! - `stall`: the client's connections stop forwarding for 0.3–2.5 session timeouts (the
//!   longer ones expire the session).
//! - `restart`: the server is killed and started again on the same port and data directory
//!   (sessions survive the restart).
//!
//! # The overlap check
//!
//! With a paused holder, two clients believe they hold the lock: the verify server sees the
//! second one's obtain while the first has not released. That is allowed only if the first
//! one's lock went with its session: for each overlap the orchestrator looks up the session the
//! old holder announced with its hold (in the ledger) and asks the server (`dump`, which lists
//! every live session) whether it still exists. An expired session is the explanation; a live
//! one means two holders the server allowed at once.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::ledger::{Ledger, ResourceMode};
use super::proxy::Proxy;
use crate::peers::curator::CuratorPeer;
use crate::peers::zookeeper::{self, ZkServer, ZkServerConfig};
use crate::stress::server::{OnViolation, Overlap, ServerConfig, ServerHandle, VerifyServer};

pub use super::summary::{print_summary, FaultCounts, OverlapCheck, ZkRunSummary};

/// A fault kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// SIGKILL a holder and start a replacement.
    Kill,
    /// SIGSTOP a holder past its session timeout, then SIGCONT.
    Pause,
    /// Reset a client's connections through the proxy.
    Cut,
    /// Stop forwarding a client's connections for a while.
    Stall,
    /// Kill and restart the ZooKeeper server (same port, same data).
    Restart,
}

impl FaultKind {
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::Cut,
        FaultKind::Stall,
        FaultKind::Restart,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Kill => "kill",
            FaultKind::Pause => "pause",
            FaultKind::Cut => "cut",
            FaultKind::Stall => "stall",
            FaultKind::Restart => "restart",
        }
    }
}

/// How long a fault waits for a holder to aim at before it takes any client.
pub const HOLDER_PATIENCE: Duration = Duration::from_secs(2);

/// One `zk-stress-run`.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// lockwright client processes.
    pub clients: usize,
    /// Curator 5.4 client processes (the Curator peer's `fenced` mode) besides them.
    pub curator_clients: usize,
    /// Stop once the verify server has counted this many acquisitions (and every fault kind
    /// has happened `min_each_fault` times).
    pub acquisitions: u64,
    /// Hold time between a holder's two writes.
    pub hold: Duration,
    /// The session timeout the clients ask for.
    pub session_timeout: Duration,
    /// The fault kinds to inject (empty: none).
    pub faults: Vec<FaultKind>,
    /// Mean gap between two faults (exponential).
    pub fault_every: Duration,
    pub min_each_fault: u64,
    pub seed: u64,
    pub resource: ResourceMode,
    /// A running server (HOST:PORT) instead of a throwaway one; `restart` is then impossible.
    pub connect: Option<String>,
    /// The lock directory.
    pub lock_path: String,
    /// The `lockwright` binary the clients run.
    pub exe: PathBuf,
    /// Where to compile the Curator peer (`None`: a temporary directory).
    pub peers_dir: Option<PathBuf>,
    pub max_duration: Duration,
    /// A progress line on stderr every second.
    pub progress: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Impl {
    Lockwright,
    Curator,
}

struct ClientProc {
    id: u8,
    kind: Impl,
    child: Option<Child>,
    tail: Arc<Mutex<VecDeque<String>>>,
    paused_until: Option<Instant>,
    stalled_until: Option<Instant>,
}

impl ClientProc {
    fn busy(&self) -> bool {
        self.paused_until.is_some() || self.stalled_until.is_some()
    }

    fn signal(&self, sig: i32) {
        if let Some(pid) = self.child.as_ref().and_then(|c| i32::try_from(c.id()).ok()) {
            // SAFETY: kill(2) on our own child's pid; no memory is involved.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }

    fn tail(&self) -> String {
        self.tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// Thaws, kills and reaps every client still running, on every exit path (panics included).
struct Clients(Vec<ClientProc>);

impl Drop for Clients {
    fn drop(&mut self) {
        for c in &mut self.0 {
            c.signal(libc::SIGCONT);
            if let Some(mut ch) = c.child.take() {
                let _ = ch.kill();
                let _ = ch.wait();
            }
        }
    }
}

struct Spawner<'a> {
    cfg: &'a RunConfig,
    proxy: &'a Proxy,
    verify: SocketAddr,
    ledger: SocketAddr,
    curator: Option<CuratorPeer>,
}

impl Spawner<'_> {
    fn spawn(&self, id: u8, kind: Impl) -> anyhow::Result<(Child, Arc<Mutex<VecDeque<String>>>)> {
        let cfg = self.cfg;
        let zk = self.proxy.addr(usize::from(id)).to_string();
        let hold = cfg.hold.as_millis().to_string();
        let session = cfg.session_timeout.as_millis().to_string();
        let mut cmd = match kind {
            Impl::Lockwright => {
                let mut c = Command::new(&cfg.exe);
                c.arg("zk-stress-client")
                    .args(["--connect", &zk, "--path", &cfg.lock_path])
                    .args(["--id", &id.to_string()])
                    .args(["--server", &self.verify.to_string()])
                    .args(["--ledger", &self.ledger.to_string()])
                    .args(["--hold-ms", &hold, "--session-timeout-ms", &session]);
                c
            }
            Impl::Curator => {
                let peer = self
                    .curator
                    .as_ref()
                    .context("the Curator peer was not built")?;
                peer.command([
                    "fenced".to_string(),
                    zk,
                    cfg.lock_path.clone(),
                    self.verify.ip().to_string(),
                    self.verify.port().to_string(),
                    self.ledger.ip().to_string(),
                    self.ledger.port().to_string(),
                    id.to_string(),
                    hold,
                    session,
                ])
            }
        };
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = zookeeper::spawn_orphan_proof(cmd)
            .with_context(|| format!("cannot start client {id}"))?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let outs: [Option<Box<dyn Read + Send>>; 2] = [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn Read + Send>),
        ];
        for out in outs.into_iter().flatten() {
            let t = Arc::clone(&tail);
            thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let mut t = t.lock().unwrap_or_else(PoisonError::into_inner);
                    if t.len() == 12 {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            });
        }
        Ok((child, tail))
    }
}

/// The fault schedule: kinds in shuffled rounds, exponential gaps, durations; all from `seed`.
struct Schedule {
    rng: StdRng,
    kinds: Vec<FaultKind>,
    round: Vec<FaultKind>,
    mean_gap: Duration,
}

impl Schedule {
    fn next_kind(&mut self) -> Option<FaultKind> {
        if self.kinds.is_empty() {
            return None;
        }
        if self.round.is_empty() {
            self.round = self.kinds.clone();
            self.round.shuffle(&mut self.rng);
        }
        self.round.pop()
    }

    fn gap(&mut self) -> Duration {
        let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
        self.mean_gap
            .mul_f64(-u.ln())
            .max(Duration::from_millis(100))
    }

    fn stall_factor(&mut self) -> f64 {
        self.rng.random_range(0.3..2.5)
    }
}

enum Server {
    Owned(Arc<ZkServer>),
    External(SocketAddr),
}

impl Server {
    fn addr(&self) -> SocketAddr {
        match self {
            Server::Owned(s) => SocketAddr::from((Ipv4Addr::LOCALHOST, s.port())),
            Server::External(a) => *a,
        }
    }
}

/// Sends a four-letter word.
fn four_letter(addr: SocketAddr, word: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    s.set_read_timeout(Some(Duration::from_secs(3)))?;
    s.write_all(word.as_bytes())?;
    s.shutdown(Shutdown::Write)?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

/// The live sessions in a `dump` answer (every `0x...` word).
fn live_sessions(dump: &str) -> Vec<String> {
    dump.split_whitespace()
        .map(|w| w.trim_end_matches(':'))
        .filter(|w| w.starts_with("0x"))
        .map(str::to_string)
        .collect()
}

struct PendingOverlap {
    overlap: Overlap,
    holder: u8,
}

/// Stops the verify server on every way out of [`run`] (an early error included).
struct StopOnDrop(ServerHandle);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// Verdicts by severity.
fn rank(v: &str) -> u8 {
    match v {
        "session-expired" => 0,
        "unchecked" => 1,
        _ => 2,
    }
}

struct Overlaps {
    start: Instant,
    pending: Vec<PendingOverlap>,
    checks: Vec<OverlapCheck>,
    /// Overlapping obtains seen (one may involve several old holders).
    events: u64,
}

/// Takes the verify server's new overlaps and checks every pending one whose old holder's
/// session can be looked up now (`server_up`: the server is not being restarted).
fn check_overlaps(
    o: &mut Overlaps,
    handle: &ServerHandle,
    ledger: &Ledger,
    zk: SocketAddr,
    server_up: bool,
) {
    for ov in handle.take_overlaps() {
        o.events += 1;
        for &h in &ov.holders {
            o.pending.push(PendingOverlap {
                overlap: ov.clone(),
                holder: h,
            });
        }
    }
    if o.pending.is_empty() {
        return;
    }
    let dump = if server_up {
        four_letter(zk, "dump").ok()
    } else {
        None
    };
    let now = Instant::now();
    let start = o.start;
    let checks = &mut o.checks;
    o.pending.retain(|p| {
        let hold = ledger.hold_before(p.holder, p.overlap.at);
        let waited = now.duration_since(p.overlap.at);
        let verdict = match (&hold, &dump) {
            (None, _) => "unchecked",
            (Some(h), Some(d)) => {
                if live_sessions(d).contains(&format!("{:#x}", h.session)) {
                    "session-alive"
                } else {
                    "session-expired"
                }
            }
            (Some(_), None) if waited > Duration::from_secs(60) => "unchecked",
            (Some(_), None) => return true,
        };
        checks.push(OverlapCheck {
            at_secs: p.overlap.at.duration_since(start).as_secs_f64(),
            newcomer: p.overlap.newcomer,
            holder: p.holder,
            holder_session: hold.map(|h| format!("{:#x}", h.session)),
            holder_pid: hold.map(|h| h.pid),
            holder_seq: hold.map(|h| h.seq),
            verdict,
            checked_after_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
        });
        false
    });
}

/// Runs the orchestra to the end and summarizes.
///
/// # Errors
/// Bad configuration, missing packages (named), a server that does not start, a client that
/// cannot be started. Failed checks are not errors: they are in the summary.
#[allow(clippy::too_many_lines)]
pub fn run(cfg: &RunConfig) -> anyhow::Result<ZkRunSummary> {
    let total = cfg.clients + cfg.curator_clients;
    if !(2..=200).contains(&total) {
        bail!("need 2..=200 clients in all (lockwright + Curator) for the lock to be contended");
    }
    if cfg.connect.is_some() && cfg.faults.contains(&FaultKind::Restart) {
        bail!(
            "--faults restart needs the throwaway server: leave out --connect or the restart fault"
        );
    }
    // A temporary peers directory lives as long as the run.
    let mut _peers_tmp = None;
    let curator = if cfg.curator_clients > 0 {
        let (dir, tmp) = zookeeper::peers_dir(cfg.peers_dir.as_deref())?;
        _peers_tmp = tmp;
        Some(CuratorPeer::build(&dir)?)
    } else {
        None
    };
    let server = match &cfg.connect {
        Some(c) => Server::External(
            c.to_socket_addrs()
                .with_context(|| format!("bad --connect {c}"))?
                .next()
                .with_context(|| format!("--connect {c} resolves to nothing"))?,
        ),
        None => {
            let max = u32::try_from(cfg.session_timeout.as_millis() * 4)
                .unwrap_or(u32::MAX)
                .max(10_000);
            Server::Owned(Arc::new(ZkServer::start_with(ZkServerConfig {
                max_session_ms: max,
                ..ZkServerConfig::default()
            })?))
        }
    };
    let zk_addr = server.addr();
    let proxy = Proxy::start(zk_addr, total).context("cannot start the proxy")?;
    let ledger = Ledger::start(cfg.resource).context("cannot start the ledger")?;
    let verify = VerifyServer::bind(
        (Ipv4Addr::LOCALHOST, 0).into(),
        ServerConfig {
            clients: total,
            on_violation: OnViolation::Count,
            crash_grace: Duration::from_secs(1),
            kills_announced: true,
            log: false,
        },
    )
    .context("cannot bind the verify server")?;
    let verify_addr = verify.local_addr()?;
    let handle = verify.handle();
    let _stop_verify = StopOnDrop(handle.clone());
    let start = Instant::now();
    let deadline = start + cfg.max_duration;
    let verify_thread =
        thread::spawn(move || verify.run(deadline + Duration::from_secs(120), false));
    let spawner = Spawner {
        cfg,
        proxy: &proxy,
        verify: verify_addr,
        ledger: ledger.addr(),
        curator,
    };

    let mut clients = Clients(Vec::new());
    for i in 0..total {
        let id = u8::try_from(i).context("client id")?;
        let kind = if i < cfg.clients {
            Impl::Lockwright
        } else {
            Impl::Curator
        };
        let (child, tail) = spawner.spawn(id, kind)?;
        clients.0.push(ClientProc {
            id,
            kind,
            child: Some(child),
            tail,
            paused_until: None,
            stalled_until: None,
        });
    }

    let mut schedule = Schedule {
        rng: StdRng::seed_from_u64(cfg.seed),
        kinds: {
            let mut k = cfg.faults.clone();
            k.sort();
            k.dedup();
            k
        },
        round: Vec::new(),
        mean_gap: cfg.fault_every,
    };
    let mut victims = StdRng::seed_from_u64(cfg.seed ^ 0x5eed_f00d);
    let mut faults = FaultCounts::default();
    let mut fault_log = Vec::new();
    let mut replacements = 0u64;
    let mut failures_seen = Vec::new();
    let mut next_fault = start + schedule.gap();
    let mut pending: Option<(FaultKind, Instant)> = None;
    let mut restarting: Option<mpsc::Receiver<anyhow::Result<()>>> = None;
    let mut overlaps = Overlaps {
        start,
        pending: Vec::new(),
        checks: Vec::new(),
        events: 0,
    };
    let mut last_overlap_poll = start;
    let mut next_progress = start + Duration::from_secs(1);
    let mut stopping_since: Option<Instant> = None;
    let mut winding_down = false;
    let mut timed_out = false;
    let mut fatal: Option<anyhow::Error> = None;
    let pause_len = cfg.session_timeout * 2 + Duration::from_secs(1);
    let log = |log: &mut Vec<String>, line: String| {
        if log.len() < 200 {
            log.push(format!("t={:.1}s {line}", start.elapsed().as_secs_f64()));
        }
    };

    loop {
        let now = Instant::now();
        // Reap the clients that ended by themselves; replace the ones that failed.
        for c in &mut clients.0 {
            let Some(ch) = c.child.as_mut() else {
                continue;
            };
            if let Some(status) = ch.try_wait()? {
                c.child = None;
                c.paused_until = None;
                if c.stalled_until.take().is_some() {
                    proxy.resume(usize::from(c.id));
                }
                if !status.success() {
                    thread::sleep(Duration::from_millis(20)); // let the readers catch up
                    failures_seen.push(format!(
                        "client {} exited with {status}: {}",
                        c.id,
                        c.tail()
                    ));
                }
                if stopping_since.is_none() {
                    let (child, tail) = spawner.spawn(c.id, c.kind)?;
                    c.child = Some(child);
                    c.tail = tail;
                    replacements += 1;
                }
            }
        }
        // End pauses and stalls that are due.
        for c in &mut clients.0 {
            if c.paused_until.is_some_and(|t| now >= t) {
                c.signal(libc::SIGCONT);
                c.paused_until = None;
            }
            if c.stalled_until.is_some_and(|t| now >= t) {
                proxy.resume(usize::from(c.id));
                c.stalled_until = None;
            }
        }
        if let Some(rx) = &restarting {
            match rx.try_recv() {
                Ok(Ok(())) => {
                    log(&mut fault_log, "server back".to_string());
                    restarting = None;
                }
                Ok(Err(e)) => {
                    fatal = Some(e.context("the ZooKeeper server did not come back"));
                    break;
                }
                Err(mpsc::TryRecvError::Empty) => {}
                Err(mpsc::TryRecvError::Disconnected) => {
                    fatal = Some(anyhow::anyhow!("the restart thread died"));
                    break;
                }
            }
        }
        // Overlaps: look up the old holder's session; ask the server (every 50 ms at most).
        if now.duration_since(last_overlap_poll) >= Duration::from_millis(50) {
            last_overlap_poll = now;
            check_overlaps(
                &mut overlaps,
                &handle,
                &ledger,
                zk_addr,
                restarting.is_none(),
            );
        }
        if now >= deadline {
            timed_out = true;
            break;
        }
        let stats = handle.stats();
        if cfg.progress && now >= next_progress {
            let l = ledger.report();
            eprintln!(
                "[{:6.1}s] acquisitions {:>7}  faults k{} p{} c{} s{} r{}  overlaps {}  writes {} rejected {} stale accepted {}",
                start.elapsed().as_secs_f64(),
                stats.acquisitions,
                faults.kill,
                faults.pause,
                faults.cut,
                faults.stall,
                faults.restart,
                stats.violations,
                l.writes_accepted,
                l.writes_rejected,
                l.stale_writes_accepted
            );
            next_progress = now + Duration::from_secs(1);
        }
        if let Some(since) = stopping_since {
            if clients.0.iter().all(|c| c.child.is_none()) {
                break;
            }
            if now.duration_since(since) > Duration::from_secs(90) {
                let left: Vec<String> = clients
                    .0
                    .iter()
                    .filter(|c| c.child.is_some())
                    .map(|c| format!("client {}: {}", c.id, c.tail()))
                    .collect();
                failures_seen.push(format!(
                    "clients still running 90 s after the stop request: {}",
                    left.join("; ")
                ));
                break;
            }
            thread::sleep(Duration::from_millis(5));
            continue;
        }
        // Done?
        let all_kinds = schedule
            .kinds
            .iter()
            .all(|&k| faults.of(k) >= cfg.min_each_fault);
        let quiet = pending.is_none()
            && restarting.is_none()
            && clients.0.iter().all(|c| !c.busy())
            && overlaps.pending.is_empty();
        if stats.acquisitions >= cfg.acquisitions && all_kinds {
            // Enough: no new faults; stop once the running ones are over.
            winding_down = true;
            if quiet {
                ledger.ask_to_stop();
                stopping_since = Some(now);
                continue;
            }
        }
        // Faults.
        if !winding_down && pending.is_none() && now >= next_fault && handle.started() {
            if let Some(k) = schedule.next_kind() {
                pending = Some((k, now + HOLDER_PATIENCE));
            }
            next_fault = now + schedule.gap();
        }
        if let Some((kind, patience)) = pending {
            if kind == FaultKind::Restart {
                if restarting.is_none() {
                    if let Server::Owned(s) = &server {
                        let s = Arc::clone(s);
                        let (tx, rx) = mpsc::channel();
                        thread::spawn(move || {
                            let _ = tx.send(s.restart());
                        });
                        restarting = Some(rx);
                        faults.bump(kind);
                        log(&mut fault_log, "restart the server".to_string());
                    }
                    pending = None;
                }
            } else {
                let holders = handle.holder_ids();
                let idle: Vec<usize> = (0..clients.0.len())
                    .filter(|&i| clients.0[i].child.is_some() && !clients.0[i].busy())
                    .collect();
                let aimed: Vec<usize> = idle
                    .iter()
                    .copied()
                    .filter(|&i| holders.contains(&clients.0[i].id))
                    .collect();
                let victim = if let Some(&i) = aimed.first() {
                    Some((i, true))
                } else if now >= patience && !idle.is_empty() {
                    Some((idle[victims.random_range(0..idle.len())], false))
                } else {
                    None
                };
                if let Some((i, was_holder)) = victim {
                    pending = None;
                    faults.bump(kind);
                    faults.aimed_at_holder += u64::from(was_holder);
                    let c = &mut clients.0[i];
                    let who = format!(
                        "client {}{}",
                        c.id,
                        if was_holder { " (holder)" } else { "" }
                    );
                    match kind {
                        FaultKind::Kill => {
                            handle.announce_kill(c.id);
                            if let Some(mut ch) = c.child.take() {
                                let _ = ch.kill();
                                let _ = ch.wait();
                            }
                            let (child, tail) = spawner.spawn(c.id, c.kind)?;
                            c.child = Some(child);
                            c.tail = tail;
                            replacements += 1;
                            log(&mut fault_log, format!("kill {who}, replaced"));
                        }
                        FaultKind::Pause => {
                            c.signal(libc::SIGSTOP);
                            c.paused_until = Some(now + pause_len);
                            log(
                                &mut fault_log,
                                format!("pause {who} for {:.1}s", pause_len.as_secs_f64()),
                            );
                        }
                        FaultKind::Cut => {
                            let n = proxy.cut(usize::from(c.id));
                            faults.connections_reset += n as u64;
                            log(&mut fault_log, format!("cut {who} ({n} connections)"));
                        }
                        FaultKind::Stall => {
                            let len = cfg.session_timeout.mul_f64(schedule.stall_factor());
                            if len > cfg.session_timeout {
                                faults.stalls_past_session_timeout += 1;
                            }
                            proxy.stall(usize::from(c.id));
                            c.stalled_until = Some(now + len);
                            log(
                                &mut fault_log,
                                format!("stall {who} for {:.1}s", len.as_secs_f64()),
                            );
                        }
                        FaultKind::Restart => unreachable!("handled above"),
                    }
                }
            }
        }
        thread::sleep(Duration::from_millis(3));
    }

    // Wind down: the last overlaps while the server still runs, then thaw, stop, collect.
    if fatal.is_none() {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let up = restarting
                .as_ref()
                .is_none_or(|rx| matches!(rx.try_recv(), Ok(Ok(()))));
            if up {
                restarting = None;
            }
            check_overlaps(&mut overlaps, &handle, &ledger, zk_addr, up);
            if overlaps.pending.is_empty() || Instant::now() >= end {
                break;
            }
            thread::sleep(Duration::from_millis(100));
        }
    }
    // Wind down: thaw, stop, collect.
    for c in &mut clients.0 {
        if c.paused_until.take().is_some() {
            c.signal(libc::SIGCONT);
        }
        if c.stalled_until.take().is_some() {
            proxy.resume(usize::from(c.id));
        }
    }
    drop(clients);
    handle.shutdown();
    let server_report = verify_thread
        .join()
        .map_err(|_| anyhow::anyhow!("verify server thread panicked"))?
        .context("verify server")?;
    drop(proxy);
    let ledger_report = ledger.finish();
    if let Some(e) = fatal {
        return Err(e);
    }
    // Overlaps still pending (the server never answered) are unchecked.
    let Overlaps {
        pending,
        mut checks,
        events: overlap_events,
        ..
    } = overlaps;
    for p in pending {
        checks.push(OverlapCheck {
            at_secs: p.overlap.at.duration_since(start).as_secs_f64(),
            newcomer: p.overlap.newcomer,
            holder: p.holder,
            holder_session: None,
            holder_pid: None,
            holder_seq: None,
            verdict: "unchecked",
            checked_after_ms: 0,
        });
    }
    let st = server_report.stats;
    // One verdict per distinct old hold: the worst of its checks.
    let mut holds: BTreeMap<(u8, Option<u32>, Option<u64>), &'static str> = BTreeMap::new();
    for c in &checks {
        let v = holds
            .entry((c.holder, c.holder_pid, c.holder_seq))
            .or_insert(c.verdict);
        if rank(c.verdict) > rank(v) {
            *v = c.verdict;
        }
    }
    let count = |v: &str| holds.values().filter(|x| **x == v).count() as u64;
    let expired = count("session-expired");
    let alive = count("session-alive");
    let unchecked = count("unchecked");
    let mut samples: Vec<OverlapCheck> = checks
        .iter()
        .filter(|c| c.verdict != "session-expired")
        .take(20)
        .cloned()
        .collect();
    samples.extend(
        checks
            .iter()
            .filter(|c| c.verdict == "session-expired")
            .take(20 - samples.len().min(20))
            .cloned(),
    );
    let wall = start.elapsed().as_secs_f64();
    let mut failures = Vec::new();
    if ledger_report.stale_writes_accepted > 0 {
        failures.push(format!(
            "{} stale writes accepted (must be 0)",
            ledger_report.stale_writes_accepted
        ));
    }
    if alive > 0 {
        failures.push(format!(
            "{alive} overlapped holds whose session was still alive (two holders)"
        ));
    }
    if unchecked > 0 {
        failures.push(format!(
            "{unchecked} overlapped holds could not be checked against the server's sessions"
        ));
    }
    if ledger_report.rejected_while_valid > 0 {
        failures.push(format!(
            "{} rejected writes after which ensure_valid still said the lock was held",
            ledger_report.rejected_while_valid
        ));
    }
    if st.violations > overlap_events {
        failures.push(format!(
            "{} verify-server violations other than overlapping obtains: {:?}",
            st.violations - overlap_events,
            server_report.violation_messages
        ));
    }
    if !failures_seen.is_empty() {
        failures.push(format!("{} client failures", failures_seen.len()));
    }
    if timed_out {
        failures.push(format!(
            "timed out after {:?} (acquisitions {}, faults {:?})",
            cfg.max_duration, st.acquisitions, faults
        ));
    }
    let kinds: BTreeMap<FaultKind, u64> =
        schedule.kinds.iter().map(|&k| (k, faults.of(k))).collect();
    for (k, n) in &kinds {
        if *n < cfg.min_each_fault {
            failures.push(format!(
                "fault {} happened {n} times, fewer than {}",
                k.name(),
                cfg.min_each_fault
            ));
        }
    }
    if st.acquisitions < cfg.acquisitions {
        failures.push(format!(
            "{} acquisitions, fewer than the {} asked for",
            st.acquisitions, cfg.acquisitions
        ));
    }
    #[allow(clippy::cast_precision_loss)]
    let per_sec = if wall > 0.0 {
        st.acquisitions as f64 / wall
    } else {
        0.0
    };
    Ok(ZkRunSummary {
        clients: cfg.clients,
        curator_clients: cfg.curator_clients,
        seed: cfg.seed,
        session_timeout_ms: u64::try_from(cfg.session_timeout.as_millis()).unwrap_or(u64::MAX),
        hold_ms: u64::try_from(cfg.hold.as_millis()).unwrap_or(u64::MAX),
        resource: cfg.resource,
        fault_kinds: schedule.kinds.clone(),
        zookeeper: match &server {
            Server::Owned(_) => format!("{zk_addr} (throwaway ZooKeeper 3.8)"),
            Server::External(a) => a.to_string(),
        },
        acquisitions: st.acquisitions,
        faults,
        fault_log,
        overlaps: overlap_events,
        overlapped_holds: holds.len() as u64,
        overlapped_holds_session_expired: expired,
        overlapped_holds_session_alive: alive,
        overlapped_holds_unchecked: unchecked,
        overlap_check_max_delay_ms: checks
            .iter()
            .filter(|c| c.verdict != "unchecked")
            .map(|c| c.checked_after_ms)
            .max()
            .unwrap_or(0),
        overlap_samples: samples,
        ledger: ledger_report,
        replacements,
        client_failures: failures_seen,
        wall_secs: wall,
        acquisitions_per_sec: per_sec,
        timed_out,
        failures,
    })
}
