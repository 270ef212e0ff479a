//! One error style for every family (issue #37), checked on every variant of every family's
//! error type: `Display` says what happened and nothing else — not the source's text (error
//! chain printers, anyhow's `{:#}` and the `lockwright` CLI, print the source after it, so a
//! message that repeats it prints every cause twice) and not what to do (that is `advice()`,
//! which the CLI prints on a line of its own).
//!
//! Completeness: each family's `match` names every variant without a wildcard, so a new variant
//! does not compile until it is named there, and the list must cover as many distinct variants
//! as that `match` has arms — a count kept by hand beside it (Rust cannot count enum variants):
//! whoever adds the arm must raise the count, and the list then fails until it has the variant.

use std::error::Error;

/// Phrases that say what to do. A message holding one gives advice that belongs in `advice()`.
const ADVICE_MARKERS: &[&str] = &[
    "retry later",
    "; retry",
    "acquire it again",
    "acquire again",
    "and acquire",
    "check the ",
    "; use ",
    "release it",
    "release that",
    "install the scripts",
    "stop writing",
    "re-create the",
    "re-enter with",
];

/// The rule's violations for one error: `name` names the variant in the report.
fn violations(name: &str, e: &dyn Error, advice: Option<&str>) -> Vec<String> {
    let msg = e.to_string();
    let mut v = Vec::new();
    if msg.trim().is_empty() {
        v.push(format!("{name}: empty message"));
    }
    if let Some(source) = e.source() {
        let s = source.to_string();
        if !s.is_empty() && msg.contains(&s) {
            v.push(format!(
                "{name}: the message repeats its source ({s:?}): {msg:?}"
            ));
        }
    }
    if let Some(a) = advice {
        if msg.contains(a) {
            v.push(format!("{name}: the message repeats its advice: {msg:?}"));
        }
    }
    for m in ADVICE_MARKERS {
        if msg.to_lowercase().contains(m) {
            v.push(format!("{name}: the message gives advice ({m:?}): {msg:?}"));
        }
    }
    v
}

/// Checks every error of `all`; `advised`: whether every variant but those named in
/// `unadvised` must have `advice()`.
fn assert_style(
    all: Vec<(&'static str, Box<dyn Error>, Option<&'static str>)>,
    variants: usize,
    advised: bool,
    unadvised: &[&str],
) {
    // Every variant the `match` names is in the list (the `match` has `variants` arms).
    let mut names: Vec<&str> = all.iter().map(|(n, _, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), variants, "variants listed: {names:?}");
    let mut failures = Vec::new();
    for (name, e, advice) in &all {
        failures.extend(violations(name, &**e, *advice));
        if advised && advice.is_none() && !unadvised.contains(name) {
            failures.push(format!("{name}: no advice()"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checker catches what it is for: an error that prints its source, and one that gives
/// advice in its message.
#[test]
fn the_style_check_finds_a_message_that_repeats_its_source_or_advises() {
    #[derive(Debug)]
    struct Loud(std::io::Error);
    impl std::fmt::Display for Loud {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "open failed: {}; check the path", self.0)
        }
    }
    impl Error for Loud {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }
    let e = Loud(std::io::Error::other("disk on fire"));
    let v = violations("Loud", &e, Some("check the path"));
    assert_eq!(v.len(), 3, "{v:?}");
}

mod file {
    use std::io;
    use std::path::PathBuf;
    use std::time::Duration;

    use crate::file::sys::{EntryKind, OsLockKind};
    use crate::file::{BadNameReason, InvalidReason, LockError};

    fn every() -> Vec<LockError> {
        let p = || PathBuf::from("/data/index/write.lock");
        let io = || io::Error::other("injected");
        vec![
            LockError::HeldByThisProcess { path: p() },
            LockError::HeldByOtherProcess {
                path: p(),
                pid: Some(7),
                holder: Some("host pid 7".into()),
            },
            LockError::AlreadyClosed { path: p() },
            LockError::Invalidated {
                path: p(),
                reason: InvalidReason::Unlinked,
            },
            LockError::ReleaseRefused {
                path: p(),
                reason: InvalidReason::NotInHeldSet,
            },
            LockError::LockingUnsupported {
                path: p(),
                kind: OsLockKind::Ofd,
                source: io(),
            },
            LockError::BadLockName {
                name: "a/b".into(),
                reason: BadNameReason::ContainsSlash,
            },
            LockError::BadLockPath {
                path: p(),
                found: EntryKind::Directory,
            },
            LockError::NotADirectory {
                path: p(),
                source: io(),
            },
            LockError::Io {
                path: p(),
                source: io(),
            },
            LockError::TimedOut {
                path: p(),
                waited: Duration::from_secs(2),
                last: Box::new(LockError::HeldByOtherProcess {
                    path: p(),
                    pid: None,
                    holder: None,
                }),
            },
        ]
    }

    fn name(e: &LockError) -> &'static str {
        match e {
            LockError::HeldByThisProcess { .. } => "HeldByThisProcess",
            LockError::HeldByOtherProcess { .. } => "HeldByOtherProcess",
            LockError::AlreadyClosed { .. } => "AlreadyClosed",
            LockError::Invalidated { .. } => "Invalidated",
            LockError::ReleaseRefused { .. } => "ReleaseRefused",
            LockError::LockingUnsupported { .. } => "LockingUnsupported",
            LockError::BadLockName { .. } => "BadLockName",
            LockError::BadLockPath { .. } => "BadLockPath",
            LockError::NotADirectory { .. } => "NotADirectory",
            LockError::Io { .. } => "Io",
            LockError::TimedOut { .. } => "TimedOut",
        }
    }

    #[test]
    fn every_file_lock_error_follows_the_style() {
        let all = every()
            .into_iter()
            .map(|e| {
                let a = e.advice();
                (name(&e), Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        super::assert_style(all, 11, false, &[]);
    }
}

#[cfg(feature = "zookeeper")]
mod zk {
    use std::time::Duration;

    use crate::zk::{
        BadPathReason, Cleanup, CoordError, FencingToken, Holder, LostReason, SessionId,
        StaleToken, ZkLockError,
    };

    fn every() -> Vec<ZkLockError> {
        let path = || "/locks/index".to_string();
        let node = || "/locks/index/_c_x-lock-0000000001".to_string();
        let holder = || {
            Some(Holder {
                node: node(),
                data: Some(b"host pid 7".to_vec()),
            })
        };
        vec![
            ZkLockError::Held {
                path: path(),
                holder: holder(),
                cleanup: Cleanup::NothingCreated,
            },
            ZkLockError::TimedOut {
                path: path(),
                waited: Duration::from_secs(3),
                holder: holder(),
                cleanup: Cleanup::Background { node: Some(node()) },
            },
            ZkLockError::LockLost {
                path: path(),
                node: node(),
                reason: LostReason::SessionExpired {
                    session: SessionId(5),
                },
            },
            ZkLockError::Superseded {
                path: path(),
                node: node(),
                source: StaleToken {
                    offered: FencingToken::new(3),
                    highest: FencingToken::new(9),
                },
            },
            ZkLockError::Unreachable {
                connect: "127.0.0.1:2181".into(),
                detail: "refused".into(),
            },
            ZkLockError::AuthFailed {
                connect: "127.0.0.1:2181".into(),
                detail: "AuthFailed".into(),
            },
            ZkLockError::ClientClosed {
                op: "create",
                path: path(),
            },
            ZkLockError::SessionsKeepEnding {
                path: path(),
                reopened: 5,
            },
            ZkLockError::BadPath {
                path: "locks".into(),
                reason: BadPathReason::NotAbsolute,
            },
            ZkLockError::WriteFailed {
                index: 1,
                path: path(),
                source: CoordError::BadVersion,
            },
            ZkLockError::AlreadyHeld {
                path: path(),
                node: node(),
            },
            ZkLockError::SequenceExhausted {
                path: path(),
                node: node(),
                suffix: 2147483647,
            },
            ZkLockError::Zk {
                op: "list",
                path: path(),
                source: CoordError::Rejected {
                    detail: "NoAuth".into(),
                },
            },
        ]
    }

    fn name(e: &ZkLockError) -> &'static str {
        match e {
            ZkLockError::Held { .. } => "Held",
            ZkLockError::TimedOut { .. } => "TimedOut",
            ZkLockError::LockLost { .. } => "LockLost",
            ZkLockError::Superseded { .. } => "Superseded",
            ZkLockError::Unreachable { .. } => "Unreachable",
            ZkLockError::AuthFailed { .. } => "AuthFailed",
            ZkLockError::ClientClosed { .. } => "ClientClosed",
            ZkLockError::SessionsKeepEnding { .. } => "SessionsKeepEnding",
            ZkLockError::BadPath { .. } => "BadPath",
            ZkLockError::WriteFailed { .. } => "WriteFailed",
            ZkLockError::AlreadyHeld { .. } => "AlreadyHeld",
            ZkLockError::SequenceExhausted { .. } => "SequenceExhausted",
            ZkLockError::Zk { .. } => "Zk",
        }
    }

    #[test]
    fn every_zookeeper_lock_error_follows_the_style() {
        let all = every()
            .into_iter()
            .map(|e| {
                let a = e.advice();
                (name(&e), Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        // A failed request: what to do depends on the ZooKeeper error, its source.
        super::assert_style(all, 13, true, &["Zk"]);
    }
}

#[cfg(feature = "docstore")]
mod docstore {
    use std::time::Duration;

    use crate::docstore::{DocLockError, Refusal, StoreError, Token};

    fn every() -> Vec<DocLockError> {
        let lock = || "locks/index".to_string();
        let t = |s| Token {
            primary_term: 1,
            seq_no: s,
        };
        let refused = || StoreError::Rejected {
            request: "POST http://127.0.0.1:9200/locks/_update/index".into(),
            status: 409,
            error_type: "version_conflict_engine_exception".into(),
            detail: Box::new(Refusal {
                reason: "conflict".into(),
                explained: None,
                body: String::new(),
            }),
        };
        vec![
            DocLockError::Held {
                lock: lock(),
                answer: refused(),
            },
            DocLockError::TimedOut {
                lock: lock(),
                waited: Duration::from_secs(2),
                last: Box::new(DocLockError::Held {
                    lock: lock(),
                    answer: refused(),
                }),
            },
            DocLockError::LeaseExpired {
                lock: lock(),
                deadline_ms: 10,
                now_ms: 11,
            },
            DocLockError::Fenced {
                lock: lock(),
                token: t(3),
                answer: refused(),
            },
            DocLockError::NotOwner {
                lock: lock(),
                answer: refused(),
            },
            DocLockError::NotHolding {
                lock: lock(),
                state: "released",
            },
            DocLockError::Superseded {
                lock: lock(),
                what: "the lock document",
                token: t(3),
                found: Some(t(4)),
            },
            DocLockError::BadPatch {
                lock: lock(),
                reason: "not an object",
            },
            DocLockError::InstallBelowFence {
                lock: lock(),
                data: "data/1".into(),
                fence: t(9),
                installed: t(1),
            },
            DocLockError::HeldByThisOwner { lock: lock() },
            DocLockError::ScriptMismatch {
                lock: lock(),
                id: "lw-acquire-v1".into(),
                expected: "a".into(),
                found: Some("b".into()),
            },
            DocLockError::ScriptMismatch {
                lock: lock(),
                id: "lw-acquire-v1".into(),
                expected: "a".into(),
                found: None,
            },
            DocLockError::Store {
                lock: lock(),
                source: StoreError::Tls {
                    request: "GET https://es:9200/".into(),
                    detail: "unknown issuer".into(),
                },
            },
        ]
    }

    fn name(e: &DocLockError) -> &'static str {
        match e {
            DocLockError::Held { .. } => "Held",
            DocLockError::TimedOut { .. } => "TimedOut",
            DocLockError::LeaseExpired { .. } => "LeaseExpired",
            DocLockError::Fenced { .. } => "Fenced",
            DocLockError::NotOwner { .. } => "NotOwner",
            DocLockError::NotHolding { .. } => "NotHolding",
            DocLockError::Superseded { .. } => "Superseded",
            DocLockError::BadPatch { .. } => "BadPatch",
            DocLockError::InstallBelowFence { .. } => "InstallBelowFence",
            DocLockError::HeldByThisOwner { .. } => "HeldByThisOwner",
            DocLockError::ScriptMismatch { .. } => "ScriptMismatch",
            DocLockError::Store { .. } => "Store",
        }
    }

    #[test]
    fn every_document_store_lock_error_follows_the_style() {
        let all = every()
            .into_iter()
            .map(|e| {
                let a = e.advice();
                (name(&e), Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        super::assert_style(all, 12, true, &[]);
    }

    #[test]
    fn every_store_error_follows_the_style() {
        let req = || "POST http://127.0.0.1:9200/locks/_update/index".to_string();
        let all: Vec<StoreError> = vec![
            StoreError::Rejected {
                request: req(),
                status: 400,
                error_type: "illegal_argument_exception".into(),
                detail: Box::default(),
            },
            StoreError::OutcomeUnknown {
                request: req(),
                detail: "timed out".into(),
            },
            StoreError::Unreachable {
                request: req(),
                detail: "refused".into(),
            },
            StoreError::Tls {
                request: req(),
                detail: "unknown issuer".into(),
            },
            StoreError::BadResponse {
                request: req(),
                status: 200,
                detail: "no _seq_no".into(),
            },
        ];
        let all = all
            .into_iter()
            .map(|e| {
                let name = match &e {
                    StoreError::Rejected { .. } => "Rejected",
                    StoreError::OutcomeUnknown { .. } => "OutcomeUnknown",
                    StoreError::Unreachable { .. } => "Unreachable",
                    StoreError::Tls { .. } => "Tls",
                    StoreError::BadResponse { .. } => "BadResponse",
                };
                let a = e.advice();
                (name, Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        super::assert_style(all, 5, false, &[]);
    }
}

#[cfg(feature = "replication")]
mod replication {
    use std::io;
    use std::path::PathBuf;

    use crate::file::LockError;
    use crate::replication::ReplicationError;

    #[test]
    fn every_replication_error_follows_the_style() {
        let all: Vec<ReplicationError> = vec![
            ReplicationError::Io {
                op: "copy",
                path: PathBuf::from("/replica/_0.cfs"),
                source: io::Error::other("injected"),
            },
            ReplicationError::Lock(LockError::AlreadyClosed {
                path: PathBuf::from("/replica/write.lock"),
            }),
            ReplicationError::BadCommit {
                generation: 4,
                reason: "torn segments_4".into(),
            },
            ReplicationError::NotNewer {
                generation: 3,
                replica: 4,
            },
            ReplicationError::Interrupted {
                after: "copying _0.cfs".into(),
            },
        ];
        let all = all
            .into_iter()
            .map(|e| {
                let name = match &e {
                    ReplicationError::Io { .. } => "Io",
                    ReplicationError::Lock(_) => "Lock",
                    ReplicationError::BadCommit { .. } => "BadCommit",
                    ReplicationError::NotNewer { .. } => "NotNewer",
                    ReplicationError::Interrupted { .. } => "Interrupted",
                };
                let a = e.advice();
                (name, Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        super::assert_style(all, 5, false, &[]);
    }
}

#[cfg(feature = "redis")]
mod redis {
    use std::time::Duration;

    use crate::redis::{NoAnswer, RedisLockError};

    #[test]
    fn every_redis_lock_error_follows_the_style() {
        let key = || "locks:index".to_string();
        let no_answer = NoAnswer {
            instance: "127.0.0.1:6380".into(),
            reason: "connection refused".into(),
        };
        let all: Vec<RedisLockError> = vec![
            RedisLockError::Held {
                key: key(),
                granted: 1,
                needed: 2,
            },
            RedisLockError::TimedOut {
                key: key(),
                waited: Duration::from_secs(2),
                last: Box::new(RedisLockError::Held {
                    key: key(),
                    granted: 0,
                    needed: 1,
                }),
            },
            RedisLockError::Unavailable {
                key: key(),
                granted: 1,
                needed: 2,
                first: no_answer.to_string(),
                source: Some(no_answer.clone()),
            },
            RedisLockError::TooSlow {
                key: key(),
                elapsed: Duration::from_millis(380),
                ttl: Duration::from_millis(100),
            },
            RedisLockError::Expired {
                key: key(),
                overdue: Duration::from_millis(5),
            },
            RedisLockError::NotOwner {
                key: key(),
                confirmed: 1,
                needed: 2,
            },
            RedisLockError::ReleaseUnknown {
                key: key(),
                confirmed: 1,
                unknown: 2,
                needed: 2,
                first: no_answer.to_string(),
                source: Some(no_answer.clone()),
            },
            RedisLockError::BadTtl {
                key: key(),
                ttl: Duration::ZERO,
            },
            RedisLockError::NoInstances { key: key() },
            RedisLockError::FencingOnRedlock {
                key: key(),
                instances: 3,
            },
            RedisLockError::Refused {
                key: key(),
                code: "NOSCRIPT".into(),
                detail: "No matching script".into(),
            },
        ];
        let all = all
            .into_iter()
            .map(|e| {
                let name = match &e {
                    RedisLockError::Held { .. } => "Held",
                    RedisLockError::TimedOut { .. } => "TimedOut",
                    RedisLockError::Unavailable { .. } => "Unavailable",
                    RedisLockError::TooSlow { .. } => "TooSlow",
                    RedisLockError::Expired { .. } => "Expired",
                    RedisLockError::NotOwner { .. } => "NotOwner",
                    RedisLockError::ReleaseUnknown { .. } => "ReleaseUnknown",
                    RedisLockError::BadTtl { .. } => "BadTtl",
                    RedisLockError::NoInstances { .. } => "NoInstances",
                    RedisLockError::FencingOnRedlock { .. } => "FencingOnRedlock",
                    RedisLockError::Refused { .. } => "Refused",
                };
                let a = e.advice();
                (name, Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        super::assert_style(all, 11, true, &[]);
    }
}

#[cfg(feature = "etcd")]
mod etcd {
    use crate::etcd::{EtcdError, EtcdLockError, LostReason};

    #[test]
    fn every_etcd_lock_error_follows_the_style() {
        let key = || "locks/index/694d7a1b2c3d".to_string();
        let all: Vec<EtcdLockError> = vec![
            EtcdLockError::AlreadyLocked { key: key() },
            EtcdLockError::TimedOut { key: key() },
            EtcdLockError::LockLost {
                key: key(),
                reason: LostReason::KeyGone,
            },
            EtcdLockError::Etcd {
                key: key(),
                source: EtcdError::LeaseNotFound,
            },
        ];
        let all = all
            .into_iter()
            .map(|e| {
                let name = match &e {
                    EtcdLockError::AlreadyLocked { .. } => "AlreadyLocked",
                    EtcdLockError::TimedOut { .. } => "TimedOut",
                    EtcdLockError::LockLost { .. } => "LockLost",
                    EtcdLockError::Etcd { .. } => "Etcd",
                };
                let a = e.advice();
                (name, Box::new(e) as Box<dyn std::error::Error>, a)
            })
            .collect();
        super::assert_style(all, 4, true, &[]);
    }
}
