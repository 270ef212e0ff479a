//! `NativeFsLockFactory` remembers, per canonical lock path, the `(dev, ino)` of the lock file
//! it last opened there, and then starts a later obtain with one `lstat` of the lock path
//! instead of resolving the directory again (see "Resolved directories" on the type). These
//! tests change the directory or the lock file between obtains and check that the remembered
//! path is dropped whenever the `lstat` does not find the same regular file, and that the
//! obtain then behaves exactly as a first one would.

// Tests play the foreign code that opens, stats, writes and deletes lock files: the gate rule
// (clippy.toml) is for the crate itself.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::Instrumented;
use lockwright::file::sys::{EntryKind, OsLockKind, RealSystem};
use lockwright::file::NativeFsLock;
use lockwright::{LockError, LockFactory, NativeFsLockFactory};

type Factory = NativeFsLockFactory<Instrumented<RealSystem>>;

fn factory(kind: OsLockKind) -> (Factory, Arc<Instrumented<RealSystem>>) {
    let sys = Instrumented::new(common::process());
    (
        NativeFsLockFactory::with_shared_system(Arc::clone(&sys), kind),
        sys,
    )
}

fn canonical_tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// Obtains and releases once, so the factory remembers `dir/write.lock`.
fn obtain_release(f: &Factory, dir: &Path) -> lockwright::file::sys::FileId {
    let lock: NativeFsLock<_> = f.try_obtain_native(dir, "write.lock").unwrap();
    let id = lock.file_id();
    drop(lock);
    f.system().take_log();
    id
}

const STEPS: [&str; 3] = ["held_insert", "open_lock_file", "try_lock"];

fn with_steps(setup: &[&'static str]) -> Vec<&'static str> {
    let mut v = setup.to_vec();
    v.extend(STEPS);
    v
}

#[test]
fn a_directory_removed_and_recreated_is_resolved_again() {
    for kind in common::KINDS {
        let (_tmp, base) = canonical_tempdir();
        let dir = base.join("index");
        let (f, sys) = factory(kind);
        let before = obtain_release(&f, &dir);
        let _ = obtain_release(&f, &dir); // remembered from here on

        // Kept open so the new lock file cannot reuse the old inode number (it would be a
        // harmless hit: the path is the same, but this test wants to see the re-resolve).
        let old = std::fs::File::open(dir.join("write.lock")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        let lock = f.try_obtain_native(&dir, "write.lock").unwrap();
        drop(old);
        // The lstat finds no file: resolve again (the directory exists), no second lstat.
        assert_eq!(
            sys.take_log(),
            with_steps(&["stat", "canonicalize_dir"]),
            "{kind:?}"
        );
        assert_eq!(lock.path(), dir.join("write.lock"));
        let fresh = lock.file_id();
        assert_ne!(fresh, before, "a new lock file in the new directory");
        drop(lock);
        sys.take_log();
        // Remembered again.
        let lock = f.try_obtain_native(&dir, "write.lock").unwrap();
        assert_eq!(sys.take_log(), with_steps(&["stat"]));
        assert_eq!(lock.file_id(), fresh);
    }
}

#[test]
fn a_directory_removed_is_created_again() {
    let (_tmp, base) = canonical_tempdir();
    let dir = base.join("a").join("index");
    let (f, sys) = factory(OsLockKind::Ofd);
    obtain_release(&f, &dir);
    obtain_release(&f, &dir);
    std::fs::remove_dir_all(base.join("a")).unwrap();
    let lock = f.try_obtain(&dir, "write.lock").unwrap();
    assert_eq!(
        sys.take_log(),
        with_steps(&[
            "stat",
            "canonicalize_dir",
            "create_dir_all",
            "canonicalize_dir"
        ])
    );
    assert_eq!(lock.path(), dir.join("write.lock"));
    assert!(dir.join("write.lock").is_file());
}

#[test]
fn a_replaced_lock_file_is_resolved_again_and_the_new_inode_locked() {
    let (_tmp, dir) = canonical_tempdir();
    let (f, sys) = factory(OsLockKind::Posix);
    let before = obtain_release(&f, &dir);
    obtain_release(&f, &dir);
    // Replace the file by rename (a new inode at the same path).
    std::fs::write(dir.join("new"), b"").unwrap();
    std::fs::rename(dir.join("new"), dir.join("write.lock")).unwrap();
    let lock = f.try_obtain_native(&dir, "write.lock").unwrap();
    assert_eq!(sys.take_log(), with_steps(&["stat", "canonicalize_dir"]));
    assert_ne!(lock.file_id(), before);
    lock.ensure_valid().unwrap();
}

#[test]
fn something_else_at_a_remembered_lock_path_is_refused_without_opening_it() {
    type Put = fn(&Path);
    let cases: [(EntryKind, Put); 3] = [
        (EntryKind::Directory, |p| std::fs::create_dir(p).unwrap()),
        (EntryKind::Symlink, |p| {
            std::os::unix::fs::symlink(p.with_file_name("target"), p).unwrap()
        }),
        (EntryKind::Other, |p| {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }),
    ];
    for kind in common::KINDS {
        for (found, put) in cases {
            let (_tmp, dir) = canonical_tempdir();
            let (f, sys) = factory(kind);
            obtain_release(&f, &dir);
            obtain_release(&f, &dir);
            let path = dir.join("write.lock");
            std::fs::remove_file(&path).unwrap();
            put(&path);
            let err = f.try_obtain(&dir, "write.lock").unwrap_err();
            match &err {
                LockError::BadLockPath { path: p, found: k } => {
                    assert_eq!(*k, found, "{kind:?}");
                    assert_eq!(p, &path);
                }
                other => panic!("{kind:?} {found:?}: {other:?}"),
            }
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
            // One lstat (the failed check, reused after resolving): nothing opened, nothing
            // inserted into the held set.
            assert_eq!(sys.take_log(), ["stat", "canonicalize_dir"], "{kind:?}");
            assert!(sys.inner.held_set().is_empty());
            assert!(!dir.join("target").exists(), "the symlink was not followed");
        }
    }
}

#[test]
fn a_directory_replaced_by_a_symlink_is_noticed_and_the_lock_follows_it() {
    let (_tmp, base) = canonical_tempdir();
    let dir = base.join("index");
    let (f, sys) = factory(OsLockKind::Ofd);
    obtain_release(&f, &dir);
    obtain_release(&f, &dir);
    std::fs::rename(&dir, base.join("old")).unwrap();
    std::fs::create_dir(base.join("other")).unwrap();
    std::os::unix::fs::symlink(base.join("other"), &dir).unwrap();
    let lock = f.try_obtain_native(&dir, "write.lock").unwrap();
    assert_eq!(lock.path(), base.join("other").join("write.lock"));
    // The lstat went through the symlink and found no file; `dir` is no longer canonical, so
    // the path just resolved is stat'ed itself and not remembered.
    assert_eq!(
        sys.take_log(),
        with_steps(&["stat", "canonicalize_dir", "stat"])
    );
    drop(lock);
    sys.take_log();
    let _again = f.try_obtain_native(&dir, "write.lock").unwrap();
    assert_eq!(sys.take_log(), with_steps(&["canonicalize_dir", "stat"]));
}

#[test]
fn a_retargeted_symlink_moves_the_lock_with_it() {
    let (_tmp, base) = canonical_tempdir();
    for d in ["v1", "v2"] {
        std::fs::create_dir(base.join(d)).unwrap();
    }
    let link = base.join("current");
    std::os::unix::fs::symlink(base.join("v1"), &link).unwrap();
    let (f, _sys) = factory(OsLockKind::Ofd);
    for _ in 0..3 {
        let l = f.try_obtain_native(&link, "write.lock").unwrap();
        assert_eq!(l.path(), base.join("v1").join("write.lock"));
    }
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(base.join("v2"), &link).unwrap();
    let l = f.try_obtain_native(&link, "write.lock").unwrap();
    assert_eq!(l.path(), base.join("v2").join("write.lock"));
    // A separate process locking v2 directly is excluded (not a stale v1 lock).
    let other = NativeFsLockFactory::with_system(common::process(), OsLockKind::Ofd);
    assert!(other
        .try_obtain(&base.join("v2"), "write.lock")
        .unwrap_err()
        .is_held());
}

#[test]
fn many_directories_are_all_locked_correctly_past_the_cache_capacity() {
    let (_tmp, base) = canonical_tempdir();
    let (f, sys) = factory(OsLockKind::Flock);
    let dirs: Vec<PathBuf> = (0..100).map(|i| base.join(format!("d{i}"))).collect();
    let mut held = Vec::new();
    for d in &dirs {
        held.push(f.try_obtain_native(d, "write.lock").unwrap());
    }
    for (d, l) in dirs.iter().zip(&held) {
        assert_eq!(l.path(), d.join("write.lock"));
        assert!(matches!(
            f.try_obtain(d, "write.lock"),
            Err(LockError::HeldByThisProcess { .. })
        ));
    }
    drop(held);
    sys.take_log();
    // The last one obtained is still remembered.
    let _l = f.try_obtain_native(&dirs[99], "write.lock").unwrap();
    assert_eq!(sys.take_log(), with_steps(&["stat"]));
}

/// The one change the `lstat` check cannot see, pinned so that the documentation stays true:
/// a PARENT of a remembered canonical directory moved away and replaced by a symlink to its new
/// place. The old spelling still reaches the same lock file, so the factory keeps it as the path
/// (and held-set key); a fresh resolution gives the new spelling. Other processes are excluded
/// either way: the kernel locks the inode.
#[test]
fn known_limit_a_parent_moved_behind_a_symlink_keeps_the_old_spelling() {
    let (_tmp, base) = canonical_tempdir();
    let dir = base.join("data").join("index");
    let (f, sys) = factory(OsLockKind::Ofd);
    let id = obtain_release(&f, &dir);
    obtain_release(&f, &dir);
    std::fs::rename(base.join("data"), base.join("data2")).unwrap();
    std::os::unix::fs::symlink(base.join("data2"), base.join("data")).unwrap();
    let lock = f.try_obtain_native(&dir, "write.lock").unwrap();
    assert_eq!(sys.take_log(), with_steps(&["stat"]));
    assert_eq!(lock.path(), dir.join("write.lock"), "the old spelling");
    assert_eq!(lock.file_id(), id, "the same lock file");
    let other = NativeFsLockFactory::with_system(common::process(), OsLockKind::Ofd);
    let err = other.try_obtain(&dir, "write.lock").unwrap_err();
    assert!(err.is_held(), "{err:?}");
    assert_eq!(
        err.path(),
        Some(
            base.join("data2")
                .join("index")
                .join("write.lock")
                .as_path()
        )
    );
}
