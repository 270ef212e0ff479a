//! What one model instance is: the protocol [`Variant`], the OS lock kind, how many processes
//! and threads, and the fault budgets ([`Faults`]).

use std::fmt;

use super::kernel::{LockKind, Pid};
#[cfg(doc)]
use super::State;
#[cfg(doc)]
use stateright::Model;

/// A protocol variant (command-line name in [`Variant::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Modern Lucene `NativeFSLockFactory` and the `lockwright` crate.
    Native,
    /// Lucene 4.10's order: held-set entry removed before the descriptor is closed
    /// (LUCENE-6507).
    Native410,
    /// Lucene 4.8: the lock file is deleted after release (LUCENE-5612).
    NativeDeleteOnRelease,
    /// No held set (LUCENE-5738).
    NativeNoHeldSet,
    /// `SimpleFSLockFactory`: the lock is the existence of a file created exclusively.
    Simple,
    /// `SingleInstanceLockFactory`: an in-memory set per process, no OS lock.
    SingleInstance,
    /// `NoLockFactory`: obtain always succeeds.
    NoLock,
    /// `native`, but even pids lock with `flock` and odd pids with POSIX `fcntl`.
    Mixed,
    /// `native`'s blocking obtain (`obtain_blocking`): `HeldInsert` waits (is enabled only
    /// once the path is not in the held set), `TryLock` waits (is enabled only once it would
    /// be acquired), then `Recheck` compares the path's inode with the locked descriptor's
    /// (`stat` against `fstat`, as BSD's `flopen` does): the same → `Holding`; the file was
    /// replaced or unlinked during the wait → `Unlock` → `Close` → `Open` and lock again,
    /// staying in the held set. Never refused; fails only on an OS error (`lock-error`).
    NativeBlocking,
    /// Defect `BlockingNoRecheck`: `native-blocking` without the `Recheck`, the crate's
    /// `obtain_blocking` without its re-check: the lock call's return ends the obtain, so a lock
    /// file replaced or unlinked during the wait leaves the caller holding a lock on the old
    /// inode (only its next `ensure_valid` tells).
    NativeBlockingNoRecheck,
    /// Two copies of the crate in one process (two semver-incompatible versions, each with
    /// its own static held set): threads with an even tid use the first copy's held set,
    /// threads with an odd tid the second's. Under POSIX rules that is LUCENE-5738 again.
    NativeTwoHeldSets,
    /// Defect `ProbeLast`: `ensure_valid` probes LAST (held set → `fstat` → `stat` →
    /// probe), the order of this project's first version. Its four checks are separate steps
    /// (`Check`), so a pass can rest on checks that each held at a different moment, at none
    /// of which the lock was valid (found by shuttle's refinement replay).
    NativeProbeLast,
    /// Defect `SkipInodeCheck`: `ensure_valid` makes no `fstat`/`stat` checks (link count,
    /// length, the path still names our inode): only the probe and the held set.
    NativeSkipInodeCheck,
    /// Defect `SkipHeldContains`: `ensure_valid` does not check the held set. Its state
    /// space is `native`'s, state for state (`docs/model.md`: only the holder removes its
    /// entry, so the check never fails for a writer).
    NativeSkipHeldContains,
    /// Defect `CarryOnAfterLockError`: an OS error from the lock call (`ENOLCK`, `EIO`) is
    /// taken as "acquired": the thread carries on as a writer without a lock.
    NativeCarryOnAfterLockError,
}

impl Variant {
    pub const ALL: [Variant; 15] = [
        Variant::Native,
        Variant::Native410,
        Variant::NativeDeleteOnRelease,
        Variant::NativeNoHeldSet,
        Variant::Simple,
        Variant::SingleInstance,
        Variant::NoLock,
        Variant::Mixed,
        Variant::NativeBlocking,
        Variant::NativeBlockingNoRecheck,
        Variant::NativeTwoHeldSets,
        Variant::NativeProbeLast,
        Variant::NativeSkipInodeCheck,
        Variant::NativeSkipHeldContains,
        Variant::NativeCarryOnAfterLockError,
    ];

    /// The command-line / docs name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Native => "native",
            Variant::Native410 => "native-4.10",
            Variant::NativeDeleteOnRelease => "native-delete-on-release",
            Variant::NativeNoHeldSet => "native-no-held-set",
            Variant::Simple => "simple",
            Variant::SingleInstance => "single-instance",
            Variant::NoLock => "no-lock",
            Variant::Mixed => "mixed",
            Variant::NativeBlocking => "native-blocking",
            Variant::NativeBlockingNoRecheck => "native-blocking-no-recheck",
            Variant::NativeTwoHeldSets => "native-two-held-sets",
            Variant::NativeProbeLast => "native-probe-last",
            Variant::NativeSkipInodeCheck => "native-skip-inode-check",
            Variant::NativeSkipHeldContains => "native-skip-held-contains",
            Variant::NativeCarryOnAfterLockError => "native-carry-on-after-lock-error",
        }
    }

    /// Parses [`Variant::name`].
    pub fn from_name(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }

    /// Whether the variant takes an OS advisory lock (and so depends on the lock kind).
    pub fn uses_os_lock(self) -> bool {
        !matches!(
            self,
            Variant::Simple | Variant::SingleInstance | Variant::NoLock
        )
    }

    /// Whether the obtain waits instead of being refused (`native-blocking`,
    /// `native-blocking-no-recheck`).
    pub fn blocks(self) -> bool {
        matches!(
            self,
            Variant::NativeBlocking | Variant::NativeBlockingNoRecheck
        )
    }

    /// Whether a blocking obtain re-checks the path's identity after its lock call and
    /// retries on a replaced file (`native-blocking`).
    pub fn rechecks(self) -> bool {
        self == Variant::NativeBlocking
    }

    /// Whether `ensure_valid`'s checks are separate steps (`Check`) rather than one atomic
    /// `EnsureValid`: only the broken order, `native-probe-last`. The correct order is atomic
    /// by linearization (see `docs/protocol.md`, "Why the probe comes first").
    pub fn splits_ensure_valid(self) -> bool {
        self == Variant::NativeProbeLast
    }

    /// How many held sets a process has: 2 for `native-two-held-sets` (thread `t` uses
    /// number `t % 2`), else 1.
    pub fn held_sets(self) -> u8 {
        if self == Variant::NativeTwoHeldSets {
            2
        } else {
            1
        }
    }

    /// Whether the variant keeps a per-process held set.
    pub fn uses_held_set(self) -> bool {
        (self.uses_os_lock() && self != Variant::NativeNoHeldSet) || self == Variant::SingleInstance
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Fault budgets: how many of each fault may happen in one run (all processes together).
/// In [`State::budget`] the same type counts what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Faults {
    /// `Crash(p)`.
    pub crash: u8,
    /// `Restart(p)` of a crashed process.
    pub restart: u8,
    /// `UnlinkLockFile`.
    pub unlink: u8,
    /// `ReplaceLockFile`.
    pub replace: u8,
    /// `ForeignOpenClose(p)`.
    pub foreign: u8,
    /// `lose-lock`: `LoseLock(p)`, a process's locks vanish (an NFSv4 lease lost).
    pub lose_lock: u8,
    /// `lock-error`: `LockFails(p, t)`, the lock call fails with `ENOLCK` or `EIO`.
    pub lock_error: u8,
    /// `unlock-error`: `UnlockFails(p, t)`, `unlock` fails with `EIO` (the lock stays).
    pub unlock_error: u8,
    /// `close-error`: `CloseFails(p, t)`, `close` fails with `EIO` (the descriptor goes anyway).
    pub close_error: u8,
    /// `write`: `WriteLockFile`, someone writes into the lock file.
    pub write: u8,
}

impl Faults {
    /// No faults at all.
    pub const NONE: Faults = Faults {
        crash: 0,
        restart: 0,
        unlink: 0,
        replace: 0,
        foreign: 0,
        lose_lock: 0,
        lock_error: 0,
        unlock_error: 0,
        close_error: 0,
        write: 0,
    };

    /// The command-line names of the budgets, in display order, with their values.
    pub fn named(&self) -> [(&'static str, u8); 10] {
        [
            ("crash", self.crash),
            ("restart", self.restart),
            ("unlink", self.unlink),
            ("replace", self.replace),
            ("foreign", self.foreign),
            ("lose-lock", self.lose_lock),
            ("lock-error", self.lock_error),
            ("unlock-error", self.unlock_error),
            ("close-error", self.close_error),
            ("write", self.write),
        ]
    }

    /// Parses `crash=2,restart=2,unlink=1,replace=1,foreign=1` (any subset, any order; `none`
    /// or the empty string for no faults). The other budgets: `lose-lock`, `lock-error`,
    /// `unlock-error`, `close-error`, `write`.
    ///
    /// # Errors
    /// A message naming the bad item.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = Faults::NONE;
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item == "none" {
                continue;
            }
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("fault `{item}`: expected NAME=COUNT"))?;
            let n: u8 = value
                .trim()
                .parse()
                .map_err(|_| format!("fault `{item}`: COUNT must be 0..=255"))?;
            match key.trim() {
                "crash" => f.crash = n,
                "restart" => f.restart = n,
                "unlink" => f.unlink = n,
                "replace" => f.replace = n,
                "foreign" => f.foreign = n,
                "lose-lock" => f.lose_lock = n,
                "lock-error" => f.lock_error = n,
                "unlock-error" => f.unlock_error = n,
                "close-error" => f.close_error = n,
                "write" => f.write = n,
                other => {
                    return Err(format!(
                        "unknown fault `{other}` (expected crash, restart, unlink, replace, \
                         foreign, lose-lock, lock-error, unlock-error, close-error, write)"
                    ))
                }
            }
        }
        Ok(f)
    }
}

impl fmt::Display for Faults {
    /// The [`Faults::parse`] syntax, listing only non-zero budgets (`none` if all are zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .named()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        if items.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&items.join(","))
        }
    }
}

/// One model instance: the Stateright [`Model`] is implemented on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Scenario {
    pub variant: Variant,
    /// The lock kind every process uses (ignored by `mixed`, `simple`, `single-instance`,
    /// `no-lock`).
    pub os: LockKind,
    pub processes: u8,
    pub threads: u8,
    pub faults: Faults,
    /// Whether the checker merges states that differ only by renaming processes (and the
    /// threads inside a process): see `file::symmetry`. Off in [`Scenario::new`], so the
    /// pinned counterexamples of the verdict table are those of the full space.
    pub symmetry: bool,
}

impl Scenario {
    /// `variant` × `os` with 2 processes × 2 threads and no faults.
    pub fn new(variant: Variant, os: LockKind) -> Scenario {
        Scenario {
            variant,
            os,
            processes: 2,
            threads: 2,
            faults: Faults::NONE,
            symmetry: false,
        }
    }

    /// The same scenario with these fault budgets.
    pub fn with_faults(self, faults: Faults) -> Scenario {
        Scenario { faults, ..self }
    }

    /// The same scenario with symmetry reduction on or off.
    pub fn with_symmetry(self, symmetry: bool) -> Scenario {
        Scenario { symmetry, ..self }
    }

    /// The same scenario with `processes` × `threads`.
    pub fn with_parties(self, processes: u8, threads: u8) -> Scenario {
        Scenario {
            processes,
            threads,
            ..self
        }
    }

    /// The standard scenario (what `lockwright check` runs without arguments): `native` ×
    /// `ofd`, 3 processes × 2 threads, two crashes, two restarts, two foreign open-closes,
    /// symmetry reduction on. Every property holds.
    pub fn standard() -> Scenario {
        Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(3, 2)
            .with_faults(Faults {
                crash: 2,
                restart: 2,
                foreign: 2,
                ..Faults::NONE
            })
            .with_symmetry(true)
    }

    /// Every fault together (`crash=2,restart=2,unlink=1,replace=1,foreign=1`), 3 processes
    /// × 2 threads, symmetry on: what plain `cargo test` checks for every OS lock kind.
    /// Unlinking or replacing the lock file gives two writers by design; only
    /// `ensure_valid` can tell (`docs/model.md`).
    pub fn all_faults(os: LockKind) -> Scenario {
        Scenario::new(Variant::Native, os)
            .with_parties(3, 2)
            .with_faults(Faults {
                crash: 2,
                restart: 2,
                unlink: 1,
                replace: 1,
                foreign: 1,
                ..Faults::NONE
            })
            .with_symmetry(true)
    }

    /// The deep scenario (`LOCKWRIGHT_DEEP=1`, `lockwright check --deep`): `native` × `ofd`,
    /// 4 processes × 2 threads, three crashes and restarts, and every other fault, symmetry
    /// on. (More threads per process add nothing: the held set lets one thread per process
    /// past `HeldInsert`, and with symmetry the others are alike.)
    pub fn deep() -> Scenario {
        Scenario::new(Variant::Native, LockKind::Ofd)
            .with_parties(4, 2)
            .with_faults(Faults {
                crash: 3,
                restart: 3,
                unlink: 1,
                replace: 1,
                foreign: 2,
                ..Faults::NONE
            })
            .with_symmetry(true)
    }

    /// The lock kind process `p` uses (`mixed`: `flock` for even, POSIX for odd pids).
    pub fn kind_of(&self, p: Pid) -> LockKind {
        match self.variant {
            Variant::Mixed if p.is_multiple_of(2) => LockKind::Flock,
            Variant::Mixed => LockKind::Posix,
            _ => self.os,
        }
    }

    /// A one-line name, e.g. `native × ofd, 2 processes × 2 threads, faults crash=1`.
    pub fn label(&self) -> String {
        let kind = match self.variant {
            Variant::Mixed => " × flock+posix".to_string(),
            v if v.uses_os_lock() => format!(" × {}", self.os),
            _ => String::new(),
        };
        let symmetry = if self.symmetry { ", symmetry" } else { "" };
        format!(
            "{}{kind}, {} processes × {} threads, faults {}{symmetry}",
            self.variant, self.processes, self.threads, self.faults
        )
    }
}
