//! The `lockwright::file::sys::System` calls of [`SimSystem`]: each one step of the simulated
//! kernel (or a constant answer), with the errno the real call would give.

use std::io;
use std::path::{Path, PathBuf};

use lockwright::file::sys::{EntryKind, FileId, FileMeta, OsLockKind, Probe, System, TryLock};
use lockwright_model::file::kernel::{
    DescStat, FsError, LockKind, OpenMode, ProbeResult, TryLockResult,
};

use super::super::record::*;
use super::{SimFile, SimSystem};
use crate::prims::Runtime;

fn fs_error(e: FsError) -> io::Error {
    match e {
        FsError::NotFound => io::Error::from_raw_os_error(libc::ENOENT),
        FsError::AlreadyExists => io::Error::from_raw_os_error(libc::EEXIST),
    }
}

fn bad_desc() -> io::Error {
    io::Error::from_raw_os_error(libc::EBADF)
}

fn unsimulated(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}: only {} is simulated",
            path.display(),
            lock_path().display()
        ),
    )
}

fn dir_meta() -> FileMeta {
    FileMeta {
        id: FileId {
            dev: SIM_DEV,
            ino: 2,
        },
        kind: EntryKind::Directory,
        nlink: 2,
        len: 0,
    }
}

fn lock_meta(st: DescStat) -> FileMeta {
    FileMeta {
        id: file_id(st.inode),
        kind: EntryKind::Regular,
        nlink: u64::from(st.nlink),
        // The model knows "empty or written to"; a written file reports one byte.
        len: u64::from(st.written),
    }
}

/// The canonical form of a simulated directory spelling: [`LOCK_DIR`] itself, or
/// [`LOCK_LINK`], a symlink to it.
fn resolve(dir: &Path) -> Option<PathBuf> {
    (dir == Path::new(LOCK_DIR) || dir == Path::new(LOCK_LINK)).then(|| PathBuf::from(LOCK_DIR))
}

impl<R: Runtime> System for SimSystem<R> {
    type File = SimFile;

    fn held_insert(&self, path: &Path) -> bool {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.step(
            Call::HeldInsert,
            || false,
            |w| {
                let added = w.procs[usize::from(pid)].held[copy].insert(path.to_path_buf());
                (Outcome::Bool(added), added)
            },
        )
    }

    /// Waits (retrying, see the `system` module docs) until `path` is not in this thread's held
    /// set, then adds it: one step, recorded when it returns.
    fn held_insert_wait(&self, path: &Path) -> io::Result<()> {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.wait_step(Call::HeldInsertWait, |w| {
            let held = &mut w.procs[usize::from(pid)].held[copy];
            held.insert(path.to_path_buf())
                .then_some((Outcome::Done, Ok(())))
        })
    }

    fn held_remove(&self, path: &Path) -> bool {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.step(
            Call::HeldRemove,
            || false,
            |w| {
                let removed = w.procs[usize::from(pid)].held[copy].remove(path);
                (Outcome::Bool(removed), removed)
            },
        )
    }

    fn held_contains(&self, path: &Path) -> bool {
        let (pid, copy) = (self.pid, usize::from(self.copy));
        self.step(
            Call::HeldContains,
            || false,
            |w| {
                let there = w.procs[usize::from(pid)].held[copy].contains(path);
                (Outcome::Bool(there), there)
            },
        )
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        if Path::new(LOCK_DIR).starts_with(dir) || dir == Path::new(LOCK_LINK) {
            self.constant_step(Call::CreateDirAll, Ok(()))
        } else {
            Err(unsimulated(dir))
        }
    }

    /// [`LOCK_DIR`] is canonical; [`LOCK_LINK`] is a symlink to it.
    fn canonicalize_dir(&self, dir: &Path) -> io::Result<PathBuf> {
        match resolve(dir) {
            Some(canonical) => self.constant_step(Call::CanonicalizeDir, Ok(canonical)),
            None => Err(unsimulated(dir)),
        }
    }

    fn stat(&self, path: &Path) -> io::Result<Option<FileMeta>> {
        self.io_step(Call::Stat, |w| {
            if path == lock_path() {
                let inode = w.os.path_inode();
                let meta = inode.map(|inode| {
                    lock_meta(DescStat {
                        inode,
                        nlink: 1,
                        written: w.os.is_written(inode),
                    })
                });
                (Outcome::Stat(inode), Ok(meta))
            } else if Path::new(LOCK_DIR).starts_with(path) {
                (Outcome::Stat(None), Ok(Some(dir_meta())))
            } else {
                (Outcome::Stat(None), Err(unsimulated(path)))
            }
        })
    }

    /// `mode` is ignored: the model has no permission bits.
    fn open_lock_file(&self, path: &Path, _mode: u32) -> io::Result<(SimFile, FileMeta)> {
        let desc = self.desc();
        self.io_step(Call::Open, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            if w.os.desc_inode(desc).is_some() {
                // One descriptor per simulated thread: the model names descriptors by thread.
                return (
                    Outcome::BadDesc,
                    Err(io::Error::from_raw_os_error(libc::EMFILE)),
                );
            }
            match w.os.open(desc, OpenMode::Create) {
                Ok(inode) => {
                    let st = w.os.fstat(desc).expect("just opened");
                    (
                        Outcome::Opened(inode),
                        Ok((SimFile { desc }, lock_meta(st))),
                    )
                }
                Err(e) => (Outcome::Failed(e), Err(fs_error(e))),
            }
        })
    }

    /// `mode` is ignored: the model has no permission bits.
    fn create_new_file(&self, path: &Path, contents: &[u8], _mode: u32) -> io::Result<FileMeta> {
        self.io_step(Call::CreateExclusive, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            match w.os.create_exclusive() {
                Ok(inode) => {
                    // Created and written in one step. The real file is written just after
                    // the exclusive create; only another process's failed obtain could read
                    // it in between (and would describe the holder as unknown), while the
                    // creator reads its record only after `create_new_file` returned. A crash
                    // between the two (an empty stale file) is not simulated.
                    w.contents.insert(inode, contents.to_vec());
                    (
                        Outcome::Opened(inode),
                        Ok(lock_meta(DescStat {
                            inode,
                            nlink: 1,
                            written: false,
                        })),
                    )
                }
                Err(e) => (Outcome::Failed(e), Err(fs_error(e))),
            }
        })
    }

    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        // The contents `create_new_file` wrote to the inode at the path (empty for a file it
        // did not create). The outcome records the inode read: contents are per inode, so the
        // replayer knows what was read from which file.
        self.io_step(Call::ReadFile, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            match w.os.path_inode() {
                Some(inode) => (
                    Outcome::Stat(Some(inode)),
                    Ok(w.contents.get(&inode).cloned().unwrap_or_default()),
                ),
                None => (
                    Outcome::Failed(FsError::NotFound),
                    Err(fs_error(FsError::NotFound)),
                ),
            }
        })
    }

    fn unlink(&self, path: &Path) -> io::Result<()> {
        self.io_step(Call::Unlink, |w| {
            if path != lock_path() {
                return (Outcome::Done, Err(unsimulated(path)));
            }
            match w.os.unlink() {
                Ok(()) => {
                    w.forget_dead_contents();
                    (Outcome::Done, Ok(()))
                }
                Err(e) => (Outcome::Failed(e), Err(fs_error(e))),
            }
        })
    }

    fn try_lock(&self, file: &SimFile, kind: OsLockKind) -> io::Result<TryLock> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::TryLock(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            if let Some(Injection::Lock(errno)) = w.take_armed(|j| matches!(j, Injection::Lock(_)))
            {
                // No lock is taken: the model's `LockFails`.
                return (
                    Outcome::Errno(errno),
                    Err(io::Error::from_raw_os_error(errno)),
                );
            }
            let r = w.os.try_lock(desc, kind);
            let out = match r {
                TryLockResult::Acquired => TryLock::Acquired,
                TryLockResult::WouldBlock => TryLock::WouldBlock,
            };
            (Outcome::TryLock(r), Ok(out))
        })
    }

    /// Waits (retrying, see the `system` module docs) until no other owner holds a conflicting
    /// lock, then takes it: one step, recorded when it returns. An armed lock error ends the
    /// wait with that error (as `EDEADLK` or `ENOLCK` would).
    fn lock_blocking(&self, file: &SimFile, kind: OsLockKind) -> io::Result<()> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.wait_step(Call::LockBlocking(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return Some((Outcome::BadDesc, Err(bad_desc())));
            }
            if let Some(Injection::Lock(errno)) = w.take_armed(|j| matches!(j, Injection::Lock(_)))
            {
                return Some((
                    Outcome::Errno(errno),
                    Err(io::Error::from_raw_os_error(errno)),
                ));
            }
            if !w.os.lock_would_succeed(desc, kind) {
                return None;
            }
            let r = w.os.try_lock(desc, kind);
            debug_assert_eq!(r, TryLockResult::Acquired);
            Some((Outcome::Done, Ok(())))
        })
    }

    /// An armed unlock error: `EIO`, and the lock stays (the model's `UnlockFails`).
    fn unlock(&self, file: &SimFile, kind: OsLockKind) -> io::Result<()> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::Unlock(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            if w.take_armed(|j| j == Injection::Unlock).is_some() {
                return (
                    Outcome::Errno(libc::EIO),
                    Err(io::Error::from_raw_os_error(libc::EIO)),
                );
            }
            w.os.unlock(desc, kind);
            (Outcome::Done, Ok(()))
        })
    }

    fn probe(&self, file: &SimFile, kind: OsLockKind) -> io::Result<Probe> {
        let desc = file.desc;
        let kind = self.os.lock_kind(kind);
        self.io_step(Call::Probe(kind), |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            // `flock` locks cannot be probed: the real system answers `Unknown` without a
            // syscall, also on NFS where the lock underneath is a POSIX one.
            let p = if kind == LockKind::Flock || kind == LockKind::NfsFlock {
                ProbeResult::Unknown
            } else {
                w.os.probe(desc, kind)
            };
            let out = match p {
                ProbeResult::NoConflict => Probe::NoConflict,
                ProbeResult::Conflict { pid } => Probe::Conflict {
                    pid: pid.map(i32::from),
                },
                ProbeResult::Unknown => Probe::Unknown,
            };
            (Outcome::Probe(p), Ok(out))
        })
    }

    fn fstat(&self, file: &SimFile) -> io::Result<FileMeta> {
        let desc = file.desc;
        self.io_step(Call::Fstat, |w| match w.os.fstat(desc) {
            Some(st) => (Outcome::Fstat(st), Ok(lock_meta(st))),
            None => (Outcome::BadDesc, Err(bad_desc())),
        })
    }

    /// An armed close error: `EIO`, and the descriptor is gone anyway, with its locks
    /// (close(2); the model's `CloseFails`).
    fn close(&self, file: SimFile) -> io::Result<()> {
        let desc = file.desc;
        self.io_step(Call::Close, |w| {
            if w.os.desc_inode(desc).is_none() {
                return (Outcome::BadDesc, Err(bad_desc()));
            }
            w.os.close(desc);
            w.forget_dead_contents();
            if w.take_armed(|j| j == Injection::Close).is_some() {
                return (
                    Outcome::Errno(libc::EIO),
                    Err(io::Error::from_raw_os_error(libc::EIO)),
                );
            }
            (Outcome::Done, Ok(()))
        })
    }

    /// The simulated pid (the model's `Pid`): what SimpleFs writes into its holder record.
    fn process_id(&self) -> i32 {
        i32::from(self.pid)
    }

    /// Every simulated process runs on one host, [`SIM_HOST`].
    fn host_name(&self) -> Option<String> {
        Some(SIM_HOST.to_owned())
    }

    /// Whether simulated process `pid`'s current incarnation is alive (a restarted process is
    /// alive again: its pid was "reused"). A read of the world, not recorded: it changes
    /// nothing and is linearized at its mutex acquisition; only SimpleFs's "held" message
    /// uses it.
    fn pid_alive(&self, pid: i32) -> Option<bool> {
        let pid = u8::try_from(pid).ok()?;
        Some(
            self.os
                .with(|w| w.procs.get(usize::from(pid)).is_some_and(|p| p.alive)),
        )
    }
}
