//! N threads race to obtain the same lock; whoever holds it bumps a shared counter, which must
//! never exceed one ("at most one writer"). Run for every factory, and for OFD/flock also with
//! one injected held set per thread (threads acting as separate processes, so only the OS lock
//! excludes). The twin at the bottom shows the counter catches a factory that does not exclude.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lockwright::file::sys::OsLockKind;
use lockwright::{
    LockFactory, NativeFsLockFactory, NoLockFactory, SimpleFsLockFactory, SingleInstanceLockFactory,
};

/// 8 threads on 2 cores give plenty of preemption; 200 attempts each keep the run well under
/// a second while producing thousands of contended attempts.
const THREADS: usize = 8;
const ATTEMPTS: usize = 200;

/// Returns (successful obtains, maximum number of simultaneous holders seen).
fn race(factories: Vec<Arc<dyn LockFactory>>) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let holders = Arc::new(AtomicUsize::new(0));
    let max_seen = Arc::new(AtomicUsize::new(0));
    let wins = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = factories
        .into_iter()
        .map(|f| {
            let (dir, holders, max_seen, wins) = (
                dir.path().to_path_buf(),
                holders.clone(),
                max_seen.clone(),
                wins.clone(),
            );
            std::thread::spawn(move || {
                for i in 0..ATTEMPTS {
                    match f.try_obtain(&dir, "write.lock") {
                        Ok(lock) => {
                            let now = holders.fetch_add(1, Ordering::SeqCst) + 1;
                            max_seen.fetch_max(now, Ordering::SeqCst);
                            wins.fetch_add(1, Ordering::SeqCst);
                            lock.ensure_valid().unwrap();
                            if i % 8 == 0 {
                                std::thread::sleep(Duration::from_micros(50));
                            } else {
                                std::thread::yield_now();
                            }
                            holders.fetch_sub(1, Ordering::SeqCst);
                            lock.close().unwrap();
                        }
                        Err(e) => assert!(e.is_held(), "unexpected error: {e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    (wins.load(Ordering::SeqCst), max_seen.load(Ordering::SeqCst))
}

fn shared(f: impl LockFactory + 'static) -> Vec<Arc<dyn LockFactory>> {
    let f: Arc<dyn LockFactory> = Arc::new(f);
    (0..THREADS).map(|_| Arc::clone(&f)).collect()
}

fn assert_one_writer(label: &str, (wins, max): (usize, usize)) {
    assert!(wins > 0, "{label}: nobody ever obtained the lock (vacuous)");
    assert_eq!(max, 1, "{label}: at most one writer");
}

#[test]
fn native_threads_of_one_process_never_overlap() {
    for kind in common::KINDS {
        assert_one_writer(kind.name(), race(shared(NativeFsLockFactory::new(kind))));
    }
}

#[test]
fn native_threads_as_separate_processes_never_overlap_with_ofd_and_flock() {
    for kind in [OsLockKind::Ofd, OsLockKind::Flock] {
        let factories = (0..THREADS)
            .map(|_| {
                Arc::new(NativeFsLockFactory::with_system(common::process(), kind))
                    as Arc<dyn LockFactory>
            })
            .collect();
        assert_one_writer(kind.name(), race(factories));
    }
}

#[test]
fn simple_fs_threads_never_overlap() {
    assert_one_writer("simple", race(shared(SimpleFsLockFactory::new())));
}

#[test]
fn single_instance_threads_never_overlap() {
    assert_one_writer(
        "single-instance",
        race(shared(SingleInstanceLockFactory::new())),
    );
}

/// Twin: the counter catches a factory that lets two threads hold at once.
#[test]
fn the_counter_catches_a_factory_that_does_not_exclude() {
    let (wins, max) = race(shared(NoLockFactory));
    assert_eq!(wins, THREADS * ATTEMPTS);
    assert!(
        max > 1,
        "NoLockFactory must show overlapping holders, saw max {max}"
    );
}
