//! `lockwright redis-stress-run`: the Redis lock (`lockwright::redis`) under faults on a real
//! `redis-server`, in `zk-stress-run`'s dialect (`--clients`, `--acquisitions`, `--hold-ms`,
//! `--faults KIND[=N],...|none`, `--seed`, `--connect`, `--json`, exit 0/1/2). The oracle is a
//! counter key the holders increment under the lock (GET, hold, SET) against the increments
//! they made: a lost increment fails the run (exit 1). Faults: `stall` (`DEBUG SLEEP` longer
//! than the TTL, on a throwaway server: it needs `--enable-debug-command local`).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use lockwright::redis::{RedisLock, RedisServers};
use rand::{Rng, SeedableRng};

/// `lockwright redis-stress-run`.
#[derive(clap::Args, Debug)]
pub struct RedisStressRunArgs {
    /// Client threads, each with its own connections.
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
    /// Stop after this many acquisitions (once every fault kind has happened --min-each times).
    #[arg(long, default_value_t = 500)]
    pub acquisitions: u64,
    /// Hold time between a holder's read and write of the counter, in milliseconds.
    #[arg(long, default_value_t = 2)]
    pub hold_ms: u64,
    /// The lock's TTL, in milliseconds.
    #[arg(long, default_value_t = 500)]
    pub ttl_ms: u64,
    /// The faults to inject: `stall[=N]` or `none` (N: how many must happen before the run
    /// may end) [default: stall=1].
    #[arg(long, value_name = "KIND[=N],...|none")]
    pub faults: Option<String>,
    /// Mean gap between faults, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub fault_every_ms: u64,
    /// The seed of the fault schedule (default: from the clock; printed in the report).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Use this running Redis (HOST:PORT) instead of a throwaway one (no faults then).
    #[arg(long)]
    pub connect: Option<String>,
    /// The twin run: increment without taking the lock (shows what the lock stops; the run
    /// should fail).
    #[arg(long)]
    pub no_lock: bool,
    /// One JSON object on the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

struct Throwaway(Child);

impl Drop for Throwaway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn command(address: &str, args: &[&str]) -> anyhow::Result<String> {
    let mut s = TcpStream::connect(address).with_context(|| format!("connect {address}"))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(out.as_bytes())?;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    if line.starts_with('$') && !line.starts_with("$-1") {
        line.clear();
        r.read_line(&mut line)?;
    }
    Ok(line.trim_end().to_string())
}

fn start_server() -> anyhow::Result<(Throwaway, String, tempfile::TempDir)> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let dir = tempfile::tempdir()?;
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args([
            "--appendonly",
            "no",
            "--enable-debug-command",
            "local",
            "--dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("redis-server (apt-get install redis-server)")?;
    let guard = Throwaway(child);
    let address = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while command(&address, &["PING"]).ok().as_deref() != Some("+PONG") {
        if Instant::now() > deadline {
            bail!("redis-server on {address} did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((guard, address, dir))
}

/// Runs the stress; exit 0 when no increment was lost, 1 when one was, 2 on bad arguments.
///
/// # Errors
/// Bad arguments (exit 2); a server that cannot be started or reached (exit 1).
pub fn run(a: RedisStressRunArgs) -> anyhow::Result<ExitCode> {
    let stalls = match a.faults.as_deref() {
        None => 1,
        Some("none") => 0,
        Some(f) => match f.split_once('=') {
            None if f == "stall" => 1,
            Some(("stall", n)) => n.parse().context("--faults stall=N")?,
            _ => bail!("unknown fault list `{f}` (redis-stress-run knows: stall[=N], none)"),
        },
    };
    if a.connect.is_some() && stalls > 0 {
        bail!("--connect runs without faults: give --faults none");
    }
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    });
    let (_server, address, _dir) = match &a.connect {
        Some(c) => (None, c.clone(), None),
        None => {
            let (g, addr, dir) = start_server().map_err(super::failed)?;
            (Some(g), addr, Some(dir))
        }
    };
    command(&address, &["DEL", "counter", "lock"]).map_err(super::failed)?;
    let acquired = Arc::new(AtomicU64::new(0));
    let made = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..a.clients)
        .map(|_| {
            let (address, acquired, made, stop) = (
                address.clone(),
                Arc::clone(&acquired),
                Arc::clone(&made),
                Arc::clone(&stop),
            );
            let (ttl, hold) = (
                Duration::from_millis(a.ttl_ms),
                Duration::from_millis(a.hold_ms),
            );
            let no_lock = a.no_lock;
            std::thread::spawn(move || -> anyhow::Result<()> {
                let backend = RedisServers::new(&[address.as_str()], Duration::from_secs(5))?;
                let lock =
                    RedisLock::new(backend, "lock", ttl).with_retry_delay(Duration::from_millis(1));
                while no_lock && !stop.load(Ordering::Relaxed) {
                    acquired.fetch_add(1, Ordering::Relaxed);
                    let v: u64 = command(&address, &["GET", "counter"])?.parse().unwrap_or(0);
                    std::thread::sleep(hold);
                    command(&address, &["SET", "counter", &(v + 1).to_string()])?;
                    made.fetch_add(1, Ordering::Relaxed);
                }
                while !stop.load(Ordering::Relaxed) {
                    let Ok(guard) = lock.lock_timeout(Duration::from_secs(5)) else {
                        continue;
                    };
                    acquired.fetch_add(1, Ordering::Relaxed);
                    if guard.ensure_valid().is_ok() {
                        let v: u64 = command(&address, &["GET", "counter"])?.parse().unwrap_or(0);
                        std::thread::sleep(hold);
                        if guard.ensure_valid().is_ok() {
                            command(&address, &["SET", "counter", &(v + 1).to_string()])?;
                            made.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    let _ = guard.release();
                }
                Ok(())
            })
        })
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut stalled = 0u64;
    while acquired.load(Ordering::Relaxed) < a.acquisitions || stalled < stalls {
        if stalled < stalls || (stalls > 0 && rng.random_bool(0.5)) {
            std::thread::sleep(Duration::from_millis(
                rng.random_range(0..=2 * a.fault_every_ms),
            ));
            let secs = format!("{:.3}", (a.ttl_ms * 2) as f64 / 1000.0);
            command(&address, &["DEBUG", "SLEEP", &secs]).map_err(super::failed)?;
            stalled += 1;
            if !a.quiet {
                eprintln!("redis-stress-run: stall {stalled} ({secs} s)");
            }
        } else {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join()
            .map_err(|_| anyhow::anyhow!("a client thread panicked"))
            .map_err(super::failed)?
            .map_err(super::failed)?;
    }
    let counter: u64 = command(&address, &["GET", "counter"])
        .map_err(super::failed)?
        .parse()
        .unwrap_or(0);
    let (acq, made) = (
        acquired.load(Ordering::Relaxed),
        made.load(Ordering::Relaxed),
    );
    let lost = made.saturating_sub(counter);
    let ok = lost == 0 && counter == made;
    println!(
        "redis-stress-run: {} clients, {acq} acquisitions, {made} increments made, counter {counter}, \
         {lost} lost, {stalled} stalls, seed {seed}, {:.1} s: {}",
        a.clients,
        started.elapsed().as_secs_f64(),
        if ok { "no lost update" } else { "LOST UPDATES" }
    );
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "clients": a.clients, "acquisitions": acq, "increments": made,
                "counter": counter, "lost": lost, "stalls": stalled, "seed": seed,
                "passed": ok,
            })
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
