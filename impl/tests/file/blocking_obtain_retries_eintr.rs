//! `EINTR` is retried, on the real kernel: a signal whose handler was installed
//! without `SA_RESTART` interrupts a thread waiting in `fcntl(F_OFD_SETLKW)`, and the wait
//! fails with `EINTR` (signal(7), "Interruption of system calls and library functions by
//! signal handlers"). The twin shows it: the raw call, in the same setup, returns `EINTR`.
//! `obtain_blocking` must not: the gate retries the call (`gate.rs`, `retry_eintr`), so the
//! obtain keeps waiting through the signals and returns the lock once the holder lets go.
//!
//! Checked by mutation: with the `EINTR` arm of `retry_eintr` removed, this test fails with
//! "obtain_blocking returned while the lock was held: ... Interrupted system call".
//!
//! The simulated OS never returns `EINTR` (the `System` contract says the gate retries it), so
//! this is the one place the retry is checked. One test per binary: the handler is process-wide.

// Tests play the foreign code that opens and locks lock files: the gate rule (clippy.toml) is
// for the crate itself.
#![allow(clippy::disallowed_methods)]
#![cfg(target_os = "linux")]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use lockwright::file::sys::OsLockKind;
use lockwright::NativeFsLockFactory;

static DELIVERED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    DELIVERED.fetch_add(1, Ordering::SeqCst);
}

/// SIGUSR1 runs [`on_signal`]; no `SA_RESTART`, so an interrupted blocking `fcntl` fails with
/// `EINTR` instead of being restarted by the kernel.
fn install_handler_without_restart() {
    // SAFETY: a zeroed `sigaction` is valid; the handler only touches an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()),
            0,
            "sigaction: {}",
            io::Error::last_os_error()
        );
    }
}

/// An exclusive whole-file OFD lock, `cmd` = `F_OFD_SETLK` or `F_OFD_SETLKW`, no retry.
fn ofd_lock(file: &File, cmd: libc::c_int) -> io::Result<()> {
    // SAFETY: a zeroed `struct flock` is valid; we set the fields the call reads.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: `file` keeps the descriptor open; `fl` is a valid `struct flock`.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl as *mut libc::flock) };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn open(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .expect("open the lock file")
}

/// Runs `wait` on a new thread while this one holds `path`'s OFD lock, and sends SIGUSR1 to
/// that thread every 50 ms until it returns or `release_after` has passed; then releases the
/// lock and returns what `wait` returned, and whether it returned before the release.
fn interrupt_while_held<T: Send + 'static>(
    path: &Path,
    release_after: Duration,
    wait: impl FnOnce() -> T + Send + 'static,
) -> (T, bool) {
    let holder = open(path);
    ofd_lock(&holder, libc::F_OFD_SETLK).expect("the holder locks");
    let (tx, rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        // SAFETY: pthread_self has no preconditions.
        tx.send(unsafe { libc::pthread_self() }).expect("send");
        wait()
    });
    let id = rx.recv().expect("the waiter's id");
    let start = Instant::now();
    while !waiter.is_finished() && start.elapsed() < release_after {
        thread::sleep(Duration::from_millis(50));
        // SAFETY: `id` is a live thread of this process (it has not been joined).
        unsafe { libc::pthread_kill(id, libc::SIGUSR1) };
    }
    let returned_while_held = waiter.is_finished();
    drop(holder); // closing the description releases its OFD lock
    (waiter.join().expect("the waiter"), returned_while_held)
}

#[test]
fn blocking_obtain_keeps_waiting_through_eintr_ofd() {
    install_handler_without_restart();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("write.lock");

    // The twin: the raw wait is interrupted and fails with EINTR while the lock is still held.
    let raw_path = path.clone();
    let (raw, returned_while_held) =
        interrupt_while_held(&path, Duration::from_secs(10), move || {
            ofd_lock(&open(&raw_path), libc::F_OFD_SETLKW)
        });
    assert!(
        returned_while_held,
        "the raw F_OFD_SETLKW was never interrupted"
    );
    assert_eq!(
        raw.expect_err("the raw wait fails").raw_os_error(),
        Some(libc::EINTR)
    );

    // lockwright: 20 signals (one every 50 ms for a second) while it waits, then the holder
    // lets go and the obtain returns the lock.
    let before = DELIVERED.load(Ordering::SeqCst);
    let lock_dir = dir.path().to_path_buf();
    let (got, returned_while_held) =
        interrupt_while_held(&path, Duration::from_secs(1), move || {
            let factory = NativeFsLockFactory::new(OsLockKind::Ofd);
            let lock = factory.obtain_blocking_native(&lock_dir, "write.lock")?;
            lock.ensure_valid()?;
            lock.close()
        });
    let delivered = DELIVERED.load(Ordering::SeqCst) - before;
    assert!(
        !returned_while_held,
        "obtain_blocking returned while the lock was held: {got:?}"
    );
    got.expect("obtain_blocking retried EINTR and got the lock");
    assert!(delivered >= 10, "only {delivered} signals were delivered");
}
