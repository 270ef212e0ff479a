//! [`Core`]: the simulated ZooKeeper's state and the effect of each call on it — the model's
//! [`Server`] (used verbatim: the one source of ZooKeeper semantics), each client's current
//! session, the lost replies armed for each client, and the fenced resource.
//!
//! The simulated server ([`super::world`]) runs every call through these methods; the replayer
//! ([`super::refine`]) runs every recorded step through them again on a shadow copy, so the
//! recording alone rebuilds the server's state at every step, and every recorded answer is
//! checked to be the one the semantics give.

use lockwright_model::zk::{ClientId, Name, Server, SessionId, ZkError, Znode, PREVIOUS_ATTEMPT};

use super::record::{Call, Outcome, Step};
use super::suspend::Conn;

/// How a wait for a watch event stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Nothing yet.
    Pending,
    /// The watch fired; the event is taken (`ReceiveWatchEvent`).
    Fired,
    /// The client's current session expired; the client learned it (`ReceiveSessionEvent`)
    /// and runs a new session now.
    Expired,
    /// The watch's session is no longer the client's (it restarted): the wait ends, no step
    /// (the model's `RestartClient` already moved the client on).
    Replaced,
}

/// The simulated server's state.
#[derive(Clone, Debug)]
pub(crate) struct Core {
    pub(crate) server: Server,
    /// Each client's current session epoch (indexed by process: with a shared client, `c1`'s
    /// sessions are `c0`'s).
    pub(crate) epochs: Vec<u8>,
    /// The ZooKeeper client (process) each mutex runs in: itself, or `0` for `c1` with a
    /// shared client (the model's `Scenario::process`).
    pub(crate) process: Vec<ClientId>,
    /// The epoch of the session each mutex was last told of (the model's `Client::known`).
    pub(crate) known: Vec<u8>,
    /// The node each mutex last set a watch on. The model's server keeps one fired event per
    /// session; with a shared client two mutexes watch in one session, so a mutex takes that
    /// event only once the node IT watched is gone (either is a model step; this one wakes the
    /// waiter whose predecessor went).
    pub(crate) watched: Vec<Option<Znode>>,
    /// A lag armed for the client's next search that would find its node (the model's `lag`).
    pub(crate) lag_armed: Vec<bool>,
    /// The client's last delete lost its reply and it has sent none since (the model's client
    /// is `Releasing`: a release the caller may drop, `Abandon`).
    pub(crate) lost_delete: Vec<bool>,
    /// The client's last request was a `sync` (its next read is answered on current data).
    pub(crate) synced: Vec<bool>,
    /// A lost reply armed for the client's next create or delete (applied or not).
    pub(crate) armed: Vec<Option<bool>>,
    /// A misread armed for the client's next create that is applied (the model's
    /// `MisreadOwnNode`): that node is named to its owner under a name the recipe does not read.
    pub(crate) misread_armed: Vec<bool>,
    /// Nodes named to their owner under an unreadable name: (owner client, the node, the
    /// owner's listing has shown it yet).
    pub(crate) bent: Vec<(ClientId, Znode, bool)>,
    /// The fenced resource: the highest token it accepted.
    pub(crate) highest: Option<i64>,
    /// Each client's connection: a suspension armed, the connection down, the request queued
    /// (`super::suspend`).
    pub(crate) conn: Vec<Conn>,
}

impl Core {
    /// `clients` clients, each connected in its first session (`c0` and `c1` in one session
    /// of one client if `shared`); `/locks` empty.
    pub(crate) fn new(clients: u8, shared: bool) -> Core {
        let process: Vec<ClientId> = (0..clients)
            .map(|c| if shared && c < 2 { 0 } else { c })
            .collect();
        let mut server = Server::new();
        for c in (0..clients).filter(|&c| process[usize::from(c)] == c) {
            server.open_session(SessionId {
                client: c,
                epoch: 0,
            });
        }
        Core {
            server,
            epochs: vec![0; usize::from(clients)],
            process,
            known: vec![0; usize::from(clients)],
            watched: vec![None; usize::from(clients)],
            lag_armed: vec![false; usize::from(clients)],
            synced: vec![false; usize::from(clients)],
            lost_delete: vec![false; usize::from(clients)],
            armed: vec![None; usize::from(clients)],
            misread_armed: vec![false; usize::from(clients)],
            bent: Vec::new(),
            highest: None,
            conn: vec![Conn::default(); usize::from(clients)],
        }
    }

    pub(crate) fn session(&self, c: ClientId) -> SessionId {
        let p = self.process[usize::from(c)];
        SessionId {
            client: p,
            epoch: self.epochs[usize::from(p)],
        }
    }

    /// Whether mutex `c` shares its ZooKeeper client with another mutex.
    pub(crate) fn shares(&self, c: ClientId) -> bool {
        let p = self.process[usize::from(c)];
        self.process.iter().filter(|&&q| q == p).count() > 1
    }

    /// Mutex `c` looks at its client's session: `true` if it is not the one `c` was last told
    /// of (another mutex sharing the client renewed it: the model's `NoticeSessionChange`).
    pub(crate) fn notice(&mut self, c: ClientId) -> bool {
        let now = self.session(c).epoch;
        let known = &mut self.known[usize::from(c)];
        let changed = *known != now;
        *known = now;
        changed
    }

    pub(crate) fn live(&self, c: ClientId) -> bool {
        self.server.is_alive(self.session(c))
    }

    /// The client opens a new session (after learning that its session expired, or on a
    /// restart).
    fn renew(&mut self, c: ClientId) {
        let p = self.process[usize::from(c)];
        let e = &mut self.epochs[usize::from(p)];
        *e = e.checked_add(1).expect("session epochs exhausted");
        let s = self.session(c);
        self.server.open_session(s);
        // A new session is a new connection: a request queued on the old one is dropped.
        self.conn[usize::from(c)].end();
        // The mutex that renews knows it; one sharing the client notices later.
        self.known[usize::from(c)] = s.epoch;
    }

    /// A request of `c` in an expired session: answered `SessionExpired`, nothing applied; the
    /// client learns it and opens a new session within the same step (as the model's "learn").
    fn expired(&mut self, c: ClientId) -> Option<Outcome> {
        if self.live(c) {
            return None;
        }
        self.renew(c);
        Some(Outcome::SessionExpired)
    }

    pub(crate) fn create(&mut self, c: ClientId, uuid: Option<u8>) -> (Outcome, Option<Znode>) {
        // A `sync` counts for the search right after it, not for one after a later create.
        self.synced[usize::from(c)] = false;
        if let Some(o) = self.expired(c) {
            return (o, None);
        }
        let s = self.session(c);
        if let Some(applied) = self.armed[usize::from(c)].take() {
            if applied {
                let z = self
                    .server
                    .create_sequential(uuid, s)
                    .expect("live session");
                self.bend(c, z);
            }
            return (Outcome::ReplyLost { applied }, None);
        }
        let z = self
            .server
            .create_sequential(uuid, s)
            .expect("live session");
        self.bend(c, z);
        (Outcome::Ok, Some(z))
    }

    /// A misread armed for `c`: its node `z` is named to it unreadably from now on.
    fn bend(&mut self, c: ClientId, z: Znode) {
        if std::mem::take(&mut self.misread_armed[usize::from(c)]) {
            self.bent.push((c, z, false));
        }
    }

    /// Whether client `c` sees the node now called `name` under an unreadable name (the very
    /// node bent: a name re-used after a re-created parent is another node).
    pub(crate) fn is_bent(&self, c: ClientId, name: Name) -> bool {
        let now = self.server.node(name).map(|z| z.czxid);
        self.bent
            .iter()
            .any(|&(o, z, _)| o == c && z.name == name && now == Some(z.czxid))
    }

    /// `getChildren` (the search): the children, or `SessionExpired`.
    pub(crate) fn children(&mut self, c: ClientId) -> (Outcome, Vec<Znode>) {
        if let Some(o) = self.expired(c) {
            return (o, Vec::new());
        }
        (Outcome::Ok, self.server.children().to_vec())
    }

    /// The protected search: the children, or `SessionExpired`. With a lag armed and no `sync`
    /// before it, a search that would find the client's node of its current session is
    /// answered `Lagged` by a server that has not applied the client's writes yet: without the
    /// nodes of that session (the model's `LaggedSearch`: the search misses the node).
    pub(crate) fn search(&mut self, c: ClientId) -> (Outcome, Vec<Znode>) {
        let synced = std::mem::take(&mut self.synced[usize::from(c)]);
        let (o, mut children) = self.children(c);
        if o != Outcome::Ok || synced || !self.lag_armed[usize::from(c)] {
            return (o, children);
        }
        let session = self.session(c);
        let mine =
            |z: &Znode| z.owner == session && z.name.uuid.map(|u| u % PREVIOUS_ATTEMPT) == Some(c);
        if !children.iter().any(mine) {
            return (o, children);
        }
        self.lag_armed[usize::from(c)] = false;
        children.retain(|z| z.owner != session);
        (Outcome::Lagged, children)
    }

    /// `sync` of the lock directory: the client's next search reads current data.
    pub(crate) fn sync(&mut self, c: ClientId) -> Outcome {
        self.synced[usize::from(c)] = true;
        Outcome::Ok
    }

    pub(crate) fn arm_lag(&mut self, c: ClientId) -> Outcome {
        self.lag_armed[usize::from(c)] = true;
        Outcome::Ok
    }

    /// `getChildren` (the listing): as [`Core::children`], answered `Misread` the first time
    /// it shows the client its own bent node (the model's `MisreadOwnNode`).
    pub(crate) fn listing(&mut self, c: ClientId) -> (Outcome, Vec<Znode>) {
        let (o, children) = self.children(c);
        if o != Outcome::Ok {
            return (o, children);
        }
        for b in self.bent.iter_mut() {
            if b.0 == c && !b.2 && children.iter().any(|z| z.czxid == b.1.czxid) {
                b.2 = true;
                return (Outcome::Misread, children);
            }
        }
        (o, children)
    }

    pub(crate) fn watch(&mut self, c: ClientId, name: Name) -> Outcome {
        if let Some(o) = self.expired(c) {
            return o;
        }
        match self.server.get_data_watch(name, self.session(c)) {
            Ok(_) => {
                self.watched[usize::from(c)] = self.server.node(name);
                Outcome::Ok
            }
            Err(ZkError::NoNode) => Outcome::NoNode,
            Err(e) => unreachable!("getData in a live session: {e}"),
        }
    }

    /// One look at a wait for the watch set in session `watching`.
    pub(crate) fn wait(&mut self, c: ClientId, watching: SessionId) -> Wait {
        let s = self.session(c);
        if s != watching {
            Wait::Replaced
        } else if !self.live(c) {
            self.renew(c);
            Wait::Expired
        } else if self.watch_gone(c) && self.server.take_watch_event(s) {
            self.watched[usize::from(c)] = None;
            Wait::Fired
        } else {
            Wait::Pending
        }
    }

    /// Whether the node mutex `c` watched is gone (so the session's event is its).
    fn watch_gone(&self, c: ClientId) -> bool {
        match self.watched[usize::from(c)] {
            Some(w) => self.server.node(w.name).is_none_or(|z| z.czxid != w.czxid),
            None => true,
        }
    }

    /// The client acts on the session-event stream's `Expired` (`new_session` of its current,
    /// dead session). `false` if the session is alive (then nothing changes).
    pub(crate) fn learn(&mut self, c: ClientId) -> bool {
        self.expired(c).is_some()
    }

    pub(crate) fn delete(&mut self, c: ClientId, name: Name) -> Outcome {
        if let Some(o) = self.expired(c) {
            return o;
        }
        let o = self.delete_live(c, name);
        self.lost_delete[usize::from(c)] = matches!(o, Outcome::ReplyLost { .. });
        o
    }

    /// The caller drops the client's release after its delete lost a reply (`Abandon`):
    /// `Ok` if it can (nothing changes on the server), else `Skipped`.
    pub(crate) fn abandon(&mut self, c: ClientId) -> Outcome {
        if std::mem::take(&mut self.lost_delete[usize::from(c)]) {
            Outcome::Ok
        } else {
            Outcome::Skipped
        }
    }

    fn delete_live(&mut self, c: ClientId, name: Name) -> Outcome {
        let s = self.session(c);
        if let Some(applied) = self.armed[usize::from(c)].take() {
            if applied {
                let _ = self.server.delete(name, s);
            }
            return Outcome::ReplyLost { applied };
        }
        match self.server.delete(name, s) {
            Ok(_) => Outcome::Ok,
            Err(ZkError::NoNode) => Outcome::NoNode,
            Err(e) => unreachable!("delete in a live session: {e}"),
        }
    }

    pub(crate) fn check(&mut self, c: ClientId, name: Name) -> (Outcome, Option<Znode>) {
        if let Some(o) = self.expired(c) {
            return (o, None);
        }
        match self
            .server
            .exists(name, self.session(c))
            .expect("live session")
        {
            Some(z) => (Outcome::Ok, Some(z)),
            None => (Outcome::NoNode, None),
        }
    }

    /// `multi(check(name, 0), write)`; `None`: the write without the check, to the model's
    /// resource outside ZooKeeper (always accepted).
    pub(crate) fn multi(&mut self, c: ClientId, check: Option<Name>) -> Outcome {
        let Some(name) = check else {
            return Outcome::Ok;
        };
        if let Some(o) = self.expired(c) {
            return o;
        }
        match self.server.multi_check_write(name, self.session(c)) {
            Ok(_) => Outcome::Ok,
            Err(ZkError::NoNode) => Outcome::NoNode,
            Err(e) => unreachable!("multi in a live session: {e}"),
        }
    }

    /// A fenced write or a claim: the same check (refused below the highest token accepted).
    pub(crate) fn fenced_write(&mut self, token: i64) -> Outcome {
        if self.highest.is_some_and(|h| token < h) {
            return Outcome::Rejected;
        }
        self.highest = Some(self.highest.map_or(token, |h| h.max(token)));
        Outcome::Ok
    }

    // ---- the environment ----

    pub(crate) fn expire(&mut self, c: ClientId) -> Outcome {
        if !self.live(c) {
            return Outcome::Skipped;
        }
        self.server.expire_session(self.session(c));
        // A request still queued dies with its session (the connection stays down).
        self.conn[usize::from(c)].queued = None;
        Outcome::Ok
    }

    pub(crate) fn restart(&mut self, c: ClientId) -> Outcome {
        self.server.disconnect(self.session(c));
        let known = self.known[usize::from(c)];
        self.renew(c);
        if self.shares(c) {
            // The shared handle restarts: each mutex notices at its next look (as the model).
            self.known[usize::from(c)] = known;
        }
        Outcome::Ok
    }

    /// The oldest live session `c` abandoned (as the model picks it).
    pub(crate) fn expire_old(&mut self, c: ClientId) -> Outcome {
        let current = self.session(c);
        let old = self
            .server
            .sessions()
            .iter()
            .copied()
            .find(|s| s.client == c && *s != current);
        match old {
            Some(s) => {
                self.server.expire_session(s);
                Outcome::Ok
            }
            None => Outcome::Skipped,
        }
    }

    pub(crate) fn recreate_parent(&mut self) -> Outcome {
        match self.server.recreate_parent() {
            Ok(()) => Outcome::Ok,
            Err(_) => Outcome::Skipped,
        }
    }

    pub(crate) fn arm(&mut self, c: ClientId, applied: bool) -> Outcome {
        self.armed[usize::from(c)] = Some(applied);
        Outcome::Ok
    }

    pub(crate) fn arm_misread(&mut self, c: ClientId) -> Outcome {
        self.misread_armed[usize::from(c)] = true;
        Outcome::Ok
    }

    /// Re-executes a recorded step (the replayer's shadow): the outcome these semantics give.
    /// `None` for a step that has no effect on the server (observations, re-entrancy).
    pub(crate) fn apply(&mut self, step: &Step) -> Option<Outcome> {
        let c = step.client;
        let cl = || c.expect("a client step");
        Some(match &step.call {
            Call::Create { uuid } => self.create(cl(), *uuid).0,
            Call::FindOwnNode | Call::CleanupFind { .. } => self.search(cl()).0,
            Call::Sync => self.sync(cl()),
            Call::Abandon => self.abandon(cl()),
            Call::DropAcquire | Call::GiveUp | Call::Drop { .. } => return None,
            Call::ListChildren => self.listing(cl()).0,
            Call::Watch { name } => self.watch(cl(), *name),
            Call::WatchEvent => match self.wait(cl(), self.session(cl())) {
                Wait::Fired => Outcome::Ok,
                other => panic!("shadow: no watch event to take ({other:?})"),
            },
            Call::SessionEvent => {
                if self.learn(cl()) {
                    Outcome::Ok
                } else {
                    Outcome::Skipped
                }
            }
            Call::Delete { name } => self.delete(cl(), *name),
            Call::Check { name } => self.check(cl(), *name).0,
            Call::GuardedWrite { check } => self.multi(cl(), *check),
            Call::FencedWrite { token } | Call::Claim { token } => self.fenced_write(*token),
            Call::Write | Call::Read => Outcome::Ok,
            Call::Reenter
            | Call::ReleaseInner
            | Call::Acquired
            | Call::LockLost
            | Call::GaveUp { .. } => return None,
            Call::Expire(c) => self.expire(*c),
            Call::Restart(c) => self.restart(*c),
            Call::ExpireOld(c) => self.expire_old(*c),
            Call::RecreateParent => self.recreate_parent(),
            Call::NoticeSessionChange => {
                if self.notice(cl()) {
                    Outcome::Ok
                } else {
                    Outcome::Skipped
                }
            }
            Call::Tick { .. } => Outcome::Ok,
            Call::Arm { client, applied } => self.arm(*client, *applied),
            Call::ArmMisread(c) => self.arm_misread(*c),
            Call::ArmLag(c) => self.arm_lag(*c),
            Call::ArmSuspend(c) => self.arm_suspend(*c),
            Call::Suspend { queued } => self.suspend(cl(), *queued),
            Call::ApplySent(c) => self.apply_sent(*c),
            Call::Reconnect(c) => self.reconnect(*c),
        })
    }
}
