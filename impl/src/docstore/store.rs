//! The store interface the recipe is written over: one method per request, each ONE atomic
//! step of the model (`lockwright_model::docstore::Action`), plus the clock.
//!
//! Production is [`crate::docstore::HttpStore`]; the checks plug in a simulated store on the
//! model's document semantics (`lockwright_model::docstore::store`) and drive the same recipe
//! code through shuttle's schedules. Contract: a recipe never combines two of these calls into
//! what the model treats as one step, and never talks to the store except through them.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// The `_primary_term` and `_seq_no` of a write: what `if_primary_term`/`if_seq_no` compare,
/// and the fencing token of the lock grant that made it. Ordered term first (a later primary's
/// writes are newer whatever their sequence numbers), then sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    /// `_primary_term`: raised when another shard copy becomes primary.
    pub primary_term: u64,
    /// `_seq_no`: raised by every write to the shard.
    pub seq_no: u64,
}

impl fmt::Display for Token {
    /// `seq 3/term 1`, as the model's traces print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seq {}/term {}", self.seq_no, self.primary_term)
    }
}

/// The `result` of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteResult {
    /// `created`: the document did not exist (a `_create`, or an upsert's insert).
    Created,
    /// `updated`: an existing document was replaced (a script ran).
    Updated,
    /// `deleted`.
    Deleted,
    /// A script set `ctx.op = 'noop'`: nothing changed (the token is the document's).
    Noop,
    /// A `DELETE` without `if_seq_no` found nothing (HTTP 404 with `"result": "not_found"`).
    NotFound,
}

impl WriteResult {
    /// Parses the `result` field.
    pub fn from_name(s: &str) -> Option<WriteResult> {
        Some(match s {
            "created" => WriteResult::Created,
            "updated" => WriteResult::Updated,
            "deleted" => WriteResult::Deleted,
            "noop" => WriteResult::Noop,
            "not_found" => WriteResult::NotFound,
            _ => return None,
        })
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

/// A write's answer: its `result` and the `_seq_no`/`_primary_term` it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Written {
    /// What the write did.
    pub result: WriteResult,
    /// The `_seq_no`/`_primary_term` the answer reports.
    pub token: Token,
}

/// A document as `GET <index>/_doc/<id>` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doc {
    /// `_source`.
    pub source: Value,
    /// `_seq_no`/`_primary_term`.
    pub token: Token,
}

/// A stored script call: `{"id": .., "params": ..}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredScript {
    /// The stored script's id (`lease-acquire`).
    pub id: &'static str,
    /// Its `params`.
    pub params: Value,
    /// Whether an upsert of a missing document runs this script too (`"scripted_upsert":
    /// true`, on an empty `_source`) instead of inserting the `upsert` body as it stands.
    pub scripted_upsert: bool,
}

/// The rest of a [`StoreError::Rejected`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refusal {
    /// `error.reason`, then each `caused_by` reason.
    pub reason: String,
    /// The value a stored script handed to painless `Debug.explain`, when (and only when) the
    /// body has Elasticsearch's shape for it: `illegal_argument_exception` caused by a
    /// `script_exception` ("runtime error", the value in its `to_string`) caused by a
    /// `painless_explain_error`. The recipes' scripts refuse this way; any other 400 (a
    /// compile error, stored scripts disabled, a mapping error) has `None` here.
    pub explained: Option<String>,
    /// The answer's body as received (at most 300 characters), quoted by error messages.
    pub body: String,
}

/// Why a request did not give an answer of the recipe's kind. `request` names the method and
/// URL (`POST http://127.0.0.1:9200/files-lock/_update/1`) in every case.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The store answered with an error status: 409 `version_conflict_engine_exception`, 404
    /// `document_missing_exception`, 400 from a script that threw, ...
    Rejected {
        /// Method and URL.
        request: String,
        /// The HTTP status.
        status: u16,
        /// `error.type` of the answer.
        error_type: String,
        /// `error.reason` and what a stored script explained, and the body as received (boxed:
        /// errors stay small).
        detail: Box<Refusal>,
    },
    /// The request was (or may have been) sent and no answer came: a timeout, a connection
    /// reset, a 5xx from a proxy. Applied or not, nobody knows — the model's lost reply. The
    /// recipe sends the same request again.
    OutcomeUnknown {
        /// Method and URL.
        request: String,
        /// What happened (the transport's error).
        detail: String,
    },
    /// The request could not be sent (connection refused, unknown host, connect timeout): not
    /// applied. The recipe treats it like a timeout.
    Unreachable {
        /// Method and URL.
        request: String,
        /// What happened (the transport's error).
        detail: String,
    },
    /// The TLS connection failed: no TLS support built in (an `https://` URL needs the
    /// `docstore-tls` feature), a handshake that failed, a certificate the client does not
    /// trust. Not a lost reply: sending again cannot heal it, so nothing retries it (issue #35:
    /// it read as "no answer" and was sent again until the timeout).
    Tls {
        /// Method and URL.
        request: String,
        /// What happened (the transport's error).
        detail: String,
    },
    /// An answer this client cannot read (not JSON, missing `_seq_no`, an unexpected status).
    BadResponse {
        /// Method and URL.
        request: String,
        /// The HTTP status.
        status: u16,
        /// What could not be read.
        detail: String,
    },
}

impl StoreError {
    /// The HTTP status of an answer (`None`: no answer).
    pub fn status(&self) -> Option<u16> {
        match self {
            StoreError::Rejected { status, .. } | StoreError::BadResponse { status, .. } => {
                Some(*status)
            }
            _ => None,
        }
    }

    /// Whether no answer came ([`StoreError::OutcomeUnknown`], [`StoreError::Unreachable`]):
    /// the recipe sends the request again.
    pub fn no_answer(&self) -> bool {
        matches!(
            self,
            StoreError::OutcomeUnknown { .. } | StoreError::Unreachable { .. }
        )
    }

    /// 409 `version_conflict_engine_exception`.
    pub fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }

    /// The value a script handed to `Debug.explain`, if this is Elasticsearch's 400 for it.
    pub fn explained(&self) -> Option<&str> {
        match self {
            StoreError::Rejected {
                status: 400,
                detail,
                ..
            } => detail.explained.as_deref(),
            _ => None,
        }
    }

    /// Whether a stored script refused with exactly `message` (`Debug.explain(message)`): the
    /// only 400 the recipes read as "held" or "fenced". Any other 400 is an error.
    pub fn explains(&self, message: &str) -> bool {
        self.explained() == Some(message)
    }

    /// The request line (`POST http://…/files-lock/_update/1`).
    pub fn request(&self) -> &str {
        match self {
            StoreError::Rejected { request, .. }
            | StoreError::OutcomeUnknown { request, .. }
            | StoreError::Unreachable { request, .. }
            | StoreError::Tls { request, .. }
            | StoreError::BadResponse { request, .. } => request,
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Rejected {
                request,
                status,
                error_type,
                detail,
            } => {
                write!(f, "{request}: {status} {error_type}: {}", detail.reason)?;
                if detail.body.is_empty() {
                    Ok(())
                } else {
                    write!(f, "; the answer was: {}", detail.body)
                }
            }
            StoreError::OutcomeUnknown { request, detail } => write!(
                f,
                "{request}: no answer ({detail}); the request may or may not have been applied"
            ),
            StoreError::Unreachable { request, detail } => {
                write!(f, "{request}: store unreachable ({detail}); not sent")
            }
            StoreError::Tls { request, detail } => write!(f, "{request}: TLS failed ({detail})"),
            StoreError::BadResponse {
                request,
                status,
                detail,
            } => write!(f, "{request}: unexpected answer (HTTP {status}): {detail}"),
        }
    }
}

impl StoreError {
    /// What to do about it, in one sentence (`None` where there is nothing to add): kept out
    /// of the message, as [`super::DocLockError::advice`].
    pub fn advice(&self) -> Option<&'static str> {
        match self {
            StoreError::Tls { .. } => Some(
                "an https URL needs the docstore-tls feature and a server certificate the \
                 client trusts (the public web roots: a CA of your own is not supported yet)",
            ),
            StoreError::Unreachable { .. } => {
                Some("check the store's URL and that the cluster is up")
            }
            StoreError::OutcomeUnknown { .. } => Some(
                "read the lock document before acting again: the request may have been applied",
            ),
            StoreError::Rejected { .. } | StoreError::BadResponse { .. } => None,
        }
    }
}

impl std::error::Error for StoreError {}

/// The requests the recipes send, one method each. Each call is one atomic step of the model;
/// see the module docs for the contract.
pub trait DocStore: Send + Sync {
    /// `POST _scripts/<id> {"script": {"lang": "painless", "source": ..}}`.
    ///
    /// # Errors
    /// The store's refusal, or no answer.
    fn put_script(&self, id: &str, source: &str) -> Result<(), StoreError>;

    /// `GET _scripts/<id>`: the stored source (`None`: no such script). The default answers
    /// that this store does not serve it (only [`crate::docstore::LeaseLock::verify_scripts`]
    /// asks).
    ///
    /// # Errors
    /// The store's refusal, or no answer.
    fn get_script(&self, id: &str) -> Result<Option<String>, StoreError> {
        Err(StoreError::BadResponse {
            request: format!("GET _scripts/{id}"),
            status: 0,
            detail: "this store does not serve stored scripts' sources".to_owned(),
        })
    }

    /// `PUT <index>/_create/<id>` with `source`: put-if-absent (409 if present).
    ///
    /// # Errors
    /// [`StoreError::Rejected`] 409 if the document exists; no answer.
    fn create(&self, index: &str, id: &str, source: &Value) -> Result<Written, StoreError>;

    /// `POST <index>/_update/<id> {"script": .., "upsert": ..}`: inserts `upsert` (without
    /// running the script) if the document is absent, runs the stored script otherwise.
    ///
    /// # Errors
    /// 400 if the script threw; 409 if a concurrent write raced the update; no answer.
    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        upsert: &Value,
    ) -> Result<Written, StoreError>;

    /// `POST <index>/_update/<id> {"script": ..}`: runs the stored script on the document.
    ///
    /// # Errors
    /// 404 `document_missing_exception`; 400 if the script threw; 409; no answer.
    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
    ) -> Result<Written, StoreError>;

    /// `POST <index>/_update/<id>?if_seq_no=S&if_primary_term=T {"script": ..}`: runs the
    /// stored script only if the document still carries `token` (used by
    /// `LeaseGuard::renew`; no model step). The default answers that this store does not serve
    /// it.
    ///
    /// # Errors
    /// 409 if the document's token is another; 404 if it is missing; 400 if the script threw;
    /// no answer.
    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        token: Token,
    ) -> Result<Written, StoreError> {
        let _ = (script, token);
        Err(StoreError::BadResponse {
            request: format!("POST {index}/_update/{id}?if_seq_no&if_primary_term"),
            status: 0,
            detail: "this store does not serve conditional updates (`renew` needs them)".to_owned(),
        })
    }

    /// `POST <index>/_update/<id> {"doc": ..}`: merges a partial document (the blog's unfenced
    /// data write; only the deliberately broken `Writes::Unfenced` sends it).
    ///
    /// # Errors
    /// 404 `document_missing_exception`; 409; no answer.
    fn update_doc(&self, index: &str, id: &str, doc: &Value) -> Result<Written, StoreError>;

    /// `DELETE <index>/_doc/<id>?if_seq_no=S&if_primary_term=T`: compare-and-delete.
    ///
    /// # Errors
    /// 409 unless the document exists with exactly this token; no answer.
    fn delete_if_seq_no(&self, index: &str, id: &str, token: Token) -> Result<Written, StoreError>;

    /// `DELETE <index>/_doc/<id>`: 200 `deleted`, or 404 `not_found` (an answer, not an error).
    ///
    /// # Errors
    /// No answer; another refusal.
    fn delete(&self, index: &str, id: &str) -> Result<Written, StoreError>;

    /// `GET <index>/_doc/<id>` (realtime): the document, or `None` (404).
    ///
    /// # Errors
    /// No answer; another refusal.
    fn get(&self, index: &str, id: &str) -> Result<Option<Doc>, StoreError>;

    /// The clock leases are measured on: milliseconds since the Unix epoch (production: the
    /// system clock; the checks: a simulated clock that faults advance).
    fn now(&self) -> u64;

    /// Waits `d` before the next attempt of a blocking acquire (production: the thread sleeps;
    /// the checks: a scheduling point, no time passes).
    fn sleep(&self, d: Duration);
}

impl<S: DocStore + ?Sized> DocStore for std::sync::Arc<S> {
    fn get_script(&self, id: &str) -> Result<Option<String>, StoreError> {
        (**self).get_script(id)
    }

    fn put_script(&self, id: &str, source: &str) -> Result<(), StoreError> {
        (**self).put_script(id, source)
    }
    fn create(&self, index: &str, id: &str, source: &Value) -> Result<Written, StoreError> {
        (**self).create(index, id, source)
    }
    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        upsert: &Value,
    ) -> Result<Written, StoreError> {
        (**self).upsert_with_script(index, id, script, upsert)
    }
    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
    ) -> Result<Written, StoreError> {
        (**self).update_with_script(index, id, script)
    }
    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        token: Token,
    ) -> Result<Written, StoreError> {
        (**self).update_with_script_if(index, id, script, token)
    }
    fn update_doc(&self, index: &str, id: &str, doc: &Value) -> Result<Written, StoreError> {
        (**self).update_doc(index, id, doc)
    }
    fn delete_if_seq_no(&self, index: &str, id: &str, token: Token) -> Result<Written, StoreError> {
        (**self).delete_if_seq_no(index, id, token)
    }
    fn delete(&self, index: &str, id: &str) -> Result<Written, StoreError> {
        (**self).delete(index, id)
    }
    fn get(&self, index: &str, id: &str) -> Result<Option<Doc>, StoreError> {
        (**self).get(index, id)
    }
    fn now(&self) -> u64 {
        (**self).now()
    }
    fn sleep(&self, d: Duration) {
        (**self).sleep(d)
    }
}
