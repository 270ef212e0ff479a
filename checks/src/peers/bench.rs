//! `lockwright zk-bench`: lockwright, Curator 5.4 and kazoo 2.8 side by side on ONE real
//! ZooKeeper server in one run.
//!
//! - **Uncontended** acquire+release latency (median, p99) after a warm-up (the JVM's JIT is
//!   warm after the Curator peer's warm-up loop), and ZooKeeper requests per acquire+release
//!   counted by the server (`srvr`'s `Received:` before and after the timed loop; the peers
//!   pause at `WARM_DONE`/`BENCH_DONE` so the counter is read at rest).
//! - **Hand-off** with 2, 4, 8 contenders, each with its own session: latency from the
//!   holder's release call to the next holder's grant (only grants to another client that was
//!   already waiting count), requests per acquisition, and for lockwright the watch events per
//!   hand-off (a herd-free recipe wakes exactly one waiter per release: 1.00).

use std::path::PathBuf;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use lockwright::zk::{block_on, ClientStats, ZkClient, ZkMutex};
use serde::Serialize;

use crate::peers::curator::CuratorPeer;
use crate::peers::kazoo::KazooPeer;
use crate::peers::zookeeper::{peers_dir, ZkServer, ZkServerConfig};
use crate::peers::{spawn, PeerResult};

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Timed uncontended iterations per client.
    pub iterations: usize,
    /// Warm-up iterations before them.
    pub warmup: usize,
    /// Contender counts for the hand-off runs.
    pub contenders: Vec<usize>,
    /// Acquisitions per contender in a hand-off run.
    pub rounds: usize,
    /// Hold time per acquisition in a hand-off run (so the other contenders are parked on
    /// their watches when the holder releases).
    pub hold: Duration,
    pub curator: bool,
    pub kazoo: bool,
    /// Where to compile the peers (default: a temporary directory).
    pub peers_dir: Option<PathBuf>,
    /// Print progress on stderr.
    pub progress: bool,
}

/// One uncontended row.
#[derive(Clone, Debug, Serialize)]
pub struct Uncontended {
    pub client: String,
    pub n: u64,
    pub median_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// The lowest median of consecutive blocks of 200 iterations: the least disturbed stretch
    /// on a shared machine.
    pub best_block_median_us: u64,
    /// Requests the server received per acquire+release.
    pub requests_per_op: f64,
}

/// One hand-off row.
#[derive(Clone, Debug, Serialize)]
pub struct Handoff {
    pub client: String,
    pub contenders: usize,
    pub acquisitions: u64,
    /// Hand-off samples (grants to a client that was waiting for another's release).
    pub handoffs: u64,
    pub median_us: u64,
    pub p99_us: u64,
    /// Requests the server received per acquisition.
    pub requests_per_acquisition: f64,
    /// Watch events per hand-off (lockwright only: counted by its client).
    pub watch_events_per_handoff: Option<f64>,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub server: String,
    /// Hold time per acquisition in the hand-off runs.
    pub hold_ms: u64,
    pub uncontended: Vec<Uncontended>,
    pub handoff: Vec<Handoff>,
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[i]
}

#[allow(clippy::cast_precision_loss)]
fn best_block_median(samples: &[u64]) -> u64 {
    samples
        .chunks_exact(200)
        .map(|b| {
            let mut b = b.to_vec();
            b.sort_unstable();
            b[100]
        })
        .min()
        .unwrap_or_else(|| {
            let mut all = samples.to_vec();
            all.sort_unstable();
            percentile(&all, 0.5)
        })
}

#[allow(clippy::cast_precision_loss)]
fn per(total: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        total as f64 / n as f64
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Runs the benchmark on a fresh server.
///
/// # Errors
/// Missing packages (named), a peer that fails.
pub fn run(cfg: &BenchConfig) -> anyhow::Result<BenchReport> {
    let say = |s: &str| {
        if cfg.progress {
            eprintln!("zk-bench: {s}");
        }
    };
    // Full JIT for the server (a benchmark), fsync off (throwaway data, less noise).
    let server = ZkServer::start_with(ZkServerConfig {
        quick_jvm: false,
        ..ZkServerConfig::default()
    })?;
    let cs = server.connect_string();
    let (dir, _tmp) = peers_dir(cfg.peers_dir.as_deref())?;
    let curator = if cfg.curator {
        Some(CuratorPeer::build(&dir)?)
    } else {
        None
    };
    let kazoo = if cfg.kazoo {
        Some(KazooPeer::build(&dir)?)
    } else {
        None
    };
    let mut report = BenchReport {
        server: format!(
            "ZooKeeper 3.8 (Debian), standalone on loopback, tickTime={} ms, forceSync=no",
            server.config().tick_ms
        ),
        hold_ms: u64::try_from(cfg.hold.as_millis()).unwrap_or(u64::MAX),
        uncontended: Vec::new(),
        handoff: Vec::new(),
    };

    // From here on the run is under way: a failure is a failed run (exit 1), not an error
    // before the run could start (exit 2).
    let measured = move || -> anyhow::Result<BenchReport> {
        say("warming up the server's JIT");
        let warm = BenchConfig {
            iterations: cfg.warmup.max(1000),
            ..cfg.clone()
        };
        lockwright_uncontended(&server, &warm)?;
        say("lockwright, uncontended");
        report
            .uncontended
            .push(lockwright_uncontended(&server, cfg)?);
        if let Some(p) = &curator {
            say("Curator, uncontended");
            let args = [
                "bench".to_string(),
                cs.clone(),
                "/bench/curator".to_string(),
                cfg.iterations.to_string(),
                cfg.warmup.to_string(),
                "500".to_string(),
            ];
            report.uncontended.push(peer_uncontended(
                &server,
                "Curator 5.4 InterProcessMutex",
                p.command(args),
            )?);
        }
        if let Some(p) = &kazoo {
            say("kazoo, uncontended");
            let args = [
                "bench".to_string(),
                cs.clone(),
                "/bench/kazoo".to_string(),
                cfg.iterations.to_string(),
                cfg.warmup.to_string(),
                "500".to_string(),
            ];
            report.uncontended.push(peer_uncontended(
                &server,
                "kazoo 2.8 Lock",
                p.command(&[], args),
            )?);
        }
        for &k in &cfg.contenders {
            say(&format!("lockwright, hand-off, {k} contenders"));
            report
                .handoff
                .push(lockwright_handoff(&server, k, cfg.rounds, cfg.hold)?);
            if let Some(p) = &curator {
                say(&format!("Curator, hand-off, {k} contenders"));
                let args = [
                    "handoff".to_string(),
                    cs.clone(),
                    format!("/bench/curator-handoff-{k}"),
                    k.to_string(),
                    cfg.rounds.to_string(),
                    cfg.hold.as_millis().to_string(),
                ];
                report.handoff.push(peer_handoff(
                    &server,
                    "Curator 5.4",
                    k,
                    cfg.rounds,
                    p.command(args),
                )?);
            }
        }
        Ok(report)
    };
    measured().map_err(crate::cli::failed)
}

fn lockwright_uncontended(server: &ZkServer, cfg: &BenchConfig) -> anyhow::Result<Uncontended> {
    let cs = server.connect_string();
    block_on(async {
        let zk = ZkClient::builder()
            .session_timeout(Duration::from_secs(4))
            .connect(&cs)
            .await?;
        let m = ZkMutex::new(zk.clone(), "/bench/lockwright")?;
        for _ in 0..cfg.warmup {
            m.acquire().await?.release().await?;
        }
        let r0 = server.received_packets()?;
        let mut lat = Vec::with_capacity(cfg.iterations);
        for _ in 0..cfg.iterations {
            let t = Instant::now();
            m.acquire().await?.release().await?;
            lat.push(micros(t.elapsed()));
        }
        let r1 = server.received_packets()?;
        let best_block_median_us = best_block_median(&lat);
        lat.sort_unstable();
        let n = lat.len() as u64;
        Ok(Uncontended {
            client: "lockwright".to_string(),
            n,
            best_block_median_us,
            median_us: percentile(&lat, 0.5),
            p99_us: percentile(&lat, 0.99),
            max_us: lat.last().copied().unwrap_or(0),
            requests_per_op: per(r1.saturating_sub(r0 + 1), n),
        })
    })
}

/// Runs a peer in bench mode, reading the server's counter at its `WARM_DONE` and `BENCH_DONE`.
fn counted_peer_run(
    server: &ZkServer,
    name: &str,
    cmd: std::process::Command,
) -> anyhow::Result<(PeerResult, u64)> {
    let mut p = spawn(name, cmd)?;
    let wait = Duration::from_secs(300);
    p.wait_for_line("WARM_DONE", wait)
        .with_context(|| format!("{name} never warmed up\n{}", p.describe()))?;
    let r0 = server.received_packets()?;
    p.wait_for_line("BENCH_DONE", wait)
        .with_context(|| format!("{name} never finished\n{}", p.describe()))?;
    let r1 = server.received_packets()?;
    let status = p.wait(wait);
    if !status.is_some_and(|s| s.success()) {
        bail!("{name} failed\n{}", p.describe());
    }
    let r = PeerResult::parse(&p.stdout())
        .with_context(|| format!("{name} printed no RESULT line\n{}", p.describe()))?;
    Ok((r, r1.saturating_sub(r0 + 1)))
}

fn peer_uncontended(
    server: &ZkServer,
    name: &str,
    cmd: std::process::Command,
) -> anyhow::Result<Uncontended> {
    let (r, requests) = counted_peer_run(server, name, cmd)?;
    Ok(Uncontended {
        client: name.to_string(),
        n: r.n,
        median_us: r.median_us,
        p99_us: r.p99_us,
        max_us: r.max_us,
        best_block_median_us: r.best_block_median_us,
        requests_per_op: per(requests, r.n),
    })
}

fn peer_handoff(
    server: &ZkServer,
    name: &str,
    contenders: usize,
    rounds: usize,
    cmd: std::process::Command,
) -> anyhow::Result<Handoff> {
    let (r, requests) = counted_peer_run(server, name, cmd)?;
    let acquisitions = (contenders * rounds) as u64;
    Ok(Handoff {
        client: name.to_string(),
        contenders,
        acquisitions,
        handoffs: r.n,
        median_us: r.median_us,
        p99_us: r.p99_us,
        requests_per_acquisition: per(requests, acquisitions),
        watch_events_per_handoff: None,
    })
}

/// The last release: when it started (ns since the run's base) and by whom.
#[derive(Clone, Copy, Default)]
struct LastRelease {
    at_ns: u64,
    by: Option<usize>,
}

fn lockwright_handoff(
    server: &ZkServer,
    contenders: usize,
    rounds: usize,
    hold: Duration,
) -> anyhow::Result<Handoff> {
    let cs = server.connect_string();
    let path = format!("/bench/lockwright-handoff-{contenders}");
    let clients: Vec<ZkClient> = (0..contenders)
        .map(|_| {
            block_on(
                ZkClient::builder()
                    .session_timeout(Duration::from_secs(4))
                    .connect(&cs),
            )
        })
        .collect::<Result<_, _>>()?;
    let before: Vec<ClientStats> = clients.iter().map(ZkClient::stats).collect();
    let base = Instant::now();
    let ns = move || u64::try_from(base.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let last = Arc::new(Mutex::new(LastRelease::default()));
    let barrier = Arc::new(Barrier::new(contenders + 1));
    let mut threads = Vec::new();
    for (me, zk) in clients.iter().cloned().enumerate() {
        let (last, barrier, path) = (Arc::clone(&last), Arc::clone(&barrier), path.clone());
        threads.push(std::thread::spawn(move || -> anyhow::Result<Vec<u64>> {
            let m = ZkMutex::new(zk, &path)?;
            barrier.wait();
            let mut samples = Vec::new();
            block_on(async {
                for _ in 0..rounds {
                    let asked = ns();
                    let g = m.acquire().await?;
                    let granted = ns();
                    if !hold.is_zero() {
                        std::thread::sleep(hold);
                    }
                    {
                        let mut l = last.lock().unwrap_or_else(|p| p.into_inner());
                        if l.by.is_some_and(|b| b != me) && asked < l.at_ns {
                            samples.push((granted - l.at_ns) / 1000);
                        }
                        *l = LastRelease {
                            at_ns: ns(),
                            by: Some(me),
                        };
                    }
                    g.release().await?;
                }
                Ok::<_, anyhow::Error>(())
            })?;
            Ok(samples)
        }));
    }
    let r0 = server.received_packets()?;
    barrier.wait();
    let mut lat = Vec::new();
    for t in threads {
        lat.extend(
            t.join()
                .map_err(|_| anyhow::anyhow!("a contender panicked"))??,
        );
    }
    let r1 = server.received_packets()?;
    let after: Vec<ClientStats> = clients.iter().map(ZkClient::stats).collect();
    let watch_events: u64 = after
        .iter()
        .zip(&before)
        .map(|(a, b)| a.watch_events - b.watch_events)
        .sum();
    lat.sort_unstable();
    let acquisitions = (contenders * rounds) as u64;
    let handoffs = lat.len() as u64;
    Ok(Handoff {
        client: "lockwright".to_string(),
        contenders,
        acquisitions,
        handoffs,
        median_us: percentile(&lat, 0.5),
        p99_us: percentile(&lat, 0.99),
        requests_per_acquisition: per(r1.saturating_sub(r0 + 1), acquisitions),
        watch_events_per_handoff: Some(per(watch_events, handoffs)),
    })
}

/// The report as the markdown tables of `docs/performance.md`.
pub fn render_markdown(r: &BenchReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "Server: {}.\n", r.server);
    let _ = writeln!(
        s,
        "Uncontended acquire+release (one client, one session):\n"
    );
    let _ = writeln!(
        s,
        "| client | n | median | best 200-block median | p99 | max | requests per acquire+release |\n|---|---|---|---|---|---|---|"
    );
    for u in &r.uncontended {
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.2} |",
            u.client,
            u.n,
            ms(u.median_us),
            ms(u.best_block_median_us),
            ms(u.p99_us),
            ms(u.max_us),
            u.requests_per_op
        );
    }
    if let (Some(lw), Some(cur)) = (
        r.uncontended.first(),
        r.uncontended
            .iter()
            .find(|u| u.client.starts_with("Curator")),
    ) {
        #[allow(clippy::cast_precision_loss)]
        let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
        let _ = writeln!(
            s,
            "\nlockwright / Curator latency: median {:.2}×, best block {:.2}× (target ≤ 0.80×); requests {:.2} vs {:.2} (target ≤ Curator's).",
            ratio(lw.median_us, cur.median_us),
            ratio(lw.best_block_median_us, cur.best_block_median_us),
            lw.requests_per_op,
            cur.requests_per_op
        );
    }
    let _ = writeln!(
        s,
        "\nHand-off (each contender its own session, holding {} ms per acquisition; latency = the holder's release call → the next holder's grant):\n",
        r.hold_ms
    );
    let _ = writeln!(
        s,
        "| client | contenders | acquisitions | hand-offs | median | p99 | requests per acquisition | watch events per hand-off |\n|---|---|---|---|---|---|---|---|"
    );
    for h in &r.handoff {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.3} ms | {:.3} ms | {:.2} | {} |",
            h.client,
            h.contenders,
            h.acquisitions,
            h.handoffs,
            ms(h.median_us),
            ms(h.p99_us),
            h.requests_per_acquisition,
            h.watch_events_per_handoff
                .map_or_else(|| "—".to_string(), |w| format!("{w:.2}"))
        );
    }
    s
}

#[allow(clippy::cast_precision_loss)]
fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}
