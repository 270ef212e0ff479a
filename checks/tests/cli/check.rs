//! `lockwright check` and `lockwright explore` as a user runs them: verdict lines, state
//! counts, numbered counterexamples, `--json`, exit codes, and the Explorer answering on
//! loopback. The numbers are the ones `docs/results.json` pins.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lockwright(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockwright"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run lockwright")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn check_without_arguments_runs_the_standard_scenario_and_everything_holds() {
    let o = lockwright(&["check"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.starts_with(
        "Scenario: native × ofd, 3 processes × 2 threads, faults crash=2,restart=2,foreign=2, symmetry\n"
    ));
    for line in [
        "  always    \"at most one writer\"        holds",
        "  always    \"at most one valid writer\"  holds",
        "  always    \"writes are exclusive\"      holds",
        "  always    \"no stale lock\"             holds",
        "  sometimes \"writer exists\"             holds",
        "  sometimes \"writer after crash\"        holds",
        "  sometimes \"contention seen\"           holds",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(
        out.contains("2096 unique states, 19629 transitions, max depth 21"),
        "{out}"
    );
    assert!(out.contains("All verdicts as expected."));
    // The progress/heading line goes to stderr, not into the report.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("lockwright check: native × ofd"), "{err}");
}

/// Each family's standard scenario passes as documented: `lockwright check --family F`
/// exits 0, and a violation the scenario declares by design is printed with its reason. The
/// oracle is the model's own verdict (a path found), not the declaration: the twin below
/// shows that a wrong expectation, or an undeclared violation, fails. (Replication's standard
/// scenario is not here yet: its "a file in use is deleted" is a `sometimes` that must never
/// be found, which exits 1 until that property becomes an `always`.)
#[test]
fn standard_scenarios_pass_as_documented() {
    for (family, documented) in [
        ("file", None),
        (
            "zk",
            Some(
                "  always    \"at most one holder\"           VIOLATED (as documented: a holder \
                 whose session ended still believes it holds)",
            ),
        ),
        (
            "docstore",
            Some(
                "  always    \"at most one writer\"            VIOLATED (as documented: a holder \
                 paused past its lease still believes it may write)",
            ),
        ),
        (
            "redis",
            Some(
                "  always    \"at most one holder\"           VIOLATED (as documented: a holder \
                 paused past its validity still believes it holds when the next is granted)",
            ),
        ),
        ("etcd", None),
    ] {
        let o = lockwright(&["check", "--family", family, "--quiet"]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "--family {family}:\n{out}");
        assert!(out.contains("All verdicts as expected."), "{out}");
        match documented {
            Some(line) => assert!(out.contains(&format!("{line}\n")), "{line:?} in\n{out}"),
            None => assert!(!out.contains("VIOLATED"), "{out}"),
        }
    }
}

/// Twins of the test above: a wrong expectation on top of the standard scenario and an
/// undeclared violation (the recipe without protection leaves orphans; unfenced writes let a
/// paused holder's stale write in) exit 1 and say which verdict differs; without the fault
/// that makes the declared violation, nothing is declared and everything holds.
#[test]
fn a_verdict_other_than_documented_exits_1() {
    let o = lockwright(&[
        "check",
        "--family",
        "zk",
        "--quiet",
        "--expect-not-found",
        "lock lost reported",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("\"lock lost reported\": expected NOT FOUND, got holds"));

    let o = lockwright(&[
        "check",
        "--family",
        "zk",
        "--clients",
        "2",
        "--variant",
        "no-protection",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("\"no orphan node\": expected holds, got VIOLATED"));

    let o = lockwright(&[
        "check", "--family", "docstore", "--writes", "unfenced", "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("\"fenced writes are exclusive\": expected holds, got VIOLATED"));

    // etcd: Go's session deadline (from the keepalive reply's arrival) lets a holder believe
    // past its lease; the scenario documents it, and exits 0 only with it.
    let o = lockwright(&[
        "check", "--family", "etcd", "--guard", "session", "--faults", "expire=1", "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains(
        "  always    \"at most one holder\"           VIOLATED (as documented: a holder whose \
         lease ran out, or whose key a retried unlock deleted, still believes it holds)"
    ));
    let o = lockwright(&[
        "check",
        "--family",
        "etcd",
        "--faults",
        "expire=1",
        "-q",
        "--expect-violated",
        "at most one holder",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("\"at most one holder\": expected VIOLATED, got holds"));

    // Without a fault that makes the violation, nothing is documented and everything holds.
    let o = lockwright(&[
        "check",
        "--family",
        "zk",
        "--clients",
        "2",
        "--faults",
        "none",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(!stdout(&o).contains("VIOLATED"));
}

/// The store's own faults (`docs/docstore.md` section 6, "The store's own faults"): with the
/// lock index and the data document re-created, an acknowledged write rolled back and a pause,
/// the recipe before the fix (`leased-upsert`, row 31) no longer keeps writes exclusive nor
/// updates from being lost — exit 1, the two failures named; the fixed `leased` keeps both
/// (every store fault with a pause) and exits 0, its two declared violations printed with their
/// reasons (the pause or a rolled-back acquire; the lock document never created again). A
/// misspelt fault name is still a clear error.
#[test]
fn docstore_store_faults_break_the_old_recipe_and_the_fix_survives_them() {
    let args = |variant| {
        [
            "check",
            "--family",
            "docstore",
            "--variant",
            variant,
            "--writes",
            "fenced-claim",
            "--faults",
            "recreate-index=1,recreate-doc=1,rollback=1,pause=1",
            "-q",
        ]
    };
    let o = lockwright(&args("leased-upsert"));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    for property in ["fenced writes are exclusive", "no lost update"] {
        assert!(
            out.contains(&format!("\"{property}\": expected holds, got VIOLATED")),
            "{out}"
        );
    }
    assert!(
        out.contains(
            "VIOLATED (as documented: a holder paused past its lease, or whose lock document \
             was deleted, re-created or rolled back, still believes it may write)"
        ),
        "{out}"
    );
    assert!(!out.contains("\"acquired after crash\": expected"), "{out}");

    let o = lockwright(&args("leased"));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("All verdicts as expected."), "{out}");
    for property in ["fenced writes are exclusive", "no lost update"] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!("\"{property}\"")))
            .unwrap_or_else(|| panic!("{property} in\n{out}"));
        assert!(line.trim_end().ends_with("holds"), "{line}");
    }
    assert!(
        out.contains(
            "VIOLATED (as documented: the recipe never creates a missing lock document again: \
             after a re-created index or a stray delete it is installed apart (the guarded \
             install, safe at any time))"
        ),
        "{out}"
    );

    // Issue #35's Done line: a re-install after a lost index, a skewed script clock and a
    // pause leave both data properties holding (row 45); the unguarded re-install breaks
    // both (row 46).
    let done = |variant| {
        lockwright(&[
            "check",
            "--family",
            "docstore",
            "--variant",
            variant,
            "--writes",
            "fenced-claim",
            "--faults",
            "reinstall=1,skew=1,pause=1",
            "-q",
        ])
    };
    let o = done("leased");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    for property in ["fenced writes are exclusive", "no lost update"] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!("\"{property}\"")))
            .unwrap_or_else(|| panic!("{property} in\n{out}"));
        assert!(line.trim_end().ends_with("holds"), "{line}");
    }
    let o = done("leased-fix-unguarded-install");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    for property in ["fenced writes are exclusive", "no lost update"] {
        assert!(
            out.contains(&format!("\"{property}\": expected holds, got VIOLATED")),
            "{out}"
        );
    }

    let o = lockwright(&[
        "check",
        "--family",
        "docstore",
        "--faults",
        "recreate=1",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown fault `recreate`")
            && err.contains("recreate-index, recreate-doc, rollback"),
        "{err}"
    );
}

/// The ZooKeeper recipe under a dropped acquire or release, a suspended connection, a lost
/// reply and an expiry (`docs/zookeeper.md` §6, row 23): no node is left behind and at most one
/// holder is live, so the check exits 0; the expiry's two violations are printed with the
/// reasons the scenario documents. Its twin (the same suspension orphans a plain-named create)
/// is row 24, pinned in `docs/results-zk.json`, and
/// `a_verdict_other_than_documented_exits_1` shows an undeclared orphan exits 1.
#[test]
fn zk_curator_under_suspension_and_dropped_futures_exits_0() {
    let o = lockwright(&[
        "check",
        "--family",
        "zk",
        "--variant",
        "curator",
        "--writes",
        "fenced",
        "--clients",
        "2",
        "--faults",
        "abandon=1,suspend=1,lose-reply=1,expire=1",
        "--quiet",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    for line in [
        "  always    \"at most one live holder\"      holds\n",
        "  always    \"no orphan node\"               holds\n",
        "  always    \"no lost update\"               VIOLATED (as documented: a bare fence learns \
         of a new holder only at its first write (fenced-claim closes it))\n",
        "230236 unique states",
        "All verdicts as expected.",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
}

#[test]
fn a_violation_prints_numbered_steps_and_exits_1() {
    // LUCENE-6507: Lucene 4.10's release order under POSIX locks.
    let o = lockwright(&[
        "check",
        "--variant",
        "native-4.10",
        "--os",
        "posix",
        "--faults",
        "none",
        "--processes",
        "2",
        "--symmetry",
        "off",
        "--quiet",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("  always    \"at most one writer\"        VIOLATED"));
    assert!(out.contains("3497 unique states"), "{out}");
    let expected = "\
Counterexample for \"at most one writer\" (12 steps):
  1. p0 t0 HeldInsert: held_insert(path) → true
  2. p0 t0 Open: open(path, O_CREAT) → inode 0
  3. p0 t0 TryLock: fcntl(F_SETLK, F_WRLCK) on inode 0 → acquired
  4. p0 t0 Unlock: fcntl(F_SETLK, F_UNLCK) on inode 0
  5. p0 t0 HeldRemove: held_remove(path)
  6. p0 t1 HeldInsert: held_insert(path) → true
  7. p0 t1 Open: open(path, O_CREAT) → inode 0
  8. p0 t1 TryLock: fcntl(F_SETLK, F_WRLCK) on inode 0 → acquired
  9. p0 t0 Close: close(fd of inode 0)
  10. p1 t0 HeldInsert: held_insert(path) → true
  11. p1 t0 Open: open(path, O_CREAT) → inode 0
  12. p1 t0 TryLock: fcntl(F_SETLK, F_WRLCK) on inode 0 → acquired
";
    assert!(out.contains(expected), "{out}");
    assert!(out
        .contains("Unexpected verdicts:\n  \"at most one writer\": expected holds, got VIOLATED"));
    assert!(o.stderr.is_empty(), "--quiet prints no progress");
}

#[test]
fn expected_violations_exit_0() {
    let o = lockwright(&[
        "check",
        "--variant",
        "native-4.10",
        "--kind",
        "posix",
        "--faults",
        "none",
        "--quiet",
        "--expect-violated",
        "at most one writer",
        "--expect-violated",
        "at most one valid writer",
        "--expect-violated",
        "writes are exclusive",
        "--expect-not-found",
        "writer after crash",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // Expecting a violation that does not happen fails.
    let o = lockwright(&[
        "check",
        "--quiet",
        "--expect-violated",
        "at most one writer",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("\"at most one writer\": expected VIOLATED, got holds"));
}

#[test]
fn json_report_has_verdicts_counts_and_steps() {
    let o = lockwright(&[
        "check",
        "--variant",
        "simple",
        "--faults",
        "crash=1,restart=1",
        "--processes",
        "2",
        "--symmetry",
        "off",
        "--json",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["scenario"]["variant"], "simple");
    assert_eq!(v["scenario"]["faults"]["crash"], 1);
    assert_eq!(v["unique_states"], 58);
    assert_eq!(v["exit_code"], 1);
    let props = v["properties"].as_array().unwrap();
    let names: Vec<&str> = props.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "at most one writer",
            "at most one valid writer",
            "writes are exclusive",
            "no stale lock",
            "writer exists",
            "writer after crash",
            "contention seen"
        ]
    );
    let stale = &props[3];
    assert_eq!(stale["kind"], "always");
    assert_eq!(stale["verdict"], "VIOLATED");
    let steps = stale["path"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["action"], "CreateExclusive(p0, t0)");
    assert_eq!(steps[0]["process"], 0);
    assert_eq!(steps[0]["thread"], 0);
    assert_eq!(steps[1]["call"], "Crash");
    assert_eq!(steps[1]["thread"], serde_json::Value::Null);
    assert_eq!(props[5]["verdict"], "NOT FOUND");
    assert_eq!(v["unexpected"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_arguments_exit_2() {
    assert_eq!(
        lockwright(&["check", "--variant", "bogus"]).status.code(),
        Some(2)
    );
    assert_eq!(
        lockwright(&["check", "--faults", "reboot=1"]).status.code(),
        Some(2)
    );
    assert_eq!(
        lockwright(&["check", "--expect-violated", "no such property"])
            .status
            .code(),
        Some(2)
    );
    let o = lockwright(&["explore", "--addr", "0.0.0.0:3000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("only loopback"));
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn explore_serves_the_scenario_on_loopback() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_lockwright"))
            .args([
                "explore",
                "--addr",
                &addr,
                "--variant",
                "native-4.10",
                "--os",
                "posix",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let get = |path: &str| -> Option<String> {
        let mut s = TcpStream::connect(&addr).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut buf = String::new();
        s.read_to_string(&mut buf).ok()?;
        buf.starts_with("HTTP/1.1 200").then_some(buf)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(body) = get("/.status") {
            break body;
        }
        assert!(
            Instant::now() < deadline,
            "explorer did not answer on {addr}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.contains("\"at most one writer\""), "{status}");
    assert!(status.contains("\"contention seen\""), "{status}");
    // The first step of the first thread, with the readable step description.
    let states = get("/.states/0").expect("GET /.states/0");
    assert!(states.contains("HeldInsert(p0, t0)"), "{states}");
    assert!(states.contains("held_insert(path)"), "{states}");
}

/// A bare fence (`--writes fenced`) loses an update under a pause in both families that have
/// tokens (`docs/docstore.md` row 18, `docs/zookeeper.md` §5): the check declares it, with
/// its reason, and exits 0, while "fenced writes are exclusive" holds. The twins: unfenced
/// writes break the fence itself, which is not declared (exit 1, in
/// `a_verdict_other_than_documented_exits_1`), and claim-at-acquire loses nothing.
#[test]
fn a_bare_fence_loses_an_update_as_documented_in_both_families() {
    let declared = "VIOLATED (as documented: a bare fence learns of a new holder only at its \
                    first write (fenced-claim closes it))";
    for family in ["docstore", "zk"] {
        let o = lockwright(&["check", "--family", family, "--writes", "fenced", "-q"]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{family}: {out}");
        let lost = out
            .lines()
            .find(|l| l.contains("\"no lost update\""))
            .unwrap_or_else(|| panic!("{family}: no verdict line in\n{out}"));
        assert!(lost.ends_with(declared), "{family}: {lost}");
        let exclusive = out
            .lines()
            .find(|l| l.contains("\"fenced writes are exclusive\""))
            .unwrap_or_else(|| panic!("{family}: no verdict line in\n{out}"));
        assert!(exclusive.ends_with(" holds"), "{family}: {exclusive}");

        let o = lockwright(&[
            "check",
            "--family",
            family,
            "--writes",
            "fenced-claim",
            "-q",
        ]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{family}: {out}");
        assert!(
            out.lines()
                .any(|l| l.contains("\"no lost update\"") && l.ends_with(" holds")),
            "{family}: {out}"
        );
    }
}

/// The Redis family's documented verdicts are a rule over the scenario, not a list of rows:
/// Kleppmann's clock jump on Redlock exits 0 with its two violations declared, and the same
/// scenario with a wrong expectation (or `redlock-no-recheck` expected to hold) exits 1.
#[test]
fn redis_verdicts_follow_the_documented_rule() {
    let o = lockwright(&[
        "check",
        "--family",
        "redis",
        "--variant",
        "redlock",
        "--writes",
        "unfenced",
        "--faults",
        "clock-jump=1",
        "-q",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("\"at most one live holder\"      VIOLATED (as documented: a server's clock jumps forward"), "{out}");
    assert!(out.contains("24461 unique states"), "{out}");

    let o = lockwright(&[
        "check",
        "--family",
        "redis",
        "--variant",
        "redlock",
        "--writes",
        "unfenced",
        "--faults",
        "none",
        "-q",
        "--expect-violated",
        "at most one live holder",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("\"at most one live holder\": expected VIOLATED, got holds"),
        "{}",
        stdout(&o)
    );

    let o = lockwright(&["check", "--family", "redis", "--instances", "3", "-q"]);
    assert_eq!(o.status.code(), Some(2), "single runs on one instance");
    let o = lockwright(&["check", "--family", "redis", "--readers", "1", "-q"]);
    assert_eq!(o.status.code(), Some(2), "--readers is not a redis option");
}
