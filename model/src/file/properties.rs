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
/// Blocking variants only: at the moment a blocking obtain returns, the lock path names the
/// inode its descriptor locked (judged from the kernel state: the path's inode against the
/// descriptor's).
pub const BLOCKING_OBTAIN_LOCKS_CURRENT_FILE: &str =
    "a blocking obtain returns a lock on the current lock file";
/// Blocking variants only: a blocking obtain's re-check finds that the file it locked is no
/// longer at the path (replaced or unlinked during the wait), so it unlocks, closes and opens
/// the path again. Applies to `native-blocking` only (the other has no re-check).
pub const BLOCKING_OBTAIN_REOPENS: &str = "a blocking obtain re-opens a replaced file";

/// The `always` properties of every file scenario, in report order.
pub const ALWAYS: [&str; 4] = [
    AT_MOST_ONE_WRITER,
    AT_MOST_ONE_VALID_WRITER,
    WRITES_ARE_EXCLUSIVE,
    NO_STALE_LOCK,
];

/// The `sometimes` properties of every file scenario, in report order.
pub const SOMETIMES: [&str; 3] = [WRITER_EXISTS, WRITER_AFTER_CRASH, CONTENTION_SEEN];

/// Every `always` property a file scenario can have, in report order: [`ALWAYS`], then
/// the blocking variants' own ([`super::Variant::blocks`]).
pub const FAMILY_ALWAYS: [&str; 5] = [
    AT_MOST_ONE_WRITER,
    AT_MOST_ONE_VALID_WRITER,
    WRITES_ARE_EXCLUSIVE,
    NO_STALE_LOCK,
    BLOCKING_OBTAIN_LOCKS_CURRENT_FILE,
];

/// Every `sometimes` property a file scenario can have, in report order.
pub const FAMILY_SOMETIMES: [&str; 4] = [
    WRITER_EXISTS,
    WRITER_AFTER_CRASH,
    CONTENTION_SEEN,
    BLOCKING_OBTAIN_REOPENS,
];

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

    /// `held_contains(path)` in process `p` (its first held set; see
    /// [`Scenario::observe_held_contains_of`]).
    pub fn observe_held_contains(&self, s: &State, p: Pid) -> bool {
        s.procs[p as usize].held
    }

    /// `held_contains(path)` made by thread `(p, t)`: in the held set it uses (the second one
    /// for odd tids in `native-two-held-sets`).
    pub fn observe_held_contains_of(&self, s: &State, p: Pid, t: Tid) -> bool {
        s.held_of(p, t, self.variant.held_sets())
    }

    /// `native-probe-last`: whether thread `(p, t)`'s `ensure_valid` check number `n` passes
    /// in `s` (0: the held set contains the path; 1: `fstat` shows a linked, empty file; 2:
    /// `stat` finds our inode at the path; 3: the probe shows no conflicting owner). All four
    /// together at one moment are [`Scenario::observe_ensure_valid`].
    pub fn observe_check(&self, s: &State, p: Pid, t: Tid, n: u8) -> bool {
        let stat = s.os.fstat(Self::desc(p, t));
        match n {
            0 => self.observe_held_contains_of(s, p, t),
            1 => stat.is_some_and(|st| st.nlink > 0 && !st.written),
            2 => stat.is_some_and(|st| s.os.path_inode() == Some(st.inode)),
            _ => matches!(
                self.observe_probe(s, p, t),
                ProbeResult::NoConflict | ProbeResult::Unknown
            ),
        }
    }

    /// Whether thread `(p, t)`'s `ensure_valid` would pass now (false if it holds nothing).
    ///
    /// - native variants: the held set contains the path (not `native-no-held-set`,
    ///   `native-skip-held-contains`); the descriptor's inode is still linked, empty, and is
    ///   the inode at the path (not `native-skip-inode-check`); for POSIX and OFD, `probe`
    ///   shows no conflicting owner.
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
                if v.uses_held_set()
                    && v != Variant::NativeSkipHeldContains
                    && !self.observe_held_contains_of(s, p, t)
                {
                    return false;
                }
                let Some(stat) = s.os.fstat(Self::desc(p, t)) else {
                    return false;
                };
                (v == Variant::NativeSkipInodeCheck
                    || stat.nlink > 0 && !stat.written && s.os.path_inode() == Some(stat.inode))
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
                let proc = s.procs[p as usize];
                !(v.uses_held_set() && (proc.held || proc.held2))
                    && s.os.fresh_lock_would_succeed(p, self.kind_of(p))
            }
        }
    }

    /// Whether writer `(p, t)` counts for "at most one valid writer": its `ensure_valid` would
    /// pass now, or (`native-probe-last`) it is writing on a pass that never saw the lock
    /// valid ([`crate::file::Thread::blind`]): it was told "valid" and nothing justifies it.
    pub fn counts_as_valid(&self, s: &State, p: Pid, t: Tid) -> bool {
        let th = s.thread(p, t);
        (th.blind && th.pc == super::Pc::Writing) || self.observe_ensure_valid(s, p, t)
    }

    /// "a blocking obtain returns a lock on the current lock file": every thread whose
    /// obtain returned in the step that led to `s` ([`crate::file::Thread::just_obtained`])
    /// has its descriptor on the inode the path names. Judged from the kernel alone (the
    /// path's inode against the descriptor's), not from what the obtain compared.
    pub fn blocking_obtains_lock_current_file(&self, s: &State) -> bool {
        s.live_threads()
            .filter(|(_, _, th)| th.just_obtained)
            .all(|(p, t, _)| {
                let locked = s.os.desc_inode(Self::desc(p, t));
                locked.is_some() && locked == s.os.path_inode()
            })
    }

    /// Whether thread `(p, t)` of a live process is waiting in a blocking call
    /// (`native-blocking`): for the held set (`Idle`, the path in its held set) or for the OS
    /// lock (`Opened`, another owner holds a conflicting lock).
    pub fn is_waiting(&self, s: &State, p: Pid, t: Tid) -> bool {
        let kind = super::steps::step(self.variant, s.thread(p, t).pc).kind;
        self.waits(s, p, t, kind)
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
