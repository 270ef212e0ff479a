//! The claims the hand-written pages make (`docs/protocol.md`, `docs/incidents.md`), checked
//! against the model. `report_fresh.rs` keeps the generated pages fresh; this keeps the prose
//! true: if a model change moves one of these verdicts or paths, the page that states it must
//! be revised together with this test.

use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use lockwright_model::{check, Report};

const AMOW: &str = "at most one writer";
const VALID: &str = "at most one valid writer";
const WRITES: &str = "writes are exclusive";
const STALE: &str = "no stale lock";

const KINDS: [LockKind; 4] = [
    LockKind::Ofd,
    LockKind::Posix,
    LockKind::Flock,
    LockKind::NfsFlock,
];

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("fault list")
}

fn run(v: Variant, k: LockKind, f: &str) -> Report<Scenario> {
    let std = Scenario::standard();
    check(
        &Scenario::new(v, k)
            .with_parties(std.processes, std.threads)
            .with_faults(faults(f)),
    )
}

fn holds(r: &Report<Scenario>, name: &str) -> bool {
    r.verdict(name).holds()
}

fn path(r: &Report<Scenario>, name: &str) -> Vec<String> {
    r.verdict(name)
        .path
        .as_ref()
        .unwrap_or_else(|| panic!("{}: no counterexample for {name}", r.model.label()))
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// protocol.md §6, incidents.md: `native` holds without faults and never leaves a stale lock;
/// `ofd`/`flock` survive foreign open-close, `posix`/`nfs-flock` do not; unlink and replace give
/// two writers but one valid writer for every kind.
#[test]
fn native_protocol_claims() {
    for k in KINDS {
        let r = run(Variant::Native, k, "none");
        assert!(
            r.violated().is_empty(),
            "native × {k} without faults: {:?}",
            r.violated()
        );
        assert!(
            holds(&r, "writer exists") && holds(&r, "contention seen"),
            "native × {k}"
        );
        for f in ["crash=1,restart=1", "foreign=1", "unlink=1", "replace=1"] {
            let r = run(Variant::Native, k, f);
            assert!(holds(&r, STALE), "native × {k} × {f}: no stale lock");
            match f {
                "foreign=1" => {
                    let safe = matches!(k, LockKind::Ofd | LockKind::Flock);
                    assert_eq!(holds(&r, AMOW), safe, "native × {k} × foreign: {AMOW}");
                    assert_eq!(holds(&r, WRITES), safe, "native × {k} × foreign: {WRITES}");
                    assert_eq!(
                        holds(&r, VALID),
                        k != LockKind::NfsFlock,
                        "native × {k} × foreign: {VALID}"
                    );
                }
                "unlink=1" | "replace=1" => {
                    assert!(!holds(&r, AMOW), "native × {k} × {f}: {AMOW}");
                    assert!(!holds(&r, WRITES), "native × {k} × {f}: {WRITES}");
                    assert!(holds(&r, VALID), "native × {k} × {f}: {VALID}");
                }
                _ => assert!(r.violated().is_empty(), "native × {k} × {f}"),
            }
        }
    }
    let std = check(&Scenario::standard());
    assert!(
        std.all_hold(),
        "the standard scenario: {:?}",
        std.violated()
    );
    // Two foreign open-closes (one per process) defeat the POSIX probe: two valid writers.
    let r = run(
        Variant::Native,
        LockKind::Posix,
        "crash=2,restart=2,foreign=2",
    );
    assert_eq!(
        path(&r, VALID),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "ForeignOpenClose(p0)",
            "TryLock(p1, t0)",
            "ForeignOpenClose(p1)",
        ]
    );
}

/// incidents.md, LUCENE-5612: every kind, no faults; the path the page narrates.
#[test]
fn lucene_5612_claims() {
    for k in KINDS {
        assert!(
            !holds(&run(Variant::NativeDeleteOnRelease, k, "none"), AMOW),
            "{k}"
        );
    }
    let r = run(Variant::NativeDeleteOnRelease, LockKind::Posix, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "Unlock(p0, t0)",
            "Close(p0, t0)",
            "HeldRemove(p0, t0)",
            "HeldInsert(p0, t1)",
            "Open(p0, t1)",
            "Unlink(p0, t0)",
            "TryLock(p0, t1)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "TryLock(p1, t0)",
        ]
    );
}

/// incidents.md, LUCENE-5738: POSIX and NFS flock break without faults, OFD and flock do not.
#[test]
fn lucene_5738_claims() {
    for k in KINDS {
        let broken = matches!(k, LockKind::Posix | LockKind::NfsFlock);
        let r = run(Variant::NativeNoHeldSet, k, "none");
        assert_eq!(!holds(&r, AMOW), broken, "{k}");
        if !broken {
            assert!(r.violated().is_empty(), "{k}");
        }
    }
    let r = run(Variant::NativeNoHeldSet, LockKind::Posix, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "Open(p0, t1)",
            "TryLock(p0, t1)"
        ]
    );
}

/// incidents.md, LUCENE-6507: POSIX breaks without faults; OFD and flock hold.
#[test]
fn lucene_6507_claims() {
    for k in [LockKind::Ofd, LockKind::Flock] {
        assert!(
            run(Variant::Native410, k, "none").violated().is_empty(),
            "{k}"
        );
    }
    let r = run(Variant::Native410, LockKind::Posix, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "Unlock(p0, t0)",
            "HeldRemove(p0, t0)",
            "HeldInsert(p0, t1)",
            "Open(p0, t1)",
            "TryLock(p0, t1)",
            "Close(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "TryLock(p1, t0)",
        ]
    );
}

/// incidents.md: SimpleFS stale lock after a crash; deleting it gives two writers; mixed kinds
/// give two writers; foreign open-close under POSIX.
#[test]
fn other_incident_claims() {
    let r = run(Variant::Simple, LockKind::Ofd, "crash=1,restart=1");
    assert_eq!(path(&r, STALE), ["CreateExclusive(p0, t0)", "Crash(p0)"]);
    assert!(!holds(
        &run(Variant::Simple, LockKind::Ofd, "unlink=1"),
        AMOW
    ));

    let r = run(Variant::Mixed, LockKind::Ofd, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "TryLock(p1, t0)",
        ]
    );

    let r = run(Variant::Native, LockKind::Posix, "foreign=1");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "ForeignOpenClose(p0)",
            "TryLock(p1, t0)",
        ]
    );
}
