//! `lockwright check` on the file family's OS-level faults and blocking variants: the fault
//! names select the scenarios `docs/results.json` pins, documented violations pass, and
//! an undocumented one fails. (`cli/check.rs` holds the other families and the output
//! formats.)

use std::process::{Command, Output, Stdio};

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

/// The OS faults are selectable by name, give the state counts `docs/results.json`
/// pins for the same scenarios, and a property that needs a missing fault is n/a, not a
/// failure. A lost lock breaks "at most one writer" as documented for `native` (the first
/// holder fails its next `ensureValid`), so the check passes without being told; twin: on
/// `flock`, which cannot be probed, the same loss also breaks "at most one valid writer",
/// which nothing documents, and the check fails.
#[test]
fn os_fault_names_select_the_pinned_scenarios() {
    let lost = [
        "check",
        "--os",
        "ofd",
        "--processes",
        "2",
        "--faults",
        "crash=1,restart=1,lose-lock=1",
        "--symmetry",
        "off",
        "--quiet",
    ];
    let expecting = [
        "--expect-violated",
        "at most one writer",
        "--expect-violated",
        "writes are exclusive",
    ];
    let o = lockwright(&[&lost[..], &expecting[..]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("3754 unique states"), "{out}");
    assert!(out.contains(" p0 LoseLock: "), "{out}");
    let o = lockwright(&lost);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("\"at most one writer\"        VIOLATED (as documented: "),
        "{out}"
    );
    let mut flock = lost;
    flock[2] = "flock";
    let o = lockwright(&flock);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("\"at most one valid writer\": expected holds, got VIOLATED"),
        "{out}"
    );

    let o = lockwright(&[
        "check",
        "--os",
        "posix",
        "--processes",
        "2",
        "--faults",
        "crash=1,restart=1,lock-error=1,unlock-error=1,close-error=1",
        "--symmetry",
        "off",
        "--quiet",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("12804 unique states"), "{out}");
    let o = lockwright(&[
        "check", "--os", "posix", "--faults", "write=1", "--quiet", "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["scenario"]["faults"]["write"], 1);
    let after_crash = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "writer after crash")
        .expect("listed");
    assert_eq!(after_crash["applies"], false, "{after_crash}");
}

/// The blocking variants have two properties of their own. `native-blocking`
/// (with the re-check) keeps "a blocking obtain returns a lock on the current lock file" under
/// unlink and replace and reaches its re-open; the old behaviour, `native-blocking-no-recheck`,
/// violates it, which exits 1 until expected; its re-open cannot occur and prints n/a. The
/// counts are those of `docs/results.json` (section "Other pinned scenarios": `native-blocking`
/// and `native-blocking-no-recheck` × `ofd`, faults `unlink=1,replace=1`).
#[test]
fn blocking_variants_check_the_recheck() {
    let args = |variant: &'static str| {
        vec![
            "check",
            "--variant",
            variant,
            "--os",
            "ofd",
            "--processes",
            "2",
            "--threads",
            "2",
            "--faults",
            "unlink=1,replace=1",
            "--symmetry",
            "off",
            "--expect-violated",
            "at most one writer",
            "--expect-violated",
            "writes are exclusive",
            "--expect-not-found",
            "writer after crash",
        ]
    };
    let o = lockwright(&args("native-blocking"));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("3915 unique states"), "{out}");
    for line in [
        "\"a blocking obtain returns a lock on the current lock file\"  holds",
        "\"a blocking obtain re-opens a replaced file\"",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }

    let o = lockwright(&args("native-blocking-no-recheck"));
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("2531 unique states"), "{out}");
    assert!(out.contains("n/a"), "{out}");
    let mut expecting = args("native-blocking-no-recheck");
    expecting.extend([
        "--expect-violated",
        "a blocking obtain returns a lock on the current lock file",
    ]);
    let o = lockwright(&expecting);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains(" UnlinkLockFile"), "{out}");
}
