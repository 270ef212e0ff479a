//! What a `zk-stress-run` reports: fault counts, the overlap check's findings, the ledger's
//! verdict, and the pass/fail decision, as a table or JSON.

use std::io::Write;

use serde::Serialize;

use super::ledger::{LedgerReport, ResourceMode};
use super::orchestrator::FaultKind;

/// How many faults of each kind were injected.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FaultCounts {
    pub kill: u64,
    pub pause: u64,
    pub cut: u64,
    pub stall: u64,
    pub restart: u64,
    #[serde(rename = "leader-kill")]
    pub leader_kill: u64,
    #[serde(rename = "server-pause")]
    pub server_pause: u64,
    pub partition: u64,
    pub lag: u64,
    /// Kills, pauses, cuts and stalls whose victim held the lock (per the verify server).
    pub aimed_at_holder: u64,
    /// Stalls longer than the session timeout.
    pub stalls_past_session_timeout: u64,
    /// Connections the cuts reset.
    pub connections_reset: u64,
}

impl FaultCounts {
    pub fn of(&self, k: FaultKind) -> u64 {
        match k {
            FaultKind::Kill => self.kill,
            FaultKind::Pause => self.pause,
            FaultKind::Cut => self.cut,
            FaultKind::Stall => self.stall,
            FaultKind::Restart => self.restart,
            FaultKind::LeaderKill => self.leader_kill,
            FaultKind::ServerPause => self.server_pause,
            FaultKind::Partition => self.partition,
            FaultKind::Lag => self.lag,
        }
    }

    pub(super) fn bump(&mut self, k: FaultKind) {
        match k {
            FaultKind::Kill => self.kill += 1,
            FaultKind::Pause => self.pause += 1,
            FaultKind::Cut => self.cut += 1,
            FaultKind::Stall => self.stall += 1,
            FaultKind::Restart => self.restart += 1,
            FaultKind::LeaderKill => self.leader_kill += 1,
            FaultKind::ServerPause => self.server_pause += 1,
            FaultKind::Partition => self.partition += 1,
            FaultKind::Lag => self.lag += 1,
        }
    }
}

/// One overlap and what the server said about the old holder's session.
#[derive(Clone, Debug, Serialize)]
pub struct OverlapCheck {
    /// Seconds since the start.
    pub at_secs: f64,
    pub newcomer: u8,
    pub holder: u8,
    /// The old holder's session (as it announced its hold), if known.
    pub holder_session: Option<String>,
    /// The old holder's process and hold number, if known.
    pub holder_pid: Option<u32>,
    pub holder_seq: Option<u64>,
    /// `session-expired`, `session-alive` (a failure) or `unchecked` (no hold announced, or
    /// the server did not answer within a minute).
    pub verdict: &'static str,
    /// How long after the overlap the server was asked.
    pub checked_after_ms: u64,
    /// The old hold's token (its lock node's `czxid`), to find the node in the log.
    pub holder_token: Option<i64>,
    /// For `session-alive`: the lines of the server's `dump` that named the session, and,
    /// once the transaction log is read, what the log says became of the old hold's node.
    pub evidence: Option<String>,
}

/// The result of a `zk-stress-run` (`--json` prints it).
#[derive(Clone, Debug, Serialize)]
pub struct ZkRunSummary {
    pub clients: usize,
    pub curator_clients: usize,
    pub seed: u64,
    pub session_timeout_ms: u64,
    pub hold_ms: u64,
    pub resource: ResourceMode,
    pub fault_kinds: Vec<FaultKind>,
    pub zookeeper: String,
    /// ZooKeeper servers (1: the single throwaway or `--connect` server).
    pub servers: usize,
    /// Critical sections entered: counter read-hold-write sections with a counter resource,
    /// holds announced to the ledger otherwise.
    pub critical_sections: u64,
    /// The counter at the end (`None` without a counter resource).
    pub counter_final: Option<u64>,
    /// Acknowledged increments missing from the counter: MUST be 0.
    pub lost_increments: u64,
    /// Disagreements the transaction log shows: MUST be 0.
    pub log_violations: u64,
    /// Lock nodes left once every client's session had time to end: MUST be 0.
    pub leftover_nodes: u64,
    /// The trace check (`crate::zkstress::trace`): client events merged with the log and
    /// replayed through the model; those it could not place or the model could not take
    /// (MUST be 0), and the first of them.
    pub trace_events: u64,
    pub trace_unmatched: u64,
    pub trace_first_unmatched: Option<String>,
    /// Lock errors the clients reported, and how many no fault explains (MUST be 0).
    pub client_errors: u64,
    pub client_errors_unexplained: u64,
    /// The oracles' findings in full.
    pub verdict: super::orchestrator::Verdict,
    /// Obtains the verify server counted.
    pub acquisitions: u64,
    pub faults: FaultCounts,
    /// The first fault lines (`t=12.3s pause client 2 (holder) for 4.0s`).
    pub fault_log: Vec<String>,
    /// Obtains that found another client still believing it held the lock (every obtain
    /// during a paused holder's pause counts).
    pub overlaps: u64,
    /// The distinct old holds those obtains overlapped, by what the server said about the
    /// session each was granted in:
    pub overlapped_holds: u64,
    pub overlapped_holds_session_expired: u64,
    /// Old holds whose session was still alive: MUST be 0 (two holders the server allowed).
    pub overlapped_holds_session_alive: u64,
    /// Old holds that could not be checked (no hold announced, or no answer within a minute).
    pub overlapped_holds_unchecked: u64,
    /// The longest delay between an overlap and the server's answer about the old session
    /// (a session that expired within that delay would pass for expired at the overlap).
    pub overlap_check_max_delay_ms: u64,
    pub overlap_samples: Vec<OverlapCheck>,
    /// The fenced resource: writes, rejections, stale writes accepted (MUST be 0).
    pub ledger: LedgerReport,
    /// Client processes started after a kill or an unexpected exit.
    pub replacements: u64,
    /// Clients that exited with an error without having been killed.
    pub client_failures: Vec<String>,
    pub wall_secs: f64,
    pub acquisitions_per_sec: f64,
    pub timed_out: bool,
    /// Everything that makes the run fail (empty: passed).
    pub failures: Vec<String>,
}

impl ZkRunSummary {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Holds announced by the Curator clients (ids from `clients` on) or the lockwright ones.
    pub fn holds_by(&self, curator: bool) -> u64 {
        self.ledger
            .holds_by_client
            .iter()
            .filter(|(id, _)| (usize::from(**id) >= self.clients) == curator)
            .map(|(_, n)| n)
            .sum()
    }

    /// The human-readable table.
    pub fn render(&self) -> String {
        let f = &self.faults;
        let l = &self.ledger;
        let mut s = format!(
            "lockwright zk-stress-run: {} lockwright + {} Curator clients, session timeout {} ms, hold {} ms, seed {}, resource {}\n",
            self.clients,
            self.curator_clients,
            self.session_timeout_ms,
            self.hold_ms,
            self.seed,
            match self.resource {
                ResourceMode::Guarded => "guarded counter + fenced ledger",
                ResourceMode::Checked => "fenced ledger",
                ResourceMode::Unchecked => "UNCHECKED (no fence)",
                ResourceMode::FencedClaim => "counter in the resource, fenced with claim-at-acquire + fenced ledger",
            }
        );
        let rows: Vec<(String, String)> = vec![
            ("zookeeper".into(), self.zookeeper.clone()),
            (
                "acquisitions".into(),
                format!(
                    "{} (holds announced to the resource: lockwright {}, Curator {})",
                    self.acquisitions,
                    self.holds_by(false),
                    self.holds_by(true)
                ),
            ),
            (
                "faults".into(),
                if self.servers > 1 {
                    format!(
                        "kill {}  pause {}  cut {}  stall {}  leader-kill {}  server-pause {}  partition {}  lag {}  (aimed at the holder: {})",
                        f.kill,
                        f.pause,
                        f.cut,
                        f.stall,
                        f.leader_kill,
                        f.server_pause,
                        f.partition,
                        f.lag,
                        f.aimed_at_holder
                    )
                } else {
                    format!(
                        "kill {}  pause {}  cut {}  stall {}  restart {}  (aimed at the holder: {})",
                        f.kill, f.pause, f.cut, f.stall, f.restart, f.aimed_at_holder
                    )
                },
            ),
            (
                "".into(),
                format!(
                    "stalls past the session timeout {}, connections reset {}, replacements {}",
                    f.stalls_past_session_timeout, f.connections_reset, self.replacements
                ),
            ),
            (
                "holder overlaps".into(),
                format!(
                    "{} obtains overlapped {} old holds: session expired {}, still alive {}, unchecked {} (asked within {} ms)",
                    self.overlaps,
                    self.overlapped_holds,
                    self.overlapped_holds_session_expired,
                    self.overlapped_holds_session_alive,
                    self.overlapped_holds_unchecked,
                    self.overlap_check_max_delay_ms
                ),
            ),
            (
                "fenced writes".into(),
                format!(
                    "{} accepted, {} rejected",
                    l.writes_accepted, l.writes_rejected
                ),
            ),
            (
                "stale writes accepted".into(),
                format!("{} (of {} stale writes)", l.stale_writes_accepted, l.stale_writes),
            ),
            (
                "after a rejection".into(),
                format!(
                    "{} (still held per ensure_valid: {})",
                    if l.lost_reasons.is_empty() {
                        "no rejection".to_string()
                    } else {
                        l.lost_reasons
                            .iter()
                            .map(|(k, v)| format!("{k} {v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                    l.rejected_while_valid
                ),
            ),
            (
                "accepted in the grant window".into(),
                format!(
                    "{} (a newer grant announced, its first write not yet made)",
                    l.accepted_after_newer_grant
                ),
            ),
            (
                "client lock errors".into(),
                format!(
                    "{} (reported, and the client went on; unexplained by a fault: {})",
                    l.client_errors, self.client_errors_unexplained
                ),
            ),
            ("servers".into(), self.servers.to_string()),
            (
                "critical sections".into(),
                format!(
                    "{} (increments acknowledged {}, rejected {}, reply lost {}, abandoned {})",
                    self.critical_sections,
                    l.increments_acked,
                    l.increments_rejected,
                    l.increments_unknown,
                    l.counter_errors
                ),
            ),
            (
                "counter".into(),
                match self.counter_final {
                    Some(c) => format!(
                        "final {c}, lost increments {}, phantom {} (landed unreported, the writer killed: {})",
                        self.lost_increments,
                        self.verdict.phantom_increments,
                        self.verdict.unreported_by_killed
                    ),
                    None => "none (resource checked)".to_string(),
                },
            ),
            (
                "transaction log".into(),
                match (&self.verdict.log, &self.verdict.log_skipped) {
                    (Some(g), _) => format!(
                        "{} txns, {} lock nodes ({} taken by a session close), {} counter writes, {} holds matched: log violations {}, exact-counter disagreements {}",
                        g.transactions,
                        g.lock_nodes,
                        g.taken_by_session_close,
                        g.counter_writes,
                        g.holds_checked,
                        self.log_violations,
                        self.verdict.counter_log_violations.len()
                    ),
                    (None, Some(why)) => format!("not judged: {why}"),
                    (None, None) => "not judged".to_string(),
                },
            ),
            (
                "trace check".into(),
                match &self.verdict.trace.trace_skipped {
                    Some(why) => format!("not made: {why}"),
                    None => format!(
                        "{} client events ({} model steps, {} observations), {} unmatched{}",
                        self.trace_events,
                        self.verdict.trace.trace_model_steps,
                        self.verdict.trace.trace_observations,
                        self.trace_unmatched,
                        self.trace_first_unmatched
                            .as_deref()
                            .map(|f| format!(", first: {f}"))
                            .unwrap_or_default()
                    ),
                },
            ),
            (
                "leftover lock nodes".into(),
                self.leftover_nodes.to_string(),
            ),
            (
                "client requests".into(),
                if l.clients_reporting_stats == 0 {
                    "no client reported (all killed?)".to_string()
                } else {
                    format!(
                        "{} (from the {} clients that ended normally)",
                        l.client_stats
                            .iter()
                            .map(|(k, v)| format!("{k} {v}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        l.clients_reporting_stats
                    )
                },
            ),
            (
                "elapsed".into(),
                format!(
                    "{:.1} s, {:.0} acquisitions/s",
                    self.wall_secs, self.acquisitions_per_sec
                ),
            ),
        ];
        for (k, v) in rows {
            s += &format!("  {k:<30}{v}\n");
        }
        for o in self
            .overlap_samples
            .iter()
            .filter(|o| o.verdict != "session-expired")
        {
            s += &format!(
                "  overlap at {:.1}s: client {} obtained while {} held (session {}): {}{}\n",
                o.at_secs,
                o.newcomer,
                o.holder,
                o.holder_session.as_deref().unwrap_or("?"),
                o.verdict,
                o.evidence
                    .as_deref()
                    .map_or(String::new(), |e| format!(" [{e}]"))
            );
        }
        for w in l.stale_samples.iter().filter(|w| w.accepted).take(5) {
            s += &format!(
                "  stale write accepted: client {} (pid {}) hold {} write {} token {:#x} after {:#x}\n",
                w.client, w.pid, w.seq, w.n, w.token, w.highest_before
            );
        }
        if let Some(g) = &self.verdict.log {
            for v in g.violations.iter().take(10) {
                s += &format!("  log violation: {v}\n");
            }
        }
        for e in self.verdict.unexplained_errors.iter().take(5) {
            s += &format!("  unexplained client error: {e}\n");
        }
        for c in &self.client_failures {
            s += &format!("  client failure: {c}\n");
        }
        if self.passed() {
            s += "  PASSED\n";
        } else {
            for f in &self.failures {
                s += &format!("  FAILED: {f}\n");
            }
        }
        s
    }
}

/// Writes the summary (text or JSON) to `out`.
///
/// # Errors
/// Write failures.
pub fn print_summary(s: &ZkRunSummary, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(s)?)?;
    } else {
        write!(out, "{}", s.render())?;
    }
    Ok(())
}
