//! What a run saw (faults, the fault log, replacements, client failures), and the
//! [`ZkRunSummary`] it makes together with the overlap check's findings and its failures.

use std::time::Instant;

use super::overlaps::OverlapFindings;
use super::{FaultCounts, FaultKind, RunConfig, Server, Verdict, ZkRunSummary};
use crate::stress::server::ServerReport;
use crate::zkstress::ledger::LedgerReport;

/// What the phases of a run record, for the summary.
pub(super) struct Tally {
    start: Instant,
    /// The enabled fault kinds, sorted, each once.
    kinds: Vec<FaultKind>,
    pub(super) faults: FaultCounts,
    /// The first 200 faults and server restarts, with their times.
    fault_log: Vec<String>,
    /// When each fault (and each server return) happened, all of them.
    pub(super) fault_times: Vec<Instant>,
    pub(super) replacements: u64,
    /// The pids of the client processes the `kill` fault killed.
    pub(super) killed_pids: Vec<u32>,
    /// Clients that failed, and clients that would not stop.
    pub(super) failures_seen: Vec<String>,
    pub(super) timed_out: bool,
    /// What ended the run early (the server did not come back from a restart).
    pub(super) fatal: Option<anyhow::Error>,
}

impl Tally {
    pub(super) fn new(start: Instant, kinds: Vec<FaultKind>) -> Self {
        Tally {
            start,
            kinds,
            faults: FaultCounts::default(),
            fault_log: Vec::new(),
            fault_times: Vec::new(),
            replacements: 0,
            killed_pids: Vec::new(),
            failures_seen: Vec::new(),
            timed_out: false,
            fatal: None,
        }
    }

    /// Adds a line to the fault log (the first 200 lines are kept).
    pub(super) fn log(&mut self, line: String) {
        self.fault_times.push(Instant::now());
        if self.fault_log.len() < 200 {
            self.fault_log.push(format!(
                "t={:.1}s {line}",
                self.start.elapsed().as_secs_f64()
            ));
        }
    }

    /// The summary of the finished run.
    pub(super) fn into_summary(
        self,
        cfg: &RunConfig,
        server: &Server,
        overlaps: &OverlapFindings,
        server_report: ServerReport,
        (ledger, verdict): (LedgerReport, Verdict),
    ) -> ZkRunSummary {
        let acquisitions = server_report.stats.acquisitions;
        let wall = self.start.elapsed().as_secs_f64();
        let mut failures = failures(cfg, &self, overlaps, &server_report, &ledger);
        failures.extend(oracle_failures(&verdict));
        #[allow(clippy::cast_precision_loss)]
        let per_sec = if wall > 0.0 {
            acquisitions as f64 / wall
        } else {
            0.0
        };
        ZkRunSummary {
            clients: cfg.clients,
            curator_clients: cfg.curator_clients,
            seed: cfg.seed,
            session_timeout_ms: u64::try_from(cfg.session_timeout.as_millis()).unwrap_or(u64::MAX),
            hold_ms: u64::try_from(cfg.hold.as_millis()).unwrap_or(u64::MAX),
            resource: cfg.resource,
            fault_kinds: self.kinds,
            zookeeper: server.describe(),
            acquisitions,
            faults: self.faults,
            fault_log: self.fault_log,
            overlaps: overlaps.events,
            overlapped_holds: overlaps.holds.len() as u64,
            overlapped_holds_session_expired: overlaps.holds_with("session-expired"),
            overlapped_holds_session_alive: overlaps.holds_with("session-alive"),
            overlapped_holds_unchecked: overlaps.holds_with("unchecked"),
            overlap_check_max_delay_ms: overlaps.max_delay_ms(),
            overlap_samples: overlaps.samples(),
            servers: server.count(),
            critical_sections: if cfg.resource.has_counter() {
                ledger.increments_acked
                    + ledger.increments_rejected
                    + ledger.increments_unknown
                    + ledger.counter_errors
            } else {
                ledger.holds
            },
            counter_final: verdict.counter_final,
            lost_increments: verdict.lost_increments,
            log_violations: verdict
                .log
                .as_ref()
                .map_or(0, |l| l.violations.len() as u64),
            leftover_nodes: verdict.leftover_nodes.len() as u64,
            trace_events: verdict.trace.trace_events,
            trace_unmatched: verdict.trace.trace_unmatched,
            trace_first_unmatched: verdict.trace.trace_first_unmatched.clone(),
            client_errors: ledger.client_errors,
            client_errors_unexplained: verdict.unexplained_errors.len() as u64,
            verdict,
            ledger,
            replacements: self.replacements,
            client_failures: self.failures_seen,
            wall_secs: wall,
            acquisitions_per_sec: per_sec,
            timed_out: self.timed_out,
            failures,
        }
    }
}

/// Why the run failed, if it did (empty: it passed).
fn failures(
    cfg: &RunConfig,
    t: &Tally,
    overlaps: &OverlapFindings,
    server_report: &ServerReport,
    ledger: &LedgerReport,
) -> Vec<String> {
    let st = &server_report.stats;
    let alive = overlaps.holds_with("session-alive");
    let unchecked = overlaps.holds_with("unchecked");
    let mut failures = Vec::new();
    if ledger.stale_writes_accepted > 0 {
        failures.push(format!(
            "{} stale writes accepted (must be 0)",
            ledger.stale_writes_accepted
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
    if ledger.rejected_while_valid > 0 {
        failures.push(format!(
            "{} rejected writes after which ensure_valid still said the lock was held",
            ledger.rejected_while_valid
        ));
    }
    if st.violations > overlaps.events {
        failures.push(format!(
            "{} verify-server violations other than overlapping obtains: {:?}",
            st.violations - overlaps.events,
            server_report.violation_messages
        ));
    }
    if !t.failures_seen.is_empty() {
        failures.push(format!("{} client failures", t.failures_seen.len()));
    }
    if t.timed_out {
        failures.push(format!(
            "timed out after {:?} (acquisitions {}, faults {:?})",
            cfg.max_duration, st.acquisitions, t.faults
        ));
    }
    for &k in &t.kinds {
        let n = t.faults.of(k);
        if n < cfg.min_each_fault {
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
    failures
}

/// What the oracles that do not trust the lock make fail.
pub(super) fn oracle_failures(v: &Verdict) -> Vec<String> {
    let mut f = Vec::new();
    if v.lost_increments > 0 {
        f.push(format!(
            "{} lost increments (acknowledged, missing from the counter {:?})",
            v.lost_increments, v.counter_final
        ));
    }
    if v.phantom_increments > 0 {
        f.push(format!(
            "{} increments in the counter that no client made",
            v.phantom_increments
        ));
    }
    if !v.counter_log_violations.is_empty() {
        f.push(format!(
            "{} disagreements between the counter and its writes in the log, first: {}",
            v.counter_log_violations.len(),
            v.counter_log_violations[0]
        ));
    }
    if let Some(l) = &v.log {
        if !l.violations.is_empty() {
            f.push(format!(
                "{} transaction-log violations, first: {}",
                l.violations.len(),
                l.violations[0]
            ));
        }
    }
    if v.trace.trace_unmatched > 0 {
        f.push(format!(
            "{} trace events the model does not take, first: {}",
            v.trace.trace_unmatched,
            v.trace.trace_first_unmatched.as_deref().unwrap_or("?")
        ));
    }
    if !v.trace.trace_grant_violations.is_empty() {
        f.push(format!(
            "{} grants of a node not first in line at the log point of their listing, first: {}",
            v.trace.trace_grant_violations.len(),
            v.trace.trace_grant_violations[0]
        ));
    }
    if !v.leftover_nodes.is_empty() {
        f.push(format!(
            "{} lock nodes left after every client stopped: {:?}",
            v.leftover_nodes.len(),
            v.leftover_nodes
        ));
    }
    if !v.unexplained_errors.is_empty() {
        f.push(format!(
            "{} client errors no fault explains, first: {}",
            v.unexplained_errors.len(),
            v.unexplained_errors[0]
        ));
    }
    f
}
