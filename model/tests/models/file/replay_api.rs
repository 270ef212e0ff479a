//! The contract the refinement replayer (checks crate) relies on: recorded mutating calls map
//! to actions of the same name, `Scenario::step` refuses what the model does not allow,
//! outcomes are readable from the resulting thread, and read-only calls are answered by the
//! `observe_*` functions.

use lockwright_model::file::kernel::ProbeResult;
use lockwright_model::file::{Action, Faults, LockKind, Pc, Scenario, State, Variant};
use stateright::Model;

fn run(sc: &Scenario, path: &[Action]) -> State {
    let mut s = sc.init_states().remove(0);
    for &a in path {
        s = sc
            .step(&s, a)
            .unwrap_or_else(|| panic!("{a} not enabled in {s:?}"));
    }
    s
}

#[test]
fn try_lock_outcome_is_readable_from_the_thread() {
    use Action::*;
    let sc = Scenario::new(Variant::Native, LockKind::Ofd);
    let s = run(
        &sc,
        &[
            HeldInsert(0, 0),
            Open(0, 0),
            TryLock(0, 0),
            HeldInsert(1, 0),
            Open(1, 0),
        ],
    );
    assert_eq!(s.thread(0, 0).pc, Pc::Holding, "acquired");
    let s = sc.step(&s, TryLock(1, 0)).unwrap();
    assert_eq!(s.thread(1, 0).pc, Pc::Blocked, "would block");
    // The real code probes before closing: the model answers the same read-only call.
    assert_eq!(
        sc.observe_probe(&s, 1, 0),
        ProbeResult::Conflict { pid: None }
    );
    // Close comes first on the failure path; HeldRemove is not enabled yet.
    assert!(sc.step(&s, HeldRemove(1, 0)).is_none());
    let s = sc.step(&s, Close(1, 0)).unwrap();
    let s = sc.step(&s, HeldRemove(1, 0)).unwrap();
    assert_eq!(s.thread(1, 0).pc, Pc::Idle);
    assert!(!sc.observe_held_contains(&s, 1));
}

#[test]
fn refused_held_insert_leaves_the_thread_idle() {
    use Action::*;
    let sc = Scenario::new(Variant::Native, LockKind::Posix);
    let s = run(&sc, &[HeldInsert(0, 0)]);
    assert!(sc.observe_held_contains(&s, 0));
    let s = sc.step(&s, HeldInsert(0, 1)).unwrap();
    assert_eq!(s.thread(0, 1).pc, Pc::Idle, "held by this process");
    // A thread never skips a step.
    assert!(sc.step(&s, TryLock(0, 0)).is_none());
    assert!(sc.step(&s, Open(0, 1)).is_none());
}

#[test]
fn observations_answer_read_only_calls() {
    use Action::*;
    let sc = Scenario::new(Variant::Native, LockKind::Posix).with_faults(Faults {
        unlink: 1,
        ..Faults::NONE
    });
    let s = run(&sc, &[HeldInsert(0, 0), Open(0, 0), TryLock(0, 0)]);
    let inode = s.thread(0, 0).inode.expect("recorded at Open");
    assert_eq!(sc.observe_stat(&s), Some(inode));
    assert_eq!(sc.observe_fstat(&s, 0, 0).unwrap().nlink, 1);
    assert_eq!(sc.observe_probe(&s, 0, 0), ProbeResult::NoConflict);
    assert!(sc.observe_ensure_valid(&s, 0, 0));
    let s = sc.step(&s, UnlinkLockFile).unwrap();
    assert_eq!(sc.observe_stat(&s), None);
    assert_eq!(sc.observe_fstat(&s, 0, 0).unwrap().nlink, 0);
    assert!(!sc.observe_ensure_valid(&s, 0, 0), "unlinked");
    assert!(
        sc.step(&s, EnsureValid(0, 0)).is_none(),
        "only passes are steps"
    );
    // The fault budget is spent.
    assert!(sc.step(&s, UnlinkLockFile).is_none());
}

#[test]
fn simple_release_of_a_file_that_is_not_ours_deletes_nothing() {
    use Action::*;
    let sc = Scenario::new(Variant::Simple, LockKind::Ofd).with_faults(Faults {
        replace: 1,
        ..Faults::NONE
    });
    let s = run(&sc, &[CreateExclusive(0, 0), ReplaceLockFile]);
    assert!(sc.step(&s, Unlink(0, 0)).is_none());
    let s = sc.step(&s, ReleaseRefused(0, 0)).unwrap();
    assert!(sc.observe_stat(&s).is_some(), "the replacement stays");
    assert_eq!(s.thread(0, 0).pc, Pc::Idle);
}

#[test]
fn display_and_names_match_the_system_calls() {
    assert_eq!(Action::TryLock(1, 0).to_string(), "TryLock(p1, t0)");
    assert_eq!(Action::Crash(1).to_string(), "Crash(p1)");
    assert_eq!(Action::UnlinkLockFile.to_string(), "UnlinkLockFile");
    assert_eq!(Action::HeldRemove(0, 1).name(), "HeldRemove");
    assert_eq!(Action::Write(0, 1).thread(), Some((0, 1)));
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
    }
    let f = Faults::parse("crash=2,restart=2,unlink=1,replace=1,foreign=1").unwrap();
    assert_eq!(
        f.to_string(),
        "crash=2,restart=2,unlink=1,replace=1,foreign=1"
    );
    assert_eq!(Faults::parse("none").unwrap(), Faults::NONE);
    assert!(Faults::parse("crash=x").is_err());
    assert!(Faults::parse("reboot=1").is_err());
}
