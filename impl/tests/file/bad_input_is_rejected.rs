//! Bad names, bad directories and bad lock paths are refused with an error that names what is
//! wrong, and a failed obtain leaves nothing behind (no held-set entry, no target touched).

// Tests play the foreign code that makes files, FIFOs and symlinks at lock paths.
#![allow(clippy::disallowed_methods)]

use crate::common;

use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::Arc;

use lockwright::file::sys::{EntryKind, OsLockKind};
use lockwright::file::sys::{HeldSet, RealSystem};
use lockwright::{
    BadNameReason, LockError, LockFactory, NativeFsLockFactory, NoLockFactory, SimpleFsLockFactory,
    SingleInstanceLockFactory,
};

fn all_factories() -> Vec<(String, Box<dyn LockFactory>)> {
    let mut v: Vec<(String, Box<dyn LockFactory>)> = common::KINDS
        .iter()
        .map(|&k| {
            (
                format!("{k:?}"),
                Box::new(NativeFsLockFactory::new(k)) as Box<dyn LockFactory>,
            )
        })
        .collect();
    v.push(("simple".into(), Box::new(SimpleFsLockFactory::new())));
    v.push(("single".into(), Box::new(SingleInstanceLockFactory::new())));
    v.push(("nolock".into(), Box::new(NoLockFactory)));
    v
}

/// Native factories whose held set the test can inspect.
fn native_with_own_held_set(kind: OsLockKind) -> (NativeFsLockFactory, Arc<HeldSet>) {
    let held = Arc::new(HeldSet::new());
    (
        NativeFsLockFactory::with_system(RealSystem::with_held_set(Arc::clone(&held)), kind),
        held,
    )
}

#[test]
fn bad_lock_names_are_refused_by_every_factory() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("", BadNameReason::Empty),
        ("a/b", BadNameReason::ContainsSlash),
        ("../write.lock", BadNameReason::ContainsSlash),
        ("/etc/passwd", BadNameReason::ContainsSlash),
        ("a\0b", BadNameReason::ContainsNul),
        (".", BadNameReason::DotOrDotDot),
        ("..", BadNameReason::DotOrDotDot),
    ];
    for (label, f) in all_factories() {
        for (name, want) in cases {
            let err = f.try_obtain(dir.path(), name).unwrap_err();
            match &err {
                LockError::BadLockName { name: got, reason } => {
                    assert_eq!(got, name);
                    assert_eq!(*reason, want, "{label} {name:?}");
                }
                other => panic!("{label} {name:?}: {other:?}"),
            }
            assert!(err.to_string().contains("single plain file name"), "{err}");
        }
    }
    // Nothing was created anywhere.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn directory_path_that_is_a_file_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    for (label, f) in all_factories() {
        if label == "single" || label == "nolock" {
            continue; // no filesystem access by design
        }
        for dir in [file.clone(), file.join("sub")] {
            let err = f.try_obtain(&dir, "write.lock").unwrap_err();
            assert!(
                matches!(err, LockError::NotADirectory { .. }),
                "{label} {dir:?}: {err:?}"
            );
            let msg = err.to_string();
            assert!(
                msg.contains(&dir.display().to_string()) && msg.contains("not a directory"),
                "{msg}"
            );
            assert!(std::error::Error::source(&err).is_some());
        }
    }
}

#[test]
fn lock_path_that_is_a_directory_is_named_and_held_set_stays_clean() {
    for kind in common::KINDS {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("write.lock")).unwrap();
        let (f, held) = native_with_own_held_set(kind);
        let err = f.try_obtain(tmp.path(), "write.lock").unwrap_err();
        assert!(
            matches!(
                err,
                LockError::BadLockPath {
                    found: EntryKind::Directory,
                    ..
                }
            ),
            "{kind:?}: {err:?}"
        );
        assert!(
            err.to_string()
                .contains("is a directory, not a regular file"),
            "{err}"
        );
        assert!(held.is_empty());
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("write.lock")).unwrap();
    let err = SimpleFsLockFactory::new()
        .try_obtain(tmp.path(), "write.lock")
        .unwrap_err();
    assert!(
        matches!(
            err,
            LockError::BadLockPath {
                found: EntryKind::Directory,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn lock_path_that_is_a_symlink_is_refused_and_its_target_untouched() {
    for kind in common::KINDS {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        let link = tmp.path().join("write.lock");
        // Dangling first: following it would create `elsewhere`.
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let (f, held) = native_with_own_held_set(kind);
        let err = f.try_obtain(tmp.path(), "write.lock").unwrap_err();
        assert!(
            matches!(
                err,
                LockError::BadLockPath {
                    found: EntryKind::Symlink,
                    ..
                }
            ),
            "{kind:?}: {err:?}"
        );
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!target.exists(), "{kind:?} followed the symlink");
        // And to an existing file.
        std::fs::write(&target, b"").unwrap();
        let err = f.try_obtain(tmp.path(), "write.lock").unwrap_err();
        assert!(
            matches!(
                err,
                LockError::BadLockPath {
                    found: EntryKind::Symlink,
                    ..
                }
            ),
            "{kind:?}: {err:?}"
        );
        assert!(held.is_empty());
    }
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tmp.path().join("elsewhere"), tmp.path().join("write.lock"))
        .unwrap();
    let err = SimpleFsLockFactory::new()
        .try_obtain(tmp.path(), "write.lock")
        .unwrap_err();
    assert!(
        matches!(
            err,
            LockError::BadLockPath {
                found: EntryKind::Symlink,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!tmp.path().join("elsewhere").exists());
}

#[test]
fn lock_path_that_is_a_fifo_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("write.lock");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    for kind in common::KINDS {
        let (f, held) = native_with_own_held_set(kind);
        let err = f.try_obtain(tmp.path(), "write.lock").unwrap_err();
        assert!(
            matches!(
                err,
                LockError::BadLockPath {
                    found: EntryKind::Other,
                    ..
                }
            ),
            "{kind:?}: {err:?}"
        );
        assert!(held.is_empty());
    }
}

// ---- permission denied: as root the test drops to nobody in a child process ----

const NOBODY: u32 = 65534;

#[test]
#[ignore = "child-process helper: run by permission_denied_is_reported_not_ignored"]
fn child_obtains_as_unprivileged_user() {
    let Some(dir) = std::env::var_os(common::ENV_DIR) else {
        return;
    };
    let f = common::factory_by_name(&std::env::var(common::ENV_FACTORY).unwrap());
    match f.try_obtain(Path::new(&dir), "write.lock") {
        Ok(_) => println!("RESULT obtained"),
        Err(e) => println!(
            "RESULT kind={:?} path={:?} msg={e} advice={:?}",
            e.io_kind(),
            e.path(),
            e.advice()
        ),
    }
}

/// Runs `exe` (a copy of this test binary that uid 65534 can execute, wherever the target
/// directory lives) as uid/gid 65534.
fn obtain_as_nobody(exe: &Path, dir: &Path, factory: &str) -> String {
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "--exact",
        &common::test_name(module_path!(), "child_obtains_as_unprivileged_user"),
        "--nocapture",
        "--ignored",
    ])
    .env(common::ENV_DIR, dir)
    .env(common::ENV_FACTORY, factory)
    .uid(NOBODY)
    .gid(NOBODY);
    let out = cmd.output().expect("spawn child as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child as uid {NOBODY} failed to run ({}): {stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.to_string()))
        .unwrap_or_else(|| panic!("child printed no RESULT: {stdout}"))
}

#[test]
fn permission_denied_is_reported_not_ignored() {
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let tmp = tempfile::tempdir().unwrap();
    let ro = tmp.path().join("read-only");
    std::fs::create_dir(&ro).unwrap();
    if root {
        // Root ignores mode bits: a root-owned 0755 directory, used by uid 65534. The test
        // binary and the path to `ro` must be reachable for that user.
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
        let exe = tmp.path().join("test-binary");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        for factory in ["ofd", "posix", "flock", "simple"] {
            // The lock file cannot be created.
            let r = obtain_as_nobody(&exe, &ro, factory);
            assert!(r.contains("kind=Some(PermissionDenied)"), "{factory}: {r}");
            assert!(
                r.contains("write.lock"),
                "{factory}: must name the lock file: {r}"
            );
            assert!(
                r.contains("check the ownership and permissions"),
                "{factory}: {r}"
            );
            // The lock directory cannot be created.
            let r = obtain_as_nobody(&exe, &ro.join("sub"), factory);
            assert!(r.contains("kind=Some(PermissionDenied)"), "{factory}: {r}");
            assert!(
                r.contains("read-only/sub"),
                "{factory}: must name the directory: {r}"
            );
        }
        assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
    } else {
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        for (label, f) in all_factories() {
            if label == "single" || label == "nolock" {
                continue;
            }
            let err = f.try_obtain(&ro, "write.lock").unwrap_err();
            assert_eq!(
                err.io_kind(),
                Some(ErrorKind::PermissionDenied),
                "{label}: {err:?}"
            );
            let err = f.try_obtain(&ro.join("sub"), "write.lock").unwrap_err();
            assert_eq!(
                err.io_kind(),
                Some(ErrorKind::PermissionDenied),
                "{label}: {err:?}"
            );
        }
    }
}
