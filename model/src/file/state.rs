//! The model's state: the kernel (file table and lock table), each process's held set, each
//! thread's program counter, the fault budgets left.

use std::fmt;

use super::kernel::{Inode, Os, Pid};
use super::Faults;
#[cfg(doc)]
use super::Scenario;

/// A thread index inside its process (also the `slot` of the thread's descriptor).
pub type Tid = u8;

/// Where a thread is in its protocol: the atomic steps of the real implementation.
///
/// The names say what the thread has done last; [`Scenario::thread_actions`] says which step
/// comes next for each variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    /// Not holding and not obtaining. (A refused obtain ends here too.)
    Idle,
    /// Obtain: the path is in the held set; next `Open`.
    Inserted,
    /// Obtain: the lock file is open; next `TryLock`.
    Opened,
    /// Obtain failed: `TryLock` would block; next `Close` (`native`) or `HeldRemove`
    /// (`native-4.10`).
    Blocked,
    /// Obtain failed, descriptor closed; next `HeldRemove` (`native`).
    BlockedClosed,
    /// Obtain failed, held-set entry removed; next `Close` (`native-4.10`).
    BlockedRemoved,
    /// Obtained: the thread is a writer. Next `EnsureValid` (when it would pass) or release.
    Holding,
    /// Between a passed `EnsureValid` and the end of its `Write`.
    Writing,
    /// `native-probe-last` only: inside `ensure_valid` (after `BeginCheck`), the first `n` of
    /// its checks passed (each a `Check` step); the next check is number `n`. Still a writer.
    Checking(u8),
    /// Release: unlocked; next `Close` (`HeldRemove` in `native-4.10`).
    Unlocked,
    /// Release: unlocked and closed; next `HeldRemove`.
    ReleasedClosed,
    /// Release: held-set entry removed; next `Close` (`native-4.10`) or `Unlink`
    /// (`native-delete-on-release`).
    ReleasedRemoved,
    /// `native-blocking` only: the blocking lock call returned; next `Recheck` (is the file
    /// at the path still the one locked?). Not yet a writer: the obtain has not returned.
    Locked,
    /// `native-blocking` only: the re-check found another file (or none) at the path: the
    /// lock is on an orphan. Next `Unlock`, then `Close`, then back to `Inserted` (open the
    /// path again, still in the held set).
    Stale,
    /// `native-blocking` only: the stale lock is unlocked; next `Close` → `Inserted`.
    StaleUnlocked,
}

impl Pc {
    /// Whether the thread's obtain succeeded and it has not started to release: what an
    /// index writer believes ("at most one writer").
    pub fn is_writer(self) -> bool {
        matches!(self, Pc::Holding | Pc::Writing | Pc::Checking(_))
    }
}

/// One thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Thread {
    pub pc: Pc,
    /// The inode identity the thread recorded when it opened (native: `open_lock_file`'s
    /// `fstat`) or created (simple: `create_new_file`) the lock file; `None` when it has none.
    pub inode: Option<Inode>,
    /// `native-probe-last` only (always `false` elsewhere): the `ensure_valid` in progress
    /// (`Checking`), or the one that let this write begin (`Writing`), has not seen a single
    /// state in which the lock was valid. A blind pass is a writer that was told "valid" with
    /// nothing to justify it; "at most one valid writer" counts it as valid until its write
    /// ends.
    pub blind: bool,
    /// Blocking variants only (always `false` elsewhere): this thread's obtain returned (it
    /// became a writer) in the step that led to this state. Every step clears it, so "a
    /// blocking obtain returns a lock on the current lock file" can judge the very moment the
    /// obtain returns.
    pub just_obtained: bool,
}

impl Thread {
    pub(super) const IDLE: Thread = Thread {
        pc: Pc::Idle,
        inode: None,
        blind: false,
        just_obtained: false,
    };
}

/// One process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proc {
    pub alive: bool,
    /// Whether the lock path is in this process's held set (Lucene's `LOCK_HELD`; the
    /// in-memory set of `single-instance`). In `native-two-held-sets`: the first copy's set,
    /// used by threads with an even tid.
    pub held: bool,
    /// `native-two-held-sets` only (always `false` elsewhere): whether the lock path is in
    /// the second copy's held set, used by threads with an odd tid.
    pub held2: bool,
}

/// What the last step's outcome was, when a `sometimes` property needs to see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    None,
    /// An obtain failed because another thread or process held the lock (held set already
    /// contains the path, `TryLock` would block, `CreateExclusive` found the file).
    Refused,
    /// An obtain succeeded after a writer had crashed (no obtain succeeded in between).
    ObtainedAfterCrash,
}

/// The whole system. `Debug` prints a compact, readable summary (the Explorer shows it).
#[derive(PartialEq, Eq, Hash)]
pub struct State {
    /// The kernel: file table of the lock path and lock table ([`crate::file::kernel`]).
    pub os: Os,
    /// Indexed by pid.
    pub procs: Vec<Proc>,
    /// Indexed by `pid * threads + tid`; see [`State::thread`].
    pub threads: Vec<Thread>,
    /// Fault budgets left.
    pub budget: Faults,
    /// A writer crashed and no obtain has succeeded since.
    pub orphaned: bool,
    /// The notable outcome of the step that led here (cleared by every step).
    pub last: Event,
}

impl State {
    /// Number of threads per process.
    pub fn threads_per_process(&self) -> usize {
        self.threads.len() / self.procs.len()
    }

    /// Thread `t` of process `p`.
    pub fn thread(&self, p: Pid, t: Tid) -> Thread {
        self.threads[self.idx(p, t)]
    }

    pub(super) fn idx(&self, p: Pid, t: Tid) -> usize {
        p as usize * self.threads_per_process() + t as usize
    }

    pub(super) fn thread_mut(&mut self, p: Pid, t: Tid) -> &mut Thread {
        let i = self.idx(p, t);
        &mut self.threads[i]
    }

    /// The held set thread `(p, t)` uses: number `t % sets` of its process (`sets` is
    /// [`super::Variant::held_sets`]).
    pub fn held_of(&self, p: Pid, t: Tid, sets: u8) -> bool {
        let proc = self.procs[p as usize];
        if sets > 1 && t % 2 == 1 {
            proc.held2
        } else {
            proc.held
        }
    }

    pub(super) fn held_of_mut(&mut self, p: Pid, t: Tid, sets: u8) -> &mut bool {
        let proc = &mut self.procs[p as usize];
        if sets > 1 && t % 2 == 1 {
            &mut proc.held2
        } else {
            &mut proc.held
        }
    }

    /// `(pid, tid, thread)` of every thread of a live process.
    pub fn live_threads(&self) -> impl Iterator<Item = (Pid, Tid, Thread)> + '_ {
        let n = self.threads_per_process();
        self.threads.iter().enumerate().filter_map(move |(i, th)| {
            let p = (i / n) as Pid;
            self.procs[p as usize]
                .alive
                .then_some((p, (i % n) as Tid, *th))
        })
    }

    /// Threads whose obtain succeeded and which have not started to release.
    pub fn writers(&self) -> impl Iterator<Item = (Pid, Tid)> + '_ {
        self.live_threads()
            .filter(|(_, _, th)| th.pc.is_writer())
            .map(|(p, t, _)| (p, t))
    }
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            os: self.os.clone(),
            procs: self.procs.clone(),
            threads: self.threads.clone(),
            budget: self.budget,
            orphaned: self.orphaned,
            last: self.last,
        }
    }

    /// Field by field, so the process and thread tables reuse their allocations.
    fn clone_from(&mut self, source: &State) {
        self.os.clone_from(&source.os);
        self.procs.clone_from(&source.procs);
        self.threads.clone_from(&source.threads);
        self.budget = source.budget;
        self.orphaned = source.orphaned;
        self.last = source.last;
    }
}

impl fmt::Debug for State {
    /// ```text
    /// path → inode 0
    /// fds: p0t0 → inode 0 (nlink 1), p1t0 → inode 0 (nlink 1)
    /// locks: ofd inode 0 by p0t0
    /// p0 alive (held set: path): t0 Holding [inode 0], t1 Idle
    /// p1 alive (held set: -): t0 Blocked [inode 0], t1 Idle
    /// faults left: crash=1,restart=1; last step: contention
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use super::kernel::LockRec;
        match self.os.path_inode() {
            Some(i) if self.os.is_written(i) => writeln!(f, "path → inode {i} (written to)")?,
            Some(i) => writeln!(f, "path → inode {i}")?,
            None => writeln!(f, "path → (no file)")?,
        }
        let fds: Vec<String> = self
            .os
            .descs()
            .map(|(d, i)| {
                let nlink = self.os.fstat(d).map_or(0, |st| st.nlink);
                format!("p{}t{} → inode {i} (nlink {nlink})", d.pid, d.slot)
            })
            .collect();
        writeln!(
            f,
            "fds: {}",
            if fds.is_empty() {
                "-".to_string()
            } else {
                fds.join(", ")
            }
        )?;
        let locks: Vec<String> = self
            .os
            .locks()
            .map(|l| match l {
                LockRec::Flock { inode, desc } => {
                    format!("flock inode {inode} by p{}t{}", desc.pid, desc.slot)
                }
                LockRec::Ofd { inode, desc } => {
                    format!("ofd inode {inode} by p{}t{}", desc.pid, desc.slot)
                }
                LockRec::Posix { inode, pid } => format!("posix inode {inode} by p{pid}"),
            })
            .collect();
        writeln!(
            f,
            "locks: {}",
            if locks.is_empty() {
                "-".to_string()
            } else {
                locks.join(", ")
            }
        )?;
        let n = self.threads_per_process();
        for (p, proc) in self.procs.iter().enumerate() {
            let threads: Vec<String> = self.threads[p * n..(p + 1) * n]
                .iter()
                .enumerate()
                .map(|(t, th)| {
                    let blind = match (th.blind, th.just_obtained) {
                        (true, _) => " blind",
                        (false, true) => " just obtained",
                        (false, false) => "",
                    };
                    match th.inode {
                        Some(i) => format!("t{t} {:?}{blind} [inode {i}]", th.pc),
                        None => format!("t{t} {:?}{blind}", th.pc),
                    }
                })
                .collect();
            let second = if proc.held2 {
                ", second held set: path"
            } else {
                ""
            };
            writeln!(
                f,
                "p{p} {} (held set: {}{second}): {}",
                if proc.alive { "alive" } else { "crashed" },
                if proc.held { "path" } else { "-" },
                threads.join(", ")
            )?;
        }
        let last = match self.last {
            Event::None => "",
            Event::Refused => "; last step: contention",
            Event::ObtainedAfterCrash => "; last step: obtained after a writer crashed",
        };
        write!(
            f,
            "faults left: {}{}{last}",
            self.budget,
            if self.orphaned {
                "; a writer crashed"
            } else {
                ""
            }
        )
    }
}
