//! Unit tests of `kernel`.

use super::*;

const A: Desc = Desc { pid: 0, slot: 0 };
const A2: Desc = Desc { pid: 0, slot: 1 };
const B: Desc = Desc { pid: 1, slot: 0 };

fn opened(descs: &[Desc]) -> Os {
    let mut os = Os::new();
    for &d in descs {
        os.open(d, OpenMode::Create).unwrap();
    }
    os
}

#[test]
fn second_description_in_same_process_conflicts_except_posix() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A, A2]);
        assert_eq!(os.try_lock(A, kind), TryLockResult::Acquired);
        let expect = match kind {
            LockKind::Posix | LockKind::NfsFlock => TryLockResult::Acquired,
            LockKind::Flock | LockKind::Ofd => TryLockResult::WouldBlock,
        };
        assert_eq!(os.try_lock(A2, kind), expect, "{kind}");
    }
}

#[test]
fn other_process_conflicts_for_every_kind() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A, B]);
        assert_eq!(os.try_lock(A, kind), TryLockResult::Acquired);
        assert_eq!(os.try_lock(B, kind), TryLockResult::WouldBlock, "{kind}");
    }
}

#[test]
fn closing_another_descriptor_drops_only_posix_locks() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A, A2, B]);
        os.try_lock(A, kind);
        os.close(A2);
        let dropped = matches!(kind, LockKind::Posix | LockKind::NfsFlock);
        assert_eq!(!os.holds(A, kind), dropped, "{kind}");
        assert_eq!(
            os.try_lock(B, kind) == TryLockResult::Acquired,
            dropped,
            "{kind}"
        );
    }
}

#[test]
fn cross_kind_conflicts_match_the_table() {
    use LockKind::*;
    // (held, wanted, conflicts) across processes.
    let table = [
        (Flock, Posix, false),
        (Flock, Ofd, false),
        (Posix, Flock, false),
        (Ofd, Flock, false),
        (Posix, Ofd, true),
        (Ofd, Posix, true),
        (NfsFlock, Posix, true),
        (NfsFlock, Flock, false),
    ];
    for (held, wanted, conflict) in table {
        let mut os = opened(&[A, B]);
        os.try_lock(A, held);
        let got = os.try_lock(B, wanted) == TryLockResult::WouldBlock;
        assert_eq!(got, conflict, "{held} then {wanted}");
    }
    // OFD vs POSIX conflict even inside one process.
    let mut os = opened(&[A, A2]);
    os.try_lock(A, Posix);
    assert_eq!(os.try_lock(A2, Ofd), TryLockResult::WouldBlock);
}

#[test]
fn crash_releases_everything_of_the_process() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A, B]);
        os.try_lock(A, kind);
        os.crash(0);
        assert_eq!(os.desc_inode(A), None);
        assert_eq!(os.try_lock(B, kind), TryLockResult::Acquired, "{kind}");
    }
}

#[test]
fn unlink_lets_a_newcomer_lock_a_fresh_inode() {
    let mut os = opened(&[A]);
    os.try_lock(A, LockKind::Ofd);
    os.unlink().unwrap();
    assert_eq!(os.fstat(A).unwrap().nlink, 0);
    os.open(B, OpenMode::Create).unwrap();
    assert_ne!(os.desc_inode(A), os.desc_inode(B));
    assert_eq!(os.try_lock(B, LockKind::Ofd), TryLockResult::Acquired);
    assert!(os.holds(A, LockKind::Ofd));
}

#[test]
fn replace_moves_the_path_to_a_fresh_inode() {
    let mut os = opened(&[A]);
    let old = os.desc_inode(A).unwrap();
    let new = os.replace();
    assert_ne!(old, new);
    assert_eq!(os.path_inode(), Some(new));
    assert_eq!(os.fstat(A).unwrap().nlink, 0);
}

#[test]
fn probe_reports_pid_for_posix_only() {
    let mut os = opened(&[A, B]);
    os.try_lock(A, LockKind::Posix);
    assert_eq!(
        os.probe(B, LockKind::Posix),
        ProbeResult::Conflict { pid: Some(0) }
    );
    assert_eq!(os.probe(A, LockKind::Posix), ProbeResult::NoConflict);
    let mut os = opened(&[A, B]);
    os.try_lock(A, LockKind::Ofd);
    assert_eq!(
        os.probe(B, LockKind::Ofd),
        ProbeResult::Conflict { pid: None }
    );
    assert_eq!(os.probe(B, LockKind::Flock), ProbeResult::Unknown);
}

#[test]
fn foreign_open_close_drops_only_posix() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A]);
        os.try_lock(A, kind);
        os.foreign_open_close(0);
        let dropped = matches!(kind, LockKind::Posix | LockKind::NfsFlock);
        assert_eq!(!os.holds(A, kind), dropped, "{kind}");
    }
}

#[test]
fn compact_renumbers_densely_and_keeps_referenced() {
    let mut os = Os::new();
    os.create_exclusive().unwrap(); // 0
    os.unlink().unwrap();
    os.create_exclusive().unwrap(); // 1
    os.unlink().unwrap();
    os.create_exclusive().unwrap(); // 2
    let map = os.compact(&BTreeSet::from([1]));
    assert_eq!(map, BTreeMap::from([(1, 0), (2, 1)]));
    assert_eq!(os.path_inode(), Some(1));
    assert_eq!(os.create_exclusive(), Err(FsError::AlreadyExists));
    os.unlink().unwrap();
    assert_eq!(os.create_exclusive(), Ok(2));
}

#[test]
fn is_compact_tells_when_compact_would_renumber() {
    let mut os = Os::new();
    assert!(os.is_compact([]));
    os.create_exclusive().unwrap(); // 0
    assert!(os.is_compact([]));
    os.unlink().unwrap();
    assert!(!os.is_compact([]));
    assert!(os.is_compact([0]));
    os.create_exclusive().unwrap(); // 1
    assert!(!os.is_compact([]));
    let before = os.clone();
    assert!(os.is_compact([0]));
    os.compact(&BTreeSet::from([0]));
    assert_eq!(os, before, "compact changes nothing when is_compact");
    os.compact(&BTreeSet::new());
    assert!(os.is_compact([]));
}

#[test]
fn lose_locks_drops_every_lock_of_the_process_and_nothing_else() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A, B]);
        assert_eq!(os.try_lock(A, kind), TryLockResult::Acquired);
        assert!(!os.lose_locks(1), "{kind}: p1 owns nothing");
        assert!(os.owns_lock(0));
        assert!(os.lose_locks(0), "{kind}");
        assert!(!os.holds(A, kind) && !os.owns_lock(0), "{kind}");
        assert_eq!(
            os.desc_inode(A),
            Some(0),
            "{kind}: the descriptor stays open"
        );
        assert_eq!(
            os.probe(A, kind) == ProbeResult::Unknown,
            kind == LockKind::Flock
        );
        assert!(os.lock_would_succeed(B, kind), "{kind}");
        assert_eq!(os.try_lock(B, kind), TryLockResult::Acquired, "{kind}");
    }
}

#[test]
fn a_written_file_is_reported_by_fstat_until_it_is_gone() {
    let mut os = opened(&[A]);
    assert!(!os.fstat(A).unwrap().written);
    assert!(os.write_path());
    assert!(os.fstat(A).unwrap().written);
    os.try_lock(A, LockKind::Ofd);
    assert!(os.holds(A, LockKind::Ofd), "writing does not touch locks");
    os.replace();
    assert!(os.fstat(A).unwrap().written, "still the old, written inode");
    os.open(B, OpenMode::Create).unwrap();
    assert!(!os.fstat(B).unwrap().written, "the fresh file is empty");
    os.close(A);
    assert!(
        !os.is_written(0),
        "a forgotten inode is forgotten with its contents"
    );
    os.compact(&BTreeSet::new());
    assert!(!os.fstat(B).unwrap().written);
    let mut empty = Os::new();
    assert!(!empty.write_path(), "no file to write");
}

#[test]
fn blocking_lock_waits_for_exactly_the_conflicts_try_lock_refuses() {
    for kind in LockKind::ALL {
        let mut os = opened(&[A, A2, B]);
        assert!(os.lock_would_succeed(A, kind));
        os.try_lock(A, kind);
        let same_process = matches!(kind, LockKind::Posix | LockKind::NfsFlock);
        assert_eq!(os.lock_would_succeed(A2, kind), same_process, "{kind}");
        assert!(!os.lock_would_succeed(B, kind), "{kind}");
    }
}

#[test]
fn exclusive_create_fails_when_present() {
    let mut os = Os::new();
    assert_eq!(os.open(A, OpenMode::Existing), Err(FsError::NotFound));
    os.create_exclusive().unwrap();
    assert_eq!(
        os.open(A, OpenMode::CreateExclusive),
        Err(FsError::AlreadyExists)
    );
}
