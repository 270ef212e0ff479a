//! Elasticsearch's (and OpenSearch's) error bodies the document-store tests answer with or
//! read, each with where its shape comes from. Shared by `docstore/error_table.rs`
//! and `docstore/http.rs`; each uses a part.
#![allow(dead_code)]

// The 400 bodies. Their shapes come from the references, not from this client:
// - `Debug.explain` in an `_update`: the Elasticsearch reference, Painless guide, "Painless
//   debugging" (`docs/painless/painless-guide/painless-debugging.asciidoc`; the page's example
//   `POST /hockey/_update/1 {"script": "Debug.explain(ctx._source)"}` answers 400
//   `illegal_argument_exception` "failed to execute script", caused by a `script_exception`
//   whose `to_string` is the explained value, and its test expects `painless_explain_error`
//   in the body; a full body printed in a translation of the page shows the cause as
//   `"caused_by": {"type": "painless_explain_error", "reason": null}` and the
//   `script_exception`'s reason as "runtime error").
// - A compile error in an update script: OpenSearch's documentation, "Update document",
//   section "Script compilation error" (400 `illegal_argument_exception` ← `script_exception`
//   "compile error" ← `illegal_argument_exception` "cannot resolve symbol [..]").
// - Stored scripts disabled: Elasticsearch's `ScriptService` throws
//   `IllegalArgumentException("cannot execute [" + type + "] scripts")`, and the update
//   helper wraps a script's failure as "failed to execute script" (both 400).
// - A mapping error: `mapper_parsing_exception`, "failed to parse field [..] of type [..]".
/// The acquire script's refusal, as Elasticsearch sends it.
pub const LEASE_HELD_BODY: &str = r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"failed to execute script"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","reason":"runtime error","painless_class":"java.lang.String","to_string":"lease held by another owner","java_class":"java.lang.String","script_stack":["Debug.explain('lease held by another owner'); } ","      ^---- HERE"],"script":" ","lang":"painless","caused_by":{"type":"painless_explain_error","reason":null}}},"status":400}"#;
/// The fence's refusal, as Elasticsearch sends it.
pub const STALE_TOKEN_BODY: &str = r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"failed to execute script"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","reason":"runtime error","painless_class":"java.lang.String","to_string":"stale fencing token","java_class":"java.lang.String","script_stack":["Debug.explain('stale fencing token'); } ","      ^---- HERE"],"script":" ","lang":"painless","caused_by":{"type":"painless_explain_error","reason":null}}},"status":400}"#;
/// A `Debug.explain` of something else (another script under the same id).
pub const OTHER_EXPLAIN_BODY: &str = r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"failed to execute script"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","reason":"runtime error","painless_class":"java.util.LinkedHashMap","to_string":"{owner=owner-b, expires=1700000030000}","java_class":"java.util.LinkedHashMap","script_stack":[],"script":" ","lang":"painless","caused_by":{"type":"painless_explain_error","reason":null}}},"status":400}"#;
pub const COMPILE_ERROR_BODY: &str = r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"failed to execute script"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","reason":"compile error","script_stack":["... ctx._source.expires > params.nw) { ...","                              ^---- HERE"],"script":" ","lang":"painless","position":{"offset":92,"start":67,"end":117},"caused_by":{"type":"illegal_argument_exception","reason":"cannot resolve symbol [params.nw]"}}},"status":400}"#;
pub const STORED_OFF_BODY: &str = r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"cannot execute [stored] scripts"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"illegal_argument_exception","reason":"cannot execute [stored] scripts"}},"status":400}"#;
pub const MAPPING_BODY: &str = r#"{"error":{"root_cause":[{"type":"mapper_parsing_exception","reason":"failed to parse field [expires] of type [date] in document with id '1'. Preview of field's value: 'soon'"}],"type":"mapper_parsing_exception","reason":"failed to parse field [expires] of type [date] in document with id '1'. Preview of field's value: 'soon'","caused_by":{"type":"illegal_argument_exception","reason":"failed to parse date field [soon]"}},"status":400}"#;

// Example bodies from the references, pinned (values shortened where the page elides them):
/// Elasticsearch reference, Painless guide, "Painless debugging": the answer to
/// `POST /hockey/_update/1 {"script": "Debug.explain(ctx._source)"}` (the page elides
/// `root_cause` and the script fields; its test expects `painless_explain_error` in the body).
pub const REF_UPDATE_EXPLAIN: &str = r#"{"error":{"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","to_string":"{gp=[26, 82, 1], last=gaudreau, assists=[17, 46, 0], first=johnny, goals=[9, 27, 1]}","painless_class":"java.util.LinkedHashMap","java_class":"java.util.LinkedHashMap"}},"status":400}"#;
/// The same answer in full, as a translation of that page prints it: the `script_exception`'s
/// reason "runtime error", caused by `painless_explain_error` with a `null` reason.
pub const REF_UPDATE_EXPLAIN_FULL: &str = r#"{"error":{"root_cause":[{"type":"remote_transport_exception","reason":"[localhost][127.0.0.1:9300][indices:data/write/update[s]]"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","reason":"runtime error","painless_class":"java.util.LinkedHashMap","to_string":"{first=johnny, last=gaudreau}","java_class":"java.util.LinkedHashMap","script_stack":["Debug.explain(ctx._source)","                 ^---- HERE"],"script":"Debug.explain(ctx._source)","lang":"painless","caused_by":{"type":"painless_explain_error","reason":null}}},"status":400}"#;
/// OpenSearch documentation, "Update document", "Script compilation error": a 400 of the same
/// outer type that is NOT an explain.
pub const REF_COMPILE_ERROR: &str = r#"{"error":{"root_cause":[{"type":"illegal_argument_exception","reason":"failed to execute script"}],"type":"illegal_argument_exception","reason":"failed to execute script","caused_by":{"type":"script_exception","reason":"compile error","script_stack":["ctx._source.value = params.newValue","                         ^---- HERE"],"script":"ctx._source.value = params.newValue","lang":"painless","position":{"offset":25,"start":0,"end":34},"caused_by":{"type":"illegal_argument_exception","reason":"cannot resolve symbol [params.newValue]"}}},"status":400}"#;
