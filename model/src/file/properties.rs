//! The named properties, and what the read-only calls of the real implementation observe
//! (the refinement replayer compares them with the model state; the properties use them).

use stateright::Model;

use super::kernel::{Desc, Inode, LockKind, ProbeResult};
use super::{Pid, Scenario, State, Tid, Variant};

pub const AT_MOST_ONE_WRITER: &str = "at most one writer";
pub const AT_MOST_ONE_VALID_WRITER: &str = "at most one valid writer";
pub const WRITES_ARE_EXCLUSIVE: &str = "writes are exclusive";
pub const NO_STALE_LOCK: &str = "no stale lock";
pub const WRITER_EXISTS: &str = "writer exists";
pub const WRITER_AFTER_CRASH: &str = "writer after crash";
pub const CONTENTION_SEEN: &str = "contention seen";

/// The `always` properties, in report order.
pub const ALWAYS: [&str; 4] = [
    AT_MOST_ONE_WRITER,
    AT_MOST_ONE_VALID_WRITER,
    WRITES_ARE_EXCLUSIVE,
    NO_STALE_LOCK,
];

/// The `sometimes` properties, in report order.
pub const SOMETIMES: [&str; 3] = [WRITER_EXISTS, WRITER_AFTER_CRASH, CONTENTION_SEEN];

impl Scenario {
    pub(super) fn desc(p: Pid, t: Tid) -> Desc {
        Desc { pid: p, slot: t }
    }

    /// `stat(path)`: the inode at the lock path, if any.
    pub fn observe_stat(&self, s: &State) -> Option<Inode> {
        s.os.path_inode()
    }

    /// `fstat(file)` of thread `(p, t)`'s descriptor; `None` if it has none open.
    pub fn observe_fstat(&self, s: &State, p: Pid, t: Tid) -> Option<super::kernel::DescStat> {
        s.os.fstat(Self::desc(p, t))
    }

    /// `probe(file, kind)` through thread `(p, t)`'s descriptor with `p`'s lock kind.
    /// `flock` answers [`ProbeResult::Unknown`] (and so does NFS `flock` as the caller sees it).
    pub fn observe_probe(&self, s: &State, p: Pid, t: Tid) -> ProbeResult {
        match self.kind_of(p) {
            LockKind::Flock | LockKind::NfsFlock => ProbeResult::Unknown,
            kind => s.os.probe(Self::desc(p, t), kind),
        }
    }

    /// `held_contains(path)` in process `p`.
    pub fn observe_held_contains(&self, s: &State, p: Pid) -> bool {
        s.procs[p as usize].held
    }

    /// Whether thread `(p, t)`'s `ensure_valid` would pass now (false if it holds nothing).
    ///
    /// - native variants: the held set contains the path (not `native-no-held-set`); the
    ///   descriptor's inode is still linked and is the inode at the path; for POSIX and OFD,
    ///   `probe` shows no conflicting owner.
    /// - simple: the path still names the inode this thread created.
    /// - single-instance: the in-memory set contains the path. no-lock: always.
    pub fn observe_ensure_valid(&self, s: &State, p: Pid, t: Tid) -> bool {
        if !s.procs[p as usize].alive {
            return false;
        }
        let th = s.thread(p, t);
        if !th.pc.is_writer() {
            return false;
        }
        match self.variant {
            Variant::Simple => s.os.path_inode().is_some() && s.os.path_inode() == th.inode,
            Variant::SingleInstance => s.procs[p as usize].held,
            Variant::NoLock => true,
            v => {
                if v.uses_held_set() && !s.procs[p as usize].held {
                    return false;
                }
                let Some(stat) = s.os.fstat(Self::desc(p, t)) else {
                    return false;
                };
                stat.nlink > 0
                    && s.os.path_inode() == Some(stat.inode)
                    && matches!(
                        self.observe_probe(s, p, t),
                        ProbeResult::NoConflict | ProbeResult::Unknown
                    )
            }
        }
    }

    /// Whether a brand-new obtain by process `p` (no thread of it active) would succeed now.
    pub fn fresh_obtain_would_succeed(&self, s: &State, p: Pid) -> bool {
        match self.variant {
            Variant::Simple => s.os.path_inode().is_none(),
            Variant::SingleInstance => !s.procs[p as usize].held,
            Variant::NoLock => true,
            v => {
                !(v.uses_held_set() && s.procs[p as usize].held)
                    && s.os.fresh_lock_would_succeed(p, self.kind_of(p))
            }
        }
    }

    /// The names of the `always` properties that `s` violates (the replayer checks every
    /// state of a recorded run with this).
    pub fn violated(&self, s: &State) -> Vec<&'static str> {
        self.properties()
            .into_iter()
            .filter(|p| p.expectation == stateright::Expectation::Always && !(p.condition)(self, s))
            .map(|p| p.name)
            .collect()
    }
}
