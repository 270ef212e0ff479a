//! The exit-status rule of every `lockwright` subcommand: 0 as expected, 1 a violation or a
//! failed run, 2 bad arguments or an error before the run started. One cheap invocation per
//! subcommand for exit 2, and quick runs for 0 and 1 where one needs no server or peer
//! (`file_peers/stress_run.rs`, `file_peers/stress_verify_server.rs`, `zk/stress_run.rs` and `cli/check.rs` hold
//! the longer runs of the same subcommands).

use std::process::{Command, Output, Stdio};

use lockwright_checks::stress::proc::{listening_port, Spawned};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lockwright");
const WAIT: Duration = Duration::from_secs(60);

fn lockwright(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run lockwright")
}

fn status(args: &[&str]) -> (Option<i32>, String) {
    let o = lockwright(args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Every subcommand, an unknown flag and a bad value: exit 2 with a message that names it.
#[test]
fn bad_arguments_exit_2_in_every_subcommand() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["check", "--family", "zk", "--os", "ofd"],
            "--os does not apply",
        ),
        (
            &[
                "check",
                "--family",
                "zk",
                "--clients",
                "3",
                "--sequence-width",
                "2",
            ],
            "at most 2 clients for a 2-bit counter",
        ),
        (&["explore", "--addr", "0.0.0.0:3000"], "only loopback"),
        (&["verify-server", "--clients", "0"], "--clients"),
        (
            &["verify-server", "--clients", "1", "--bind", "10.1.2.3"],
            "loopback",
        ),
        (
            &[
                "stress",
                "--id",
                "300",
                "--server",
                "a",
                "--dir",
                "d",
                "--sleep-ms",
                "0",
                "--count",
                "1",
            ],
            "300",
        ),
        (
            &["stress-run", "--clients", "0", "--count", "1"],
            "--clients",
        ),
        (
            &[
                "stress-run",
                "--clients",
                "1",
                "--count",
                "1",
                "--os",
                "fcntl",
            ],
            "fcntl",
        ),
        (
            &["report", "--check"],
            "cargo run -p lockwright-report -- --check",
        ),
        (
            &[
                "zk-stress",
                "--id",
                "300",
                "--connect",
                "c",
                "--path",
                "/p",
                "--server",
                "s",
                "--count",
                "1",
            ],
            "300",
        ),
        (&["zk-bench", "--contenders", "many"], "many"),
        (
            &["zk-stress-run", "--faults", "reboot"],
            "unknown fault `reboot`",
        ),
        (
            &["zk-stress-run", "--faults", "kill=1,pause=2"],
            "the same count",
        ),
        (
            &["zk-stress-run", "--faults", "kill=2", "--min-each", "3"],
            "--min-each 3",
        ),
        (&["zk-stress-run", "--servers", "2"], "--servers 2"),
        (
            &["zk-stress-run", "--faults", "leader-kill"],
            "add --servers 3",
        ),
        (
            &["zk-stress-run", "--servers", "3", "--faults", "restart"],
            "leader-kill, server-pause, partition and lag",
        ),
        (
            &[
                "zk-stress-run",
                "--servers",
                "3",
                "--connect",
                "127.0.0.1:1",
            ],
            "leave out --connect or --servers",
        ),
        (&["no-such-subcommand"], "no-such-subcommand"),
    ];
    for (args, says) in cases {
        let (code, err) = status(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
    }
}

/// Every subcommand that runs takes `-q`, and the old spellings stay accepted (hidden):
/// `stress --os-lock`, `zk-stress-run --no-faults`, `check --kind` (a bad value after an old
/// flag is reported for the value, so the flag itself was understood). `report` only says
/// where the generator went, and is hidden.
#[test]
fn one_dialect_quiet_everywhere_and_old_spellings_accepted() {
    for sub in [
        "check",
        "verify-server",
        "stress",
        "stress-run",
        "zk-stress",
        "zk-bench",
        "zk-stress-run",
    ] {
        let o = lockwright(&[sub, "--help"]);
        let help = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{sub} --help");
        assert!(
            help.contains("-q, --quiet"),
            "{sub} --help lacks -q:\n{help}"
        );
    }
    for sub in ["stress", "stress-run"] {
        let help = String::from_utf8_lossy(&lockwright(&[sub, "--help"]).stdout).into_owned();
        assert!(help.contains("--os <OS_LOCK>"), "{sub}:\n{help}");
        assert!(!help.contains("--os-lock"), "old spelling hidden: {help}");
        let (code, err) = status(&[sub, "--os-lock", "fcntl"]);
        assert_eq!(code, Some(2));
        assert!(err.contains("invalid value 'fcntl'"), "{err}");
    }
    let (code, err) = status(&["zk-stress-run", "--no-faults", "--faults", "kill"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot be used with"), "{err}");
    let (code, err) = status(&["check", "--kind", "fcntl"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown lock kind `fcntl`"), "{err}");
}

/// A stress client that cannot reach its verify server, and a ZooKeeper client that cannot
/// reach ZooKeeper, are failed runs: exit 1, not the bad-arguments 2.
#[test]
fn a_client_that_cannot_reach_its_server_is_a_failed_run() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, err) = status(&[
        "stress",
        "--id",
        "1",
        "--server",
        &closed,
        "--dir",
        d,
        "--sleep-ms",
        "0",
        "--count",
        "1",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the run failed: cannot register with verify server"),
        "{err}"
    );
    let (code, err) = status(&[
        "zk-stress",
        "-q",
        "--connect",
        &closed,
        "--path",
        "/locks/x",
        "--id",
        "1",
        "--server",
        &closed,
        "--count",
        "1",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("the run failed: cannot reach ZooKeeper"),
        "{err}"
    );
}

/// verify-server and two stress clients without a lock (`--factory no-lock`): the server
/// sees the overlap and hangs up, and every process exits 1 — the violation, not an argument
/// error (stress used to exit 2 here). Twin: the same with `native` exits 0 everywhere
/// (`file_peers/stress_verify_server.rs`).
#[test]
fn a_violation_exits_1_in_verify_server_and_stress() {
    let mut srv = Spawned::spawn(
        "verify-server",
        Command::new(BIN).args(["verify-server", "--clients", "2", "-q"]),
    )
    .unwrap();
    let line = srv
        .wait_for_line("Listening on", WAIT)
        .unwrap_or_else(|| panic!("no port\n{}", srv.describe()));
    let server = format!("127.0.0.1:{}", listening_port(&line).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let mut clients: Vec<Spawned> = (0..2)
        .map(|id| {
            let mut c = Command::new(BIN);
            c.args(["stress", "-q", "--id", &id.to_string(), "--server", &server])
                .args(["--factory", "no-lock", "--dir"])
                .arg(dir.path())
                .args(["--sleep-ms", "1", "--count", "2000"]);
            Spawned::spawn(format!("client {id}"), &mut c).unwrap()
        })
        .collect();
    assert_eq!(
        srv.wait(WAIT).and_then(|s| s.code()),
        Some(1),
        "{}",
        srv.describe()
    );
    for c in &mut clients {
        assert_eq!(
            c.wait(WAIT).and_then(|s| s.code()),
            Some(1),
            "{}",
            c.describe()
        );
    }
}

/// stress-run: a quick clean run exits 0; without a lock it exits 1, and 0 when violations
/// are what `--expect-violations` asks for.
#[test]
fn stress_run_exits_0_as_expected_and_1_on_a_violation() {
    let run = |extra: &[&str]| {
        let mut args = vec!["stress-run", "-q", "--clients", "2", "--count", "300"];
        args.extend_from_slice(extra);
        status(&args)
    };
    let (code, err) = run(&["--os", "ofd"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = run(&["--factory", "no-lock", "--sleep-ms", "1"]);
    assert_eq!(code, Some(1), "{err}");
    let (code, err) = run(&[
        "--factory",
        "no-lock",
        "--sleep-ms",
        "1",
        "--expect-violations",
    ]);
    assert_eq!(code, Some(0), "{err}");
}

/// A scenario's own fault set decides what it can reach: a `sometimes` property that no fault
/// of the budget can reach prints "n/a" and fails nothing, and a documented violation (a
/// lock taken from its holder, for the file recipe) is expected. So the file family's deep
/// scenario and custom fault sets of the other families exit 0. Twin: the same property
/// reached where it applies is a verdict like any other (expecting it not found exits 1).
#[test]
fn fault_sets_that_cannot_reach_a_property_exit_0() {
    let status = |args: &[&str]| {
        let o = lockwright(args);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    for args in [
        &["check", "--deep", "--quiet"][..],
        &[
            "check",
            "--family",
            "docstore",
            "--faults",
            "crash=1,restart=1",
            "--quiet",
        ],
        &[
            "check",
            "--family",
            "zk",
            "--clients",
            "2",
            "--faults",
            "lose-reply=1",
            "--quiet",
        ],
        &[
            "check",
            "--family",
            "zk",
            "--clients",
            "2",
            "--faults",
            "restart=1",
            "--quiet",
        ],
    ] {
        let (code, out) = status(args);
        assert_eq!(code, Some(0), "{args:?}:\n{out}");
        assert!(
            out.contains("All verdicts as expected."),
            "{args:?}:\n{out}"
        );
    }
    let (_, out) = status(&[
        "check", "--family", "docstore", "--faults", "crash=1", "--quiet",
    ]);
    assert!(
        out.contains("\"stale write attempted\"         n/a (cannot occur in this scenario)"),
        "{out}"
    );
    // Twin: reached where it applies, so expecting it not found is a wrong expectation.
    let (code, out) = status(&[
        "check",
        "--family",
        "docstore",
        "--faults",
        "pause=1",
        "--expect-not-found",
        "stale write attempted",
        "--quiet",
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("\"stale write attempted\": expected NOT FOUND, got holds"),
        "{out}"
    );
}
