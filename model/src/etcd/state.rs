//! The state of an etcd run: the server ([`Server`]), each client's view ([`Client`], [`Pc`]),
//! the protected counter ([`Resource`]) and the history the properties judge by (grants in
//! order, acknowledged increments), which no client computes.

use super::scenario::Faults;
use super::server::{LeaseId, LockKey, Rev, Server};

/// Where a client is in the recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    /// Not locking; may start an attempt.
    Idle,
    /// The lock transaction was applied but its reply was lost: send it again.
    LockRetry,
    /// `waitDeletes`: range for the youngest key older than the own one.
    Find,
    /// Create the watch on `key` from revision `from` (the range's header revision).
    Watch { key: LockKey, from: Rev },
    /// Watching `key` for its delete.
    Waiting { key: LockKey },
    /// 3.5: re-read the own key after waiting.
    Recheck,
    /// Holds: about to update the counter.
    Held,
    /// Read the counter (`read`); the write is next.
    Updating { read: u8 },
    /// Updated (or refused): unlock next.
    Unlock,
    /// Every attempt made.
    Done,
}

impl Pc {
    /// Whether the client was told it holds and has not unlocked.
    pub fn holding(self) -> bool {
        matches!(self, Pc::Held | Pc::Updating { .. } | Pc::Unlock)
    }
}

/// A client's session: its lease and the client-side deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Session {
    pub lease: LeaseId,
    /// Ticks until the client-side deadline (`0`: the client knows the session is gone).
    pub deadline: u8,
    /// Whether its keepalives no longer reach the server (the `expire` fault).
    pub cut: bool,
}

/// One client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    pub pc: Pc,
    pub session: Option<Session>,
    pub paused: bool,
    /// The own key's create revision in the current attempt.
    pub my_rev: Rev,
    /// This hold's number in the model's grant history.
    pub grant: u8,
    /// Attempts started.
    pub attempts: u8,
    /// This attempt waited for a predecessor and was woken by its delete.
    pub woken: bool,
    /// The client was told its lock or session is lost (3.5's `ErrSessionExpired`, or the
    /// guard's deadline).
    pub lost_reported: bool,
    /// `unlock-retry-by-name`: a retried delete of `pfx/<lease>` still to be sent.
    pub retry_delete: Option<LeaseId>,
}

impl Client {
    pub const NEW: Client = Client {
        pc: Pc::Idle,
        session: None,
        paused: false,
        my_rev: 0,
        grant: 0,
        attempts: 0,
        woken: false,
        lost_reported: false,
        retry_delete: None,
    };

    /// The current session's lease.
    pub fn lease(&self) -> Option<LeaseId> {
        self.session.map(|s| s.lease)
    }
}

/// The protected counter outside etcd (`unfenced`, `fenced`, `fenced-claim` writes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resource {
    pub value: u8,
    /// The highest token the resource has seen (fenced modes).
    pub max_token: Option<u8>,
}

/// The whole state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub server: Server,
    pub clients: Vec<Client>,
    pub resource: Resource,
    /// Fault budgets spent.
    pub used: Faults,
    /// Grants so far (the model's history; a client's `grant` is its place in it).
    pub grants: u8,
    /// Increments acknowledged to their writers.
    pub acked: u8,
    /// The grant of the latest accepted write.
    pub last_write_grant: u8,
    /// A write was accepted from a hold older than that of an earlier accepted write.
    pub stale_write: bool,
    /// A client was told it holds while its key did not exist.
    pub granted_without_key: bool,
    /// A client was granted after some client restarted.
    pub granted_after_restart: bool,
    /// `lock-service`: the leases the server's own sessions keep alive (bit per lease id).
    pub server_kept: u16,
}
