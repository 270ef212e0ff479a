//! The clients' records merged into the order of ZooKeeper's transaction log.
//!
//! A point of the log is `k`, the state after its first `k` transactions. Each client event
//! gets a key `(k, 0)` when it is the client's own write (the transaction with its zxid: a
//! create's `czxid`, the delete of its path, the `multi` that wrote its data), and `(k, 1)` for
//! everything else: a read is placed at the first point `k` at or after the client's previous
//! event whose state is what the read returned (the children listed, the node there or gone,
//! the counter's value, the session closed); an event the log cannot place is reported. The
//! log's own events — a session closed (an expiry, a killed client's session timing out) and a
//! replacement process's new session — are model steps at their transaction. Sorted by key
//! (each client's events keep their order), the events are one path for the model.

use std::collections::{BTreeSet, HashMap};

use lockwright::zk::names::{child_name, sequence_of};

use super::record::{Event, Op, Res};
use crate::zkstress::txnlog::{Op as TxnOp, Txn};

/// What one placed step is, in the model's terms (`super::replay` names the action).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The server closed the client's current session (`ExpireSession`).
    Expire,
    /// The server closed one of its earlier sessions (`ExpireOldSession`).
    ExpireOld,
    /// A session the client gave up while the server kept it (the client library declared it
    /// expired): a new session, the old one alive (`RestartClient`).
    Restart,
    /// The server reaped the empty lock directory (a container); the recipe makes it again at
    /// its next create (`RecreateParent`).
    RecreateParent,
    /// A new process under the client's id (the `kill` fault's replacement): a new session,
    /// the old one alive with its node, the process's state gone (`Scenario::kill_process`).
    /// `reuse`: the model's client already runs the session the new process got (it opened
    /// it when it learned the old one expired; the real process died before its re-open).
    Killed { reuse: bool },
    /// A request: the op, its answer, and for a lost reply whether the log shows it applied.
    Request { op: Op, res: Res, applied: bool },
    /// A listing answered: whether the client's own node was listed and lowest.
    Listed {
        own: bool,
        lowest: bool,
        children: usize,
    },
    /// The search after a lost create found the client's node (`true`) or not.
    Searched { found: bool },
    /// The client learned from the session-event stream that its session is gone.
    Learn,
    /// The caller got a guard.
    Acquired,
    /// The caller's acquire failed.
    GaveUp,
}

/// One step of the merged trace.
#[derive(Clone, Debug)]
pub struct Placed {
    /// The point of the log and 0 (a transaction) or 1 (after it).
    pub key: (usize, u8),
    pub client: u8,
    pub kind: Kind,
    /// What the client recorded, for the report.
    pub what: String,
}

/// The merged trace and what could not be placed.
#[derive(Debug, Default)]
pub struct Merged {
    pub steps: Vec<Placed>,
    /// Client events read.
    pub events: u64,
    /// Events the log cannot place, described.
    pub unplaced: Vec<String>,
    /// Grants whose node was not the first-created live node at the log point their listing
    /// reflects.
    pub grant_violations: Vec<String>,
}

/// The log replayed point by point.
struct Log {
    /// Children of the lock directory at each point (names).
    children: Vec<BTreeSet<String>>,
    /// The counter's value at each point.
    counter: Vec<Option<u64>>,
    /// The transaction's point (1-based) by zxid.
    point: HashMap<i64, usize>,
    created: HashMap<String, usize>,
    /// Lock nodes deleted by a `delete` request.
    deleted: HashMap<String, usize>,
    /// Lock nodes gone, by a `delete` or their session's close.
    gone: HashMap<String, usize>,
    closed: HashMap<i64, usize>,
    opened: HashMap<i64, usize>,
    /// Points where the lock directory itself was deleted (a container reaped).
    reaped: Vec<usize>,
    /// Counter writes by the data they set.
    writes: HashMap<String, usize>,
    /// Creates by path, in order (for a lost create: the first with the attempt's prefix).
    creates: Vec<(usize, String)>,
}

impl Log {
    fn new(txns: &[Txn], dir: &str, counter: &str, initial: Option<u64>) -> Log {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let mine = |p: &str| p.strip_prefix(&prefix).is_some_and(|n| !n.contains('/'));
        let mut log = Log {
            children: vec![BTreeSet::new()],
            counter: vec![initial],
            point: HashMap::new(),
            created: HashMap::new(),
            deleted: HashMap::new(),
            gone: HashMap::new(),
            closed: HashMap::new(),
            opened: HashMap::new(),
            writes: HashMap::new(),
            creates: Vec::new(),
            reaped: Vec::new(),
        };
        for (i, t) in txns.iter().enumerate() {
            let k = i + 1;
            let mut kids = log.children[i].clone();
            let mut value = log.counter[i];
            log.point.insert(t.zxid, k);
            match &t.op {
                TxnOp::Create { path, .. } if mine(path) => {
                    kids.insert(child_name(path).to_string());
                    log.created.insert(path.clone(), k);
                    log.creates.push((k, path.clone()));
                }
                TxnOp::Delete { path } if mine(path) => {
                    kids.remove(child_name(path));
                    log.deleted.insert(path.clone(), k);
                    log.gone.insert(path.clone(), k);
                }
                TxnOp::Delete { path }
                    if path.trim_end_matches('/') == dir.trim_end_matches('/') =>
                {
                    log.reaped.push(k);
                }
                TxnOp::CloseSession { ephemerals } => {
                    for p in ephemerals.iter().filter(|p| mine(p)) {
                        kids.remove(child_name(p));
                        log.gone.insert(p.clone(), k);
                    }
                    log.closed.insert(t.session, k);
                }
                TxnOp::CreateSession => {
                    log.opened.insert(t.session, k);
                }
                TxnOp::Multi { set_data, .. } => {
                    for (_, d) in set_data.iter().filter(|(p, _)| p == counter) {
                        value = crate::zkstress::client::parse_counter(d.as_bytes());
                        log.writes.insert(d.clone(), k);
                    }
                }
                _ => {}
            }
            log.children.push(kids);
            log.counter.push(value);
        }
        log
    }

    fn last(&self) -> usize {
        self.children.len() - 1
    }

    /// The first point at or after `from` where `ok` holds.
    fn first(&self, from: usize, ok: impl Fn(usize) -> bool) -> Option<usize> {
        (from..=self.last()).find(|&k| ok(k))
    }
}

/// The client's own node's name in a listing: lowest by sequence (then name), as Curator and
/// the recipe order them below the counter's top.
fn lowest(names: &[String]) -> Option<&str> {
    names
        .iter()
        .filter_map(|n| sequence_of(n).map(|s| (s, n.as_str())))
        .min()
        .map(|(_, n)| n)
}

/// Merges the records of every client process (`procs`: client id and events, each client's
/// processes in start order) with the log. See the module docs.
pub fn merge(
    procs: &[(u8, Vec<Event>)],
    txns: &[Txn],
    dir: &str,
    counter: &str,
    counter_initial: Option<u64>,
) -> Merged {
    let log = Log::new(txns, dir, counter, counter_initial);
    let mut out = Merged::default();
    // Sessions by client, to attribute the log's closeSession.
    let mut owner: HashMap<i64, u8> = HashMap::new();
    for (c, evs) in procs {
        for e in evs {
            owner.insert(e.session, *c);
            if let Some(s) = e.new_session {
                owner.insert(s, *c);
            }
        }
    }
    // Each client's sessions in the order they were opened, for "current or older".
    let mut opened_by: HashMap<u8, Vec<(usize, i64)>> = HashMap::new();
    for (&s, &c) in &owner {
        if let Some(&k) = log.opened.get(&s) {
            opened_by.entry(c).or_default().push((k, s));
        }
    }
    for v in opened_by.values_mut() {
        v.sort_unstable();
    }
    for (&s, &k) in &log.closed {
        let Some(&c) = owner.get(&s) else {
            continue;
        };
        // Current: no later session of the client was opened before the close.
        let later = opened_by.get(&c).is_some_and(|v| {
            v.iter()
                .any(|&(ok, os)| os != s && ok < k && log.opened.get(&s).is_none_or(|&mk| ok > mk))
        });
        out.steps.push(Placed {
            key: (k, 0),
            client: c,
            kind: if later { Kind::ExpireOld } else { Kind::Expire },
            what: format!("log: closeSession {s:#x} of c{c}"),
        });
    }
    for &k in &log.reaped {
        out.steps.push(Placed {
            key: (k, 0),
            client: 0,
            kind: Kind::RecreateParent,
            what: format!("log: the lock directory {dir} reaped"),
        });
    }
    let mut seen_client: BTreeSet<u8> = BTreeSet::new();
    let mut lb: HashMap<u8, (usize, u8)> = HashMap::new();
    // Clients whose model session was opened by a learn (an answer `SessionExpired`) that no
    // real `new-session` has matched yet.
    let mut phantom: BTreeSet<u8> = BTreeSet::new();
    for (c, evs) in procs {
        let c = *c;
        let mut at = lb.get(&c).copied().unwrap_or((0, 0));
        let mut own: Option<String> = None;
        let mut watched: Option<String> = None;
        // The last request step was answered SessionExpired: that step was the learn.
        let mut learned_by_answer = false;
        // The session an answered request already told the client was gone: the model's
        // client learned it there (and runs a new session); a later request still sent in
        // it (the release learned it, the next acquire had not renewed yet) is the same learn.
        let mut learned: Option<i64> = None;
        // The newest session the client has had (a second `new_session` call that answers
        // it again, from another part of the recipe, opens nothing).
        let mut newest: Option<i64> = None;
        // A re-open of the session failed since the last new session: the recipe gave up what
        // it had (a release stops, the acquire fails), as a killed process does.
        let mut reopen_failed = false;
        for (i, e) in evs.iter().enumerate() {
            out.events += 1;
            let what = format!("c{c} {e:?}");
            let read = |ok: &dyn Fn(usize) -> bool| log.first(at.0, ok).map(|k| (k, 1u8));
            let closed = |s: i64| log.closed.get(&s).map(|&k| (k.max(at.0), 1u8));
            let exact = |k: Option<usize>| k.filter(|&k| (k, 0) >= at).map(|k| (k, 0u8));
            let req = |op, res, applied| Kind::Request { op, res, applied };
            // The server had closed the request's session already: a `ConnectionLoss` there
            // applied nothing, and the model has no lost reply in a dead session (its client
            // meets the expiry at its next request, as the real one does).
            let dead = log.closed.get(&e.session).is_some_and(|&k| k <= at.0);
            let placed: Option<Option<((usize, u8), Kind)>> = match (e.op, e.res) {
                // The counter read is the stress client's own request, not the recipe's: a
                // failed one teaches the recipe nothing (the update is abandoned; the model's
                // `Read` is the resource's read, which has no failure).
                (Op::Read, r) if r != Res::Ok => Some(None),
                (_, Res::Loss) if dead => Some(None),
                (Op::Start, _) => {
                    newest = Some(e.session);
                    if seen_client.insert(c) {
                        Some(None)
                    } else {
                        let reuse = phantom.remove(&c);
                        Some(
                            exact(log.opened.get(&e.session).copied())
                                .map(|k| (k, Kind::Killed { reuse })),
                        )
                    }
                }
                (Op::Sync | Op::EnsureDir | Op::Check, _) => Some(None),
                // The lock directory was reaped: the recipe makes it and creates again.
                (Op::Create, Res::NoNode) => Some(None),
                // The recipe learned its session is gone and could not open another. Where the
                // server had closed that session (before the client's next session opened),
                // this is the model's learn (`ReceiveSessionEvent`, which opens the model's next
                // session at once; the real one comes later and is no step then); where not,
                // the client gave up a live session, which the session it opens later says
                // (`kill_process`).
                (Op::NewSession, Res::Error) => {
                    reopen_failed = true;
                    let next = evs[i + 1..]
                        .iter()
                        .find(|n| {
                            n.op == Op::NewSession
                                && n.session == e.session
                                && n.new_session.is_some()
                        })
                        .and_then(|n| n.new_session)
                        .and_then(|s| log.opened.get(&s).copied());
                    match log.closed.get(&e.session).copied() {
                        Some(cl) if learned != Some(e.session) && next.is_none_or(|op| cl < op) => {
                            Some(Some(((cl.max(at.0), 1), Kind::Learn)))
                        }
                        _ => Some(None),
                    }
                }
                (Op::AcquireFailed, _) if reopen_failed => Some(None),
                (_, Res::Error) if !matches!(e.op, Op::Acquired | Op::AcquireFailed) => Some(None),
                // The client library also answers `SessionExpired` on its own (no word from the
                // server for 1.4 session timeouts, or a server that no longer knows the session
                // after a leader change) while the server keeps the session: if the log opens
                // the client's next session before it closes this one, the client abandoned a
                // live session (its `new-session` is `RestartClient`), and this answer is no
                // server step.
                (_, Res::Expired) if e.op != Op::Wait && learned == Some(e.session) => Some(None),
                (_, Res::Expired) if e.op != Op::Wait => {
                    let next = evs[i + 1..]
                        .iter()
                        .find(|n| {
                            n.op == Op::NewSession
                                && n.session == e.session
                                && n.new_session.is_some()
                        })
                        .and_then(|n| n.new_session)
                        .and_then(|s| log.opened.get(&s).copied());
                    match (log.closed.get(&e.session).copied(), next) {
                        (Some(cl), Some(op)) if op < cl => Some(None),
                        (None, _) => Some(None),
                        _ => closed(e.session).map(|k| Some((k, req(e.op, Res::Expired, false)))),
                    }
                }
                (Op::Create, Res::Ok) => {
                    own = e.path.clone();
                    let k = e.zxid.and_then(|z| log.point.get(&z).copied());
                    exact(k).map(|k| Some((k, req(Op::Create, Res::Ok, true))))
                }
                (Op::Create, Res::Loss) => {
                    let prefix = e.data.clone().unwrap_or_default();
                    let applied = log
                        .creates
                        .iter()
                        .find(|(k, p)| (*k, 0) >= at && p.starts_with(&prefix));
                    match applied {
                        Some((k, _)) => Some(Some(((*k, 0), req(Op::Create, Res::Loss, true)))),
                        None => Some(Some(((at.0, 1), req(Op::Create, Res::Loss, false)))),
                    }
                }
                (Op::Search, Res::Ok) => {
                    let names: BTreeSet<String> =
                        e.names.clone().unwrap_or_default().into_iter().collect();
                    let prefix = e.data.clone().unwrap_or_default();
                    // The recipe adopts a candidate only if the session the search ran in owns
                    // it (a create of an older session is not ours any more).
                    let owners = e.owners.clone().unwrap_or_default();
                    let found = e
                        .names
                        .iter()
                        .flatten()
                        .zip(&owners)
                        .find(|(_, &o)| o == e.session)
                        .map(|(n, _)| n.clone());
                    own = found
                        .as_ref()
                        .map(|n| format!("{}/{n}", dir.trim_end_matches('/')));
                    read(&|k| {
                        let here: BTreeSet<String> = log.children[k]
                            .iter()
                            .filter(|n| n.starts_with(&prefix))
                            .cloned()
                            .collect();
                        here == names
                    })
                    .map(|k| {
                        Some((
                            k,
                            Kind::Searched {
                                found: found.is_some(),
                            },
                        ))
                    })
                }
                (Op::List, Res::Ok) => {
                    let names = e.names.clone().unwrap_or_default();
                    let set: BTreeSet<String> = names.iter().cloned().collect();
                    let me = own.as_deref().map(child_name);
                    let listed = me.is_some_and(|m| set.contains(m));
                    let first = lowest(&names);
                    let placed = read(&|k| log.children[k] == set);
                    // The grant judged at the grant: at the point of the log this listing
                    // reflects, the node the client takes as lowest must be the one created
                    // first among the live ones (the log's order, not the suffix's).
                    if let (Some((k, _)), Some(m), true) = (placed, me, listed && first == me) {
                        let created = |n: &str| {
                            log.created
                                .get(&format!("{}/{n}", dir.trim_end_matches('/')))
                                .copied()
                        };
                        let oldest = log.children[k].iter().min_by_key(|n| created(n));
                        if oldest.map(String::as_str) != Some(m) {
                            out.grant_violations.push(format!(
                                "c{c} granted on {m} at log point {k}, where {} was created first",
                                oldest.map_or("nothing", String::as_str)
                            ));
                        }
                    }
                    placed.map(|k| {
                        Some((
                            k,
                            Kind::Listed {
                                own: listed,
                                lowest: listed && first == me,
                                children: names.len(),
                            },
                        ))
                    })
                }
                (Op::Watch, Res::Ok | Res::NoNode) => {
                    let name = e.path.as_deref().map(child_name).unwrap_or("").to_string();
                    let there = e.res == Res::Ok;
                    if there {
                        watched = e.path.clone();
                    }
                    read(&|k| log.children[k].contains(&name) == there)
                        .map(|k| Some((k, req(Op::Watch, e.res, true))))
                }
                (Op::Wait, Res::Ok) => {
                    let gone = watched.take().and_then(|p| log.gone.get(&p).copied());
                    gone.map(|k| Some(((k.max(at.0), 1), req(Op::Wait, Res::Ok, true))))
                }
                (Op::Wait, _) => Some(None),
                (Op::Delete, Res::Ok) => {
                    let p = e.path.clone().unwrap_or_default();
                    if own.as_ref() == Some(&p) {
                        own = None;
                    }
                    exact(log.deleted.get(&p).copied())
                        .map(|k| Some((k, req(Op::Delete, Res::Ok, true))))
                }
                // A lost hold's delete runs in the background (the release task) and may come
                // after the next acquire's first requests: its node already gone, it changes
                // nothing at the server, and the model's client released it before its next
                // request (`replay::implied_release`). No step.
                (Op::Delete, Res::NoNode) if own != e.path => Some(None),
                (Op::Delete, Res::NoNode) => {
                    let name = e.path.as_deref().map(child_name).unwrap_or("").to_string();
                    read(&|k| !log.children[k].contains(&name))
                        .map(|k| Some((k, req(Op::Delete, Res::NoNode, true))))
                }
                (Op::Multi, Res::Ok) => {
                    let k = e.data.as_ref().and_then(|d| log.writes.get(d).copied());
                    exact(k).map(|k| Some((k, req(Op::Multi, Res::Ok, e.path.is_some()))))
                }
                (Op::Multi, Res::NoNode) => {
                    let name = e.path.as_deref().map(child_name).unwrap_or("").to_string();
                    read(&|k| !log.children[k].contains(&name))
                        .map(|k| Some((k, req(Op::Multi, Res::NoNode, true))))
                }
                (Op::Multi, Res::Loss) => {
                    let k = e.data.as_ref().and_then(|d| log.writes.get(d).copied());
                    match exact(k) {
                        Some(k) => Some(Some((k, req(Op::Multi, Res::Loss, true)))),
                        None => Some(Some(((at.0, 1), req(Op::Multi, Res::Loss, false)))),
                    }
                }
                (Op::Delete, Res::Loss) => {
                    let k = e.path.as_ref().and_then(|p| log.deleted.get(p).copied());
                    match exact(k) {
                        Some(k) => Some(Some((k, req(Op::Delete, Res::Loss, true)))),
                        None => Some(Some(((at.0, 1), req(Op::Delete, Res::Loss, false)))),
                    }
                }
                (_, Res::Loss) => Some(Some(((at.0, 1), req(e.op, Res::Loss, false)))),
                (Op::Read, Res::Ok) => match e.value {
                    Some(v) => read(&|k| log.counter[k] == Some(v))
                        .map(|k| Some((k, req(Op::Read, Res::Ok, true)))),
                    None => Some(None),
                },
                (Op::NewSession, Res::Ok) => {
                    phantom.remove(&c);
                    let (old, new) = (e.session, e.new_session.unwrap_or(e.session));
                    let again = newest == Some(new);
                    newest = Some(new);
                    if old == new || again {
                        Some(None)
                    } else if std::mem::take(&mut learned_by_answer) {
                        // The model's client opened its new session when the answer told it
                        // the old one was gone: this is that session. What a failed re-open
                        // made the recipe give up, the model's client gives up at its next
                        // request (a node of the expired session: `implied_release`).
                        reopen_failed = false;
                        Some(None)
                    } else {
                        let close = log.closed.get(&old).copied();
                        let open = log.opened.get(&new).copied();
                        let forgot = std::mem::take(&mut reopen_failed);
                        match (close, open) {
                            (Some(_), Some(op)) if forgot => {
                                exact(Some(op)).map(|k| Some((k, Kind::Killed { reuse: false })))
                            }
                            (Some(cl), Some(op)) if cl < op => {
                                Some(Some(((cl.max(at.0), 1), Kind::Learn)))
                            }
                            (Some(cl), None) if forgot => {
                                Some(Some(((cl.max(at.0), 1), Kind::Killed { reuse: false })))
                            }
                            (Some(cl), None) => Some(Some(((cl.max(at.0), 1), Kind::Learn))),
                            (_, Some(op)) => {
                                let kind = if forgot {
                                    Kind::Killed { reuse: false }
                                } else {
                                    Kind::Restart
                                };
                                exact(Some(op)).map(|k| Some((k, kind)))
                            }
                            (None, None) => None,
                        }
                    }
                }
                (Op::Acquired, _) => Some(Some((at, Kind::Acquired))),
                (Op::AcquireFailed, _) => Some(Some((at, Kind::GaveUp))),
                _ => None,
            };
            match placed {
                None => out.unplaced.push(format!(
                    "{what}: no point of the transaction log (at or after point {}) has the \
                     state this answer shows",
                    at.0
                )),
                Some(None) => {}
                Some(Some((key, kind))) => {
                    if let Kind::Request { res, .. } = &kind {
                        learned_by_answer = *res == Res::Expired;
                        if learned_by_answer {
                            learned = Some(e.session);
                            phantom.insert(c);
                        }
                    } else if kind == Kind::Learn && e.op == Op::NewSession && e.res == Res::Error {
                        // The model opened its next session here; the real one comes later.
                        learned_by_answer = true;
                        learned = Some(e.session);
                        phantom.insert(c);
                    } else if matches!(kind, Kind::Learn | Kind::Restart | Kind::Killed { .. }) {
                        learned_by_answer = false;
                    }
                    if matches!(kind, Kind::Killed { .. }) {
                        // The model's client forgot its node: a late delete of it by the
                        // release task is another node's to the merge.
                        own = None;
                    }
                    at = key.max(at);
                    out.steps.push(Placed {
                        key: at,
                        client: c,
                        kind,
                        what,
                    });
                }
            }
        }
        lb.insert(c, at);
    }
    // Stable: each client's events keep their order among equal keys.
    out.steps.sort_by_key(|p| p.key);
    out
}
