//! The loopback store's 404 and 409 bodies have Elasticsearch's shape: an `_update`
//! of a missing document without `upsert` (what the fixed recipe's acquire meets when its lock
//! document is gone) answers `document_missing_exception` with the reason
//! `[<id>]: document missing`; a `_create` of an existing id, and a conditional request whose
//! `if_seq_no`/`if_primary_term` no longer match, answer `version_conflict_engine_exception`
//! with Elasticsearch 7.x's reasons. Each body names the index and shard in the error and in
//! its one root cause, as `ElasticsearchException` renders them.
//!
//! **Not observed on a real cluster** (none can be installed here): the shapes and reasons are
//! those of Elasticsearch's `DocumentMissingException` and `VersionConflictEngineException`
//! messages as documented; `index_uuid` is a placeholder. The production client reads only
//! `error.type`, `error.reason` and `caused_by` (`checks/tests/docstore/error_table.rs`).

use lockwright_testkit::docstore::LoopbackServer;
use serde_json::{json, Value};

/// One raw HTTP/1.1 exchange: status and JSON body, no client in between.
fn raw(server: &LoopbackServer, method: &str, path: &str, body: &Value) -> (u16, Value) {
    use std::io::{Read, Write};
    let text = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut s = std::net::TcpStream::connect(&addr).expect("connect to the loopback server");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )
    .expect("send");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read the answer");
    let status: u16 = answer[9..12].parse().expect("a status line");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    (status, serde_json::from_str(body).expect("a JSON body"))
}

/// Elasticsearch's error body: the error, its one root cause equal to it, the status.
fn es_error(status: u16, error_type: &str, reason: &str, index: &str) -> Value {
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

#[test]
fn a_missing_document_and_a_version_conflict_answer_elasticsearchs_bodies() {
    let server = LoopbackServer::start();
    let source = lockwright::docstore::scripts::LEASE_ACQUIRE;
    let (status, _) = raw(
        &server,
        "POST",
        "/_scripts/lease-acquire",
        &json!({"script": {"lang": "painless", "source": source}}),
    );
    assert_eq!(status, 200);
    // `_update` without `upsert` of a lock document that is not there: 404.
    let acquire =
        json!({"script": {"id": "lease-acquire", "params": {"owner": "a", "lease": 1000}}});
    let (status, body) = raw(&server, "POST", "/files-lock/_update/1", &acquire);
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body,
        es_error(
            404,
            "document_missing_exception",
            "[1]: document missing",
            "files-lock"
        )
    );

    // `_create` of an id that exists: 409, naming the document's current `_version`.
    let (status, _) = raw(&server, "PUT", "/files-lock/_create/1", &json!({}));
    assert_eq!(status, 201);
    let (status, body) = raw(&server, "PUT", "/files-lock/_create/1", &json!({}));
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body,
        es_error(
            409,
            "version_conflict_engine_exception",
            "[1]: version conflict, document already exists (current version [1])",
            "files-lock"
        )
    );

    // A compare-and-delete with a stale token: 409, the required and the current numbers.
    let (status, body) = raw(
        &server,
        "DELETE",
        "/files-lock/_doc/1?if_seq_no=7&if_primary_term=1",
        &Value::Null,
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body,
        es_error(
            409,
            "version_conflict_engine_exception",
            "[1]: version conflict, required seqNo [7], primary term [1]. current document has \
             seqNo [0] and primary term [1]",
            "files-lock"
        )
    );

    // The same once the document is gone: "but no document was found".
    let (status, _) = raw(&server, "DELETE", "/files-lock/_doc/1", &Value::Null);
    assert_eq!(status, 200);
    let (status, body) = raw(
        &server,
        "DELETE",
        "/files-lock/_doc/1?if_seq_no=0&if_primary_term=1",
        &Value::Null,
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body["error"]["reason"],
        "[1]: version conflict, required seqNo [0], primary term [1]. but no document was found"
    );
}
