//! The recipe as data: the step table (which request comes next at each program counter), the
//! stored scripts and the acquire request, in one [`Rules`] table that the client code
//! interprets. The same table as the model's (`lockwright_model::docstore::next`; the checks
//! compare the two cell by cell), so the client and the model cannot disagree about the order
//! of the requests.
//!
//! Production has one recipe, [`Recipe::Leased`] (the model's fixed `leased`, the table
//! [`LEASED`]), with `Writes::Fenced` writes, claimed at acquire (`Writes::FencedClaim`,
//! through [`crate::docstore::LeaseGuard::claim`]). The recipes of the blog as written
//! (`global`, `document`, `read-write`), the broken first draft of the corrected one
//! (`leased-noop`), the corrected one before its fix against the store's own faults
//! (`leased-upsert`), unfenced writes and the fix with one piece left out are other tables of
//! the same shape, in the test kit (`lockwright_testkit::docstore::recipes`), so that the
//! checks can show they catch each of them: a client runs one through the test-only
//! `crate::docstore::testing` (feature `test-util`), which is the only test hook here.

use serde_json::{json, Value};

use super::scripts::{self, LEASE_HELD};
use super::store::{DocStore, StoreError, StoredScript, Token, Written};

/// A lock recipe (the model's `Variant`). Production has one; the broken ones of
/// `docs/docstore.md` are test tables (`Rules`) in the test kit.
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
}

impl Recipe {
    /// The recipe's table.
    pub(crate) fn rules(self) -> &'static Rules {
        match self {
            Recipe::Leased => &LEASED,
        }
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

/// One row of the step table: the steps a client may take at each [`Pc`], in the order
/// `Idle`, `Retrying`, `Claiming`, `Holding`, `Computing`, `Writing`, `Releasing`,
/// `Verifying`.
pub type Row = [&'static [Step]; 8];

/// The acquire request of a recipe: `(role, index, id, owner, now, expires)` — `owner` the
/// caller's owner id, `now` the clock read just before sending (leased), `expires` = `now` +
/// lease.
pub type AcquireFn = for<'a> fn(Role, &'a str, &'a str, &str, u64, u64) -> Request<'a>;

/// A recipe as data: everything the client code asks of its recipe. The production table is
/// [`LEASED`]; the test kit holds the broken ones (same shape) and hands one to a client through
/// the test-only `testing::with_rules`.
// Read only through the interpreter in this crate; fields public for the test kit's tables.
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
#[derive(Debug)]
pub struct Rules {
    /// The model's name (`leased`, `global`, ...).
    pub name: &'static str,
    /// A lease: a clock read at the acquire (the deadline) and before each write.
    pub leased: bool,
    /// The step table of a writer ([`Row`]): the model's `docstore::next`, cell for cell.
    pub writer: Row,
    /// The step table of a reader (only `read-write` has readers; elsewhere the writer's).
    pub reader: Row,
    /// The stored scripts of the acquire and release (`(id, painless source)`); the write
    /// scripts come with `fenced_writes`.
    pub scripts: &'static [(&'static str, &'static str)],
    /// The acquire request.
    pub acquire: AcquireFn,
    /// An acquire answered 400 reads as "held" whatever it says (the blog's as-written
    /// recipes read any 400 so); otherwise only the `lease-acquire` script's own refusal
    /// ([`LEASE_HELD`]) does.
    pub any_400_is_held: bool,
    /// Writes carry the token (`fenced-write`, `fence-claim`); else the blog's `{"doc": ..}`.
    pub fenced_writes: bool,
    /// The fix of `docs/docstore.md` §6 (the model's `installs_lock_once`): the lock document
    /// is installed by `install_scripts`, and the lease can be renewed.
    pub fixed: bool,
    /// The fix's read-back of the grant (the model's `verifies_grant`).
    pub verifies_grant: bool,
    /// The fix's data writes conditioned on the session's read (`conditions_writes`).
    pub conditions_writes: bool,
    /// The fix's fence check at each session read (`checks_fence_on_read`).
    pub checks_fence_on_read: bool,
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
// The whole vocabulary, so that the test kit's tables of the broken recipes run through this
// interpreter; the production table (`LEASED`) names only some of the steps.
#[cfg_attr(not(feature = "test-util"), allow(dead_code))]
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
    /// `POST <index>/_update/<id>?if_seq_no=..&if_primary_term=..` with `lease-acquire`,
    /// conditioned on the lock document's version the holder last wrote: the lease is extended,
    /// the fencing token stays the acquire's.
    RenewLease,
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

/// The production table: the fixed `leased` recipe (`docs/docstore.md` §6). The model's
/// `docstore::next` for `leased`, cell for cell:
///
/// | `Idle`, `Retrying` | `Claiming` | `Holding` | `Computing` | `Writing` | `Releasing` | `Verifying` |
/// |---|---|---|---|---|---|---|
/// | `UpdateLock` | `ClaimData` | `ReadData`, `RenewLease`, `ReleaseLease` | `CheckLease` | `WriteData` | `ReleaseLease` | `VerifyLock` |
///
/// A writer is at `Claiming` only when it claims.
pub static LEASED: Rules = Rules {
    name: "leased",
    leased: true,
    writer: LEASED_ROW,
    reader: LEASED_ROW,
    scripts: &[
        ("lease-acquire", scripts::LEASE_ACQUIRE),
        ("lease-release", scripts::LEASE_RELEASE),
        ("lease-install", scripts::LEASE_INSTALL),
        ("lease-renew", scripts::LEASE_RENEW),
    ],
    acquire: leased_acquire,
    any_400_is_held: false,
    fenced_writes: true,
    fixed: true,
    verifies_grant: true,
    conditions_writes: true,
    checks_fence_on_read: true,
};

const LEASED_ROW: Row = {
    use Step::*;
    [
        &[UpdateLock],
        &[UpdateLock],
        &[ClaimData],
        &[ReadData, RenewLease, ReleaseLease],
        &[CheckLease],
        &[WriteData],
        &[ReleaseLease],
        &[VerifyLock],
    ]
};

/// The fixed recipe's acquire: `lease-acquire` with the lease's length (the server measures it
/// with `ctx._now`) and no `upsert`: a missing lock document is a 404, never a grant.
fn leased_acquire<'a>(
    _role: Role,
    index: &'a str,
    id: &'a str,
    owner: &str,
    now: u64,
    expires: u64,
) -> Request<'a> {
    Request::Update {
        index,
        id,
        script: StoredScript {
            id: scripts::script_id("lease-acquire"),
            params: json!({"owner": owner, "lease": expires.saturating_sub(now)}),
            scripted_upsert: false,
        },
    }
}

impl Rules {
    /// The steps a client of `role` may take at `pc` (the model's `docstore::next`).
    pub fn next(&self, role: Role, pc: Pc) -> &'static [Step] {
        let row = match role {
            Role::Writer => &self.writer,
            Role::Reader => &self.reader,
        };
        row[pc as usize]
    }

    /// The one step of [`Rules::next`] that `wanted` accepts, if any.
    pub fn step_where(&self, role: Role, pc: Pc, wanted: impl Fn(Step) -> bool) -> Option<Step> {
        self.next(role, pc).iter().copied().find(|&s| wanted(s))
    }

    /// The stored scripts the recipe needs (`(id, painless source)`), installed once with
    /// `put_script` before any client runs.
    pub fn scripts_to_install(&self) -> Vec<(&'static str, &'static str)> {
        let mut v = self.scripts.to_vec();
        if self.fenced_writes {
            v.push(("fenced-write", scripts::FENCED_WRITE));
            v.push(("fence-claim", scripts::FENCE_CLAIM));
        }
        v
    }

    /// [`Rules::scripts_to_install`] under the ids they are stored and called by: the
    /// production scripts' versioned ids ([`scripts::script_id`]), a test recipe's own
    /// scripts under their names.
    pub fn stored_scripts(&self) -> Vec<(&'static str, &'static str)> {
        self.scripts_to_install()
            .into_iter()
            .map(|(name, source)| (scripts::install_id(name, source), source))
            .collect()
    }

    /// Whether the store's answer `e` to the acquire `step` says "held": 409 from `_create`,
    /// or (`_update`) a 400 with the acquire script's `Debug.explain` and its own message
    /// (Elasticsearch's `painless_explain_error` shape, [`StoreError::explains`]), or any 400
    /// for the recipes that read it so ([`Rules::any_400_is_held`]).
    pub fn refused(&self, step: Step, e: &StoreError) -> bool {
        match (step, e.status()) {
            (Step::CreateLock, Some(409)) => true,
            (Step::UpdateLock | Step::UpsertLock, Some(400)) => {
                self.any_400_is_held || e.explains(LEASE_HELD)
            }
            _ => false,
        }
    }

    /// Whether a client of `role` keeps its acquiring write's token (the model's
    /// `keeps_token`): as its fencing token and (leased) its compare-and-delete guard.
    pub fn keeps_token(&self, role: Role) -> bool {
        self.leased || (self.fenced_writes && role == Role::Writer)
    }
}

/// One request, as a client sends it: each variant is one [`DocStore`] method, its fields that
/// method's arguments (`index`, `id` of the document; the body's parts).
#[derive(Clone, Debug, PartialEq)]
// The fields are the DocStore methods' arguments, named alike. `Create` is made only by the
// test kit's as-written tables (`global`, `read-write`).
#[allow(missing_docs, dead_code)]
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

/// The claim of claim-at-acquire: `fence-claim` with `token`, and an `upsert` holding the
/// fence, so that a missing data document is created already fenced (deleting and
/// re-creating the document cannot erase the fence).
pub fn claim_request<'a>(index: &'a str, id: &'a str, token: Token) -> Request<'a> {
    let fence = json!({"primary_term": token.primary_term, "seq_no": token.seq_no});
    Request::Upsert {
        index,
        id,
        script: StoredScript {
            id: scripts::script_id("fence-claim"),
            params: fence.clone(),
            scripted_upsert: false,
        },
        upsert: json!({ "fence": fence }),
    }
}

/// The release request for `step` (`token`: the acquiring write's, for compare-and-delete;
/// the fixed recipe's `lease-release`: the version the holder last wrote, and its `owner`).
pub fn release_request<'a>(
    step: Step,
    index: &'a str,
    id: &'a str,
    token: Option<Token>,
    owner: &str,
) -> Request<'a> {
    match (step, token) {
        (Step::CompareAndDelete, Some(token)) => Request::DeleteIfSeqNo { index, id, token },
        (Step::ReleaseLease, Some(token)) => Request::UpdateIf {
            index,
            id,
            script: StoredScript {
                id: scripts::script_id("lease-release"),
                params: json!({ "owner": owner }),
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

/// The data write of `patch` (a JSON object): fenced with `token` if `fenced` (else the blog's
/// partial-document update of it, a test table's); the fixed `leased` conditions it on `read`,
/// the `_seq_no`/`_primary_term` the session's read returned (`if_seq_no`/`if_primary_term`).
pub fn write_request<'a>(
    fenced: bool,
    index: &'a str,
    id: &'a str,
    token: Option<Token>,
    read: Option<Token>,
    patch: &Value,
) -> Request<'a> {
    match (fenced, token) {
        (true, Some(t)) => {
            let script = StoredScript {
                id: scripts::script_id("fenced-write"),
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
