//! Shared test helpers: an instrumented [`System`] (records calls, runs hooks, injects
//! faults) and a child-process harness that re-runs the test binary itself as the holder.
#![allow(dead_code)]
// each test binary uses a different subset
// Tests play the foreign code that touches lock files; the gate rule is for the crate.
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

use lockwright::file::sys::{FileMeta, HeldSet, OsLockKind, Probe, RealSystem, System, TryLock};
use lockwright::{LockFactory, NativeFsLockFactory, SimpleFsLockFactory};

pub const KINDS: [OsLockKind; 3] = OsLockKind::ALL;

pub type Hook = Box<dyn FnOnce() + Send>;

/// Wraps a [`System`]: logs every call by name, runs a one-shot hook just BEFORE a named call,
/// and can make a named call fail once.
pub struct Instrumented<S: System> {
    pub inner: S,
    log: Mutex<Vec<&'static str>>,
    hooks: Mutex<HashMap<&'static str, Hook>>,
    faults: Mutex<HashMap<&'static str, i32>>,
}

impl<S: System> Instrumented<S> {
    pub fn new(inner: S) -> Arc<Self> {
        Arc::new(Instrumented {
            inner,
            log: Mutex::new(Vec::new()),
            hooks: Mutex::new(HashMap::new()),
            faults: Mutex::new(HashMap::new()),
        })
    }

    /// Runs `hook` once, right before the next call named `call`.
    pub fn before(&self, call: &'static str, hook: impl FnOnce() + Send + 'static) {
        self.hooks.lock().unwrap().insert(call, Box::new(hook));
    }

    /// Makes the next call named `call` fail with OS error `errno`.
    pub fn fail(&self, call: &'static str, errno: i32) {
        self.faults.lock().unwrap().insert(call, errno);
    }

    /// Takes the call log.
    pub fn take_log(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    fn enter(&self, call: &'static str) -> io::Result<()> {
        let hook = self.hooks.lock().unwrap().remove(call);
        if let Some(hook) = hook {
            hook();
        }
        self.log.lock().unwrap().push(call);
        match self.faults.lock().unwrap().remove(call) {
            Some(errno) => Err(io::Error::from_raw_os_error(errno)),
            None => Ok(()),
        }
    }
}

impl<S: System> System for Instrumented<S> {
    type File = S::File;

    fn held_insert(&self, path: &Path) -> bool {
        let _ = self.enter("held_insert");
        self.inner.held_insert(path)
    }
    fn held_insert_wait(&self, path: &Path) -> io::Result<()> {
        self.enter("held_insert_wait")?;
        self.inner.held_insert_wait(path)
    }
    fn held_remove(&self, path: &Path) -> bool {
        let _ = self.enter("held_remove");
        self.inner.held_remove(path)
    }
    fn held_contains(&self, path: &Path) -> bool {
        let _ = self.enter("held_contains");
        self.inner.held_contains(path)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.enter("create_dir_all")?;
        self.inner.create_dir_all(dir)
    }
    fn canonicalize_dir(&self, dir: &Path) -> io::Result<PathBuf> {
        self.enter("canonicalize_dir")?;
        self.inner.canonicalize_dir(dir)
    }
    fn stat(&self, path: &Path) -> io::Result<Option<FileMeta>> {
        self.enter("stat")?;
        self.inner.stat(path)
    }
    fn open_lock_file(&self, path: &Path, mode: u32) -> io::Result<(Self::File, FileMeta)> {
        self.enter("open_lock_file")?;
        self.inner.open_lock_file(path, mode)
    }
    fn create_new_file(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<FileMeta> {
        self.enter("create_new_file")?;
        self.inner.create_new_file(path, contents, mode)
    }
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.enter("read_file")?;
        self.inner.read_file(path)
    }
    fn unlink(&self, path: &Path) -> io::Result<()> {
        self.enter("unlink")?;
        self.inner.unlink(path)
    }
    fn try_lock(&self, file: &Self::File, kind: OsLockKind) -> io::Result<TryLock> {
        self.enter("try_lock")?;
        self.inner.try_lock(file, kind)
    }
    fn lock_blocking(&self, file: &Self::File, kind: OsLockKind) -> io::Result<()> {
        self.enter("lock_blocking")?;
        self.inner.lock_blocking(file, kind)
    }
    fn unlock(&self, file: &Self::File, kind: OsLockKind) -> io::Result<()> {
        self.enter("unlock")?;
        self.inner.unlock(file, kind)
    }
    fn probe(&self, file: &Self::File, kind: OsLockKind) -> io::Result<Probe> {
        self.enter("probe")?;
        self.inner.probe(file, kind)
    }
    fn fstat(&self, file: &Self::File) -> io::Result<FileMeta> {
        self.enter("fstat")?;
        self.inner.fstat(file)
    }
    fn close(&self, file: Self::File) -> io::Result<()> {
        if let Err(e) = self.enter("close") {
            // The descriptor must still go away, as with a real failing close(2).
            let _ = self.inner.close(file);
            return Err(e);
        }
        self.inner.close(file)
    }
    fn process_id(&self) -> i32 {
        self.inner.process_id()
    }
    fn host_name(&self) -> Option<String> {
        self.inner.host_name()
    }
    fn pid_alive(&self, pid: i32) -> Option<bool> {
        self.inner.pid_alive(pid)
    }
}

/// A fresh "process": the real OS with its own held set.
pub fn process() -> RealSystem {
    RealSystem::with_held_set(Arc::new(HeldSet::new()))
}

pub fn kind_from_name(s: &str) -> OsLockKind {
    OsLockKind::from_name(s).unwrap_or_else(|| panic!("unknown lock kind {s:?}"))
}

// ---- child processes: the test binary re-run as `--exact <child test> --ignored` ----

/// The name libtest gives the test function `f` in the module whose `module_path!()` is
/// `module`: the module path without the crate's name, as `--exact` needs it now that each
/// suite is a module of one test binary (`other_process_is_excluded::child_holds_lock`).
pub fn test_name(module: &str, f: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{f}"),
        None => f.to_string(),
    }
}

pub const ENV_DIR: &str = "LOCKWRIGHT_TEST_CHILD_DIR";
pub const ENV_FACTORY: &str = "LOCKWRIGHT_TEST_CHILD_FACTORY";

/// A child process holding a lock. Killed (SIGKILL) and reaped on drop.
pub struct Holder {
    pub child: Child,
    stdin: Option<ChildStdin>,
}

impl Holder {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// SIGKILL, then reap: once `wait` returns, the kernel has closed the child's files.
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL the holder");
        self.child.wait().expect("reap the holder");
    }

    /// Asks the child to release and exit, and waits for it.
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

/// What a holder prints (at the end of a line) once it holds the lock.
pub const LOCKED: &str = "lockwright-child: locked";

/// Starts `cmd` (which must print [`LOCKED`] once it holds the lock, then hold it until
/// its stdin closes) and waits for that line.
pub fn start_holder(mut cmd: Command) -> Holder {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
    let stdout = child.stdout.take().unwrap();
    // Read stdout on a thread (it keeps draining it afterwards, so the child never blocks on
    // a full pipe) and wait for the marker with a deadline: a stuck child must fail the test,
    // not hang it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            // libtest prints "test <name> ... " without a newline first: match the end.
            Ok(line) if line.trim_end().ends_with(LOCKED) => break,
            Ok(line) => seen.push(line),
            Err(why) => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "holder {cmd:?} did not lock ({why:?}, {}):\nstdout: {}\nstderr: {}",
                    out.status,
                    seen.join("\n"),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    let stdin = child.stdin.take();
    Holder { child, stdin }
}

/// Re-runs this test binary as a holder: its `child_test` (an `#[ignore]`d test calling
/// [`child_holds_lock`]) obtains `name` in `dir` through `factory` (`ofd`, `posix`, `flock`,
/// `simple`).
pub fn child_command(child_test: &str, dir: &Path, factory: &str) -> Command {
    let exe = std::env::current_exe().expect("current test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        child_test,
        "--nocapture",
        "--ignored",
        "--test-threads=1",
    ])
    .env(ENV_DIR, dir)
    .env(ENV_FACTORY, factory);
    cmd
}

pub fn spawn_holder(child_test: &str, dir: &Path, factory: &str) -> Holder {
    start_holder(child_command(child_test, dir, factory))
}

pub fn factory_by_name(name: &str) -> Box<dyn LockFactory> {
    match name {
        "simple" => Box::new(SimpleFsLockFactory::new()),
        kind => Box::new(NativeFsLockFactory::new(kind_from_name(kind))),
    }
}

/// Body of the child test (an `#[ignore]`d test, so a plain `cargo test` never runs it): does
/// nothing unless started by [`child_command`], so `cargo test -- --ignored` (the deep runs)
/// passes over it.
pub fn child_holds_lock() {
    let Some(dir) = std::env::var_os(ENV_DIR) else {
        return;
    };
    let factory = std::env::var(ENV_FACTORY).expect("factory name");
    let factory = factory_by_name(&factory);
    match factory.try_obtain(Path::new(&dir), "write.lock") {
        Ok(lock) => {
            println!("{LOCKED}");
            // Hold until the parent closes our stdin (or kills us).
            let mut sink = String::new();
            while io::stdin()
                .read_line(&mut sink)
                .map(|n| n > 0)
                .unwrap_or(false)
            {}
            drop(lock);
        }
        Err(e) => {
            println!("failed: {e}");
            std::process::exit(3);
        }
    }
}

// ---- a verify server for VerifyingLockFactory: Lucene's protocol, echoing every byte ----

/// A [`lockwright::file::verifying::VerifyingLockFactory`] around `inner`, connected to a
/// fresh in-test verify server that sends the starting gun and echoes every byte until the
/// client hangs up (it checks nothing: the contract tests check the locks themselves).
pub fn verifying(
    inner: impl LockFactory + 'static,
) -> lockwright::file::verifying::VerifyingLockFactory {
    use lockwright::file::verifying::{VerifyingLockFactory, START};
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a verify server");
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let mut b = [0u8];
        if s.read_exact(&mut b).is_err() || s.write_all(&[START]).is_err() {
            return;
        }
        while s.read_exact(&mut b).is_ok() && s.write_all(&b).is_ok() {}
    });
    VerifyingLockFactory::connect(inner, addr, 7, std::time::Duration::from_secs(30))
        .expect("connect to the in-test verify server")
}
