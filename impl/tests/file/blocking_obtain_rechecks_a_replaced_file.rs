//! On the real kernel: a blocking obtain whose lock file is replaced while it waits
//! must not return a lock on the old inode. A holds the lock; B blocks in `obtain_blocking`
//! (in the kernel: A and B are two "processes", each with its own held set); a new file is
//! renamed over the lock path; A releases. The kernel then grants B the lock on the OLD inode.
//!
//! The oracle is the kernel's lock table (`/proc/locks`: the device and inode of every granted
//! and every waiting lock), which shares nothing with the code under test: once B's obtain
//! returns, the one lock on either inode must be on the file `stat(path)` names now, and
//! B's `ensure_valid` must pass. The twin builds B with `Defect::BlockingNoRecheck` (the
//! `obtain_blocking` before the re-check) and sees the lock on the orphan, which
//! `ensure_valid` then rejects. Model rows: `native_blocking_rechecks_a_replaced_file` and
//! its twin `native_blocking_no_recheck_returns_a_lock_on_a_replaced_file`.

// Tests play the foreign code that renames over lock files: the gate rule (clippy.toml) is
// for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lockwright::file::defects::Defect;
use lockwright::file::sys::OsLockKind;
use lockwright::{LockFactory, NativeFsLockFactory};

/// `(dev, ino)` as `stat` gives them.
type Id = (u64, u64);

/// One line of `/proc/locks` on a file: its `(dev, ino)` and whether it is a waiter (`->`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KernelLock {
    id: Id,
    waiting: bool,
}

/// Every lock `/proc/locks` lists on the inodes `ids` (each `MAJ:MIN:INO`, the device numbers
/// in hex).
fn kernel_locks(ids: &[Id]) -> Vec<KernelLock> {
    let table = proc_locks();
    let mut out = Vec::new();
    for line in table.lines() {
        let waiting = line.contains("->");
        let Some(field) = line
            .split_whitespace()
            .find(|f| f.matches(':').count() == 2)
        else {
            continue;
        };
        let mut parts = field.split(':');
        let (Some(major), Some(minor), Some(ino)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(major), Ok(minor), Ok(ino)) = (
            u32::from_str_radix(major, 16),
            u32::from_str_radix(minor, 16),
            ino.parse::<u64>(),
        ) else {
            continue;
        };
        let id = (libc::makedev(major, minor), ino);
        if ids.contains(&id) {
            out.push(KernelLock { id, waiting });
        }
    }
    out
}

/// `/proc/locks` in as few `read(2)`s as the kernel allows: each read walks the lock list
/// once (for up to a page of output, a few dozen locks), while `read_to_string` starts with
/// tiny reads, and each read restarts the walk at an entry index — so a lock taken or dropped
/// elsewhere between two reads (cargo's own `flock`s, other tests) shifts the entries and one
/// can be skipped. That made this test fail about one run in four on a busy machine: an
/// empty answer where B's lock was held.
fn proc_locks() -> String {
    use std::io::Read;
    let mut f = std::fs::File::open("/proc/locks").expect("open /proc/locks");
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).expect("read /proc/locks");
        if n == 0 {
            return String::from_utf8(out).expect("/proc/locks is ASCII");
        }
        out.extend_from_slice(&buf[..n]);
    }
}

fn id_of(path: &Path) -> Id {
    let m = std::fs::metadata(path).expect("stat the lock file");
    (m.dev(), m.ino())
}

/// Polls `cond` for up to 10 s.
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// What B ended up with after the replace-while-waiting scenario.
struct Outcome {
    /// The file at the lock path when B's obtain returned.
    at_path: Id,
    /// The file A locked, which was renamed over.
    old: Id,
    /// The granted locks (none waiting) on either file, by the kernel's table.
    granted: Vec<Id>,
    /// B's `ensure_valid()`.
    valid: bool,
}

fn replaced_while_waiting(kind: OsLockKind, defect: Option<Defect>) -> Outcome {
    let tmp = tempfile::tempdir().unwrap();
    let dir: PathBuf = tmp.path().canonicalize().unwrap();
    let path = dir.join("write.lock");
    let a = NativeFsLockFactory::with_system(common::process(), kind);
    let b = NativeFsLockFactory::with_system(common::process(), kind);
    let b = match defect {
        Some(d) => b.with_defect(d),
        None => b,
    };
    let lock_a = a.try_obtain(&dir, "write.lock").unwrap();
    let old = id_of(&path);
    let waiter = {
        let dir = dir.clone();
        std::thread::spawn(move || b.obtain_blocking(&dir, "write.lock"))
    };
    // B waits in the kernel, on the file A holds.
    eventually("B's lock request waiting on the lock file", || {
        kernel_locks(&[old]).iter().any(|l| l.waiting)
    });
    // An operator's tool replaces the lock file while B waits.
    let fresh = dir.join("write.lock.new");
    std::fs::write(&fresh, b"").unwrap();
    std::fs::rename(&fresh, &path).unwrap();
    let new = id_of(&path);
    assert_ne!(old, new, "the rename put another inode at the path");
    assert!(!waiter.is_finished(), "B returned while A held the lock");
    // A releases: the kernel grants B's waiting request, on the old inode.
    drop(lock_a);
    let lock_b = waiter
        .join()
        .expect("B's thread")
        .expect("B's blocking obtain");
    let at_path = id_of(&path);
    let granted = kernel_locks(&[old, new])
        .into_iter()
        .filter(|l| !l.waiting)
        .map(|l| l.id)
        .collect();
    let valid = lock_b.ensure_valid().is_ok();
    drop(lock_b);
    Outcome {
        at_path,
        old,
        granted,
        valid,
    }
}

/// OFD and `flock`: the kinds under which two held sets of one test process are two lock
/// owners to the kernel (POSIX locks of one process never wait for each other).
const KINDS: [OsLockKind; 2] = [OsLockKind::Ofd, OsLockKind::Flock];

#[test]
fn a_blocking_obtain_returns_a_lock_on_the_file_at_the_path() {
    for kind in KINDS {
        let o = replaced_while_waiting(kind, None);
        assert_eq!(
            o.granted,
            [o.at_path],
            "{kind:?}: the kernel's locks on the old {:?} and the new file once B's obtain \
             returned; stat(path) names {:?}",
            o.old,
            o.at_path
        );
        assert!(o.valid, "{kind:?}: B's ensure_valid failed");
    }
}

/// Twin: without the re-check (`Defect::BlockingNoRecheck`, the crate's `obtain_blocking`
/// without the re-check) the obtain returns the lock the kernel granted on the orphan.
#[test]
fn without_the_recheck_the_lock_is_on_the_replaced_inode() {
    for kind in KINDS {
        let o = replaced_while_waiting(kind, Some(Defect::BlockingNoRecheck));
        assert_eq!(
            o.granted,
            [o.old],
            "{kind:?}: the kernel's locks once B's obtain returned"
        );
        assert_ne!(o.old, o.at_path, "{kind:?}");
        assert!(!o.valid, "{kind:?}: ensure_valid passed on an orphan");
    }
}
