//! lockwright's three kinds against the locks other programs take, across real processes, each
//! outcome compared with the model's conflict matrix (`lockwright_model::file::kernel`):
//!
//! - fs4's `FileExt::try_lock` (what most Rust programs lock with; also what lockwright's
//!   `Flock` calls) and std's `File::try_lock` (Rust ≥ 1.89; Cargo locks the same way): both
//!   `flock(2)`, the model's `Flock`;
//! - Java's `FileChannel.tryLock` (Lucene's `NativeFSLockFactory`): a whole-file POSIX
//!   `F_SETLK`, the model's `Posix`.
//!
//! Both directions: the foreign program holds and lockwright tries (every kind), and lockwright
//! holds (every kind) and the foreign program tries. The expected outcome of every pair is what
//! the model's kernel answers for a lock of the first kind held by one process and a fresh
//! attempt of the second kind by another, so the model and the real kernel are checked against
//! each other here, for exactly the locks users mix. The expected matrix: `flock` conflicts
//! only with `flock`; POSIX and OFD conflict with each other, not with `flock` (so a Java
//! writer and an fs4/std/Cargo writer never see each other, whatever lockwright does).
//!
//! The Java half needs a JDK and fails, saying to install `openjdk-17-jdk-headless`, without
//! one.

use crate::holders;

use std::io::BufRead;
use std::path::Path;

use holders::{Holder, Started};
use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind};
use lockwright_model::file::kernel::{Desc, LockKind, OpenMode, Os, TryLockResult};

// ---------------------------------------------------------------------------------------------
// The child: this test binary, re-run with `--ignored --exact child_holds_lock`.
// ---------------------------------------------------------------------------------------------

/// The directory whose `write.lock` the child locks.
const ENV_DIR: &str = "LOCKWRIGHT_FOREIGN_DIR";
/// How: `fs4`, `std`, or a lockwright kind (`ofd`, `posix`, `flock`).
const ENV_HOW: &str = "LOCKWRIGHT_FOREIGN_HOW";

#[test]
#[ignore = "child-process helper: run by the other tests in this file (--ignored --exact), not directly"]
fn child_holds_lock() {
    // Started without the environment (`cargo test -- --ignored` runs every ignored test):
    // nothing to hold.
    let Some(dir) = std::env::var_os(ENV_DIR) else {
        return;
    };
    let dir = Path::new(&dir);
    let how = std::env::var(ENV_HOW).expect("how to lock");
    // Whatever holds the lock must stay alive until stdin closes.
    let _held: Box<dyn std::any::Any> = match how.as_str() {
        "fs4" | "std" => {
            let file = open_rw(&holders::lock_path(dir));
            if foreign_try_lock(&how, &file) == TryLockResult::WouldBlock {
                println!("held by another process");
                std::process::exit(3);
            }
            Box::new(file)
        }
        kind => {
            let kind = OsLockKind::from_name(kind).expect("a lockwright kind");
            match NativeFsLockFactory::new(kind).try_obtain(dir, "write.lock") {
                Ok(lock) => Box::new(lock),
                Err(e) => {
                    println!("failed: {e}");
                    std::process::exit(3);
                }
            }
        }
    };
    println!("{}", holders::LOCKED);
    let mut sink = String::new();
    while std::io::stdin()
        .lock()
        .read_line(&mut sink)
        .is_ok_and(|n| n > 0)
    {}
}

/// The lock file, opened as the foreign programs open it: read-write, created if absent.
fn open_rw(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

/// One non-blocking exclusive attempt, the way fs4 or std takes it. Both are called fully
/// qualified: std's inherent `File::try_lock` would shadow fs4's trait method.
fn foreign_try_lock(how: &str, file: &std::fs::File) -> TryLockResult {
    match how {
        "fs4" => match fs4::FileExt::try_lock(file) {
            Ok(()) => TryLockResult::Acquired,
            Err(fs4::TryLockError::WouldBlock) => TryLockResult::WouldBlock,
            Err(fs4::TryLockError::Error(e)) => panic!("fs4 try_lock: {e}"),
        },
        "std" => match std::fs::File::try_lock(file) {
            Ok(()) => TryLockResult::Acquired,
            Err(std::fs::TryLockError::WouldBlock) => TryLockResult::WouldBlock,
            Err(std::fs::TryLockError::Error(e)) => panic!("std try_lock: {e}"),
        },
        other => panic!("unknown foreign locker {other:?}"),
    }
}

fn self_holder(dir: &Path, how: &str) -> Holder {
    let mut cmd = holders::self_command(&crate::common::test_name(
        module_path!(),
        "child_holds_lock",
    ));
    cmd.env(ENV_DIR, dir).env(ENV_HOW, how);
    holders::start_holder(cmd)
}

// ---------------------------------------------------------------------------------------------
// The model's answer.
// ---------------------------------------------------------------------------------------------

/// What the model's kernel answers when process 0 holds a `held` lock on the file and process
/// 1 makes a fresh non-blocking attempt of kind `wanted`.
fn model(held: LockKind, wanted: LockKind) -> TryLockResult {
    let mut os = Os::new();
    let holder = Desc { pid: 0, slot: 0 };
    let newcomer = Desc { pid: 1, slot: 0 };
    os.open(holder, OpenMode::Create)
        .expect("create the lock file");
    assert_eq!(os.try_lock(holder, held), TryLockResult::Acquired);
    os.open(newcomer, OpenMode::Create)
        .expect("open the lock file");
    os.try_lock(newcomer, wanted)
}

/// The model's kind for a lockwright kind on a local filesystem.
fn model_kind(kind: OsLockKind) -> LockKind {
    match kind {
        OsLockKind::Ofd => LockKind::Ofd,
        OsLockKind::Posix => LockKind::Posix,
        OsLockKind::Flock => LockKind::Flock,
        other => panic!("no model kind for {other:?}"),
    }
}

/// The foreign lockers and the model kind each one's lock is.
const FLOCKERS: [(&str, LockKind); 2] = [("fs4", LockKind::Flock), ("std", LockKind::Flock)];

/// One lockwright attempt, as the model names its outcome.
fn lockwright_attempt(dir: &Path, kind: OsLockKind) -> TryLockResult {
    match NativeFsLockFactory::new(kind).try_obtain(dir, "write.lock") {
        Ok(lock) => {
            lock.close().expect("release");
            TryLockResult::Acquired
        }
        Err(LockError::HeldByOtherProcess { .. }) => TryLockResult::WouldBlock,
        Err(e) => panic!("{kind:?}: neither obtained nor held by another process: {e:?}"),
    }
}

/// Every (holder, newcomer) outcome, with the model's answer, and a check that the table is
/// not vacuous (it has both outcomes).
struct Table(Vec<(String, TryLockResult, TryLockResult)>);

impl Table {
    fn new() -> Self {
        Table(Vec::new())
    }

    fn add(&mut self, pair: String, real: TryLockResult, model: TryLockResult) {
        self.0.push((pair, real, model));
    }

    fn check(self) {
        let report: Vec<String> = self
            .0
            .iter()
            .map(|(pair, real, model)| format!("{pair}: real {real:?}, model {model:?}"))
            .collect();
        let report = report.join("\n");
        for (pair, real, model) in &self.0 {
            assert_eq!(real, model, "{pair} differs from the model:\n{report}");
        }
        for want in [TryLockResult::Acquired, TryLockResult::WouldBlock] {
            assert!(
                self.0.iter().any(|(_, real, _)| *real == want),
                "no pair was {want:?}: the table proves nothing:\n{report}"
            );
        }
        println!("{report}");
    }
}

// ---------------------------------------------------------------------------------------------
// fs4 and std
// ---------------------------------------------------------------------------------------------

#[test]
fn fs4_and_std_holders_against_every_lockwright_kind_match_the_model() {
    let mut table = Table::new();
    for (who, foreign) in FLOCKERS {
        let dir = tempfile::tempdir().unwrap();
        let holder = self_holder(dir.path(), who);
        for kind in OsLockKind::ALL {
            table.add(
                format!("{who} holds, lockwright {} tries", kind.name()),
                lockwright_attempt(dir.path(), kind),
                model(foreign, model_kind(kind)),
            );
        }
        holder.release();
    }
    table.check();
}

#[test]
fn every_lockwright_kind_against_fs4_and_std_matches_the_model() {
    let mut table = Table::new();
    for kind in OsLockKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        let holder = self_holder(dir.path(), kind.name());
        for (who, foreign) in FLOCKERS {
            // A fresh descriptor of this (other) process: fs4/std lock it; dropping it unlocks.
            let file = open_rw(&holders::lock_path(dir.path()));
            table.add(
                format!("lockwright {} holds, {who} tries", kind.name()),
                foreign_try_lock(who, &file),
                model(model_kind(kind), foreign),
            );
        }
        holder.release();
    }
    table.check();
}

// ---------------------------------------------------------------------------------------------
// Java's FileChannel.tryLock
// ---------------------------------------------------------------------------------------------

#[test]
fn java_holder_against_every_lockwright_kind_matches_the_model() {
    let classes = holders::compile_java_holder();
    let dir = tempfile::tempdir().unwrap();
    let java = holders::start_holder(holders::java_holder(
        classes.path(),
        &holders::lock_path(dir.path()),
    ));
    let mut table = Table::new();
    for kind in OsLockKind::ALL {
        table.add(
            format!("java holds, lockwright {} tries", kind.name()),
            lockwright_attempt(dir.path(), kind),
            model(LockKind::Posix, model_kind(kind)),
        );
    }
    java.release();
    table.check();
}

#[test]
fn every_lockwright_kind_against_java_matches_the_model() {
    let classes = holders::compile_java_holder();
    let mut table = Table::new();
    for kind in OsLockKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        let holder = self_holder(dir.path(), kind.name());
        let java = holders::start(holders::java_holder(
            classes.path(),
            &holders::lock_path(dir.path()),
        ));
        let real = match java {
            Started::Locked(java) => {
                java.release();
                TryLockResult::Acquired
            }
            Started::Refused { status, .. } if status.code() == Some(3) => {
                TryLockResult::WouldBlock
            }
            Started::Refused { status, output } => {
                panic!("java failed ({status}), neither locked nor refused:\n{output}")
            }
        };
        table.add(
            format!("lockwright {} holds, java tries", kind.name()),
            real,
            model(model_kind(kind), LockKind::Posix),
        );
        holder.release();
    }
    table.check();
}
