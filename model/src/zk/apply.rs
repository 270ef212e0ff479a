//! The model's transitions: what each action does to the state (the step table's outcomes,
//! `docs/zookeeper.md` §1), then renumbering. `protocol.rs` says which actions are enabled.

use crate::zk::action::Action;
use crate::zk::scenario::{ClientId, Guard, Scenario, WriteMode};
use crate::zk::server::{Name, ZkError};
use crate::zk::state::{Cleanup, Client, Event, Own, Pc, Sent, State, PREVIOUS_ATTEMPT};

impl Scenario {
    /// The client is granted the lock: the grant gets the next number of the grant history
    /// (above every grant still remembered).
    fn grant(&self, s: &mut State, c: ClientId) {
        let epoch = s.clients[c as usize].session;
        let latest = s
            .holders()
            .map(|h| s.clients[h as usize].grant)
            .chain(s.resource.max_grant)
            .max();
        let cl = &mut s.clients[c as usize];
        cl.pc = if self.writes == WriteMode::FencedClaim {
            Pc::Granted
        } else {
            Pc::Holding
        };
        cl.count = 1;
        cl.held_in = epoch;
        cl.grant = latest.map_or(0, |g| g + 1);
        cl.overwritten = false;
        cl.pred = None;
        if s.expired_holder {
            s.expired_holder = false;
            s.last = Event::HandoffAfterExpiry;
        }
    }

    /// The guard reports `LockLost`: the hold ends; the node is deleted next.
    fn lock_lost(s: &mut State, c: ClientId) {
        let cl = &mut s.clients[c as usize];
        cl.pc = Pc::Releasing;
        cl.count = 0;
        cl.held_in = 0;
        cl.grant = 0;
        cl.overwritten = false;
        s.last = Event::LockLost;
    }

    /// The guard reports `LockLost` because the node at its path is gone or is not its own
    /// any more (`CheckLockNode`, a guarded write's `NoNode`): the hold ends and nothing is
    /// deleted — a delete by that name would remove whoever holds the name now. The client
    /// starts over.
    fn node_lost(s: &mut State, c: ClientId) {
        Self::start_over(s, c);
        s.last = Event::LockLost;
    }

    /// The client starts over without a node. Its connection stays as it is (a request it
    /// sent stays queued at the server), but nothing awaits an answer any more.
    fn start_over(s: &mut State, c: ClientId) {
        let cl = s.clients[c as usize];
        s.clients[c as usize] = Client {
            session: cl.session,
            known: cl.known,
            process: cl.process,
            suspended: cl.suspended,
            queued: cl.queued,
            cleanup: cl.cleanup,
            ..Client::NEW
        };
    }

    /// The answer to the client's create (`Idle`) or delete (`Releasing`, or a holder's
    /// release) is `ConnectionLoss`: applied or not, it cannot tell. The same rules as
    /// `LoseReply`.
    fn connection_lost(&self, s: &mut State, c: ClientId) {
        let rules = self.variant.rules();
        let cl = &mut s.clients[c as usize];
        if cl.pc == Pc::Idle {
            if rules.search_after_lost_create {
                cl.pc = Pc::CreateLost;
            }
        } else if rules.retry_lost_delete {
            cl.pc = Pc::Releasing;
            cl.count = 0;
            cl.held_in = 0;
            cl.grant = 0;
        } else {
            Self::start_over(s, c);
        }
    }

    /// The client has a new session (it learned the old one expired, or it restarted); its
    /// old session's nodes are no longer its own (`docs/zookeeper.md`, "Session change").
    /// A suspended client first takes the `ConnectionLoss` of the request it had in flight;
    /// a request still queued is dropped (in a restart the old session lives on, but the
    /// model does not apply a request of an abandoned handle: `docs/zookeeper.md`, §9).
    fn new_session(&self, s: &mut State, c: ClientId) {
        let cl = &mut s.clients[c as usize];
        let awaiting = cl.awaiting;
        cl.suspended = false;
        cl.awaiting = false;
        cl.queued = None;
        if awaiting {
            self.connection_lost(s, c);
        }
        self.open_next_session(s, c);
        let cl = &mut s.clients[c as usize];
        cl.known = cl.session;
        self.session_changed(s, c);
    }

    /// `c`'s ZooKeeper client opens its next session (for every mutex sharing the client: it
    /// is the session their requests run in from now on).
    fn open_next_session(&self, s: &mut State, c: ClientId) {
        let p = self.process(c);
        for cl in s.clients.iter_mut().filter(|d| d.process == p) {
            cl.session += 1;
        }
        let session = s.session(c);
        s.server.open_session(session);
    }

    /// The session-change rules for `c`, which now knows its client's current session
    /// (`docs/zookeeper.md`, "Session change"). A node owned by that session is kept: a mutex
    /// sharing its client can have created it there after another mutex renewed the session
    /// (**drop-own-on-session-swap** drops it). A search after a lost create goes on: it
    /// adopts only a node of the session it runs in, so a create that ran in the old session
    /// is not found (the search starts over), and one that ran in the renewed session (a
    /// shared client) is found and kept (**drop-own-on-session-swap** drops the search too,
    /// and orphans that node).
    fn session_changed(&self, s: &mut State, c: ClientId) {
        let rules = self.variant.rules();
        let current = s.session(c);
        let cl = s.clients[c as usize];
        // The cleanup's search goes on (or stops) as an acquire's does; a delete goes on.
        if cl.cleanup == Some(Cleanup::Search)
            && !(rules.search_any_session || rules.keep_own_on_session_swap)
        {
            s.clients[c as usize].cleanup = None;
        }
        let own_current = cl.own.is_some_and(|o| {
            s.server
                .node(o.name)
                .is_some_and(|z| z.owner == current && z.czxid == o.czxid)
        });
        match cl.pc {
            Pc::Idle | Pc::Releasing | Pc::Failed => {}
            Pc::CreateLost if rules.search_any_session || rules.keep_own_on_session_swap => {}
            Pc::Created | Pc::MustWatch | Pc::Waiting
                if own_current && rules.keep_own_on_session_swap =>
            {
                // Ours in the live session: list again (a watch of the old one is gone).
                let cl = &mut s.clients[c as usize];
                cl.pc = Pc::Created;
                cl.pred = None;
            }
            Pc::CreateLost | Pc::Created | Pc::MustWatch | Pc::Waiting => Self::start_over(s, c),
            Pc::Granted | Pc::Holding | Pc::Updating | Pc::Checked => match self.guard {
                Guard::Lockwright => Self::lock_lost(s, c),
                Guard::Curator => {}
            },
        }
    }

    /// The resource accepts a write from holder `c`: its claim (`update` false) or its update's
    /// write. Judged from the grant history alone (never the token the resource compared):
    /// stale if a later grant's write was accepted before; a lost update if, since `c`'s read, a
    /// write made under another grant was accepted. Every other client inside an update has
    /// its read overwritten now.
    fn accept_write(&self, s: &mut State, c: ClientId, update: bool) {
        let cl = s.clients[c as usize];
        let own = cl.own.expect("a holder has a node");
        let r = &mut s.resource;
        let stale = r.max_grant.is_some_and(|m| m > cl.grant);
        let lost_update = update && cl.overwritten;
        r.max_grant = Some(r.max_grant.map_or(cl.grant, |m| m.max(cl.grant)));
        for (d, other) in s.clients.iter_mut().enumerate() {
            if d != c as usize && other.pc.updating() {
                other.overwritten = true;
            }
        }
        let me = &mut s.clients[c as usize];
        me.overwritten = false;
        if update {
            me.pc = Pc::Holding;
        }
        s.last = Event::Accepted {
            update,
            stale,
            lost_update,
        };
        r.max_czxid = Some(r.max_czxid.map_or(own.czxid, |m| m.max(own.czxid)));
        if self.writes == WriteMode::FencedBySequence {
            r.max_seq = Some(r.max_seq.map_or(own.name.seq, |m| m.max(own.name.seq)));
        }
    }

    /// Performs an enabled action in place, then renumbers (`State::compact`).
    pub fn apply(&self, s: &mut State, action: Action) {
        self.apply_uncompacted(s, action);
        s.compact();
    }

    /// Performs an enabled action in place, keeping `s`'s numbering (new zxids and suffixes
    /// continue it): what step descriptions read.
    pub(crate) fn apply_uncompacted(&self, s: &mut State, action: Action) {
        use Action::*;
        s.last = Event::None;
        let rules = self.variant.rules();
        // Only a create right after a create can have been in flight together with it: any
        // other step is (or commutes with) a request answered after the last create was
        // applied (`Server::settle`).
        if !matches!(action, CreateLockNode(_) | CreateBehindLast(_)) {
            s.server.settle();
        }
        match action {
            CreateLockNode(c) | CreateBehindLast(c) => {
                let (uuid, session) = (self.uuid(c), s.session(c));
                let created = if matches!(action, CreateLockNode(_)) {
                    s.server.create_sequential(uuid, session)
                } else {
                    s.server.create_behind_last(uuid, session)
                };
                match created {
                    Ok(z) => {
                        let cl = &mut s.clients[c as usize];
                        cl.pc = Pc::Created;
                        cl.own = Some(Own {
                            name: z.name,
                            czxid: z.czxid,
                        });
                    }
                    // A repeated suffix on a name that exists: the acquire fails (the caller
                    // may try again). Nothing was created; the answer came after the last
                    // create was applied, so no create is in flight any more.
                    Err(ZkError::NodeExists) => {
                        s.server.settle();
                        Self::start_over(s, c);
                    }
                    Err(_) => self.new_session(s, c),
                }
            }
            LoseReply(c, applied) => {
                s.budget.lose_reply -= 1;
                let session = s.session(c);
                let cl = s.clients[c as usize];
                match cl.pc {
                    Pc::Idle | Pc::Holding | Pc::Releasing => {
                        if applied && cl.pc == Pc::Idle {
                            // `NodeExists` (a repeated suffix): refused, nothing to apply.
                            match s.server.create_sequential(self.uuid(c), session) {
                                Ok(_) | Err(ZkError::NodeExists) => {}
                                Err(e) => unreachable!("lost replies only in live sessions: {e}"),
                            }
                        } else if applied {
                            let own = cl.own.expect("a releasing client has a node");
                            let _ = s.server.delete(own.name, session);
                        }
                        self.connection_lost(s, c);
                    }
                    // A read: asked again (the recipe pauses, then repeats the step).
                    Pc::CreateLost | Pc::Created => {}
                    Pc::MustWatch => {
                        // The watch may be set though the client does not know: it asks
                        // again (the same watch), and a stale one can only wake it early.
                        if applied {
                            let pred = cl.pred.expect("a predecessor to watch");
                            let _ = s.server.get_data_watch(pred, session);
                        }
                    }
                    Pc::Updating if self.writes == WriteMode::Guarded => {
                        // The `multi`'s outcome is unknown: the caller's update ends with an
                        // error; its next update reads afresh.
                        let own = cl.own.expect("a holder has a node");
                        if applied && s.server.multi_check_write(own.name, session).is_ok() {
                            self.accept_write(s, c, true);
                        } else {
                            let cl = &mut s.clients[c as usize];
                            cl.pc = Pc::Holding;
                            cl.overwritten = false;
                        }
                    }
                    // `check-then-write`'s `exists`: asked again before the write.
                    Pc::Updating => {}
                    Pc::Waiting | Pc::Granted | Pc::Checked | Pc::Failed => {
                        unreachable!("no request whose reply could be lost")
                    }
                }
            }
            FindOwnNode(c) => {
                let session = s.session(c);
                match s.server.get_children(session) {
                    Ok(children) => {
                        let mine = |z: &&crate::zk::server::Znode| match self.uuid(c) {
                            Some(u) => {
                                z.name.uuid == Some(u)
                                    && (rules.search_any_session || z.owner == session)
                            }
                            None => z.owner == session,
                        };
                        match children.iter().find(mine) {
                            Some(z) => {
                                let own = Own {
                                    name: z.name,
                                    czxid: z.czxid,
                                };
                                let cl = &mut s.clients[c as usize];
                                cl.pc = Pc::Created;
                                cl.own = Some(own);
                            }
                            None => Self::start_over(s, c),
                        }
                    }
                    Err(_) => self.new_session(s, c),
                }
            }
            // The answer comes in the client's current session. If another mutex of a shared
            // client renewed it since this one last looked, the listing says nothing about a
            // node of the session this one knew: the recipe sets it aside and looks at the
            // session (its next step is `NoticeSessionChange`, whose rules keep the node if
            // the new session owns it, else start over). `drop-own-on-session-swap` reads the
            // listing anyway, and can be granted on a node of the abandoned session.
            ListChildren(c)
                if rules.keep_own_on_session_swap
                    && s.clients[c as usize].known != s.clients[c as usize].session => {}
            ListChildren(c) => {
                let session = s.session(c);
                let own = s.clients[c as usize]
                    .own
                    .expect("a listing client has a node");
                match s.server.get_children(session) {
                    Ok(children) => match children.iter().position(|z| z.name == own.name) {
                        None => Self::start_over(s, c),
                        // Our suffix is the counter's top or below 0: suffixes no longer say
                        // who came first. Delete our node, then fail the acquire (the caller
                        // is told to re-create the lock directory while idle).
                        Some(_)
                            if rules.refuse_counter_top
                                && (own.name.seq < 0
                                    || Some(own.name.seq) == s.server.sequence_top()) =>
                        {
                            let cl = &mut s.clients[c as usize];
                            cl.pc = Pc::Releasing;
                            cl.pred = None;
                            s.last = Event::CounterAtTop;
                        }
                        Some(0) => self.grant(s, c),
                        Some(i) => {
                            let pred = children[i - 1].name;
                            let cl = &mut s.clients[c as usize];
                            cl.pc = Pc::MustWatch;
                            cl.pred = Some(pred);
                            s.last = Event::Contention;
                        }
                    },
                    Err(_) => self.new_session(s, c),
                }
            }
            WatchPredecessor(c) => {
                let session = s.session(c);
                let pred = s.clients[c as usize].pred.expect("a predecessor to watch");
                let result = s.server.get_data_watch(pred, session);
                let cl = &mut s.clients[c as usize];
                match result {
                    Ok(_) => {
                        cl.pc = Pc::Waiting;
                        cl.pred = None;
                    }
                    Err(ZkError::NoNode) => {
                        cl.pc = Pc::Created;
                        cl.pred = None;
                    }
                    Err(_) => self.new_session(s, c),
                }
            }
            ReceiveWatchEvent(c) => {
                let session = s.session(c);
                assert!(s.server.take_watch_event(session));
                s.clients[c as usize].pc = Pc::Created;
                s.last = Event::WokenByWatch;
            }
            ReceiveSessionEvent(c) => self.new_session(s, c),
            Reenter(c) => s.clients[c as usize].count = 2,
            ReleaseInner(c) => s.clients[c as usize].count = 1,
            DeleteLockNode(c) => {
                let session = s.session(c);
                let own = s.clients[c as usize]
                    .own
                    .expect("a releasing client has a node");
                match s.server.delete(own.name, session) {
                    Ok(_) | Err(ZkError::NoNode) => Self::start_over(s, c),
                    Err(_) => {
                        // The release goes on in the new session (NoNode there is fine).
                        let cl = &mut s.clients[c as usize];
                        cl.pc = Pc::Releasing;
                        cl.count = 0;
                        cl.held_in = 0;
                        cl.grant = 0;
                        self.new_session(s, c);
                    }
                }
            }
            Claim(c) => {
                let own = s.clients[c as usize].own.expect("a holder has a node");
                if s.resource.max_czxid.is_none_or(|m| own.czxid >= m) {
                    self.accept_write(s, c, false);
                    s.clients[c as usize].pc = Pc::Holding;
                } else {
                    Self::lock_lost(s, c);
                }
            }
            Read(c) => {
                let cl = &mut s.clients[c as usize];
                cl.pc = Pc::Updating;
                cl.overwritten = false;
            }
            Write(c) => self.accept_write(s, c, true),
            CheckLockNode(c) => {
                let session = s.session(c);
                let own = s.clients[c as usize].own.expect("a holder has a node");
                match s.server.exists(own.name, session) {
                    Ok(Some(z)) if z.owner == session && z.czxid == own.czxid => {
                        s.clients[c as usize].pc = Pc::Checked;
                    }
                    Ok(_) => Self::node_lost(s, c),
                    Err(_) => self.new_session(s, c),
                }
            }
            FencedWrite(c) => {
                let own = s.clients[c as usize].own.expect("a holder has a node");
                let ok = match self.writes {
                    WriteMode::FencedBySequence => {
                        s.resource.max_seq.is_none_or(|m| own.name.seq >= m)
                    }
                    _ => s.resource.max_czxid.is_none_or(|m| own.czxid >= m),
                };
                if ok {
                    self.accept_write(s, c, true);
                } else {
                    Self::lock_lost(s, c);
                }
            }
            GuardedWrite(c) => {
                let session = s.session(c);
                let own = s.clients[c as usize].own.expect("a holder has a node");
                match s.server.multi_check_write(own.name, session) {
                    Ok(_) => self.accept_write(s, c, true),
                    Err(ZkError::NoNode) => Self::node_lost(s, c),
                    Err(_) => self.new_session(s, c),
                }
            }
            ExpireSession(c) => {
                s.budget.expire -= 1;
                let session = s.session(c);
                let mut holder = false;
                for cl in s.clients.iter_mut().filter(|d| d.process == session.client) {
                    // A request still queued dies with its session.
                    cl.queued = None;
                    holder |= cl.pc.believes() && cl.held_in == cl.session;
                }
                s.expired_holder |= holder;
                s.server.expire_session(session);
            }
            RestartClient(c) => {
                s.budget.restart -= 1;
                let old = s.session(c);
                s.server.disconnect(old);
                if self.shares_client(c) {
                    // The shared handle restarts: each mutex notices at its next step.
                    self.open_next_session(s, c);
                } else {
                    self.new_session(s, c);
                }
            }
            ExpireOldSession(c) => {
                let old = self.old_session(s, c).expect("enabled");
                s.expired_holder |= s.clients.iter().any(|cl| {
                    cl.process == old.client && cl.pc.believes() && cl.held_in == old.epoch
                });
                s.server.expire_session(old);
            }
            NoticeSessionChange(c) => {
                let cl = &mut s.clients[c as usize];
                cl.known = cl.session;
                self.session_changed(s, c);
            }
            RecreateParent => {
                s.budget.recreate_parent -= 1;
                s.server.recreate_parent().expect("enabled only when empty");
            }
            Suspend(c) => {
                s.budget.suspend -= 1;
                let cl = &mut s.clients[c as usize];
                cl.suspended = true;
                // The request the client was making as the connection dropped: a create
                // (`Idle`) or a delete (`Releasing`) may still be applied. A read's answer is
                // simply asked again after the reconnect; a holder makes no request.
                let sent = match cl.pc {
                    Pc::Idle => Some(Sent::Create(self.uuid(c))),
                    Pc::Releasing => cl.own.map(|o| Sent::Delete(o.name)),
                    _ => None,
                };
                cl.awaiting = sent.is_some();
                cl.queued = sent;
            }
            ApplySent(c) => {
                let session = s.session(c);
                match s.clients[c as usize].queued.take() {
                    Some(Sent::Create(uuid)) => match s.server.create_sequential(uuid, session) {
                        Ok(_) | Err(ZkError::NodeExists) => {}
                        Err(e) => unreachable!("applied only in a live session: {e}"),
                    },
                    Some(Sent::Delete(name)) => {
                        let _ = s.server.delete(name, session);
                    }
                    None => unreachable!("enabled only with a queued request"),
                }
            }
            Reconnect(c) => {
                let cl = &mut s.clients[c as usize];
                let awaiting = cl.awaiting;
                cl.suspended = false;
                cl.awaiting = false;
                cl.queued = None;
                if awaiting {
                    self.connection_lost(s, c);
                }
            }
            LaggedSearch(c) => {
                s.budget.lag -= 1;
                Self::start_over(s, c);
            }
            RefuseSession(c) => {
                s.budget.refuse_session -= 1;
                // The node, if any, went with the expired session; the acquire ends.
                let cl = &mut s.clients[c as usize];
                cl.pc = Pc::Failed;
                cl.own = None;
                cl.pred = None;
            }
            MisreadOwnNode(c) => {
                s.budget.misread -= 1;
                if rules.delete_unrecognized_own {
                    // The listing showed the node under its name: delete it by that name
                    // before starting over (a protected name is this client's alone).
                    let cl = &mut s.clients[c as usize];
                    cl.pc = Pc::Releasing;
                    cl.pred = None;
                } else {
                    Self::start_over(s, c);
                }
            }
            Abandon(c) => {
                s.budget.abandon -= 1;
                let cl = s.clients[c as usize];
                let leftover = match cl.pc {
                    // A dropped acquire whose create's outcome is unknown: after a lost reply,
                    // or (Idle) with the create queued behind a dropped connection, where it
                    // stays queued (`ApplySent` may still apply it; `Reconnect` drops it).
                    Pc::Idle | Pc::CreateLost if rules.cancel_safe_give_up => Some(Cleanup::Search),
                    // A dropped release: the delete goes on in the cleanup task (cancel-safe),
                    // or nobody deletes the node.
                    Pc::Releasing if rules.cancel_safe_release => {
                        cl.own.map(|o| Cleanup::Delete(o.name))
                    }
                    Pc::Releasing => None,
                    // A dropped acquire with a node: the node goes to the cleanup's delete.
                    _ if rules.cancel_safe_give_up => cl.own.map(|o| Cleanup::Delete(o.name)),
                    _ => None,
                };
                // The dropped attempt's names keep its protection id; the next attempt takes
                // a fresh one (the model's: the client's own, renamed out of the way).
                if let Some(u) = self.uuid(c).filter(|_| rules.fresh_id_per_attempt) {
                    let old = u + PREVIOUS_ATTEMPT;
                    let fu = |x: u8| if x == u { old } else { x };
                    let next = s.server.next_zxid();
                    // Equal suffixes (a counter stuck at its top) sort by the id: re-sort.
                    let resort = s.server.sequence_width().is_some();
                    s.server.rename(|z| z, next, |q| q, |x| x, fu, resort);
                    let rename = |n: &mut Name| n.uuid = n.uuid.map(fu);
                    for d in s.clients.iter_mut() {
                        if let Some(o) = d.own.as_mut() {
                            rename(&mut o.name);
                        }
                        if let Some(p) = d.pred.as_mut() {
                            rename(p);
                        }
                        match d.queued.as_mut() {
                            Some(Sent::Create(x)) => *x = x.map(fu),
                            Some(Sent::Delete(n)) => rename(n),
                            None => {}
                        }
                    }
                }
                let leftover = leftover.map(|k| match k {
                    Cleanup::Delete(n) => Cleanup::Delete(Name {
                        uuid: self.previous_uuid(c).or(n.uuid),
                        ..n
                    }),
                    k => k,
                });
                Self::start_over(s, c);
                s.clients[c as usize].cleanup = leftover;
            }
            CleanupFind(c) => {
                let session = s.session(c);
                match s.server.get_children(session) {
                    Ok(_) => {
                        s.clients[c as usize].cleanup =
                            self.cleanup_search(s, c).map(|z| Cleanup::Delete(z.name));
                    }
                    Err(_) => self.new_session(s, c),
                }
            }
            CleanupDelete(c) => {
                let session = s.session(c);
                let Some(Cleanup::Delete(name)) = s.clients[c as usize].cleanup else {
                    unreachable!("enabled only with a node to delete")
                };
                match s.server.delete(name, session) {
                    Ok(_) | Err(ZkError::NoNode) => s.clients[c as usize].cleanup = None,
                    // It goes on in the new session (NoNode there is fine).
                    Err(_) => self.new_session(s, c),
                }
            }
            LoseCleanupReply(c, applied) => {
                s.budget.lose_reply -= 1;
                if let Some(Cleanup::Delete(name)) = s.clients[c as usize].cleanup {
                    if applied {
                        let session = s.session(c);
                        let _ = s.server.delete(name, session);
                    }
                    // `release-forgets`: the cleanup's delete forgets the node too.
                    if !rules.retry_lost_delete {
                        s.clients[c as usize].cleanup = None;
                    }
                }
            }
        }
    }
}

impl Scenario {
    /// Replay only (`lockwright zk-stress-run`'s trace check): the process client `c` runs in
    /// was killed (SIGKILL) and a new process took its place. The new process opens a new
    /// session; the old one lives on at the server until it times out (`ExpireOldSession`),
    /// keeping its node where it was; the new process knows nothing of it (`Idle`, no node, no
    /// cleanup, no hold). Taken from the `restart` budget. `None` where `RestartClient(c)` is
    /// not enabled (no budget left) or `c` shares its client (a process of two mutexes is not
    /// modelled as killed).
    ///
    /// With `reuse`, the new process's session is the client's current one: the model opened
    /// it when the client learned its session expired (inside that step), while the real
    /// process was killed before its own re-open got through; the replacement's session is
    /// the one the model already has, so nothing is disconnected or opened.
    ///
    /// The exhaustive checks never take this step: `RestartClient` is the model's restart (a
    /// client handle replaced inside a living process, whose mutex goes on with the
    /// session-change rules). A killed process differs only in forgetting everything, which
    /// the checks' real runs do (the `kill` fault) and the model's paths did not.
    pub fn kill_process(&self, s: &State, c: ClientId, reuse: bool) -> Option<State> {
        if s.budget.restart == 0 || self.shares_client(c) || c >= self.clients {
            return None;
        }
        let mut next = s.clone();
        next.budget.restart -= 1;
        if !reuse {
            let old = next.session(c);
            next.server.disconnect(old);
            self.open_next_session(&mut next, c);
        }
        let cl = next.clients[c as usize];
        next.clients[c as usize] = Client {
            session: cl.session,
            known: cl.session,
            process: cl.process,
            ..Client::NEW
        };
        next.last = Event::None;
        next.compact();
        Some(next)
    }
}

#[cfg(test)]
mod kill_tests {
    use crate::zk::{Action, Faults, Pc, Scenario, Variant, WriteMode};
    use stateright::Model;

    fn model() -> Scenario {
        Scenario::new(Variant::Curator, WriteMode::Guarded)
            .with_clients(2)
            .with_reentrant(false)
            .with_symmetry(false)
            .with_faults(Faults {
                restart: 2,
                ..Faults::NONE
            })
    }

    /// A killed holder's replacement starts from nothing while its old node stays first in
    /// line until the old session times out. `RestartClient` is not that step: its mutex lives
    /// on and releases the old node itself (the real trace that showed the gap: a `kill`
    /// during `zk-stress-run`, the new process's first create refused by the model).
    #[test]
    fn a_killed_process_starts_over_while_its_node_waits_for_the_session_timeout() {
        let m = model();
        let mut s = m.init_states().remove(0);
        for a in [Action::CreateLockNode(0), Action::ListChildren(0)] {
            s = m.step(&s, a).expect("enabled");
        }
        assert_eq!(s.clients[0].pc, Pc::Holding);
        let restarted = m.step(&s, Action::RestartClient(0)).expect("enabled");
        assert_eq!(restarted.clients[0].pc, Pc::Releasing);
        assert!(m.step(&restarted, Action::CreateLockNode(0)).is_none());
        let mut k = m.kill_process(&s, 0, false).expect("budget left");
        assert_eq!(k.clients[0].pc, Pc::Idle);
        assert_eq!(k.server.children().len(), 1, "the old node stays");
        for a in [Action::CreateLockNode(0), Action::ListChildren(0)] {
            k = m.step(&k, a).expect("the new process acquires");
        }
        assert_eq!(k.clients[0].pc, Pc::MustWatch, "behind its old node");
        k = m
            .step(&k, Action::ExpireOldSession(0))
            .expect("the old session times out");
        assert_eq!(k.server.children().len(), 1);
        assert!(m
            .kill_process(&m.kill_process(&s, 0, false).unwrap(), 0, false)
            .is_some());
        let spent = m
            .kill_process(&m.kill_process(&s, 0, false).unwrap(), 0, false)
            .unwrap();
        assert!(
            m.kill_process(&spent, 0, false).is_none(),
            "the restart budget bounds it"
        );
        // `reuse`: the replacement runs in the session the model's client already has.
        let r = m.kill_process(&s, 0, true).expect("budget left");
        assert_eq!(r.clients[0].pc, Pc::Idle);
        assert_eq!(r.session(0), s.session(0));
        assert_eq!(r.server.sessions(), s.server.sessions());
    }
}
