//! [`LoopbackServer`]: the model's document-store semantics ([`Service`]) over HTTP on
//! 127.0.0.1, for testing the reference client's HTTP layer (`lockwright::docstore::HttpStore`).
//!
//! **This is not an Elasticsearch.** No Elasticsearch or OpenSearch server can be installed
//! where this project is developed. This server speaks the subset of the REST API the recipes
//! use, with the request and answer shapes of the Elasticsearch reference, and answers every
//! write with the model's semantics module — this project's reading of the documented
//! behaviour. A test that passes against it says the client's HTTP layer agrees with that
//! reading, nothing about a real cluster.
//!
//! Served: `POST /_scripts/<id>`, `PUT|POST /<index>/_create/<id>`, `POST
//! /<index>/_update/<id>` (`script` with a stored script id and params, or `doc`; `upsert`),
//! `DELETE /<index>/_doc/<id>[?if_seq_no=..&if_primary_term=..]`, `GET /<index>/_doc/<id>`.
//! Anything else, a body the model has no shape for, or a script whose stored source is not
//! the model's, is refused with a 4xx error body. A script that throws is answered with
//! Elasticsearch's body for it ([`script_error_body`]: `illegal_argument_exception` ←
//! `script_exception` "runtime error" ← `painless_explain_error`, the explained value in
//! `to_string`), and every write and read carries the document's `_version`. Faults for the client's timeout handling:
//! [`LoopbackServer::lose_next_reply`] (applied, answered too late) and
//! [`LoopbackServer::lose_next_request`] (not applied, answered too late). Scripted answers
//! for the client's error classification (`checks/tests/docstore/error_table.rs`):
//! [`LoopbackServer::answer_next`] (any status and body, not applied) and
//! [`LoopbackServer::truncate_next`] (a head that promises more body than comes).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use lockwright_model::docstore::protocol::{DATA_ID, DATA_INDEX};
use lockwright_model::docstore::store::{ScriptError, StoreError as ModelError, Token};
use serde_json::{json, Value};

use super::service::{error_parts, source_from_json, source_to_json, Answer, Op, Req, Service};

/// A fault for the next request.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Apply it, answer after this delay (longer than the client's timeout: the reply is
    /// lost).
    ReplyLost(Duration),
    /// Do not apply it; answer 500 after this delay.
    RequestLost(Duration),
    /// Do not apply it; answer this status and raw body at once.
    Answer(u16, &'static str),
    /// Do not apply it; answer this status with a `Content-Length` longer than the body sent.
    Truncated(u16),
}

#[derive(Debug, Default)]
struct Shared {
    service: Service,
    requests: Vec<String>,
    fault: Option<Fault>,
    /// Each document's `_version`: 1 at its first write, +1 at every write (a delete too; a
    /// document created again after a delete continues from its tombstone's version, as
    /// Elasticsearch does within `index.gc_deletes`). Kept here, not in the model, which has no
    /// versions.
    versions: BTreeMap<(String, String), u64>,
    /// Every request from now on is applied and answered only after this delay.
    slow: Option<Duration>,
    /// `ctx._now` as the scripts see it.
    clock: ScriptClock,
}

/// The time a script reads (`ctx._now`), as Elasticsearch serves it: not the wall clock at
/// the moment the script runs, but the node's cached time, refreshed every
/// `thread_pool.estimated_time_interval` (200 ms by default), and after a fail-over another
/// node's clock. Here: the wall clock plus a skew a test sets, cached for an interval a test
/// sets (200 ms by default, as Elasticsearch's; zero: read at every request).
#[derive(Debug)]
struct ScriptClock {
    skew_ms: i64,
    interval: Duration,
    cached: Option<(std::time::Instant, u64)>,
}

impl Default for ScriptClock {
    fn default() -> Self {
        ScriptClock {
            skew_ms: 0,
            interval: DEFAULT_CLOCK_CACHE,
            cached: None,
        }
    }
}

/// How long the loopback caches the time its scripts read, by default: Elasticsearch's
/// `thread_pool.estimated_time_interval` default.
pub const DEFAULT_CLOCK_CACHE: Duration = Duration::from_millis(200);

impl ScriptClock {
    fn now(&mut self) -> u64 {
        let at = std::time::Instant::now();
        match self.cached {
            Some((t, v)) if at.duration_since(t) < self.interval => v,
            _ => {
                let wall = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
                let v = u64::try_from(wall.saturating_add(self.skew_ms)).unwrap_or(0);
                self.cached = Some((at, v));
                v
            }
        }
    }
}

/// The loopback server; stops when dropped.
pub struct LoopbackServer {
    addr: SocketAddr,
    server: Arc<tiny_http::Server>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LoopbackServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LoopbackServer({})", self.url())
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

impl LoopbackServer {
    /// Starts a server on `127.0.0.1` (a free port) with the model's initial documents (the
    /// data document `files/1`).
    ///
    /// # Panics
    /// If no loopback port can be bound.
    pub fn start() -> LoopbackServer {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1"));
        let addr = server.server_addr().to_ip().expect("an IP listener");
        let shared = Arc::new(Mutex::new(Shared {
            service: Service::with_model_documents(None),
            versions: [((DATA_INDEX.to_owned(), DATA_ID.to_owned()), 1)].into(),
            ..Shared::default()
        }));
        let (srv, sh) = (Arc::clone(&server), Arc::clone(&shared));
        let thread = std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                serve(&sh, request);
            }
        });
        LoopbackServer {
            addr,
            server,
            shared,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A copy of the store.
    pub fn service(&self) -> Service {
        lock(&self.shared).service.clone()
    }

    /// The requests served so far (`METHOD /path?query`).
    pub fn requests(&self) -> Vec<String> {
        lock(&self.shared).requests.clone()
    }

    /// The next request is applied and answered only after `delay` (a client whose timeout is
    /// shorter sees no answer).
    pub fn lose_next_reply(&self, delay: Duration) {
        lock(&self.shared).fault = Some(Fault::ReplyLost(delay));
    }

    /// Every request from now on is applied as usual and answered only after `delay` (a slow
    /// store: a client whose timeout is shorter sees no answer). `None`: answer at once again.
    pub fn answer_slowly(&self, delay: Option<Duration>) {
        lock(&self.shared).slow = delay;
    }

    /// From now on the scripts' clock (`ctx._now`) reads the wall clock plus `skew_ms`
    /// (negative: behind), as a node whose clock is off, or another node after a fail-over.
    /// Takes effect at once (the cache is dropped).
    pub fn set_clock_skew_ms(&self, skew_ms: i64) {
        let mut sh = lock(&self.shared);
        sh.clock.skew_ms = skew_ms;
        sh.clock.cached = None;
    }

    /// How long the scripts' clock is cached ([`DEFAULT_CLOCK_CACHE`] unless set; zero: read
    /// at every request).
    pub fn set_clock_cache(&self, interval: Duration) {
        let mut sh = lock(&self.shared);
        sh.clock.interval = interval;
        sh.clock.cached = None;
    }

    /// The index `index` is deleted and created again (the model's `recreate-index`): every
    /// document in it is gone, and its `_primary_term` and `_seq_no` start again at 1 and 0.
    pub fn recreate_index(&self, index: &str) {
        let mut sh = lock(&self.shared);
        sh.service.indices.remove(index);
        sh.service.last_acknowledged = None;
    }

    /// What the scripts' clock reads now (milliseconds since the Unix epoch).
    pub fn script_now(&self) -> u64 {
        lock(&self.shared).clock.now()
    }

    /// The next request is not applied, and answered 500 only after `delay`.
    pub fn lose_next_request(&self, delay: Duration) {
        lock(&self.shared).fault = Some(Fault::RequestLost(delay));
    }

    /// The next request (whatever it is) is not applied, and answered `status` with `body`
    /// as it stands (JSON or not) at once.
    pub fn answer_next(&self, status: u16, body: &'static str) {
        lock(&self.shared).fault = Some(Fault::Answer(status, body));
    }

    /// The next request is not applied, and answered `status` with a head whose
    /// `Content-Length` promises more than the few body bytes that follow: a truncated answer
    /// (the client waits for the rest until its timeout).
    pub fn truncate_next(&self, status: u16) {
        lock(&self.shared).fault = Some(Fault::Truncated(status));
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn decode(seg: &str) -> String {
    let hex = |b: u8| char::from(b).to_digit(16);
    let bytes = seg.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(u8::try_from(h * 16 + l).expect("two hex digits"));
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn query(q: &str) -> BTreeMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn error(status: u16, error_type: &str, reason: &str) -> (u16, Value) {
    (
        status,
        json!({"error": {"type": error_type, "reason": reason}, "status": status}),
    )
}

fn bad_request(reason: &str) -> (u16, Value) {
    error(400, "x_content_parse_exception", reason)
}

/// The HTTP answer to a write: Elasticsearch's document-API response shape, with the
/// document's `_version` after it.
/// `cond`: the request's `if_seq_no`/`if_primary_term`; `current`: the document's token and
/// `_version` before the request (for the 409's reason).
fn write_answer(
    index: &str,
    id: &str,
    answer: &Answer,
    version: u64,
    cond: Option<Token>,
    current: Option<(Token, u64)>,
) -> (u16, Value) {
    let status = answer.status();
    match answer {
        Answer::Model(Ok(w)) => (
            status,
            json!({
                "_index": index,
                "_id": id,
                "_version": version,
                "result": w.result.name(),
                "_seq_no": w.token.seq_no,
                "_primary_term": w.token.primary_term,
                "_shards": {"total": 1, "successful": 1, "failed": 0},
            }),
        ),
        Answer::Model(Err(ModelError::Script(e))) => (status, script_error_body(*e)),
        Answer::Model(Err(e @ (ModelError::DocumentMissing | ModelError::VersionConflict))) => {
            (status, document_error_body(index, id, *e, cond, current))
        }
        refused => {
            let (error_type, reason) = error_parts(refused).expect("a refusal");
            (
                status,
                json!({
                    "error": {
                        "root_cause": [{"type": error_type, "reason": reason}],
                        "type": error_type,
                        "reason": reason,
                    },
                    "status": status,
                }),
            )
        }
    }
}

/// Elasticsearch's body for a 404 `document_missing_exception` (an `_update` of a missing
/// document without `upsert`) and a 409 `version_conflict_engine_exception` (a `_create` of an
/// existing id, or `if_seq_no`/`if_primary_term` that do not match), with the reasons
/// Elasticsearch 7.x formats — `[<id>]: document missing`; `[<id>]: version conflict, document
/// already exists (current version [V])`; `[<id>]: version conflict, required seqNo [S],
/// primary term [T]. current document has seqNo [S'] and primary term [T']`, or `... but no
/// document was found` — and the index and shard in the error and its root cause, as its
/// `ElasticsearchException` renders them (`index_uuid` is a fixed placeholder here).
/// `checks/tests/docstore/http.rs` pins them.
pub fn document_error_body(
    index: &str,
    id: &str,
    e: ModelError,
    cond: Option<Token>,
    current: Option<(Token, u64)>,
) -> Value {
    let (status, error_type, reason) = match (e, cond, current) {
        (ModelError::DocumentMissing, _, _) => (
            404,
            "document_missing_exception",
            format!("[{id}]: document missing"),
        ),
        (_, Some(want), Some((have, _))) => (
            409,
            "version_conflict_engine_exception",
            format!(
                "[{id}]: version conflict, required seqNo [{}], primary term [{}]. current \
                 document has seqNo [{}] and primary term [{}]",
                want.seq_no, want.primary_term, have.seq_no, have.primary_term
            ),
        ),
        (_, Some(want), None) => (
            409,
            "version_conflict_engine_exception",
            format!(
                "[{id}]: version conflict, required seqNo [{}], primary term [{}]. but no \
                 document was found",
                want.seq_no, want.primary_term
            ),
        ),
        (_, None, current) => (
            409,
            "version_conflict_engine_exception",
            format!(
                "[{id}]: version conflict, document already exists (current version [{}])",
                current.map_or(1, |(_, v)| v)
            ),
        ),
    };
    let cause = json!({
        "type": error_type,
        "reason": reason,
        "index_uuid": "lockwright-loopback",
        "shard": "0",
        "index": index,
    });
    let mut error = cause.clone();
    error["root_cause"] = json!([cause]);
    json!({"error": error, "status": status})
}

/// Elasticsearch's 400 for an update script that threw at run time, as the reference's
/// "Painless debugging" page shows it for `Debug.explain` in `_update`: an
/// `illegal_argument_exception` ("failed to execute script") caused by a `script_exception`
/// ("runtime error"; an explained value in `to_string`) caused by a `painless_explain_error`
/// (reason `null`) — or, for a null dereference, by a `null_pointer_exception`.
/// `checks/tests/docstore/http.rs` pins the bodies.
pub fn script_error_body(e: ScriptError) -> Value {
    let mut script = json!({
        "type": "script_exception",
        "reason": "runtime error",
        "script_stack": [],
        "script": " ",
        "lang": "painless",
    });
    match e {
        ScriptError::Explain(m) => {
            script["painless_class"] = json!("java.lang.String");
            script["to_string"] = json!(m);
            script["java_class"] = json!("java.lang.String");
            script["caused_by"] = json!({"type": "painless_explain_error", "reason": null});
        }
        ScriptError::NullPointer => {
            script["caused_by"] = json!({"type": "null_pointer_exception", "reason": null});
        }
    }
    json!({
        "error": {
            "root_cause": [{"type": "illegal_argument_exception", "reason": "failed to execute script"}],
            "type": "illegal_argument_exception",
            "reason": "failed to execute script",
            "caused_by": script,
        },
        "status": 400,
    })
}

fn parse_cond(q: &BTreeMap<String, String>) -> Result<Option<Token>, String> {
    match (q.get("if_seq_no"), q.get("if_primary_term")) {
        (None, None) => Ok(None),
        (Some(s), Some(t)) => Ok(Some(Token {
            seq_no: s.parse().map_err(|_| format!("bad if_seq_no {s:?}"))?,
            primary_term: t
                .parse()
                .map_err(|_| format!("bad if_primary_term {t:?}"))?,
        })),
        _ => Err("if_seq_no and if_primary_term go together".to_owned()),
    }
}

/// [`route`] on the server's shared state (its store and its script clock).
fn route_shared(
    sh: &mut Shared,
    method: &tiny_http::Method,
    path: &[String],
    q: &BTreeMap<String, String>,
    body: &Value,
) -> Result<Req, (u16, Value)> {
    route(&mut sh.service, &mut sh.clock, method, path, q, body)
}

/// Routes one request; `None` for the store's write (executed by the caller, which may lose
/// it).
fn route(
    service: &mut Service,
    clock: &mut ScriptClock,
    method: &tiny_http::Method,
    path: &[String],
    q: &BTreeMap<String, String>,
    body: &Value,
) -> Result<Req, (u16, Value)> {
    use tiny_http::Method::*;
    let seg: Vec<&str> = path.iter().map(String::as_str).collect();
    let op = match (method, seg.as_slice()) {
        (Put | Post, [index, "_create", id]) => {
            let source =
                source_from_json(body, &mut service.owners).map_err(|e| bad_request(&e))?;
            (index, id, Op::Create(source))
        }
        (Post, [index, "_update", id]) => {
            // `if_seq_no`/`if_primary_term` (a renewal): checked before the script runs.
            let cond = parse_cond(q).map_err(|e| error(400, "illegal_argument_exception", &e))?;
            if let Some(t) = cond {
                match service.get(index, id) {
                    None => {
                        return Err((
                            404,
                            document_error_body(index, id, ModelError::DocumentMissing, cond, None),
                        ))
                    }
                    Some(d) if d.seq_no != t.seq_no || d.primary_term != t.primary_term => {
                        let current = Some((d.token(), 0));
                        return Err((
                            409,
                            document_error_body(
                                index,
                                id,
                                ModelError::VersionConflict,
                                cond,
                                current,
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
            // `ctx._now`: the cached, possibly skewed clock of this "node".
            service.now = clock.now();
            let mut op = service.parse_update(body).map_err(|e| bad_request(&e))?;
            if let Op::Update { cond: c, .. } = &mut op {
                *c = cond;
            }
            (index, id, op)
        }
        (Delete, [index, "_doc", id]) => {
            let cond = parse_cond(q).map_err(|e| error(400, "illegal_argument_exception", &e))?;
            (index, id, Op::Delete { cond })
        }
        _ => {
            return Err(error(
                405,
                "unsupported_operation_exception",
                "the loopback server serves only the document-store recipes' requests",
            ))
        }
    };
    Ok(Req {
        index: (*op.0).to_owned(),
        id: (*op.1).to_owned(),
        op: op.2,
    })
}

fn serve(shared: &Mutex<Shared>, mut request: tiny_http::Request) {
    let url = request.url().to_owned();
    let method = request.method().clone();
    let mut raw = String::new();
    let _ = request.as_reader().read_to_string(&mut raw);
    let (path, q) = url.split_once('?').unwrap_or((&url, ""));
    let path: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let q = query(q);
    let mut sh = lock(shared);
    sh.requests.push(format!("{method} {url}"));
    let fault = sh.fault.take();
    match fault {
        Some(Fault::Answer(status, body)) => {
            drop(sh);
            return respond_raw(request, status, body);
        }
        Some(Fault::Truncated(status)) => {
            drop(sh);
            return respond_truncated(request, status);
        }
        _ => {}
    }
    let body: Value = if raw.trim().is_empty() {
        Value::Null
    } else {
        match serde_json::from_str(&raw) {
            Ok(v) => v,
            Err(e) => {
                drop(sh);
                return respond(
                    request,
                    bad_request(&format!("body is not JSON: {e}")),
                    None,
                );
            }
        }
    };
    let answer: (u16, Value) = match (
        &method,
        path.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
    ) {
        (tiny_http::Method::Post | tiny_http::Method::Put, ["_scripts", id]) => {
            match body["script"]["source"].as_str() {
                Some(src) => {
                    sh.service.put_script(id, src);
                    (200, json!({"acknowledged": true}))
                }
                None => bad_request("expected {\"script\": {\"lang\": .., \"source\": ..}}"),
            }
        }
        // `GET _scripts/<id>`: the source as it was stored.
        (tiny_http::Method::Get, ["_scripts", id]) => match sh.service.scripts.get(*id) {
            Some(src) => (
                200,
                json!({"_id": id, "found": true, "script": {"lang": "painless", "source": src}}),
            ),
            None => (404, json!({"_id": id, "found": false})),
        },
        (tiny_http::Method::Get, [index, "_doc", id]) => match sh.service.get(index, id) {
            Some(d) => (
                200,
                json!({
                    "_index": index, "_id": id, "found": true,
                    "_version": sh.versions.get(&((*index).to_owned(), (*id).to_owned())).copied().unwrap_or(1),
                    "_seq_no": d.seq_no, "_primary_term": d.primary_term,
                    "_source": source_to_json(d.source, &sh.service.owners),
                }),
            ),
            // As Elasticsearch and OpenSearch answer: a missing document in an existing
            // index is `found: false`; a missing index is an `index_not_found_exception`.
            None if sh.service.shard(index).is_none() => (
                404,
                json!({
                    "error": {
                        "type": "index_not_found_exception",
                        "reason": format!("no such index [{index}]"),
                        "index": index,
                    },
                    "status": 404,
                }),
            ),
            None => (404, json!({"_index": index, "_id": id, "found": false})),
        },
        _ => match route_shared(&mut sh, &method, &path, &q, &body) {
            Err(refusal) => refusal,
            Ok(req) => {
                if let Some(Fault::RequestLost(delay)) = fault {
                    drop(sh);
                    return respond(
                        request,
                        error(500, "simulated", "request lost"),
                        Some(delay),
                    );
                }
                let key = (req.index.clone(), req.id.clone());
                let current = sh
                    .service
                    .get(&req.index, &req.id)
                    .map(|d| (d.token(), sh.versions.get(&key).copied().unwrap_or(1)));
                let cond = match &req.op {
                    Op::Delete { cond } | Op::Update { cond, .. } => *cond,
                    Op::Create(_) => None,
                };
                let a = sh.service.execute(&req);
                let version = sh.versions.entry(key).or_insert(0);
                if let Answer::Model(Ok(w)) = &a {
                    use lockwright_model::docstore::store::WriteResult as R;
                    if matches!(w.result, R::Created | R::Updated | R::Deleted) {
                        *version += 1;
                    }
                }
                let out = write_answer(&req.index, &req.id, &a, *version, cond, current);
                if let Some(Fault::ReplyLost(delay)) = fault {
                    drop(sh);
                    return respond(request, out, Some(delay));
                }
                out
            }
        },
    };
    let slow = sh.slow;
    drop(sh);
    respond(request, answer, slow);
}

fn respond(request: tiny_http::Request, (status, body): (u16, Value), delay: Option<Duration>) {
    let send = move || {
        let header = tiny_http::Header::from_bytes("Content-Type", "application/json")
            .expect("a valid header");
        let response = tiny_http::Response::from_string(body.to_string())
            .with_status_code(status)
            .with_header(header);
        let _ = request.respond(response);
    };
    match delay {
        // Answer late on another thread, so the server keeps serving meanwhile.
        Some(d) => {
            std::thread::spawn(move || {
                std::thread::sleep(d);
                send();
            });
        }
        None => send(),
    }
}

fn respond_raw(request: tiny_http::Request, status: u16, body: &'static str) {
    let header =
        tiny_http::Header::from_bytes("Content-Type", "application/json").expect("a valid header");
    let response = tiny_http::Response::from_string(body)
        .with_status_code(status)
        .with_header(header);
    let _ = request.respond(response);
}

/// The head promises 400 bytes; 12 come, then nothing more on this connection.
fn respond_truncated(request: tiny_http::Request, status: u16) {
    use std::io::Write;
    let mut w = request.into_writer();
    let _ = write!(
        w,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{{\"_index\": \""
    );
    let _ = w.flush();
}
