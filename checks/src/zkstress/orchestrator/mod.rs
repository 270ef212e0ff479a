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
//!   (sessions survive the restart). One server only.
//!
//! With `--servers 3` (an [`Ensemble`](super::ensemble::Ensemble): the clients' connect
//! strings list every server, each client starting at a different one), instead of
//! `restart`:
//!
//! - `leader-kill`: SIGKILL the leader, start it again 1.5 s later (the others elect a new
//!   leader meanwhile; sessions survive).
//! - `server-pause`: SIGSTOP a follower as long as a client `pause`, then SIGCONT: its clients
//!   move to the other servers; a session that does not get there in time expires.
//! - `partition`: stall every quorum link to and from one server (the leader or not) for twice
//!   `syncLimit`: it leaves the quorum, then rejoins.
//! - `lag`: stall one follower's link to the leader for a third of `syncLimit`: it stays in
//!   the quorum, and its clients' reads miss the latest commits meanwhile.
//!
//! # The overlap check
//!
//! With a paused holder, two clients believe they hold the lock: the verify server sees the
//! second one's obtain while the first has not released. That is allowed only if the first
//! one's lock went with its session: for each overlap the orchestrator looks up the session the
//! old holder announced with its hold (in the ledger) and asks the server (`dump`, which lists
//! every live session) whether it still exists. An expired session is the explanation; a live
//! one means two holders the server allowed at once.
//!
//! # Where the phases live
//!
//! [`run`] sets up the server, the proxy, the ledger and the verify server, starts the
//! clients, then drives a `Run` through its phases: the fault loop (here), the last overlap
//! checks, stopping the clients, and the summary. The submodules hold the parts: `fleet`, the
//! client processes (start, reap, replace, stop); `faults`, the schedule and each kind's
//! injection; `overlaps`, the overlap check; `tally`, what the run saw and the
//! [`ZkRunSummary`] it becomes.

mod faults;
mod fleet;
mod overlaps;
mod servers;
mod tally;
mod verdict;

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use super::ledger::{Ledger, ResourceMode};
use super::proxy::ClientLinks;
use crate::peers::curator::CuratorPeer;
use crate::peers::zookeeper;
use crate::stress::server::{OnViolation, ServerConfig, ServerHandle, ServerStats, VerifyServer};
use faults::Schedule;
use fleet::{Clients, Spawner};
use overlaps::Overlaps;
use servers::{Held, Server};
use tally::Tally;

pub use super::summary::{print_summary, FaultCounts, OverlapCheck, ZkRunSummary};
pub use verdict::Verdict;

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
    /// Kill and restart the ZooKeeper server (same port, same data). One server only.
    Restart,
    /// Kill the ensemble's leader and start it again.
    LeaderKill,
    /// SIGSTOP a follower server past the session timeout, then SIGCONT.
    ServerPause,
    /// Cut one server off from the quorum for a while.
    Partition,
    /// Hold back a follower's link to the leader, within `syncLimit`.
    Lag,
}

impl FaultKind {
    /// Every kind for one server.
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::Cut,
        FaultKind::Stall,
        FaultKind::Restart,
    ];

    /// Every kind for an ensemble: the client faults and the server ones.
    pub const ENSEMBLE: [FaultKind; 8] = [
        FaultKind::Kill,
        FaultKind::Pause,
        FaultKind::Cut,
        FaultKind::Stall,
        FaultKind::LeaderKill,
        FaultKind::ServerPause,
        FaultKind::Partition,
        FaultKind::Lag,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Kill => "kill",
            FaultKind::Pause => "pause",
            FaultKind::Cut => "cut",
            FaultKind::Stall => "stall",
            FaultKind::Restart => "restart",
            FaultKind::LeaderKill => "leader-kill",
            FaultKind::ServerPause => "server-pause",
            FaultKind::Partition => "partition",
            FaultKind::Lag => "lag",
        }
    }

    /// A fault of the servers, not of one client.
    pub fn on_servers(self) -> bool {
        matches!(
            self,
            FaultKind::Restart
                | FaultKind::LeaderKill
                | FaultKind::ServerPause
                | FaultKind::Partition
                | FaultKind::Lag
        )
    }

    /// A fault that needs an ensemble.
    pub fn needs_ensemble(self) -> bool {
        self.on_servers() && self != FaultKind::Restart
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
    /// Throwaway servers: 1, or an ensemble of 3 (or 5, 7).
    pub servers: usize,
    /// The lock directory.
    pub lock_path: String,
    /// The `lockwright` binary the clients run.
    pub exe: PathBuf,
    /// Where to compile the Curator peer (`None`: a temporary directory).
    pub peers_dir: Option<PathBuf>,
    pub max_duration: Duration,
    /// A progress line on stderr every second.
    pub progress: bool,
    /// The lockwright clients run this broken recipe variant (`--client-variant`).
    pub client_variant: Option<String>,
    /// Keep the records the trace check read: the clients' trace files and the transaction
    /// log of each server as printed (`txnlog-N.txt`) are copied into this directory.
    pub trace_copy: Option<PathBuf>,
}

impl RunConfig {
    /// The counter znode: next to the lock directory, not in it (`<path>.counter`).
    pub fn counter_path(&self) -> String {
        format!("{}.counter", self.lock_path.trim_end_matches('/'))
    }
}

/// Stops the verify server on every way out of [`run`] (an early error included).
struct StopOnDrop(ServerHandle);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// The number of client processes; fails on a configuration the run cannot honour.
fn check_config(cfg: &RunConfig) -> anyhow::Result<usize> {
    let total = cfg.clients + cfg.curator_clients;
    if !(2..=200).contains(&total) {
        bail!("need 2..=200 clients in all (lockwright + Curator) for the lock to be contended");
    }
    if cfg.connect.is_some() && cfg.faults.contains(&FaultKind::Restart) {
        bail!(
            "--faults restart needs the throwaway server: leave out --connect or the restart fault"
        );
    }
    if !matches!(cfg.servers, 1 | 3 | 5 | 7) {
        bail!(
            "--servers {}: give 1 (one server) or an odd ensemble size 3, 5 or 7",
            cfg.servers
        );
    }
    if cfg.connect.is_some() && cfg.servers != 1 {
        bail!("--servers starts throwaway servers: leave out --connect or --servers");
    }
    for k in &cfg.faults {
        if cfg.servers > 1 && *k == FaultKind::Restart {
            bail!(
                "--faults restart is for one server; an ensemble's server faults are \
                 leader-kill, server-pause, partition and lag"
            );
        }
        if cfg.servers == 1 && k.needs_ensemble() {
            bail!("--faults {} needs an ensemble: add --servers 3", k.name());
        }
    }
    Ok(total)
}

/// The Curator peer, compiled, if the run has Curator clients, and the temporary directory it
/// was compiled in (if any), which must live as long as the run.
fn build_curator(
    cfg: &RunConfig,
) -> anyhow::Result<(Option<tempfile::TempDir>, Option<CuratorPeer>)> {
    if cfg.curator_clients == 0 {
        return Ok((None, None));
    }
    let (dir, tmp) = zookeeper::peers_dir(cfg.peers_dir.as_deref())?;
    let peer = CuratorPeer::build(&dir)?;
    Ok((tmp, Some(peer)))
}

/// The verify server in counting mode, kills announced, for `total` clients.
fn bind_verify_server(total: usize) -> anyhow::Result<VerifyServer> {
    VerifyServer::bind(
        (Ipv4Addr::LOCALHOST, 0).into(),
        ServerConfig {
            clients: total,
            on_violation: OnViolation::Count,
            crash_grace: Duration::from_secs(1),
            kills_announced: true,
            log: false,
        },
    )
    .context("cannot bind the verify server")
}

/// Runs the orchestra to the end and summarizes.
///
/// # Errors
/// Bad configuration, missing packages (named), a server that does not start, a client that
/// cannot be started. Failed checks are not errors: they are in the summary.
pub fn run(cfg: &RunConfig) -> anyhow::Result<ZkRunSummary> {
    let total = check_config(cfg)?;
    // A temporary peers directory lives as long as the run.
    let (_peers_tmp, curator) = build_curator(cfg)?;
    let server = Server::start(cfg)?;
    let proxy = ClientLinks::start(&server.addrs(), total).context("cannot start the proxy")?;
    let ledger = Ledger::start(cfg.resource).context("cannot start the ledger")?;
    let counter_initial = if cfg.resource.counter_in_resource() {
        Some(0)
    } else if cfg.resource.has_counter() {
        Some(verdict::prepare_counter(&server.connect_string(), cfg)?)
    } else {
        None
    };
    let verify = bind_verify_server(total)?;
    let verify_addr = verify.local_addr()?;
    let handle = verify.handle();
    let _stop_verify = StopOnDrop(handle.clone());
    let start = Instant::now();
    let deadline = start + cfg.max_duration;
    let verify_thread =
        thread::spawn(move || verify.run(deadline + Duration::from_secs(120), false));
    let trace_dir = tempfile::tempdir().context("cannot make the trace directory")?;
    let spawner = Spawner {
        cfg,
        proxy: &proxy,
        verify: verify_addr,
        ledger: ledger.addr(),
        curator,
        trace_dir: trace_dir.path().to_path_buf(),
        started: std::sync::atomic::AtomicUsize::new(0),
    };
    let clients = spawner.spawn_all(total)?;
    let mut run = Run::new(
        Rig {
            cfg,
            server: &server,
            proxy: &proxy,
            ledger: &ledger,
            handle: &handle,
            spawner: &spawner,
            start,
            deadline,
        },
        clients,
    );
    // The clients run: from here a failure is a failed run (exit 1), not a set-up error.
    run.fault_loop().map_err(crate::cli::failed)?;
    // Wind down: the last overlaps while the server still runs, then thaw, stop, collect.
    if run.tally.fatal.is_none() {
        run.settle_overlaps();
    }
    let (mut tally, overlaps) = run.stop_clients();
    handle.shutdown();
    let server_report = verify_thread
        .join()
        .map_err(|_| anyhow::anyhow!("verify server thread panicked"))
        .and_then(|r| r.context("verify server"))
        .map_err(crate::cli::failed)?;
    drop(proxy);
    let history = ledger.history();
    let ledger_report = ledger.finish();
    if let Some(e) = tally.fatal.take() {
        return Err(crate::cli::failed(e));
    }
    let mut overlaps = overlaps.conclude();
    let mut verdict = verdict::conclude(
        cfg,
        &server,
        counter_initial,
        &ledger_report,
        &history,
        &tally.killed_pids,
    )
    .map_err(crate::cli::failed)?;
    if let Some(log) = &verdict.log {
        overlaps.add_log_fates(&log.fates);
    }
    verdict.trace = verdict::trace_check(cfg, trace_dir.path(), &verdict, counter_initial);
    verdict.unexplained_errors = verdict::unexplained_errors(
        &history,
        &tally.fault_times,
        cfg,
        super::client::ACQUIRE_PATIENCE,
    );
    Ok(tally.into_summary(
        cfg,
        &server,
        &overlaps,
        server_report,
        (ledger_report, verdict),
    ))
}

/// What the phases of a run share and do not own: the configuration and the servers
/// [`run`] set up.
struct Rig<'a> {
    cfg: &'a RunConfig,
    server: &'a Server,
    proxy: &'a ClientLinks,
    ledger: &'a Ledger,
    handle: &'a ServerHandle,
    spawner: &'a Spawner<'a>,
    start: Instant,
    deadline: Instant,
}

/// A run between the setup and the summary: the client processes, the fault schedule and
/// what the phases have seen so far.
struct Run<'a> {
    rig: Rig<'a>,
    clients: Clients,
    schedule: Schedule,
    /// Picks a victim when no holder shows up in time.
    victims: StdRng,
    next_fault: Instant,
    /// The fault drawn and its deadline for finding a holder to aim at.
    pending: Option<(FaultKind, Instant)>,
    /// The server restart in flight (`restart`, `leader-kill`), if any.
    restarting: Option<mpsc::Receiver<anyhow::Result<()>>>,
    /// The held server fault (`server-pause`, `partition`, `lag`) and when it ends.
    held: Option<(Held, Instant)>,
    last_overlap_poll: Instant,
    next_progress: Instant,
    /// When the clients were asked to stop.
    stopping_since: Option<Instant>,
    /// Enough acquisitions and faults: no new faults.
    winding_down: bool,
    /// How long a `pause` lasts.
    pause_len: Duration,
    overlaps: Overlaps,
    tally: Tally,
}

impl<'a> Run<'a> {
    fn new(rig: Rig<'a>, clients: Clients) -> Self {
        let cfg = rig.cfg;
        let start = rig.start;
        let mut schedule = Schedule::new(cfg);
        let next_fault = start + schedule.gap();
        Run {
            clients,
            victims: StdRng::seed_from_u64(cfg.seed ^ 0x5eed_f00d),
            overlaps: Overlaps::new(start),
            tally: Tally::new(start, schedule.kinds.clone()),
            schedule,
            next_fault,
            pending: None,
            restarting: None,
            held: None,
            last_overlap_poll: start,
            next_progress: start + Duration::from_secs(1),
            stopping_since: None,
            winding_down: false,
            pause_len: cfg.session_timeout * 2 + Duration::from_secs(1),
            rig,
        }
    }

    /// Reaps, ends due faults, checks overlaps and injects new faults until the clients have
    /// stopped after enough acquisitions, the deadline, or a fatal error (kept in the tally).
    ///
    /// # Errors
    /// A client that cannot be waited for or (re)started.
    fn fault_loop(&mut self) -> anyhow::Result<()> {
        loop {
            let now = Instant::now();
            self.reap_and_replace()?;
            self.end_due_faults(now);
            self.end_due_server_fault(now);
            if let Err(e) = self.poll_restart() {
                self.tally.fatal = Some(e);
                break;
            }
            self.poll_overlaps(now);
            if now >= self.rig.deadline {
                self.tally.timed_out = true;
                break;
            }
            let stats = self.rig.handle.stats();
            self.progress_line(now, &stats);
            if let Some(since) = self.stopping_since {
                if self.clients_gone(now, since) {
                    break;
                }
                thread::sleep(Duration::from_millis(5));
                continue;
            }
            if self.ask_to_stop_if_done(now, &stats) {
                continue;
            }
            self.draw_fault(now);
            self.inject_pending(now)?;
            thread::sleep(Duration::from_millis(3));
        }
        Ok(())
    }

    /// With `progress`, one line on stderr per second.
    fn progress_line(&mut self, now: Instant, stats: &ServerStats) {
        if !(self.rig.cfg.progress && now >= self.next_progress) {
            return;
        }
        let l = self.rig.ledger.report();
        let faults = &self.tally.faults;
        eprintln!(
            "[{:6.1}s] acquisitions {:>7}  faults k{} p{} c{} s{} r{} L{} P{} X{} G{}  overlaps {}  writes {} rejected {} stale accepted {}",
            self.rig.start.elapsed().as_secs_f64(),
            stats.acquisitions,
            faults.kill,
            faults.pause,
            faults.cut,
            faults.stall,
            faults.restart,
            faults.leader_kill,
            faults.server_pause,
            faults.partition,
            faults.lag,
            stats.violations,
            l.writes_accepted,
            l.writes_rejected,
            l.stale_writes_accepted
        );
        self.next_progress = now + Duration::from_secs(1);
    }

    /// Once there are enough acquisitions and every fault kind has happened often enough, no
    /// new faults; once the running ones are over, asks the clients to stop (`true`).
    fn ask_to_stop_if_done(&mut self, now: Instant, stats: &ServerStats) -> bool {
        let cfg = self.rig.cfg;
        let all_kinds = self
            .schedule
            .kinds
            .iter()
            .all(|&k| self.tally.faults.of(k) >= cfg.min_each_fault);
        let quiet = self.pending.is_none()
            && !self.server_busy()
            && self.clients.0.iter().all(|c| !c.busy())
            && self.overlaps.settled();
        if stats.acquisitions >= cfg.acquisitions && all_kinds {
            // Enough: no new faults; stop once the running ones are over.
            self.winding_down = true;
            if quiet {
                self.rig.ledger.ask_to_stop();
                self.stopping_since = Some(now);
                return true;
            }
        }
        false
    }
}
