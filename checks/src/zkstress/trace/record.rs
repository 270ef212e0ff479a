//! What a `zk-stress-client` records of its own run: every request its mutex sends through
//! the coordination interface and the answer it got (with the zxid where the answer carries
//! one), plus what the caller saw (a guard returned, an acquire that failed). One JSON line per
//! event, written before the next request is sent, so a client killed by the `kill` fault
//! leaves every event up to its last answer.
//!
//! [`Traced`] wraps the production `ZkClient` (or any [`Coordination`]): the recipe runs
//! unchanged on it. Nothing here decides anything; the orchestrator merges the records with
//! ZooKeeper's transaction log and replays them through the model (`super::replay`).

use std::fs::File;
use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use lockwright::zk::{
    CoordError, Coordination, GuardedOp, Listing, LockNode, MultiError, NodeStat, OpResult, Search,
    SessionEvent, SessionId, WatchOutcome,
};
use serde::{Deserialize, Serialize};

/// The request or observation an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// The process's first session (`session`).
    Start,
    /// `create_lock_node(path = prefix)`: `path` becomes the node made, `zxid` its czxid.
    Create,
    /// `find_own_node`: `names` the candidates found.
    Search,
    Sync,
    /// `list_children`: `names` the children.
    List,
    /// `watch_node(path)`.
    Watch,
    /// `wait_watch_event` returned (`res` ok: fired; expired: the session went).
    Wait,
    /// `delete_node(path)`.
    Delete,
    /// `check_node(path)`.
    Check,
    /// `guarded_write(path = lock node or none)`; `data` the first `setData`'s data.
    Multi,
    /// `read_node(path)`; `value` the counter's value when it holds one.
    Read,
    /// `new_session(session)` answered `new_session`.
    NewSession,
    /// `ensure_dir`.
    EnsureDir,
    /// The caller got a guard on `path` (token `zxid`).
    Acquired,
    /// The caller's acquire failed (`data`: the error).
    AcquireFailed,
}

/// How a request was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Res {
    Ok,
    NoNode,
    Expired,
    /// `ConnectionLoss`: applied or not.
    Loss,
    /// Any other error.
    Error,
}

impl Res {
    fn of(e: &CoordError) -> Res {
        match e {
            CoordError::NoNode => Res::NoNode,
            CoordError::SessionExpired => Res::Expired,
            e if e.outcome_unknown() => Res::Loss,
            _ => Res::Error,
        }
    }
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub op: Op,
    pub res: Res,
    /// The client's current session when the request was sent.
    pub session: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
    /// A search's candidates' owners (`Stat.ephemeralOwner`), in the order of `names`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owners: Option<Vec<i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zxid: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_session: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
}

impl Event {
    pub fn new(op: Op, res: Res, session: SessionId) -> Event {
        Event {
            op,
            res,
            session: session.0,
            path: None,
            names: None,
            owners: None,
            zxid: None,
            new_session: None,
            data: None,
            value: None,
        }
    }

    fn path(mut self, p: &str) -> Event {
        self.path = Some(p.to_string());
        self
    }
}

/// Where a process writes its events: one file, one line per event.
pub struct Recorder {
    file: Option<Mutex<File>>,
}

impl Recorder {
    /// Creates `path` (fails if it exists: each process has its own file).
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(path: &Path) -> std::io::Result<Recorder> {
        let file = File::options().write(true).create_new(true).open(path)?;
        Ok(Recorder {
            file: Some(Mutex::new(file)),
        })
    }

    /// Records nothing (a client started without `--trace`).
    pub fn none() -> Recorder {
        Recorder { file: None }
    }

    /// Writes one event (a lost trace line makes the replay report the run unmatched, so a
    /// write error is ignored here rather than ending the client).
    pub fn record(&self, ev: &Event) {
        let Some(file) = &self.file else {
            return;
        };
        let Ok(mut line) = serde_json::to_vec(ev) else {
            return;
        };
        line.push(b'\n');
        let mut f = file.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = f.write_all(&line);
    }
}

/// Reads one process's events (a last line cut by a kill is left out).
///
/// # Errors
/// The file cannot be read.
pub fn read_events(path: &Path) -> std::io::Result<Vec<Event>> {
    let text = std::fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

/// A [`Coordination`] that records every step of the one it wraps.
pub struct Traced<C: Coordination> {
    inner: C,
    rec: Recorder,
    /// The counter znode: a read of it is the model's `Read`.
    counter: String,
}

impl<C: Coordination> Traced<C> {
    pub fn new(inner: C, rec: Recorder, counter: String) -> Traced<C> {
        let t = Traced {
            inner,
            rec,
            counter,
        };
        t.rec
            .record(&Event::new(Op::Start, Res::Ok, t.inner.session()));
        t
    }

    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// Records an observation of the caller.
    pub fn observe(&self, ev: Event) {
        self.rec.record(&ev);
    }
}

fn first_set_data(ops: &[GuardedOp]) -> Option<String> {
    ops.iter().find_map(|o| match o {
        GuardedOp::SetData { data, .. } => Some(String::from_utf8_lossy(data).into_owned()),
        _ => None,
    })
}

impl<C: Coordination> Coordination for Traced<C> {
    type Watch = C::Watch;

    async fn create_lock_node(&self, prefix: &str, data: &[u8]) -> Result<LockNode, CoordError> {
        let s = self.inner.session();
        let r = self.inner.create_lock_node(prefix, data).await;
        let ev = match &r {
            Ok(n) => {
                let mut ev = Event::new(Op::Create, Res::Ok, n.stat.ephemeral_owner).path(&n.path);
                ev.zxid = Some(n.stat.czxid);
                ev.data = Some(prefix.to_string());
                ev
            }
            Err(e) => {
                let mut ev = Event::new(Op::Create, Res::of(e), s);
                ev.data = Some(prefix.to_string());
                ev
            }
        };
        self.rec.record(&ev);
        r
    }

    async fn find_own_node(&self, dir: &str, prefix: Option<&str>) -> Result<Search, CoordError> {
        let s = self.inner.session();
        let r = self.inner.find_own_node(dir, prefix).await;
        let ev = match &r {
            Ok(found) => {
                let mut ev = Event::new(Op::Search, Res::Ok, found.session).path(dir);
                ev.names = Some(found.candidates.iter().map(|(n, _)| n.clone()).collect());
                ev.owners = Some(
                    found
                        .candidates
                        .iter()
                        .map(|(_, s)| s.ephemeral_owner.0)
                        .collect(),
                );
                ev.data = prefix.map(str::to_string);
                ev
            }
            Err(e) => Event::new(Op::Search, Res::of(e), s).path(dir),
        };
        self.rec.record(&ev);
        r
    }

    async fn list_children(&self, dir: &str) -> Result<Listing, CoordError> {
        let s = self.inner.session();
        let r = self.inner.list_children(dir).await;
        let ev = match &r {
            Ok(l) => {
                let mut ev = Event::new(Op::List, Res::Ok, l.session).path(dir);
                ev.names = Some(l.children.clone());
                ev
            }
            Err(e) => Event::new(Op::List, Res::of(e), s).path(dir),
        };
        self.rec.record(&ev);
        r
    }

    async fn watch_node(&self, path: &str) -> Result<Self::Watch, CoordError> {
        let s = self.inner.session();
        let r = self.inner.watch_node(path).await;
        let res = r.as_ref().map_or_else(Res::of, |_| Res::Ok);
        self.rec.record(&Event::new(Op::Watch, res, s).path(path));
        r
    }

    async fn wait_watch_event(&self, watch: Self::Watch) -> WatchOutcome {
        let s = self.inner.session();
        let r = self.inner.wait_watch_event(watch).await;
        let res = match r {
            WatchOutcome::Fired => Res::Ok,
            WatchOutcome::SessionExpired => Res::Expired,
        };
        self.rec.record(&Event::new(Op::Wait, res, s));
        r
    }

    async fn delete_node(&self, path: &str) -> Result<(), CoordError> {
        let s = self.inner.session();
        let r = self.inner.delete_node(path).await;
        let res = r.as_ref().map_or_else(Res::of, |()| Res::Ok);
        self.rec.record(&Event::new(Op::Delete, res, s).path(path));
        r
    }

    async fn sync(&self, path: &str) -> Result<(), CoordError> {
        let s = self.inner.session();
        let r = self.inner.sync(path).await;
        let res = r.as_ref().map_or_else(Res::of, |()| Res::Ok);
        self.rec.record(&Event::new(Op::Sync, res, s).path(path));
        r
    }

    async fn check_node(&self, path: &str) -> Result<Option<NodeStat>, CoordError> {
        let s = self.inner.session();
        let r = self.inner.check_node(path).await;
        let res = match &r {
            Ok(Some(_)) => Res::Ok,
            Ok(None) => Res::NoNode,
            Err(e) => Res::of(e),
        };
        self.rec.record(&Event::new(Op::Check, res, s).path(path));
        r
    }

    async fn guarded_write(
        &self,
        lock_node: Option<&str>,
        ops: &[GuardedOp],
    ) -> Result<Vec<OpResult>, MultiError> {
        let s = self.inner.session();
        let r = self.inner.guarded_write(lock_node, ops).await;
        let res = match &r {
            Ok(_) => Res::Ok,
            Err(e) => Res::of(&e.error),
        };
        let mut ev = Event::new(Op::Multi, res, s);
        ev.path = lock_node.map(str::to_string);
        ev.data = first_set_data(ops);
        self.rec.record(&ev);
        r
    }

    fn session(&self) -> SessionId {
        self.inner.session()
    }

    fn session_event(&self) -> SessionEvent {
        self.inner.session_event()
    }

    async fn new_session(&self, expired: SessionId) -> Result<SessionId, CoordError> {
        let r = self.inner.new_session(expired).await;
        let mut ev = Event::new(
            Op::NewSession,
            r.as_ref().map_or_else(Res::of, |_| Res::Ok),
            expired,
        );
        ev.new_session = r.as_ref().ok().map(|s| s.0);
        self.rec.record(&ev);
        r
    }

    async fn ensure_dir(&self, dir: &str) -> Result<(), CoordError> {
        let s = self.inner.session();
        let r = self.inner.ensure_dir(dir).await;
        let res = r.as_ref().map_or_else(Res::of, |()| Res::Ok);
        self.rec
            .record(&Event::new(Op::EnsureDir, res, s).path(dir));
        r
    }

    async fn read_node(&self, path: &str) -> Result<(Vec<u8>, NodeStat), CoordError> {
        let s = self.inner.session();
        let r = self.inner.read_node(path).await;
        if path == self.counter {
            let mut ev =
                Event::new(Op::Read, r.as_ref().map_or_else(Res::of, |_| Res::Ok), s).path(path);
            if let Ok((data, _)) = &r {
                ev.value = crate::zkstress::client::parse_counter(data);
            }
            self.rec.record(&ev);
        }
        r
    }

    fn new_protection_id(&self) -> String {
        self.inner.new_protection_id()
    }

    fn now(&self) -> Instant {
        self.inner.now()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + '_ {
        self.inner.sleep(duration)
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.inner.spawn(task);
    }
}
