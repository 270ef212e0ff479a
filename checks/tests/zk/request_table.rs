//! The recipe's answer to every class of error on every request it makes, row by row, on a
//! real ZooKeeper 3.8 (Debian `zookeeper`; FAILS naming the package when it is missing).
//!
//! `docs/zookeeper-client.md` ("Every client error, classified") has two tables: what each
//! zookeeper-client error becomes (driven through the production mapping by
//! `impl/src/zk/client/error_table.rs`), and what each request of the recipe does with each
//! class: outcome unknown (the request may or may not have been applied), a definite answer,
//! session gone, a hard error. This file drives the second one: a `Coordination` wrapped
//! around the real `ZkClient` answers the chosen request with the chosen class (for "outcome
//! unknown", after or instead of sending it: applied or not), and records every request the
//! recipe makes. Each row says which request comes next and how the operation ends, judged by
//! what the recipe returned *and* by the server (an observer client lists the lock directory:
//! no orphan node, the held node is the one left).
//!
//! Checked by hand: making the recipe start over (forget its node, create again) on an
//! outcome-unknown `getChildren` fails the `List` row: the abandoned node then blocks the new
//! one until the acquire times out, "nodes left behind".

use crate::zk_support;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockwright::zk::{
    block_on, CoordError, Coordination, GuardedOp, Listing, LockNode, LostReason, MultiError,
    NodeStat, OpResult, Search, SessionEvent, SessionId, WatchOutcome, ZkClient, ZkLockError,
    ZkMutex,
};
use zk_support::{children, client, dir, server};

/// A request of the recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Req {
    /// `create` of the lock node.
    Create,
    /// The protected search after a lost create.
    Search,
    /// `getChildren` of the lock directory.
    List,
    /// `getData` + watch of the predecessor.
    Watch,
    /// `exists` of our node (`ensure_valid`).
    Check,
    /// `delete` of our node.
    Delete,
    /// `multi` (a guarded write).
    Multi,
    /// `create` of the lock directory.
    EnsureDir,
    /// `sync` of the lock directory (before the protected search and `ensure_valid`'s read).
    Sync,
}

/// The answer injected in place of the server's.
#[derive(Clone, Debug)]
enum Answer {
    /// The request is sent and applied; its reply is lost.
    LostApplied,
    /// The request is lost before it is applied.
    LostUnapplied,
    /// A definite error; the request is not sent.
    Error(CoordError),
    /// The request is sent and applied, then answered with this error (a `delete` that
    /// finds the node already gone: someone deleted it in between).
    AppliedThen(CoordError),
}

fn lost() -> CoordError {
    CoordError::ConnectionLoss {
        detail: "injected".to_string(),
    }
}

fn rejected() -> CoordError {
    CoordError::Rejected {
        detail: "injected".to_string(),
    }
}

/// `ZkClient` answering scripted requests with scripted answers, each once, and recording
/// every request made.
struct Scripted {
    c: ZkClient,
    script: Mutex<Vec<(Req, Answer)>>,
    trace: Mutex<Vec<Req>>,
    /// Background tasks (a dropped guard's release, a clean-up) not finished yet.
    running: Arc<std::sync::atomic::AtomicUsize>,
}

impl Scripted {
    /// Records `req`; the scripted answer for it, if one is waiting (the first, taken).
    fn take(&self, req: Req) -> Option<Answer> {
        self.trace.lock().unwrap().push(req);
        let mut s = self.script.lock().unwrap();
        let at = s.iter().position(|(r, _)| *r == req)?;
        Some(s.remove(at).1)
    }

    /// Runs `real` as `answer` says.
    async fn answer<T>(
        &self,
        answer: Option<Answer>,
        real: impl Future<Output = Result<T, CoordError>>,
    ) -> Result<T, CoordError> {
        match answer {
            None => real.await,
            Some(Answer::LostApplied) => real.await.and(Err(lost())),
            Some(Answer::LostUnapplied) => Err(lost()),
            Some(Answer::Error(e)) => Err(e),
            Some(Answer::AppliedThen(e)) => real.await.and(Err(e)),
        }
    }

    fn trace(&self) -> Vec<Req> {
        self.trace.lock().unwrap().clone()
    }

    /// The trace once every background task the operation started has finished (at most
    /// 10 s): what the operation did, in the background too.
    fn settled_trace_len(&self) -> usize {
        use std::sync::atomic::Ordering;
        zk_support::eventually(Duration::from_secs(10), || {
            self.running.load(Ordering::SeqCst) == 0
        });
        self.trace.lock().unwrap().len()
    }
}

impl Coordination for Scripted {
    type Watch = <ZkClient as Coordination>::Watch;

    async fn create_lock_node(&self, prefix: &str, data: &[u8]) -> Result<LockNode, CoordError> {
        let a = self.take(Req::Create);
        self.answer(a, self.c.create_lock_node(prefix, data)).await
    }

    async fn find_own_node(&self, dir: &str, prefix: Option<&str>) -> Result<Search, CoordError> {
        let a = self.take(Req::Search);
        self.answer(a, self.c.find_own_node(dir, prefix)).await
    }

    async fn list_children(&self, dir: &str) -> Result<Listing, CoordError> {
        let a = self.take(Req::List);
        self.answer(a, self.c.list_children(dir)).await
    }

    async fn watch_node(&self, path: &str) -> Result<Self::Watch, CoordError> {
        let a = self.take(Req::Watch);
        self.answer(a, self.c.watch_node(path)).await
    }

    fn wait_watch_event(&self, w: Self::Watch) -> impl Future<Output = WatchOutcome> + Send + '_ {
        self.c.wait_watch_event(w)
    }

    async fn delete_node(&self, path: &str) -> Result<(), CoordError> {
        let a = self.take(Req::Delete);
        self.answer(a, self.c.delete_node(path)).await
    }

    async fn check_node(&self, path: &str) -> Result<Option<NodeStat>, CoordError> {
        let a = self.take(Req::Check);
        self.answer(a, self.c.check_node(path)).await
    }

    async fn guarded_write(
        &self,
        lock_node: Option<&str>,
        ops: &[GuardedOp],
    ) -> Result<Vec<OpResult>, MultiError> {
        match self.take(Req::Multi) {
            None => self.c.guarded_write(lock_node, ops).await,
            Some(Answer::LostApplied) => {
                self.c.guarded_write(lock_node, ops).await?;
                Err(MultiError {
                    index: None,
                    error: lost(),
                })
            }
            Some(Answer::LostUnapplied) => Err(MultiError {
                index: None,
                error: lost(),
            }),
            Some(Answer::Error(e) | Answer::AppliedThen(e)) => Err(MultiError {
                index: Some(0),
                error: e,
            }),
        }
    }

    fn session(&self) -> SessionId {
        self.c.session()
    }

    fn session_event(&self) -> SessionEvent {
        self.c.session_event()
    }

    fn new_session(
        &self,
        expired: SessionId,
    ) -> impl Future<Output = Result<SessionId, CoordError>> + Send + '_ {
        self.c.new_session(expired)
    }

    async fn sync(&self, dir: &str) -> Result<(), CoordError> {
        let a = self.take(Req::Sync);
        self.answer(a, self.c.sync(dir)).await
    }

    async fn ensure_dir(&self, dir: &str) -> Result<(), CoordError> {
        let a = self.take(Req::EnsureDir);
        self.answer(a, self.c.ensure_dir(dir)).await
    }

    fn read_node<'a>(
        &'a self,
        path: &'a str,
    ) -> impl Future<Output = Result<(Vec<u8>, NodeStat), CoordError>> + Send + 'a {
        self.c.read_node(path)
    }

    fn new_protection_id(&self) -> String {
        self.c.new_protection_id()
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send + '_ {
        self.c.sleep(d)
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        use std::sync::atomic::Ordering;
        let running = Arc::clone(&self.running);
        running.fetch_add(1, Ordering::SeqCst);
        self.c.spawn(async move {
            task.await;
            running.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// What the operation the row drives came to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum End {
    /// The acquire got the lock, and the directory holds exactly the held node.
    Acquired,
    /// The acquire failed with this `ZkLockError` variant, and left no node of ours.
    AcquireFailed(&'static str),
    /// `ensure_valid` said held.
    Valid,
    /// `ensure_valid` (or the guarded write) said lost, for this reason.
    Lost(LostReason),
    /// The guarded write (or `ensure_valid`) failed with this variant, the lock not lost.
    Failed(&'static str),
    /// The guarded write was applied.
    Written,
    /// The release returned `Ok`, and the node is gone (at once, or by the background
    /// retry within 10 s).
    Released,
}

/// Which operation a row drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// `acquire_timeout(10 s)` on a free lock.
    Acquire,
    /// `acquire_timeout(10 s)` while an observer holds the lock for 300 ms (so the recipe
    /// watches a predecessor).
    AcquireBehind,
    /// `ensure_valid` on a held lock.
    EnsureValid,
    /// A guarded write of a fresh node on a held lock.
    Write,
    /// `release` of a held lock.
    Release,
}

/// A request and the answer injected for it.
type Inject = (Req, fn() -> Answer);

struct Row {
    op: Op,
    /// Answers injected first, to reach the request the row is about.
    before: &'static [Inject],
    req: Req,
    answer: fn() -> Answer,
    /// The request the recipe makes right after the injected one (`None`: none).
    next: Option<Req>,
    end: End,
    /// The table's wording (the docs' "what the recipe does").
    does: &'static str,
}

fn variant(e: &ZkLockError) -> &'static str {
    match e {
        ZkLockError::Held { .. } => "Held",
        ZkLockError::TimedOut { .. } => "TimedOut",
        ZkLockError::LockLost { .. } => "LockLost",
        ZkLockError::Unreachable { .. } => "Unreachable",
        ZkLockError::BadPath { .. } => "BadPath",
        ZkLockError::WriteFailed { .. } => "WriteFailed",
        ZkLockError::AlreadyHeld { .. } => "AlreadyHeld",
        ZkLockError::Zk { .. } => "Zk",
        _ => "other",
    }
}

fn lost_applied() -> Answer {
    Answer::LostApplied
}
fn lost_unapplied() -> Answer {
    Answer::LostUnapplied
}
fn no_node() -> Answer {
    Answer::Error(CoordError::NoNode)
}
fn gone_already() -> Answer {
    Answer::AppliedThen(CoordError::NoNode)
}
fn refused() -> Answer {
    Answer::Error(rejected())
}
fn expired() -> Answer {
    Answer::Error(CoordError::SessionExpired)
}
fn bad_version() -> Answer {
    Answer::Error(CoordError::BadVersion)
}

#[rustfmt::skip]
fn rows() -> Vec<Row> {
    use End::*;
    use Op::*;
    use Req::*;
    let r = |op, before, req, answer, next, end, does| Row { op, before, req, answer, next, end, does };
    vec![
        r(Acquire, &[], Create, lost_applied, Some(Sync), Acquired, "outcome unknown (applied): `sync`, then the protected search finds the node; it is the one held"),
        r(Acquire, &[], Create, lost_unapplied, Some(Sync), Acquired, "outcome unknown (not applied): `sync`, the search finds nothing; create again"),
        r(Acquire, &[], Create, no_node, Some(EnsureDir), Acquired, "`NoNode`: make the lock directory, then create again"),
        r(Acquire, &[], Create, expired, Some(Create), Acquired, "session gone: a new session (or the one a peer renewed), then create again"),
        r(Acquire, &[], Create, refused, None, AcquireFailed("Zk"), "hard error (`ZkLockError::Zk`), nothing left"),
        r(Acquire, &[(Create, lost_applied)], Search, lost_unapplied, Some(Sync), Acquired, "outcome unknown: pause, `sync` and search again"),
        r(Acquire, &[(Create, lost_applied)], Search, refused, Some(Sync), AcquireFailed("Zk"), "hard error (`ZkLockError::Zk`); the background clean-up syncs, searches for the node the lost create made, and deletes it"),
        r(Acquire, &[], List, lost_unapplied, Some(List), Acquired, "outcome unknown: list again"),
        r(Acquire, &[], List, expired, Some(Create), Acquired, "session gone: the node went with it; a new session, create again"),
        r(Acquire, &[], List, refused, Some(Delete), AcquireFailed("Zk"), "hard error (`ZkLockError::Zk`); our node is deleted on the way out"),
        r(AcquireBehind, &[], Watch, lost_unapplied, Some(Watch), Acquired, "outcome unknown: pause, watch again"),
        r(AcquireBehind, &[], Watch, no_node, Some(List), Acquired, "`NoNode`: the predecessor is gone already: list again"),
        r(AcquireBehind, &[], Watch, refused, Some(Delete), AcquireFailed("Zk"), "hard error (`ZkLockError::Zk`); our node is deleted on the way out"),
        r(Acquire, &[(Create, no_node)], EnsureDir, lost_unapplied, Some(Create), Acquired, "outcome unknown: pause, create the lock node again"),
        r(Acquire, &[(Create, no_node)], EnsureDir, refused, None, AcquireFailed("Zk"), "hard error (`ZkLockError::Zk`), nothing left"),
        r(EnsureValid, &[], Check, lost_unapplied, None, Lost(LostReason::Suspended), "outcome unknown: lost for now (`Suspended`, not final)"),
        r(EnsureValid, &[], Check, expired, Some(Delete), Lost(LostReason::SessionExpired { session: SessionId(0) }), "session gone: lost (`SessionExpired`); a delete of the node follows (with the session really gone it finds nothing)"),
        r(EnsureValid, &[], Check, refused, None, Failed("Zk"), "hard error (`ZkLockError::Zk`); the hold is kept"),
        r(Write, &[], Multi, lost_applied, None, Failed("Zk"), "outcome unknown: returned to the caller (`ZkLockError::Zk`): applied or not"),
        r(Write, &[], Multi, no_node, None, Lost(LostReason::NodeDeleted), "`NoNode` at the lock check: lost (`NodeDeleted`), nothing written; nothing deleted (a node made at that path since would not be ours)"),
        r(Write, &[], Multi, bad_version, Some(Check), Lost(LostReason::NodeChanged), "`BadVersion` at the lock check: lost (`NodeChanged`), nothing written; `exists` of the node, then, only if its czxid is still ours, a delete conditioned on the version it showed"),
        r(Acquire, &[(Create, lost_applied)], Sync, lost_unapplied, Some(Sync), Acquired, "outcome unknown: pause, sync and search again"),
        r(Acquire, &[(Create, lost_applied)], Sync, refused, Some(Sync), AcquireFailed("Zk"), "hard error (`ZkLockError::Zk`); the background clean-up syncs, searches for the node the lost create made, and deletes it"),
        r(EnsureValid, &[], Sync, lost_unapplied, None, Lost(LostReason::Suspended), "outcome unknown: lost for now (`Suspended`, not final)"),
        r(EnsureValid, &[], Sync, expired, Some(Delete), Lost(LostReason::SessionExpired { session: SessionId(0) }), "session gone: lost (`SessionExpired`); a delete of the node follows (with the session really gone it finds nothing)"),
        r(EnsureValid, &[], Sync, refused, None, Failed("Zk"), "hard error (`ZkLockError::Zk`); the hold is kept"),
        r(Release, &[], Delete, lost_unapplied, Some(Delete), Released, "outcome unknown: delete again (in the background while the session lives)"),
        r(Release, &[], Delete, lost_applied, Some(Delete), Released, "outcome unknown (applied): delete again, `NoNode`: released"),
        r(Release, &[], Delete, gone_already, None, Released, "`NoNode`: already deleted: released"),
    ]
}

/// Runs one row; returns the request after the injected one and how the operation ended.
fn run(row: &Row, n: usize) -> Result<(Option<Req>, End), String> {
    let s = server();
    let obs = client(&s);
    let d = dir(&format!("request-table-{n}"));
    let coord = Arc::new(Scripted {
        c: client(&s),
        script: Mutex::new(Vec::new()),
        trace: Mutex::new(Vec::new()),
        running: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
    });
    // The lock directory exists, as it does after the first acquire (a row about its
    // creation answers the lock node's create with `NoNode` first).
    block_on(obs.ensure_dir(&d)).map_err(|e| e.to_string())?;
    let m = ZkMutex::with_shared(Arc::clone(&coord), &d).map_err(|e| e.to_string())?;
    let script: Vec<(Req, Answer)> = row
        .before
        .iter()
        .map(|(r, a)| (*r, a()))
        .chain([(row.req, (row.answer)())])
        .collect();
    // Where the injected request will sit in the trace: after the setup's requests.
    let held = matches!(row.op, Op::EnsureValid | Op::Write | Op::Release);
    let guard = if held {
        let g = block_on(m.acquire_timeout(Duration::from_secs(10))).map_err(|e| e.to_string())?;
        Some(g)
    } else {
        None
    };
    let start = coord.trace().len();
    *coord.script.lock().unwrap() = script;
    let behind = if row.op == Op::AcquireBehind {
        let other = ZkMutex::new(obs.clone(), &d).map_err(|e| e.to_string())?;
        let g = block_on(other.acquire()).map_err(|e| e.to_string())?;
        Some(std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            block_on(g.release()).unwrap();
        }))
    } else {
        None
    };
    let op_end;
    let end = match (row.op, guard) {
        (Op::Acquire | Op::AcquireBehind, _) => {
            let got = block_on(m.acquire_timeout(Duration::from_secs(10)));
            op_end = coord.settled_trace_len();
            match got {
                Ok(g) => {
                    if let Some(t) = behind {
                        t.join().unwrap();
                    }
                    let left = children(&obs, &d);
                    let mine = lockwright::zk::names::child_name(g.node()).to_string();
                    block_on(g.release()).map_err(|e| e.to_string())?;
                    if left != vec![mine] {
                        return Err(format!("acquired, but the directory holds {left:?}"));
                    }
                    End::Acquired
                }
                Err(e) => {
                    if let Some(t) = behind {
                        t.join().unwrap();
                    }
                    // Ours is gone at once or by the background clean-up.
                    let gone = zk_support::eventually(Duration::from_secs(10), || {
                        children(&obs, &d).is_empty()
                    });
                    if !gone {
                        return Err(format!("{e}: nodes left behind: {:?}", children(&obs, &d)));
                    }
                    End::AcquireFailed(variant(&e))
                }
            }
        }
        (Op::EnsureValid, Some(g)) => {
            let r = block_on(g.ensure_valid());
            op_end = coord.settled_trace_len();
            let end = match r {
                Ok(()) => End::Valid,
                Err(e) => match e.lost_reason() {
                    Some(LostReason::SessionExpired { .. }) => {
                        End::Lost(LostReason::SessionExpired {
                            session: SessionId(0),
                        })
                    }
                    Some(reason) => End::Lost(reason),
                    None => End::Failed(variant(&e)),
                },
            };
            let _ = block_on(g.release());
            end
        }
        (Op::Write, Some(g)) => {
            let target = format!("{d}-written");
            let r = block_on(g.guarded_write(&[GuardedOp::create(target.as_str(), "x")]));
            op_end = coord.settled_trace_len();
            let end = match r {
                Ok(_) => End::Written,
                Err(e) => match e.lost_reason() {
                    Some(reason) => End::Lost(reason),
                    None => End::Failed(variant(&e)),
                },
            };
            let _ = block_on(obs.delete_node(&target));
            let _ = block_on(g.release());
            end
        }
        (Op::Release, Some(g)) => {
            let node = g.node().to_string();
            block_on(g.release()).map_err(|e| format!("release: {e}"))?;
            let gone = zk_support::eventually(Duration::from_secs(10), || {
                block_on(obs.check_node(&node)).ok().flatten().is_none()
            });
            // The background retry belongs to the release.
            op_end = coord.settled_trace_len();
            if !gone {
                return Err(format!("released, but {node} is still there"));
            }
            End::Released
        }
        _ => unreachable!("a held op has a guard"),
    };
    let trace = coord.trace()[..op_end].to_vec();
    let pending = coord.script.lock().unwrap().len();
    if pending != 0 {
        return Err(format!("the injected request never came: trace {trace:?}"));
    }
    // The injected request is the last of the script's kind in the trace's new part,
    // counting the setup answers: find its position.
    let mut seen = 0;
    let wanted = row.before.iter().filter(|(r, _)| *r == row.req).count() + 1;
    let mut next = None;
    for (i, r) in trace[start..].iter().enumerate() {
        if *r == row.req {
            seen += 1;
            if seen == wanted {
                next = trace.get(start + i + 1).copied();
                break;
            }
        }
    }
    Ok((next, end))
}

#[test]
fn every_request_answers_every_class_as_the_table_says() {
    let _quiet = crate::heavy();
    let rows = rows();
    // Each row has its own lock directory and clients on the shared server, and spends most
    // of its second waiting on the server: run them side by side, a few at a time.
    let mut outcomes = Vec::with_capacity(rows.len());
    for (c, chunk) in rows.chunks(8).enumerate() {
        std::thread::scope(|s| {
            let running: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(i, row)| s.spawn(move || run(row, c * 8 + i)))
                .collect();
            outcomes.extend(
                running
                    .into_iter()
                    .map(|t| t.join().expect("a row panicked")),
            );
        });
    }
    let mut failures = Vec::new();
    for (row, outcome) in rows.iter().zip(outcomes) {
        match outcome {
            Ok((next, end)) if next == row.next && end == row.end => {}
            Ok((next, end)) => failures.push(format!(
                "{:?} {:?} answered {:?}: next {next:?}, end {end:?}; the table says next {:?}, end {:?}",
                row.op, row.req, (row.answer)(), row.next, row.end
            )),
            Err(e) => failures.push(format!("{:?} {:?} answered {:?}: {e}", row.op, row.req, (row.answer)())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(rows.len(), 29);
}

fn answer_text(a: &Answer) -> String {
    match a {
        Answer::LostApplied => "outcome unknown (applied)".into(),
        Answer::LostUnapplied => "outcome unknown (not applied)".into(),
        Answer::Error(CoordError::SessionExpired) => "session gone".into(),
        Answer::Error(CoordError::Rejected { .. }) => "hard error (`Rejected`)".into(),
        Answer::Error(e) | Answer::AppliedThen(e) => format!("`{e:?}`"),
    }
}

/// The rows as the docs show them.
fn render() -> String {
    let mut out = String::from(
        "| operation | request | answered with | next request | ends | what the recipe does |\n|---|---|---|---|---|---|\n",
    );
    for r in rows() {
        let end = match &r.end {
            End::Lost(LostReason::SessionExpired { .. }) => "Lost(SessionExpired)".to_string(),
            e => format!("{e:?}"),
        };
        out.push_str(&format!(
            "| {:?} | {:?} | {} | {} | {} | {} |\n",
            r.op,
            r.req,
            answer_text(&(r.answer)()),
            r.next.map_or("none".to_string(), |n| format!("{n:?}")),
            end,
            r.does
        ));
    }
    out
}

const DOC: &str = "docs/zookeeper-client.md";
const BEGIN: &str = "<!-- request table: generated from checks/tests/zk/request_table.rs -->\n";
const END: &str = "<!-- end of request table -->\n";

/// The docs show these rows (`LOCKWRIGHT_UPDATE_ERROR_TABLES=1` rewrites the section).
#[test]
fn the_docs_table_is_this_table() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(DOC);
    let text = std::fs::read_to_string(&path).unwrap();
    let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else {
        panic!("{DOC} lacks the markers {BEGIN:?} and {END:?}");
    };
    let current = &text[a + BEGIN.len()..b];
    let want = render();
    if current != want {
        if std::env::var_os("LOCKWRIGHT_UPDATE_ERROR_TABLES").is_some() {
            let new = format!("{}{BEGIN}{want}{}", &text[..a], &text[b..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!("{DOC}'s request table is stale; rerun with LOCKWRIGHT_UPDATE_ERROR_TABLES=1:\n{want}");
        }
    }
}

/// A scripted client on `s` whose script is `script`, a mutex over it on a fresh directory, and
/// an observer client.
fn scripted_mutex(
    s: &lockwright_checks::peers::zookeeper::ZkServer,
    name: &str,
    script: Vec<(Req, Answer)>,
) -> (Arc<Scripted>, ZkMutex<Scripted>, ZkClient, String) {
    let obs = client(s);
    let d = dir(name);
    block_on(obs.ensure_dir(&d)).unwrap();
    let coord = Arc::new(Scripted {
        c: client(s),
        script: Mutex::new(script),
        trace: Mutex::new(Vec::new()),
        running: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
    });
    let m = ZkMutex::with_shared(Arc::clone(&coord), &d).unwrap();
    (coord, m, obs, d)
}

/// Issue #33, "failures that persist end": a session that ends after every create (each
/// listing answered `SessionExpired`) used to reset the re-open bound at every create, so the
/// acquire opened sessions for as long as they kept ending. Progress is now the listing that
/// puts the node in line: after `SESSION_REOPEN_LIMIT` re-opens without one the acquire fails
/// with `SessionsKeepEnding`, each re-open paced, and no node is left behind.
#[test]
fn an_acquire_whose_sessions_end_after_every_create_gives_up() {
    let s = server();
    let script = (0..8).map(|_| (Req::List, expired())).collect();
    let (coord, m, obs, d) = scripted_mutex(&s, "reopen-bound", script);
    let start = Instant::now();
    let e = block_on(m.acquire_timeout(Duration::from_secs(20))).unwrap_err();
    let took = start.elapsed();
    assert!(
        matches!(e, ZkLockError::SessionsKeepEnding { .. }),
        "expected SessionsKeepEnding, got {e}"
    );
    coord.settled_trace_len();
    // One listing per session (a create may also meet a reaped container and make it again).
    let lists = coord.trace().iter().filter(|r| **r == Req::List).count();
    let limit = lockwright::zk::SESSION_REOPEN_LIMIT as usize;
    assert_eq!(lists, limit + 1, "{:?}", coord.trace());
    // Paced from the second re-open on: 10 + 20 + 40 + 80 ms.
    assert!(
        took >= Duration::from_millis(150),
        "re-opens not paced: {took:?}"
    );
    // The replaced sessions were closed with their nodes. The script's last "expiry" was a
    // lie (the session lives), so its node lives until the client goes: at most that one.
    let left = children(&obs, &d);
    assert!(
        left.len() <= 1,
        "the replaced sessions' nodes left behind: {left:?}"
    );
    drop(m);
    drop(coord);
    assert!(
        zk_support::eventually(Duration::from_secs(10), || children(&obs, &d).is_empty()),
        "nodes left behind: {:?}",
        children(&obs, &d)
    );
}

/// Issue #33: a lock directory that vanishes between its make and every create (each create
/// answered `NoNode`) used to loop, making the directory again without a pause and without an
/// end. The acquire now makes it at most `DIRECTORY_REMAKE_LIMIT` times, pacing from the second
/// on, and then fails with a hard error naming the directory.
#[test]
fn an_acquire_whose_directory_keeps_vanishing_ends() {
    let s = server();
    let script = (0..10).map(|_| (Req::Create, no_node())).collect();
    let (coord, m, _obs, d) = scripted_mutex(&s, "vanishing-dir", script);
    let start = Instant::now();
    let e = block_on(m.acquire_timeout(Duration::from_secs(20))).unwrap_err();
    let took = start.elapsed();
    assert_eq!(variant(&e), "Zk", "{e}");
    assert!(
        e.to_string().contains(&d),
        "the error names the directory: {e}"
    );
    let makes = coord
        .trace()
        .iter()
        .filter(|r| **r == Req::EnsureDir)
        .count();
    let limit = lockwright::zk::DIRECTORY_REMAKE_LIMIT as usize;
    assert_eq!(makes, limit, "{:?}", coord.trace());
    // Paced from the second make on: 10 + 20 + 40 + 80 ms.
    assert!(
        took >= Duration::from_millis(150),
        "makes not paced: {took:?}"
    );
}
