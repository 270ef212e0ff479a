//! What a `stress-run` reports: acquisitions, violations, kills and crash handling, the
//! throughput and the obtain latency, as text or JSON.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::client::{FactoryKind, OsLockArg};
use super::orchestrator::ClientImpl;

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
    pub(super) fn of(mut v: Vec<u32>) -> Self {
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
