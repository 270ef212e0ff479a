//! One line per step for counterexample listings: who acts, the OS call, and its outcome.

use super::kernel::{Inode, LockKind};
use super::{Action, Pc, Pid, Scenario, State, Tid};

impl Scenario {
    /// Describes what a step did, for counterexample listings: who acts, the OS call, and its
    /// outcome (`p0 t1 TryLock: fcntl(F_OFD_SETLK) on inode 0 → would block`).
    pub(super) fn describe(&self, before: &State, action: Action, after: &State) -> String {
        use Action::*;
        let who = |p: Pid, t: Tid| format!("p{p} t{t}");
        let inode = |i: Option<Inode>| match i {
            Some(i) => format!("inode {i}"),
            None => "no file".to_string(),
        };
        let lock_call = |p: Pid, unlock: bool| match (self.kind_of(p), unlock) {
            (LockKind::Flock | LockKind::NfsFlock, false) => "flock(LOCK_EX|LOCK_NB)",
            (LockKind::Flock | LockKind::NfsFlock, true) => "flock(LOCK_UN)",
            (LockKind::Posix, false) => "fcntl(F_SETLK, F_WRLCK)",
            (LockKind::Posix, true) => "fcntl(F_SETLK, F_UNLCK)",
            (LockKind::Ofd, false) => "fcntl(F_OFD_SETLK, F_WRLCK)",
            (LockKind::Ofd, true) => "fcntl(F_OFD_SETLK, F_UNLCK)",
        };
        let fd_inode = |p: Pid, t: Tid| inode(before.os.desc_inode(Self::desc(p, t)));
        match action {
            HeldInsert(p, t) => format!(
                "{} HeldInsert: held_insert(path) → {}",
                who(p, t),
                if before.procs[p as usize].held {
                    "false: held by this process"
                } else {
                    "true"
                }
            ),
            Open(p, t) => format!(
                "{} Open: open(path, O_CREAT) → {}",
                who(p, t),
                inode(after.thread(p, t).inode)
            ),
            TryLock(p, t) => format!(
                "{} TryLock: {} on {} → {}",
                who(p, t),
                lock_call(p, false),
                fd_inode(p, t),
                if after.thread(p, t).pc == Pc::Holding {
                    "acquired"
                } else {
                    "would block"
                }
            ),
            Unlock(p, t) => format!(
                "{} Unlock: {} on {}",
                who(p, t),
                lock_call(p, true),
                fd_inode(p, t)
            ),
            Close(p, t) => format!("{} Close: close(fd of {})", who(p, t), fd_inode(p, t)),
            HeldRemove(p, t) => format!("{} HeldRemove: held_remove(path)", who(p, t)),
            Unlink(p, t) => format!(
                "{} Unlink: unlink(path) removes {}",
                who(p, t),
                inode(before.os.path_inode())
            ),
            CreateExclusive(p, t) => match after.thread(p, t).pc {
                Pc::Holding => format!(
                    "{} CreateExclusive: open(path, O_CREAT|O_EXCL) → {}",
                    who(p, t),
                    inode(after.thread(p, t).inode)
                ),
                _ => format!(
                    "{} CreateExclusive: open(path, O_CREAT|O_EXCL) → EEXIST",
                    who(p, t)
                ),
            },
            ReleaseRefused(p, t) => format!(
                "{} ReleaseRefused: path names {}, not ours; nothing deleted",
                who(p, t),
                inode(before.os.path_inode())
            ),
            Obtain(p, t) => format!("{} Obtain (no lock)", who(p, t)),
            Release(p, t) => format!("{} Release (no lock)", who(p, t)),
            EnsureValid(p, t) => format!("{} EnsureValid: passes; write begins", who(p, t)),
            Write(p, t) => format!("{} Write: write ends", who(p, t)),
            Crash(p) => format!("p{p} Crash: killed; kernel closes its fds and drops its locks"),
            Restart(p) => format!("p{p} Restart: a fresh process, empty held set"),
            UnlinkLockFile => format!(
                "operator UnlinkLockFile: unlink(path) removes {}",
                inode(before.os.path_inode())
            ),
            ReplaceLockFile => format!(
                "operator ReplaceLockFile: rename(fresh, path) → {}",
                inode(after.os.path_inode())
            ),
            ForeignOpenClose(p) => format!(
                "p{p} ForeignOpenClose: other code in p{p} opens and closes {}",
                inode(before.os.path_inode())
            ),
        }
    }
}
