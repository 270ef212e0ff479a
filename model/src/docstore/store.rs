//! Elasticsearch's per-document write semantics for one index with one primary shard: the
//! single source of truth for the document-store family.
//!
//! The Stateright model (`crate::docstore::protocol`) calls this module for every request a
//! client makes; the simulated store the checks run the reference client on (shuttle) and the
//! loopback HTTP server that tests the client's HTTP layer are meant to call it too, verbatim,
//! so the model, the simulation and the test server cannot drift. It is pure and deterministic
//! (sorted vectors, small integers), holds no model-specific state, and is generic over the
//! document key.
//!
//! What Elasticsearch does, as modelled (the Elasticsearch
//! reference for the document APIs; elastic/elasticsearch#44603 and #50526):
//!
//! | request | document absent | document present |
//! |---|---|---|
//! | `PUT idx/_create/id` | insert, 201 `created` | 409 `version_conflict_engine_exception` |
//! | `PUT idx/_doc/id` (index) | insert, 201 `created` | replace, 200 `updated` |
//! | `POST idx/_update/id` + `upsert` | insert the upsert body, **script not run**, 201 `created` | run the script (below) |
//! | `POST idx/_update/id`, no `upsert` | 404 `document_missing_exception` | run the script (below) |
//! | `DELETE idx/_doc/id` | 404 `not_found` (a sequence number is still used) | delete, 200 `deleted` |
//! | index/delete with `if_seq_no` + `if_primary_term` | 409 | 409 unless both match the document's |
//! | `_update` with `if_seq_no` + `if_primary_term`, no `upsert` | 404 `document_missing_exception` (the update reads the document first) | 409 unless both match the document's |
//! | `GET idx/_doc/id` | 404 | `_source`, `_seq_no`, `_primary_term` |
//!
//! A script's outcome: it sets `ctx.op = 'noop'` → 200 `noop`, the document unchanged, and
//! (since Elasticsearch 7.4, #44603) the response carries the document's current `_seq_no`
//! and `_primary_term`; `ctx.op = 'delete'` → 200 `deleted`; it throws (`Debug.explain`, or a
//! runtime error such as `--` on a missing field) → 400, the document unchanged; otherwise the
//! modified `_source` is indexed, 200 `updated`.
//!
//! `_update` is read + run script + version-checked write inside the primary shard. It is ONE
//! step here: with `retry_on_conflict` 0 an update whose read raced a concurrent write fails
//! with 409 and changes nothing, so modelling the read separately would only add 409 outcomes
//! without effect — and every client in this family answers a 409 on an `_update` by sending
//! the same request again (as after a timeout), which makes such a 409 a stutter (see
//! `docs/docstore.md`, "Semantics assumed").
//!
//! Every successful write (create, index, update other than noop, delete, and a delete that
//! finds nothing) takes the shard's next `_seq_no` and the current `_primary_term`.
//! [`Shard::promote_replica`] is a fail-over: another copy becomes primary and the term
//! grows; no acknowledged write is lost (losses on fail-over are not modelled).
//!
//! Not modelled: `_version` and external versioning, tombstone garbage collection
//! (`index.gc_deletes`), refresh and search visibility (only realtime GET by id), routing and
//! more than one shard per index, `detect_noop` on partial-document merges (the merged fields
//! are not modelled, so a merge always counts as `updated`), bulk requests as such
//! (`document-bulk` applies its `create` items one per step, its `delete` items in one step,
//! each through the single-document calls here), and any document shape other than the
//! recipes' ([`Source`]).

use std::fmt;

mod script;

pub use script::{Script, ScriptError, ScriptOutcome};

/// `_seq_no`: per shard, strictly increasing with every write.
pub type SeqNo = u64;
/// `_primary_term`: grows when another shard copy becomes primary.
pub type Term = u64;
/// A client-supplied timestamp (the leased recipe's `now` and `expires`), in ticks.
pub type Time = u64;

/// A lock owner's `process_id`: the blog generates a UUID per thread; here client `client` in
/// its `incarnation` (a restarted process has a new id). Rendered as `c0-i1` on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner {
    pub client: u8,
    pub incarnation: u8,
}

impl Owner {
    /// The reserved owner of the fix's guarded re-install: the lock document is created
    /// leased to it for one lease, so that no client is granted until every lease granted
    /// before the loss has passed. No client has this incarnation.
    pub const INSTALLER: Owner = Owner {
        client: 0,
        incarnation: u8::MAX - 1,
    };
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Owner::INSTALLER {
            return f.write_str("install");
        }
        write!(f, "c{}-i{}", self.client, self.incarnation)
    }
}

/// The `_primary_term` and `_seq_no` of a write: what `if_primary_term`/`if_seq_no` compare,
/// and the corrected recipe's fencing token. Ordered term first, then sequence number (a later
/// primary's writes are newer whatever their sequence numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    pub primary_term: Term,
    pub seq_no: SeqNo,
}

impl fmt::Display for Token {
    /// `seq 3/term 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seq {}/term {}", self.seq_no, self.primary_term)
    }
}

/// A document's `_source`: the shapes the recipes write. A closed set, so the model stays
/// small; the loopback server maps JSON bodies onto it and rejects anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// `{}`: the global lock's body.
    Empty,
    /// `{"process_id": ".."}`: the document lock.
    ProcessId(Owner),
    /// `{"lock_type": "shared", "lock_count": n}`: readers of the read/write lock.
    Shared { lock_count: u32 },
    /// `{"lock_type": "exclusive"}`: the writer of the read/write lock.
    Exclusive,
    /// `{"owner": "..", "expires": t}`: the corrected recipe's lease.
    Lease { owner: Owner, expires: Time },
    /// The protected data document (`files/1`): `{"name": .., "fence": {..}}`. Only the
    /// fence — the highest token a fenced write presented — is modelled, not the data.
    Data { fence: Option<Token> },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Empty => f.write_str("{}"),
            Source::ProcessId(o) => write!(f, "{{process_id: {o}}}"),
            Source::Shared { lock_count } => {
                write!(f, "{{lock_type: shared, lock_count: {lock_count}}}")
            }
            Source::Exclusive => f.write_str("{lock_type: exclusive}"),
            Source::Lease { owner, expires } => write!(f, "{{owner: {owner}, expires: {expires}}}"),
            Source::Data { fence: None } => f.write_str("{name, fence: null}"),
            Source::Data { fence: Some(t) } => write!(f, "{{name, fence: {t}}}"),
        }
    }
}

impl Source {
    /// `ctx._source.lock_type == 'exclusive'`.
    fn is_exclusive(self) -> bool {
        self == Source::Exclusive
    }

    /// `ctx._source.process_id` (`None` = painless `null`).
    fn process_id(self) -> Option<Owner> {
        match self {
            Source::ProcessId(o) => Some(o),
            _ => None,
        }
    }

    /// `ctx._source.lock_count`.
    fn lock_count(self) -> Option<u32> {
        match self {
            Source::Shared { lock_count } => Some(lock_count),
            _ => None,
        }
    }

    /// The times the document holds (the lease's `expires`).
    pub fn times(self) -> Option<Time> {
        match self {
            Source::Lease { expires, .. } => Some(expires),
            _ => None,
        }
    }

    /// The same source with every time mapped through `f` (the model shifts its clock).
    pub fn map_times(self, f: impl FnOnce(Time) -> Time) -> Source {
        match self {
            Source::Lease { owner, expires } => Source::Lease {
                owner,
                expires: f(expires),
            },
            s => s,
        }
    }

    /// The fencing token the document holds, if any.
    pub fn fence(self) -> Option<Token> {
        match self {
            Source::Data { fence } => fence,
            _ => None,
        }
    }

    /// The same source with its fencing token mapped through `f` (the model renumbers the
    /// lock shard's sequence numbers, which tokens refer to).
    pub fn map_fence(self, f: impl FnOnce(Token) -> Token) -> Source {
        match self {
            Source::Data { fence: Some(t) } => Source::Data { fence: Some(f(t)) },
            s => s,
        }
    }

    /// The owner the document names (`process_id` or `owner`).
    pub fn owner(self) -> Option<Owner> {
        match self {
            Source::ProcessId(o) | Source::Lease { owner: o, .. } => Some(o),
            _ => None,
        }
    }

    /// The same source with its owner mapped through `f` (symmetry reduction renames clients).
    pub fn map_owner(self, f: impl FnOnce(Owner) -> Owner) -> Source {
        match self {
            Source::ProcessId(o) => Source::ProcessId(f(o)),
            Source::Lease { owner, expires } => Source::Lease {
                owner: f(owner),
                expires,
            },
            s => s,
        }
    }
}

/// The body of an `_update` request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpdateBody {
    /// `{"script": {"id": .., "params": ..}}`.
    Script(Script),
    /// `{"doc": {..}}`: a partial document merged into the existing one. The merged fields
    /// (the application's data) are not modelled: the modelled `_source` stays as it is.
    Doc,
}

/// One stored document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Doc {
    pub source: Source,
    pub seq_no: SeqNo,
    pub primary_term: Term,
}

impl Doc {
    /// The document's `_seq_no` and `_primary_term`.
    pub fn token(&self) -> Token {
        Token {
            primary_term: self.primary_term,
            seq_no: self.seq_no,
        }
    }
}

/// The `result` of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteResult {
    Created,
    Updated,
    Deleted,
    Noop,
    /// A `DELETE` without `if_seq_no` found no document: HTTP 404, yet a sequence number was
    /// used (the delete is replicated as a tombstone).
    NotFound,
}

impl WriteResult {
    /// The HTTP status of the response.
    pub fn status(self) -> u16 {
        match self {
            WriteResult::Created => 201,
            WriteResult::NotFound => 404,
            _ => 200,
        }
    }

    /// The `result` field.
    pub fn name(self) -> &'static str {
        match self {
            WriteResult::Created => "created",
            WriteResult::Updated => "updated",
            WriteResult::Deleted => "deleted",
            WriteResult::Noop => "noop",
            WriteResult::NotFound => "not_found",
        }
    }
}

/// A write's response: its `result` and the `_seq_no`/`_primary_term` it reports (for a noop,
/// the document's current ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Written {
    pub result: WriteResult,
    pub token: Token,
}

/// A request that failed and changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreError {
    /// 409 `version_conflict_engine_exception`: `_create` of an existing id, or
    /// `if_seq_no`/`if_primary_term` that do not match (or no document).
    VersionConflict,
    /// 404 `document_missing_exception`: `_update` of a missing document without `upsert`.
    DocumentMissing,
    /// 400: the script threw.
    Script(ScriptError),
}

impl StoreError {
    /// The HTTP status of the response.
    pub fn status(self) -> u16 {
        match self {
            StoreError::VersionConflict => 409,
            StoreError::DocumentMissing => 404,
            StoreError::Script(_) => 400,
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::VersionConflict => f.write_str("409 version_conflict_engine_exception"),
            StoreError::DocumentMissing => f.write_str("404 document_missing_exception"),
            StoreError::Script(e) => write!(f, "400 script_exception {e}"),
        }
    }
}

/// The outcome of one write request.
pub type WriteOutcome = Result<Written, StoreError>;

/// One index with one primary shard: documents by id, the shard's next `_seq_no`, its current
/// `_primary_term`. (Documents are kept in a vector sorted by id: the model's indices hold one
/// document each and are cloned millions of times; `clone_from` reuses the allocation.)
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Shard<K: Ord> {
    docs: Vec<(K, Doc)>,
    next_seq_no: SeqNo,
    primary_term: Term,
}

impl<K: Ord + Clone> Clone for Shard<K> {
    fn clone(&self) -> Self {
        Shard {
            docs: self.docs.clone(),
            next_seq_no: self.next_seq_no,
            primary_term: self.primary_term,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.docs.clone_from(&source.docs);
        self.next_seq_no = source.next_seq_no;
        self.primary_term = source.primary_term;
    }
}

impl<K: Ord> Default for Shard<K> {
    fn default() -> Self {
        Shard::new()
    }
}

impl<K: Ord> Shard<K> {
    /// An empty index: no documents, `_seq_no` starts at 0, `_primary_term` at 1.
    pub fn new() -> Shard<K> {
        Shard {
            docs: Vec::new(),
            next_seq_no: 0,
            primary_term: 1,
        }
    }

    fn position(&self, id: &K) -> Result<usize, usize> {
        self.docs.binary_search_by(|(k, _)| k.cmp(id))
    }

    // ---- queries ----

    /// `GET idx/_doc/id` (realtime): the document, or `None` (404).
    pub fn get(&self, id: &K) -> Option<&Doc> {
        self.position(id).ok().map(|i| &self.docs[i].1)
    }

    /// All documents, in id order.
    pub fn docs(&self) -> impl Iterator<Item = (&K, &Doc)> {
        self.docs.iter().map(|(k, d)| (k, d))
    }

    /// The sequence number the next write takes.
    pub fn next_seq_no(&self) -> SeqNo {
        self.next_seq_no
    }

    /// The current primary term.
    pub fn primary_term(&self) -> Term {
        self.primary_term
    }

    // ---- writes ----

    fn next_token(&mut self) -> Token {
        let seq_no = self.next_seq_no;
        self.next_seq_no += 1;
        Token {
            primary_term: self.primary_term,
            seq_no,
        }
    }

    fn put(&mut self, id: K, source: Source, result: WriteResult) -> Written {
        let token = self.next_token();
        let doc = Doc {
            source,
            seq_no: token.seq_no,
            primary_term: token.primary_term,
        };
        match self.position(&id) {
            Ok(i) => self.docs[i].1 = doc,
            Err(i) => self.docs.insert(i, (id, doc)),
        }
        Written { result, token }
    }

    /// 409 unless `cond` (if given) names the document's current `_seq_no` and
    /// `_primary_term`.
    fn check(&self, id: &K, cond: Option<Token>) -> Result<(), StoreError> {
        match cond {
            Some(want) if self.get(id).map(Doc::token) != Some(want) => {
                Err(StoreError::VersionConflict)
            }
            _ => Ok(()),
        }
    }

    /// `PUT idx/_create/id`: put-if-absent.
    ///
    /// # Errors
    /// [`StoreError::VersionConflict`] if the id exists.
    pub fn create(&mut self, id: K, source: Source) -> WriteOutcome {
        if self.get(&id).is_some() {
            return Err(StoreError::VersionConflict);
        }
        Ok(self.put(id, source, WriteResult::Created))
    }

    /// `PUT idx/_doc/id[?if_seq_no=..&if_primary_term=..]`: insert or replace.
    ///
    /// # Errors
    /// [`StoreError::VersionConflict`] if `cond` does not match.
    pub fn index(&mut self, id: K, source: Source, cond: Option<Token>) -> WriteOutcome {
        self.check(&id, cond)?;
        let result = if self.get(&id).is_some() {
            WriteResult::Updated
        } else {
            WriteResult::Created
        };
        Ok(self.put(id, source, result))
    }

    /// `POST idx/_update/id[?if_seq_no=..&if_primary_term=..]` with `retry_on_conflict` 0:
    /// one atomic read + script + write (see the module docs).
    ///
    /// # Errors
    /// [`StoreError::VersionConflict`] if `cond` does not match the document (an upsert with
    /// `cond` of a missing one too); [`StoreError::DocumentMissing`] if the document is absent
    /// and there is no `upsert` (with or without `cond`: the update reads it first);
    /// [`StoreError::Script`] if the script threw.
    pub fn update(
        &mut self,
        id: K,
        body: UpdateBody,
        upsert: Option<Source>,
        cond: Option<Token>,
    ) -> WriteOutcome {
        let Some(doc) = self.get(&id).copied() else {
            // The update reads the document first (`getForUpdate`): a missing one is upserted
            // or a 404, before any `if_seq_no` comparison (which needs a document).
            return match upsert {
                // The upsert body is inserted as is: the script does not run.
                Some(_) if cond.is_some() => Err(StoreError::VersionConflict),
                Some(source) => Ok(self.put(id, source, WriteResult::Created)),
                None => Err(StoreError::DocumentMissing),
            };
        };
        self.check(&id, cond)?;
        let outcome = match body {
            UpdateBody::Script(script) => script.run(doc.source),
            UpdateBody::Doc => ScriptOutcome::Index(doc.source),
        };
        match outcome {
            ScriptOutcome::Index(source) => Ok(self.put(id, source, WriteResult::Updated)),
            ScriptOutcome::Noop => Ok(Written {
                result: WriteResult::Noop,
                token: doc.token(),
            }),
            ScriptOutcome::Delete => {
                self.remove(&id);
                Ok(Written {
                    result: WriteResult::Deleted,
                    token: self.next_token(),
                })
            }
            ScriptOutcome::Fail(e) => Err(StoreError::Script(e)),
        }
    }

    /// `DELETE idx/_doc/id[?if_seq_no=..&if_primary_term=..]`.
    ///
    /// # Errors
    /// [`StoreError::VersionConflict`] if `cond` is given and does not match (including when
    /// there is no document). Without `cond`, a missing document is not an error but
    /// [`WriteResult::NotFound`] (HTTP 404).
    pub fn delete(&mut self, id: &K, cond: Option<Token>) -> WriteOutcome {
        self.check(id, cond)?;
        let result = match self.remove(id) {
            Some(_) => WriteResult::Deleted,
            None => WriteResult::NotFound,
        };
        Ok(Written {
            result,
            token: self.next_token(),
        })
    }

    fn remove(&mut self, id: &K) -> Option<Doc> {
        let i = self.position(id).ok()?;
        Some(self.docs.remove(i).1)
    }

    /// Fail-over: another shard copy becomes primary; later writes carry the next
    /// `_primary_term`. Documents keep the term they were written in.
    pub fn promote_replica(&mut self) {
        self.primary_term += 1;
    }

    /// Fail-over that loses writes: the promoted copy had not received the writes made since
    /// `before` was the shard's state (they were acknowledged to their clients all the same).
    /// The documents go back to `before`'s; the term grows. The sequence number goes on from
    /// where it was rather than reusing the lost ones: a token is ordered by its term first,
    /// so the new primary's writes order after the lost ones either way.
    pub fn roll_back_to(&mut self, before: &Shard<K>)
    where
        K: Clone,
    {
        self.docs.clone_from(&before.docs);
        self.primary_term += 1;
    }

    // ---- for the model: keeping the state space finite ----

    /// Renames every document's `_seq_no` through `f` and sets the next sequence number. The
    /// model calls this with an order-preserving renaming onto `0..next` (only equality and
    /// order of sequence numbers are observable, and the next one is always the largest).
    pub fn renumber(&mut self, f: impl Fn(SeqNo) -> SeqNo, next: SeqNo) {
        for (_, doc) in &mut self.docs {
            doc.seq_no = f(doc.seq_no);
        }
        self.next_seq_no = next;
    }

    /// Maps every document's `_source` through `f` (the model shifts times, renames owners
    /// and tokens).
    pub fn map_sources(&mut self, mut f: impl FnMut(Source) -> Source) {
        for (_, doc) in &mut self.docs {
            doc.source = f(doc.source);
        }
    }
}
