//! `lockwright redis-stress-run` as a user runs it: the lock under server stalls keeps every
//! increment (exit 0); its twin without the lock loses some (exit 1); a bad fault list is exit
//! 2.

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lockwright"))
        .arg("redis-stress-run")
        .args(args)
        .output()
        .expect("run lockwright");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn redis_stress_run_keeps_every_increment_through_stalls_and_its_twin_does_not() {
    let _t = crate::timing();
    let (code, out) = run(&[
        "--acquisitions",
        "100",
        "--faults",
        "stall=1",
        "--fault-every-ms",
        "200",
        "--seed",
        "38",
        "-q",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("\"lost\":0") && !out.contains("\"stalls\":0"),
        "{out}"
    );
    let (code, out) = run(&[
        "--acquisitions",
        "100",
        "--faults",
        "none",
        "--no-lock",
        "-q",
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("LOST UPDATES"), "{out}");
    let (code, _) = run(&["--faults", "expire=1"]);
    assert_eq!(code, Some(2));
}
