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
        let blocks = self.variant.blocks();
        let lock_call = |p: Pid, unlock: bool| match (self.kind_of(p), unlock) {
            (LockKind::Flock | LockKind::NfsFlock, false) if blocks => "flock(LOCK_EX)",
            (LockKind::Posix, false) if blocks => "fcntl(F_SETLKW, F_WRLCK)",
            (LockKind::Ofd, false) if blocks => "fcntl(F_OFD_SETLKW, F_WRLCK)",
            (LockKind::Flock | LockKind::NfsFlock, false) => "flock(LOCK_EX|LOCK_NB)",
            (LockKind::Flock | LockKind::NfsFlock, true) => "flock(LOCK_UN)",
            (LockKind::Posix, false) => "fcntl(F_SETLK, F_WRLCK)",
            (LockKind::Posix, true) => "fcntl(F_SETLK, F_UNLCK)",
            (LockKind::Ofd, false) => "fcntl(F_OFD_SETLK, F_WRLCK)",
            (LockKind::Ofd, true) => "fcntl(F_OFD_SETLK, F_UNLCK)",
        };
        let sets = self.variant.held_sets();
        let held_set = |t: Tid| {
            if sets > 1 && t % 2 == 1 {
                "held set #2"
            } else if sets > 1 {
                "held set #1"
            } else {
                "held set"
            }
        };
        let fd_inode = |p: Pid, t: Tid| inode(before.os.desc_inode(Self::desc(p, t)));
        match action {
            HeldInsert(p, t) if blocks => format!(
                "{} HeldInsert: held_insert_wait(path) → inserted into the {}",
                who(p, t),
                held_set(t)
            ),
            HeldInsert(p, t) => format!(
                "{} HeldInsert: held_insert(path) → {}{}",
                who(p, t),
                if before.held_of(p, t, sets) {
                    "false: held by this process"
                } else {
                    "true"
                },
                if sets > 1 {
                    format!(" ({})", held_set(t))
                } else {
                    String::new()
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
                if matches!(after.thread(p, t).pc, Pc::Holding | Pc::Locked) {
                    "acquired"
                } else {
                    "would block"
                }
            ),
            Recheck(p, t) => format!(
                "{} Recheck: stat(path) → {}, fstat(fd) → {} → {}",
                who(p, t),
                inode(before.os.path_inode()),
                fd_inode(p, t),
                if after.thread(p, t).pc == Pc::Holding {
                    "the same file: obtain returns"
                } else {
                    "not the file at the path: unlock, close, open again"
                }
            ),
            Unlock(p, t) => format!(
                "{} Unlock: {} on {}",
                who(p, t),
                lock_call(p, true),
                fd_inode(p, t)
            ),
            Close(p, t) => format!("{} Close: close(fd of {})", who(p, t), fd_inode(p, t)),
            HeldRemove(p, t) if sets > 1 => format!(
                "{} HeldRemove: held_remove(path) ({})",
                who(p, t),
                held_set(t)
            ),
            HeldRemove(p, t) => format!("{} HeldRemove: held_remove(path)", who(p, t)),
            LockFails(p, t) => format!(
                "{} LockFails: {} on {} → ENOLCK/EIO{}",
                who(p, t),
                lock_call(p, false),
                fd_inode(p, t),
                if after.thread(p, t).pc == Pc::Holding {
                    "; carries on as the holder, unlocked"
                } else {
                    "; no lock taken"
                }
            ),
            UnlockFails(p, t) => format!(
                "{} UnlockFails: {} on {} → EIO; the lock stays",
                who(p, t),
                lock_call(p, true),
                fd_inode(p, t)
            ),
            CloseFails(p, t) => format!(
                "{} CloseFails: close(fd of {}) → EIO; the fd and its locks are gone anyway",
                who(p, t),
                fd_inode(p, t)
            ),
            BeginCheck(p, t) => format!(
                "{} BeginCheck: ensure_valid() is called (lock {} now)",
                who(p, t),
                if self.observe_ensure_valid(before, p, t) {
                    "valid"
                } else {
                    "invalid"
                }
            ),
            Check(p, t) => {
                let n = match before.thread(p, t).pc {
                    Pc::Checking(n) => n,
                    _ => 0,
                };
                let what = match n {
                    0 => "held_contains(path)",
                    1 => "fstat(fd): linked and empty",
                    2 => "stat(path): our inode",
                    _ => "probe(fd): no other owner",
                };
                let outcome = match after.thread(p, t).pc {
                    Pc::Writing if after.thread(p, t).blind => {
                        "passes: ensure_valid returns Ok, though the lock was valid at no \
                         moment of the call; write begins"
                    }
                    Pc::Writing => "passes: ensure_valid returns Ok; write begins",
                    Pc::Holding => "fails: ensure_valid returns an error",
                    _ => "passes",
                };
                format!("{} Check: {what} → {outcome}", who(p, t))
            }
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
            LoseLock(p) => {
                format!("p{p} LoseLock: p{p}'s locks vanish (lease lost); its fds stay open")
            }
            WriteLockFile => format!(
                "operator WriteLockFile: writes into {}; it is no longer empty",
                inode(before.os.path_inode())
            ),
        }
    }
}
