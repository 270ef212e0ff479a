//! File locks: the writer-lock protocol family of Lucene's `write.lock` (a per-process held
//! set plus an OS advisory lock on a lock file), as a Stateright model.
//!
//! One lock path in one directory, `processes` processes with `threads` threads each. Every
//! thread loops forever: obtain the lock, and while holding it, `EnsureValid` then `Write`
//! (any number of times), then release. The protocol variants are the ones Lucene shipped or
//! that are commonly written (see `docs/model.md` for the verdict table):
//!
//! | variant | obtain | release | incident |
//! |---|---|---|---|
//! | `native` | `HeldInsert` → `Open` → `TryLock` (would block: `Close` → `HeldRemove`) | `Unlock` → `Close` → `HeldRemove` | Lucene 9.x/10.x, the `lockwright` crate |
//! | `native-4.10` | as `native`, but would block: `HeldRemove` → `Close` | `Unlock` → `HeldRemove` → `Close` | LUCENE-6507 |
//! | `native-delete-on-release` | as `native` | as `native`, then `Unlink` | LUCENE-5612 |
//! | `native-no-held-set` | `Open` → `TryLock` (would block: `Close`) | `Unlock` → `Close` | LUCENE-5738 |
//! | `simple` | `CreateExclusive` | `Unlink` if the path still names our file, else `ReleaseRefused` | SimpleFSLockFactory |
//! | `single-instance` | `HeldInsert` (in-memory only) | `HeldRemove` | SingleInstanceLockFactory |
//! | `no-lock` | `Obtain` (always succeeds) | `Release` | NoLockFactory |
//! | `mixed` | `native`; even pids lock with `flock`, odd pids with POSIX `fcntl` | `native` | flock and `fcntl` locks ignore each other on Linux |
//! | `native-blocking` | `HeldInsert` (waits) → `Open` → `TryLock` (waits) → `Recheck` (another file at the path: `Unlock` → `Close` → `Open` again) | `native` | the crate's `obtain_blocking`; the re-check is BSD `flopen`'s |
//! | `native-blocking-no-recheck` | `HeldInsert` (waits) → `Open` → `TryLock` (waits) | `native` | `obtain_blocking` without its re-check: a lock on a replaced inode |
//!
//! Faults, each with a budget so the space is finite: `Crash(p)` (the kernel closes p's
//! descriptors and drops its locks; its held set is gone), `Restart(p)`, `UnlinkLockFile` and
//! `ReplaceLockFile` (an operator, a backup tool), `ForeignOpenClose(p)` (other code in p opens
//! and closes the lock file).
//!
//! All OS semantics come from [`kernel`], shared with the simulated OS of the loom/shuttle
//! checks. Each protocol step is one mutating call of the real implementation's `System`
//! interface (`lockwright::file::sys::System`), so a recorded run of the real code maps onto a model path:
//! see [`Action`] for the mapping.

//!
//! The files, read in this order: [`kernel`] (the Linux semantics), [`scenario`] (what one
//! instance is), [`state`], [`action`], [`steps`] (the step table: every difference between
//! the variants), [`transitions`] (what each action does), [`properties`] (the named
//! properties and the observations of read-only calls), [`model`] (the Stateright `Model`),
//! [`describe`] (counterexample listings), [`symmetry`] and [`packed`] (the checker's keys for
//! a state: with and without symmetry reduction). `docs/model.md` has the verdict table.

pub mod action;
pub mod describe;
pub mod kernel;
pub mod model;
pub mod packed;
pub mod properties;
pub mod scenario;
pub mod state;
pub mod steps;
pub mod symmetry;
pub mod transitions;

pub use action::Action;
pub use kernel::{LockKind, Pid};
pub use properties::{
    ALWAYS, AT_MOST_ONE_VALID_WRITER, AT_MOST_ONE_WRITER, BLOCKING_OBTAIN_LOCKS_CURRENT_FILE,
    BLOCKING_OBTAIN_REOPENS, CONTENTION_SEEN, FAMILY_ALWAYS, FAMILY_SOMETIMES, NO_STALE_LOCK,
    SOMETIMES, WRITER_AFTER_CRASH, WRITER_EXISTS, WRITES_ARE_EXCLUSIVE,
};
pub use scenario::{Faults, Scenario, Variant};
pub use state::{Event, Pc, Proc, State, Thread, Tid};
pub use steps::{step, Step, StepKind};
