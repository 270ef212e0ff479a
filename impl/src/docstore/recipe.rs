//! The recipe as data: the step table (which request comes next at each program counter) and
//! what each step sends. The same table as the model's (`lockwright_model::docstore::next`;
//! the checks compare the two cell by cell), so the client and the model cannot disagree about
//! the order of the requests.
//!
//! Production has one recipe, [`Recipe::Leased`] (the model's fixed `leased`), with
//! [`Writes::Fenced`] writes, claimed at acquire ([`Writes::FencedClaim`], through
//! [`crate::docstore::LeaseGuard::claim`]). The recipes of the blog as written (`global`,
//! `document`, `read-write`), the broken first draft of the corrected one (`leased-noop`), the
//! corrected one before its fix against the store's own faults (`leased-upsert`) and unfenced
//! writes exist only with the test-only `defects` feature (`Defect`), so that the checks can
//! show they catch each of them.

use serde_json::{json, Value};

use super::scripts;
use super::store::{DocStore, StoreError, StoredScript, Token, Written};

/// A lock recipe (the model's `Variant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Recipe {
    /// The corrected recipe, fixed against the store's own faults (`docs/docstore.md` §6):
    /// the lock document is installed once and never deleted; acquire is `lease-acquire`
    /// without `upsert` (a missing document is an error, never a grant); release is a
    /// conditional update to a free lease (`lease-release` with the token as
    /// `if_seq_no`/`if_primary_term`); after its claim the holder reads the lock document back
    /// and goes on only if it still carries its token; a session's read checks the fence is
    /// the holder's own token; each data write is conditioned on the session's read.
    Leased,
    /// The corrected recipe before that fix: `lease-acquire` with an `upsert` (a missing lock
    /// document is created: a grant), release by compare-and-delete. Test-only.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    LeasedUpsert,
    /// As written: `PUT <index>/_create/global {}`; release `DELETE`. Test-only.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    Global,
    /// As written: `_update` with `upsert {process_id}` and `document-lock`; release
    /// `DELETE`. Test-only.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    Document,
    /// As written: readers upsert `{shared, 1}` or run `rw-lock` and release with
    /// `rw-unlock`; the writer `_create`s `{exclusive}` and releases with `DELETE`. Test-only.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    ReadWrite,
    /// The broken first draft of `leased`: `lease-acquire-noop`, a `noop` for the current
    /// owner even after its lease passed. Test-only.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    LeasedNoop,
}

impl Recipe {
    /// The model's name (`leased`, `global`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Recipe::Leased => "leased",
            #[cfg(feature = "defects")]
            Recipe::LeasedUpsert => "leased-upsert",
            #[cfg(feature = "defects")]
            Recipe::Global => "global",
            #[cfg(feature = "defects")]
            Recipe::Document => "document",
            #[cfg(feature = "defects")]
            Recipe::ReadWrite => "read-write",
            #[cfg(feature = "defects")]
            Recipe::LeasedNoop => "leased-noop",
        }
    }

    /// Whether the recipe is a lease (a clock read before each write).
    pub fn leased(self) -> bool {
        match self {
            Recipe::Leased => true,
            #[cfg(feature = "defects")]
            Recipe::LeasedUpsert | Recipe::LeasedNoop => true,
            #[cfg(feature = "defects")]
            _ => false,
        }
    }

    /// Whether the recipe is the fix of `docs/docstore.md` §6 (the model's
    /// `installs_lock_once`, `verifies_grant`, `conditions_writes`, `checks_fence_on_read`:
    /// the client has all four pieces or none).
    pub fn fixed(self) -> bool {
        self == Recipe::Leased
    }
}

/// How the holder writes the protected document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Writes {
    /// The `fenced-write` script with the holder's token: the data document refuses a token
    /// lower than the highest it accepted. A token the document has not seen yet is accepted,
    /// so an older holder's late write can land between a newer holder's read and its write
    /// (a lost update: `docs/docstore.md`).
    Fenced,
    /// `Fenced`, and right after the grant, before its first read, the holder claims the data
    /// document with its token (the `fence-claim` script with an `upsert`): from then on the
    /// document refuses every older token. [`crate::docstore::LeaseGuard::claim`].
    FencedClaim,
    /// `{"doc": {"name": ..}}`, accepted whatever the token (the blog's). Test-only.
    #[cfg(feature = "defects")]
    #[doc(hidden)]
    Unfenced,
}

impl Writes {
    /// Whether writes carry the holder's token (`Fenced`, `FencedClaim`).
    pub fn fenced(self) -> bool {
        matches!(self, Writes::Fenced | Writes::FencedClaim)
    }
}

/// What a client does with the lock (only the `read-write` recipe has readers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Takes the exclusive lock and writes the protected document.
    Writer,
    /// Takes the shared lock of the read/write recipe and only reads.
    Reader,
}

/// A deliberately broken variant of the client, one per recipe the model shows broken
/// (`docs/docstore.md`, section 5): [`crate::docstore::LeaseLock::with_defect`]. Test-only;
/// never enable the `defects` feature in production.
#[cfg(feature = "defects")]
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Defect {
    /// The blog's global lock, with its unfenced writes (model `global × unfenced`).
    Global,
    /// The blog's document lock, with its unfenced writes (model `document × unfenced`).
    Document,
    /// The blog's read/write lock in this role (model `read-write × unfenced`).
    ReadWrite(Role),
    /// The broken first draft of the lease script (model `leased-noop × fenced`).
    LeasedNoop,
    /// The corrected recipe with the blog's unfenced writes (model `leased × unfenced`).
    UnfencedWrites,
    /// The corrected recipe before the fix against the store's own faults (model
    /// `leased-upsert`, with the workload's writes).
    LeasedUpsert,
    /// The fix without the read-back of the grant (model `leased-fix-unverified`).
    LeasedFixUnverified,
    /// The fix with data writes not conditioned on the session's read (model
    /// `leased-fix-unconditional`).
    LeasedFixUnconditional,
    /// The fix without the fence check at each session's read (model
    /// `leased-fix-unchecked`).
    LeasedFixUnchecked,
}

/// Where a client is in its loop (the model's `Pc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pc {
    /// Not holding: the next step acquires.
    Idle = 0,
    /// An acquire got no answer: the next step sends it again.
    Retrying = 1,
    /// `fenced-claim`: the acquire succeeded; the next step claims the data document.
    Claiming = 2,
    /// The acquire succeeded (and, `fenced-claim`, the claim): the next step reads the data
    /// document or releases.
    Holding = 3,
    /// The data document was read: the next step writes (leased: checks the lease first).
    Computing = 4,
    /// Leased: the lease check passed; the next step is the write.
    Writing = 5,
    /// A release got no answer, or a fenced write or claim was refused: the next step
    /// releases.
    Releasing = 6,
    /// The fixed `leased`: the claim (or, without one, the acquire) succeeded; the next step
    /// reads the lock document back.
    Verifying = 7,
}

/// A client step: one request (or, `CheckLease`, one clock read). Names as in the model.
// The as-written recipes' steps are made only with `defects` (those recipes are test-only).
#[cfg_attr(not(feature = "defects"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// `PUT <index>/_create/<id>`.
    CreateLock,
    /// `POST <index>/_update/<id>` with an `upsert` and the acquire script.
    UpsertLock,
    /// `POST <index>/_update/<id>` with `rw-unlock`.
    UpdateUnlock,
    /// `DELETE <index>/_doc/<id>`.
    DeleteLock,
    /// `DELETE <index>/_doc/<id>?if_seq_no=..&if_primary_term=..`.
    CompareAndDelete,
    /// `POST <index>/_update/<id>` with `lease-acquire` and no `upsert` (the fixed `leased`).
    UpdateLock,
    /// `POST <index>/_update/<id>?if_seq_no=..&if_primary_term=..` with `lease-release`.
    ReleaseLease,
    /// `GET <index>/_doc/<id>` of the lock document after the claim: go on only if it still
    /// carries the token.
    VerifyLock,
    /// Read the clock: the lease check passes if now < deadline.
    CheckLease,
    /// `POST <data index>/_update/<data id>` with `fence-claim` and an `upsert` (claim-at-acquire).
    ClaimData,
    /// `GET <data index>/_doc/<data id>`: the session's read.
    ReadData,
    /// `POST <data index>/_update/<data id>`, fenced or not.
    WriteData,
}

impl Step {
    /// Whether the step acquires.
    pub fn acquires(self) -> bool {
        matches!(self, Step::CreateLock | Step::UpsertLock | Step::UpdateLock)
    }

    /// Whether the step releases.
    pub fn releases(self) -> bool {
        matches!(
            self,
            Step::UpdateUnlock | Step::DeleteLock | Step::CompareAndDelete | Step::ReleaseLease
        )
    }
}

/// The step table: which steps a client of `role` may take at `pc`. The model's
/// `docstore::next`, cell for cell. A writer is at `Claiming` only when it claims.
///
/// | recipe / role | `Idle`, `Retrying` | `Claiming` | `Holding` | `Computing` | `Writing` | `Releasing` |
/// |---|---|---|---|---|---|---|
/// | `global` | `CreateLock` | `ClaimData` | `ReadData`, `DeleteLock` | `WriteData` | — | `DeleteLock` |
/// | `document` | `UpsertLock` | `ClaimData` | `ReadData`, `DeleteLock` | `WriteData` | — | `DeleteLock` |
/// | `read-write`, reader | `UpsertLock` | — | `UpdateUnlock` | — | — | `UpdateUnlock` |
/// | `read-write`, writer | `CreateLock` | `ClaimData` | `ReadData`, `DeleteLock` | `WriteData` | — | `DeleteLock` |
/// | `leased` | `UpdateLock` | `ClaimData` | `ReadData`, `ReleaseLease` | `CheckLease` | `WriteData` | `ReleaseLease` |
/// | `leased-upsert`, `leased-noop` | `UpsertLock` | `ClaimData` | `ReadData`, `CompareAndDelete` | `CheckLease` | `WriteData` | `CompareAndDelete` |
///
/// A last column, `Verifying`, is `VerifyLock` for `leased` and empty elsewhere.
pub fn next(recipe: Recipe, role: Role, pc: Pc) -> &'static [Step] {
    use Step::*;
    // Columns: Idle, Retrying, Claiming, Holding, Computing, Writing, Releasing, Verifying.
    let row: [&'static [Step]; 8] = match (recipe, role) {
        (Recipe::Leased, _) => [
            &[UpdateLock],
            &[UpdateLock],
            &[ClaimData],
            &[ReadData, ReleaseLease],
            &[CheckLease],
            &[WriteData],
            &[ReleaseLease],
            &[VerifyLock],
        ],
        #[cfg(feature = "defects")]
        (Recipe::LeasedUpsert | Recipe::LeasedNoop, _) => [
            &[UpsertLock],
            &[UpsertLock],
            &[ClaimData],
            &[ReadData, CompareAndDelete],
            &[CheckLease],
            &[WriteData],
            &[CompareAndDelete],
            &[],
        ],
        #[cfg(feature = "defects")]
        (Recipe::Global, _) | (Recipe::ReadWrite, Role::Writer) => [
            &[CreateLock],
            &[CreateLock],
            &[ClaimData],
            &[ReadData, DeleteLock],
            &[WriteData],
            &[],
            &[DeleteLock],
            &[],
        ],
        #[cfg(feature = "defects")]
        (Recipe::Document, _) => [
            &[UpsertLock],
            &[UpsertLock],
            &[ClaimData],
            &[ReadData, DeleteLock],
            &[WriteData],
            &[],
            &[DeleteLock],
            &[],
        ],
        #[cfg(feature = "defects")]
        (Recipe::ReadWrite, Role::Reader) => [
            &[UpsertLock],
            &[UpsertLock],
            &[],
            &[UpdateUnlock],
            &[],
            &[],
            &[UpdateUnlock],
            &[],
        ],
    };
    row[pc as usize]
}

/// The one step of `next(recipe, role, pc)` that `wanted` accepts, if any.
pub fn step_where(
    recipe: Recipe,
    role: Role,
    pc: Pc,
    wanted: impl Fn(Step) -> bool,
) -> Option<Step> {
    next(recipe, role, pc).iter().copied().find(|&s| wanted(s))
}

/// One request, as a client sends it: each variant is one [`DocStore`] method, its fields that
/// method's arguments (`index`, `id` of the document; the body's parts).
#[derive(Clone, Debug, PartialEq)]
// The fields are the DocStore methods' arguments, named alike; `Create` is the test-only
// as-written global lock's, made only with `defects`.
#[allow(missing_docs)]
#[cfg_attr(not(feature = "defects"), allow(dead_code))]
pub enum Request<'a> {
    Create {
        index: &'a str,
        id: &'a str,
        source: Value,
    },
    Upsert {
        index: &'a str,
        id: &'a str,
        script: StoredScript,
        upsert: Value,
    },
    Update {
        index: &'a str,
        id: &'a str,
        script: StoredScript,
    },
    UpdateIf {
        index: &'a str,
        id: &'a str,
        script: StoredScript,
        token: Token,
    },
    UpdateDoc {
        index: &'a str,
        id: &'a str,
        doc: Value,
    },
    DeleteIfSeqNo {
        index: &'a str,
        id: &'a str,
        token: Token,
    },
    Delete {
        index: &'a str,
        id: &'a str,
    },
}

impl Request<'_> {
    /// Sends the request through its one interface method.
    ///
    /// # Errors
    /// The store's.
    pub fn send<S: DocStore + ?Sized>(&self, store: &S) -> Result<Written, StoreError> {
        match self {
            Request::Create { index, id, source } => store.create(index, id, source),
            Request::Upsert {
                index,
                id,
                script,
                upsert,
            } => store.upsert_with_script(index, id, script, upsert),
            Request::Update { index, id, script } => store.update_with_script(index, id, script),
            Request::UpdateIf {
                index,
                id,
                script,
                token,
            } => store.update_with_script_if(index, id, script, *token),
            Request::UpdateDoc { index, id, doc } => store.update_doc(index, id, doc),
            Request::DeleteIfSeqNo { index, id, token } => {
                store.delete_if_seq_no(index, id, *token)
            }
            Request::Delete { index, id } => store.delete(index, id),
        }
    }
}

/// The stored scripts a recipe needs (`(id, painless source)`), installed once with
/// `put_script` before any client runs.
pub fn scripts_of(recipe: Recipe, writes: Writes) -> Vec<(&'static str, &'static str)> {
    let mut v = Vec::new();
    match recipe {
        Recipe::Leased => {
            v.push(("lease-acquire", scripts::LEASE_ACQUIRE));
            v.push(("lease-release", scripts::LEASE_RELEASE));
        }
        #[cfg(feature = "defects")]
        Recipe::LeasedUpsert => v.push(("lease-acquire", scripts::LEASE_ACQUIRE)),
        #[cfg(feature = "defects")]
        Recipe::LeasedNoop => v.push(("lease-acquire-noop", scripts::LEASE_ACQUIRE_NOOP)),
        #[cfg(feature = "defects")]
        Recipe::Document => v.push(("document-lock", scripts::DOCUMENT_LOCK)),
        #[cfg(feature = "defects")]
        Recipe::ReadWrite => {
            v.push(("rw-lock", scripts::RW_LOCK));
            v.push(("rw-unlock", scripts::RW_UNLOCK));
        }
        #[cfg(feature = "defects")]
        Recipe::Global => {}
    }
    if writes.fenced() {
        v.push(("fenced-write", scripts::FENCED_WRITE));
        v.push(("fence-claim", scripts::FENCE_CLAIM));
    }
    v
}

/// The claim of claim-at-acquire: `fence-claim` with `token`, and an `upsert` holding the
/// fence, so that a missing data document is created already fenced (deleting and
/// re-creating the document cannot erase the fence).
pub fn claim_request<'a>(index: &'a str, id: &'a str, token: Token) -> Request<'a> {
    let fence = json!({"primary_term": token.primary_term, "seq_no": token.seq_no});
    Request::Upsert {
        index,
        id,
        script: StoredScript {
            id: "fence-claim",
            params: fence.clone(),
            scripted_upsert: false,
        },
        upsert: json!({ "fence": fence }),
    }
}

/// The acquire request of `recipe` for `role`: `owner` is the caller's owner id, `now` the
/// clock read just before sending (leased), `expires` = `now` + lease.
pub fn acquire_request<'a>(
    recipe: Recipe,
    role: Role,
    index: &'a str,
    id: &'a str,
    owner: &str,
    now: u64,
    expires: u64,
) -> Request<'a> {
    let _ = role;
    match recipe {
        // The fix: no `upsert`: a missing lock document is a 404, never a grant.
        Recipe::Leased => Request::Update {
            index,
            id,
            script: StoredScript {
                id: "lease-acquire",
                params: json!({"owner": owner, "lease": expires.saturating_sub(now)}),
                scripted_upsert: false,
            },
        },
        #[cfg(feature = "defects")]
        Recipe::LeasedUpsert => Request::Upsert {
            index,
            id,
            // The server's clock decides (`ctx._now` in the script, also for the upsert):
            // only the lease's length goes in the request, never the client's time.
            script: StoredScript {
                id: "lease-acquire",
                params: json!({"owner": owner, "lease": expires.saturating_sub(now)}),
                scripted_upsert: true,
            },
            upsert: json!({}),
        },
        #[cfg(feature = "defects")]
        Recipe::LeasedNoop => Request::Upsert {
            index,
            id,
            script: StoredScript {
                id: "lease-acquire-noop",
                params: json!({"owner": owner, "now": now, "expires": expires}),
                scripted_upsert: false,
            },
            upsert: json!({"owner": owner, "expires": expires}),
        },
        #[cfg(feature = "defects")]
        Recipe::Global => Request::Create {
            index,
            id,
            source: json!({}),
        },
        #[cfg(feature = "defects")]
        Recipe::Document => Request::Upsert {
            index,
            id,
            script: StoredScript {
                id: "document-lock",
                params: json!({"process_id": owner}),
                scripted_upsert: false,
            },
            upsert: json!({"process_id": owner}),
        },
        #[cfg(feature = "defects")]
        Recipe::ReadWrite => match role {
            Role::Reader => Request::Upsert {
                index,
                id,
                script: StoredScript {
                    id: "rw-lock",
                    params: json!({}),
                    scripted_upsert: false,
                },
                upsert: json!({"lock_type": "shared", "lock_count": 1}),
            },
            Role::Writer => Request::Create {
                index,
                id,
                source: json!({"lock_type": "exclusive"}),
            },
        },
    }
}

/// The release request for `step` (`token`: the acquiring write's, for compare-and-delete).
pub fn release_request<'a>(
    step: Step,
    index: &'a str,
    id: &'a str,
    token: Option<Token>,
) -> Request<'a> {
    match (step, token) {
        (Step::CompareAndDelete, Some(token)) => Request::DeleteIfSeqNo { index, id, token },
        (Step::ReleaseLease, Some(token)) => Request::UpdateIf {
            index,
            id,
            script: StoredScript {
                id: "lease-release",
                params: json!({}),
                scripted_upsert: false,
            },
            token,
        },
        (Step::UpdateUnlock, _) => Request::Update {
            index,
            id,
            script: StoredScript {
                id: "rw-unlock",
                params: json!({}),
                scripted_upsert: false,
            },
        },
        _ => Request::Delete { index, id },
    }
}

/// The data write of `patch` (a JSON object): fenced with `token`, or (defect) the blog's
/// partial-document update of it; the
/// fixed `leased` conditions it on `read`, the `_seq_no`/`_primary_term` the session's read
/// returned (`if_seq_no`/`if_primary_term`).
pub fn write_request<'a>(
    writes: Writes,
    index: &'a str,
    id: &'a str,
    token: Option<Token>,
    read: Option<Token>,
    patch: &Value,
) -> Request<'a> {
    match (writes, token) {
        (Writes::Fenced | Writes::FencedClaim, Some(t)) => {
            let script = StoredScript {
                id: "fenced-write",
                params: json!({
                    "primary_term": t.primary_term,
                    "seq_no": t.seq_no,
                    "patch": patch,
                }),
                scripted_upsert: false,
            };
            match read {
                Some(token) => Request::UpdateIf {
                    index,
                    id,
                    script,
                    token,
                },
                None => Request::Update { index, id, script },
            }
        }
        _ => Request::UpdateDoc {
            index,
            id,
            doc: patch.clone(),
        },
    }
}

/// Whether a client of `role` keeps its acquiring write's token (the model's `keeps_token`):
/// as its fencing token and (leased) its compare-and-delete guard.
pub fn keeps_token(recipe: Recipe, writes: Writes, role: Role) -> bool {
    recipe.leased() || (writes.fenced() && role == Role::Writer)
}
