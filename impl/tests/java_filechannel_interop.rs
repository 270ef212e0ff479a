//! Interop with Java/Lucene: a JVM holding `FileChannel.tryLock()` on `write.lock` (a
//! whole-file POSIX lock) excludes our OFD and POSIX locks, and does NOT exclude flock (the
//! documented hazard: a flock user and Lucene can both "hold" the directory).
//!
//! Needs a JDK (`javac`, `java`): the test fails, saying so, when they are missing.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

mod common;

use std::path::Path;
use std::process::Command;

use lockwright::file::sys::OsLockKind;
use lockwright::{LockError, LockFactory, NativeFsLockFactory};

fn tool(name: &str) -> String {
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
    panic!("`{name}` not found: install a JDK (e.g. `apt-get install openjdk-17-jdk-headless`) to run the Java interop test");
}

fn compile_holder(out: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/HoldLock.java");
    let status = Command::new(tool("javac"))
        .arg("-d")
        .arg(out)
        .arg(&src)
        .status()
        .expect("run javac");
    assert!(status.success(), "javac {src:?} failed: {status}");
}

#[test]
fn java_filechannel_lock_excludes_ofd_and_posix_but_not_flock() {
    let classes = tempfile::tempdir().unwrap();
    compile_holder(classes.path());
    let dir = tempfile::tempdir().unwrap();
    let lock_path = dir.path().join("write.lock");
    let mut cmd = Command::new(tool("java"));
    cmd.arg("-cp")
        .arg(classes.path())
        .arg("HoldLock")
        .arg(&lock_path);
    let java = common::start_holder(cmd);

    for kind in [OsLockKind::Ofd, OsLockKind::Posix] {
        let err = NativeFsLockFactory::new(kind)
            .try_obtain(dir.path(), "write.lock")
            .unwrap_err();
        match &err {
            LockError::HeldByOtherProcess { pid, .. } => {
                if kind == OsLockKind::Posix {
                    assert_eq!(*pid, Some(java.pid()), "F_GETLK names the JVM");
                }
            }
            other => panic!("{kind:?}: expected HeldByOtherProcess, got {other:?}"),
        }
    }
    // The hazard: flock does not see Java's fcntl lock.
    let flock = NativeFsLockFactory::new(OsLockKind::Flock).try_obtain(dir.path(), "write.lock");
    assert!(
        flock.is_ok(),
        "flock is expected to succeed next to a Java holder: {flock:?}"
    );
    drop(flock);

    java.release();
    // And the other way round: once Java is gone, OFD works.
    assert!(NativeFsLockFactory::new(OsLockKind::Ofd)
        .try_obtain(dir.path(), "write.lock")
        .is_ok());
}
