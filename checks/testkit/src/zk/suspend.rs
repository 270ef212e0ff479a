//! A suspended connection in the simulated server's state (the model's `suspend`:
//! `Suspend(c)`, `ApplySent(c)`, `Reconnect(c)`, `docs/zookeeper.md` §3).
//!
//! The environment arms a suspension for a client (`Core::arm_suspend`); it fires at that
//! client's next request that can carry it, in a live session (`Core::fires`): the
//! connection drops as the request is sent. What stays queued at the server is what the
//! model queues: a create (the model's client is `Idle`) or a delete retried after a lost
//! reply (`Releasing`); a read (the search, the listing, the watch's `getData`, `exists`, the
//! guarded `multi`, `sync`) is not applied and is asked again after the reconnect. A first
//! delete does not fire it: the model's holder (`Holding`) queues nothing there while a
//! client at `Releasing` queues its delete, and the server cannot tell the two apart. While
//! the connection is down every request of the client waits for it; the server may apply the
//! queued request (`Core::apply_sent`) until the client reconnects (`Core::reconnect`:
//! the queued request is dropped) or learns that its session expired (a new session is a new
//! connection).

use lockwright_model::zk::ClientId;

use super::core::Core;
use super::record::{Outcome, Queued};

/// One client's connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Conn {
    /// A suspension armed for the next request that can carry it.
    pub(crate) armed: bool,
    /// The connection is down while the session may live (`Disconnected`).
    pub(crate) suspended: bool,
    /// The request sent as the connection dropped, not applied yet.
    pub(crate) queued: Option<Queued>,
}

impl Conn {
    /// The connection ends with the session it served (a renewal opens a new one).
    pub(crate) fn end(&mut self) {
        self.suspended = false;
        self.queued = None;
    }
}

/// A request as the connection gate sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Create {
        uuid: Option<u8>,
    },
    Delete {
        name: lockwright_model::zk::Name,
    },
    /// Any read, `sync` and the guarded `multi` (nothing the model queues).
    Read,
}

impl Core {
    pub(crate) fn arm_suspend(&mut self, c: ClientId) -> Outcome {
        self.conn[usize::from(c)].armed = true;
        Outcome::Ok
    }

    /// Whether client `c`'s request `r` drops the armed connection now; if so, what is queued.
    /// `None`: it does not (nothing armed, the session is gone, or a first delete).
    pub(crate) fn fires(&self, c: ClientId, r: Request) -> Option<Option<Queued>> {
        let conn = self.conn[usize::from(c)];
        if !conn.armed || conn.suspended || !self.live(c) {
            return None;
        }
        match r {
            Request::Create { uuid } => Some(Some(Queued::Create { uuid })),
            Request::Delete { name } if self.lost_delete[usize::from(c)] => {
                Some(Some(Queued::Delete { name }))
            }
            Request::Delete { .. } => None,
            Request::Read => Some(None),
        }
    }

    /// The connection drops with `queued` sent (`Suspend`).
    pub(crate) fn suspend(&mut self, c: ClientId, queued: Option<Queued>) -> Outcome {
        let conn = &mut self.conn[usize::from(c)];
        if !conn.armed || conn.suspended {
            return Outcome::Skipped;
        }
        *conn = Conn {
            armed: false,
            suspended: true,
            queued,
        };
        if let Some(Queued::Delete { .. }) = queued {
            // The retried delete is sent: the lost one is no longer the last.
            self.lost_delete[usize::from(c)] = false;
        }
        Outcome::Ok
    }

    /// The server applies `c`'s queued request in its session (`ApplySent`); `Skipped` when
    /// nothing is queued. Its answer is lost with the connection.
    pub(crate) fn apply_sent(&mut self, c: ClientId) -> Outcome {
        let Some(q) = self.conn[usize::from(c)].queued.take() else {
            return Outcome::Skipped;
        };
        let s = self.session(c);
        match q {
            Queued::Create { uuid } => {
                self.server
                    .create_sequential(uuid, s)
                    .expect("queued only in a live session");
            }
            Queued::Delete { name } => {
                let _ = self.server.delete(name, s);
            }
        }
        Outcome::Ok
    }

    /// `c` reconnects to its live session (`Reconnect`): a request still queued is dropped.
    /// `Skipped` unless suspended with its session alive (an expired one is learned instead).
    pub(crate) fn reconnect(&mut self, c: ClientId) -> Outcome {
        if !self.conn[usize::from(c)].suspended || !self.live(c) {
            return Outcome::Skipped;
        }
        self.conn[usize::from(c)].end();
        Outcome::Ok
    }

    pub(crate) fn suspended(&self, c: ClientId) -> bool {
        self.conn[usize::from(c)].suspended
    }
}

/// What the suspensions of a suite's runs did, counted from the recordings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Connections dropped (`Suspend`).
    pub suspended: usize,
    /// ... with a create queued, which the server applied after the drop (`ApplySent`).
    pub creates_applied: usize,
    /// ... with a create queued, dropped unapplied at the reconnect or with the session.
    pub creates_dropped: usize,
    /// ... with a retried delete queued, applied after the drop.
    pub deletes_applied: usize,
    /// ... with a retried delete queued, dropped unapplied.
    pub deletes_dropped: usize,
    /// ... with a read waiting (nothing queued).
    pub reads_waited: usize,
    /// ... of these, a holder's guarded `multi` or `exists` (sent after the reconnect).
    pub holders_waited: usize,
    /// Reconnects (`Reconnect`).
    pub reconnected: usize,
    /// Expiries learned while the connection was down (`SessionEvent` while suspended).
    pub expired_meanwhile: usize,
    /// `try_acquire`/`acquire_timeout` returns (`GaveUp`) while the client's connection was
    /// down.
    pub gave_up_meanwhile: usize,
}

impl Tally {
    /// Adds one recording's suspensions.
    pub fn add(&mut self, trace: &[super::record::Step]) {
        use super::record::Call;
        // Per client: the suspension open, and what it queued (`Some(applied?)`).
        let mut open: std::collections::BTreeMap<ClientId, Option<(Queued, bool)>> =
            std::collections::BTreeMap::new();
        // Per client: a read-suspension ended by a reconnect; its next request is the read.
        let mut resumed: std::collections::BTreeSet<ClientId> = Default::default();
        let close = |t: &mut Tally, q: Option<(Queued, bool)>| match q {
            Some((Queued::Create { .. }, true)) => t.creates_applied += 1,
            Some((Queued::Create { .. }, false)) => t.creates_dropped += 1,
            Some((Queued::Delete { .. }, true)) => t.deletes_applied += 1,
            Some((Queued::Delete { .. }, false)) => t.deletes_dropped += 1,
            None => t.reads_waited += 1,
        };
        for s in trace {
            match (&s.call, s.client) {
                (Call::Suspend { queued }, Some(c)) => {
                    self.suspended += 1;
                    open.insert(c, queued.map(|q| (q, false)));
                }
                (Call::ApplySent(c), None) if s.outcome == Outcome::Ok => {
                    if let Some(Some((_, applied))) = open.get_mut(c) {
                        *applied = true;
                    }
                }
                (Call::Reconnect(c), None) if s.outcome == Outcome::Ok => {
                    self.reconnected += 1;
                    if let Some(q) = open.remove(c) {
                        if q.is_none() {
                            resumed.insert(*c);
                        }
                        close(self, q);
                    }
                }
                (Call::GuardedWrite { check: Some(_) } | Call::Check { .. }, Some(c))
                    if resumed.remove(&c) =>
                {
                    self.holders_waited += 1;
                }
                (
                    Call::Create { .. }
                    | Call::FindOwnNode
                    | Call::Sync
                    | Call::ListChildren
                    | Call::Watch { .. }
                    | Call::Delete { .. },
                    Some(c),
                ) => {
                    resumed.remove(&c);
                }
                (Call::SessionEvent, Some(c)) if open.contains_key(&c) => {
                    self.expired_meanwhile += 1;
                    if let Some(q) = open.remove(&c) {
                        close(self, q);
                    }
                }
                (Call::GaveUp { .. }, Some(c)) if open.contains_key(&c) => {
                    self.gave_up_meanwhile += 1;
                }
                _ => {}
            }
        }
        for q in open.into_values() {
            close(self, q);
        }
    }
}
