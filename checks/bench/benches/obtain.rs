//! Native obtain + close, per lock kind, side by side with the raw OS floor of the same kind
//! (open + lock + unlock + close through libc, no protocol), plus the contended failure path.
//!
//! Per kind, in one group: `raw_floor` (4 syscalls); `raw_floor+fstat` (5: the least a lock
//! that remembers its inode needs); `raw_floor+lstat+fstat` (6: the syscalls native makes in
//! the steady state); `native` (a factory that has obtained this canonical directory before:
//! the steady state); `native_first` (a new factory each time: resolves the directory, the
//! cost of the first obtain or of a `dir` given through a symlink).
//!
//! After criterion's report, a paired pass prints the same floor and native operations
//! measured alternately (see [`paired`]): on a shared machine that ratio is the one to trust.
//!
//! `cargo bench -p lockwright-bench --bench obtain` (warm-up 1 s, measurement 3 s per benchmark,
//! set below, so the whole run stays short on a shared machine).

// The raw floor calls fcntl/flock directly, which the crate's clippy gate allows only in
// src/file/gate.rs: this file measures exactly that floor.
#![allow(clippy::disallowed_methods)]

use std::ffi::CString;
use std::hint::black_box;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use lockwright::file::sys::OsLockKind;
use lockwright::{LockFactory, NativeFsLockFactory};

const KINDS: [OsLockKind; 3] = OsLockKind::ALL;

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
            _ => {
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

/// `lstat`, as native's check of the lock path.
fn raw_lstat(path: &CString) {
    // SAFETY: valid path; `st` is written by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::lstat(path.as_ptr(), &mut st) }, 0);
}

/// `fstat`, as native's read of the opened file's `(dev, ino)`.
fn raw_fstat(fd: libc::c_int) {
    // SAFETY: fd is open; `st` is written by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
}

/// The floor plus the observations a correct native obtain cannot skip.
fn raw_obtain_close_checked(path: &CString, kind: OsLockKind, lstat: bool) {
    if lstat {
        raw_lstat(path);
    }
    let fd = raw_open(path);
    raw_fstat(fd);
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
        g.bench_function("raw_floor+fstat", |b| {
            b.iter(|| raw_obtain_close_checked(black_box(&lock_path), kind, false))
        });
        g.bench_function("raw_floor+lstat+fstat", |b| {
            b.iter(|| raw_obtain_close_checked(black_box(&lock_path), kind, true))
        });
        g.bench_function("native", |b| {
            b.iter(|| {
                let lock = factory
                    .try_obtain(black_box(&dir_path), "write.lock")
                    .unwrap();
                lock.close().unwrap();
            })
        });
        g.bench_function("native_first", |b| {
            b.iter(|| {
                let fresh = NativeFsLockFactory::new(kind);
                let lock = fresh
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

/// Criterion measures one benchmark after the other, so on a shared machine the load can
/// change between the floor and native. This pass (printed after criterion's) alternates them
/// batch by batch (16 operations per batch, the order rotated every round) and compares the
/// median batch of each: the ratio is then taken under the same load.
fn paired(rounds: usize) {
    const BATCH: u32 = 16;
    println!(
        "\npaired: {rounds} rounds of {BATCH} operations each, alternating; median per operation"
    );
    println!(
        "| kind | raw_floor | raw_floor+fstat | raw_floor+lstat+fstat | native | native / floor |"
    );
    println!("|---|---|---|---|---|---|");
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let dir_path = dir.path().canonicalize().unwrap();
        let lock_path = cpath(&dir_path.join("write.lock"));
        let factory = NativeFsLockFactory::new(kind);
        let native = || {
            let lock = factory
                .try_obtain(black_box(&dir_path), "write.lock")
                .unwrap();
            lock.close().unwrap();
        };
        native();
        let mut times: [Vec<Duration>; 4] = Default::default();
        for round in 0..rounds {
            for j in 0..4 {
                let which = (round + j) % 4;
                let start = Instant::now();
                for _ in 0..BATCH {
                    match which {
                        0 => raw_obtain_close(black_box(&lock_path), kind),
                        1 => raw_obtain_close_checked(black_box(&lock_path), kind, false),
                        2 => raw_obtain_close_checked(black_box(&lock_path), kind, true),
                        _ => native(),
                    }
                }
                times[which].push(start.elapsed() / BATCH);
            }
        }
        let [floor, fstat, checked, native] = times.map(|mut t| {
            t.sort_unstable();
            t[t.len() / 2]
        });
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "| {} | {:.2} µs | {:.2} µs | {:.2} µs | {:.2} µs | {:.2}× |",
            kind.name(),
            us(floor),
            us(fstat),
            us(checked),
            us(native),
            us(native) / us(floor)
        );
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

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // Not in `cargo test --benches` (criterion's quick test mode) nor when only listing.
    let quick = std::env::args().any(|a| a == "--test" || a == "--list");
    if !quick {
        paired(2_000);
    }
}
