//! Every error zookeeper-client 0.11 can answer a request with, classified: one table, each row
//! driven through the production mapping (`coordination.rs`'s `map_err`) and the recipe's own
//! predicate ([`CoordError::outcome_unknown`]).
//!
//! The classes are what the recipe does with an error, the same for every request it sends
//! (`create`, `getChildren`, `getData` with a watch, `exists`, `delete`, `multi`, and the lock
//! directory's `create`): every `match` on a step's answer in `internals/` and `mutex.rs` reads
//! `SESSIONEXPIRED` first (learn: open a new session), then `outcome_unknown()` (retry the
//! request; after a create, search for the node first), then the request's own definite answers,
//! and turns anything else into a hard error. What each definite answer means for each request
//! is the second table, rendered from [`ANSWERS`].
//!
//! The oracle for the unsafe direction is the client's own word, not ours: zookeeper-client's
//! `Error::has_no_data_change` (src/error.rs) lists the errors after which the server changed
//! nothing, and `Error::is_terminated` those that end the session. An error on neither list may
//! have been applied, so it must read as "outcome unknown" (or "session gone"): reading it as a
//! hard error after a `create` leaves an orphan lock node that holds the lock for as long as
//! the session lives. This table found two: `UnmarshalError` and `UnexpectedError` (a reply the
//! client could not decode, e.g. a sequential create's path without its number) were hard
//! errors; they are now outcome unknown.
//!
//! Flipped by hand (each made a row fail, then was reverted): `Timeout` mapped to `Rejected`
//! (its row and the client-oracle test fail); `AuthFailed` to `Rejected` (its row fails);
//! `AuthFailed` and `ClientClosed` back to `SessionExpired` (issue #33: both rows fail);
//! `NotEmpty` folded into `Rejected` (its row fails); `outcome_unknown` answering false for
//! everything (every "outcome unknown" row fails).

// A test: it reads (and on request rewrites) docs/zookeeper-client.md.
#![allow(clippy::disallowed_methods)]

use zookeeper_client::Error as E;

use super::coordination::map_err;
use crate::zk::coord::CoordError;

/// What the recipe does with an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// The request may or may not have been applied: retry it (after a lost `create`, search
    /// for the node by its protection id first).
    OutcomeUnknown,
    /// The session is gone, and everything it created with it: open a new session.
    SessionGone,
    /// The server's definite answer: nothing was applied; what it means depends on the request
    /// (the second table).
    Answer,
    /// Nothing was applied and trying again will not help: the step fails with the error.
    Hard,
    /// The session ended and a new one would end the same way (authentication refused, the
    /// handle closed): the step fails with its own error, never read as an expiry, so the
    /// recipe opens no sessions in a loop.
    Ended,
    /// No server reachable: the step fails (`ZkLockError::Unreachable`); the session is lost
    /// with it.
    Unreachable,
}

/// One error of the client.
struct Row {
    name: &'static str,
    error: E,
    /// The `CoordError` it must become (its variant name).
    coord: &'static str,
    class: Class,
}

fn rows() -> Vec<Row> {
    use Class::*;
    let r = |name, error, coord, class| Row {
        name,
        error,
        coord,
        class,
    };
    vec![
        r(
            "ConnectionLoss",
            E::ConnectionLoss,
            "ConnectionLoss",
            OutcomeUnknown,
        ),
        r("Timeout", E::Timeout, "ConnectionLoss", OutcomeUnknown),
        r(
            "SessionMoved",
            E::SessionMoved,
            "ConnectionLoss",
            OutcomeUnknown,
        ),
        r(
            "UnmarshalError",
            E::UnmarshalError {
                entity: "create response",
                reason: &"truncated",
            },
            "ConnectionLoss",
            OutcomeUnknown,
        ),
        r(
            "UnexpectedError",
            E::UnexpectedError("sequential node get no i32 path".into()),
            "ConnectionLoss",
            OutcomeUnknown,
        ),
        r(
            "SessionExpired",
            E::SessionExpired,
            "SessionExpired",
            SessionGone,
        ),
        r("ClientClosed", E::ClientClosed, "ClientClosed", Ended),
        r("AuthFailed", E::AuthFailed, "AuthFailed", Ended),
        r("NoHosts", E::NoHosts, "Unreachable", Unreachable),
        r("NoNode", E::NoNode, "NoNode", Answer),
        r("NodeExists", E::NodeExists, "NodeExists", Answer),
        r("BadVersion", E::BadVersion, "BadVersion", Answer),
        r("NotEmpty", E::NotEmpty, "NotEmpty", Answer),
        r("NoAuth", E::NoAuth, "Rejected", Hard),
        r("InvalidAcl", E::InvalidAcl, "Rejected", Hard),
        r(
            "NoChildrenForEphemerals",
            E::NoChildrenForEphemerals,
            "Rejected",
            Hard,
        ),
        r("NotReadOnly", E::NotReadOnly, "Rejected", Hard),
        r("NoWatcher", E::NoWatcher, "Rejected", Hard),
        r("QuotaExceeded", E::QuotaExceeded, "Rejected", Hard),
        r("Throttled", E::Throttled, "Rejected", Hard),
        r("MarshallingError", E::MarshallingError, "Rejected", Hard),
        r("Unimplemented", E::Unimplemented, "Rejected", Hard),
        r("ReconfigDisabled", E::ReconfigDisabled, "Rejected", Hard),
        r(
            "UnexpectedErrorCode",
            E::UnexpectedErrorCode(-200),
            "Rejected",
            Hard,
        ),
        r(
            "BadArguments",
            E::BadArguments(&"bad path"),
            "Rejected",
            Hard,
        ),
        r(
            "RuntimeInconsistent",
            E::RuntimeInconsistent,
            "Rejected",
            Hard,
        ),
    ]
}

/// zookeeper-client 0.11.2's `Error::has_no_data_change` and `Error::is_terminated`, by name
/// (both are crate-private there). `BadArguments` and `RuntimeInconsistent` are on neither list
/// but never reach a server: the client raises them before sending (bad create options) or in
/// its own lock recipe, which lockwright does not use.
const NO_DATA_CHANGE: &[&str] = &[
    "NoNode",
    "NoAuth",
    "BadVersion",
    "NoChildrenForEphemerals",
    "NodeExists",
    "NotEmpty",
    "InvalidAcl",
    "AuthFailed",
    "SessionMoved",
    "NotReadOnly",
    "NoWatcher",
    "QuotaExceeded",
    "Throttled",
    "MarshallingError",
    "Unimplemented",
    "ReconfigDisabled",
    "UnexpectedErrorCode",
    "SessionExpired",
    "ClientClosed",
];
const TERMINATED: &[&str] = &["NoHosts", "SessionExpired", "AuthFailed", "ClientClosed"];
const NEVER_SENT: &[&str] = &["BadArguments", "RuntimeInconsistent"];

/// `zookeeper_client::Error::Custom` (an I/O error on the connection, wrapped by the client)
/// has no public constructor, so no row can build it. `map_err` reads it as `ConnectionLoss`
/// (outcome unknown); the docs table lists it with this note.
const UNBUILDABLE: &str = "Custom";

/// The recipe's reading of a mapped error, by the same tests its step handlers make.
fn class_of(e: &CoordError) -> Class {
    match e {
        CoordError::SessionExpired => Class::SessionGone,
        CoordError::AuthFailed { .. } | CoordError::ClientClosed => Class::Ended,
        e if e.outcome_unknown() => Class::OutcomeUnknown,
        CoordError::NoNode
        | CoordError::NodeExists
        | CoordError::BadVersion
        | CoordError::NotEmpty => Class::Answer,
        CoordError::Unreachable { .. } => Class::Unreachable,
        _ => Class::Hard,
    }
}

fn variant(e: &CoordError) -> String {
    let d = format!("{e:?}");
    d.split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// What each request makes of "outcome unknown" and of its definite answers; any answer not
/// listed is a hard error for that request. Read off `internals/attempt.rs`,
/// `internals/releasing.rs` and `mutex.rs`.
const ANSWERS: &[(&str, &str, &str)] = &[
    (
        "`create` (lock node)",
        "search for our node by its protection id, then create again if it is not there",
        "`NoNode`: the lock directory is missing: make it (containers), then create again",
    ),
    (
        "`getChildren` (list)",
        "list again",
        "`NoNode`: the directory is gone, so no children (our node is gone too)",
    ),
    (
        "`getChildren` + `exists` (protected search)",
        "pause, then search again",
        "`NoNode` of the directory: no candidates, so create again; a candidate gone before its `exists`: left out",
    ),
    (
        "`getData` + watch (predecessor)",
        "pause, then watch again",
        "`NoNode`: the predecessor is gone already: list again",
    ),
    (
        "`exists` (`ensure_valid`)",
        "the lock reads as lost (`Suspended`, not final) until an answer comes",
        "absent is an answer, not an error: the lock is lost (`NodeDeleted`)",
    ),
    (
        "`delete` (release, clean-up)",
        "delete again (in the background while the session lives)",
        "`NoNode`: already deleted (released)",
    ),
    (
        "`multi` (guarded write)",
        "returned to the caller (`ZkLockError::Zk`): the write may or may not be applied",
        "`NoNode` / `BadVersion` at the lock check: the lock is lost (`NodeDeleted` / `NodeReplaced`), nothing written; at a caller's operation: `WriteFailed`, nothing written",
    ),
    (
        "`create` (lock directory)",
        "pause, then create the lock node again",
        "`NodeExists`: there already; `Unimplemented` (server < 3.5, no containers): create it persistent",
    ),
];

fn class_text(c: Class) -> &'static str {
    match c {
        Class::OutcomeUnknown => "outcome unknown: per request (below)",
        Class::SessionGone => "session gone: open a new session; its nodes went with it",
        Class::Answer => "definitely not applied: the request's answer (below)",
        Class::Hard => "definitely not applied: hard error (`ZkLockError::Zk`)",
        Class::Ended => {
            "the session ended and a new one would too: the step fails with its own error (`ZkLockError::AuthFailed` / `ClientClosed`), no new session"
        }
        Class::Unreachable => "hard error (`ZkLockError::Unreachable`); the session is lost",
    }
}

fn render() -> String {
    let mut out = String::from(
        "| zookeeper-client `Error` | `CoordError` | what the recipe does, for every request |\n|---|---|---|\n",
    );
    for r in rows() {
        out.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            r.name,
            r.coord,
            class_text(r.class)
        ));
    }
    out.push_str(&format!(
        "| `{UNBUILDABLE}`† | `ConnectionLoss` | {} |\n",
        class_text(Class::OutcomeUnknown)
    ));
    out.push_str("\n| request | outcome unknown | definite answers |\n|---|---|---|\n");
    for (req, unknown, answers) in ANSWERS {
        out.push_str(&format!("| {req} | {unknown} | {answers} |\n"));
    }
    out
}

const BEGIN: &str = "<!-- error table: generated from impl/src/zk/client/error_table.rs -->\n";
const END: &str = "<!-- end of error table -->\n";

#[test]
fn every_client_error_maps_to_its_row() {
    let mut failures = Vec::new();
    for r in rows() {
        let mapped = map_err(r.error.clone());
        let (coord, class) = (variant(&mapped), class_of(&mapped));
        if coord != r.coord || class != r.class {
            failures.push(format!(
                "{}: {coord} / {class:?}, the table says {} / {:?}",
                r.name, r.coord, r.class
            ));
        }
    }
    assert!(failures.is_empty(), "rows differ:\n{}", failures.join("\n"));
    // Pinned: the 26 variants one can build, plus `Custom`.
    assert_eq!(rows().len() + 1, 27);
}

/// An error the client does not promise left the data unchanged is never a definite answer
/// or a hard error: it reads as outcome unknown, or as the session's end.
#[test]
fn no_error_that_may_have_been_applied_reads_as_not_applied() {
    for r in rows() {
        let class = class_of(&map_err(r.error.clone()));
        if TERMINATED.contains(&r.name) {
            assert!(
                matches!(
                    class,
                    Class::SessionGone | Class::Ended | Class::Unreachable
                ),
                "{}: the session ends, read as {class:?}",
                r.name
            );
        } else if !NO_DATA_CHANGE.contains(&r.name) && !NEVER_SENT.contains(&r.name) {
            assert_eq!(
                class,
                Class::OutcomeUnknown,
                "{}: may have been applied",
                r.name
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(lockwright_repository),
    ignore = "the docs pages are not in the published package; run in the repository"
)]
fn the_docs_table_is_this_table() {
    crate::doc_table::assert_section_is("docs/zookeeper-client.md", BEGIN, END, &render());
}
