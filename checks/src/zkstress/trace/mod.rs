//! Trace validation: every `zk-stress-run` replayed through the ZooKeeper model.
//!
//! Each lockwright client process records the requests its mutex sent and the answers it got
//! ([`record`]). After the run those records are merged with ZooKeeper's transaction log
//! ([`merge()`]): the log fixes the server's order, and each client event gets its place in it —
//! a write at its own zxid, a read at the first point of the log whose state is what the read
//! returned (and not before the client's previous event). The merged trace is then replayed
//! through the model of the variant the clients run ([`replay()`]): each event becomes the model
//! action its request names (chosen from the event and the log, never from what the model
//! happens to allow), which must be enabled in the state the previous ones reached; where the
//! answer says where the client goes (granted, waiting, node gone), the model's client must go
//! there too; and the model's enforced properties must hold along the way.
//! `docs/zookeeper-stress.md` ("Trace validation") has the abstraction.

pub mod merge;
pub mod record;
pub mod replay;

use std::path::Path;

use serde::Serialize;

use super::txnlog::Txn;
pub use merge::{merge, Kind, Placed};
pub use replay::{replay, Replayed};

/// What the trace check reports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceVerdict {
    /// Client events merged into the log's order and replayed (model steps and observations).
    pub trace_events: u64,
    /// Events that could not be placed in the log's order, plus, from the first step the model
    /// could not take, that step and every one after it (not replayed): MUST be 0.
    pub trace_unmatched: u64,
    /// The first of them: the step, the model state, the enabled actions.
    pub trace_first_unmatched: Option<String>,
    /// Model actions the replay took (the other events are observations or no model step:
    /// `sync`, `ensure_valid`'s `exists`, a read that failed).
    pub trace_model_steps: u64,
    /// Observations compared with the model's client (a guard returned, an acquire failed).
    pub trace_observations: u64,
    /// Deletes the model's client made of a node already gone, which the recipe does not
    /// send (`replay::implied_release`): the one step the replay takes without a request.
    pub trace_implied_deletes: u64,
    /// Grants judged at the grant: a listing that made its client lowest is placed at the
    /// point of the log it reflects; there the client's node must be the live one created
    /// first (by `czxid`, the log's order). MUST be empty.
    pub trace_grant_violations: Vec<String>,
    /// Grants so judged.
    pub trace_grants_checked: u64,
    /// Why the trace was not checked, if it was not (no log, foreign clients, too many).
    pub trace_skipped: Option<String>,
}

/// Reads every trace file in `dir` (`c<id>-p<n>.jsonl`), grouped by client id, each client's
/// processes in the order they were started.
///
/// # Errors
/// The directory or a file cannot be read.
pub fn read_dir(dir: &Path) -> anyhow::Result<Vec<(u8, Vec<record::Event>)>> {
    let mut files: Vec<(u8, usize, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let Some((c, p)) = stem.strip_prefix('c').and_then(|r| r.split_once("-p")) else {
            continue;
        };
        if let (Ok(c), Ok(p)) = (c.parse(), p.parse()) {
            files.push((c, p, path.clone()));
        }
    }
    files.sort();
    let mut out = Vec::new();
    for (c, _, path) in files {
        out.push((c, record::read_events(&path)?));
    }
    Ok(out)
}

/// The model a run's trace is replayed through: the Curator recipe (what the lockwright
/// clients run), `clients` of them, none reentrant, no symmetry, the write mode of the run's
/// resource, and the fault kinds a real run has (expiry, lost replies, restarts and kills, a
/// reaped lock directory), each with the largest budget; the replay refills the budgets
/// before every step, so no run exhausts them.
pub fn model_for(
    clients: u8,
    writes: lockwright_model::zk::WriteMode,
) -> lockwright_model::zk::Scenario {
    use lockwright_model::zk::{Faults, Scenario, Variant};
    Scenario::new(Variant::Curator, writes)
        .with_clients(clients)
        .with_reentrant(false)
        .with_symmetry(false)
        .with_faults(Faults {
            expire: u8::MAX,
            lose_reply: u8::MAX,
            restart: u8::MAX,
            recreate_parent: u8::MAX,
            ..Faults::NONE
        })
}

/// Merges and replays one run. `clients` lockwright clients (model client ids), the lock
/// directory, the counter znode and its value before the clients started, the scenario the
/// clients run.
pub fn check(
    procs: &[(u8, Vec<record::Event>)],
    txns: &[Txn],
    dir: &str,
    counter: &str,
    counter_initial: Option<u64>,
    model: lockwright_model::zk::Scenario,
) -> TraceVerdict {
    let merged = merge(procs, txns, dir, counter, counter_initial);
    let r = replay(&merged.steps, model);
    let unplaced = merged.unplaced.len() as u64;
    TraceVerdict {
        trace_events: merged.events,
        trace_unmatched: unplaced + r.unmatched,
        trace_first_unmatched: merged.unplaced.first().cloned().or(r.first_unmatched),
        trace_model_steps: r.actions,
        trace_observations: r.observations,
        trace_implied_deletes: r.implied_deletes,
        trace_grant_violations: merged.grant_violations.clone(),
        trace_grants_checked: merged
            .steps
            .iter()
            .filter(|p| matches!(p.kind, Kind::Listed { lowest: true, .. }))
            .count() as u64,
        trace_skipped: None,
    }
}

#[cfg(test)]
mod tests;
