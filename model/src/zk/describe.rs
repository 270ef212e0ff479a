//! One line per step for counterexample listings: who acts, the ZooKeeper request (or the
//! fault), and its outcome, read from the states before and after.

use crate::zk::action::Action;
use crate::zk::scenario::{ClientId, Scenario, WriteMode};
use crate::zk::server::{Name, SessionId};
use crate::zk::state::{Event, Pc, Sent, State};

impl Scenario {
    fn prefix(&self, c: ClientId) -> String {
        match self.variant.rules().protected_names {
            true => format!("/locks/_c_c{c}-lock-"),
            false => "/locks/lock-".to_string(),
        }
    }

    /// What client `c` did after its session changed (learned expiry or restart).
    fn reaction(before: &State, after: &State, c: ClientId) -> String {
        let (b, a) = (before.clients[c as usize].pc, after.clients[c as usize].pc);
        let session = after.session(c);
        let what = match (b, a) {
            _ if after.last == Event::LockLost => "; the guard reports LockLost".to_string(),
            (b, a) if b.believes() && a.believes() => {
                "; still believes it holds (Curator never revokes)".to_string()
            }
            (Pc::CreateLost, Pc::CreateLost) => "; will search for its uuid".to_string(),
            (b, Pc::Idle) if b != Pc::Idle => {
                "; its old node is not its own any more: starts over".to_string()
            }
            _ => String::new(),
        };
        format!("new session {session}{what}")
    }

    fn deleted(before: &State, after: &State) -> String {
        let gone: Vec<String> = before
            .server
            .children()
            .iter()
            .filter(|z| after.server.node(z.name).is_none_or(|n| n.czxid != z.czxid))
            .map(|z| z.name.to_string())
            .collect();
        if gone.is_empty() {
            "no nodes".to_string()
        } else {
            gone.join(", ")
        }
    }

    fn names(s: &State) -> String {
        let v: Vec<String> = s
            .server
            .children()
            .iter()
            .map(|z| z.name.to_string())
            .collect();
        format!("[{}]", v.join(", "))
    }

    /// Describes what a step did, in `before`'s numbering (`c1 ListChildren: getChildren /locks → [_c_c0-lock-0,
    /// _c_c1-lock-1]: predecessor _c_c0-lock-0`).
    pub(crate) fn describe(&self, before: &State, action: Action) -> String {
        use Action::*;
        // The outcome, in `before`'s numbering (the model renumbers after every step).
        let mut raw = before.clone();
        self.apply_uncompacted(&mut raw, action);
        let after = &raw;
        let session = |c: ClientId| before.session(c);
        let expired = |c: ClientId| !before.server.is_alive(session(c));
        let own_b = |c: ClientId| before.clients[c as usize].own;
        let own_a = |c: ClientId| after.clients[c as usize].own;
        let node = |n: Option<crate::zk::state::Own>| match n {
            Some(o) => format!("{} (czxid {})", o.name, o.czxid),
            None => "?".to_string(),
        };
        let se = |c: ClientId| {
            format!(
                "SessionExpired ({}); {}",
                session(c),
                Self::reaction(before, after, c)
            )
        };
        let lost = |after: &State| {
            if after.last == Event::LockLost {
                "; the guard reports LockLost"
            } else {
                ""
            }
        };
        match action {
            CreateLockNode(c) | CreateBehindLast(c) => {
                let together = if matches!(action, CreateBehindLast(_)) {
                    ", in flight together with the last create"
                } else {
                    ""
                };
                let head = format!(
                    "c{c} {}: create {} (ephemeral sequential, {}{together})",
                    action.name(),
                    self.prefix(c),
                    session(c)
                );
                if expired(c) {
                    format!("{head} → {}", se(c))
                } else if after.clients[c as usize].own.is_none() {
                    format!("{head} → NodeExists (a repeated suffix): the acquire fails")
                } else {
                    format!("{head} → {}", node(own_a(c)))
                }
            }
            LoseReply(c, applied) => {
                let cl = before.clients[c as usize];
                let a = after.clients[c as usize];
                let pred = cl.pred.map_or("?".to_string(), |p| p.to_string());
                let (request, next) = match cl.pc {
                    Pc::Idle => (
                        format!("create {}", self.prefix(c)),
                        match a.pc {
                            Pc::CreateLost => "it will search for its node",
                            _ => "it will simply create again",
                        },
                    ),
                    Pc::Holding | Pc::Releasing => (
                        format!("delete {}", node(own_b(c))),
                        match a.pc {
                            Pc::Releasing => "it will retry the delete",
                            _ => "it forgets the hold",
                        },
                    ),
                    Pc::CreateLost => (
                        format!("search (getChildren /locks) for uuid c{c}"),
                        "it will search again",
                    ),
                    Pc::Created => ("getChildren /locks".to_string(), "it will list again"),
                    Pc::MustWatch => (
                        format!("getData {pred} with watch"),
                        "it will set the watch again",
                    ),
                    Pc::Updating if self.writes == WriteMode::Guarded => (
                        format!(
                            "multi(check {}, setData /resource)",
                            own_b(c).map_or("?".to_string(), |o| o.name.to_string())
                        ),
                        "the update ends with an error; the next one reads afresh",
                    ),
                    _ => (
                        format!(
                            "exists {}",
                            own_b(c).map_or("?".to_string(), |o| o.name.to_string())
                        ),
                        "it will check again",
                    ),
                };
                let read = matches!(cl.pc, Pc::CreateLost | Pc::Created)
                    || (cl.pc == Pc::Updating && self.writes == WriteMode::CheckThenWrite);
                let applied = if read {
                    "answered".to_string()
                } else if !applied {
                    "not applied".to_string()
                } else if cl.pc == Pc::Idle {
                    let z = after.server.children().last().expect("created");
                    format!("applied as {} (czxid {})", z.name, z.czxid)
                } else if cl.pc == Pc::MustWatch {
                    match before.server.node(cl.pred.expect("a predecessor")) {
                        Some(_) => "applied (the watch is set)".to_string(),
                        None => "applied (NoNode: no watch)".to_string(),
                    }
                } else if cl.pc == Pc::Updating {
                    match after.last {
                        Event::Accepted { .. } => "applied (written)".to_string(),
                        _ => "applied (NoNode: nothing written)".to_string(),
                    }
                } else {
                    "applied".to_string()
                };
                format!("c{c} LoseReply: {request} {applied}, reply lost (ConnectionLoss); {next}")
            }
            FindOwnNode(c) => {
                let head = format!(
                    "c{c} FindOwnNode: getChildren /locks, look for {}",
                    if self.variant.rules().protected_names {
                        format!("uuid c{c}")
                    } else {
                        format!("a child owned by {}", session(c))
                    }
                );
                if expired(c) {
                    return format!("{head} → {}", se(c));
                }
                match own_a(c) {
                    Some(o) => {
                        let z = before.server.node(o.name).expect("found");
                        let whose = if z.owner == session(c) {
                            "ours".to_string()
                        } else {
                            format!("owned by the OLD session {}: adopted", z.owner)
                        };
                        format!("{head} → {} (czxid {}), {whose}", o.name, o.czxid)
                    }
                    None => format!("{head} → none: create again"),
                }
            }
            ListChildren(c) => {
                let head = format!("c{c} ListChildren: getChildren /locks");
                let b = before.clients[c as usize];
                if b.known != b.session && self.variant.rules().keep_own_on_session_swap {
                    return format!(
                        "{head} → answered in {}, not the session c{c} knew: the listing is set \
                         aside, the session looked at next",
                        session(c)
                    );
                }
                if expired(c) {
                    return format!("{head} → {}", se(c));
                }
                let listing = Self::names(before);
                let cl = after.clients[c as usize];
                if after.last == Event::CounterAtTop {
                    return format!(
                        "{head} → {listing}: own suffix {} is the counter's top or below 0: \
                         suffixes no longer follow creation order; it deletes its node and \
                         fails the acquire (re-create the lock directory while idle)",
                        own_b(c).map_or("?".to_string(), |o| o.name.seq.to_string())
                    );
                }
                match cl.pc {
                    Pc::Holding | Pc::Granted => {
                        let handoff = if after.last == Event::HandoffAfterExpiry {
                            " (after a holder's session expired)"
                        } else {
                            ""
                        };
                        let claim = if cl.pc == Pc::Granted {
                            "; it claims the resource next"
                        } else {
                            ""
                        };
                        format!(
                            "{head} → {listing}: {} is lowest: lock acquired, token czxid {}{handoff}{claim}",
                            node(own_b(c)).split(' ').next().unwrap_or("?"),
                            cl.own.map_or(0, |o| o.czxid)
                        )
                    }
                    Pc::MustWatch => format!(
                        "{head} → {listing}: predecessor {}",
                        cl.pred.map_or("?".to_string(), |p: Name| p.to_string())
                    ),
                    _ => format!(
                        "{head} → {listing}: own node {} missing: start over",
                        own_b(c).map_or("?".to_string(), |o| o.name.to_string())
                    ),
                }
            }
            WatchPredecessor(c) => {
                let pred = before.clients[c as usize].pred.map_or("?".to_string(), |p| p.to_string());
                let head = format!("c{c} WatchPredecessor: getData {pred} with watch");
                if expired(c) {
                    return format!("{head} → {}", se(c));
                }
                match after.clients[c as usize].pc {
                    Pc::Waiting => format!("{head} → ok: watch set, waiting"),
                    _ => format!("{head} → NoNode: list again"),
                }
            }
            ReceiveWatchEvent(c) => {
                format!("c{c} ReceiveWatchEvent: NodeDeleted on its predecessor; list again")
            }
            ReceiveSessionEvent(c) => format!(
                "c{c} ReceiveSessionEvent: Expired ({}); {}",
                session(c),
                Self::reaction(before, after, c)
            ),
            Reenter(c) => format!("c{c} Reenter: acquires again while holding (count 2)"),
            ReleaseInner(c) => format!("c{c} ReleaseInner: inner release (count 1)"),
            DeleteLockNode(c) => {
                let head = format!("c{c} DeleteLockNode: delete {}", node(own_b(c)));
                if expired(c) {
                    return format!("{head} → {}; the delete is retried there", se(c));
                }
                let o = own_b(c).expect("a node to delete");
                match before.server.node(o.name) {
                    Some(z) if z.czxid != o.czxid => format!(
                        "{head} → ok: but it deleted {} (czxid {}) of {}, a NEWER node of the same name; released",
                        z.name, z.czxid, z.owner
                    ),
                    Some(_) => format!("{head} → ok: released"),
                    None => format!("{head} → NoNode (already gone): released"),
                }
            }
            Read(c) => {
                let cl = before.clients[c as usize];
                format!(
                    "c{c} Read: reads the resource for an update (grant {}, token czxid {})",
                    cl.grant,
                    cl.own.map_or(0, |o| o.czxid)
                )
            }
            Claim(c) => {
                let o = own_b(c).expect("a holder has a node");
                let high = before
                    .resource
                    .max_czxid
                    .map_or("none".to_string(), |m| m.to_string());
                if after.last == Event::LockLost {
                    format!(
                        "c{c} Claim: token czxid {} → refused (highest accepted {high}){}",
                        o.czxid,
                        lost(after)
                    )
                } else {
                    format!(
                        "c{c} Claim: writes its token czxid {} to the resource → accepted (highest before: {high}); older tokens are refused from now on",
                        o.czxid
                    )
                }
            }
            Write(c) | FencedWrite(c) | GuardedWrite(c) | CheckLockNode(c) => {
                let o = own_b(c).expect("a holder has a node");
                let mut stale = String::new();
                if let Event::Accepted {
                    stale: s,
                    lost_update: l,
                    ..
                } = after.last
                {
                    if s {
                        stale.push_str(&format!(
                            " — STALE: it already accepted a write made under a later grant (grant {}; this writer's is grant {})",
                            before.resource.max_grant.unwrap_or(0),
                            before.clients[c as usize].grant
                        ));
                    }
                    if l {
                        stale.push_str(
                            " — LOST UPDATE: since this client's read the resource accepted a write made under another grant, which this write overwrites unseen",
                        );
                    }
                }
                match action {
                    Write(_) => format!(
                        "c{c} Write: the resource accepts a write (writer's node czxid {}){stale}",
                        o.czxid
                    ),
                    CheckLockNode(_) => {
                        let head = format!("c{c} CheckLockNode: exists {}", o.name);
                        if expired(c) {
                            return format!("{head} → {}", se(c));
                        }
                        match after.clients[c as usize].pc {
                            Pc::Checked => format!("{head} → ours: write next"),
                            _ => format!(
                                "{head} → not ours any more{}; nothing deleted (the name is not its node now): starts over",
                                lost(after)
                            ),
                        }
                    }
                    FencedWrite(_) => {
                        let (token, max) = match self.writes {
                            WriteMode::FencedBySequence => (
                                format!("sequence {}", o.name.seq),
                                before.resource.max_seq.map(|m| m.to_string()),
                            ),
                            _ => (
                                format!("czxid {}", o.czxid),
                                before.resource.max_czxid.map(|m| m.to_string()),
                            ),
                        };
                        let high = max.unwrap_or_else(|| "none".to_string());
                        if after.last == Event::LockLost {
                            format!(
                                "c{c} FencedWrite: token {token} → rejected (highest accepted {high}){}",
                                lost(after)
                            )
                        } else {
                            format!(
                                "c{c} FencedWrite: token {token} → accepted (highest before: {high}){stale}"
                            )
                        }
                    }
                    _ => {
                        let head = format!(
                            "c{c} GuardedWrite: multi(check {}, setData /resource)",
                            o.name
                        );
                        if expired(c) {
                            return format!("{head} → {}", se(c));
                        }
                        if after.last == Event::LockLost {
                            format!(
                                "{head} → NoNode: nothing written{}; nothing deleted: starts over",
                                lost(after)
                            )
                        } else {
                            format!("{head} → ok: written{stale}")
                        }
                    }
                }
            }
            ExpireSession(c) => format!(
                "server ExpireSession({}): deletes {}{}; c{c} does not know yet",
                session(c),
                Self::deleted(before, after),
                Self::fired(before, after)
            ),
            RestartClient(c) => format!(
                "c{c} RestartClient: new ZooKeeper handle; {}; the server keeps {} alive until it times out",
                Self::reaction(before, after, c),
                session(c)
            ),
            ExpireOldSession(c) => {
                let old = before
                    .server
                    .sessions()
                    .iter()
                    .copied()
                    .find(|s| s.client == self.process(c) && *s != session(c))
                    .unwrap_or(SessionId {
                        client: self.process(c),
                        epoch: 0,
                    });
                format!(
                    "server ExpireOldSession({old}): the abandoned session times out; deletes {}{}",
                    Self::deleted(before, after),
                    Self::fired(before, after)
                )
            }
            RecreateParent => "server RecreateParent: the empty container /locks is reaped and created again; suffixes restart at 0".to_string(),
            Suspend(c) => {
                let cl = after.clients[c as usize];
                let sent = match cl.queued {
                    Some(Sent::Create(_)) => format!(
                        "its create {} is queued at the server, its answer lost",
                        self.prefix(c)
                    ),
                    Some(Sent::Delete(_)) => format!(
                        "its delete {} is queued at the server, its answer lost",
                        node(own_b(c))
                    ),
                    None => "no write in flight".to_string(),
                };
                format!(
                    "c{c} Suspend: the connection drops (Disconnected; {} lives on); {sent}",
                    session(c)
                )
            }
            ApplySent(c) => match before.clients[c as usize].queued {
                Some(Sent::Create(_)) => {
                    let z = after.server.children().last().expect("created");
                    format!(
                        "server ApplySent: applies c{c}'s queued create → {} (czxid {}, {}); no answer reaches c{c}",
                        z.name,
                        z.czxid,
                        session(c)
                    )
                }
                Some(Sent::Delete(n)) => {
                    let outcome = if before.server.node(n).is_some() {
                        format!("deletes {n}{}", Self::fired(before, after))
                    } else {
                        "NoNode (already gone)".to_string()
                    };
                    format!(
                        "server ApplySent: applies c{c}'s queued delete {n} → {outcome}; no answer reaches c{c}"
                    )
                }
                None => format!("server ApplySent(c{c})"),
            },
            Reconnect(c) => {
                let b = before.clients[c as usize];
                let dropped = match b.queued {
                    Some(_) => "; the queued request is dropped, never applied",
                    None => "",
                };
                let next = if !b.awaiting {
                    String::new()
                } else {
                    match (b.pc, after.clients[c as usize].pc) {
                        (Pc::Idle, Pc::CreateLost) => {
                            "; its create answers ConnectionLoss: it will search for its node".to_string()
                        }
                        (Pc::Idle, _) => {
                            "; its create answers ConnectionLoss: it will simply create again".to_string()
                        }
                        (_, Pc::Releasing) => {
                            "; its delete answers ConnectionLoss: it will retry the delete".to_string()
                        }
                        _ => "; its delete answers ConnectionLoss: it forgets the hold".to_string(),
                    }
                };
                format!(
                    "c{c} Reconnect: back on {} (Connected){dropped}{next}",
                    session(c)
                )
            }
            LaggedSearch(c) => {
                let z = self.search(before, c).expect("enabled only with our node there");
                format!(
                    "c{c} LaggedSearch: getChildren /locks, look for uuid c{c}, answered by a server that has not applied {} (czxid {}) yet (no sync first) → none: create again",
                    z.name, z.czxid
                )
            }
            RefuseSession(c) => format!(
                "c{c} RefuseSession: {} is gone and no new session can be opened: the acquire \
                 ends with an error (its node, if any, went with the session)",
                session(c)
            ),
            NoticeSessionChange(c) => {
                let b = before.clients[c as usize];
                let a = after.clients[c as usize];
                let what = match (b.pc, a.pc) {
                    _ if after.last == Event::LockLost => {
                        "; the guard reports LockLost (SessionReplaced)".to_string()
                    }
                    (Pc::Created | Pc::MustWatch | Pc::Waiting, Pc::Created) => format!(
                        "; its node {} is owned by that session: kept, lists again",
                        node(own_b(c))
                    ),
                    (Pc::Created | Pc::MustWatch | Pc::Waiting, Pc::Idle) => format!(
                        "; drops its node {} as the old session's and starts over",
                        node(own_b(c))
                    ),
                    (Pc::CreateLost, Pc::Idle) => {
                        "; stops searching for its lost create's node and starts over".to_string()
                    }
                    (Pc::CreateLost, Pc::CreateLost) => {
                        "; searches on in that session (its create may have run there)".to_string()
                    }
                    _ => String::new(),
                };
                format!(
                    "c{c} NoticeSessionChange: its client runs {}, not the session c{c} knew (c{}.s{}){what}",
                    session(c),
                    b.process,
                    b.known
                )
            }
            MisreadOwnNode(c) => {
                let listing = Self::names(before);
                let next = match after.clients[c as usize].pc {
                    Pc::Releasing => "it deletes that node by its name, then starts over",
                    _ => "it starts over and leaves the node",
                };
                format!(
                    "c{c} MisreadOwnNode: getChildren /locks → {listing}: its own node {} is there under a name it does not read as a lock node (a suffix past 2^31): not recognized; {next}",
                    node(own_b(c))
                )
            }
            Abandon(c) => self.describe_abandon(before, after, c),
            CleanupFind(c) | CleanupDelete(c) | LoseCleanupReply(c, _) => {
                self.describe_cleanup(before, after, action, c)
            }
        }
    }

    fn fired(before: &State, after: &State) -> String {
        let woken: Vec<String> = after
            .server
            .sessions()
            .iter()
            .filter(|s| after.server.has_watch_event(**s) && !before.server.has_watch_event(**s))
            .map(|s| s.to_string())
            .collect();
        if woken.is_empty() {
            String::new()
        } else {
            format!("; fires the watch of {}", woken.join(", "))
        }
    }
}
