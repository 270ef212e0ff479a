//! [`ZkLockError`]: the one error type of the ZooKeeper mutex, built like the file family's
//! [`crate::LockError`]: every message names the lock directory (or the connect string) and says
//! what happened, `source()` carries the ZooKeeper error underneath, and `advice()` says what to
//! do; "held, try later" is told apart from "lost" and from a broken setup.

use std::fmt;
use std::time::Duration;

use crate::zk::coord::{CoordError, SessionId};

/// Why a lock directory path was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BadPathReason {
    /// The path is empty.
    Empty,
    /// It does not start with `/`.
    NotAbsolute,
    /// `/` itself: lock nodes would sit among everything else at the root.
    Root,
    /// It ends with `/`.
    TrailingSlash,
    /// An empty, `.` or `..` component.
    BadComponent,
    /// A NUL or other control character.
    ControlCharacter,
    /// `/zookeeper` and below belong to ZooKeeper itself.
    Reserved,
}

impl fmt::Display for BadPathReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BadPathReason::Empty => "it is empty",
            BadPathReason::NotAbsolute => "it does not start with '/'",
            BadPathReason::Root => "'/' is the root, not a lock directory",
            BadPathReason::TrailingSlash => "it ends with '/'",
            BadPathReason::BadComponent => "it has an empty, '.' or '..' component",
            BadPathReason::ControlCharacter => "it contains a NUL or control character",
            BadPathReason::Reserved => "/zookeeper is ZooKeeper's own subtree",
        })
    }
}

/// Why a held lock can no longer be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LostReason {
    /// The session the lock was granted in expired: the server deleted the lock node, and
    /// another client may hold the lock now.
    SessionExpired {
        /// The expired session.
        session: SessionId,
    },
    /// The connection is down (Curator's SUSPENDED): the session, and with it the lock, may
    /// already have expired at the server. The only reason that can clear: if the client
    /// reconnects to the same session, the lock was never lost (Curator's RECONNECTED).
    Suspended,
    /// The lock node is gone although the session lives (someone deleted it).
    NodeDeleted,
    /// A node of that name exists but is not ours (another session, another czxid).
    NodeReplaced {
        /// The session that owns the node now.
        owner: SessionId,
        /// The node's creation zxid.
        czxid: i64,
    },
    /// The client now runs another session than the one the lock was granted in.
    SessionReplaced {
        /// The client's current session.
        now: SessionId,
    },
    /// Our lock node is still there but someone wrote to it (a guarded write's version check
    /// failed: Curator's revoker writes `__REVOKE__` into the lock node to ask for it).
    NodeChanged,
    /// The server refused the session's authentication: the client cannot reach the session
    /// any more, and no new session is opened. The server keeps the session, and the lock
    /// node, until the session times out.
    AuthFailed {
        /// The session the lock was granted in.
        session: SessionId,
    },
    /// The client was closed, and its session with it.
    ClientClosed {
        /// The session the lock was granted in.
        session: SessionId,
    },
}

impl LostReason {
    /// Whether the loss is final. Only [`LostReason::Suspended`] is not.
    pub fn is_final(self) -> bool {
        !matches!(self, LostReason::Suspended)
    }
}

impl fmt::Display for LostReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LostReason::SessionExpired { session } => write!(
                f,
                "session {session} expired, so the server deleted the lock node"
            ),
            LostReason::Suspended => f.write_str(
                "the connection to ZooKeeper is down (suspended): the session may have expired at the server",
            ),
            LostReason::NodeDeleted => f.write_str("the lock node was deleted"),
            LostReason::NodeReplaced { owner, czxid } => write!(
                f,
                "the lock node now belongs to session {owner} (czxid {czxid:#x})"
            ),
            LostReason::SessionReplaced { now } => write!(
                f,
                "the client now runs session {now}, not the one the lock was granted in"
            ),
            LostReason::NodeChanged => f.write_str(
                "someone wrote to the lock node (its version changed; Curator's revoker writes __REVOKE__ there)",
            ),
            LostReason::AuthFailed { session } => write!(
                f,
                "the server refused session {session}'s authentication; the lock node stays until the session times out"
            ),
            LostReason::ClientClosed { session } => {
                write!(f, "the client was closed, and session {session} with it")
            }
        }
    }
}

/// Who held the lock when an acquire gave up: the lowest lock node, and its data if readable
/// (Curator puts the client's IP there, lockwright `lockwright <host> pid <pid>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The holder's node, full path.
    pub node: String,
    /// Its data, if it could be read.
    pub data: Option<Vec<u8>>,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.node)?;
        match &self.data {
            Some(d) if d.is_empty() => write!(f, " (no data)"),
            Some(d) => write!(f, " (data {:?})", String::from_utf8_lossy(d)),
            None => Ok(()),
        }
    }
}

/// What happened to the node of an acquire that failed or gave up: nothing is left behind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cleanup {
    /// No node was created.
    NothingCreated,
    /// Our node was deleted before the error was returned.
    Deleted {
        /// The deleted node.
        node: String,
    },
    /// Our node (or, after a lost create reply, a node that may exist) is being deleted by a
    /// background task, retried while the session lives.
    Background {
        /// The node, if the create's reply named it.
        node: Option<String>,
    },
    /// Our node went with its expired session.
    SessionGone,
}

impl fmt::Display for Cleanup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cleanup::NothingCreated => f.write_str("no lock node was created"),
            Cleanup::Deleted { node } => write!(f, "our lock node {node} was deleted"),
            Cleanup::Background { node: Some(node) } => write!(
                f,
                "our lock node {node} is being deleted in the background (retried while the session lives)"
            ),
            Cleanup::Background { node: None } => f.write_str(
                "a node our lost create may have made is being searched for and deleted in the background",
            ),
            Cleanup::SessionGone => f.write_str("our lock node went with its expired session"),
        }
    }
}

/// Everything that can go wrong acquiring, checking, using or releasing a ZooKeeper lock.
#[derive(Debug)]
#[non_exhaustive]
pub enum ZkLockError {
    /// [`crate::zk::ZkMutex::try_acquire`]: another node is ahead of ours.
    Held {
        /// The lock directory.
        path: String,
        /// The current holder, if one was seen.
        holder: Option<Holder>,
        /// What became of our node.
        cleanup: Cleanup,
    },
    /// [`crate::zk::ZkMutex::acquire_timeout`] gave up.
    TimedOut {
        /// The lock directory.
        path: String,
        /// How long it tried.
        waited: Duration,
        /// The holder at the last listing, if one was seen.
        holder: Option<Holder>,
        /// What became of our node.
        cleanup: Cleanup,
    },
    /// The hold can no longer be trusted ([`crate::zk::ZkGuard::ensure_valid`], a guarded write).
    LockLost {
        /// The lock directory.
        path: String,
        /// Our lock node.
        node: String,
        /// Why it is lost.
        reason: LostReason,
    },
    /// [`crate::zk::ZkGuard::claim`]: the resource refused the claim, because a holder granted
    /// later has claimed or written it: this hold has lost the lock.
    Superseded {
        /// The lock directory.
        path: String,
        /// Our lock node.
        node: String,
        /// The resource's refusal.
        source: crate::zk::fencing::StaleToken,
    },
    /// No ZooKeeper server could be reached to open a session.
    Unreachable {
        /// The connect string.
        connect: String,
        /// What the client said.
        detail: String,
    },
    /// The server refused the client's authentication (`AUTHFAILED`; SASL failures included).
    /// No new session is tried: it would be refused the same way.
    AuthFailed {
        /// The connect string.
        connect: String,
        /// What the client said.
        detail: String,
    },
    /// The client handle was closed; nothing more can be sent through it.
    ClientClosed {
        /// What the recipe was doing (`"create the lock node"`).
        op: &'static str,
        /// The path concerned.
        path: String,
    },
    /// Sessions kept ending: the recipe opened [`crate::zk::SESSION_REOPEN_LIMIT`] new sessions
    /// in a row, each gone again before a request in it made progress, and stopped.
    SessionsKeepEnding {
        /// The lock directory (or the lock node, for a release).
        path: String,
        /// How many sessions were opened in a row.
        reopened: u32,
    },
    /// The lock directory path is unusable.
    BadPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: BadPathReason,
    },
    /// A guarded write's own operation failed (not the lock check); nothing was written.
    WriteFailed {
        /// The failing operation's index in the caller's list.
        index: usize,
        /// Its path.
        path: String,
        /// Why it failed.
        source: CoordError,
    },
    /// An acquire through a [`crate::zk::ZkMutex`] value that already holds the lock: it would
    /// wait behind its own node forever, so it fails at once instead.
    AlreadyHeld {
        /// The lock directory.
        path: String,
        /// The node this mutex value holds.
        node: String,
    },
    /// The lock directory's sequence counter is at its top: our node's suffix was
    /// `2147483647` (which ZooKeeper 3.8 then repeats) or negative (wrapped). Suffixes no longer
    /// say who came first, so the recipe deleted its node and refuses to queue
    /// (`docs/incidents.md`, "The sequence counter at its top").
    SequenceExhausted {
        /// The lock directory.
        path: String,
        /// Our node (deleted).
        node: String,
        /// Its suffix.
        suffix: i64,
    },
    /// A ZooKeeper request failed for a reason the recipe cannot handle.
    Zk {
        /// What the recipe was doing (`"create the lock node"`).
        op: &'static str,
        /// The path concerned.
        path: String,
        /// What ZooKeeper said.
        source: CoordError,
    },
}

impl ZkLockError {
    /// Whether someone else holds the lock ([`ZkLockError::Held`], [`ZkLockError::TimedOut`]):
    /// trying again later may succeed.
    pub fn is_held(&self) -> bool {
        matches!(
            self,
            ZkLockError::Held { .. } | ZkLockError::TimedOut { .. }
        )
    }

    /// Whether the error reports a lost lock (also a claim a newer holder superseded): stop
    /// writing. The same name in every family (`LockError::is_lost`, `DocLockError::is_lost`).
    pub fn is_lost(&self) -> bool {
        matches!(
            self,
            ZkLockError::LockLost { .. } | ZkLockError::Superseded { .. }
        )
    }

    /// Renamed [`ZkLockError::is_lost`], the name every family uses.
    #[deprecated(since = "0.1.0", note = "renamed `is_lost()`, as in every family")]
    pub fn is_lock_lost(&self) -> bool {
        self.is_lost()
    }

    /// The reason, for [`ZkLockError::LockLost`].
    pub fn lost_reason(&self) -> Option<LostReason> {
        match self {
            ZkLockError::LockLost { reason, .. } => Some(*reason),
            _ => None,
        }
    }

    /// The holder named by a "held" error.
    pub fn holder(&self) -> Option<&Holder> {
        match self {
            ZkLockError::Held { holder, .. } | ZkLockError::TimedOut { holder, .. } => {
                holder.as_ref()
            }
            _ => None,
        }
    }

    /// What became of our node, for "held" errors.
    pub fn cleanup(&self) -> Option<&Cleanup> {
        match self {
            ZkLockError::Held { cleanup, .. } | ZkLockError::TimedOut { cleanup, .. } => {
                Some(cleanup)
            }
            _ => None,
        }
    }

    /// What to do about this error, for an operator or a log line; `None` where there is
    /// nothing general to say.
    ///
    /// ```
    /// # use lockwright::zk::ZkLockError;
    /// let e = ZkLockError::AuthFailed { connect: "zk:2181".into(), detail: "AuthFailed".into() };
    /// assert!(e.advice().unwrap().contains("credentials"));
    /// ```
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            ZkLockError::Held { .. } => "retry later, or wait for the lock with acquire()",
            ZkLockError::TimedOut { .. } => {
                "the lock stayed held: retry later, wait longer, or find the holder named above"
            }
            ZkLockError::LockLost {
                reason: LostReason::AuthFailed { .. },
                ..
            } => {
                "stop writing; fix the credentials given to ZkClientBuilder::auth, connect a new \
                 ZkClient and acquire again (the old lock node goes when its session times out)"
            }
            ZkLockError::LockLost {
                reason: LostReason::ClientClosed { .. },
                ..
            } => "stop writing; connect a new ZkClient and acquire the lock again through it",
            ZkLockError::LockLost { .. } => {
                "stop writing, since another client may hold the lock now, and acquire it again"
            }
            ZkLockError::Superseded { .. } => {
                "a newer holder has claimed the resource: release the guard without touching the \
                 resource, and acquire the lock again"
            }
            ZkLockError::Unreachable { .. } => {
                "check the connect string and that the ZooKeeper servers are up"
            }
            ZkLockError::AuthFailed { .. } => {
                "check the credentials given to ZkClientBuilder::auth (and the server's SASL or \
                 JAAS setup); retrying with the same credentials fails the same way"
            }
            ZkLockError::ClientClosed { .. } => {
                "the client was closed: connect a new ZkClient and build the mutex on it"
            }
            ZkLockError::SessionsKeepEnding { .. } => {
                "find out why the server ends new sessions at once (its log; a session timeout \
                 below the server's minimum; a server restarting), then retry"
            }
            ZkLockError::BadPath { .. } => "use an absolute path such as \"/locks/my-index\"",
            ZkLockError::WriteFailed { .. } => {
                "nothing was written: fix the failing operation (see the source error) and write again"
            }
            ZkLockError::AlreadyHeld { .. } => {
                "re-enter with ZkGuard::reenter(), or acquire through a clone of the mutex to queue"
            }
            ZkLockError::SequenceExhausted { .. } => {
                "stop every client of this lock (Curator's too), delete the lock directory once \
                 it is empty, and let the next acquire create it again: its counter starts at 0. \
                 Do this while the lock is idle, long before the counter nears 2147483647 \
                 (`Stat.cversion` of the directory shows how far it is)"
            }
            ZkLockError::Zk { .. } => return None,
        })
    }

    pub(crate) fn from_coord(op: &'static str, path: &str, e: CoordError) -> ZkLockError {
        match e {
            CoordError::Unreachable { connect, detail } => {
                ZkLockError::Unreachable { connect, detail }
            }
            CoordError::AuthFailed { detail } => ZkLockError::AuthFailed {
                connect: String::new(),
                detail,
            },
            CoordError::ClientClosed => ZkLockError::ClientClosed {
                op,
                path: path.to_string(),
            },
            source => ZkLockError::Zk {
                op,
                path: path.to_string(),
                source,
            },
        }
    }
}

fn holder_phrase(holder: &Option<Holder>) -> String {
    match holder {
        Some(h) => format!("held by {h}"),
        None => "held by another client".to_string(),
    }
}

impl fmt::Display for ZkLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZkLockError::Held {
                path,
                holder,
                cleanup,
            } => write!(
                f,
                "ZooKeeper lock {path} is {}; {cleanup}",
                holder_phrase(holder)
            ),
            ZkLockError::TimedOut {
                path,
                waited,
                holder,
                cleanup,
            } => write!(
                f,
                "timed out after {:.3}s waiting for ZooKeeper lock {path}, {}; {cleanup}",
                waited.as_secs_f64(),
                holder_phrase(holder)
            ),
            ZkLockError::LockLost { path, node, reason } => write!(
                f,
                "ZooKeeper lock {path} (node {node}) is lost: {reason}"
            ),
            ZkLockError::Superseded { path, node, .. } => write!(
                f,
                "ZooKeeper lock {path} (node {node}) is lost: the resource was claimed by a newer holder"
            ),
            ZkLockError::Unreachable { connect, detail } => write!(
                f,
                "cannot reach ZooKeeper at {connect} ({detail})"
            ),
            ZkLockError::AuthFailed { connect, detail } if connect.is_empty() => write!(
                f,
                "ZooKeeper refused the client's authentication ({detail})"
            ),
            ZkLockError::AuthFailed { connect, detail } => write!(
                f,
                "ZooKeeper at {connect} refused the client's authentication ({detail})"
            ),
            ZkLockError::ClientClosed { op, path } => {
                write!(f, "the ZooKeeper client was closed ({op} {path})")
            }
            ZkLockError::SessionsKeepEnding { path, reopened } => write!(
                f,
                "gave up on ZooKeeper lock {path}: {reopened} new sessions in a row ended before \
                 any request in them made progress"
            ),
            ZkLockError::BadPath { path, reason } => write!(
                f,
                "bad ZooKeeper lock path {path:?}: {reason}"
            ),
            ZkLockError::WriteFailed { index, path, .. } => write!(
                f,
                "guarded write failed at operation {index} on {path}; nothing was written"
            ),
            ZkLockError::AlreadyHeld { path, node } => write!(
                f,
                "ZooKeeper lock {path} is already held through this ZkMutex (node {node}); a second acquire would wait behind itself forever"
            ),
            ZkLockError::SequenceExhausted { path, node, suffix } => write!(
                f,
                "ZooKeeper lock {path}: the directory's sequence counter is at its top (our node {node} got suffix {suffix}), so suffixes no longer follow creation order; our node was deleted and the lock cannot be queued for"
            ),
            ZkLockError::Zk { op, path, .. } => {
                write!(f, "ZooKeeper request failed ({op} {path})")
            }
        }
    }
}

impl std::error::Error for ZkLockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ZkLockError::WriteFailed { source, .. } | ZkLockError::Zk { source, .. } => {
                Some(source)
            }
            ZkLockError::Superseded { source, .. } => Some(source),
            _ => None,
        }
    }
}
