//! What the former verdict tests (`verdicts/`) checked beyond the golden values, which now live
//! in `docs/results.json` alone (compared by `checks/report/tests/report_fresh.rs`, rewritten
//! by `cargo run -p lockwright-report --`): the states that show why a row's verdicts hold or
//! fail (a blocking obtain waiting on the held set, a re-check seeing an unlinked file, a
//! blind write, the OS error paths taken, a written lock file refusing its holder) and their
//! twins that never reach them.

use lockwright_model::checker::pinned::reachable;
use lockwright_model::file::{Faults, LockKind, Pc, Scenario, State, Variant};

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("valid fault list")
}

/// The blocking obtain: HeldInsert waits while the path is in the held set, TryLock waits
/// until it would be acquired. Safe under POSIX because the wait for a holder of the same
/// process is on the held set, with no descriptor open (reachable below), and a kernel wait
/// is for another process (reachable too).
#[test]
fn native_blocking_posix_waits_on_the_held_set() {
    let sc = Scenario::new(Variant::NativeBlocking, LockKind::Posix)
        .with_parties(2, 2)
        .with_faults(faults("crash=2,restart=2"));
    // A thread waits on the held set while its process holds the POSIX lock (where a
    // second descriptor's F_SETLKW would be granted at once), and one waits in the kernel
    // for another process.
    assert!(reachable(&sc, |s| (0..2).any(|p| (0..2).any(|t| {
        sc.is_waiting(s, p, t) && s.thread(p, t).pc == Pc::Idle && s.os.owns_lock(p)
    }))));
    assert!(reachable(&sc, |s| (0..2).any(|p| (0..2).any(|t| {
        sc.is_waiting(s, p, t) && s.thread(p, t).pc == Pc::Opened
    }))));
}

/// The lock file is replaced while a blocking obtain waits in the kernel. The
/// re-check after the lock call (`stat(path)` against the descriptor's inode) sees another
/// file, so the thread unlocks, closes, opens the new file and locks it: every blocking obtain
/// returns a lock on the file the path names (judged from the kernel state), and the re-open
/// path is taken (reachable). "at most one writer" still fails by design: a holder that
/// obtained before the replace keeps its orphan (only `ensure_valid` tells). Twin:
/// `native_blocking_no_recheck_returns_a_lock_on_a_replaced_file`.
#[test]
fn native_blocking_rechecks_a_replaced_file() {
    let sc = Scenario::new(Variant::NativeBlocking, LockKind::Ofd)
        .with_parties(2, 2)
        .with_faults(faults("unlink=1,replace=1"));
    // The re-check also sees an unlinked file (nothing at the path), not only a replaced one.
    assert!(reachable(&sc, |s| s
        .live_threads()
        .any(|(_, _, th)| th.pc == Pc::Stale)
        && s.os.path_inode().is_none()));
}

/// Defect ProbeLast (this project's first ensure_valid order, found by shuttle's refinement
/// replay): p0's lock is dropped (a foreign close) and p1 holds; p0's held-set, fstat and
/// stat checks pass; the file is unlinked; p1 releases; p0's probe finds no conflict and
/// ensure_valid returns Ok, the lock valid at no moment of the call; p1 obtains the fresh
/// file. Twin: `native_posix_lost_lock_and_unlink_one_valid_writer`.
#[test]
fn probe_last_posix_lost_lock_and_unlink_two_valid_writers() {
    let sc = Scenario::new(Variant::NativeProbeLast, LockKind::Posix)
        .with_parties(2, 2)
        .with_faults(faults("unlink=1,foreign=1"));
    assert!(reachable(&sc, |s| s
        .live_threads()
        .any(|(_, _, th)| th.blind && th.pc == Pc::Writing)));
}

/// ProbeLast needs a lost lock: with only unlink and replace every check that can fail late
/// is monotone, so each pass has a moment at which the lock was valid (no blind pass).
#[test]
fn probe_last_without_lost_locks_is_linearizable() {
    let sc = Scenario::new(Variant::NativeProbeLast, LockKind::Ofd)
        .with_parties(2, 2)
        .with_faults(faults("unlink=1,replace=1"));
    assert!(!reachable(&sc, |s| s
        .live_threads()
        .any(|(_, _, th)| th.blind && th.pc == Pc::Writing)));
    // The checks are split, and one can pass while the lock is already invalid.
    assert!(reachable(&sc, |s| s.live_threads().any(|(p, t, th)| {
        matches!(th.pc, Pc::Checking(_)) && !sc.observe_ensure_valid(s, p, t)
    })));
}

/// A writer whose ensure_valid fails only because someone wrote into the lock file: its probe,
/// held set, link count and inode are all fine.
fn written_invalidates_a_holder(sc: &Scenario, s: &State) -> bool {
    s.writers().any(|(p, t)| {
        let Some(st) = sc.observe_fstat(s, p, t) else {
            return false;
        };
        st.written
            && st.nlink > 0
            && sc.observe_stat(s) == Some(st.inode)
            && sc.observe_held_contains_of(s, p, t)
            && !sc.observe_ensure_valid(s, p, t)
    })
}

/// ENOLCK/EIO from try_lock, EIO from unlock and close: the obtain error path (close, then
/// leave the held set, fail) and the error-tolerant release (every step runs) keep every
/// property. Twin: `carry_on_after_lock_error_gives_two_writers`.
#[test]
fn native_posix_os_errors_fail_closed_and_release_fully() {
    let sc = Scenario::new(Variant::Native, LockKind::Posix)
        .with_parties(2, 2)
        .with_faults(faults(
            "crash=1,restart=1,lock-error=1,unlock-error=1,close-error=1",
        ));
    // The error paths are taken, and the lock is obtained again after each.
    assert!(reachable(&sc, |s| s.budget.lock_error == 0
        && s.writers().next().is_some()));
    assert!(reachable(&sc, |s| s.budget.unlock_error == 0
        && s.budget.close_error == 0
        && s.writers().next().is_some()));
}

/// Someone writes into the lock file (`write`): no second writer, but ensure_valid's length
/// check refuses every holder of that file from then on (until it is deleted or replaced).
#[test]
fn native_ofd_written_lock_file_invalidates_the_holder() {
    let sc = Scenario::new(Variant::Native, LockKind::Ofd)
        .with_parties(2, 2)
        .with_faults(faults("crash=1,restart=1,write=1"));
    assert!(reachable(&sc, |s| written_invalidates_a_holder(&sc, s)));
}

/// Twin of the written lock file: without the inode checks no holder is ever refused for it
/// (the same states, other transitions: a holder passes ensure_valid on a written file).
#[test]
fn skip_inode_check_misses_a_written_lock_file() {
    let sc = Scenario::new(Variant::NativeSkipInodeCheck, LockKind::Ofd)
        .with_parties(2, 2)
        .with_faults(faults("crash=1,restart=1,write=1"));
    assert!(!reachable(&sc, |s| written_invalidates_a_holder(&sc, s)));
}
