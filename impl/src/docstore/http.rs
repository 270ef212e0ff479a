//! [`HttpStore`]: the production [`DocStore`] — HTTP/JSON to an Elasticsearch-compatible REST
//! endpoint, with `ureq`'s blocking client (no async runtime).
//!
//! Request mapping (Elasticsearch 7.x/8.x typeless URLs; `if_seq_no` needs 6.7 or later):
//!
//! | method | HTTP |
//! |---|---|
//! | `put_script` | `POST /_scripts/<id>` `{"script": {"lang": "painless", "source": ..}}` |
//! | `create` | `PUT /<index>/_create/<id>` with the source |
//! | `upsert_with_script` | `POST /<index>/_update/<id>` `{"script": {"id", "params"}, "upsert": ..}` |
//! | `update_with_script` | `POST /<index>/_update/<id>` `{"script": {"id", "params"}}` |
//! | `update_doc` | `POST /<index>/_update/<id>` `{"doc": ..}` |
//! | `delete_if_seq_no` | `DELETE /<index>/_doc/<id>?if_seq_no=S&if_primary_term=T` |
//! | `delete` | `DELETE /<index>/_doc/<id>` |
//! | `get` | `GET /<index>/_doc/<id>` |
//!
//! Answers: 2xx → the `result`, `_seq_no`, `_primary_term`; a `DELETE`'s 404 with
//! `"result": "not_found"` is an answer too. Any other 4xx → [`StoreError::Rejected`] with
//! `error.type`, `error.reason` and every `caused_by` reason, the body, and — only for
//! Elasticsearch's exact shape of a painless `Debug.explain` — the explained value. **No answer** — a
//! timeout or a connection dropped after the request went out, or a 5xx — is
//! [`StoreError::OutcomeUnknown`], exactly the model's lost reply: the request may or may not
//! have been applied. A request that could not be sent (connection refused, unknown host,
//! connect timeout) is [`StoreError::Unreachable`]. Every error names the method and URL.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ureq::Agent;

use super::store::{Doc, DocStore, Refusal, StoreError, StoredScript, Token, WriteResult, Written};

/// Default time to connect.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default time for a whole request, answer included.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// An Elasticsearch-compatible REST endpoint (`http://host:9200`; `https://` needs the
/// `docstore-tls` feature).
#[derive(Clone)]
pub struct HttpStore {
    base: String,
    agent: Agent,
    authorization: Option<String>,
}

impl std::fmt::Debug for HttpStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpStore")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// Percent-encodes one path segment (index names and ids are usually plain already).
fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An answer: status and parsed body (`Value::Null` if empty or not JSON).
struct Answer {
    status: u16,
    body: Value,
    raw: String,
}

impl HttpStore {
    /// The endpoint at `base_url` (`http://127.0.0.1:9200`), with the default timeouts. An
    /// unusable URL is reported by the first request ([`StoreError::Unreachable`]).
    pub fn new(base_url: &str) -> Self {
        Self::with_timeouts(base_url, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT)
    }

    /// The endpoint with these timeouts: `connect` (not answered in time: not sent,
    /// [`StoreError::Unreachable`]) and `request` for the whole exchange (not answered in time:
    /// [`StoreError::OutcomeUnknown`]).
    pub fn with_timeouts(base_url: &str, connect: Duration, request: Duration) -> Self {
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(connect))
            .timeout_global(Some(request))
            .max_redirects(0)
            .build();
        HttpStore {
            base: base_url.trim_end_matches('/').to_owned(),
            agent: Agent::new_with_config(config),
            authorization: None,
        }
    }

    /// Sends `Authorization: <value>` with every request (`ApiKey <base64>`, `Basic ..`).
    pub fn with_authorization(mut self, value: impl Into<String>) -> Self {
        self.authorization = Some(value.into());
        self
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &[&str]) -> String {
        let mut url = self.base.clone();
        for p in path {
            url.push('/');
            url.push_str(&segment(p));
        }
        url
    }

    /// Sends one request; `Err` only when there is no answer (mapped to the "no answer" /
    /// "not sent" errors).
    fn exchange(
        &self,
        method: &str,
        url: &str,
        body: Option<&Value>,
        line: &str,
    ) -> Result<Answer, StoreError> {
        let sent = match method {
            "GET" | "DELETE" => {
                let mut r = if method == "GET" {
                    self.agent.get(url)
                } else {
                    self.agent.delete(url)
                };
                if let Some(a) = &self.authorization {
                    r = r.header("Authorization", a);
                }
                r.call()
            }
            _ => {
                let mut r = if method == "PUT" {
                    self.agent.put(url)
                } else {
                    self.agent.post(url)
                };
                if let Some(a) = &self.authorization {
                    r = r.header("Authorization", a);
                }
                let text = body.map_or_else(String::new, Value::to_string);
                r.content_type("application/json").send(text)
            }
        };
        let mut response = sent.map_err(|e| transport_error(line, &e))?;
        let status = response.status().as_u16();
        let raw = response
            .body_mut()
            .read_to_string()
            .map_err(|e| StoreError::OutcomeUnknown {
                request: line.to_owned(),
                detail: format!("HTTP {status}, then reading the answer failed: {e}"),
            })?;
        if status >= 500 {
            return Err(StoreError::OutcomeUnknown {
                request: line.to_owned(),
                detail: format!("HTTP {status}: {}", error_text(&raw)),
            });
        }
        let body = serde_json::from_str(&raw).unwrap_or(Value::Null);
        Ok(Answer { status, body, raw })
    }

    fn write(
        &self,
        method: &str,
        url: String,
        body: Option<&Value>,
    ) -> Result<Written, StoreError> {
        let line = format!("{method} {url}");
        let a = self.exchange(method, &url, body, &line)?;
        let not_found_delete = method == "DELETE"
            && a.status == 404
            && a.body.get("result").and_then(Value::as_str) == Some("not_found");
        if (200..300).contains(&a.status) || not_found_delete {
            return written(&line, &a);
        }
        Err(rejected(&line, &a))
    }
}

fn transport_error(line: &str, e: &ureq::Error) -> StoreError {
    use std::io::ErrorKind;
    use ureq::Timeout;
    let not_sent = match e {
        ureq::Error::Timeout(Timeout::Resolve | Timeout::Connect)
        | ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::BadUri(_)
        | ureq::Error::Http(_) => true,
        ureq::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::ConnectionRefused | ErrorKind::AddrNotAvailable | ErrorKind::NotFound
        ),
        _ => false,
    };
    // ureq's own TLS errors. (With `docstore-tls`, rustls's handshake and certificate errors
    // may come wrapped otherwise: not mapped or tested here, no TLS server being at hand.)
    let tls = matches!(e, ureq::Error::Tls(_) | ureq::Error::TlsRequired);
    if tls {
        StoreError::Tls {
            request: line.to_owned(),
            detail: e.to_string(),
        }
    } else if not_sent {
        StoreError::Unreachable {
            request: line.to_owned(),
            detail: e.to_string(),
        }
    } else {
        StoreError::OutcomeUnknown {
            request: line.to_owned(),
            detail: e.to_string(),
        }
    }
}

fn error_text(raw: &str) -> String {
    let mut s: String = raw.chars().take(300).collect();
    if s.len() < raw.len() {
        s.push('…');
    }
    s
}

fn written(line: &str, a: &Answer) -> Result<Written, StoreError> {
    let bad = |detail: String| StoreError::BadResponse {
        request: line.to_owned(),
        status: a.status,
        detail,
    };
    let result = a
        .body
        .get("result")
        .and_then(Value::as_str)
        .and_then(WriteResult::from_name)
        .ok_or_else(|| bad(format!("no known `result` in {}", error_text(&a.raw))))?;
    let seq_no = a.body.get("_seq_no").and_then(Value::as_u64);
    let primary_term = a.body.get("_primary_term").and_then(Value::as_u64);
    match (seq_no, primary_term) {
        (Some(seq_no), Some(primary_term)) => Ok(Written {
            result,
            token: Token {
                primary_term,
                seq_no,
            },
        }),
        _ => Err(bad(format!(
            "no `_seq_no`/`_primary_term` in {} (Elasticsearch 6.7 or later is needed; a \
             `noop` carries them since 7.4)",
            error_text(&a.raw)
        ))),
    }
}

fn rejected(line: &str, a: &Answer) -> StoreError {
    let error = a.body.get("error");
    let Some(error) = error else {
        return StoreError::BadResponse {
            request: line.to_owned(),
            status: a.status,
            detail: error_text(&a.raw),
        };
    };
    let error_type = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("error")
        .to_owned();
    let mut reason = error
        .get("reason")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned);
    // Every cause's reason, outermost first (a compile error's detail is two levels down).
    let mut cause = error.get("caused_by");
    while let Some(c) = cause {
        if let Some(r) = c.get("reason").and_then(Value::as_str) {
            reason.push_str(": ");
            reason.push_str(r);
        }
        cause = c.get("caused_by");
    }
    StoreError::Rejected {
        request: line.to_owned(),
        status: a.status,
        error_type,
        detail: Box::new(Refusal {
            reason,
            explained: explained(a.status, error),
            body: error_text(&a.raw),
        }),
    }
}

/// The value of a painless `Debug.explain`, if `error` has exactly Elasticsearch's shape for
/// it in an update (the reference's "Painless debugging" page): HTTP 400,
/// `illegal_argument_exception` caused by a `script_exception` whose reason is
/// `runtime error` and whose `to_string` holds the value, caused by a
/// `painless_explain_error`. A compile error (`script_exception` "compile error"), stored
/// scripts disabled, or a mapping error has another shape: `None`.
fn explained(status: u16, error: &Value) -> Option<String> {
    let ty = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_owned);
    if status != 400 || ty(error).as_deref() != Some("illegal_argument_exception") {
        return None;
    }
    let script = error.get("caused_by")?;
    let explain = script.get("caused_by")?;
    (ty(script).as_deref() == Some("script_exception")
        && script.get("reason").and_then(Value::as_str) == Some("runtime error")
        && ty(explain).as_deref() == Some("painless_explain_error"))
    .then(|| {
        script
            .get("to_string")
            .and_then(Value::as_str)
            .map(str::to_owned)
    })
    .flatten()
}

fn script_body(script: &StoredScript) -> Value {
    json!({"id": script.id, "params": script.params})
}

impl DocStore for HttpStore {
    fn put_script(&self, id: &str, source: &str) -> Result<(), StoreError> {
        let url = self.url(&["_scripts", id]);
        let line = format!("POST {url}");
        let body = json!({"script": {"lang": "painless", "source": source}});
        let a = self.exchange("POST", &url, Some(&body), &line)?;
        if (200..300).contains(&a.status) {
            Ok(())
        } else {
            Err(rejected(&line, &a))
        }
    }

    fn get_script(&self, id: &str) -> Result<Option<String>, StoreError> {
        let url = self.url(&["_scripts", id]);
        let line = format!("GET {url}");
        let a = self.exchange("GET", &url, None, &line)?;
        match a.status {
            404 => Ok(None),
            200..=299 => match a.body["script"]["source"].as_str() {
                Some(source) => Ok(Some(source.to_owned())),
                None => Err(StoreError::BadResponse {
                    request: line,
                    status: a.status,
                    detail: format!("no `script.source` in {}", error_text(&a.raw)),
                }),
            },
            _ => Err(rejected(&line, &a)),
        }
    }

    fn create(&self, index: &str, id: &str, source: &Value) -> Result<Written, StoreError> {
        self.write("PUT", self.url(&[index, "_create", id]), Some(source))
    }

    fn upsert_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        upsert: &Value,
    ) -> Result<Written, StoreError> {
        let mut body = json!({"script": script_body(script), "upsert": upsert});
        if script.scripted_upsert {
            body["scripted_upsert"] = json!(true);
        }
        self.write("POST", self.url(&[index, "_update", id]), Some(&body))
    }

    fn update_with_script(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
    ) -> Result<Written, StoreError> {
        let body = json!({ "script": script_body(script) });
        self.write("POST", self.url(&[index, "_update", id]), Some(&body))
    }

    fn update_with_script_if(
        &self,
        index: &str,
        id: &str,
        script: &StoredScript,
        token: Token,
    ) -> Result<Written, StoreError> {
        let url = format!(
            "{}?if_seq_no={}&if_primary_term={}",
            self.url(&[index, "_update", id]),
            token.seq_no,
            token.primary_term
        );
        let body = json!({ "script": script_body(script) });
        self.write("POST", url, Some(&body))
    }

    fn update_doc(&self, index: &str, id: &str, doc: &Value) -> Result<Written, StoreError> {
        let body = json!({ "doc": doc });
        self.write("POST", self.url(&[index, "_update", id]), Some(&body))
    }

    fn delete_if_seq_no(&self, index: &str, id: &str, token: Token) -> Result<Written, StoreError> {
        let url = format!(
            "{}?if_seq_no={}&if_primary_term={}",
            self.url(&[index, "_doc", id]),
            token.seq_no,
            token.primary_term
        );
        self.write("DELETE", url, None)
    }

    fn delete(&self, index: &str, id: &str) -> Result<Written, StoreError> {
        self.write("DELETE", self.url(&[index, "_doc", id]), None)
    }

    fn get(&self, index: &str, id: &str) -> Result<Option<Doc>, StoreError> {
        let url = self.url(&[index, "_doc", id]);
        let line = format!("GET {url}");
        let a = self.exchange("GET", &url, None, &line)?;
        if a.body.get("found").and_then(Value::as_bool) == Some(false) {
            return Ok(None);
        }
        // A document of an index that does not exist (yet) does not exist either: the store
        // answers 404 with `index_not_found_exception` rather than `found: false` (a lock
        // installed before its data index is made, issue #35 review).
        if a.status == 404
            && a.body.pointer("/error/type").and_then(Value::as_str)
                == Some("index_not_found_exception")
        {
            return Ok(None);
        }
        if a.status != 200 {
            return Err(rejected(&line, &a));
        }
        let number = |key: &str| a.body.get(key).and_then(Value::as_u64);
        let (Some(seq_no), Some(primary_term)) = (number("_seq_no"), number("_primary_term"))
        else {
            return Err(StoreError::BadResponse {
                request: line,
                status: a.status,
                detail: format!("no `_seq_no`/`_primary_term` in {}", error_text(&a.raw)),
            });
        };
        Ok(Some(Doc {
            source: a.body.get("_source").cloned().unwrap_or(Value::Null),
            token: Token {
                primary_term,
                seq_no,
            },
        }))
    }

    /// A monotonic clock (milliseconds since this process first asked): the holder's own
    /// deadline and `acquire`'s timeout run on it, so a wall clock stepped or skewed changes
    /// neither. The lease itself is measured by the server (`ctx._now`).
    fn now(&self) -> u64 {
        static BASE: OnceLock<Instant> = OnceLock::new();
        let d = BASE.get_or_init(Instant::now).elapsed();
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

#[cfg(test)]
mod tests {
    use super::explained;
    use serde_json::{json, Value};

    fn error(body: &Value) -> &Value {
        &body["error"]
    }

    /// Elasticsearch's body for `Debug.explain` in an update script (the reference's "Painless
    /// debugging" page: `illegal_argument_exception` "failed to execute script" ←
    /// `script_exception` "runtime error" with the value in `to_string` ←
    /// `painless_explain_error`, reason `null`).
    fn explain_body(value: &str) -> Value {
        json!({"error": {
            "type": "illegal_argument_exception", "reason": "failed to execute script",
            "caused_by": {"type": "script_exception", "reason": "runtime error",
                "to_string": value, "painless_class": "java.lang.String",
                "caused_by": {"type": "painless_explain_error", "reason": null}}},
            "status": 400})
    }

    #[test]
    fn only_the_explain_shape_gives_a_value() {
        let b = explain_body("stale fencing token");
        assert_eq!(
            explained(400, error(&b)).as_deref(),
            Some("stale fencing token")
        );
        // The same shape under another status is not Elasticsearch's answer for it.
        assert_eq!(explained(500, error(&b)), None);
        // A compile error, even one carrying a `to_string`, is not an explain.
        let mut compile = explain_body("lease held by another owner");
        compile["error"]["caused_by"]["reason"] = json!("compile error");
        compile["error"]["caused_by"]["caused_by"] =
            json!({"type": "illegal_argument_exception", "reason": "cannot resolve symbol"});
        assert_eq!(explained(400, error(&compile)), None);
        // A runtime error that is not an explain (a null dereference).
        let mut npe = explain_body("x");
        npe["error"]["caused_by"]["caused_by"] = json!({"type": "null_pointer_exception"});
        assert_eq!(explained(400, error(&npe)), None);
        // Stored scripts disabled, a mapping error: other outer types.
        let off = json!({"error": {"type": "illegal_argument_exception",
            "reason": "failed to execute script",
            "caused_by": {"type": "illegal_argument_exception",
                "reason": "cannot execute [stored] scripts"}}});
        assert_eq!(explained(400, error(&off)), None);
        let mapping = json!({"error": {"type": "mapper_parsing_exception",
            "reason": "failed to parse field [expires] of type [date]"}});
        assert_eq!(explained(400, error(&mapping)), None);
    }
}
