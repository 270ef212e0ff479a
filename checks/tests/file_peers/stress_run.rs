//! `lockwright stress-run`: N client processes, SIGKILLs of holders, replacements.
//!
//! Default runs are small (a few seconds in all) but each kill test still needs at least one
//! holder killed while holding (`crash_releases >= 1`). `LOCKWRIGHT_DEEP=1` adds the issue's
//! target: >= 100,000 acquisitions with kills across 8 clients, zero violations for `native`.

use lockwright_checks::stress::proc::Spawned;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_lockwright");

/// Runs `stress-run --json --quiet ARGS`; returns (exit code, summary).
fn stress_run(args: &[&str], timeout: Duration) -> (i32, Value) {
    let mut cmd = Command::new(BIN);
    cmd.args(["stress-run", "--json", "--quiet"]).args(args);
    let mut p = Spawned::spawn("stress-run", &mut cmd).unwrap();
    let status = p
        .wait(timeout)
        .unwrap_or_else(|| panic!("stress-run did not finish\n{}", p.describe()));
    let summary: Value = serde_json::from_str(&p.stdout())
        .unwrap_or_else(|e| panic!("no JSON summary: {e}\n{}", p.describe()));
    (status.code().unwrap_or(-1), summary)
}

fn n(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v:#}"))
}

/// Holding 3 ms per acquisition keeps a holder present most of the time, so kills (three in
/// four aimed at the holder) land while it holds. 4 × 500 tries take about 2 s here; at 12
/// kills/s that is ~24 kills. (With 4 × 200 tries at 8 kills/s the run lasted ~0.8 s, and when
/// the other tests of this file loaded both cores the orchestrator was starved for that whole
/// window in about 1 run in 8: zero kills, and the test failed for want of a kill.)
#[test]
fn native_ofd_with_holders_killed_has_no_violation() {
    let (code, s) = stress_run(
        &[
            "--clients",
            "4",
            "--count",
            "500",
            "--sleep-ms",
            "3",
            "--kill-rate",
            "12",
            "--os",
            "ofd",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(n(&s, "violations"), 0, "{s:#}");
    assert_eq!(code, 0, "{s:#}");
    assert!(n(&s, "kills") >= 1, "{s:#}");
    assert!(
        n(&s, "crash_releases") >= 1,
        "no holder was killed while holding: {s:#}"
    );
    assert!(n(&s, "late_joins") >= 1, "{s:#}");
    assert!(n(&s, "acquisitions") > 100, "{s:#}");
    assert!(
        s["client_failures"].as_array().is_some_and(Vec::is_empty),
        "{s:#}"
    );
}

#[test]
fn native_posix_and_flock_have_no_violation() {
    for os in ["posix", "flock"] {
        let (code, s) = stress_run(
            &[
                "--clients",
                "3",
                "--count",
                "300",
                "--sleep-ms",
                "1",
                "--kill-rate",
                "5",
                "--os",
                os,
            ],
            Duration::from_secs(60),
        );
        assert_eq!((code, n(&s, "violations")), (0, 0), "{os}: {s:#}");
        assert!(n(&s, "acquisitions") > 50, "{os}: {s:#}");
    }
}

/// Without kills (a killed holder's lock file would stay forever: that is the stale-lock
/// hazard, a liveness failure, not a safety one).
#[test]
fn simple_without_kills_has_no_violation() {
    let (code, s) = stress_run(
        &["--clients", "3", "--count", "300", "--factory", "simple"],
        Duration::from_secs(60),
    );
    assert_eq!((code, n(&s, "violations")), (0, 0), "{s:#}");
    assert!(n(&s, "acquisitions") > 10, "{s:#}");
}

/// The twin of the kill test: a factory that does not lock must be caught, kills or not.
#[test]
fn no_lock_with_kills_produces_violations() {
    let (code, s) = stress_run(
        &[
            "--clients",
            "4",
            "--count",
            "150",
            "--sleep-ms",
            "2",
            "--kill-rate",
            "10",
            "--factory",
            "no-lock",
            "--expect-violations",
        ],
        Duration::from_secs(60),
    );
    assert!(n(&s, "violations") > 0, "{s:#}");
    assert!(n(&s, "double_obtains") > 0, "{s:#}");
    assert_eq!(
        code, 0,
        "--expect-violations exits 0 when violations were found: {s:#}"
    );
}

#[test]
fn single_instance_does_not_exclude_other_processes() {
    let (code, s) = stress_run(
        &[
            "--clients",
            "3",
            "--count",
            "150",
            "--sleep-ms",
            "1",
            "--factory",
            "single-instance",
        ],
        Duration::from_secs(60),
    );
    assert!(n(&s, "violations") > 0, "{s:#}");
    assert_eq!(code, 1, "{s:#}");
}

/// The target, the command recorded in docs/stress.md (~3 minutes: holding 1 ms per
/// acquisition, so kills land on holders); `LOCKWRIGHT_DEEP=1` only.
#[test]
#[ignore = "about 3 minutes; LOCKWRIGHT_DEEP=1 cargo test -p lockwright-checks --test file_peers stress_run:: -- --ignored"]
fn deep_100k_acquisitions_with_kills_across_8_clients() {
    assert!(
        lockwright_testkit::budget::deep(),
        "the 100,000-acquisition run: set LOCKWRIGHT_DEEP=1 (see the test's docs)"
    );
    let (code, s) = stress_run(
        &[
            "--clients",
            "8",
            "--count",
            "130000",
            "--sleep-ms",
            "1",
            "--kill-rate",
            "2",
        ],
        Duration::from_secs(900),
    );
    assert_eq!(n(&s, "violations"), 0, "{s:#}");
    assert_eq!(code, 0, "{s:#}");
    assert!(n(&s, "acquisitions") >= 100_000, "{s:#}");
    assert!(n(&s, "crash_releases") >= 1, "{s:#}");
    let (_, s) = stress_run(
        &[
            "--clients",
            "8",
            "--count",
            "2000",
            "--sleep-ms",
            "0",
            "--kill-rate",
            "4",
            "--factory",
            "no-lock",
        ],
        Duration::from_secs(300),
    );
    assert!(n(&s, "violations") > 0, "{s:#}");
}
