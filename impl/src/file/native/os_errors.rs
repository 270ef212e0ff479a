//! The OS errors of [`NativeFsLockFactory`](super::NativeFsLockFactory)'s setup, open and
//! lock steps, as [`LockError`]s (also used by the simple factory).

use std::io;
use std::path::{Path, PathBuf};

use crate::file::error::LockError;
use crate::file::sys::{EntryKind, FileMeta, OsLockKind};

pub(crate) fn dir_error(dir: &Path, source: io::Error) -> LockError {
    match source.kind() {
        io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory => LockError::NotADirectory {
            path: dir.to_path_buf(),
            source,
        },
        _ => LockError::Io {
            path: dir.to_path_buf(),
            source,
        },
    }
}

/// The `lstat` of the lock path before anything is opened: absent or a regular file. A
/// `dir` that is a file passes `realpath` and shows up here as `ENOTDIR`.
pub(super) fn check_lock_path(
    dir: &Path,
    path: &Path,
    seen: io::Result<Option<FileMeta>>,
) -> Result<(), LockError> {
    match seen {
        Ok(Some(meta)) if meta.kind != EntryKind::Regular => Err(LockError::BadLockPath {
            path: path.to_path_buf(),
            found: meta.kind,
        }),
        Ok(_) => Ok(()),
        Err(source) if source.raw_os_error() == Some(libc::ENOTDIR) => Err(dir_error(dir, source)),
        Err(source) => Err(LockError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// `open_lock_file` errors: the path was swapped between `stat` and `open`.
pub(crate) fn open_error(path: PathBuf, source: io::Error) -> LockError {
    match source.raw_os_error() {
        Some(libc::ELOOP) => LockError::BadLockPath {
            path,
            found: EntryKind::Symlink,
        },
        Some(libc::EISDIR) => LockError::BadLockPath {
            path,
            found: EntryKind::Directory,
        },
        _ => LockError::Io { path, source },
    }
}

/// `try_lock` errors: "this filesystem cannot lock" vs. anything else.
pub(super) fn lock_error(path: PathBuf, kind: OsLockKind, source: io::Error) -> LockError {
    let unsupported = source.kind() == io::ErrorKind::Unsupported
        || matches!(
            source.raw_os_error(),
            Some(c) if c == libc::ENOLCK || c == libc::EOPNOTSUPP || c == libc::ENOTSUP
                || c == libc::EINVAL || c == libc::ENOSYS
        );
    if unsupported {
        LockError::LockingUnsupported { path, kind, source }
    } else {
        LockError::Io { path, source }
    }
}
