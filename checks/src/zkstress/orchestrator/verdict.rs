//! The oracles that do not trust the lock, run by the orchestrator around the clients: the
//! lost-update counter (made before the clients start, read after they stopped), the lock
//! nodes left at the end, the server's transaction log (`super::super::txnlog`), and which
//! client errors a fault explains.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context;
use lockwright::zk::{block_on, CoordError, Coordination, GuardedOp, ZkClient};
use serde::Serialize;

use super::{RunConfig, Server};
use crate::zkstress::client::parse_counter;
use crate::zkstress::ledger::{LedgerHistory, LedgerReport, ResourceMode};
use crate::zkstress::txnlog::{self, LogVerdict};

/// What the oracles found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Verdict {
    /// The counter before the clients started (0 on a throwaway server).
    pub counter_initial: Option<u64>,
    /// The counter after they stopped.
    pub counter_final: Option<u64>,
    /// Acknowledged increments missing from the final value: MUST be 0.
    pub lost_increments: u64,
    /// Increments in the final value beyond the acknowledged and the unknown ones, and beyond
    /// those explained by a kill (below): MUST be 0.
    pub phantom_increments: u64,
    /// Counter writes that landed but that no client reported, because the `kill` fault
    /// killed the writer between its write and its report: found in the transaction log (the
    /// write's lock node is a hold of a killed process with no report for that hold); without
    /// a log, at most one per kill.
    pub unreported_by_killed: u64,
    /// Lock nodes still in the lock directory once every client's session had time to end.
    pub leftover_nodes: Vec<String>,
    /// The transaction log's findings (`None`: the server is not ours, its log unreadable).
    pub log: Option<LogVerdict>,
    /// Why the log was not judged, if it was not.
    pub log_skipped: Option<String>,
    /// The exact counter from the log (`txnlog::judge_counter`): the log's counter writes,
    /// in order, are the increments from the initial to the final value, each value once.
    /// Empty when it holds, or when it was not judged (no log, or a counter kept in the
    /// resource rather than in ZooKeeper). MUST be empty.
    pub counter_log_violations: Vec<String>,
    /// Client errors no fault explains (the rule: `unexplained_errors` in this module).
    pub unexplained_errors: Vec<String>,
    /// The trace check: every lockwright client's requests and answers, merged with the
    /// log and replayed through the model (`crate::zkstress::trace`).
    pub trace: crate::zkstress::trace::TraceVerdict,
    /// The transaction log as read (for the trace check; empty when it was not read).
    #[serde(skip)]
    pub txns: Vec<txnlog::Txn>,
}

async fn session(zk: &str, cfg: &RunConfig) -> anyhow::Result<ZkClient> {
    ZkClient::builder()
        .session_timeout(cfg.session_timeout.max(Duration::from_secs(4)))
        .connect(zk)
        .await
        .with_context(|| format!("cannot open a session on {zk} for the counter"))
}

/// Makes the counter znode (value 0) before the clients start, or reads the value it has
/// (a server given with `--connect` may keep it from an earlier run).
///
/// # Errors
/// No session, or a counter that holds no number.
pub(super) fn prepare_counter(zk: &str, cfg: &RunConfig) -> anyhow::Result<u64> {
    let counter = cfg.counter_path();
    block_on(async {
        let zk = session(zk, cfg).await?;
        zk.ensure_dir(&cfg.lock_path)
            .await
            .with_context(|| format!("cannot make the lock directory {}", cfg.lock_path))?;
        match zk
            .guarded_write(None, &[GuardedOp::create(counter.as_str(), "0 -")])
            .await
        {
            Ok(_) => Ok(0),
            Err(e) if e.error == CoordError::NodeExists => {
                let (data, _) = zk.read_node(&counter).await?;
                parse_counter(&data)
                    .with_context(|| format!("the counter {counter} holds no number: delete it"))
            }
            Err(e) => Err(e.error).with_context(|| format!("cannot create the counter {counter}")),
        }
    })
}

/// The server whose reads are up to date at the end: the one server, or the ensemble's
/// leader (a follower may not have applied the last commits), waited for up to 20 s.
fn final_reader(server: &Server) -> anyhow::Result<SocketAddr> {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(a) = server.dump_addr() {
            return Ok(a);
        }
        if Instant::now() >= end {
            anyhow::bail!(
                "the ensemble had no leader at the end of the run to read the counter from"
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// After the clients stopped: waits (up to two session timeouts and 3 s) for the lock
/// directory to empty, then reads the counter (from the leader of an ensemble); then judges
/// the transaction logs of owned servers (an ensemble's logs merged by zxid).
pub(super) fn conclude(
    cfg: &RunConfig,
    server: &Server,
    initial: Option<u64>,
    ledger: &LedgerReport,
    history: &LedgerHistory,
    killed_pids: &[u32],
) -> anyhow::Result<Verdict> {
    let mut v = Verdict {
        counter_initial: initial,
        ..Verdict::default()
    };
    let counter = cfg.counter_path();
    let reader = final_reader(server)?;
    block_on(async {
        let zk = session(&reader.to_string(), cfg).await?;
        let end = Instant::now() + cfg.session_timeout * 2 + Duration::from_secs(3);
        loop {
            let left: Vec<String> = match zk.list_children(&cfg.lock_path).await {
                Ok(l) => l
                    .children
                    .into_iter()
                    .filter(|n| lockwright::zk::names::sequence_of(n).is_some())
                    .map(|n| format!("{}/{n}", cfg.lock_path))
                    .collect(),
                Err(CoordError::NoNode) => Vec::new(),
                Err(_) if Instant::now() < end => {
                    std::thread::sleep(Duration::from_millis(200));
                    continue;
                }
                Err(e) => return Err(e).context("cannot list the lock directory at the end"),
            };
            if left.is_empty() || Instant::now() >= end {
                v.leftover_nodes = left;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if cfg.resource.counter_in_resource() {
            v.counter_final = Some(ledger.resource_counter.unwrap_or(0));
        } else if initial.is_some() {
            let (data, _) = zk
                .read_node(&counter)
                .await
                .with_context(|| format!("cannot read the counter {counter} at the end"))?;
            v.counter_final = parse_counter(&data);
        }
        Ok::<(), anyhow::Error>(())
    })?;
    let mut phantom = 0;
    if let (Some(i), Some(f)) = (initial, v.counter_final) {
        (v.lost_increments, phantom) =
            increments(i, f, ledger.increments_acked, ledger.increments_unknown);
    }
    // Without a log (a server given with `--connect`): a killed writer explains at most one
    // unreported increment.
    v.unreported_by_killed = phantom.min(killed_pids.len() as u64);
    v.phantom_increments = phantom - v.unreported_by_killed;
    let dirs = server.data_dirs();
    if dirs.is_empty() {
        v.log_skipped = Some(format!(
            "the server at {} is not ours: its transaction log is not read",
            server.connect_string()
        ));
        return Ok(v);
    }
    let mut text = Vec::new();
    let mut members = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        match txnlog::read_logs(d) {
            Ok(t) => {
                if let Some(dir) = &cfg.trace_copy {
                    std::fs::create_dir_all(dir)
                        .and_then(|()| std::fs::write(dir.join(format!("txnlog-{i}.txt")), &t))
                        .with_context(|| {
                            format!("cannot copy the transaction log into {}", dir.display())
                        })?;
                }
                members.push(txnlog::parse(&t));
                text.extend(t);
            }
            Err(e) => {
                v.log_skipped = Some(format!("{e:#}"));
                return Ok(v);
            }
        }
    }
    // For a reader who wants the history the verdict came from.
    if let Some(copy) = std::env::var_os("LOCKWRIGHT_TXNLOG_COPY") {
        std::fs::write(&copy, &text)
            .with_context(|| format!("cannot write LOCKWRIGHT_TXNLOG_COPY={copy:?}"))?;
    }
    // Every member's log holds what it logged, committed or not: a proposal of a leader that
    // was killed before a quorum acknowledged it stays in that member's log (epoch 2's
    // `closeSession`s, re-done in epoch 3). Only what a quorum logged was committed.
    let txns = txnlog::committed(&members);
    let mut log = txnlog::judge(&txns, &cfg.lock_path, &counter, &history.holds);
    // Members that logged different transactions under one zxid: the merged history is not
    // one history, and the run fails on it (a ZooKeeper divergence, or a misread log).
    log.violations.extend(txnlog::diverged(&members));
    if !cfg.resource.counter_in_resource() {
        if let (Some(i), Some(f)) = (initial, v.counter_final) {
            v.counter_log_violations = txnlog::judge_counter(&log, i, f);
        }
    }
    v.unreported_by_killed = unreported_by_killed(&log, history, killed_pids).min(phantom);
    v.phantom_increments = phantom - v.unreported_by_killed;
    v.log = Some(log);
    v.txns = txns;
    Ok(v)
}

/// `(lost, phantom)` from the counter before and after and what the clients reported: an
/// acknowledged increment the counter does not show is lost; an increment the counter shows
/// beyond the acknowledged and the unknown (lost reply) ones is a phantom.
fn increments(initial: u64, final_value: u64, acked: u64, unknown: u64) -> (u64, u64) {
    let applied = final_value.saturating_sub(initial);
    (
        acked.saturating_sub(applied),
        applied.saturating_sub(acked + unknown),
    )
}

/// Counter writes in the log whose lock node is a hold of a process the `kill` fault killed,
/// with no report from that process for that hold: the write landed, the report never left.
fn unreported_by_killed(log: &LogVerdict, history: &LedgerHistory, killed_pids: &[u32]) -> u64 {
    let by_token: std::collections::HashMap<i64, (u32, u64)> = history
        .holds
        .iter()
        .map(|h| (h.token, (h.pid, h.seq)))
        .collect();
    log.counter_writers
        .iter()
        .filter_map(|w| by_token.get(&(*w)?))
        .filter(|(pid, seq)| {
            killed_pids.contains(pid) && !history.increments_reported.contains(&(*pid, *seq))
        })
        .count() as u64
}

/// How long before a client error a fault must have started to explain it: an acquire waits
/// up to `acquire_patience`; anything else fails within a pause (two session timeouts and a
/// second) plus two session timeouts of reconnecting.
pub(super) fn unexplained_errors(
    history: &LedgerHistory,
    fault_times: &[Instant],
    cfg: &RunConfig,
    acquire_patience: Duration,
) -> Vec<String> {
    let base = cfg.session_timeout * 4 + Duration::from_secs(2);
    history
        .errors
        .iter()
        .filter(|(at, _, text)| {
            let window = if text.contains("acquire") {
                base + acquire_patience
            } else {
                base
            };
            !fault_times
                .iter()
                .any(|f| *f <= *at && at.duration_since(*f) <= window)
        })
        .map(|(_, client, text)| format!("client {client}: {text}"))
        .collect()
}

/// The trace check of a finished run: the clients' records in `trace_dir` merged with the
/// log and replayed through the correct model (`Curator` recipe, the run's write mode, fault
/// budgets refilled before every step). Skipped (said why) without a log, with Curator clients (their
/// requests are not recorded, but their nodes are in the directory), or with more clients than
/// the model has.
pub(super) fn trace_check(
    cfg: &RunConfig,
    trace_dir: &std::path::Path,
    v: &Verdict,
    counter_initial: Option<u64>,
) -> crate::zkstress::trace::TraceVerdict {
    use crate::zkstress::trace::{self, TraceVerdict};
    use lockwright_model::zk::WriteMode;
    let skip = |why: String| TraceVerdict {
        trace_skipped: Some(why),
        ..TraceVerdict::default()
    };
    if v.txns.is_empty() {
        return skip("no transaction log was read".into());
    }
    if cfg.curator_clients > 0 {
        return skip(
            "Curator clients are not recorded (their nodes would be unknown to the model)".into(),
        );
    }
    let Ok(clients) = u8::try_from(cfg.clients).map_err(drop).and_then(|n| {
        if (1..=8).contains(&n) {
            Ok(n)
        } else {
            Err(())
        }
    }) else {
        return skip(format!("{} clients: the model has at most 8", cfg.clients));
    };
    // For a reader who wants the records the verdict came from.
    if let Some(copy) = &cfg.trace_copy {
        let _ = std::fs::create_dir_all(copy);
        if let Ok(entries) = std::fs::read_dir(trace_dir) {
            for e in entries.flatten() {
                let _ = std::fs::copy(e.path(), copy.join(e.file_name()));
            }
        }
    }
    let procs = match trace::read_dir(trace_dir) {
        Ok(p) => p,
        Err(e) => return skip(format!("the traces cannot be read: {e:#}")),
    };
    let writes = match cfg.resource {
        ResourceMode::Guarded => WriteMode::Guarded,
        ResourceMode::Unchecked => WriteMode::Unfenced,
        _ => WriteMode::Fenced,
    };
    let model = trace::model_for(clients, writes);
    let counter_initial = if cfg.resource.has_counter() && !cfg.resource.counter_in_resource() {
        counter_initial
    } else {
        None
    };
    trace::check(
        &procs,
        &v.txns,
        &cfg.lock_path,
        &cfg.counter_path(),
        counter_initial,
        model,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RunConfig {
        RunConfig {
            clients: 2,
            curator_clients: 0,
            acquisitions: 1,
            hold: Duration::ZERO,
            session_timeout: Duration::from_secs(1),
            faults: Vec::new(),
            fault_every: Duration::from_secs(1),
            min_each_fault: 0,
            seed: 0,
            resource: crate::zkstress::ledger::ResourceMode::Guarded,
            connect: None,
            servers: 1,
            lock_path: "/l".to_string(),
            exe: std::path::PathBuf::new(),
            peers_dir: None,
            max_duration: Duration::from_secs(1),
            progress: false,
            client_variant: None,
            trace_copy: None,
        }
    }

    /// An error right after a fault is explained; the same error with no fault before it (or
    /// one long before) is not: the check can fail.
    #[test]
    fn a_client_error_without_a_fault_before_it_is_unexplained() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let history = LedgerHistory {
            holds: Vec::new(),
            errors: vec![
                (at(10), 1, "release: connection lost".to_string()),
                (at(40), 2, "acquire: timed out".to_string()),
                (at(100), 3, "release: connection lost".to_string()),
            ],
            ..LedgerHistory::default()
        };
        let patience = Duration::from_secs(30);
        // One fault at 8 s: explains the release at 10 s and the acquire at 40 s (within the
        // patience), not the release at 100 s.
        let u = unexplained_errors(&history, &[at(8)], &cfg(), patience);
        assert_eq!(u, vec!["client 3: release: connection lost".to_string()]);
        // No fault at all: nothing is explained.
        assert_eq!(unexplained_errors(&history, &[], &cfg(), patience).len(), 3);
    }

    /// The counter's arithmetic at its edges: exactly one acknowledged increment missing is
    /// one lost; exactly one increment beyond the acknowledged and unknown ones is one
    /// phantom; an unknown (lost reply) increment that landed or not is neither. Each of the
    /// first two fails the run.
    #[test]
    fn one_lost_increment_and_one_phantom_each_fail_the_run() {
        use super::super::tally::oracle_failures;
        assert_eq!(increments(10, 20, 10, 0), (0, 0));
        assert_eq!(
            increments(10, 19, 10, 0),
            (1, 0),
            "one acknowledged increment lost"
        );
        assert_eq!(
            increments(10, 21, 10, 0),
            (0, 1),
            "one increment nobody made"
        );
        assert_eq!(increments(10, 21, 10, 1), (0, 0), "the unknown one landed");
        assert_eq!(increments(10, 20, 10, 1), (0, 0), "the unknown one did not");
        let fails = |lost, phantom| {
            oracle_failures(&Verdict {
                lost_increments: lost,
                phantom_increments: phantom,
                ..Verdict::default()
            })
        };
        assert!(fails(0, 0).is_empty());
        assert_eq!(fails(1, 0).len(), 1);
        assert_eq!(fails(0, 1).len(), 1);
        let exact = oracle_failures(&Verdict {
            counter_log_violations: vec!["zxid 0x12: the counter set to 7 again".into()],
            ..Verdict::default()
        });
        assert_eq!(exact.len(), 1, "{exact:?}");
    }

    /// One trace step the model does not take fails the run, with the step in the message;
    /// a skipped trace check (said why) does not.
    #[test]
    fn one_unmatched_trace_step_fails_the_run() {
        use super::super::tally::oracle_failures;
        use crate::zkstress::trace::TraceVerdict;
        let with = |trace| {
            oracle_failures(&Verdict {
                trace,
                ..Verdict::default()
            })
        };
        let f = with(TraceVerdict {
            trace_events: 10,
            trace_unmatched: 1,
            trace_first_unmatched: Some("trace step #9: the model does not allow X".into()),
            ..TraceVerdict::default()
        });
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("does not allow X"), "{f:?}");
        assert!(with(TraceVerdict {
            trace_events: 10,
            ..TraceVerdict::default()
        })
        .is_empty());
        assert!(with(TraceVerdict {
            trace_skipped: Some("Curator clients are not recorded".into()),
            ..TraceVerdict::default()
        })
        .is_empty());
    }

    /// A counter write the log shows, made under a hold of a process the kill fault killed
    /// before it reported the write, is explained; the same write by a process that was not
    /// killed, or that reported the write, is not (it stays a phantom increment).
    #[test]
    fn an_unreported_write_is_explained_only_by_a_kill_of_its_writer() {
        use crate::zkstress::ledger::HoldRecord;
        let hold = |pid, seq, token| HoldRecord {
            client: 0,
            pid,
            seq,
            token,
            session: 1,
        };
        let mut history = LedgerHistory {
            holds: vec![hold(100, 1, 0x10), hold(100, 2, 0x20), hold(200, 1, 0x30)],
            ..LedgerHistory::default()
        };
        history.increments_reported.insert((100, 1));
        let log = LogVerdict {
            counter_writers: vec![Some(0x10), Some(0x20), Some(0x30), None],
            ..LogVerdict::default()
        };
        // 0x10: reported. 0x20: pid 100 killed, not reported: explained. 0x30: pid 200 not
        // killed: not explained. None: no such node: not explained.
        assert_eq!(unreported_by_killed(&log, &history, &[100]), 1);
        assert_eq!(unreported_by_killed(&log, &history, &[]), 0);
        assert_eq!(unreported_by_killed(&log, &history, &[100, 200]), 2);
    }
}
