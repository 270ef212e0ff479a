//! Refinement: every simulated run of the real code is a path of the Stateright model.
//!
//! `check` feeds a recording ([`Step`]s in linearization order) through the model's
//! transition function (`lockwright_model::file::Scenario::step`), step by step:
//!
//! - a mutating call of thread `(p, t)` is the model action of the same name
//!   (`held_insert` → `HeldInsert(p, t)`, `open_lock_file` → `Open`, `try_lock` → `TryLock`,
//!   `unlock` → `Unlock`, `close` → `Close`, `held_remove` → `HeldRemove`, `unlink` →
//!   `Unlink`, `create_new_file` → `CreateExclusive`): it must be enabled, and its result must
//!   be the model's (`held_insert` refused ⇔ the model stays `Idle`; `try_lock` acquired ⇔ the
//!   model reaches `Holding`; the inode opened is the model's);
//! - an observation (`stat`, `fstat`, `probe`, `held_contains`) must equal the model's
//!   `observe_*` in the state at that moment; `create_dir_all`/`canonicalize_dir` of the one
//!   simulated directory are constant;
//! - injected faults are the model's fault actions (a no-op fault — restarting a live process,
//!   unlinking a missing file — is no step in either);
//! - harness events: an obtain that returned `Ok` must leave the model thread a writer, a
//!   refused one `Idle`. The real `ensure_valid` makes several observations, the model's
//!   `EnsureValid` is one atomic step: a call that returned `Ok` is linearized at the LATEST
//!   state during the call in which the model's `observe_ensure_valid` holds (closest to the
//!   write that follows; none → divergence), and its write ends at the recorded `Write`. A
//!   call that returned an error must have seen a state in which the model says "invalid".
//!
//! Blocking calls (`native-blocking`): `held_insert_wait` is `HeldInsert` and `lock_blocking`
//! is `TryLock`; the model enables them only when they complete (the path absent; the lock
//! would be acquired), so a recorded return at a state where they would wait is a divergence.
//! The `stat(path)` that follows a returned `lock_blocking` (the thread is at `Pc::Locked`) is
//! the model's `Recheck`, compared as an observation first: the path still names the locked
//! inode ⇔ the model thread goes to `Holding`; otherwise the retry's `unlock`, `close` and
//! `open_lock_file` must be the model's next steps (`native-blocking-no-recheck` makes no such
//! `stat`, and its obtain returns at the lock call).
//!
//! Failing calls: a recorded `try_lock`/`lock_blocking`, `unlock` or `close` that returned an
//! injected errno is `LockFails`, `UnlockFails` or `CloseFails` (its budget is the number of
//! such calls in the recording); the armed injection itself is no step. `LoseLock(p)` and
//! `WriteLockFile` are the model's faults of the same name (a no-op one is no step).
//!
//! `native-probe-last` splits `ensure_valid`: the call is the model's `BeginCheck`, taken where
//! the other variants' linearization window starts (right after the thread's previous harness
//! event), and a holder's `held_contains`, `fstat`, `stat` and `probe`, in that order, are its
//! `Check` steps (each compared with the model's observation first); the call's result must
//! be the model thread's (`Ok` ⇔ `Writing`), and no linearization is needed. The model's "at
//! most one valid writer" counts a write that began on a pass that never saw a valid state
//! (`Thread::blind`): exactly a call that the linearization of the correct variant would
//! reject ("returned Ok, but the model says the lock was invalid in every state during the
//! call"), since both look at the same states.
//!
//! SimpleFs (`Variant::Simple`): `create_new_file` → `CreateExclusive` (`Ok` → `Holding`,
//! `AlreadyExists` → stays `Idle`); `stat`/`read_file` are observations (`read_file` records
//! the inode it read: contents are per inode, and every create writes a fresh record, so "the
//! record is ours" ⇔ "the inode is the one this thread created"). The model's release is ONE
//! atomic step (`Unlink` if the path names our file, else `ReleaseRefused`); the real one is
//! `stat → read_file → unlink`. So after a thread's `Release` event: the first of its release
//! observations that shows another file (or none) is where its release is refused
//! (`ReleaseRefused` is taken right there); its `unlink` is the model's `Unlink`, which the
//! model allows only if the path still names the thread's file. If the path changed between
//! the real check and the real unlink (only an injected unlink/replace fault can do that),
//! the run has left the model through the check-then-unlink window: reported as a divergence
//! whose reason starts with [`CHECK_THEN_UNLINK_WINDOW`]. The harness event `Closed { ok }`
//! must agree: `ok` ⇔ the release was an `Unlink`.
//!
//! After every step the whole kernel state of the model (lock path, descriptors, lock table,
//! up to the renumbering of inode generations the model does to stay finite), the held sets
//! and which processes are alive must equal the simulation's, and every enforced `always`
//! property must hold. The first mismatch is reported with its step number.
//!
//! The simulation side is rebuilt from the recording alone (a shadow `Os` fed the recorded
//! calls, whose answers must be the recorded ones), so a recording can be replayed without the
//! run that made it — e.g. a counterexample printed by a failing loom or shuttle test.

mod linearize;
mod shadow;
mod stepper;
#[cfg(test)]
mod tests;

use lockwright_model::file::kernel::LockKind;
use lockwright_model::file::{Action, Faults, Scenario, State, Variant, FAMILY_ALWAYS};

pub use crate::refine::{Divergence, Summary};

use super::record::{format_trace, Actor, Call, Outcome, Step};
use linearize::{call_starts, linearization_points};
use stepper::Replay;

/// The name of the divergence of a SimpleFs release whose check (`stat`, `read_file`) saw its
/// own file but whose `unlink` found the path changed: the model's simple release checks and
/// unlinks atomically; the real code cannot (see the module docs).
pub const CHECK_THEN_UNLINK_WINDOW: &str = "check-then-unlink window";

/// The model instance a recording is checked against.
#[derive(Clone, Debug)]
pub struct Refinement {
    pub variant: Variant,
    /// The model lock kind (`LockKind::NfsFlock` for simulated NFS `flock`).
    pub kind: LockKind,
    pub processes: u8,
    /// The `always` properties to check on every state (default: all). Scenarios with faults
    /// no protocol can prevent (the lock file deleted or replaced; foreign code dropping a
    /// POSIX lock) enforce the subset the model proves for them; see the tests.
    pub enforce: Vec<&'static str>,
}

impl Refinement {
    /// All `always` properties enforced.
    pub fn new(variant: Variant, kind: LockKind, processes: u8) -> Self {
        Refinement {
            variant,
            kind,
            processes,
            enforce: FAMILY_ALWAYS.to_vec(),
        }
    }

    /// Only these `always` properties enforced.
    pub fn enforcing(mut self, props: &[&'static str]) -> Self {
        self.enforce = props.to_vec();
        self
    }

    /// The model scenario for `trace`: threads per process from the highest tid used, fault
    /// budgets = the faults the recording injects.
    pub fn scenario(&self, trace: &[Step]) -> Scenario {
        let threads = trace
            .iter()
            .filter_map(|s| match s.actor {
                Actor::Thread { tid, .. } => Some(tid + 1),
                Actor::Env => None,
            })
            .max()
            .unwrap_or(1);
        let mut faults = Faults::NONE;
        for s in trace {
            let slot = match s.call {
                Call::Crash(_) => &mut faults.crash,
                Call::Restart(_) => &mut faults.restart,
                Call::UnlinkLockFile => &mut faults.unlink,
                Call::ReplaceLockFile => &mut faults.replace,
                Call::ForeignOpenClose(_) => &mut faults.foreign,
                Call::LoseLock(_) => &mut faults.lose_lock,
                Call::WriteLockFile => &mut faults.write,
                Call::TryLock(_) | Call::LockBlocking(_)
                    if matches!(s.outcome, Outcome::Errno(_)) =>
                {
                    &mut faults.lock_error
                }
                Call::Unlock(_) if matches!(s.outcome, Outcome::Errno(_)) => {
                    &mut faults.unlock_error
                }
                Call::Close if matches!(s.outcome, Outcome::Errno(_)) => &mut faults.close_error,
                _ => continue,
            };
            *slot = slot.saturating_add(1);
        }
        Scenario {
            variant: self.variant,
            os: self.kind,
            processes: self.processes,
            threads,
            faults,
            symmetry: false,
        }
    }

    /// Replays `trace` through the model. See the module docs.
    ///
    /// # Errors
    /// The first step at which the recording is not a model path, or a state violates an
    /// enforced property.
    pub fn check(&self, trace: &[Step]) -> Result<Summary, Divergence> {
        let scenario = self.scenario(trace);
        // Pass 1: states without the EnsureValid/Write steps (they change only the acting
        // thread's pc, which no other action or observation reads), to place each passed
        // ensure_valid at its linearization point.
        // (`native-probe-last` has no linearization to find: its checks are steps, taken in
        // both passes.)
        let begins = if scenario.variant.splits_ensure_valid() {
            call_starts(trace)
        } else {
            Default::default()
        };
        let mut pass1 = Replay::new(self, scenario);
        let mut states: Vec<State> = vec![pass1.cur.state.clone()];
        for (i, step) in trace.iter().enumerate() {
            let begun = begins.get(&i).map_or(Ok(()), |threads| {
                threads
                    .iter()
                    .try_for_each(|&(p, t)| pass1.act(i, step, Action::BeginCheck(p, t)))
            });
            if let Err(d) = begun.and_then(|()| pass1.step(i, step, false)) {
                // Report the first problem in linearization order: a property the model
                // violates before the step that leaves it (e.g. SimpleFs's two writers
                // before its check-then-unlink window) comes first. The prefix is a model
                // path (pass 1 got through it), so this recursion ends.
                if d.step > 0 {
                    self.check(&trace[..d.step])?;
                }
                return Err(d);
            }
            states.push(pass1.cur.state.clone());
        }
        let insert_at = if scenario.variant.splits_ensure_valid() {
            Default::default()
        } else {
            linearization_points(&scenario, &states, trace)?
        };
        // Pass 2: the full path, with properties checked on every state.
        let mut replay = Replay::new(self, scenario);
        replay.check_properties(None)?;
        for (i, step) in trace.iter().enumerate() {
            if let Some(threads) = insert_at.get(&i) {
                for &(p, t) in threads {
                    replay.act(i, step, Action::EnsureValid(p, t))?;
                }
            }
            if let Some(threads) = begins.get(&i) {
                for &(p, t) in threads {
                    replay.act(i, step, Action::BeginCheck(p, t))?;
                }
            }
            replay.step(i, step, true)?;
        }
        Ok(replay.cur.summary)
    }
}

/// The refinement check as a scenario [`Checker`](super::workload::Checker).
pub fn checker(refinement: Refinement) -> super::workload::Checker {
    std::sync::Arc::new(move |trace: &[Step]| check_trace(&refinement, trace).map(|_| ()))
}

/// Checks `trace` against `refinement`, formatting a divergence with the whole recording.
///
/// # Errors
/// The divergence and the recording, as one message.
pub fn check_trace(refinement: &Refinement, trace: &[Step]) -> Result<Summary, String> {
    refinement
        .check(trace)
        .map_err(|d| format!("{d}\nrecording:\n{}", format_trace(trace)))
}

fn divergence(trace: &[Step], i: usize, reason: String) -> Divergence {
    Divergence {
        step: i,
        what: trace
            .get(i)
            .map_or_else(|| "end".to_owned(), ToString::to_string),
        reason,
        property: None,
    }
}
