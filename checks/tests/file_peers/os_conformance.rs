//! OS conformance: the model's OS semantics (`lockwright_model::file::kernel`) against the real Linux
//! kernel.
//!
//! proptest generates random sequences of open, lock, unlock, close, probe and fstat by real
//! child processes (this test binary re-executed in child mode, reading commands from a pipe),
//! plus unlink, re-create (rename a fresh file over the path), exclusive create, foreign
//! open-close and crash (SIGKILL of a child, which is then replaced by a fresh one) on a real
//! temp directory, for `flock`, POSIX `fcntl(F_SETLK)` and OFD `fcntl(F_OFD_SETLK)`, called
//! through libc directly (this suite checks the model's semantics, not lockwright's code).
//! Each step's real outcome is compared with `Os`'s prediction, and after every step the
//! whole file picture is compared: which descriptors share an inode with each other and with
//! the path, and every descriptor's link count.
//!
//! Only exclusive locks are generated: the kernel module (`model/src/file/kernel.rs`) models
//! exclusive whole-file locks only (a failed non-blocking `flock` upgrade from shared to
//! exclusive drops the shared lock, which the model does not have).

use crate::common;

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use lockwright_model::file::kernel::{
    Desc, FsError, LockKind, OpenMode, Os, Pid, ProbeResult, TryLockResult,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const CHILD_ENV: &str = "LOCKWRIGHT_CONFORMANCE_CHILD";
const PROCESSES: u8 = 3;
const SLOTS: u8 = 2;

// ---------------------------------------------------------------------------------------------
// Child mode: execute commands on real descriptors.
// ---------------------------------------------------------------------------------------------

/// Not a test of its own: the entry point of child processes.
#[test]
#[ignore = "child-process helper: the conformance tests run it with --ignored --exact"]
fn conformance_child() {
    assert!(
        std::env::var_os(CHILD_ENV).is_some(),
        "a child-process helper: run only with {CHILD_ENV} set"
    );
    let mut fds: BTreeMap<u8, File> = BTreeMap::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.expect("read command");
        let w: Vec<&str> = line.split_whitespace().collect();
        let reply = match w.as_slice() {
            ["open", slot, path] => match OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .custom_flags(libc::O_CLOEXEC)
                .open(path)
            {
                Ok(f) => {
                    let ino = f.metadata().expect("fstat").ino();
                    fds.insert(slot.parse().unwrap(), f);
                    format!("ok {ino}")
                }
                Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
            },
            ["lock", slot, kind] => lock(&fds[&slot.parse().unwrap()], kind),
            ["unlock", slot, kind] => unlock(&fds[&slot.parse().unwrap()], kind),
            ["probe", slot, kind] => probe(&fds[&slot.parse().unwrap()], kind),
            ["fstat", slot] => {
                let m = fds[&slot.parse().unwrap()].metadata().expect("fstat");
                format!("{} {}", m.ino(), m.nlink())
            }
            ["close", slot] => {
                fds.remove(&slot.parse().unwrap());
                "ok".to_owned()
            }
            ["foreign", path] => match File::open(path) {
                Ok(f) => {
                    drop(f);
                    "ok".to_owned()
                }
                Err(e) => format!("err {}", e.raw_os_error().unwrap_or(0)),
            },
            _ => format!("bad command {line:?}"),
        };
        writeln!(out, "R {reply}").expect("reply");
        out.flush().expect("flush");
    }
    std::process::exit(0);
}

fn whole_file(l_type: libc::c_int) -> libc::flock {
    // SAFETY: plain old data; all-zero is valid.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = l_type as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn lock(f: &File, kind: &str) -> String {
    let fd = f.as_raw_fd();
    // SAFETY: fd is open; `fl` outlives the call.
    let rc = unsafe {
        match kind {
            "flock" => libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB),
            "posix" => libc::fcntl(fd, libc::F_SETLK, &whole_file(libc::F_WRLCK)),
            _ => libc::fcntl(fd, libc::F_OFD_SETLK, &whole_file(libc::F_WRLCK)),
        }
    };
    if rc == 0 {
        return "acquired".to_owned();
    }
    match errno() {
        e if e == libc::EWOULDBLOCK || e == libc::EAGAIN || e == libc::EACCES => {
            "wouldblock".to_owned()
        }
        e => format!("err {e}"),
    }
}

fn unlock(f: &File, kind: &str) -> String {
    let fd = f.as_raw_fd();
    // SAFETY: as above.
    let rc = unsafe {
        match kind {
            "flock" => libc::flock(fd, libc::LOCK_UN),
            "posix" => libc::fcntl(fd, libc::F_SETLK, &whole_file(libc::F_UNLCK)),
            _ => libc::fcntl(fd, libc::F_OFD_SETLK, &whole_file(libc::F_UNLCK)),
        }
    };
    if rc == 0 {
        "ok".to_owned()
    } else {
        format!("err {}", errno())
    }
}

fn probe(f: &File, kind: &str) -> String {
    let mut fl = whole_file(libc::F_WRLCK);
    let cmd = if kind == "posix" {
        libc::F_GETLK
    } else {
        libc::F_OFD_GETLK
    };
    // SAFETY: fd open; `fl` is a valid, exclusively borrowed flock struct.
    let rc = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &mut fl) };
    if rc != 0 {
        return format!("err {}", errno());
    }
    if i32::from(fl.l_type) == libc::F_UNLCK {
        "none".to_owned()
    } else {
        format!("conflict {}", fl.l_pid)
    }
}

// ---------------------------------------------------------------------------------------------
// Parent: real processes, the model, and the comparison.
// ---------------------------------------------------------------------------------------------

use common::ChildProc as Proc;

/// A step of a generated case.
#[derive(Clone, Copy, Debug)]
enum Cmd {
    Open(Pid, u8),
    Lock(Pid, u8, LockKind),
    Unlock(Pid, u8, LockKind),
    Probe(Pid, u8, LockKind),
    Close(Pid, u8),
    Unlink,
    Recreate,
    CreateExclusive,
    Foreign(Pid),
    Crash(Pid),
}

fn kind_name(k: LockKind) -> &'static str {
    match k {
        LockKind::Flock => "flock",
        LockKind::Posix => "posix",
        LockKind::Ofd => "ofd",
        LockKind::NfsFlock => unreachable!("not generated: needs an NFS mount"),
    }
}

struct World {
    dir: tempfile::TempDir,
    procs: Vec<Option<Proc>>,
    os: Os,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().expect("tempdir"),
            procs: (0..PROCESSES)
                .map(|_| {
                    Some(Proc::spawn(
                        &common::test_name(module_path!(), "conformance_child"),
                        CHILD_ENV,
                        "1",
                    ))
                })
                .collect(),
            os: Os::new(),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("write.lock")
    }

    fn proc(&mut self, p: Pid) -> &mut Proc {
        self.procs[usize::from(p)].as_mut().expect("live")
    }

    fn model_pid_of(&self, real: i32) -> Option<Pid> {
        self.procs
            .iter()
            .position(|p| p.as_ref().is_some_and(|p| p.pid() == real))
            .map(|i| i as Pid)
    }

    fn is_open(&self, p: Pid, s: u8) -> bool {
        self.os.desc_inode(Desc { pid: p, slot: s }).is_some()
    }

    /// Runs one step on both sides; `Err` describes a disagreement. Steps that do not apply
    /// (locking a closed slot, opening an open one) are skipped on both sides.
    fn step(&mut self, cmd: Cmd) -> Result<(), String> {
        let path = self.path();
        let path_s = path.to_str().expect("utf-8 temp path").to_owned();
        match cmd {
            Cmd::Open(p, s) => {
                if self.is_open(p, s) {
                    return Ok(());
                }
                let model = self.os.open(Desc { pid: p, slot: s }, OpenMode::Create);
                let real = self.proc(p).cmd(&format!("open {s} {path_s}"));
                if model.is_err() || !real.starts_with("ok ") {
                    return Err(format!("open: model {model:?}, kernel {real}"));
                }
            }
            Cmd::Lock(p, s, k) => {
                if !self.is_open(p, s) {
                    return Ok(());
                }
                let model = self.os.try_lock(Desc { pid: p, slot: s }, k);
                let real = self.proc(p).cmd(&format!("lock {s} {}", kind_name(k)));
                let expect = match model {
                    TryLockResult::Acquired => "acquired",
                    TryLockResult::WouldBlock => "wouldblock",
                };
                if real != expect {
                    return Err(format!(
                        "{} lock: model {model:?}, kernel {real}",
                        kind_name(k)
                    ));
                }
            }
            Cmd::Unlock(p, s, k) => {
                if !self.is_open(p, s) {
                    return Ok(());
                }
                self.os.unlock(Desc { pid: p, slot: s }, k);
                let real = self.proc(p).cmd(&format!("unlock {s} {}", kind_name(k)));
                if real != "ok" {
                    return Err(format!("{} unlock: kernel {real}", kind_name(k)));
                }
            }
            Cmd::Probe(p, s, k) => {
                if !self.is_open(p, s) || k == LockKind::Flock {
                    return Ok(());
                }
                let model = self.os.probe(Desc { pid: p, slot: s }, k);
                let real = self.proc(p).cmd(&format!("probe {s} {}", kind_name(k)));
                let real_r = match real.strip_prefix("conflict ") {
                    None if real == "none" => ProbeResult::NoConflict,
                    None => return Err(format!("probe: kernel {real}")),
                    Some(pid) => {
                        let pid: i32 = pid.parse().map_err(|_| format!("probe: kernel {real}"))?;
                        ProbeResult::Conflict {
                            pid: if pid == -1 {
                                None
                            } else {
                                Some(
                                    self.model_pid_of(pid)
                                        .ok_or(format!("probe: unknown pid {pid}"))?,
                                )
                            },
                        }
                    }
                };
                if real_r != model {
                    return Err(format!(
                        "{} probe: model {model:?}, kernel {real_r:?} ({real})",
                        kind_name(k)
                    ));
                }
            }
            Cmd::Close(p, s) => {
                if !self.is_open(p, s) {
                    return Ok(());
                }
                self.os.close(Desc { pid: p, slot: s });
                let real = self.proc(p).cmd(&format!("close {s}"));
                if real != "ok" {
                    return Err(format!("close: kernel {real}"));
                }
            }
            Cmd::Unlink => {
                let model = self.os.unlink();
                let real = std::fs::remove_file(&path);
                if model.is_ok() != real.is_ok() {
                    return Err(format!("unlink: model {model:?}, kernel {real:?}"));
                }
            }
            Cmd::Recreate => {
                self.os.replace();
                let tmp = self.dir.path().join("write.lock.tmp");
                std::fs::write(&tmp, b"").map_err(|e| e.to_string())?;
                std::fs::rename(&tmp, &path).map_err(|e| e.to_string())?;
            }
            Cmd::CreateExclusive => {
                let model = self.os.create_exclusive();
                let real = OpenOptions::new().write(true).create_new(true).open(&path);
                let agree = match (&model, &real) {
                    (Ok(_), Ok(_)) => true,
                    (Err(FsError::AlreadyExists), Err(e)) => {
                        e.kind() == std::io::ErrorKind::AlreadyExists
                    }
                    _ => false,
                };
                if !agree {
                    return Err(format!(
                        "create exclusive: model {model:?}, kernel {real:?}"
                    ));
                }
            }
            Cmd::Foreign(p) => {
                self.os.foreign_open_close(p);
                let real = self.proc(p).cmd(&format!("foreign {path_s}"));
                let expect = if self.os.path_inode().is_some() {
                    "ok"
                } else {
                    "err 2"
                };
                if real != expect {
                    return Err(format!(
                        "foreign open-close: expected {expect}, kernel {real}"
                    ));
                }
            }
            Cmd::Crash(p) => {
                self.os.crash(p);
                self.procs[usize::from(p)].take().expect("live").kill();
                self.procs[usize::from(p)] = Some(Proc::spawn(
                    &common::test_name(module_path!(), "conformance_child"),
                    CHILD_ENV,
                    "1",
                ));
            }
        }
        self.compare_files()
    }

    /// After every step: the inode picture (which descriptors and the path share inodes) and
    /// link counts agree. Real inode numbers may be reused once a file is gone, model
    /// generations are not, so the check is that model inode ↔ real inode is a bijection over
    /// what is live now.
    fn compare_files(&mut self) -> Result<(), String> {
        let mut pairs: Vec<(String, u8, u64)> = Vec::new();
        let descs: Vec<(Desc, u8)> = self.os.descs().collect();
        for (d, inode) in descs {
            let st = self.os.fstat(d).expect("open");
            let real = self.proc(d.pid).cmd(&format!("fstat {}", d.slot));
            let mut it = real
                .split_whitespace()
                .map(|x| x.parse::<u64>().unwrap_or(u64::MAX));
            let (ino, nlink) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
            if nlink != u64::from(st.nlink) {
                return Err(format!(
                    "fstat {d:?}: model nlink {}, kernel {nlink}",
                    st.nlink
                ));
            }
            pairs.push((format!("{d:?}"), inode, ino));
        }
        let real_path = std::fs::metadata(self.path()).ok().map(|m| m.ino());
        match (self.os.path_inode(), real_path) {
            (Some(m), Some(r)) => pairs.push(("path".to_owned(), m, r)),
            (None, None) => {}
            (m, r) => return Err(format!("stat(path): model {m:?}, kernel {r:?}")),
        }
        let mut fwd: BTreeMap<u8, u64> = BTreeMap::new();
        let mut back: BTreeMap<u64, u8> = BTreeMap::new();
        for (who, m, r) in &pairs {
            if *fwd.entry(*m).or_insert(*r) != *r || *back.entry(*r).or_insert(*m) != *m {
                return Err(format!(
                    "inode picture differs at {who}: model/kernel pairs {pairs:?}"
                ));
            }
        }
        Ok(())
    }

    fn finish(self) {
        for p in self.procs.into_iter().flatten() {
            p.kill();
        }
    }
}

fn run_case(cmds: &[Cmd]) -> Result<(), TestCaseError> {
    let mut w = World::new();
    let mut done = Vec::new();
    for &c in cmds {
        done.push(c);
        if let Err(e) = w.step(c) {
            w.finish();
            return Err(TestCaseError::fail(format!("{e}\nafter {done:?}")));
        }
    }
    w.finish();
    Ok(())
}

fn cmd_strategy(kinds: Vec<LockKind>) -> impl Strategy<Value = Cmd> {
    let p = 0..PROCESSES;
    let s = 0..SLOTS;
    let k = proptest::sample::select(kinds);
    prop_oneof![
        4 => (p.clone(), s.clone()).prop_map(|(p, s)| Cmd::Open(p, s)),
        5 => (p.clone(), s.clone(), k.clone()).prop_map(|(p, s, k)| Cmd::Lock(p, s, k)),
        2 => (p.clone(), s.clone(), k.clone()).prop_map(|(p, s, k)| Cmd::Unlock(p, s, k)),
        2 => (p.clone(), s.clone(), k).prop_map(|(p, s, k)| Cmd::Probe(p, s, k)),
        3 => (p.clone(), s).prop_map(|(p, s)| Cmd::Close(p, s)),
        1 => Just(Cmd::Unlink),
        1 => Just(Cmd::Recreate),
        1 => Just(Cmd::CreateExclusive),
        1 => p.clone().prop_map(Cmd::Foreign),
        1 => p.prop_map(Cmd::Crash),
    ]
}

/// Cases per test: each case spawns 3 child processes (plus one per crash) and runs up to 40
/// steps with a full picture comparison after each; ≈ 15-30 ms a case here. 48 cases × 4
/// tests ≈ 5 s. `LOCKWRIGHT_DEEP=1`: 2,000 cases each.
fn config() -> ProptestConfig {
    let deep = std::env::var_os("LOCKWRIGHT_DEEP").is_some_and(|v| v == "1");
    ProptestConfig {
        cases: if deep { 2_000 } else { 48 },
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/os_conformance.txt",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn flock_matches_the_model(cmds in proptest::collection::vec(cmd_strategy(vec![LockKind::Flock]), 1..40)) {
        run_case(&cmds)?;
    }

    #[test]
    fn posix_matches_the_model(cmds in proptest::collection::vec(cmd_strategy(vec![LockKind::Posix]), 1..40)) {
        run_case(&cmds)?;
    }

    #[test]
    fn ofd_matches_the_model(cmds in proptest::collection::vec(cmd_strategy(vec![LockKind::Ofd]), 1..40)) {
        run_case(&cmds)?;
    }

    /// All three kinds on the same file: the cross-kind conflict table.
    #[test]
    fn mixed_kinds_match_the_model(cmds in proptest::collection::vec(
        cmd_strategy(vec![LockKind::Flock, LockKind::Posix, LockKind::Ofd]), 1..40)) {
        run_case(&cmds)?;
    }
}

/// Pinned sequences for the rows of the table in `model/src/file/kernel.rs` that random cases
/// hit rarely.
#[test]
fn pinned_table_rows() {
    use Cmd::*;
    use LockKind::*;
    let cases: &[&[Cmd]] = &[
        // 2nd open + lock in the same process: POSIX silently succeeds, flock/OFD conflict.
        &[Open(0, 0), Open(0, 1), Lock(0, 0, Posix), Lock(0, 1, Posix)],
        &[Open(0, 0), Open(0, 1), Lock(0, 0, Flock), Lock(0, 1, Flock)],
        &[Open(0, 0), Open(0, 1), Lock(0, 0, Ofd), Lock(0, 1, Ofd)],
        // Closing another fd drops the process's POSIX lock (LUCENE-5738's mechanism).
        &[
            Open(0, 0),
            Open(0, 1),
            Lock(0, 0, Posix),
            Close(0, 1),
            Open(1, 0),
            Lock(1, 0, Posix),
        ],
        // OFD vs POSIX conflict even within one process, and on the same descriptor.
        &[
            Open(0, 0),
            Open(0, 1),
            Lock(0, 0, Posix),
            Lock(0, 1, Ofd),
            Probe(0, 1, Ofd),
        ],
        &[Open(0, 0), Lock(0, 0, Posix), Lock(0, 0, Ofd)],
        // Unlink + re-create: a newcomer locks a fresh inode.
        &[
            Open(0, 0),
            Lock(0, 0, Ofd),
            Unlink,
            Open(1, 0),
            Lock(1, 0, Ofd),
        ],
        &[
            Open(0, 0),
            Lock(0, 0, Posix),
            Recreate,
            Open(1, 0),
            Lock(1, 0, Posix),
            Probe(0, 0, Posix),
        ],
        // Crash releases; foreign open-close drops only POSIX.
        &[
            Open(0, 0),
            Lock(0, 0, Posix),
            Crash(0),
            Open(1, 0),
            Lock(1, 0, Posix),
        ],
        &[
            Open(0, 0),
            Lock(0, 0, Posix),
            Foreign(0),
            Open(1, 0),
            Lock(1, 0, Posix),
            Probe(0, 0, Posix),
        ],
        &[
            Open(0, 0),
            Lock(0, 0, Ofd),
            Foreign(0),
            Open(1, 0),
            Lock(1, 0, Ofd),
            Probe(1, 0, Ofd),
        ],
    ];
    for case in cases {
        if let Err(e) = run_case(case) {
            panic!("{case:?}: {e}");
        }
    }
}
