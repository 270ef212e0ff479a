//! The document-store semantics module (`lockwright_model::docstore::store`), row by row of
//! the table in its header: what the model, the simulated store and the loopback server all
//! answer. Each test names the Elasticsearch behaviour it pins.

use lockwright_model::docstore::store::{
    Owner, Script, ScriptError, ScriptOutcome, Shard, Source, StoreError, Token, UpdateBody,
    WriteResult,
};

const C0: Owner = Owner {
    client: 0,
    incarnation: 0,
};
const C1: Owner = Owner {
    client: 1,
    incarnation: 0,
};

fn tok(primary_term: u64, seq_no: u64) -> Token {
    Token {
        primary_term,
        seq_no,
    }
}

#[test]
fn create_is_put_if_absent_with_409_when_present() {
    let mut s: Shard<&str> = Shard::new();
    let w = s.create("global", Source::Empty).unwrap();
    assert_eq!((w.result, w.token), (WriteResult::Created, tok(1, 0)));
    assert_eq!(w.result.status(), 201);
    let e = s.create("global", Source::Empty).unwrap_err();
    assert_eq!(e, StoreError::VersionConflict);
    assert_eq!(e.status(), 409);
    assert_eq!(e.to_string(), "409 version_conflict_engine_exception");
    assert_eq!(
        s.next_seq_no(),
        1,
        "a refused create takes no sequence number"
    );
}

#[test]
fn every_write_takes_the_next_seq_no_and_delete_of_nothing_is_404_with_a_seq_no() {
    let mut s: Shard<&str> = Shard::new();
    s.create("1", Source::Exclusive).unwrap();
    let d = s.delete(&"1", None).unwrap();
    assert_eq!((d.result, d.token.seq_no), (WriteResult::Deleted, 1));
    let d = s.delete(&"1", None).unwrap();
    assert_eq!((d.result, d.token.seq_no), (WriteResult::NotFound, 2));
    assert_eq!(d.result.status(), 404);
    let w = s.create("1", Source::Exclusive).unwrap();
    assert_eq!(w.token.seq_no, 3);
}

#[test]
fn update_upsert_inserts_the_body_without_running_the_script() {
    let mut s: Shard<&str> = Shard::new();
    // rw-lock would fail with a NullPointerException on `{}`; on a missing document the
    // upsert body goes in as is.
    let w = s
        .update(
            "1",
            UpdateBody::Script(Script::RwLock),
            Some(Source::Shared { lock_count: 1 }),
            None,
        )
        .unwrap();
    assert_eq!(w.result, WriteResult::Created);
    assert_eq!(
        s.get(&"1").unwrap().source,
        Source::Shared { lock_count: 1 }
    );
    // Present: the script runs.
    s.update(
        "1",
        UpdateBody::Script(Script::RwLock),
        Some(Source::Shared { lock_count: 1 }),
        None,
    )
    .unwrap();
    assert_eq!(
        s.get(&"1").unwrap().source,
        Source::Shared { lock_count: 2 }
    );
}

#[test]
fn update_without_upsert_of_a_missing_document_is_404() {
    let mut s: Shard<&str> = Shard::new();
    let e = s
        .update("1", UpdateBody::Script(Script::RwUnlock), None, None)
        .unwrap_err();
    assert_eq!(e, StoreError::DocumentMissing);
    assert_eq!(e.status(), 404);
}

#[test]
fn document_lock_script_throws_for_another_owner_and_is_noop_for_the_same() {
    let mut s: Shard<&str> = Shard::new();
    let lock = |o| {
        (
            UpdateBody::Script(Script::DocumentLock { process_id: o }),
            Some(Source::ProcessId(o)),
        )
    };
    let (b, u) = lock(C0);
    let first = s.update("1", b, u, None).unwrap();
    let (b, u) = lock(C1);
    let e = s.update("1", b, u, None).unwrap_err();
    assert_eq!(
        e,
        StoreError::Script(ScriptError::Explain("already locked by other thread"))
    );
    assert_eq!(e.status(), 400);
    // Same owner: noop, and (Elasticsearch >= 7.4, elastic/elasticsearch#44603) the response
    // carries the document's current _seq_no/_primary_term.
    let (b, u) = lock(C0);
    let again = s.update("1", b, u, None).unwrap();
    assert_eq!(again.result, WriteResult::Noop);
    assert_eq!(again.token, first.token);
    assert_eq!(s.next_seq_no(), 1, "a noop takes no sequence number");
}

#[test]
fn rw_lock_throws_on_exclusive_and_rw_unlock_deletes_at_zero() {
    assert_eq!(
        Script::RwLock.run(Source::Exclusive),
        ScriptOutcome::Fail(ScriptError::Explain(
            "one thread is writing data, the lock is exclusive now"
        ))
    );
    assert_eq!(
        Script::RwUnlock.run(Source::Shared { lock_count: 2 }),
        ScriptOutcome::Index(Source::Shared { lock_count: 1 })
    );
    assert_eq!(
        Script::RwUnlock.run(Source::Shared { lock_count: 1 }),
        ScriptOutcome::Delete
    );
    // `--ctx._source.lock_count` on a document without it: a runtime error, 400.
    assert_eq!(
        Script::RwUnlock.run(Source::Exclusive),
        ScriptOutcome::Fail(ScriptError::NullPointer)
    );
    let mut s: Shard<&str> = Shard::new();
    s.create("1", Source::Shared { lock_count: 1 }).unwrap();
    let w = s
        .update("1", UpdateBody::Script(Script::RwUnlock), None, None)
        .unwrap();
    assert_eq!(w.result, WriteResult::Deleted);
    assert!(s.get(&"1").is_none());
}

#[test]
fn if_seq_no_and_if_primary_term_must_both_match() {
    let mut s: Shard<&str> = Shard::new();
    let w = s.create("1", Source::Exclusive).unwrap();
    assert_eq!(
        s.delete(&"1", Some(tok(1, 5))).unwrap_err(),
        StoreError::VersionConflict
    );
    assert_eq!(
        s.delete(&"1", Some(tok(2, 0))).unwrap_err(),
        StoreError::VersionConflict
    );
    assert_eq!(
        s.index("1", Source::Empty, Some(tok(1, 7))).unwrap_err(),
        StoreError::VersionConflict
    );
    assert_eq!(
        s.update("1", UpdateBody::Doc, None, Some(tok(1, 7)))
            .unwrap_err(),
        StoreError::VersionConflict
    );
    let d = s.delete(&"1", Some(w.token)).unwrap();
    assert_eq!(d.result, WriteResult::Deleted);
    // No document: "required seqNo [..], primary term [..]. but no document was found".
    assert_eq!(
        s.delete(&"1", Some(w.token)).unwrap_err(),
        StoreError::VersionConflict
    );
}

#[test]
fn index_inserts_or_replaces() {
    let mut s: Shard<&str> = Shard::new();
    let w = s.index("1", Source::Empty, None).unwrap();
    assert_eq!(w.result, WriteResult::Created);
    let w2 = s.index("1", Source::Exclusive, Some(w.token)).unwrap();
    assert_eq!(w2.result, WriteResult::Updated);
    assert_eq!(s.get(&"1").unwrap().source, Source::Exclusive);
}

#[test]
fn failover_raises_the_primary_term_documents_keep_theirs() {
    let mut s: Shard<&str> = Shard::new();
    let old = s.create("1", Source::Exclusive).unwrap();
    s.promote_replica();
    assert_eq!(s.primary_term(), 2);
    assert_eq!(s.get(&"1").unwrap().token(), old.token, "unchanged");
    let new = s.create("2", Source::Exclusive).unwrap();
    assert_eq!(new.token, tok(2, 1));
    assert!(new.token > old.token);
    // The term orders tokens before the sequence number.
    assert!(tok(2, 0) > tok(1, 9));
}

#[test]
fn lease_acquire_refuses_a_live_lease_and_rewrites_a_passed_or_own_one() {
    let acquire = |o, now, expires| Script::LeaseAcquire {
        owner: o,
        now,
        expires,
    };
    let held = Source::Lease {
        owner: C0,
        expires: 10,
    };
    assert_eq!(
        acquire(C1, 9, 19).run(held),
        ScriptOutcome::Fail(ScriptError::Explain("lease held by another owner"))
    );
    assert_eq!(
        acquire(C1, 10, 20).run(held),
        ScriptOutcome::Index(Source::Lease {
            owner: C1,
            expires: 20
        }),
        "expires <= now: taken over"
    );
    assert_eq!(
        acquire(C0, 12, 22).run(held),
        ScriptOutcome::Index(Source::Lease {
            owner: C0,
            expires: 22
        }),
        "the owner's own acquire is a write, never a noop (finding 1)"
    );
    // The deliberately broken script of `leased-noop`.
    let noop = Script::LeaseAcquireNoop {
        owner: C0,
        now: 12,
        expires: 22,
    };
    assert_eq!(noop.run(held), ScriptOutcome::Noop);
}

#[test]
fn fenced_write_refuses_a_lower_token_and_accepts_equal_or_higher() {
    let data = |fence| Source::Data { fence };
    let fenced = |t| Script::FencedWrite { token: t };
    assert_eq!(
        fenced(tok(1, 3)).run(data(None)),
        ScriptOutcome::Index(data(Some(tok(1, 3))))
    );
    assert_eq!(
        fenced(tok(1, 2)).run(data(Some(tok(1, 3)))),
        ScriptOutcome::Fail(ScriptError::Explain("stale fencing token"))
    );
    assert_eq!(
        fenced(tok(1, 3)).run(data(Some(tok(1, 3)))),
        ScriptOutcome::Index(data(Some(tok(1, 3))))
    );
    assert_eq!(
        fenced(tok(2, 0)).run(data(Some(tok(1, 3)))),
        ScriptOutcome::Index(data(Some(tok(2, 0)))),
        "a later primary term wins"
    );
}

#[test]
fn a_partial_doc_merge_always_counts_as_an_update() {
    let mut s: Shard<&str> = Shard::new();
    s.create("1", Source::Data { fence: None }).unwrap();
    let w = s.update("1", UpdateBody::Doc, None, None).unwrap();
    assert_eq!((w.result, w.result.status()), (WriteResult::Updated, 200));
}

#[test]
fn scripts_carry_their_ids_and_painless_sources() {
    let all = [
        Script::DocumentLock { process_id: C0 },
        Script::RwLock,
        Script::RwUnlock,
        Script::LeaseAcquire {
            owner: C0,
            now: 0,
            expires: 1,
        },
        Script::LeaseAcquireNoop {
            owner: C0,
            now: 0,
            expires: 1,
        },
        Script::FencedWrite { token: tok(1, 0) },
    ];
    let ids: Vec<&str> = all.iter().map(|s| s.id()).collect();
    assert_eq!(
        ids,
        [
            "document-lock",
            "rw-lock",
            "rw-unlock",
            "lease-acquire",
            "lease-acquire-noop",
            "fenced-write"
        ]
    );
    assert!(Script::RwUnlock
        .painless()
        .contains("--ctx._source.lock_count == 0"));
    assert!(all.iter().all(|s| !s.painless().contains('‘')));
    assert_eq!(C0.to_string(), "c0-i0");
}
