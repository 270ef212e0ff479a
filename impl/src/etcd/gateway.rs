//! [`Gateway`]: the [`Etcd`] interface over etcd's JSON gateway (grpc-gateway, `POST /v3/...`,
//! keys and values in base64, 64-bit numbers as strings), with `ureq`.
//!
//! Why the gateway and not the `etcd-client` crate (tonic, prost, tokio): the gateway needs no
//! async runtime and no `protoc` at build time, and `ureq` is already the document-store
//! client's HTTP layer; `docs/etcd.md` has the build-time comparison.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use serde_json::{json, Value};
use ureq::Agent;

use super::client::{
    Etcd, Grant, KeyValue, LeaseId, Op, OpResponse, Range, RangeResponse, Revision, Txn,
    TxnResponse, WatchEnd,
};
use super::error::EtcdError;

/// An etcd endpoint's JSON gateway (`http://127.0.0.1:2379`).
#[derive(Debug, Clone)]
pub struct Gateway {
    base: String,
    agent: Agent,
}

impl Gateway {
    /// The endpoint at `base_url`, with a 5 s request timeout.
    pub fn new(base_url: &str) -> Gateway {
        Gateway::with_timeout(base_url, Duration::from_secs(5))
    }

    /// The endpoint with this request timeout (a watch waits longer: its own timeout).
    pub fn with_timeout(base_url: &str, timeout: Duration) -> Gateway {
        Gateway {
            base: base_url.trim_end_matches('/').to_owned(),
            agent: agent(timeout),
        }
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn post(&self, path: &str, body: &Value) -> Result<Value, EtcdError> {
        self.post_with(&self.agent, path, body)
    }

    fn post_with(&self, agent: &Agent, path: &str, body: &Value) -> Result<Value, EtcdError> {
        let url = format!("{}{path}", self.base);
        let line = format!("POST {path}");
        let mut response = agent
            .post(&url)
            .content_type("application/json")
            .send(body.to_string())
            .map_err(|e| EtcdError::Unreachable {
                request: line.clone(),
                detail: e.to_string(),
            })?;
        let raw = response
            .body_mut()
            .read_to_string()
            .map_err(|e| EtcdError::Unreachable {
                request: line.clone(),
                detail: e.to_string(),
            })?;
        let v: Value = serde_json::from_str(&raw).map_err(|e| EtcdError::BadResponse {
            request: line.clone(),
            detail: format!("{e}: {}", raw.chars().take(200).collect::<String>()),
        })?;
        if let Some(code) = v.get("code").and_then(Value::as_i64) {
            let message = v.get("message").and_then(Value::as_str).unwrap_or_default();
            return Err(EtcdError::from_status(&line, code, message));
        }
        Ok(v)
    }
}

fn agent(timeout: Duration) -> Agent {
    Agent::new_with_config(
        Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(2)))
            .timeout_global(Some(timeout))
            .max_redirects(0)
            .build(),
    )
}

fn num(v: &Value, field: &str) -> i64 {
    match v.get(field) {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

fn header_revision(v: &Value) -> Revision {
    v.get("header").map_or(0, |h| num(h, "revision"))
}

fn kv(v: &Value) -> KeyValue {
    let bytes = |f: &str| {
        v.get(f)
            .and_then(Value::as_str)
            .map(|s| b64_decode(s).unwrap_or_default())
            .unwrap_or_default()
    };
    KeyValue {
        key: bytes("key"),
        value: bytes("value"),
        create_revision: num(v, "create_revision"),
        mod_revision: num(v, "mod_revision"),
        lease: num(v, "lease"),
    }
}

fn range_response(v: &Value) -> RangeResponse {
    RangeResponse {
        header_revision: header_revision(v),
        kvs: v
            .get("kvs")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(kv).collect())
            .unwrap_or_default(),
    }
}

/// The first key after every key with prefix `p` (etcd's `GetPrefixRangeEnd`).
fn prefix_end(p: &[u8]) -> Vec<u8> {
    let mut end = p.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

fn range_json(r: &Range) -> Value {
    let mut v = json!({ "key": b64_encode(&r.key) });
    if r.prefix {
        v["range_end"] = b64_encode(&prefix_end(&r.key)).into();
    }
    if let Some(asc) = r.by_create {
        v["sort_target"] = "CREATE".into();
        v["sort_order"] = if asc { "ASCEND" } else { "DESCEND" }.into();
    }
    if r.limit > 0 {
        v["limit"] = r.limit.to_string().into();
    }
    if r.max_create_revision > 0 {
        v["max_create_revision"] = r.max_create_revision.to_string().into();
    }
    v
}

fn op_json(op: &Op) -> Value {
    match op {
        Op::Put { key, value, lease } => {
            let mut p = json!({ "key": b64_encode(key), "value": b64_encode(value) });
            if let Some(l) = lease {
                p["lease"] = l.0.to_string().into();
            }
            json!({ "request_put": p })
        }
        Op::Get(r) => json!({ "request_range": range_json(r) }),
        Op::Delete { key } => json!({ "request_delete_range": { "key": b64_encode(key) } }),
    }
}

impl Etcd for Gateway {
    fn grant(&self, ttl: Duration) -> Result<Grant, EtcdError> {
        let v = self.post(
            "/v3/lease/grant",
            &json!({ "TTL": ttl.as_secs().max(1).to_string() }),
        )?;
        // A grant answered without an id would read as lease 0: a key put with lease 0 never
        // expires; one without a TTL would leave the session no deadline. Refuse both.
        match (num(&v, "ID"), num(&v, "TTL")) {
            (id, granted) if id != 0 && granted > 0 => Ok(Grant {
                id: LeaseId(id),
                ttl: Duration::from_secs(granted.unsigned_abs()),
            }),
            _ => Err(EtcdError::BadResponse {
                request: "POST /v3/lease/grant".to_owned(),
                detail: format!("no lease ID or TTL in the answer: {v}"),
            }),
        }
    }

    fn keepalive(&self, lease: LeaseId) -> Result<Option<Duration>, EtcdError> {
        let v = self.post("/v3/lease/keepalive", &json!({ "ID": lease.0.to_string() }))?;
        keepalive_answer(&v)
    }

    fn revoke(&self, lease: LeaseId) -> Result<(), EtcdError> {
        self.post("/v3/lease/revoke", &json!({ "ID": lease.0.to_string() }))?;
        Ok(())
    }

    fn txn(&self, txn: &Txn) -> Result<TxnResponse, EtcdError> {
        let body = json!({
            "compare": [{
                "target": "CREATE",
                "key": b64_encode(&txn.compare_key),
                "create_revision": txn.compare_create.to_string(),
            }],
            "success": txn.success.iter().map(op_json).collect::<Vec<_>>(),
            "failure": txn.failure.iter().map(op_json).collect::<Vec<_>>(),
        });
        let v = self.post("/v3/kv/txn", &body)?;
        let responses = v
            .get("responses")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|r| {
                        if let Some(g) = r.get("response_range") {
                            OpResponse::Get(range_response(g))
                        } else if let Some(d) = r.get("response_delete_range") {
                            OpResponse::Delete {
                                deleted: num(d, "deleted"),
                            }
                        } else {
                            OpResponse::Put
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(TxnResponse {
            succeeded: v.get("succeeded").and_then(Value::as_bool).unwrap_or(false),
            header_revision: header_revision(&v),
            responses,
        })
    }

    fn range(&self, range: &Range) -> Result<RangeResponse, EtcdError> {
        let v = self.post("/v3/kv/range", &range_json(range))?;
        Ok(range_response(&v))
    }

    fn wait_delete(
        &self,
        key: &[u8],
        from: Revision,
        timeout: Duration,
    ) -> Result<WatchEnd, EtcdError> {
        let line = "POST /v3/watch".to_string();
        let url = format!("{}/v3/watch", self.base);
        let body = json!({ "create_request": {
            "key": b64_encode(key),
            "start_revision": from.to_string(),
            "filters": ["NOPUT"],
        }});
        let started = std::time::Instant::now();
        let response = agent(timeout)
            .post(&url)
            .content_type("application/json")
            .send(body.to_string());
        let mut response = match response {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => return Ok(WatchEnd::TimedOut),
            Err(e) => {
                return Err(EtcdError::Unreachable {
                    request: line,
                    detail: e.to_string(),
                })
            }
        };
        let reader = BufReader::new(response.body_mut().as_reader());
        for l in reader.lines() {
            let l = match l {
                Ok(l) => l,
                // The global timeout ends the stream: nothing was deleted meanwhile.
                Err(_) if started.elapsed() >= timeout => return Ok(WatchEnd::TimedOut),
                // Broken before it (the member was killed): not a compaction.
                Err(e) => {
                    return Err(EtcdError::WatchCanceled {
                        reason: format!("the watch stream broke: {e}"),
                    })
                }
            };
            if l.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&l).map_err(|e| EtcdError::BadResponse {
                request: line.clone(),
                detail: e.to_string(),
            })?;
            if let Some(end) = watch_line(&line, &v) {
                return end;
            }
        }
        // The member closed the stream before the timeout without a word.
        Err(EtcdError::WatchCanceled {
            reason: "the watch stream ended".to_owned(),
        })
    }
}

/// What one line of the gateway's watch stream says about a wait for a delete: `None` to
/// read on (the watch's creation, a put).
///
/// - `{"result": {"canceled": true, "compact_revision": "N"}}` (N > 0): compacted past the
///   start revision — [`EtcdError::Compacted`];
/// - `{"result": {"canceled": true, ...}}` without a compact revision (the server cancelled
///   it: `cancel_reason` says why) — [`EtcdError::WatchCanceled`];
/// - `{"error": {"grpc_code": 14, "message": "transport is closing"}}` (what 3.4.23's gateway
///   writes when its member shuts down) — [`EtcdError::WatchCanceled`] (or, through
///   [`ERROR_TABLE`](super::ERROR_TABLE), [`EtcdError::Compacted`] for a compaction code);
/// - a `DELETE` event — [`WatchEnd::Deleted`].
fn watch_line(request: &str, v: &Value) -> Option<Result<WatchEnd, EtcdError>> {
    if let Some(code) = v.get("code").and_then(Value::as_i64) {
        let message = v.get("message").and_then(Value::as_str).unwrap_or_default();
        return Some(Err(EtcdError::from_status(request, code, message)));
    }
    if let Some(e) = v.get("error") {
        let code = e.get("grpc_code").and_then(Value::as_i64).unwrap_or(0);
        let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
        return Some(Err(match EtcdError::from_status(request, code, message) {
            c @ EtcdError::Compacted { .. } => c,
            _ => EtcdError::WatchCanceled {
                reason: format!("gRPC code {code}: {message}"),
            },
        }));
    }
    let r = v.get("result").unwrap_or(&Value::Null);
    if r.get("canceled").and_then(Value::as_bool) == Some(true) {
        let compact_revision = num(r, "compact_revision");
        return Some(Err(if compact_revision > 0 {
            EtcdError::Compacted { compact_revision }
        } else {
            EtcdError::WatchCanceled {
                reason: r
                    .get("cancel_reason")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("cancelled by the server without a reason")
                    .to_owned(),
            }
        }));
    }
    let deleted = r
        .get("events")
        .and_then(Value::as_array)
        .is_some_and(|evs| {
            evs.iter()
                .any(|e| e.get("type").and_then(Value::as_str) == Some("DELETE"))
        });
    deleted.then_some(Ok(WatchEnd::Deleted))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (what the gateway's JSON carries keys and values in).
pub(crate) fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The inverse of [`b64_encode`]; `None` for a character outside the alphabet.
pub(crate) fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = B64.iter().position(|&x| x == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// What a keepalive's answer says. Keepalive is a stream: the gateway writes a server error on
/// it (a member stopping, no leader, a request timeout) as a line `{"error":{"grpc_code":…}}`,
/// with no top-level `code` — an error (`ERROR_TABLE`: "lease not found" is the lease gone,
/// the rest is no answer, tried again at the next beat), never a lease that is gone. Only a
/// `result` without a positive TTL is a lease that is gone.
fn keepalive_answer(v: &Value) -> Result<Option<Duration>, EtcdError> {
    if let Some(e) = v.get("error") {
        let code = e.get("grpc_code").and_then(Value::as_i64).unwrap_or(2);
        let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
        return Err(EtcdError::from_status(
            "POST /v3/lease/keepalive",
            code,
            message,
        ));
    }
    let ttl = v.get("result").map_or(0, |r| num(r, "TTL"));
    // A lease that is gone answers without a TTL (0).
    Ok((ttl > 0).then(|| Duration::from_secs(ttl.unsigned_abs())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in [
            "",
            "p",
            "pf",
            "pfx",
            "pfx/",
            "pfx/694d7c4b8b3a1f05",
            "\u{ff}",
        ] {
            let e = b64_encode(s.as_bytes());
            assert_eq!(b64_decode(&e).as_deref(), Some(s.as_bytes()), "{s}");
        }
        assert_eq!(b64_encode(b"pfx/a"), "cGZ4L2E=");
        assert_eq!(prefix_end(b"pfx/"), b"pfx0".to_vec());
    }

    /// A keepalive answered with an error line (a member stopping: etcd 3.4's `ErrStopped`,
    /// no leader) is no answer, tried again at the next beat — not the lease gone, which
    /// ended the session for good before (the keepalive thread stopped and the lease really
    /// expired). "lease not found" and a result without a TTL are the lease gone.
    #[test]
    fn a_keepalive_error_line_is_no_answer_not_a_gone_lease() {
        let parse = |s: &str| keepalive_answer(&serde_json::from_str(s).expect("json"));
        let stopping = r#"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: server stopped","http_status":"Service Unavailable"}}"#;
        assert!(
            matches!(parse(stopping), Err(EtcdError::Unreachable { .. })),
            "{:?}",
            parse(stopping)
        );
        let gone = r#"{"error":{"grpc_code":5,"http_code":404,"message":"etcdserver: requested lease not found","http_status":"Not Found"}}"#;
        assert!(matches!(parse(gone), Err(EtcdError::LeaseNotFound)));
        let header =
            r#""header":{"cluster_id":"1","member_id":"2","revision":"3","raft_term":"2"}"#;
        let alive = format!(r#"{{"result":{{{header},"ID":"7","TTL":"5"}}}}"#);
        assert_eq!(parse(&alive).unwrap(), Some(Duration::from_secs(5)));
        let expired = format!(r#"{{"result":{{{header},"ID":"7"}}}}"#);
        assert_eq!(parse(&expired).unwrap(), None);
    }

    /// The watch stream's lines as etcd 3.4.23's gateway writes them (recorded from a real
    /// member): only a cancel that names a compact revision is a compaction.
    #[test]
    fn only_a_cancel_with_a_compact_revision_reads_as_compaction() {
        let line = "POST /v3/watch";
        let header =
            r#""header":{"cluster_id":"1","member_id":"2","revision":"3","raft_term":"2"}"#;
        let parse = |s: &str| watch_line(line, &serde_json::from_str(s).expect("json"));
        let created = format!(r#"{{"result":{{{header},"created":true}}}}"#);
        assert!(parse(&created).is_none());
        let compacted =
            format!(r#"{{"result":{{{header},"canceled":true,"compact_revision":"3"}}}}"#);
        assert!(matches!(
            parse(&compacted),
            Some(Err(EtcdError::Compacted {
                compact_revision: 3
            }))
        ));
        let cancelled = format!(
            r#"{{"result":{{{header},"canceled":true,"cancel_reason":"etcdserver: no leader"}}}}"#
        );
        match parse(&cancelled) {
            Some(Err(EtcdError::WatchCanceled { reason })) => assert!(reason.contains("no leader")),
            other => panic!("a cancel without a compact revision read as {other:?}"),
        }
        let bare = format!(r#"{{"result":{{{header},"canceled":true}}}}"#);
        assert!(matches!(
            parse(&bare),
            Some(Err(EtcdError::WatchCanceled { .. }))
        ));
        let shutdown = r#"{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}"#;
        match parse(shutdown) {
            Some(Err(EtcdError::WatchCanceled { reason })) => {
                assert!(reason.contains("transport is closing"));
            }
            other => panic!("a member's shutdown read as {other:?}"),
        }
        let delete = format!(
            r#"{{"result":{{{header},"events":[{{"type":"DELETE","kv":{{"key":"L3cvaw==","mod_revision":"4"}}}}]}}}}"#
        );
        assert!(matches!(parse(&delete), Some(Ok(WatchEnd::Deleted))));
    }
}
