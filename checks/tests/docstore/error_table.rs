//! Every answer the document-store client can meet, for each request of the lock, classified:
//! one table, each row driven through the production client (`HttpStore`'s classification in
//! `impl/src/docstore/http.rs`, then `LeaseLock`/`LeaseGuard`'s reading of it) against the
//! loopback store answering that row.
//!
//! The loopback server answers a scripted status and body without applying the request
//! (`LoopbackServer::answer_next`), a head promising more body than comes
//! (`truncate_next`), or the request applied but answered too late (`lose_next_reply`). A
//! refused connection is a port nobody listens on; a reset one is a listener that reads the
//! request and closes the connection. For a guard's requests (fenced write, release) the lock
//! is built over `Switch`, two production `HttpStore`s behind one `DocStore`: the guard is
//! taken through the loopback server, then its next request goes to the refused or resetting
//! address.
//!
//! The oracle besides the outcome is the store itself: after a scripted answer (not applied)
//! that the lock reads as "held" or an error, no lease document exists; after a fenced write
//! read as anything but "written", the data document still has no writer.
//!
//! The same rows, rendered, are the section "Every answer, classified" of `docs/docstore.md`;
//! `the_docs_table_is_this_table` fails when they differ (set
//! `LOCKWRIGHT_UPDATE_ERROR_TABLES=1` to rewrite it).
//!
//! A 400 is "held" (acquire) or "fenced" (fenced write) only when its body is Elasticsearch's
//! `Debug.explain` shape carrying the request's own script's message; every other 400 (another
//! explained value, a compile error, stored scripts disabled, a mapping error, a parse error)
//! is an error whose message names the request and quotes the body (`names_and_quotes`).
//! Before the body check, the client read any 400 as held/fenced/not-owner: fail-closed, but a broken
//! lock reported as a busy one.
//!
//! Flipped by hand (each made rows fail, then was reverted): 5xx read as an answer instead of
//! "no answer" in `http.rs`'s `exchange` (the 500/502/503/504 rows fail); the fenced write's
//! refusal test `explains(STALE_TOKEN)` widened back to "any 400" (the five other-400 rows of
//! the fenced write fail); the acquire's test `explains(LEASE_HELD)` loosened to "any explained
//! value" (the acquire's other-explain row fails); `http.rs`'s `explained` no longer requiring
//! the `painless_explain_error` cause and "runtime error" (a compile-error body carrying a
//! `to_string` read as held; kept as the unit test `only_the_explain_shape_gives_a_value`); the
//! acquire's "held" widened to 429 (its row fails).

use crate::docstore_bodies;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use lockwright::docstore::testing::Pc;
use lockwright::docstore::{
    Doc, DocLockError, DocStore, HttpStore, LeaseLock, StoreError, StoredScript, Token, Written,
    DEFAULT_ATTEMPTS,
};
use lockwright_testkit::docstore::LoopbackServer;
use serde_json::json;

const LOCKS: &str = "files-lock";
/// How late a "lost" reply comes: past the client's 1 s timeout.
const LATE: Duration = Duration::from_millis(2_500);

// The 400 bodies, with where their shapes come from: `checks/tests/docstore/docstore_bodies/mod.rs`.
use docstore_bodies::{
    COMPILE_ERROR_BODY, LEASE_HELD_BODY, MAPPING_BODY, OTHER_EXPLAIN_BODY, STALE_TOKEN_BODY,
    STORED_OFF_BODY,
};

/// What the store answers the row's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// The request applied and answered (2xx).
    Applied,
    /// 2xx whose body is not JSON (a proxy's page).
    OkNotJson,
    /// 400 in Elasticsearch's `Debug.explain` shape with the request's own script's message
    /// (the lease is held / the token is stale).
    Script400,
    /// 400 in the `Debug.explain` shape, but another message (not this recipe's script).
    OtherExplain400,
    /// 400 `script_exception` "compile error" (the stored script does not compile).
    Compile400,
    /// 400: stored scripts are disabled (`script.allowed_types: inline`).
    StoredOff400,
    /// 400 `mapper_parsing_exception` (the lock index maps a field with another type).
    Mapping400,
    /// 400: the request could not be parsed.
    Parse400,
    Unauthorized401,
    Forbidden403,
    /// 404 `document_missing_exception`.
    Missing404,
    /// 409 `version_conflict_engine_exception`.
    Conflict409,
    /// 429 `es_rejected_execution_exception`.
    TooMany429,
    Internal500,
    /// 502 from a proxy, not JSON.
    BadGateway502,
    /// 503 `unavailable_shards_exception`.
    Unavailable503,
    /// 504 from a proxy, not JSON.
    GatewayTimeout504,
    /// Applied, answered after the client's timeout.
    Timeout,
    /// The head promises more body than comes (not applied).
    Truncated,
    /// Nobody listens on the port.
    Refused,
    /// The connection is closed once the request is read.
    Reset,
}

impl Answer {
    const ALL: [Answer; 21] = [
        Answer::Applied,
        Answer::OkNotJson,
        Answer::Script400,
        Answer::OtherExplain400,
        Answer::Compile400,
        Answer::StoredOff400,
        Answer::Mapping400,
        Answer::Parse400,
        Answer::Unauthorized401,
        Answer::Forbidden403,
        Answer::Missing404,
        Answer::Conflict409,
        Answer::TooMany429,
        Answer::Internal500,
        Answer::BadGateway502,
        Answer::Unavailable503,
        Answer::GatewayTimeout504,
        Answer::Timeout,
        Answer::Truncated,
        Answer::Refused,
        Answer::Reset,
    ];

    fn text(self) -> &'static str {
        match self {
            Answer::Applied => "2xx (applied)",
            Answer::OkNotJson => "2xx, body not JSON",
            Answer::Script400 => {
                "400 `illegal_argument_exception` ← `script_exception` ← `painless_explain_error`, the script's own message"
            }
            Answer::OtherExplain400 => "400 `painless_explain_error`, another message",
            Answer::Compile400 => "400 `script_exception` \"compile error\"",
            Answer::StoredOff400 => "400 `illegal_argument_exception` \"cannot execute [stored] scripts\"",
            Answer::Mapping400 => "400 `mapper_parsing_exception`",
            Answer::Parse400 => "400 `x_content_parse_exception`",
            Answer::Unauthorized401 => "401 `security_exception`",
            Answer::Forbidden403 => "403 `security_exception`",
            Answer::Missing404 => "404 `document_missing_exception`",
            Answer::Conflict409 => "409 `version_conflict_engine_exception`",
            Answer::TooMany429 => "429 `es_rejected_execution_exception`",
            Answer::Internal500 => "500",
            Answer::BadGateway502 => "502 (proxy, not JSON)",
            Answer::Unavailable503 => "503 `unavailable_shards_exception`",
            Answer::GatewayTimeout504 => "504 (proxy, not JSON)",
            Answer::Timeout => "timeout (applied, answered late)",
            Answer::Truncated => "truncated body",
            Answer::Refused => "connection refused",
            Answer::Reset => "connection closed after the request",
        }
    }

    /// Arms the loopback server for the next request of `request`.
    fn arm(self, server: &LoopbackServer, request: Request) {
        let body = match self {
            Answer::OkNotJson => (200, "<html>ok</html>"),
            Answer::Script400 if request == Request::FencedWrite => (400, STALE_TOKEN_BODY),
            Answer::Script400 => (400, LEASE_HELD_BODY),
            Answer::OtherExplain400 => (400, OTHER_EXPLAIN_BODY),
            Answer::Compile400 => (400, COMPILE_ERROR_BODY),
            Answer::StoredOff400 => (400, STORED_OFF_BODY),
            Answer::Mapping400 => (400, MAPPING_BODY),
            Answer::Parse400 => (
                400,
                r#"{"error":{"type":"x_content_parse_exception","reason":"[1:2] Unexpected character"},"status":400}"#,
            ),
            Answer::Unauthorized401 => (
                401,
                r#"{"error":{"type":"security_exception","reason":"missing authentication credentials"},"status":401}"#,
            ),
            Answer::Forbidden403 => (
                403,
                r#"{"error":{"type":"security_exception","reason":"action is unauthorized"},"status":403}"#,
            ),
            Answer::Missing404 => (
                404,
                r#"{"error":{"type":"document_missing_exception","reason":"document missing"},"status":404}"#,
            ),
            Answer::Conflict409 => (
                409,
                r#"{"error":{"type":"version_conflict_engine_exception","reason":"version conflict"},"status":409}"#,
            ),
            Answer::TooMany429 => (
                429,
                r#"{"error":{"type":"es_rejected_execution_exception","reason":"rejected execution"},"status":429}"#,
            ),
            Answer::Internal500 => (
                500,
                r#"{"error":{"type":"exception","reason":"internal"},"status":500}"#,
            ),
            Answer::BadGateway502 => (502, "<html>bad gateway</html>"),
            Answer::Unavailable503 => (
                503,
                r#"{"error":{"type":"unavailable_shards_exception","reason":"primary shard is not active"},"status":503}"#,
            ),
            Answer::GatewayTimeout504 => (504, "<html>gateway timeout</html>"),
            Answer::Timeout => return server.lose_next_reply(LATE),
            Answer::Truncated => return server.truncate_next(200),
            Answer::Applied | Answer::Refused | Answer::Reset => return,
        };
        server.answer_next(body.0, body.1);
    }
}

/// The lock's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Request {
    /// `try_acquire`: `POST <locks>/_update/1` (`lease-acquire` script, no `upsert`).
    Acquire,
    /// `fenced_write`: `POST files/_update/1?if_seq_no=..&if_primary_term=..` (`fenced-write`
    /// script with the token, conditioned on the session's read).
    FencedWrite,
    /// `release`: `POST <locks>/_update/1?if_seq_no=..&if_primary_term=..` (`lease-release`).
    Release,
}

impl Request {
    fn text(self) -> &'static str {
        match self {
            Request::Acquire => "acquire (`POST _update`, script, no upsert)",
            Request::FencedWrite => "fenced write (`POST _update ?if_seq_no`, script + token)",
            Request::Release => "release (`POST _update ?if_seq_no`, `lease-release`)",
        }
    }
}

fn store(url: &str) -> HttpStore {
    HttpStore::with_timeouts(url, Duration::from_millis(500), Duration::from_secs(1))
}

fn lease_lock(url: &str) -> LeaseLock<HttpStore> {
    LeaseLock::new(store(url), LOCKS, "1", Duration::from_secs(30)).with_owner("owner-a")
}

/// Two production HTTP stores behind one `DocStore`: the loopback server's, and (once
/// `switch` is set) one at another address — refused or reset — so that a guard taken through
/// the first meets the second at its next request. Every request still goes through
/// `HttpStore`'s own classification.
struct Switch {
    good: HttpStore,
    bad: HttpStore,
    switched: AtomicBool,
}

impl Switch {
    fn now(&self) -> &HttpStore {
        if self.switched.load(Ordering::SeqCst) {
            &self.bad
        } else {
            &self.good
        }
    }
}

impl DocStore for Switch {
    fn put_script(&self, id: &str, source: &str) -> Result<(), StoreError> {
        self.now().put_script(id, source)
    }
    fn create(&self, index: &str, id: &str, source: &Value) -> Result<Written, StoreError> {
        self.now().create(index, id, source)
    }
    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        upsert: &Value,
    ) -> Result<Written, StoreError> {
        self.now().upsert_with_script(index, id, script, upsert)
    }
    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
    ) -> Result<Written, StoreError> {
        self.now().update_with_script(index, id, script)
    }
    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        token: Token,
    ) -> Result<Written, StoreError> {
        self.now().update_with_script_if(index, id, script, token)
    }
    fn update_doc(&self, index: &str, id: &str, doc: &Value) -> Result<Written, StoreError> {
        self.now().update_doc(index, id, doc)
    }
    fn delete_if_seq_no(&self, index: &str, id: &str, token: Token) -> Result<Written, StoreError> {
        self.now().delete_if_seq_no(index, id, token)
    }
    fn delete(&self, index: &str, id: &str) -> Result<Written, StoreError> {
        self.now().delete(index, id)
    }
    fn get(&self, index: &str, id: &str) -> Result<Option<Doc>, StoreError> {
        self.now().get(index, id)
    }
    fn now(&self) -> u64 {
        DocStore::now(&self.good)
    }
    fn sleep(&self, d: Duration) {
        self.good.sleep(d);
    }
}

/// A URL nobody listens on.
fn refused_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port();
    format!("http://127.0.0.1:{port}")
}

/// A listener that reads each request's first bytes and closes the connection.
fn resetting_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}", l.local_addr().expect("address"));
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
        }
    });
    url
}

fn store_error_text(e: &StoreError) -> &'static str {
    match e {
        StoreError::OutcomeUnknown { .. } => "outcome unknown",
        StoreError::Unreachable { .. } => "not sent",
        StoreError::Rejected { .. } => "rejected",
        StoreError::BadResponse { .. } => "bad response",
        _ => "other",
    }
}

/// How many requests the server saw whose line starts with `prefix`.
fn sent(server: &LoopbackServer, prefix: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.starts_with(prefix))
        .count()
}

/// Whether the lock document holds a lease (the installed document alone is a free `{}`).
fn lease_exists(server: &LoopbackServer) -> bool {
    server
        .service()
        .get(LOCKS, "1")
        .is_some_and(|d| d.source.owner().is_some())
}

fn data_written(server: &LoopbackServer) -> bool {
    server
        .service()
        .get("files", "1")
        .is_some_and(|d| d.source.fence().is_some())
}

impl Answer {
    /// Whether this is a 400 that is not the recipe's own script refusing.
    fn other_400(self) -> bool {
        matches!(
            self,
            Answer::OtherExplain400
                | Answer::Compile400
                | Answer::StoredOff400
                | Answer::Mapping400
                | Answer::Parse400
        )
    }
}

/// For a 400 that is not the script's refusal: the error must name the request (method and
/// URL) and quote the body the store sent.
fn names_and_quotes(
    answer: Answer,
    request: Request,
    e: Option<&DocLockError>,
) -> Result<(), String> {
    if !answer.other_400() {
        return Ok(());
    }
    let Some(e) = e else {
        return Err("a 400 was not an error".to_owned());
    };
    let text = crate::chain(&e);
    let line = match request {
        Request::Acquire => "POST http://127.0.0.1",
        Request::FencedWrite => "POST http://127.0.0.1",
        Request::Release => "POST http://127.0.0.1",
    };
    let body = match answer {
        Answer::OtherExplain400 => OTHER_EXPLAIN_BODY,
        Answer::Compile400 => COMPILE_ERROR_BODY,
        Answer::StoredOff400 => STORED_OFF_BODY,
        Answer::Mapping400 => MAPPING_BODY,
        _ => r#"{"error":{"type":"x_content_parse_exception""#,
    };
    let quoted: String = body.chars().take(60).collect();
    if text.contains(line) && text.contains(&quoted) {
        Ok(())
    } else {
        Err(format!(
            "the error does not name {line:?} and quote {quoted:?}: {text}"
        ))
    }
}

/// Runs one row; the outcome as the docs word it, or `Err` naming a broken promise.
fn run(request: Request, answer: Answer) -> Result<String, String> {
    let server = LoopbackServer::start();
    let url = match answer {
        Answer::Refused => refused_url(),
        Answer::Reset => resetting_url(),
        _ => server.url(),
    };
    // The guard's lock: through the loopback server until `switched`, then through `url`.
    let setup = LeaseLock::new(
        Switch {
            good: store(&server.url()),
            bad: store(&url),
            switched: AtomicBool::new(false),
        },
        LOCKS,
        "1",
        Duration::from_secs(30),
    )
    .with_owner("owner-a");
    lockwright_testkit::docstore::install_fresh(&setup).map_err(|e| e.to_string())?;
    let lock = lease_lock(&url);
    let scripted = !matches!(answer, Answer::Applied | Answer::Timeout);
    match request {
        Request::Acquire => {
            answer.arm(&server, request);
            let got = lock.try_acquire();
            let sends = sent(&server, "POST /files-lock/_update/1");
            let o = match &got {
                Ok(_) if sends > 1 => "retried, then acquired".to_string(),
                Ok(_) => "acquired".to_string(),
                Err(DocLockError::Held { .. }) => "held".to_string(),
                // What `acquire` waits out and tries again: no answer, or a 409 from `_update`.
                Err(DocLockError::Store { source, .. })
                    if source.no_answer() || source.is_conflict() =>
                {
                    format!(
                        "error (`Store`, {}) after {} send(s); `acquire` tries again",
                        store_error_text(source),
                        DEFAULT_ATTEMPTS
                    )
                }
                Err(DocLockError::Store { source, .. }) => {
                    format!("error (`Store`, {})", store_error_text(source))
                }
                Err(e) => return Err(format!("unexpected: {e}")),
            };
            names_and_quotes(answer, request, got.as_ref().err())?;
            if got.is_err() && scripted && lease_exists(&server) {
                return Err(format!("{o}, but a lease document exists"));
            }
            Ok(o)
        }
        Request::FencedWrite | Request::Release => {
            let mut g = setup.try_acquire().map_err(|e| format!("acquire: {e}"))?;
            if request == Request::FencedWrite {
                // The session's read first, so that the armed answer meets the write itself.
                g.read("files", "1").map_err(|e| format!("read: {e}"))?;
            }
            answer.arm(&server, request);
            if matches!(answer, Answer::Refused | Answer::Reset) {
                setup.store().switched.store(true, Ordering::SeqCst);
            }
            if request == Request::FencedWrite {
                let got = g.fenced_write("files", "1", &json!({"name": "report.pdf"}));
                let o = match &got {
                    Ok(_) => "written".to_string(),
                    Err(DocLockError::Fenced { .. }) if g.pc() == Pc::Releasing => {
                        "fenced: the lock is lost, release it".to_string()
                    }
                    Err(DocLockError::Store { source, .. }) if g.pc() == Pc::Holding => {
                        format!(
                            "error (`Store`, {}), still holding",
                            store_error_text(source)
                        )
                    }
                    Err(e) => return Err(format!("unexpected: {e} at {:?}", g.pc())),
                };
                names_and_quotes(answer, request, got.as_ref().err())?;
                if got.is_err() && scripted && data_written(&server) {
                    return Err(format!("{o}, but the data document was written"));
                }
                Ok(o)
            } else {
                let got = g.release();
                let sends = sent(&server, "POST /files-lock/_update/1?if_seq_no");
                let o = match &got {
                    Ok(()) if sends > 1 => "retried, then released".to_string(),
                    Ok(()) => "released".to_string(),
                    Err(DocLockError::NotOwner { .. }) if sends > 1 => {
                        "retried; the retry finds it gone: `NotOwner`".to_string()
                    }
                    Err(DocLockError::NotOwner { .. }) => "`NotOwner`".to_string(),
                    Err(DocLockError::Store { source, .. }) => {
                        format!("error (`Store`, {})", store_error_text(source))
                    }
                    Err(e) => return Err(format!("unexpected: {e}")),
                };
                names_and_quotes(answer, request, got.as_ref().err())?;
                if got.is_err() && scripted && !lease_exists(&server) {
                    return Err(format!("{o}, but the lease document is gone"));
                }
                Ok(o)
            }
        }
    }
}

/// The table: (request, answer, outcome). `None`: not run (see the module docs).
fn rows() -> Vec<(Request, Answer, Option<&'static str>)> {
    use Answer as A;
    use Request as R;
    let acquire = [
        (A::Applied, "acquired"),
        (A::OkNotJson, "error (`Store`, bad response)"),
        (A::Script400, "held"),
        (A::OtherExplain400, "error (`Store`, rejected)"),
        (A::Compile400, "error (`Store`, rejected)"),
        (A::StoredOff400, "error (`Store`, rejected)"),
        (A::Mapping400, "error (`Store`, rejected)"),
        (A::Parse400, "error (`Store`, rejected)"),
        (A::Unauthorized401, "error (`Store`, rejected)"),
        (A::Forbidden403, "error (`Store`, rejected)"),
        (A::Missing404, "error (`Store`, rejected)"),
        (
            A::Conflict409,
            "error (`Store`, rejected) after 1 send(s); `acquire` tries again",
        ),
        (A::TooMany429, "error (`Store`, rejected)"),
        (
            A::Internal500,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
        (
            A::BadGateway502,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
        (
            A::Unavailable503,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
        (
            A::GatewayTimeout504,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
        (
            A::Timeout,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
        (
            A::Truncated,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
        (
            A::Refused,
            "error (`Store`, not sent) after 1 send(s); `acquire` tries again",
        ),
        (
            A::Reset,
            "error (`Store`, outcome unknown) after 1 send(s); `acquire` tries again",
        ),
    ];
    let write = [
        (A::Applied, "written"),
        (A::OkNotJson, "error (`Store`, bad response), still holding"),
        (A::Script400, "fenced: the lock is lost, release it"),
        (
            A::OtherExplain400,
            "error (`Store`, rejected), still holding",
        ),
        (A::Compile400, "error (`Store`, rejected), still holding"),
        (A::StoredOff400, "error (`Store`, rejected), still holding"),
        (A::Mapping400, "error (`Store`, rejected), still holding"),
        (A::Parse400, "error (`Store`, rejected), still holding"),
        (
            A::Unauthorized401,
            "error (`Store`, rejected), still holding",
        ),
        (A::Forbidden403, "error (`Store`, rejected), still holding"),
        (A::Missing404, "error (`Store`, rejected), still holding"),
        (A::Conflict409, "error (`Store`, rejected), still holding"),
        (A::TooMany429, "error (`Store`, rejected), still holding"),
        (
            A::Internal500,
            "error (`Store`, outcome unknown), still holding",
        ),
        (
            A::BadGateway502,
            "error (`Store`, outcome unknown), still holding",
        ),
        (
            A::Unavailable503,
            "error (`Store`, outcome unknown), still holding",
        ),
        (
            A::GatewayTimeout504,
            "error (`Store`, outcome unknown), still holding",
        ),
        (
            A::Timeout,
            "error (`Store`, outcome unknown), still holding",
        ),
        (
            A::Truncated,
            "error (`Store`, outcome unknown), still holding",
        ),
        (A::Refused, "error (`Store`, not sent), still holding"),
        (A::Reset, "error (`Store`, outcome unknown), still holding"),
    ];
    let release = [
        (A::Applied, "released"),
        (A::OkNotJson, "error (`Store`, bad response)"),
        (A::Script400, "error (`Store`, rejected)"),
        (A::OtherExplain400, "error (`Store`, rejected)"),
        (A::Compile400, "error (`Store`, rejected)"),
        (A::StoredOff400, "error (`Store`, rejected)"),
        (A::Mapping400, "error (`Store`, rejected)"),
        (A::Parse400, "error (`Store`, rejected)"),
        (A::Unauthorized401, "error (`Store`, rejected)"),
        (A::Forbidden403, "error (`Store`, rejected)"),
        (A::Missing404, "`NotOwner`"),
        (A::Conflict409, "`NotOwner`"),
        (A::TooMany429, "error (`Store`, rejected)"),
        (A::Internal500, "error (`Store`, outcome unknown)"),
        (A::BadGateway502, "error (`Store`, outcome unknown)"),
        (A::Unavailable503, "error (`Store`, outcome unknown)"),
        (A::GatewayTimeout504, "error (`Store`, outcome unknown)"),
        (A::Timeout, "error (`Store`, outcome unknown)"),
        (A::Truncated, "error (`Store`, outcome unknown)"),
        (A::Refused, "error (`Store`, not sent)"),
        (A::Reset, "error (`Store`, outcome unknown)"),
    ];
    let mut rows = Vec::new();
    for (req, table) in [
        (R::Acquire, &acquire[..]),
        (R::FencedWrite, &write[..]),
        (R::Release, &release[..]),
    ] {
        for a in Answer::ALL {
            let o = table.iter().find(|(x, _)| *x == a).map(|(_, o)| *o);
            rows.push((req, a, o));
        }
    }
    rows
}

fn render() -> String {
    let mut out = String::from("| request | answer | outcome |\n|---|---|---|\n");
    for (req, a, o) in rows() {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            req.text(),
            a.text(),
            o.unwrap_or("not run: a guard's store cannot be pointed at another address")
        ));
    }
    out
}

#[test]
fn every_answer_shows_its_outcome_through_the_production_client() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (req, a, want) in rows() {
        let Some(want) = want else { continue };
        ran += 1;
        match run(req, a) {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!(
                "{req:?} × {a:?}: got {got:?}, the table says {want:?}"
            )),
            Err(e) => failures.push(format!("{req:?} × {a:?}: {e}")),
        }
    }
    assert!(failures.is_empty(), "rows differ:\n{}", failures.join("\n"));
    // Pinned: 21 answers for each of the three requests (63). It was 59 when a guard's store
    // could not meet a refused or reset connection (the fenced write's and the release's
    // rows for those two were not run); 47 before the four 400s besides the script's refusal.
    assert_eq!(ran, 63);
}

const BEGIN: &str = "<!-- error table: generated from checks/tests/docstore/error_table.rs -->\n";
const END: &str = "<!-- end of error table -->\n";

#[test]
fn the_docs_table_is_this_table() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/docstore.md");
    let text = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
    let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else {
        panic!(
            "{}: no error table markers ({BEGIN:?} ... {END:?})",
            doc.display()
        );
    };
    let fresh = render();
    if text[a + BEGIN.len()..b] == fresh {
        return;
    }
    if std::env::var_os("LOCKWRIGHT_UPDATE_ERROR_TABLES").is_some() {
        let updated = format!("{}{BEGIN}{fresh}{}", &text[..a], &text[b..]);
        std::fs::write(&doc, updated).expect("docs/docstore.md writable");
        return;
    }
    panic!(
        "{}: the error table is stale; rerun with LOCKWRIGHT_UPDATE_ERROR_TABLES=1\n{fresh}",
        doc.display()
    );
}
