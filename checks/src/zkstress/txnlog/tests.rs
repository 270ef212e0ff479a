//! The parser on the toolkit's format, and the judge on small histories.

use super::*;

fn jute_str(s: &str) -> Vec<u8> {
    let mut v = i32::try_from(s.len()).unwrap().to_be_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

/// `setData` of `data` on `/d/ctr` at `version`, with a `check` on `check` first if given,
/// as the toolkit prints a `multi`'s operations (raw jute records).
fn multi(check: Option<&str>, data: &str, version: i32) -> Vec<u8> {
    let mut v = Vec::new();
    if let Some(c) = check {
        v.extend_from_slice(b"check:");
        v.extend(jute_str(c));
        v.extend_from_slice(&0i32.to_be_bytes());
        v.push(b';');
    }
    v.extend_from_slice(b"setData:");
    v.extend(jute_str("/d/ctr"));
    v.extend(jute_str(data));
    v.extend_from_slice(&version.to_be_bytes());
    v
}

/// The toolkit's output for creates, a guarded and an unguarded write (one at version 10,
/// whose last jute byte is the line's newline, as seen in a real run), a delete, a failed multi and a session close, in
/// Debian's ZooKeeper 3.8.0 format.
fn sample() -> Vec<u8> {
    let h = |sess: &str, zxid: &str, rest: &str| {
        format!("11/25/26, 8:28:20 PM UTC session 0x10000{sess} cxid 0x9 zxid {zxid} {rest}")
            .into_bytes()
    };
    let x = "/d/lk/_c_x-lock-0000000000";
    let z = "/d/lk/_c_z-lock-0000000001";
    let mut t = b"ZooKeeper Transactional Log File with dbid 0 txnlog format version 2\n".to_vec();
    for part in [
        h("0", "0x1", "createSession 4000\n"),
        h(
            "0",
            "0x3",
            "create /d/ctr,0,[31,s{'world,'anyone}\n],false,1\n",
        ),
        h(
            "0",
            "0x6",
            &format!("create2 {x},,[31,s{{'world,'anyone}}\n],true,1\n"),
        ),
        h(
            "1",
            "0x7",
            &format!("create2 {z},,[31,s{{'world,'anyone}}\n],true,2\n"),
        ),
        // Version 10 ends in 0x0a: that byte is also the end of the line.
        [
            h("0", "0x8", "multi "),
            multi(Some(x), &format!("1 {x}"), 10),
        ]
        .concat(),
        [
            h("1", "0x9", "multi "),
            multi(None, &format!("1 {z}"), 11),
            b"\n".to_vec(),
        ]
        .concat(),
        h("0", "0xa", &format!("delete '{x}\n")),
        h("1", "0xb", "multi error:\0\0\0\x01;error:\0\0\0\x02\n"),
        h("1", "0xc", &format!("closeSession v{{'{z}}}\n")),
        [
            h("1", "0xd", "multi "),
            multi(None, &format!("2 {z}"), 12),
            b"\n".to_vec(),
        ]
        .concat(),
        b"EOF reached after 10 txns.\n".to_vec(),
    ] {
        t.extend(part);
    }
    t
}

const SESSION_1: i64 = 0x10_0001;

#[test]
fn the_toolkit_output_parses_into_creates_deletes_closes_and_writes() {
    let t = parse(&sample());
    assert_eq!(t.len(), 10);
    assert_eq!(
        t[2].op,
        Op::Create {
            path: "/d/lk/_c_x-lock-0000000000".into(),
            ephemeral: true
        }
    );
    assert_eq!(
        t[4].op,
        Op::Multi {
            checks: vec!["/d/lk/_c_x-lock-0000000000".into()],
            set_data: vec![("/d/ctr".into(), "1 /d/lk/_c_x-lock-0000000000".into())]
        }
    );
    assert_eq!(
        t[8].op,
        Op::CloseSession {
            ephemerals: vec!["/d/lk/_c_z-lock-0000000001".into()]
        }
    );
    assert_eq!(t[7].op, Op::Other, "a failed multi wrote nothing");
}

/// The judge finds the unguarded write made while a lower node was alive, and the write
/// after the writer's session closed; the guarded write by the lowest node passes.
#[test]
fn writes_by_a_second_holder_or_after_the_session_are_violations() {
    let holds = [HoldRecord {
        client: 1,
        pid: 7,
        seq: 1,
        token: 7,
        session: SESSION_1,
    }];
    let v = judge(&parse(&sample()), "/d/lk", "/d/ctr", &holds);
    assert_eq!(v.counter_writes, 3);
    assert_eq!(v.counter_last, Some(2));
    assert_eq!(v.taken_by_session_close, 1);
    assert_eq!(v.violations.len(), 2, "{:#?}", v.violations);
    assert!(
        v.violations[0].contains("zxid 0x9: unguarded write"),
        "{:#?}",
        v.violations
    );
    assert!(v.violations[0].contains("two holders"));
    assert!(v.violations[1].contains("after its node was deleted at zxid 0xc"));
    assert_eq!(v.holds_checked, 1);
    assert!(v.nodes_left.is_empty());
    // What became of each node, by its czxid: x deleted by the session that created it, z
    // taken by its session's close.
    assert_eq!(
        v.fates[&6],
        "/d/lk/_c_x-lock-0000000000 deleted by its own session at zxid 0xa"
    );
    assert_eq!(
        v.fates[&7],
        "/d/lk/_c_z-lock-0000000001 taken by its session's close at zxid 0xc"
    );
}

/// A node deleted by a session other than its creator's is told apart from a release.
#[test]
fn a_delete_by_another_session_is_named_in_the_node_fate() {
    let text = String::from_utf8(sample()).unwrap().replace(
        "session 0x100000 cxid 0x9 zxid 0xa",
        "session 0x100005 cxid 0x9 zxid 0xa",
    );
    let v = judge(&parse(text.as_bytes()), "/d/lk", "/d/ctr", &[]);
    assert_eq!(
        v.fates[&6],
        "/d/lk/_c_x-lock-0000000000 deleted by session 0x100005 at zxid 0xa"
    );
}

/// A hold whose node never came first is reported with the client's view; so is a node
/// still alive at the end.
#[test]
fn a_hold_of_a_node_never_first_in_line_is_a_violation() {
    let text = sample();
    let cut: Vec<u8> = text
        .split(|&b| b == b'\n')
        .filter(|l| {
            let l = String::from_utf8_lossy(l);
            !l.contains("zxid 0xa ") && !l.contains("zxid 0xc ")
        })
        .collect::<Vec<_>>()
        .join(&b'\n');
    let holds = [HoldRecord {
        client: 2,
        pid: 9,
        seq: 4,
        token: 7,
        session: SESSION_1,
    }];
    let v = judge(&parse(&cut), "/d/lk", "/d/ctr", &holds);
    assert!(
        v.violations
            .iter()
            .any(|x| x.contains("client 2 (pid 9) hold 4")
                && x.contains("never shows that node first")),
        "{:#?}",
        v.violations
    );
    assert_eq!(v.nodes_left.len(), 2);
}

/// Two log files as `read_logs` concatenates them (a server restart rolls the log): the first
/// ends with the `delete` of the holder's node, then the toolkit's `EOF reached` line and the
/// next file's title. The delete is read with its path alone, so the next holder's guarded
/// write finds no lower node alive. (Before, the trailer went into the deleted path, the node
/// stayed alive for the judge, and CI runs failed with "two holders" that never were.)
#[test]
fn a_delete_that_ends_a_log_file_is_read_without_the_files_trailer() {
    let h = |sess: &str, zxid: &str, rest: &str| {
        format!("11/25/26, 8:28:20 PM UTC session 0x10000{sess} cxid 0x9 zxid {zxid} {rest}")
            .into_bytes()
    };
    let x = "/d/lk/_c_x-lock-0000000000";
    let z = "/d/lk/_c_z-lock-0000000001";
    let title = b"ZooKeeper Transactional Log File with dbid 0 txnlog format version 2\n".to_vec();
    let mut t = Vec::new();
    for part in [
        title.clone(),
        h(
            "0",
            "0x2",
            &format!("create2 {x},,[31,s{{'world,'anyone}}\n],true,1\n"),
        ),
        h(
            "1",
            "0x3",
            &format!("create2 {z},,[31,s{{'world,'anyone}}\n],true,2\n"),
        ),
        h("0", "0x4", &format!("delete '{x}\n")),
        b"EOF reached after 3 txns.\n\n".to_vec(),
        title,
        [
            h("1", "0x5", "multi "),
            multi(Some(z), &format!("1 {z}"), 0),
            b"\n".to_vec(),
        ]
        .concat(),
        b"EOF reached after 1 txns.\n".to_vec(),
    ] {
        t.extend(part);
    }
    let txns = parse(&t);
    assert_eq!(txns.len(), 4);
    assert_eq!(txns[2].op, Op::Delete { path: x.into() });
    let v = judge(&txns, "/d/lk", "/d/ctr", &[]);
    assert!(v.violations.is_empty(), "{:#?}", v.violations);
    assert_eq!(v.counter_writes, 1);
}

/// A log whose only transactions are counter writes setting `values`, in order.
fn writes(values: &[&str]) -> LogVerdict {
    let mut t = b"ZooKeeper Transactional Log File with dbid 0 txnlog format version 2\n".to_vec();
    for (i, v) in values.iter().enumerate() {
        t.extend(
            format!(
                "11/25/26, 8:28:20 PM UTC session 0x100000 cxid 0x9 zxid {:#x} multi ",
                0x10 + i
            )
            .into_bytes(),
        );
        t.extend(multi(None, &format!("{v} /d/lk/_c_x-lock-0000000000"), 1));
        t.push(b'\n');
    }
    judge(&parse(&t), "/d/lk", "/d/ctr", &[])
}

/// The exact counter holds for one write per increment, each value once, and fails at each
/// edge: one increment lost to two writers of the same value (even when the final value and
/// the acknowledged count agree), one write more than the counter rose, one value skipped,
/// a counter that went down.
#[test]
fn the_exact_counter_fails_on_a_value_written_twice_or_a_write_too_many() {
    let exact = writes(&["6", "7", "8"]);
    assert_eq!(exact.counter_values.len(), 3);
    assert_eq!(judge_counter(&exact, 5, 8), Vec::<String>::new());

    // Two holders read 6 and both wrote 7: three writes, the counter rose by two.
    let twice = writes(&["6", "7", "7"]);
    let v = judge_counter(&twice, 5, 7);
    assert_eq!(v.len(), 2, "{v:#?}");
    assert!(
        v[0].contains("3 counter writes, the counter rose by 2"),
        "{v:#?}"
    );
    assert!(
        v[1].contains("zxid 0x12: the counter set to 7 again (first at zxid 0x11)"),
        "{v:#?}"
    );

    // The same repeat with the count made to agree (the counter started one lower than the
    // first write shows): the count passes, the repeat and the skip still fail it.
    let v = judge_counter(&twice, 4, 7);
    assert_eq!(v.len(), 2, "{v:#?}");
    assert!(v[0].contains("set to 6 right after 4"), "{v:#?}");
    assert!(v[1].contains("set to 7 again"), "{v:#?}");

    // A skipped value.
    let v = judge_counter(&writes(&["6", "8"]), 5, 8);
    assert!(
        v.iter().any(|m| m.contains("set to 8 right after 6")),
        "{v:#?}"
    );

    // The count alone: one write, the counter rose by two.
    let v = judge_counter(&writes(&["6"]), 5, 7);
    assert_eq!(
        v,
        vec!["the log has 1 counter writes, the counter rose by 2 (5 to 7)".to_string()]
    );

    // Down.
    assert!(judge_counter(&exact, 9, 8)[0].contains("went down"));

    // Data that holds no number.
    let v = judge_counter(&writes(&["x"]), 0, 1);
    assert!(v[0].contains("holds no number"), "{v:#?}");
}

/// At the counter's top the suffix no longer tells creation order (ZooKeeper 3.8: creates one
/// at a time repeat `2147483647`, creates in flight together wrap negative). The judge orders
/// by `czxid`, so a write by a later node while an earlier one is alive is two holders, both
/// for a repeated suffix (the later node's name sorts first) and for a negative one.
#[test]
fn at_the_counters_top_a_later_node_writing_beside_an_earlier_one_is_two_holders() {
    let h = |sess: &str, zxid: &str, rest: &str| {
        format!("11/25/26, 8:28:20 PM UTC session 0x10000{sess} cxid 0x9 zxid {zxid} {rest}")
            .into_bytes()
    };
    let create = |sess, zxid, path: &str| {
        h(
            sess,
            zxid,
            &format!("create2 {path},,[31,s{{'world,'anyone}}\n],true,1\n"),
        )
    };
    let write = |sess, zxid, value: u64, writer: &str| {
        [
            h(sess, zxid, "multi "),
            multi(Some(writer), &format!("{value} {writer}"), 1),
            b"\n".to_vec(),
        ]
        .concat()
    };
    let first = "/d/lk/_c_b-lock-2147483647";
    for later in ["/d/lk/_c_a-lock-2147483647", "/d/lk/_c_c-lock--2147483648"] {
        let mut t =
            b"ZooKeeper Transactional Log File with dbid 0 txnlog format version 2\n".to_vec();
        for part in [
            create("0", "0x6", first),
            create("1", "0x7", later),
            write("0", "0x8", 1, first),
            write("1", "0x9", 2, later),
        ] {
            t.extend(part);
        }
        let v = judge(&parse(&t), "/d/lk", "/d/ctr", &[]);
        assert_eq!(v.lock_nodes, 2, "{later}");
        assert_eq!(v.violations.len(), 1, "{later}: {:#?}", v.violations);
        assert!(
            v.violations[0].contains(&format!("by {later} while the lower node {first}")),
            "{:#?}",
            v.violations
        );
    }
}

/// An ensemble's committed history: what a quorum of members logged. A proposal only the
/// killed leader logged (its `closeSession` never committed, re-done by the next leader under
/// another zxid) is left out; one member's log is taken whole.
#[test]
fn only_what_a_quorum_logged_is_committed() {
    use super::{committed, Op, Txn};
    let t = |zxid| Txn {
        zxid,
        session: 1,
        op: Op::Other,
    };
    let a = vec![t(1), t(2), t(3)];
    let b = vec![t(1), t(2)];
    let c = vec![t(1), t(4)];
    let zx = |v: Vec<Txn>| v.into_iter().map(|t| t.zxid).collect::<Vec<_>>();
    assert_eq!(zx(committed(&[a.clone(), b, c])), vec![1, 2]);
    assert_eq!(zx(committed(&[a])), vec![1, 2, 3]);
}

/// Two members that logged different transactions under one zxid have diverged: the copy a
/// quorum does not share is not committed, and `diverged` names the zxid. Before, any quorum of
/// zxids counted, whatever the members logged under them.
#[test]
fn members_that_logged_different_content_under_one_zxid_are_reported() {
    use super::{committed, diverged, Op, Txn};
    let t = |zxid, path: &str| Txn {
        zxid,
        session: 1,
        op: Op::Create {
            path: path.into(),
            ephemeral: true,
        },
    };
    let a = vec![t(1, "/l/x"), t(2, "/l/y")];
    let b = vec![t(1, "/l/x"), t(2, "/l/z")];
    let c = vec![t(1, "/l/x")];
    let all = [a.clone(), b.clone(), c];
    let zx = |v: Vec<Txn>| v.into_iter().map(|t| t.zxid).collect::<Vec<_>>();
    // zxid 2: two copies, but no two agree: not committed.
    assert_eq!(zx(committed(&all)), vec![1]);
    let d = diverged(&all);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].starts_with("zxid 0x2: "), "{d:?}");
    // Agreeing members: nothing reported.
    assert!(diverged(&[a.clone(), a.clone(), b[..1].to_vec()]).is_empty());
    assert_eq!(
        zx(committed(&[a.clone(), a.clone(), b.clone()])),
        vec![1, 2]
    );
    // The minority copy first: the quorum's content is the one kept.
    let kept = committed(&[b, a.clone(), a.clone()]);
    assert_eq!(
        kept, a,
        "the copy two members logged, not the first one seen"
    );
}
