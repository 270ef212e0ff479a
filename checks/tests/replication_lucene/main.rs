//! The replication copier (`lockwright::replication`) against real Lucene 4.10.4 readers, and
//! its calls replayed through the model (`lockwright_model::replication`).
//!
//! Real Lucene: a Java `IndexWriter` (Debian's `liblucene4.10-java`) keeps committing into a
//! source index and publishes each commit (`checks/tests/replication/ReplicationWriter.java`);
//! the copier replicates the newest commit, round after round, into a replica directory on
//! which Java reader threads search and reopen continuously
//! (`checks/tests/replication/ReplicationReader.java`): one holds its files open as Lucene does
//! on a local filesystem (`handles`), one opens each file by name at every read, as a client
//! of a network filesystem sees another client's delete (`by-name`). The copier's hook pauses
//! after EVERY call until each reader thread has finished two more search+reopen attempts, so
//! the readers look at every intermediate state of the replica: the outcomes do not depend on
//! timing. What each scenario asserts is what the model's verdict table says
//! (`docs/replication.md`), with Lucene 4.10's own retry (`FindSegmentsFile` retries the newest
//! `segments_N` and falls back to the previous one) reported separately from the failures
//! that reach the application.
//!
//! Lucene's own replicators, 4.10.4 and 8.7, run under the same reader harness in
//! `handlers.rs`.
//!
//! These tests FAIL (they do not skip) when `javac`, `java` or the Lucene jars are missing: CI
//! installs them (`apt-get install -y openjdk-17-jdk-headless liblucene4.10-java`, and `.ci/run`
//! unpacks `liblucene8-java` into `$LOCKWRIGHT_LUCENE8_DIR`, default
//! `~/.cache/lockwright/lucene8`).
//! `LOCKWRIGHT_LUCENE_JAR` points at another lucene-core 4.10.x jar.
//!
//! `cargo test -p lockwright-checks --test replication_lucene -- --nocapture` prints each
//! scenario's counts.

mod handlers;
mod java;
mod refinement;
mod rounds;

use lockwright::replication::Order;
use lockwright_testkit::replication as orders;

use rounds::{run, Gens, Plan, MODES};

// ---------------------------------------------------------------------------------------------
// The scenarios. Model rows: docs/replication.md, "Verdict table".
// ---------------------------------------------------------------------------------------------

/// Model rows 1–2 (`lockwright`, keep-up, both reader kinds): no reader ever meets a missing or
/// partial file — not even one Lucene would retry on — and none fails.
#[test]
fn lockwright_order_never_fails_a_lucene_reader() {
    let name = "lockwright";
    let o = run(name, Order::Lockwright, Plan::rounds(8, Gens::Skip));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
        assert!(o.commits(m) >= 5, "{}", o.report(name));
        // Every commit a reader opened held exactly what the writer committed at it.
        assert_eq!(o.verified(m), o.opens(m), "{}", o.report(name));
    }
}

/// The twin of the document check: the writer's record of the first commit loses one id
/// before the readers open it, and every reader thread fails that check ("verify") on it.
#[test]
fn a_reader_that_counts_finds_a_commit_that_differs_from_the_writers_record() {
    let name = "lockwright, one id taken out of the writer's record";
    let plan = Plan {
        tamper_record: true,
        ..Plan::rounds(2, Gens::Next)
    };
    let o = run(name, Order::Lockwright, plan);
    for m in MODES {
        let verify = o.fails.get(m).into_iter().flatten().filter(|f| {
            f.starts_with("verify ")
                && f.contains("the writer committed")
                && f.contains("ids the writer did not commit [0]")
        });
        assert!(verify.count() >= 1, "{}", o.report(name));
    }
}

/// Model rows 1–2 with `crash=1`: a round stopped after any call and finished by a copier that
/// knows no previous commit (it refuses the commit if the crashed round had already renamed
/// `segments_N` into place) leaves readers untouched.
#[test]
fn lockwright_order_survives_copier_crashes() {
    let name = "lockwright + crashes";
    let plan = Plan {
        crashes: true,
        ..Plan::rounds(8, Gens::Skip)
    };
    let o = run(name, Order::Lockwright, plan);
    assert!(o.crashes >= 3, "{}", o.report(name));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
    }
}

/// Readers that keep their commit (`HOLD`) while the copier brings force-merged commits.
fn hold(rounds: usize) -> Plan {
    Plan {
        hold: true,
        ..Plan::rounds(rounds, Gens::Skip)
    }
}

/// Model row 2 (keep-up: a reader keeps its commit for one round): the seed's retention keeps
/// the held commit's files, so even the by-name reader keeps searching.
#[test]
fn lockwright_order_keeps_a_commit_held_for_one_round() {
    let name = "lockwright, hold 1 round";
    let o = run(name, Order::Lockwright, hold(1));
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
    }
}

/// Model row 4 (`lockwright × reopen-by-name × unbounded`): held for two rounds, the commit's
/// files are deleted; the by-name reader loses them, the reader with open handles does not
/// (row 3: "never loses a file" holds with open handles).
#[test]
fn lockwright_order_loses_a_commit_held_for_two_rounds_by_name() {
    let name = "lockwright, hold 2 rounds";
    let o = run(name, Order::Lockwright, hold(2));
    assert!(o.fails("by-name") > 0, "{}", o.report(name));
    assert_eq!(o.fails("handles"), 0, "{}", o.report(name));
}

/// Model rows 12–13 (`lockwright-no-retention`, keep-up): deleting the previous generation at
/// once is safe for readers with open handles, and takes the files of a by-name reader that
/// still searches it.
#[test]
fn no_retention_order_is_safe_only_with_open_handles() {
    let name = "lockwright-no-retention, hold 1 round";
    let o = run(name, orders::LOCKWRIGHT_NO_RETENTION, hold(1));
    assert!(o.fails("by-name") > 0, "{}", o.report(name));
    assert_eq!(o.fails("handles"), 0, "{}", o.report(name));
    let name = "lockwright-no-retention";
    let o = run(
        name,
        orders::LOCKWRIGHT_NO_RETENTION,
        Plan::rounds(6, Gens::Skip),
    );
    for m in MODES {
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
        assert_eq!(o.retries(m), 0, "{}", o.report(name));
    }
}

/// Model row 15 (`seed-rule`): readers read `segments_N` while it is copied in place. Lucene
/// 4.10 sees a torn file (`EOFException`), retries, and falls back to `segments_N-1`: when
/// the replica received every generation, that is the previous commit (which the seed's rule
/// keeps) and nothing reaches the application; when the copier skipped a generation there is
/// no `segments_N-1`, and the reopen fails.
#[test]
fn seed_rule_order_lets_readers_read_a_partial_segments_file() {
    let name = "seed-rule, every generation";
    let o = run(name, orders::SEED_RULE, Plan::rounds(5, Gens::Next));
    for m in MODES {
        assert!(o.retries(m) > 0, "{}", o.report(name));
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
    }
    let name = "seed-rule, skipping generations";
    let o = run(name, orders::SEED_RULE, Plan::rounds(5, Gens::Skip));
    for m in MODES {
        assert!(o.fails(m) > 0, "{}", o.report(name));
    }
    let torn = o
        .fails
        .values()
        .flatten()
        .any(|f| f.contains("EOFException"));
    assert!(torn, "{}", o.report(name));
}

/// Model row 18 (`segments-first`): readers open `segments_N` before its files are there (and
/// read it while it is written). As for the seed's rule, Lucene's fallback to `segments_N-1`
/// hides this only when the replica received every generation.
#[test]
fn segments_first_order_sends_readers_after_missing_files() {
    let name = "segments-first, every generation";
    let o = run(name, orders::SEGMENTS_FIRST, Plan::rounds(5, Gens::Next));
    for m in MODES {
        assert!(o.retries(m) > 0, "{}", o.report(name));
        assert_eq!(o.fails(m), 0, "{}", o.report(name));
    }
    let missing = o
        .retries
        .values()
        .flatten()
        .any(|r| r.contains("NoSuchFileException") || r.contains("FileNotFoundException"));
    assert!(missing, "{}", o.report(name));
    let name = "segments-first, skipping generations";
    let o = run(name, orders::SEGMENTS_FIRST, Plan::rounds(5, Gens::Skip));
    for m in MODES {
        assert!(o.fails(m) > 0, "{}", o.report(name));
    }
}

/// Model rows 20–21 (`any-order`, its shortest counterexample: delete `segments_N-1` first):
/// the replica has no commit at all for a while, and every reader's reopen fails
/// (`IndexNotFoundException`): Lucene has nothing to fall back to.
#[test]
fn any_order_makes_readers_fail() {
    let name = "any-order";
    let o = run(name, orders::ANY_ORDER, Plan::rounds(4, Gens::Next));
    for m in MODES {
        assert!(o.fails(m) > 0, "{}", o.report(name));
    }
    let no_commit = o
        .fails
        .values()
        .flatten()
        .any(|f| f.contains("IndexNotFoundException"));
    assert!(no_commit, "{}", o.report(name));
}
