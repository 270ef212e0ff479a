//! Lucene's own replicators as peers: 4.10.4 (`checks/tests/replication/HandlerPeer410.java`,
//! 4.10 readers) and 8.7 (`HandlerPeer87.java`, the 5–9 handler, with 8.7 readers:
//! `ReplicationReader87.java`). In each,
//! an `IndexWriter` publishes each commit to a `LocalReplicator`, and a `ReplicationClient`
//! with an `IndexReplicationHandler` copies it into the replica, under the same reader harness
//! the copier runs under: the handler's replica directory stops after every call that changes
//! it (`STEP create|fill|sync|delete <name>`) until each reader thread has finished two more
//! search + reopen attempts. What the readers see is compared with the model's rows for
//! `lucene-4.10-handler` (`docs/replication.md` §5, rows 5–7) and `lucene-5-handler` (rows
//! 8–10).

use crate::java::{classpath_87, serial, Proc};

/// Which Lucene drives the replica, and which readers search it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lucene {
    V410,
    V87,
}

impl Lucene {
    fn spawn(self, name: &'static str, class410: &str, class87: &str, args: &[&str]) -> Proc {
        match self {
            Lucene::V410 => Proc::spawn(name, class410, args),
            Lucene::V87 => Proc::spawn_with(classpath_87(), name, class87, args),
        }
    }
}
use crate::rounds::{readers_look, Outcome, MODES};

/// Runs `rounds` rounds of the real handler of `lucene`; `merge`: every commit is a `forceMerge(1)`
/// (it shares no file with the previous one, so the handler deletes the previous generation's
/// data files); `hold`: the readers keep the commit they have during the rounds.
fn run_peer(
    lucene: Lucene,
    name: &str,
    rounds: usize,
    merge: bool,
    hold: bool,
) -> (Outcome, Vec<String>) {
    let _serial = serial();
    let root = tempfile::tempdir().unwrap();
    let (src, replica, work) = (
        root.path().join("source"),
        root.path().join("replica"),
        root.path().join("sessions"),
    );
    std::fs::create_dir_all(&replica).unwrap();
    let mut peer = lucene.spawn(
        "lucene replicator",
        "HandlerPeer410",
        "HandlerPeer87",
        &[
            src.to_str().unwrap(),
            replica.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    peer.wait_for("the first commit replicated", |o| {
        o.lines.iter().any(|l| l.starts_with("READY "))
    });
    let mut reader = lucene.spawn(
        "reader",
        "ReplicationReader",
        "ReplicationReader87",
        &[replica.to_str().unwrap(), &MODES.join(",")],
    );
    reader.wait_for("both readers open", |l| {
        MODES
            .iter()
            .all(|m| l.lines.iter().any(|x| x.starts_with(&format!("OPEN {m} "))))
    });
    if hold {
        reader.send("HOLD");
        let seen = reader.tries();
        reader.wait_for("the readers to hold", |l| {
            MODES.iter().all(|m| l.tries.get(*m) > seen.get(*m))
        });
    }
    let mut outcome = Outcome::default();
    let mut steps: Vec<String> = Vec::new();
    for round in 0..rounds {
        peer.send(if merge { "ROUND MERGE" } else { "ROUND" });
        loop {
            let (seen, done) = (steps.len(), round + 1);
            peer.wait_for("a handler call or the end of the round", |o| {
                o.lines.iter().filter(|l| l.starts_with("STEP ")).count() > seen
                    || o.lines.iter().filter(|l| l.starts_with("DONE ")).count() >= done
                    || o.lines.iter().any(|l| l.starts_with("ERROR"))
            });
            let lines = peer.lines();
            assert!(
                !lines.iter().any(|l| l.starts_with("ERROR")),
                "{name}: the peer failed:\n{}",
                lines.join("\n")
            );
            let all: Vec<String> = lines
                .iter()
                .filter_map(|l| l.strip_prefix("STEP ").map(str::to_string))
                .collect();
            if all.len() > seen {
                steps.push(all[seen].clone());
                readers_look(&reader.out);
                peer.send("GO");
                continue;
            }
            break;
        }
        outcome.rounds += 1;
    }
    outcome.steps = steps.len();
    if hold {
        reader.send("GO");
    }
    let seen = reader.tries();
    reader.wait_for("final attempts", |l| {
        MODES.iter().all(|m| {
            l.tries.get(*m).copied().unwrap_or(0) >= seen.get(*m).copied().unwrap_or(0) + 3
        })
    });
    let lines = reader.finish("STOP");
    drop(peer.finish("STOP"));
    outcome.read(&lines);
    println!(
        "{}\n  handler calls: {}",
        outcome.report(name),
        steps.join(", ")
    );
    (outcome, steps)
}

/// Model rows 5 and 7 (`lucene-4.10-handler × keep-up`, "a reader never reads a partial file"
/// VIOLATED): the handler copies `segments_N` in place, so readers read it torn. Lucene 4.10's
/// reader retries and falls back to `segments_(N-1)`, which the handler deletes only after the
/// new commit is in place, so nothing reaches the application here: the violation shows as
/// retries, as for the seed's rule with every generation (`main.rs`). The handler's calls are
/// the model's order: data files created and filled in place, then `segments_N`, then the old
/// generation deleted.
#[test]
fn lucene_4_10_handler_lets_readers_read_a_torn_segments_file() {
    let name = "real lucene 4.10 handler";
    let (o, steps) = run_peer(Lucene::V410, name, 4, false, false);
    let torn = o
        .retries
        .values()
        .flatten()
        .any(|r| r.contains("EOFException") || r.contains("CorruptIndexException"));
    assert!(torn, "{}", o.report(name));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert!(o.commits(m) >= 4, "{}", o.report(name));
    }
    // In place, segments_N after the data files, deletes last.
    let pos = |p: &str| steps.iter().position(|s| s.starts_with(p));
    assert!(pos("create segments_") > pos("fill _"), "{steps:?}");
    assert!(pos("delete segments_") > pos("fill segments_"), "{steps:?}");
    assert!(!steps.iter().any(|s| s.contains("pending_")), "{steps:?}");
}

/// Model rows 5 and 7 ("a reader never loses a file it is using"): the handler deletes the
/// previous generation at once, so a by-name reader still searching it fails, while one with
/// open handles keeps reading (holds for `open-handles`, VIOLATED for `reopen-by-name`).
#[test]
fn lucene_4_10_handler_deletes_the_previous_generation_under_its_readers() {
    let name = "real lucene 4.10 handler, hold 1 round";
    let (o, _) = run_peer(Lucene::V410, name, 1, true, true);
    assert!(o.fails("by-name") > 0, "{}", o.report(name));
    assert_eq!(o.fails("handles"), 0, "{}", o.report(name));
}

/// Model rows 8 and 10 (`lucene-5-handler × keep-up`): readers that keep up never meet a missing
/// or partial file — `segments_N` appears by a rename, and no `segments_N` names a data file
/// before it is complete — so no 8.7 reader fails, though 8.7 has no fallback to hide one. The
/// handler's calls are the model's order: data files in place, `pending_segments_N`, `sync`,
/// `rename`, `syncMetaData`, then the deletes.
#[test]
fn lucene_8_7_handler_never_fails_a_reader_that_keeps_up() {
    let name = "real lucene 8.7 handler";
    let (o, steps) = run_peer(Lucene::V87, name, 4, false, false);
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        // Nor does Lucene retry anything for it (8.7's info stream, read as 4.10's).
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
        assert!(o.commits(m) >= 4, "{}", o.report(name));
    }
    let pos = |p: &str| steps.iter().position(|s| s.starts_with(p));
    assert!(pos("create pending_segments_") > pos("fill _"), "{steps:?}");
    assert!(
        pos("rename pending_segments_") > pos("fill pending_segments_"),
        "{steps:?}"
    );
    assert!(
        pos("syncMetaData") > pos("rename pending_segments_"),
        "{steps:?}"
    );
    assert!(pos("delete segments_") > pos("syncMetaData"), "{steps:?}");
    assert!(
        !steps.iter().any(|s| s.starts_with("create segments_")),
        "{steps:?}"
    );
}

/// Model rows 8 and 10 ("a reader never loses a file it is using": holds with open handles,
/// VIOLATED by name; "no file in use is deleted" VIOLATED in both): the 8.7 handler deletes the
/// previous generation at once under readers that still search it.
#[test]
fn lucene_8_7_handler_deletes_the_previous_generation_under_its_readers() {
    let name = "real lucene 8.7 handler, hold 1 round";
    let (o, _) = run_peer(Lucene::V87, name, 1, true, true);
    assert!(o.fails("by-name") > 0, "{}", o.report(name));
    assert_eq!(o.fails("handles"), 0, "{}", o.report(name));
}
