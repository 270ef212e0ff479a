//! The etcd family's errors: what etcd answered ([`EtcdError`], one table from gRPC codes and
//! messages, [`ERROR_TABLE`]) and what the mutex reports ([`EtcdLockError`]), in std style:
//! `Display` without the source, `source()` with it, and an `advice()` naming what to do.

use std::error::Error;
use std::fmt;

/// What an etcd request answered instead of success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EtcdError {
    /// `etcdserver: requested lease not found` (gRPC NotFound): the lease expired or was
    /// revoked.
    LeaseNotFound,
    /// `mvcc: required revision has been compacted` (gRPC OutOfRange), or a watch cancelled with a compact revision.
    Compacted {
        /// The compaction point, when etcd said (`0`: not said).
        compact_revision: i64,
    },
    /// A watch ended without an event and not for compaction: the member cancelled it
    /// (shutting down, no leader) or its stream ended.
    WatchCanceled {
        /// What etcd said (its `cancel_reason` or the stream's error), or what ended.
        reason: String,
    },
    /// No answer came: not connected, or the request timed out in flight (it may have been
    /// applied).
    Unreachable {
        /// The request (`POST /v3/kv/txn`).
        request: String,
        /// What the transport said.
        detail: String,
    },
    /// etcd answered with an error the recipe has no use for (gRPC code and message).
    Server {
        /// The gRPC status code.
        code: i64,
        /// etcd's message.
        message: String,
    },
    /// An answer that is not what etcd's gateway sends.
    BadResponse {
        /// The request.
        request: String,
        /// What was wrong with the answer.
        detail: String,
    },
}

/// One row of the error table: gRPC code, a substring of etcd's message (empty: any), the
/// error it becomes. [`EtcdError::from_status`] goes through it; `docs/etcd.md` has the same
/// table.
pub const ERROR_TABLE: &[(i64, &str, &str)] = &[
    (5, "lease not found", "LeaseNotFound"),
    (11, "compacted", "Compacted"),
    (14, "", "Unreachable"),
    (4, "", "Unreachable"),
];

impl EtcdError {
    /// The error for an answer with gRPC `code` and `message`, through [`ERROR_TABLE`].
    pub fn from_status(request: &str, code: i64, message: &str) -> EtcdError {
        let row = ERROR_TABLE
            .iter()
            .find(|(c, m, _)| *c == code && (m.is_empty() || message.contains(m)));
        match row.map(|r| r.2) {
            Some("LeaseNotFound") => EtcdError::LeaseNotFound,
            Some("Compacted") => EtcdError::Compacted {
                compact_revision: 0,
            },
            Some("Unreachable") => EtcdError::Unreachable {
                request: request.to_owned(),
                detail: format!("gRPC code {code}: {message}"),
            },
            _ => EtcdError::Server {
                code,
                message: message.to_owned(),
            },
        }
    }

    /// What to do about it.
    pub fn advice(&self) -> &'static str {
        match self {
            EtcdError::LeaseNotFound => {
                "the session is gone: open a new one (a lock held under it is lost)"
            }
            EtcdError::Compacted { .. } => {
                "the history was compacted past the watch: read the current state and watch again"
            }
            EtcdError::WatchCanceled { .. } => {
                "read the current state and watch again (another member, if this one shut down)"
            }
            EtcdError::Unreachable { .. } => {
                "check the endpoint and the cluster's health; a write in flight may have been applied"
            }
            EtcdError::Server { .. } => "see etcd's message",
            EtcdError::BadResponse { .. } => {
                "is the endpoint an etcd 3.4+ JSON gateway (`/v3/...`)?"
            }
        }
    }
}

impl fmt::Display for EtcdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EtcdError::LeaseNotFound => f.write_str("etcd: requested lease not found"),
            EtcdError::Compacted { compact_revision } => {
                write!(f, "etcd: revision compacted (at {compact_revision})")
            }
            EtcdError::WatchCanceled { reason } => write!(f, "etcd: watch cancelled: {reason}"),
            EtcdError::Unreachable { request, detail } => {
                write!(f, "etcd: no answer to {request}: {detail}")
            }
            EtcdError::Server { code, message } => {
                write!(f, "etcd: gRPC code {code}: {message}")
            }
            EtcdError::BadResponse { request, detail } => {
                write!(f, "etcd: unexpected answer to {request}: {detail}")
            }
        }
    }
}

impl Error for EtcdError {}

/// Why a held lock is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    /// The session's deadline (measured from the last answered keepalive's send) passed.
    DeadlinePassed,
    /// etcd answered that the session's lease is gone.
    LeaseGone,
    /// The lock key is gone or was re-created (another create revision).
    KeyGone,
}

impl fmt::Display for LostReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LostReason::DeadlinePassed => "the session's deadline passed",
            LostReason::LeaseGone => "etcd says the session's lease is gone",
            LostReason::KeyGone => "the lock key is gone",
        })
    }
}

/// What the etcd mutex reports.
#[derive(Debug)]
pub enum EtcdLockError {
    /// This session already acquires or holds this lock key (`<prefix>/<lease>`): one session
    /// holds a prefix once.
    AlreadyLocked {
        /// The own lock key.
        key: String,
    },
    /// Not acquired within the timeout; the key was deleted again.
    TimedOut {
        /// The own lock key.
        key: String,
    },
    /// The lock was lost (or, after waiting, found lost: 3.5's `ErrSessionExpired`).
    LockLost {
        /// The own lock key.
        key: String,
        /// Why.
        reason: LostReason,
    },
    /// A request failed.
    Etcd {
        /// The own lock key.
        key: String,
        /// What etcd answered.
        source: EtcdError,
    },
}

impl EtcdLockError {
    /// Whether the lock is lost (the caller must stop acting as holder).
    pub fn is_lost(&self) -> bool {
        matches!(self, EtcdLockError::LockLost { .. })
    }

    /// What to do about it.
    pub fn advice(&self) -> Option<&'static str> {
        Some(match self {
            EtcdLockError::AlreadyLocked { .. } => {
                "unlock the first guard first, or give the second holder a session of its own"
            }
            EtcdLockError::TimedOut { .. } => "try again later, or with a longer timeout",
            EtcdLockError::LockLost { .. } => {
                "stop writing as holder: another client may hold the lock now; lock again"
            }
            EtcdLockError::Etcd { source, .. } => source.advice(),
        })
    }

    /// Whether someone else holds the lock, so trying again later may succeed (the name every
    /// family uses): an acquire that timed out waiting.
    pub fn is_held(&self) -> bool {
        matches!(self, EtcdLockError::TimedOut { .. })
    }
}

impl fmt::Display for EtcdLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EtcdLockError::AlreadyLocked { key } => {
                write!(f, "etcd lock {key}: already locked through this session")
            }
            EtcdLockError::TimedOut { key } => write!(f, "etcd lock {key}: timed out"),
            EtcdLockError::LockLost { key, reason } => {
                write!(f, "etcd lock {key}: lost ({reason})")
            }
            EtcdLockError::Etcd { key, .. } => write!(f, "etcd lock {key}: a request failed"),
        }
    }
}

impl Error for EtcdLockError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            EtcdLockError::Etcd { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of the table through the production mapping, and an unknown code.
    #[test]
    fn error_table_maps_grpc_codes() {
        let cases = [
            (5, "etcdserver: requested lease not found", "LeaseNotFound"),
            (
                11,
                "mvcc: required revision has been compacted",
                "Compacted",
            ),
            (14, "etcdserver: no leader", "Unreachable"),
            (4, "context deadline exceeded", "Unreachable"),
            (3, "etcdserver: key is not provided", "Server"),
        ];
        for (code, message, want) in cases {
            let e = EtcdError::from_status("POST /v3/kv/txn", code, message);
            let got = format!("{e:?}");
            assert!(got.starts_with(want), "{code} {message}: {got}");
            assert!(!e.advice().is_empty());
        }
    }

    #[test]
    fn lock_errors_keep_their_source() {
        let e = EtcdLockError::Etcd {
            key: "pfx/1".into(),
            source: EtcdError::LeaseNotFound,
        };
        assert_eq!(e.to_string(), "etcd lock pfx/1: a request failed");
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("etcd: requested lease not found")
        );
        assert!(e.advice().is_some_and(|a| a.contains("session")));
    }
}
