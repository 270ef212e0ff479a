//! Twins of the "at most one writer" tests: each known incident, re-created with a test-only
//! `Defect`, produces two writers in the very interleaving where the correct protocol
//! produces one. The interleaving is forced with an instrumented `System` that runs a hook
//! right before a chosen call. (Enabled for `cargo test -p lockwright` by the crate's
//! dev-dependency on itself with the `test-util` feature.)

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::sync::{Arc, Mutex};

use common::Instrumented;
use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::file::sys::{HeldSet, RealSystem};
use lockwright::{Lock, LockError, LockFactory, NativeFsLockFactory};

type Slot = Arc<Mutex<Option<Result<Lock, LockError>>>>;

fn slot() -> Slot {
    Arc::new(Mutex::new(None))
}

/// An OFD observer in its own "process": OFD conflicts with both OFD and POSIX locks, even
/// POSIX locks of this process, so it sees any live holder.
fn observer_can_obtain(dir: &std::path::Path) -> bool {
    NativeFsLockFactory::with_system(common::process(), OsLockKind::Ofd)
        .try_obtain(dir, "write.lock")
        .is_ok()
}

/// LUCENE-5612. A holds; B opens the lock file; A releases; C obtains; B's try_lock runs.
/// Returns whether B and C both ended up holding.
fn delete_on_release_scenario(defect: Option<Defect>) -> (bool, Option<LockError>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let kind = OsLockKind::Ofd;
    let build = |sys: Arc<Instrumented<RealSystem>>| {
        let f = NativeFsLockFactory::with_shared_system(sys, kind);
        match defect {
            Some(d) => f.with_defect(d),
            None => f,
        }
    };
    let a = build(Instrumented::new(common::process()));
    let b_sys = Instrumented::new(common::process());
    let b = build(Arc::clone(&b_sys));
    let c = build(Instrumented::new(common::process()));

    let lock_a = a.try_obtain(&path, "write.lock").unwrap();
    let c_result = slot();
    let (c_out, p) = (Arc::clone(&c_result), path.clone());
    b_sys.before("try_lock", move || {
        // B has opened the file. A releases, C comes along.
        drop(lock_a);
        *c_out.lock().unwrap() = Some(c.try_obtain(&p, "write.lock"));
    });
    let b_result = b.try_obtain(&path, "write.lock");
    let c_result = c_result.lock().unwrap().take().unwrap();
    let b_valid = b_result.as_ref().ok().map(|l| l.ensure_valid().err());
    let both = b_result.is_ok() && c_result.is_ok();
    (both, b_valid.flatten())
}

#[test]
fn release_never_deletes_so_a_late_opener_cannot_lock_an_orphan() {
    let (both, _) = delete_on_release_scenario(None);
    assert!(!both, "at most one writer");
}

#[test]
fn delete_on_release_defect_gives_two_writers_lucene_5612() {
    let (both, b_check) = delete_on_release_scenario(Some(Defect::DeleteOnRelease));
    assert!(both, "LUCENE-5612 must give two writers (on two inodes)");
    // ... and the orphan holder's ensure_valid is what would notice.
    assert!(
        matches!(b_check, Some(LockError::Invalidated { .. })),
        "{b_check:?}"
    );
}

/// LUCENE-5738. One process, POSIX locks: a second obtain on a held path.
#[test]
fn held_set_stops_a_second_in_process_obtain_under_posix() {
    let dir = tempfile::tempdir().unwrap();
    let f = NativeFsLockFactory::with_system(common::process(), OsLockKind::Posix);
    let _first = f.try_obtain(dir.path(), "write.lock").unwrap();
    let err = f.try_obtain(dir.path(), "write.lock").unwrap_err();
    assert!(
        matches!(err, LockError::HeldByThisProcess { .. }),
        "{err:?}"
    );
    assert!(
        !observer_can_obtain(dir.path()),
        "the first holder still holds"
    );
}

#[test]
fn no_held_set_defect_lets_a_second_obtain_succeed_and_drop_the_lock_lucene_5738() {
    let dir = tempfile::tempdir().unwrap();
    let f = NativeFsLockFactory::with_system(common::process(), OsLockKind::Posix)
        .with_defect(Defect::NoHeldSet);
    let first = f.try_obtain(dir.path(), "write.lock").unwrap();
    let second = f
        .try_obtain(dir.path(), "write.lock")
        .expect("POSIX F_SETLK succeeds for the same process");
    second.close().unwrap();
    // The second descriptor's close dropped the process's lock: `first` believes it holds,
    // yet another process can obtain.
    assert!(
        observer_can_obtain(dir.path()),
        "LUCENE-5738: the first holder's lock was dropped"
    );
    drop(first);
}

/// LUCENE-6507. One process, POSIX locks: T1 releases; right before T1's `close`, T2 obtains.
/// Returns whether T2 and an outside observer both held.
fn remove_before_close_scenario(defect: Option<Defect>) -> (bool, bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let sys = Instrumented::new(RealSystem::with_held_set(Arc::new(HeldSet::new())));
    let build = |sys: Arc<Instrumented<RealSystem>>| {
        let f = NativeFsLockFactory::with_shared_system(sys, OsLockKind::Posix);
        match defect {
            Some(d) => f.with_defect(d),
            None => f,
        }
    };
    let t1 = build(Arc::clone(&sys));
    let t2 = build(Arc::clone(&sys));
    let lock1 = t1.try_obtain(&path, "write.lock").unwrap();
    let t2_result = slot();
    let (out, p) = (Arc::clone(&t2_result), path.clone());
    sys.before("close", move || {
        *out.lock().unwrap() = Some(t2.try_obtain(&p, "write.lock"));
    });
    lock1.close().unwrap();
    let t2_lock = t2_result.lock().unwrap().take().unwrap();
    let t2_holds = t2_lock.is_ok();
    let observer_holds = observer_can_obtain(&path);
    drop(t2_lock);
    (t2_holds, observer_holds)
}

#[test]
fn close_before_held_remove_keeps_a_racing_obtain_out() {
    let (t2_holds, observer_holds) = remove_before_close_scenario(None);
    assert!(!(t2_holds && observer_holds), "at most one writer");
    assert!(!t2_holds, "T2 must see the path still in the held set");
}

#[test]
fn remove_before_close_defect_lets_the_late_close_drop_a_new_lock_lucene_6507() {
    let (t2_holds, observer_holds) = remove_before_close_scenario(Some(Defect::RemoveBeforeClose));
    assert!(
        t2_holds && observer_holds,
        "LUCENE-6507 must give two writers: t2={t2_holds} observer={observer_holds}"
    );
}
