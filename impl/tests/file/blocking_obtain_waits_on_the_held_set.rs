//! `obtain_blocking` keeps the held-set rule of `try_obtain`: a thread of a process that holds
//! the lock waits on the held set with NO descriptor open, and only after the holder's
//! `close` → `held_remove` does it open the file and wait in the kernel. The twin shows why:
//! without the held set, under POSIX rules, the second thread's `F_SETLKW` is granted at once
//! (the process already owns the lock) and closing its descriptor drops the first thread's
//! lock (LUCENE-5738).

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Instrumented;
use lockwright::file::defects::Defect;
use lockwright::file::sys::{OsLockKind, RealSystem};
use lockwright::{LockError, LockFactory, NativeFsLockFactory};

type Factory = NativeFsLockFactory<Instrumented<RealSystem>>;

/// Two factories of one (simulated) process: one instrumented system, one held set.
fn one_process(kind: OsLockKind) -> (Factory, Factory, Arc<Instrumented<RealSystem>>) {
    let sys = Instrumented::new(common::process());
    (
        NativeFsLockFactory::with_shared_system(Arc::clone(&sys), kind),
        NativeFsLockFactory::with_shared_system(Arc::clone(&sys), kind),
        sys,
    )
}

fn canonical_tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// An OFD observer in its own held set: sees any live OFD or POSIX holder, even of this
/// process.
fn observer_can_obtain(dir: &std::path::Path) -> bool {
    NativeFsLockFactory::with_system(common::process(), OsLockKind::Ofd)
        .try_obtain(dir, "write.lock")
        .is_ok()
}

/// Polls `cond` for up to 10 s.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_thread_of_the_holding_process_waits_on_the_held_set_without_opening() {
    for kind in common::KINDS {
        let (_tmp, dir) = canonical_tempdir();
        let (t1, t2, sys) = one_process(kind);
        let held = t1.try_obtain(&dir, "write.lock").unwrap();
        sys.take_log();
        let waiter = {
            let dir = dir.clone();
            std::thread::spawn(move || t2.obtain_blocking(&dir, "write.lock").map(|l| l.close()))
        };
        // The waiter gets as far as the held set and no further.
        eventually("held_insert_wait", || {
            let log = sys.take_log();
            assert!(
                !log.contains(&"open_lock_file"),
                "{kind:?}: opened while the path was held: {log:?}"
            );
            log.contains(&"held_insert_wait")
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "{kind:?}: returned while held");
        assert_eq!(
            sys.take_log(),
            Vec::<&str>::new(),
            "{kind:?}: still waiting"
        );
        // Release: close first, then held_remove; only then does the waiter open and lock (and
        // re-check that the path still names the file it locked).
        held.close().unwrap();
        let result = waiter.join().unwrap();
        assert!(matches!(result, Ok(Ok(()))), "{kind:?}: {result:?}");
        assert_eq!(
            sys.take_log(),
            [
                "unlock",
                "close",
                "held_remove",
                "open_lock_file",
                "lock_blocking",
                "stat",
                "unlock",
                "close",
                "held_remove"
            ],
            "{kind:?}"
        );
    }
}

#[test]
fn blocking_obtain_steps_when_free() {
    for kind in common::KINDS {
        let (_tmp, dir) = canonical_tempdir();
        let (f, _, sys) = one_process(kind);
        let lock = f.obtain_blocking(&dir, "write.lock").unwrap();
        assert_eq!(
            sys.take_log(),
            [
                "canonicalize_dir",
                "stat",
                "held_insert_wait",
                "open_lock_file",
                "lock_blocking",
                "stat"
            ],
            "{kind:?}"
        );
        lock.ensure_valid().unwrap();
        assert!(!observer_can_obtain(&dir) || kind == OsLockKind::Flock);
    }
}

/// Twin, LUCENE-5738's shape: without the held set, a POSIX blocking obtain in the holding
/// process is granted at once, and closing it drops the first holder's lock.
#[test]
fn without_the_held_set_a_posix_blocking_obtain_is_granted_at_once_and_drops_the_lock() {
    let (_tmp, dir) = canonical_tempdir();
    let f = NativeFsLockFactory::with_system(common::process(), OsLockKind::Posix)
        .with_defect(Defect::NoHeldSet);
    let first = f.try_obtain(&dir, "write.lock").unwrap();
    let start = Instant::now();
    let second = f
        .obtain_blocking(&dir, "write.lock")
        .expect("F_SETLKW is granted: the process already owns the lock");
    assert!(start.elapsed() < Duration::from_secs(5), "it did not wait");
    second.close().unwrap();
    assert!(
        observer_can_obtain(&dir),
        "the second descriptor's close dropped the first holder's POSIX lock"
    );
    drop(first);
}

#[test]
fn a_failing_blocking_lock_closes_first_then_leaves_the_held_set() {
    let (_tmp, dir) = canonical_tempdir();
    let (f, _, sys) = one_process(OsLockKind::Ofd);
    sys.fail("lock_blocking", libc::ENOLCK);
    let err = f.obtain_blocking(&dir, "write.lock").unwrap_err();
    assert!(
        matches!(err, LockError::LockingUnsupported { .. }),
        "{err:?}"
    );
    assert_eq!(
        sys.take_log(),
        [
            "canonicalize_dir",
            "stat",
            "held_insert_wait",
            "open_lock_file",
            "lock_blocking",
            "close",
            "held_remove"
        ]
    );
    assert!(sys.inner.held_set().is_empty());
    // Never carried on unlocked, and nothing left behind: the next obtain works.
    assert!(f.try_obtain(&dir, "write.lock").is_ok());
}
