//! Interop with Java/Lucene: a JVM holding `FileChannel.tryLock()` on `write.lock` (a
//! whole-file POSIX lock) excludes our OFD and POSIX locks, and does NOT exclude flock (the
//! documented hazard: a flock user and Lucene can both "hold" the directory).
//!
//! Needs a JDK (`javac`, `java`): the test fails, saying what to install, when they are
//! missing.

// Lives in the checks crate, not in `lockwright`'s own tests: `cargo test -p lockwright` needs no
// JVM. The same pairs are compared with the model's conflict matrix in
// `file_peers/foreign_lockers_match_the_model.rs`; this test also checks the pid F_GETLK names.

use crate::holders;

use lockwright::{LockError, LockFactory, NativeFsLockFactory, OsLockKind};

#[test]
fn java_filechannel_lock_excludes_ofd_and_posix_but_not_flock() {
    let classes = holders::compile_java_holder();
    let dir = tempfile::tempdir().unwrap();
    let java = holders::start_holder(holders::java_holder(
        classes.path(),
        &holders::lock_path(dir.path()),
    ));

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
