//! `--json` on every subcommand that reports a result: the help lists it, and a run prints
//! one JSON object as its last line of stdout, with `passed` false when the run failed (the
//! twin: a run without a lock, and a client that cannot reach its server). `explore` serves
//! a page and reports nothing, so it has no `--json`.

use std::process::{Command, Stdio};
use std::time::Duration;

use lockwright_checks::stress::proc::{listening_port, Spawned};

const BIN: &str = env!("CARGO_BIN_EXE_lockwright");
const WAIT: Duration = Duration::from_secs(60);

/// The last line of `stdout`, parsed.
fn last_json(who: &str, stdout: &str) -> serde_json::Value {
    let line = stdout.lines().last().unwrap_or("");
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{who}: last line {line:?}: {e}\n{stdout}"))
}

#[test]
fn every_subcommand_that_reports_a_result_takes_json() {
    for sub in [
        "check",
        "verify-server",
        "stress",
        "stress-run",
        "zk-stress",
        "zk-bench",
        "zk-stress-run",
    ] {
        let o = Command::new(BIN).args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("--json"),
            "{sub} --help lacks --json:\n{help}"
        );
    }
}

/// A verify server and two stress clients, with `--json`: with `native` every process prints
/// `passed: true`; with `no-lock` the server prints `passed: false` with its violations and
/// each client `passed: false` with the error, and they exit 1.
fn verify_server_and_two_clients(
    factory: &str,
) -> (serde_json::Value, Vec<(Option<i32>, serde_json::Value)>) {
    let mut srv = Spawned::spawn(
        "verify-server",
        Command::new(BIN).args(["verify-server", "--clients", "2", "-q", "--json"]),
    )
    .unwrap();
    let line = srv
        .wait_for_line("Listening on", WAIT)
        .unwrap_or_else(|| panic!("no port\n{}", srv.describe()));
    let server = format!("127.0.0.1:{}", listening_port(&line).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let clients: Vec<_> = (0..2)
        .map(|id| {
            Command::new(BIN)
                .args([
                    "stress",
                    "-q",
                    "--json",
                    "--id",
                    &id.to_string(),
                    "--server",
                    &server,
                ])
                .args(["--factory", factory, "--dir"])
                .arg(dir.path())
                .args(["--sleep-ms", "1", "--count", "300"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let clients: Vec<_> = clients
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            (o.status.code(), last_json("stress", &out))
        })
        .collect();
    srv.wait(WAIT)
        .unwrap_or_else(|| panic!("{}", srv.describe()));
    (last_json("verify-server", &srv.stdout()), clients)
}

#[test]
fn verify_server_and_stress_print_one_json_result() {
    let (server, clients) = verify_server_and_two_clients("native");
    assert_eq!(server["command"], "verify-server");
    assert_eq!(server["passed"], true, "{server}");
    assert_eq!(server["stats"]["violations"], 0, "{server}");
    assert!(
        server["stats"]["acquisitions"].as_u64() > Some(0),
        "{server}"
    );
    for (code, c) in &clients {
        assert_eq!(*code, Some(0), "{c}");
        assert_eq!(c["passed"], true, "{c}");
        assert_eq!(c["tries"], 300, "{c}");
    }
    // Twin: no lock.
    let (server, clients) = verify_server_and_two_clients("no-lock");
    assert_eq!(server["passed"], false, "{server}");
    assert!(server["stats"]["violations"].as_u64() > Some(0), "{server}");
    assert!(
        clients
            .iter()
            .any(|(code, c)| *code == Some(1) && c["passed"] == false && c["error"].is_string()),
        "{clients:?}"
    );
}

/// A ZooKeeper client that cannot reach ZooKeeper: one JSON object naming the failure, exit 1.
#[test]
fn zk_stress_prints_its_failure_as_json() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let o = Command::new(BIN)
        .args([
            "zk-stress",
            "-q",
            "--json",
            "--connect",
            &closed,
            "--path",
            "/locks/x",
        ])
        .args(["--id", "1", "--server", &closed, "--count", "1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let v = last_json("zk-stress", &String::from_utf8_lossy(&o.stdout));
    assert_eq!(v["passed"], false, "{v}");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot reach ZooKeeper")),
        "{v}"
    );
}
