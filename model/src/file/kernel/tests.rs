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
    let map = os.compact([1]);
    assert_eq!(map.iter().collect::<Vec<_>>(), [(1, 0), (2, 1)]);
    assert_eq!((map.get(1), map.get(2), map.len()), (0, 1, 2));
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
    os.compact([0]);
    assert_eq!(os, before, "compact changes nothing when is_compact");
    os.compact([]);
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
    os.compact([]);
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

/// The hasher calls a value makes, in order (a write of bytes, of a `u8`, of a length or
/// discriminant), so two hash streams can be compared call by call.
#[derive(Default)]
struct Calls(Vec<(&'static str, u64)>);

impl std::hash::Hasher for Calls {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0.push(("byte", u64::from(b)));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.0.push(("u8", u64::from(i)));
    }
    fn write_usize(&mut self, i: usize) {
        self.0.push(("usize", i as u64));
    }
    fn write_isize(&mut self, i: isize) {
        self.0.push(("isize", i as u64));
    }
    fn finish(&self) -> u64 {
        0
    }
}

fn calls(value: &impl std::hash::Hash) -> Vec<(&'static str, u64)> {
    let mut h = Calls::default();
    value.hash(&mut h);
    h.0
}

/// The kernel as it was stored before the inline tables: its fields in declaration order.
type BTreeView = (
    Option<Inode>,
    std::collections::BTreeMap<Inode, u8>,
    std::collections::BTreeMap<Desc, Inode>,
    std::collections::BTreeSet<LockRec>,
    Inode,
    std::collections::BTreeSet<Inode>,
);

fn btree_view(os: &Os) -> BTreeView {
    (
        os.path,
        os.inodes.iter().map(|(&i, &n)| (i, n)).collect(),
        os.descs().collect(),
        os.locks().collect(),
        os.next_inode,
        os.written.iter().copied().collect(),
    )
}

/// Random kernel calls by 4 processes × 3 descriptor slots (12 descriptions: more than the
/// tables keep inline, so they move to the heap and back): after every call the kernel feeds
/// a hasher exactly what the same tables as `BTreeMap`/`BTreeSet` would, so every state's
/// fingerprint (ours and Stateright's) is what it was before the inline tables; and two
/// kernels are equal exactly when their B-tree views are. A table that hashed its unused
/// slots, skipped its length or kept a stale entry after a move back inline fails here.
#[test]
fn the_kernel_hashes_and_compares_like_the_btrees_it_replaced() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut os = Os::new();
    let mut previous = os.clone();
    let (mut most_descs, mut most_locks) = (0, 0);
    for step in 0..20_000 {
        let desc = Desc {
            pid: next(4) as Pid,
            slot: next(3) as u8,
        };
        let kind = LockKind::ALL[next(4) as usize];
        match next(12) {
            0..=3 if os.desc_inode(desc).is_none() => {
                let _ = os.open(desc, OpenMode::Create);
            }
            0..=5 if os.desc_inode(desc).is_some() => {
                os.try_lock(desc, kind);
            }
            6 => os.unlock(desc, kind),
            7 => os.close(desc),
            8 => match next(4) {
                0 => drop(os.unlink()),
                1 => drop(os.replace()),
                2 => os.crash(desc.pid),
                _ => drop(os.write_path()),
            },
            9 => os.foreign_open_close(desc.pid),
            10 if next(8) == 0 => drop(os.lose_locks(desc.pid)),
            _ => {}
        }
        if os.next_inode > 200 || next(16) == 0 {
            os.compact([]);
        }
        most_descs = most_descs.max(os.descs().count());
        most_locks = most_locks.max(os.locks().count());
        let view = btree_view(&os);
        assert_eq!(calls(&os), calls(&view), "step {step}: {os:?}");
        assert_eq!(
            os == previous,
            view == btree_view(&previous),
            "step {step}: {os:?} against {previous:?}"
        );
        let debug = (
            format!("{:?}", os.inodes),
            format!("{:?}", os.descs),
            format!("{:?}", os.locks),
            format!("{:?}", os.written),
        );
        let (_, inodes, descs, locks, _, written) = &view;
        assert_eq!(
            debug,
            (
                format!("{inodes:?}"),
                format!("{descs:?}"),
                format!("{locks:?}"),
                format!("{written:?}")
            ),
            "step {step}: Debug prints as the B-trees did"
        );
        previous = os.clone();
    }
    assert!(
        most_descs > INLINE_DESCS && most_locks > 2,
        "the run reached the heap side ({most_descs} descriptions, {most_locks} locks)"
    );
}

#[test]
#[should_panic(expected = "inode 0 was not kept by the compaction")]
fn a_renumbering_refuses_a_generation_it_did_not_keep() {
    let mut os = Os::new();
    os.create_exclusive().unwrap(); // 0
    os.unlink().unwrap();
    os.create_exclusive().unwrap(); // 1
    let map = os.compact([]);
    assert_eq!(map.get(1), 0);
    map.get(0);
}
