//! Processes that hold a lock for a test: this test binary re-run as a child (its `#[ignore]`d
//! helper test, started with `--ignored --exact`), or a JVM holding `FileChannel.tryLock`.
//! A holder prints [`LOCKED`] once it holds the lock and holds it until its stdin closes; a
//! process that could not lock prints something else and exits (3 for "held").
//!
//! Shared by `file_peers/java_filechannel_interop.rs` and `file_peers/foreign_lockers_match_the_model.rs`.
#![allow(dead_code)] // each test binary uses a different subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a holder prints (at the end of a line) once it holds the lock.
pub const LOCKED: &str = "lockwright-child: locked";

/// A process holding a lock. Killed (SIGKILL) and reaped on drop.
pub struct Holder {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Holder {
    /// The holder's pid.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("pid fits in i32")
    }

    /// Asks the holder to release and exit (closes its stdin), and waits for it.
    pub fn release(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for the holder");
        assert!(status.success(), "holder exited with {status}");
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a started locker ended up.
pub enum Started {
    /// It printed [`LOCKED`] and holds the lock.
    Locked(Holder),
    /// It exited without locking.
    Refused {
        /// Its exit status (3: "held by another program").
        status: ExitStatus,
        /// What it printed.
        output: String,
    },
}

/// Starts `cmd` and waits (at most 60 s: a stuck child fails the test instead of hanging it)
/// until it either prints [`LOCKED`] or exits.
pub fn start(mut cmd: Command) -> Started {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
    let stdout = child.stdout.take().expect("stdout");
    // Read stdout on a thread (it keeps draining it afterwards, so the child never blocks on
    // a full pipe).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // Once the holder is returned nobody listens; keep draining anyway, or the child
            // dies of EPIPE on its next line.
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            // libtest prints "test <name> ... " without a newline first: match the end.
            Ok(line) if line.trim_end().ends_with(LOCKED) => {
                let stdin = child.stdin.take();
                return Started::Locked(Holder { child, stdin });
            }
            Ok(line) => seen.push(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let out = child.wait_with_output().expect("reap the locker");
                return Started::Refused {
                    status: out.status,
                    output: format!(
                        "stdout: {}\nstderr: {}",
                        seen.join("\n"),
                        String::from_utf8_lossy(&out.stderr)
                    ),
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let out = child.wait_with_output().expect("reap the locker");
                panic!(
                    "{cmd:?} neither locked nor exited within 60 s:\nstdout: {}\nstderr: {}",
                    seen.join("\n"),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

/// Starts `cmd`, which must get the lock.
pub fn start_holder(cmd: Command) -> Holder {
    let shown = format!("{cmd:?}");
    match start(cmd) {
        Started::Locked(holder) => holder,
        Started::Refused { status, output } => {
            panic!("{shown} did not lock ({status}):\n{output}")
        }
    }
}

/// This test binary re-run as a child: its `#[ignore]`d helper test `child_test` alone.
pub fn self_command(child_test: &str) -> Command {
    let exe = std::env::current_exe().expect("current test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--ignored",
        "--exact",
        child_test,
        "--nocapture",
        "--test-threads=1",
    ]);
    cmd
}

// ---- Java ----

/// `javac` or `java`, from `JAVA_HOME` or the `PATH`. Panics, saying what to install, when
/// there is no JDK: these tests never pass silently without one.
pub fn java_tool(name: &str) -> String {
    let candidates = std::env::var_os("JAVA_HOME")
        .map(|h| Path::new(&h).join("bin").join(name).display().to_string())
        .into_iter()
        .chain([name.to_string()]);
    for c in candidates {
        if Command::new(&c)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return c;
        }
    }
    panic!(
        "`{name}` not found: the Java interop tests need a JDK; install it with \
         `apt-get install -y openjdk-17-jdk-headless` (.ci/run does)"
    );
}

/// Compiles `tests/java/HoldLock.java` (a `FileChannel.tryLock` holder) into a fresh
/// directory, which the caller keeps alive while it runs the class.
pub fn compile_java_holder() -> tempfile::TempDir {
    let out = tempfile::tempdir().expect("a directory for the class");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/HoldLock.java");
    let status = Command::new(java_tool("javac"))
        .arg("-d")
        .arg(out.path())
        .arg(&src)
        .status()
        .expect("run javac");
    assert!(status.success(), "javac {src:?} failed: {status}");
    out
}

/// A JVM that takes `FileChannel.tryLock()` on `lock_path` (Lucene's `NativeFSLockFactory`
/// lock: a whole-file POSIX `F_SETLK`), prints [`LOCKED`] and holds it until stdin closes; it
/// exits with 3 if `tryLock` returned null (held by another program).
pub fn java_holder(classes: &Path, lock_path: &Path) -> Command {
    let mut cmd = Command::new(java_tool("java"));
    cmd.arg("-cp").arg(classes).arg("HoldLock").arg(lock_path);
    cmd
}

/// `dir/write.lock`.
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join("write.lock")
}
