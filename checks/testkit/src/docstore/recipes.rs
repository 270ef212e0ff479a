//! The broken recipes of `docs/docstore.md` (section 5 and the fix's twins), as tables of the
//! same shape as the library's one production table (`lockwright::docstore::testing::LEASED`,
//! the fixed `leased`): the step table, the stored scripts, the acquire request and the few
//! switches of [`Rules`]. A client runs one with [`WithDefect::with_defect`] (the library's
//! test-only `LeaseLock::with_rules`): the same client code, through the same `DocStore`
//! interface, on another table — so the checks show they catch each broken recipe without the
//! broken recipes shipping in the library.
//!
//! Each table equals the model's (`lockwright_model::docstore::next`) cell for cell, and each
//! script its `Script::painless`: `checks/tests/docstore/client_tables.rs` compares them.

use lockwright::docstore::testing::Role;
use lockwright::docstore::testing::{Request, Row, Rules, Step, LEASED};
use lockwright::docstore::{DocStore, LeaseLock, StoredScript};
use serde_json::json;

/// The painless sources of the broken recipes' stored scripts (the production ones are
/// `lockwright::docstore::scripts`). Each must equal the model's `Script::painless`.
pub mod scripts {
    /// `lease-acquire-noop`: the broken first draft of `lease-acquire` (a `noop` for the
    /// current owner even when its lease has passed).
    pub const LEASE_ACQUIRE_NOOP: &str =
        "if (ctx._source.owner == params.owner) { ctx.op = 'noop'; } \
     else if (ctx._source.expires != null && ctx._source.expires > params.now) { \
     Debug.explain('lease held by another owner'); } \
     else { ctx._source.owner = params.owner; ctx._source.expires = params.expires; }";

    /// `document-lock`: the blog's document lock, as written.
    pub const DOCUMENT_LOCK: &str = "if ( ctx._source.process_id != params.process_id ) { \
     Debug.explain('already locked by other thread'); }  ctx.op = 'noop';";

    /// `rw-lock`: the blog's reader acquire, as written.
    pub const RW_LOCK: &str =
        "if (ctx._source.lock_type == 'exclusive') { Debug.explain('one thread is \
     writing data, the lock is exclusive now'); } ctx._source.lock_count++";

    /// `rw-unlock`: the blog's reader release, as written.
    pub const RW_UNLOCK: &str = "if ( --ctx._source.lock_count == 0) { ctx.op = 'delete' }";
}

use Step::*;

/// `leased-upsert`, `leased-noop`: acquire by upsert, release by compare-and-delete, no
/// read-back.
const UPSERT_LEASE_ROW: Row = [
    &[UpsertLock],
    &[UpsertLock],
    &[ClaimData],
    &[ReadData, CompareAndDelete],
    &[CheckLease],
    &[WriteData],
    &[CompareAndDelete],
    &[],
];

/// `global`, and the writer of `read-write`: `_create`, release `DELETE`, no lease.
const CREATE_ROW: Row = [
    &[CreateLock],
    &[CreateLock],
    &[ClaimData],
    &[ReadData, DeleteLock],
    &[WriteData],
    &[],
    &[DeleteLock],
    &[],
];

/// `document`: upsert with `document-lock`, release `DELETE`, no lease.
const DOCUMENT_ROW: Row = [
    &[UpsertLock],
    &[UpsertLock],
    &[ClaimData],
    &[ReadData, DeleteLock],
    &[WriteData],
    &[],
    &[DeleteLock],
    &[],
];

/// The reader of `read-write`: upsert with `rw-lock`, release with `rw-unlock`.
const RW_READER_ROW: Row = [
    &[UpsertLock],
    &[UpsertLock],
    &[],
    &[UpdateUnlock],
    &[],
    &[],
    &[UpdateUnlock],
    &[],
];

/// The corrected recipe before the fix against the store's own faults: `lease-acquire` with
/// an `upsert` (a missing lock document is created: a grant), release by compare-and-delete,
/// fenced writes, none of the fix's pieces.
pub static LEASED_UPSERT: Rules = Rules {
    name: "leased-upsert",
    leased: true,
    writer: UPSERT_LEASE_ROW,
    reader: UPSERT_LEASE_ROW,
    scripts: &[(
        "lease-acquire",
        lockwright::docstore::scripts::LEASE_ACQUIRE,
    )],
    acquire: leased_upsert_acquire,
    any_400_is_held: false,
    fenced_writes: true,
    fixed: false,
    verifies_grant: false,
    conditions_writes: false,
    checks_fence_on_read: false,
};

/// `leased-upsert` with the blog's unfenced writes (model `leased-upsert × unfenced`).
pub static LEASED_UPSERT_UNFENCED: Rules = Rules {
    fenced_writes: false,
    ..LEASED_UPSERT
};

/// The broken first draft of `leased`: `lease-acquire-noop`, a `noop` for the current owner
/// even after its lease passed.
pub static LEASED_NOOP: Rules = Rules {
    name: "leased-noop",
    scripts: &[("lease-acquire-noop", scripts::LEASE_ACQUIRE_NOOP)],
    acquire: leased_noop_acquire,
    ..LEASED_UPSERT
};

/// The fix without the read-back of the grant (model `leased-fix-unverified`).
pub static LEASED_FIX_UNVERIFIED: Rules = Rules {
    name: "leased-fix-unverified",
    verifies_grant: false,
    ..LEASED
};

/// The fix with data writes not conditioned on the session's read (model
/// `leased-fix-unconditional`).
pub static LEASED_FIX_UNCONDITIONAL: Rules = Rules {
    name: "leased-fix-unconditional",
    conditions_writes: false,
    ..LEASED
};

/// The fix without the fence check at each session's read (model `leased-fix-unchecked`).
pub static LEASED_FIX_UNCHECKED: Rules = Rules {
    name: "leased-fix-unchecked",
    checks_fence_on_read: false,
    ..LEASED
};

/// The blog's global lock as written: `PUT <index>/_create/global {}`; release `DELETE`;
/// unfenced writes.
pub static GLOBAL: Rules = Rules {
    name: "global",
    leased: false,
    writer: CREATE_ROW,
    reader: CREATE_ROW,
    scripts: &[],
    acquire: global_acquire,
    any_400_is_held: true,
    fenced_writes: false,
    fixed: false,
    verifies_grant: false,
    conditions_writes: false,
    checks_fence_on_read: false,
};

/// The blog's document lock as written: `_update` with `upsert {process_id}` and
/// `document-lock`; release `DELETE`; unfenced writes.
pub static DOCUMENT: Rules = Rules {
    name: "document",
    writer: DOCUMENT_ROW,
    reader: DOCUMENT_ROW,
    scripts: &[("document-lock", scripts::DOCUMENT_LOCK)],
    acquire: document_acquire,
    ..GLOBAL
};

/// The blog's read/write lock as written: readers upsert `{shared, 1}` or run `rw-lock` and
/// release with `rw-unlock`; the writer `_create`s `{exclusive}` and releases with `DELETE`;
/// unfenced writes.
pub static READ_WRITE: Rules = Rules {
    name: "read-write",
    writer: CREATE_ROW,
    reader: RW_READER_ROW,
    scripts: &[
        ("rw-lock", scripts::RW_LOCK),
        ("rw-unlock", scripts::RW_UNLOCK),
    ],
    acquire: read_write_acquire,
    ..GLOBAL
};

fn leased_upsert_acquire<'a>(
    _role: Role,
    index: &'a str,
    id: &'a str,
    owner: &str,
    now: u64,
    expires: u64,
) -> Request<'a> {
    Request::Upsert {
        index,
        id,
        // The server's clock decides (`ctx._now` in the script, also for the upsert): only
        // the lease's length goes in the request, never the client's time.
        script: StoredScript {
            id: lockwright::docstore::scripts::script_id("lease-acquire"),
            params: json!({"owner": owner, "lease": expires.saturating_sub(now)}),
            scripted_upsert: true,
        },
        upsert: json!({}),
    }
}

fn leased_noop_acquire<'a>(
    _role: Role,
    index: &'a str,
    id: &'a str,
    owner: &str,
    now: u64,
    expires: u64,
) -> Request<'a> {
    Request::Upsert {
        index,
        id,
        script: StoredScript {
            id: "lease-acquire-noop",
            params: json!({"owner": owner, "now": now, "expires": expires}),
            scripted_upsert: false,
        },
        upsert: json!({"owner": owner, "expires": expires}),
    }
}

fn global_acquire<'a>(
    _role: Role,
    index: &'a str,
    id: &'a str,
    _owner: &str,
    _now: u64,
    _expires: u64,
) -> Request<'a> {
    Request::Create {
        index,
        id,
        source: json!({}),
    }
}

fn document_acquire<'a>(
    _role: Role,
    index: &'a str,
    id: &'a str,
    owner: &str,
    _now: u64,
    _expires: u64,
) -> Request<'a> {
    Request::Upsert {
        index,
        id,
        script: StoredScript {
            id: "document-lock",
            params: json!({"process_id": owner}),
            scripted_upsert: false,
        },
        upsert: json!({"process_id": owner}),
    }
}

fn read_write_acquire<'a>(
    role: Role,
    index: &'a str,
    id: &'a str,
    _owner: &str,
    _now: u64,
    _expires: u64,
) -> Request<'a> {
    match role {
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
    }
}

/// A deliberately broken variant of the client, one per recipe the model shows broken
/// (`docs/docstore.md`, section 5): [`WithDefect::with_defect`].
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

impl Defect {
    /// The table this broken client runs, and its role.
    pub fn rules(self) -> (&'static Rules, Role) {
        match self {
            Defect::Global => (&GLOBAL, Role::Writer),
            Defect::Document => (&DOCUMENT, Role::Writer),
            Defect::ReadWrite(role) => (&READ_WRITE, role),
            Defect::LeasedNoop => (&LEASED_NOOP, Role::Writer),
            Defect::UnfencedWrites => (&LEASED_UPSERT_UNFENCED, Role::Writer),
            Defect::LeasedUpsert => (&LEASED_UPSERT, Role::Writer),
            Defect::LeasedFixUnverified => (&LEASED_FIX_UNVERIFIED, Role::Writer),
            Defect::LeasedFixUnconditional => (&LEASED_FIX_UNCONDITIONAL, Role::Writer),
            Defect::LeasedFixUnchecked => (&LEASED_FIX_UNCHECKED, Role::Writer),
        }
    }
}

/// Test setup on a fresh store, where no lease can be live: the recipe's stored scripts, and
/// (the fixed recipe) the lock document created as a free lease (`PUT <index>/_create/<id>
/// {}`). Production installs it with `LeaseLock::install_lock`, which reserves it for one lease
/// first because it cannot know that no lease is live; tests of everything but the install
/// start from a fresh store and need not wait. Also the "operator who re-installs too early"
/// of the tests that show what the recipe does then.
///
/// # Errors
/// The store's answer.
pub fn install_fresh<S: DocStore>(
    lock: &LeaseLock<S>,
) -> Result<(), lockwright::docstore::DocLockError> {
    lock.install_scripts()?;
    if lock.rules().fixed {
        create_lock_document(lock)?;
    }
    Ok(())
}

/// `PUT <index>/_create/<id> {}` of `lock`'s document (already there: fine): the unguarded
/// install, as `LeaseLock::install_lock` did before issue #35.
///
/// # Errors
/// The store's answer.
pub fn create_lock_document<S: DocStore>(
    lock: &LeaseLock<S>,
) -> Result<(), lockwright::docstore::DocLockError> {
    let name = lock.lock_name();
    let (index, id) = name.split_once('/').expect("<index>/<id>");
    match lock.store().create(index, id, &serde_json::json!({})) {
        Ok(_) => Ok(()),
        Err(e) if e.is_conflict() => Ok(()),
        Err(source) => Err(lockwright::docstore::DocLockError::Store { lock: name, source }),
    }
}

/// The broken clients, on the real `LeaseLock`.
pub trait WithDefect {
    /// The same lock, running the broken recipe `defect` (see [`Defect`]).
    #[must_use]
    fn with_defect(self, defect: Defect) -> Self;
}

impl<S: DocStore> WithDefect for LeaseLock<S> {
    fn with_defect(self, defect: Defect) -> Self {
        let (rules, role) = defect.rules();
        self.with_rules(rules, role)
    }
}
