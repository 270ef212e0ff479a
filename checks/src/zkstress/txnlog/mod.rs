//! ZooKeeper's own transaction log as the judge of a `zk-stress-run`.
//!
//! After the run, every `dataDir/version-2/log.*` file is printed by Debian's
//! `org.apache.zookeeper.server.persistence.TxnLogToolkit` (a header line per transaction, zxid
//! order; a `create` wraps inside its ACL, and a `multi`'s operations are printed as raw jute
//! bytes, which may hold newlines) and parsed here into a [`Txn`] list. From that
//! history alone, and nothing the lock's code computed, [`judge`] rebuilds the lock directory
//! zxid by zxid — each lock node's create, its `delete`, the `closeSession` (an expiry too) that
//! took its session's ephemerals — and checks:
//!
//! - **`write by a live lowest node`**: every counter write (a `multi` whose `setData` on the
//!   counter carries `"<value> <writer node>"`) landed while its writer's node existed and no
//!   lower node did: between the writer's creation and deletion, after the deletion of every
//!   lower node. Two nodes both believed to hold while alive would show here. "Lower" is
//!   created earlier (a smaller `czxid`), the log's own order — not the sequence suffix the
//!   recipe compares, which repeats or goes negative once the parent's counter reaches its top.
//! - **`grant of a node that came first`**: every hold a client announced (its token is the
//!   node's `czxid`, so the create with that zxid is its node) names a node created by the
//!   session the client announced, and that node was at some zxid the lowest one alive. The
//!   client's library does not expose the zxid of the `getChildren` reply that made it lowest,
//!   so the grant is judged by "this node was first in line at some point of its life", not at
//!   a given zxid; the writes above carry the zxid-exact check.
//! - **`nodes left`**: lock nodes alive at the end of the log.
//!
//! Each disagreement is reported with the client's view (which client, which hold).

mod parse;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use lockwright::zk::names::sequence_of;
use serde::Serialize;

use super::ledger::HoldRecord;
pub use parse::{parse, read_logs, Op, Txn};

/// What the log says about the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LogVerdict {
    /// Transactions read.
    pub transactions: u64,
    /// Lock nodes created in the lock directory.
    pub lock_nodes: u64,
    /// Lock nodes whose session's `closeSession` took them (expiries, killed clients).
    pub taken_by_session_close: u64,
    /// Counter writes in the log, and the last value written.
    pub counter_writes: u64,
    pub counter_last: Option<u64>,
    /// Holds announced and matched to a node of the log.
    pub holds_checked: u64,
    /// Lock nodes alive at the end of the log.
    pub nodes_left: Vec<String>,
    /// Every disagreement, with the client's view.
    pub violations: Vec<String>,
    /// What became of each lock node, by its `czxid` (a hold's token): "deleted by its own
    /// session at zxid …", "deleted by session … at zxid …", "taken by its session's close at
    /// zxid …" or "alive at the end of the log". For the report on an overlap the log does
    /// not judge by itself.
    #[serde(skip)]
    pub fates: HashMap<i64, String>,
    /// The writer of each counter write, as the `czxid` of the lock node its data names
    /// (`None`: a node the log never created).
    #[serde(skip)]
    pub counter_writers: Vec<Option<i64>>,
    /// Each counter write, in zxid order: its zxid and the value it set (`None`: data that
    /// holds no number). For [`judge_counter`].
    #[serde(skip)]
    pub counter_values: Vec<(i64, Option<u64>)>,
}

#[derive(Clone, Debug)]
struct Node {
    path: String,
    session: i64,
    czxid: i64,
    /// When it became the lowest node alive, if it ever did.
    first_at: Option<i64>,
    deleted_at: Option<i64>,
    /// How it went: see [`LogVerdict::fates`].
    fate: Option<String>,
}

/// The exact counter, from the log alone: with the counter at `initial` before the clients
/// started and at `final_value` after they stopped, its writes in zxid order must set
/// `initial + 1`, `initial + 2`, …, `final_value`: one write per increment, none skipped, no
/// value written twice. A value written twice is two writers that read the same value (a lost
/// update), even when a lost reply or an unreported write makes the acknowledged count come out
/// right; a write count other than `final_value - initial` is a write the final value does not
/// show. Returns each disagreement (empty: exact).
#[must_use]
pub fn judge_counter(log: &LogVerdict, initial: u64, final_value: u64) -> Vec<String> {
    let mut out = Vec::new();
    let Some(applied) = final_value.checked_sub(initial) else {
        out.push(format!(
            "the counter went down: {initial} before the clients started, {final_value} after"
        ));
        return out;
    };
    if log.counter_writes != applied {
        out.push(format!(
            "the log has {} counter writes, the counter rose by {applied} ({initial} to {final_value})",
            log.counter_writes
        ));
    }
    let mut seen: HashMap<u64, i64> = HashMap::new();
    let mut last = initial;
    for &(zxid, value) in &log.counter_values {
        let Some(value) = value else {
            out.push(format!(
                "zxid {zxid:#x}: a counter write that holds no number"
            ));
            continue;
        };
        if let Some(first) = seen.insert(value, zxid) {
            out.push(format!(
                "zxid {zxid:#x}: the counter set to {value} again (first at zxid {first:#x}): two writers read the same value, an increment is lost"
            ));
        } else if value != last + 1 {
            out.push(format!(
                "zxid {zxid:#x}: the counter set to {value} right after {last}: a write that did not read the value before it"
            ));
        }
        last = last.max(value);
    }
    out
}

/// The committed history of an ensemble from its members' logs (each parsed on its own):
/// the transactions a quorum of members logged (a majority of `members.len()`) with the same
/// content, one copy each, in zxid order. A member logs a proposal before it acknowledges it,
/// and the leader commits only what a quorum acknowledged, so a committed transaction is in a
/// quorum's logs; a proposal of a leader killed before that is in fewer, and the next leader
/// never applied it. One member: its whole log. Members that logged different transactions
/// under one zxid are [`diverged`]'s business: such a zxid counts only the copies that agree.
#[must_use]
pub fn committed(members: &[Vec<Txn>]) -> Vec<Txn> {
    let quorum = members.len() / 2 + 1;
    by_zxid(members)
        .into_values()
        .filter_map(|copies| {
            copies
                .iter()
                .find(|t| copies.iter().filter(|u| u == t).count() >= quorum)
                .map(|t| (*t).clone())
        })
        .collect()
}

/// Zxids that members logged with different content: ZooKeeper gives each proposal one zxid
/// (a new leader starts a new epoch), so two members that disagree on one have diverged
/// histories (or the parser reads one of them wrong) — either way no verdict built on the
/// merged log can be trusted. One message per zxid, naming what each member logged.
#[must_use]
pub fn diverged(members: &[Vec<Txn>]) -> Vec<String> {
    by_zxid(members)
        .into_iter()
        .filter(|(_, copies)| copies.iter().any(|t| *t != copies[0]))
        .map(|(zxid, copies)| {
            let logged: Vec<String> = copies.iter().map(|t| format!("{:?}", t.op)).collect();
            format!(
                "zxid {zxid:#x}: members logged different transactions: {}",
                logged.join(" / ")
            )
        })
        .collect()
}

/// Each zxid's copies, at most one per member (a member's first).
fn by_zxid(members: &[Vec<Txn>]) -> BTreeMap<i64, Vec<&Txn>> {
    let mut seen: BTreeMap<i64, Vec<&Txn>> = BTreeMap::new();
    for m in members {
        let mut mine = BTreeSet::new();
        for t in m {
            if mine.insert(t.zxid) {
                seen.entry(t.zxid).or_default().push(t);
            }
        }
    }
    seen
}

/// Rebuilds the lock directory `dir` from `txns` and judges the counter writes on `counter` and
/// the announced `holds` (see the module docs).
pub fn judge(txns: &[Txn], dir: &str, counter: &str, holds: &[HoldRecord]) -> LogVerdict {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let mut v = LogVerdict {
        transactions: txns.len() as u64,
        ..LogVerdict::default()
    };
    let mut nodes: HashMap<String, Node> = HashMap::new();
    // Alive lock nodes in the order the server created them (by `czxid`), not by the sequence
    // suffix the recipe orders by: the log's own order, which the lock's code does not
    // compute, and which stays creation order where the suffix does not (the parent's counter
    // sticks at 2^31-1 and repeats, or wraps negative, DESIGN.md).
    let mut alive: BTreeMap<i64, String> = BTreeMap::new();
    let mut by_session: HashMap<i64, BTreeSet<String>> = HashMap::new();
    for t in txns {
        match &t.op {
            Op::Create { path, ephemeral } if path.starts_with(&prefix) => {
                if sequence_of(path).is_none() {
                    continue;
                }
                if !*ephemeral {
                    v.violations.push(format!(
                        "zxid {:#x}: lock node {path} created persistent",
                        t.zxid
                    ));
                }
                v.lock_nodes += 1;
                nodes.insert(
                    path.clone(),
                    Node {
                        path: path.clone(),
                        session: t.session,
                        czxid: t.zxid,
                        first_at: None,
                        deleted_at: None,
                        fate: None,
                    },
                );
                alive.insert(t.zxid, path.clone());
                by_session
                    .entry(t.session)
                    .or_default()
                    .insert(path.clone());
            }
            Op::Delete { path } => {
                let by = match nodes.get(path) {
                    Some(n) if n.session == t.session => "deleted by its own session".to_string(),
                    _ => format!("deleted by session {:#x}", t.session),
                };
                gone(path, t.zxid, &by, &mut nodes, &mut alive);
            }
            Op::CloseSession { ephemerals } => {
                let mut taken: BTreeSet<String> = by_session.remove(&t.session).unwrap_or_default();
                taken.extend(
                    ephemerals
                        .iter()
                        .filter(|p| p.starts_with(&prefix))
                        .cloned(),
                );
                for p in taken {
                    if nodes.get(&p).is_some_and(|n| n.deleted_at.is_none()) {
                        v.taken_by_session_close += 1;
                    }
                    gone(
                        &p,
                        t.zxid,
                        "taken by its session's close",
                        &mut nodes,
                        &mut alive,
                    );
                }
            }
            Op::Multi { checks, set_data } => {
                for (path, data) in set_data.iter().filter(|(p, _)| p == counter) {
                    v.counter_writes += 1;
                    let mut words = data.split_whitespace();
                    v.counter_last = words.next().and_then(|x| x.parse().ok());
                    v.counter_values.push((t.zxid, v.counter_last));
                    let writer = words.next().unwrap_or("");
                    v.counter_writers.push(nodes.get(writer).map(|n| n.czxid));
                    judge_write(&mut v, t, path, writer, checks, &nodes, &alive);
                }
            }
            _ => {}
        }
        // Who is first in line after this transaction.
        if let Some((_, first)) = alive.iter().next() {
            if let Some(n) = nodes.get_mut(first) {
                n.first_at.get_or_insert(t.zxid);
            }
        }
    }
    v.fates = nodes
        .values()
        .map(|n| {
            let fate = match (&n.fate, n.deleted_at) {
                (Some(how), Some(z)) => format!("{} {how} at zxid {z:#x}", n.path),
                _ => format!("{} alive at the end of the log", n.path),
            };
            (n.czxid, fate)
        })
        .collect();
    let by_czxid: HashMap<i64, &Node> = nodes.values().map(|n| (n.czxid, n)).collect();
    for h in holds {
        let Some(n) = by_czxid.get(&h.token) else {
            v.violations.push(format!(
                "client {} (pid {}) hold {} announced token {:#x}: the log has no lock node created at that zxid",
                h.client, h.pid, h.seq, h.token
            ));
            continue;
        };
        v.holds_checked += 1;
        if n.session != h.session {
            v.violations.push(format!(
                "client {} hold {}: node {} was created by session {:#x}, the client announced session {:#x}",
                h.client, h.seq, n.path, n.session, h.session
            ));
        }
        if n.first_at.is_none() {
            v.violations.push(format!(
                "client {} (pid {}) hold {} believed it held {} (token {:#x}), but the log never shows that node first in line (deleted at {})",
                h.client,
                h.pid,
                h.seq,
                n.path,
                h.token,
                n.deleted_at.map_or("never".to_string(), |z| format!("{z:#x}"))
            ));
        }
    }
    v.nodes_left = alive.into_values().collect();
    v
}

/// Marks the lock node `path` deleted at `zxid` (an explicit delete or its session's close),
/// `how` as its fate.
fn gone(
    path: &str,
    zxid: i64,
    how: &str,
    nodes: &mut HashMap<String, Node>,
    alive: &mut BTreeMap<i64, String>,
) {
    if let Some(n) = nodes.get_mut(path) {
        if n.deleted_at.is_none() {
            n.deleted_at = Some(zxid);
            n.fate = Some(how.to_string());
            alive.remove(&n.czxid);
        }
    }
}

fn judge_write(
    v: &mut LogVerdict,
    t: &Txn,
    path: &str,
    writer: &str,
    checks: &[String],
    nodes: &HashMap<String, Node>,
    alive: &BTreeMap<i64, String>,
) {
    let checked = if checks.iter().any(|c| c == writer) {
        "guarded"
    } else {
        "unguarded"
    };
    let Some(n) = nodes.get(writer) else {
        v.violations.push(format!(
            "zxid {:#x}: {checked} write to {path} by {writer:?}, a node the log never created",
            t.zxid
        ));
        return;
    };
    if let Some(d) = n.deleted_at {
        v.violations.push(format!(
            "zxid {:#x}: {checked} write to {path} by {writer} (session {:#x}, the client saw it acknowledged) after its node was deleted at zxid {d:#x}",
            t.zxid, n.session
        ));
        return;
    }
    if let Some((_, lower)) = alive.range(..n.czxid).next() {
        let l = &nodes[lower];
        v.violations.push(format!(
            "zxid {:#x}: {checked} write to {path} by {writer} while the lower node {lower} (session {:#x}, created {:#x}) was alive: two holders",
            t.zxid, l.session, l.czxid
        ));
    }
}
