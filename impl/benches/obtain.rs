//! Native obtain + close, per lock kind, side by side with the raw OS floor of the same kind
//! (open + lock + unlock + close through libc, no protocol), plus the contended failure path.
//!
//! `cargo bench -p lockwright --bench obtain` (warm-up 1 s, measurement 3 s per benchmark,
//! set below, so the whole run stays short on a shared machine).

// The raw floor calls fcntl/flock directly, which the crate's clippy gate allows only in
// src/os.rs: this file measures exactly that floor.
#![allow(clippy::disallowed_methods)]

use std::ffi::CString;
use std::hint::black_box;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use lockwright::sys::OsLockKind;
use lockwright::{LockFactory, NativeFsLockFactory};

const KINDS: [OsLockKind; 3] = [OsLockKind::Ofd, OsLockKind::Posix, OsLockKind::Flock];

fn whole_file(l_type: libc::c_int) -> libc::flock {
    // SAFETY: plain old data; zero is valid.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = l_type as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl
}

/// Non-blocking exclusive lock (`true`) or release (`false`); returns whether it succeeded.
fn raw_lock(fd: libc::c_int, kind: OsLockKind, lock: bool) -> bool {
    // SAFETY: fd is open; the flock struct is valid for the call.
    unsafe {
        match kind {
            OsLockKind::Flock => {
                libc::flock(
                    fd,
                    if lock {
                        libc::LOCK_EX | libc::LOCK_NB
                    } else {
                        libc::LOCK_UN
                    },
                ) == 0
            }
            OsLockKind::Ofd | OsLockKind::Posix => {
                let cmd = if kind == OsLockKind::Ofd {
                    libc::F_OFD_SETLK
                } else {
                    libc::F_SETLK
                };
                let mut fl = whole_file(if lock { libc::F_WRLCK } else { libc::F_UNLCK });
                libc::fcntl(fd, cmd, &mut fl as *mut libc::flock) == 0
            }
        }
    }
}

fn raw_open(path: &CString) -> libc::c_int {
    // SAFETY: valid NUL-terminated path.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644,
        )
    };
    assert!(fd >= 0, "open failed: {}", std::io::Error::last_os_error());
    fd
}

fn raw_close(fd: libc::c_int) {
    // SAFETY: we own fd.
    unsafe { libc::close(fd) };
}

/// The floor: what any correct lock needs at minimum.
fn raw_obtain_close(path: &CString, kind: OsLockKind) {
    let fd = raw_open(path);
    assert!(raw_lock(fd, kind, true));
    assert!(raw_lock(fd, kind, false));
    raw_close(fd);
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// Holds a lock that conflicts with `kind` from a separate descriptor of this process: an OFD
/// lock (conflicts with OFD and with POSIX locks, even this process's) or a flock.
fn hold_conflicting(path: &CString, kind: OsLockKind) -> libc::c_int {
    let fd = raw_open(path);
    let holder_kind = if kind == OsLockKind::Flock {
        OsLockKind::Flock
    } else {
        OsLockKind::Ofd
    };
    assert!(raw_lock(fd, holder_kind, true));
    fd
}

fn bench_obtain(c: &mut Criterion) {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let dir_path = dir.path().canonicalize().unwrap();
        let lock_path = cpath(&dir_path.join("write.lock"));
        let factory = NativeFsLockFactory::new(kind);

        let mut g = c.benchmark_group(format!("obtain_close/{}", kind.name()));
        g.bench_function("raw_floor", |b| {
            b.iter(|| raw_obtain_close(black_box(&lock_path), kind))
        });
        g.bench_function("native", |b| {
            b.iter(|| {
                let mut lock = factory
                    .try_obtain(black_box(&dir_path), "write.lock")
                    .unwrap();
                lock.close().unwrap();
            })
        });
        g.finish();

        let holder = hold_conflicting(&lock_path, kind);
        let mut g = c.benchmark_group(format!("contended/{}", kind.name()));
        g.bench_function("raw_floor", |b| {
            b.iter(|| {
                let fd = raw_open(black_box(&lock_path));
                assert!(!raw_lock(fd, kind, true));
                raw_close(fd);
            })
        });
        g.bench_function("native", |b| {
            b.iter(|| {
                let err = factory
                    .try_obtain(black_box(&dir_path), "write.lock")
                    .unwrap_err();
                assert!(err.is_held());
            })
        });
        g.finish();
        raw_close(holder);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);
    targets = bench_obtain
}
criterion_main!(benches);
