//! The stored painless scripts the recipes install (`POST _scripts/<id>`), and what each does
//! to a document, as painless would run it inside `_update`.

use std::fmt;

use super::{Owner, Source, Time, Token};

/// The stored painless scripts the recipes install with `POST _scripts/<id>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Script {
    /// `document-lock` (as written): throw unless the document's `process_id` is the caller's;
    /// then `noop`.
    DocumentLock { process_id: Owner },
    /// `rw-lock` (as written): throw if the document is exclusive; `lock_count++`.
    RwLock,
    /// `rw-unlock` (as written): `if (--lock_count == 0) ctx.op = 'delete'`.
    RwUnlock,
    /// `lease-acquire` (corrected): throw if another owner's lease has not expired at `now`;
    /// otherwise write the caller's `owner` and `expires` — also when the caller already owns
    /// the document (never a `noop`: see `docs/docstore.md`, finding 1).
    LeaseAcquire {
        owner: Owner,
        now: Time,
        expires: Time,
    },
    /// `lease-acquire-noop`: the deliberately broken first draft of `lease-acquire` — `noop`
    /// when the caller already owns the document, whether or not its lease has passed (the
    /// document lock's idiom). Only the `leased-noop` variant uses it.
    LeaseAcquireNoop {
        owner: Owner,
        now: Time,
        expires: Time,
    },
    /// `fenced-write` (corrected): throw if `token` is lower than the document's fence;
    /// otherwise record it as the fence (and merge the caller's patch into the data, which is
    /// not modelled).
    FencedWrite { token: Token },
    /// `lease-release` (the fixed `leased`): frees the lease and keeps the lock document
    /// (`{}`); sent with `if_seq_no`/`if_primary_term` = the holder's token, so only the
    /// holder of that grant frees it — and a `noop` unless the document's owner is `owner`:
    /// a re-created index repeats `_seq_no`s, so a holder of a lost document can carry the
    /// numbers of the new one (issue #35).
    LeaseRelease { owner: Owner },
    /// `lease-renew` (the fixed `leased`'s renewal, sent with `if_seq_no`/`if_primary_term`):
    /// throws unless the document's owner is `owner`; otherwise writes `expires`. Unlike
    /// `lease-acquire` it never takes a free document: a version equal by number from a
    /// re-created index must not hand a holder of the lost document the new one.
    LeaseRenew {
        owner: Owner,
        now: Time,
        expires: Time,
    },
    /// `fence-claim` (claim-at-acquire): throw if `token` is lower than the document's fence;
    /// otherwise record it as the fence, the data unchanged. Sent with an `upsert` that holds
    /// the fence, so a missing data document is created already fenced.
    FenceClaim { token: Token },
    /// `lease-install` (the fix's guarded re-install, issue #35): sent as a scripted upsert
    /// with an empty `upsert`. On a missing lock document (`ctx.op == 'create'`) it writes a
    /// lease of the reserved installer `owner` until `expires` (the server's `ctx._now` + the
    /// lease), so no client is granted before every lease granted before the loss has passed;
    /// on an existing document it is a `noop`: it never overwrites a lease, live or not.
    LeaseInstall { owner: Owner, expires: Time },
}

/// A script's verdict on one document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScriptOutcome {
    /// Index this `_source`.
    Index(Source),
    /// `ctx.op = 'noop'`.
    Noop,
    /// `ctx.op = 'delete'`.
    Delete,
    /// The script threw: 400, nothing changes.
    Fail(ScriptError),
}

/// Why a script threw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScriptError {
    /// `Debug.explain(message)`.
    Explain(&'static str),
    /// A runtime error on a missing field (`--null`, `null++`).
    NullPointer,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptError::Explain(m) => write!(f, "{m:?}"),
            ScriptError::NullPointer => f.write_str("NullPointerException"),
        }
    }
}

impl Script {
    /// The stored script's id.
    pub fn id(self) -> &'static str {
        match self {
            Script::DocumentLock { .. } => "document-lock",
            Script::RwLock => "rw-lock",
            Script::RwUnlock => "rw-unlock",
            Script::LeaseAcquire { .. } => "lease-acquire",
            Script::LeaseAcquireNoop { .. } => "lease-acquire-noop",
            Script::FencedWrite { .. } => "fenced-write",
            Script::FenceClaim { .. } => "fence-claim",
            Script::LeaseRelease { .. } => "lease-release",
            Script::LeaseRenew { .. } => "lease-renew",
            Script::LeaseInstall { .. } => "lease-install",
        }
    }

    /// The painless source installed under [`Script::id`]. The first three are the blog's,
    /// with its typographic quotes made ASCII.
    pub fn painless(self) -> &'static str {
        match self {
            Script::DocumentLock { .. } => {
                "if ( ctx._source.process_id != params.process_id ) { \
                 Debug.explain('already locked by other thread'); }  ctx.op = 'noop';"
            }
            Script::RwLock => {
                "if (ctx._source.lock_type == 'exclusive') { Debug.explain('one thread is \
                 writing data, the lock is exclusive now'); } ctx._source.lock_count++"
            }
            Script::RwUnlock => "if ( --ctx._source.lock_count == 0) { ctx.op = 'delete' }",
            Script::LeaseAcquire { .. } => {
                "long now = ctx._now; \
                 if (ctx._source.owner != null && ctx._source.owner != params.owner \
                 && ctx._source.expires != null && ctx._source.expires > now) { \
                 Debug.explain('lease held by another owner'); } \
                 ctx._source.owner = params.owner; ctx._source.expires = now + params.lease;"
            }
            Script::LeaseAcquireNoop { .. } => {
                "if (ctx._source.owner == params.owner) { ctx.op = 'noop'; } \
                 else if (ctx._source.expires != null && ctx._source.expires > params.now) { \
                 Debug.explain('lease held by another owner'); } \
                 else { ctx._source.owner = params.owner; ctx._source.expires = params.expires; }"
            }
            Script::FencedWrite { .. } => {
                "def f = ctx._source.fence; \
                 if (f != null && (params.primary_term < f.primary_term || \
                 (params.primary_term == f.primary_term && params.seq_no < f.seq_no))) { \
                 Debug.explain('stale fencing token'); } \
                 ctx._source.fence = ['primary_term': params.primary_term, 'seq_no': params.seq_no]; \
                 for (def e : params.patch.entrySet()) { ctx._source[e.getKey()] = e.getValue(); }"
            }
            Script::FenceClaim { .. } => {
                "def f = ctx._source.fence; \
                 if (f != null && (params.primary_term < f.primary_term || \
                 (params.primary_term == f.primary_term && params.seq_no < f.seq_no))) { \
                 Debug.explain('stale fencing token'); } \
                 ctx._source.fence = ['primary_term': params.primary_term, 'seq_no': params.seq_no];"
            }
            Script::LeaseRelease { .. } => {
                "if (ctx._source.owner == params.owner) { ctx._source.remove('owner'); \
                 ctx._source.remove('expires'); } else { ctx.op = 'noop'; }"
            }
            Script::LeaseRenew { .. } => {
                "if (ctx._source.owner != params.owner) { \
                 Debug.explain('lease held by another owner'); } \
                 ctx._source.expires = ctx._now + params.lease;"
            }
            Script::LeaseInstall { .. } => {
                "if (ctx.op == 'create') { ctx._source.owner = params.owner; \
                 ctx._source.expires = ctx._now + params.lease; } else { ctx.op = 'noop'; }"
            }
        }
    }

    /// Runs the script on an existing document's `_source`, as painless would. (A script
    /// applied to another recipe's document shape gets painless's failure or noop where
    /// painless gives one; where painless would merge fields into a foreign document, the
    /// result is the script's own shape. No scenario mixes recipes.)
    pub fn run(self, source: Source) -> ScriptOutcome {
        use ScriptOutcome::*;
        match self {
            Script::DocumentLock { process_id } => {
                if source.process_id() != Some(process_id) {
                    Fail(ScriptError::Explain("already locked by other thread"))
                } else {
                    Noop
                }
            }
            Script::RwLock => {
                if source.is_exclusive() {
                    return Fail(ScriptError::Explain(
                        "one thread is writing data, the lock is exclusive now",
                    ));
                }
                match source.lock_count() {
                    Some(n) => Index(Source::Shared { lock_count: n + 1 }),
                    None => Fail(ScriptError::NullPointer),
                }
            }
            Script::RwUnlock => match source.lock_count() {
                Some(1) => Delete,
                Some(n) => Index(Source::Shared {
                    lock_count: n.wrapping_sub(1),
                }),
                None => Fail(ScriptError::NullPointer),
            },
            Script::LeaseAcquire {
                owner,
                now,
                expires,
            } => match source {
                Source::Lease {
                    owner: o,
                    expires: e,
                } if o != owner && e > now => {
                    Fail(ScriptError::Explain("lease held by another owner"))
                }
                _ => Index(Source::Lease { owner, expires }),
            },
            Script::LeaseAcquireNoop {
                owner,
                now,
                expires,
            } => match source {
                Source::Lease { owner: o, .. } if o == owner => Noop,
                Source::Lease { expires: e, .. } if e > now => {
                    Fail(ScriptError::Explain("lease held by another owner"))
                }
                _ => Index(Source::Lease { owner, expires }),
            },
            Script::LeaseRelease { owner } => match source.owner() {
                Some(o) if o == owner => Index(Source::Empty),
                _ => Noop,
            },
            Script::LeaseRenew { owner, expires, .. } => match source.owner() {
                Some(o) if o == owner => Index(Source::Lease { owner, expires }),
                _ => Fail(ScriptError::Explain("lease held by another owner")),
            },
            // An existing document is never touched (the create case is the upsert's).
            Script::LeaseInstall { .. } => Noop,
            Script::FencedWrite { token } | Script::FenceClaim { token } => match source.fence() {
                Some(fence) if token < fence => Fail(ScriptError::Explain("stale fencing token")),
                _ => Index(Source::Data { fence: Some(token) }),
            },
        }
    }
}
