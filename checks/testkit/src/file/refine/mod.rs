//! Refinement: every simulated run of the real code is a path of the Stateright model.
//!
//! [`check`] feeds a recording ([`Step`]s in linearization order) through the model's
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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use lockwright_model::file::kernel::{
    Desc, DescStat, FsError, Inode, LockKind, LockRec, OpenMode, Os, Pid,
};
use lockwright_model::file::protocol::{Action, Faults, Pc, Scenario, State, Variant, ALWAYS};
use stateright::Model;

use super::record::{format_trace, Actor, Call, Outcome, Step};
use super::Tid;

/// The name of the divergence of a SimpleFs release whose check (`stat`, `read_file`) saw its
/// own file but whose `unlink` found the path changed: the model's simple release checks and
/// unlinks atomically; the real code cannot (see the module docs).
pub const CHECK_THEN_UNLINK_WINDOW: &str = "check-then-unlink window";

/// Where and why a recording left the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the first diverging step in the recording.
    pub step: usize,
    /// The step, formatted.
    pub what: String,
    /// Why.
    pub reason: String,
    /// The `always` property violated, if that is the reason.
    pub property: Option<&'static str>,
}

impl Divergence {
    /// Whether this is SimpleFs's [`CHECK_THEN_UNLINK_WINDOW`].
    pub fn is_check_then_unlink_window(&self) -> bool {
        self.property.is_none() && self.reason.starts_with(CHECK_THEN_UNLINK_WINDOW)
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refinement: step #{} ({}): {}",
            self.step, self.what, self.reason
        )
    }
}

/// What a successful replay saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Model actions taken.
    pub actions: usize,
    /// Observations compared.
    pub observations: usize,
    /// States whose properties were checked.
    pub states: usize,
}

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
            enforce: ALWAYS.to_vec(),
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
        let windows = validation_windows(trace);
        let mut pass1 = Replay::new(self, scenario);
        let mut states: Vec<State> = vec![pass1.model.clone()];
        for (i, step) in trace.iter().enumerate() {
            if let Err(d) = pass1.step(i, step, false) {
                // Report the first problem in linearization order: a property the model
                // violates before the step that leaves it (e.g. SimpleFs's two writers
                // before its check-then-unlink window) comes first. The prefix is a model
                // path (pass 1 got through it), so this recursion ends.
                if d.step > 0 {
                    self.check(&trace[..d.step])?;
                }
                return Err(d);
            }
            states.push(pass1.model.clone());
        }
        // insert_after[j] = threads whose EnsureValid happens right after step j (state j+1).
        let mut insert_at: BTreeMap<usize, Vec<(Pid, Tid)>> = BTreeMap::new();
        for w in &windows {
            // Candidate states: before the call's first step .. before the Validated event.
            let candidates = w.first..=w.validated;
            let valid: Vec<usize> = candidates
                .clone()
                .filter(|&k| scenario.observe_ensure_valid(&states[k], w.pid, w.tid))
                .collect();
            if w.ok {
                match valid.last() {
                    Some(&k) => insert_at.entry(k).or_default().push((w.pid, w.tid)),
                    None => {
                        return Err(divergence(
                            trace,
                            w.validated,
                            format!(
                                "ensure_valid of p{}.t{} returned Ok, but the model says the lock was invalid in every state during the call (steps #{}..#{})",
                                w.pid, w.tid, w.first, w.validated
                            ),
                        ))
                    }
                }
            } else if valid.len() == candidates.count() {
                return Err(divergence(
                    trace,
                    w.validated,
                    format!(
                        "ensure_valid of p{}.t{} failed, but the model says the lock was valid in every state during the call (steps #{}..#{})",
                        w.pid, w.tid, w.first, w.validated
                    ),
                ));
            }
        }
        // Pass 2: the full path, with properties checked on every state.
        let mut replay = Replay::new(self, scenario);
        replay.check_properties(None)?;
        for (i, step) in trace.iter().enumerate() {
            if let Some(threads) = insert_at.get(&i) {
                for &(p, t) in threads {
                    replay.act(i, step, Action::EnsureValid(p, t))?;
                }
            }
            replay.step(i, step, true)?;
        }
        Ok(replay.summary)
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

/// One `ensure_valid` call: its thread, the index of the state at its invocation, the index
/// of its `Validated` event, and what it returned.
#[derive(Clone, Copy, Debug)]
struct Window {
    pid: Pid,
    tid: Tid,
    /// State index (states[k] = after k steps) at the call's invocation.
    first: usize,
    /// Index of the `Validated` step; states[validated] is the state just before it.
    validated: usize,
    ok: bool,
}

fn validation_windows(trace: &[Step]) -> Vec<Window> {
    // The call begins after the thread's previous harness event (its Obtained or Write).
    let mut last_event: BTreeMap<(Pid, Tid), usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, s) in trace.iter().enumerate() {
        let Actor::Thread { pid, tid } = s.actor else {
            continue;
        };
        if s.outcome == Outcome::Dead {
            continue;
        }
        match s.call {
            Call::Validated { ok } => {
                let first = last_event.get(&(pid, tid)).map_or(0, |&e| e + 1);
                out.push(Window {
                    pid,
                    tid,
                    first,
                    validated: i,
                    ok,
                });
                last_event.insert((pid, tid), i);
            }
            c if c.is_harness() => {
                last_event.insert((pid, tid), i);
            }
            _ => {}
        }
    }
    out
}

/// The simulation side, rebuilt from the recording.
#[derive(Clone, Debug)]
struct Shadow {
    os: Os,
    alive: Vec<bool>,
    held: Vec<bool>,
    /// Inode each thread remembers (mirrors the model's `Thread::inode`).
    remembered: BTreeMap<(Pid, Tid), Inode>,
    /// SimpleFs threads between their `Release` event and the end of their release (model
    /// `Unlink` or `ReleaseRefused`): which release observations saw their own file.
    releasing: BTreeMap<(Pid, Tid), ReleaseCheck>,
    /// SimpleFs: how each thread's last release ended (`true`: `Unlink`), for `Closed`.
    released: BTreeMap<(Pid, Tid), bool>,
}

/// The steps of a SimpleFs release's check that saw the thread's own file.
#[derive(Clone, Copy, Debug, Default)]
struct ReleaseCheck {
    stat: Option<usize>,
    read: Option<usize>,
}

struct Replay<'a> {
    refinement: &'a Refinement,
    scenario: Scenario,
    model: State,
    shadow: Shadow,
    summary: Summary,
}

impl<'a> Replay<'a> {
    fn new(refinement: &'a Refinement, scenario: Scenario) -> Self {
        let model = scenario.init_states().remove(0);
        let n = usize::from(scenario.processes);
        Replay {
            refinement,
            scenario,
            model,
            shadow: Shadow {
                os: Os::new(),
                alive: vec![true; n],
                held: vec![false; n],
                remembered: BTreeMap::new(),
                releasing: BTreeMap::new(),
                released: BTreeMap::new(),
            },
            summary: Summary::default(),
        }
    }

    fn fail(&self, i: usize, step: &Step, reason: String) -> Divergence {
        Divergence {
            step: i,
            what: step.to_string(),
            reason,
            property: None,
        }
    }

    /// The order-preserving renaming of simulation inodes to model inodes: both sides create
    /// inodes in the same order and the model renumbers densely in creation order.
    fn renaming(&self) -> Result<BTreeMap<Inode, Inode>, String> {
        let mut sim: BTreeSet<Inode> = self.shadow.remembered.values().copied().collect();
        sim.extend(self.shadow.os.path_inode());
        sim.extend(self.shadow.os.descs().map(|(_, i)| i));
        let mut model: BTreeSet<Inode> =
            self.model.threads.iter().filter_map(|t| t.inode).collect();
        model.extend(self.model.os.path_inode());
        model.extend(self.model.os.descs().map(|(_, i)| i));
        if sim.len() != model.len() {
            return Err(format!(
                "the simulation has {} live or remembered inodes, the model {}",
                sim.len(),
                model.len()
            ));
        }
        Ok(sim.into_iter().zip(model).collect())
    }

    fn map_inode(&self, i: Inode) -> Result<Inode, String> {
        self.renaming()?
            .get(&i)
            .copied()
            .ok_or_else(|| format!("inode {i} is not live in the simulation"))
    }

    /// Compares the whole kernel state, held sets and liveness.
    fn compare_states(&self) -> Result<(), String> {
        let m = self.renaming()?;
        let map = |i: Inode| m[&i];
        let sim_path = self.shadow.os.path_inode().map(map);
        if sim_path != self.model.os.path_inode() {
            return Err(format!(
                "lock path: simulation has inode {sim_path:?}, model {:?}",
                self.model.os.path_inode()
            ));
        }
        let sim_descs: BTreeMap<Desc, Inode> =
            self.shadow.os.descs().map(|(d, i)| (d, map(i))).collect();
        let model_descs: BTreeMap<Desc, Inode> = self.model.os.descs().collect();
        if sim_descs != model_descs {
            return Err(format!(
                "open descriptions: simulation {sim_descs:?}, model {model_descs:?}"
            ));
        }
        let sim_locks: BTreeSet<LockRec> =
            self.shadow.os.locks().map(|l| l.map_inode(map)).collect();
        let model_locks: BTreeSet<LockRec> = self.model.os.locks().collect();
        if sim_locks != model_locks {
            return Err(format!(
                "lock table: simulation {sim_locks:?}, model {model_locks:?}"
            ));
        }
        for (p, proc) in self.model.procs.iter().enumerate() {
            if proc.alive != self.shadow.alive[p] {
                return Err(format!(
                    "process p{p}: simulation alive={}, model alive={}",
                    self.shadow.alive[p], proc.alive
                ));
            }
            if proc.held != self.shadow.held[p] {
                return Err(format!(
                    "held set of p{p}: simulation {}, model {}",
                    self.shadow.held[p], proc.held
                ));
            }
        }
        Ok(())
    }

    fn check_properties(&mut self, at: Option<(usize, &Step)>) -> Result<(), Divergence> {
        self.summary.states += 1;
        let violated = self.scenario.violated(&self.model);
        if let Some(&name) = violated
            .iter()
            .find(|n| self.refinement.enforce.contains(n))
        {
            let (step, what) = match at {
                Some((i, s)) => (i, s.to_string()),
                None => (0, "initial state".to_owned()),
            };
            return Err(Divergence {
                step,
                what,
                reason: format!("the model state violates \"{name}\""),
                property: Some(name),
            });
        }
        Ok(())
    }

    /// Takes model action `action` (must be enabled), then syncs remembered inodes.
    fn act(&mut self, i: usize, step: &Step, action: Action) -> Result<(), Divergence> {
        let Some(next) = self.scenario.step(&self.model, action) else {
            let pc = action
                .thread()
                .filter(|&(p, _)| usize::from(p) < self.model.procs.len())
                .map(|(p, t)| {
                    format!(
                        " (model thread p{p}.t{t} is at {:?})",
                        self.model.thread(p, t).pc
                    )
                })
                .unwrap_or_default();
            return Err(self.fail(
                i,
                step,
                format!("the model does not allow {action} here{pc}"),
            ));
        };
        self.model = next;
        self.summary.actions += 1;
        // Mirror the model's forgetting of remembered inodes (close, unlink, crash ...).
        let model = &self.model;
        self.shadow
            .remembered
            .retain(|&(p, t), _| model.thread(p, t).inode.is_some());
        if matches!(action, Action::EnsureValid(..) | Action::Write(..)) {
            self.check_properties(Some((i, step)))?;
        }
        Ok(())
    }

    /// Replays one recorded step. `full`: also check properties and take the
    /// EnsureValid/Write steps (pass 2).
    fn step(&mut self, i: usize, step: &Step, full: bool) -> Result<(), Divergence> {
        let r = self.step_inner(i, step, full);
        r?;
        self.compare_states()
            .map_err(|e| self.fail(i, step, format!("after this step the states differ: {e}")))?;
        if full {
            self.check_properties(Some((i, step)))?;
        }
        Ok(())
    }

    fn step_inner(&mut self, i: usize, step: &Step, full: bool) -> Result<(), Divergence> {
        let err = |this: &Self, reason: String| Err(this.fail(i, step, reason));
        let (p, t) = match step.actor {
            Actor::Env => return self.fault(i, step),
            Actor::Thread { pid, tid } => (pid, tid),
        };
        if usize::from(p) >= self.model.procs.len() {
            return err(self, format!("process p{p} is not in the model"));
        }
        if step.outcome == Outcome::Dead {
            // A thread of a crashed incarnation: no effect (its threads stopped).
            let proc = self.model.procs[usize::from(p)];
            if proc.alive && proc.incarnation == 0 {
                return err(
                    self,
                    format!("a call failed as dead, but p{p} never crashed in the model"),
                );
            }
            return Ok(());
        }
        if step.outcome == Outcome::BadDesc {
            return err(
                self,
                "the protocol used a descriptor that is not open".to_owned(),
            );
        }
        let desc = Desc { pid: p, slot: t };
        match (step.call, step.outcome) {
            // ---- constant observations ----
            (Call::CreateDirAll | Call::CanonicalizeDir, _) => {
                self.summary.observations += 1;
                Ok(())
            }
            // ---- observations ----
            (Call::Stat, Outcome::Stat(x)) => {
                self.path_observation(i, step, "stat", x)?;
                self.release_observation(i, step, x, |c| &mut c.stat)
            }
            (Call::HeldContains, Outcome::Bool(b)) => {
                self.summary.observations += 1;
                let model = self.scenario.observe_held_contains(&self.model, p);
                if b != model {
                    return err(
                        self,
                        format!("held_contains returned {b}, the model says {model}"),
                    );
                }
                Ok(())
            }
            (Call::Fstat, Outcome::Fstat(st)) => {
                self.summary.observations += 1;
                let inode = self
                    .map_inode(st.inode)
                    .map_err(|e| self.fail(i, step, e))?;
                let ours = DescStat {
                    inode,
                    nlink: st.nlink,
                };
                let model = self.scenario.observe_fstat(&self.model, p, t);
                if Some(ours) != model {
                    return err(
                        self,
                        format!(
                            "fstat returned {ours:?} (model numbering), the model says {model:?}"
                        ),
                    );
                }
                Ok(())
            }
            (Call::Probe(kind), Outcome::Probe(r)) => {
                self.summary.observations += 1;
                if kind != self.scenario.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "probe with {kind}, the model's p{p} uses {}",
                            self.scenario.kind_of(p)
                        ),
                    );
                }
                let model = self.scenario.observe_probe(&self.model, p, t);
                if r != model {
                    return err(
                        self,
                        format!("probe returned {r:?}, the model says {model:?}"),
                    );
                }
                Ok(())
            }
            (Call::ReadFile, Outcome::Stat(Some(_)) | Outcome::Failed(FsError::NotFound)) => {
                let x = match step.outcome {
                    Outcome::Stat(x) => x,
                    _ => None,
                };
                self.path_observation(i, step, "read_file", x)?;
                self.release_observation(i, step, x, |c| &mut c.read)
            }
            // ---- mutating calls ----
            (Call::HeldInsert, Outcome::Bool(added)) => {
                if added == self.shadow.held[usize::from(p)] {
                    return err(
                        self,
                        "recorded held_insert result is not what the calls before it produce"
                            .to_owned(),
                    );
                }
                self.shadow.held[usize::from(p)] = true;
                self.act(i, step, Action::HeldInsert(p, t))?;
                let pc = self.model.thread(p, t).pc;
                let model_added = pc != Pc::Idle;
                if added != model_added {
                    return err(
                        self,
                        format!("held_insert returned {added}, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            (Call::HeldRemove, Outcome::Bool(_)) => {
                self.shadow.held[usize::from(p)] = false;
                self.act(i, step, Action::HeldRemove(p, t))
            }
            (Call::Open, Outcome::Opened(x)) => {
                let got = self.shadow.os.open(desc, OpenMode::Create);
                if got != Ok(x) {
                    return err(
                        self,
                        format!("recorded open {x} but the calls before it produce {got:?}"),
                    );
                }
                self.shadow.remembered.insert((p, t), x);
                self.act(i, step, Action::Open(p, t))?;
                let ours = self.map_inode(x).map_err(|e| self.fail(i, step, e))?;
                let model = self.model.thread(p, t).inode;
                if Some(ours) != model {
                    return err(
                        self,
                        format!("open gave inode {ours} (model numbering), the model {model:?}"),
                    );
                }
                Ok(())
            }
            (Call::TryLock(kind), Outcome::TryLock(r)) => {
                if kind != self.scenario.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "try_lock with {kind}, the model's p{p} uses {}",
                            self.scenario.kind_of(p)
                        ),
                    );
                }
                let got = self.shadow.os.try_lock(desc, kind);
                if got != r {
                    return err(
                        self,
                        format!("recorded {r:?} but the calls before it produce {got:?}"),
                    );
                }
                self.act(i, step, Action::TryLock(p, t))?;
                let pc = self.model.thread(p, t).pc;
                let acquired = r == lockwright_model::file::kernel::TryLockResult::Acquired;
                if acquired != (pc == Pc::Holding) {
                    return err(
                        self,
                        format!("try_lock returned {r:?}, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            (Call::Unlock(kind), Outcome::Done) => {
                if kind != self.scenario.kind_of(p) {
                    return err(
                        self,
                        format!(
                            "unlock with {kind}, the model's p{p} uses {}",
                            self.scenario.kind_of(p)
                        ),
                    );
                }
                self.shadow.os.unlock(desc, kind);
                self.act(i, step, Action::Unlock(p, t))
            }
            (Call::Close, Outcome::Done) => {
                self.shadow.os.close(desc);
                self.act(i, step, Action::Close(p, t))
            }
            (Call::Unlink, Outcome::Done | Outcome::Failed(FsError::NotFound)) => {
                if let Some(check) = self.shadow.releasing.remove(&(p, t)) {
                    self.simple_window(i, step, check)?;
                    self.shadow.released.insert((p, t), true);
                }
                let got = self.shadow.os.unlink();
                let expect = match step.outcome {
                    Outcome::Done => Ok(()),
                    _ => Err(FsError::NotFound),
                };
                if got != expect {
                    return err(
                        self,
                        format!(
                            "recorded unlink {:?} but the calls before it produce {got:?}",
                            step.outcome
                        ),
                    );
                }
                self.act(i, step, Action::Unlink(p, t))
            }
            (Call::CreateExclusive, Outcome::Opened(x)) => {
                let got = self.shadow.os.create_exclusive();
                if got != Ok(x) {
                    return err(
                        self,
                        format!("recorded create {x} but the calls before it produce {got:?}"),
                    );
                }
                self.shadow.remembered.insert((p, t), x);
                self.act(i, step, Action::CreateExclusive(p, t))
            }
            (Call::CreateExclusive, Outcome::Failed(FsError::AlreadyExists)) => {
                if self.shadow.os.path_inode().is_none() {
                    return err(
                        self,
                        "recorded create failed with AlreadyExists, but the calls before it leave no file"
                            .to_owned(),
                    );
                }
                self.act(i, step, Action::CreateExclusive(p, t))?;
                let pc = self.model.thread(p, t).pc;
                if pc != Pc::Idle {
                    return err(
                        self,
                        format!("create_new_file found the file, the model thread went to {pc:?}"),
                    );
                }
                Ok(())
            }
            // ---- harness events ----
            (Call::Obtained { ok }, _) => {
                let pc = self.model.thread(p, t).pc;
                if ok != pc.is_writer() {
                    return err(
                        self,
                        format!(
                            "obtain returned {}, but the model thread is at {pc:?}",
                            if ok { "Ok" } else { "an error" }
                        ),
                    );
                }
                if !ok && pc != Pc::Idle {
                    return err(
                        self,
                        format!("obtain failed, but the model thread is at {pc:?}, not Idle"),
                    );
                }
                Ok(())
            }
            (Call::Validated { .. }, _) => Ok(()),
            (Call::Write, _) => {
                if full {
                    self.act(i, step, Action::Write(p, t))
                } else {
                    Ok(())
                }
            }
            (Call::Release, _) => {
                let pc = self.model.thread(p, t).pc;
                if pc != Pc::Holding {
                    return err(
                        self,
                        format!("release began, but the model thread is at {pc:?}, not Holding"),
                    );
                }
                if self.scenario.variant == Variant::Simple {
                    self.shadow
                        .releasing
                        .insert((p, t), ReleaseCheck::default());
                    self.shadow.released.remove(&(p, t));
                }
                Ok(())
            }
            (Call::Closed { ok }, _) => {
                if self.scenario.variant != Variant::Simple {
                    return Ok(());
                }
                let pc = self.model.thread(p, t).pc;
                if pc != Pc::Idle || self.shadow.releasing.contains_key(&(p, t)) {
                    return err(
                        self,
                        format!("the release returned, but the model thread is still at {pc:?} (no unlink and no refusal recorded)"),
                    );
                }
                let unlinked = self.shadow.released.get(&(p, t)).copied();
                if unlinked != Some(ok) {
                    return err(
                        self,
                        format!(
                            "the release returned {}, but the model's release was {}",
                            if ok { "Ok" } else { "an error" },
                            match unlinked {
                                Some(true) => "Unlink",
                                Some(false) => "ReleaseRefused",
                                None => "not taken",
                            }
                        ),
                    );
                }
                Ok(())
            }
            (call, outcome) => err(self, format!("unexpected outcome {outcome:?} for {call:?}")),
        }
    }

    /// A SimpleFs release observation (`stat` or `read_file` of the file at the path, `x` in
    /// simulation numbering) by a thread that is releasing: its own file → note it in `slot`;
    /// anything else → the real release is refused here, the model's `ReleaseRefused`.
    /// A recorded observation of the inode the lock path names (`stat`, or the file `read_file`
    /// read): it must be what the simulated kernel had at that point, and, in model numbering,
    /// what the model's path names.
    fn path_observation(
        &mut self,
        i: usize,
        step: &Step,
        call: &str,
        x: Option<Inode>,
    ) -> Result<(), Divergence> {
        self.summary.observations += 1;
        if x != self.shadow.os.path_inode() {
            return Err(self.fail(
                i,
                step,
                format!("recorded {call} of {x:?} is not what the calls before it produce"),
            ));
        }
        let ours = x
            .map(|x| self.map_inode(x))
            .transpose()
            .map_err(|e| self.fail(i, step, e))?;
        let model = self.scenario.observe_stat(&self.model);
        if ours != model {
            return Err(self.fail(
                i,
                step,
                format!(
                    "{call} saw inode {ours:?} (model numbering), the model's path names {model:?}"
                ),
            ));
        }
        Ok(())
    }

    fn release_observation(
        &mut self,
        i: usize,
        step: &Step,
        x: Option<Inode>,
        slot: impl FnOnce(&mut ReleaseCheck) -> &mut Option<usize>,
    ) -> Result<(), Divergence> {
        let Actor::Thread { pid: p, tid: t } = step.actor else {
            return Ok(());
        };
        let Some(check) = self.shadow.releasing.get_mut(&(p, t)) else {
            return Ok(());
        };
        let mine = self.shadow.remembered.get(&(p, t)).copied();
        if x.is_some() && x == mine {
            *slot(check) = Some(i);
            return Ok(());
        }
        self.shadow.releasing.remove(&(p, t));
        self.shadow.released.insert((p, t), false);
        self.act(i, step, Action::ReleaseRefused(p, t))
    }

    /// A SimpleFs release's `unlink`: the model's `Unlink` must be enabled (the path still
    /// names the thread's file). If the real check saw the thread's file and the path changed
    /// since, name the check-then-unlink window.
    fn simple_window(&self, i: usize, step: &Step, check: ReleaseCheck) -> Result<(), Divergence> {
        let Actor::Thread { pid: p, tid: t } = step.actor else {
            return Ok(());
        };
        let action = Action::Unlink(p, t);
        if self.scenario.step(&self.model, action).is_some() {
            return Ok(());
        }
        let (Some(stat), Some(read)) = (check.stat, check.read) else {
            return Ok(()); // not the window: `act` reports the plain divergence
        };
        let now = match self.shadow.os.path_inode() {
            Some(x) => format!("inode {x}"),
            None => "no file".to_owned(),
        };
        let mine = self
            .shadow
            .remembered
            .get(&(p, t))
            .map_or_else(|| "-".to_owned(), ToString::to_string);
        Err(self.fail(
            i,
            step,
            format!(
                "{CHECK_THEN_UNLINK_WINDOW}: p{p}.t{t}'s release saw its own file (inode {mine}) at step #{stat} (stat) and #{read} (read_file), but the path names {now} at this unlink (recorded {:?}); the model's simple release checks and unlinks in one atomic step (it allows no {action} here), the real stat → read_file → unlink cannot",
                step.outcome
            ),
        ))
    }

    fn fault(&mut self, i: usize, step: &Step) -> Result<(), Divergence> {
        match step.call {
            Call::Crash(p) => {
                self.shadow.os.crash(p);
                self.shadow.alive[usize::from(p)] = false;
                self.shadow.held[usize::from(p)] = false;
                self.shadow.releasing.retain(|&(q, _), _| q != p);
                self.act(i, step, Action::Crash(p))
            }
            Call::Restart(p) => {
                if self.shadow.alive[usize::from(p)] {
                    return Ok(()); // restarting a live process is a no-op
                }
                self.shadow.alive[usize::from(p)] = true;
                self.act(i, step, Action::Restart(p))
            }
            Call::UnlinkLockFile => match step.outcome {
                Outcome::Failed(FsError::NotFound) => Ok(()),
                _ => {
                    if self.shadow.os.unlink().is_err() {
                        return Err(self.fail(
                            i,
                            step,
                            "recorded unlink succeeded on a missing file".to_owned(),
                        ));
                    }
                    self.act(i, step, Action::UnlinkLockFile)
                }
            },
            Call::ReplaceLockFile => {
                self.shadow.os.replace();
                self.act(i, step, Action::ReplaceLockFile)
            }
            Call::ForeignOpenClose(p) => {
                if step.outcome == Outcome::Dead || self.shadow.os.path_inode().is_none() {
                    return Ok(()); // dead process, or no file to open: nothing happens
                }
                self.shadow.os.foreign_open_close(p);
                self.act(i, step, Action::ForeignOpenClose(p))
            }
            call => Err(self.fail(i, step, format!("{call:?} by the environment"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::workload::{self, ThreadPlan, Workload};
    use crate::prims::Std;
    use lockwright::file::sys::OsLockKind;
    use lockwright_model::file::kernel::TryLockResult;

    /// One thread, two rounds: deterministic even on std threads.
    fn one_thread_run() -> (Workload, Vec<Step>) {
        let sc = Workload::new(
            "refine unit",
            1,
            OsLockKind::Ofd,
            vec![ThreadPlan::worker(0, 0, 2)],
        );
        let trace = workload::run::<Std>(&sc, &workload::correct(), None);
        (sc, trace)
    }

    fn index_of(trace: &[Step], call: Call) -> usize {
        trace
            .iter()
            .position(|s| s.call == call)
            .expect("call present")
    }

    #[test]
    fn a_real_run_is_a_model_path() {
        let (sc, trace) = one_thread_run();
        let summary = sc
            .refinement(Variant::Native)
            .check(&trace)
            .expect("refines");
        // 2 × (HeldInsert, Open, TryLock, EnsureValid, Write, Unlock, Close, HeldRemove)
        assert_eq!(summary.actions, 16, "{summary:?}");
        // Round 1: canonicalize_dir, stat; round 2 (the factory resolved the path before):
        // stat; each ensure_valid: probe, held_contains, fstat, stat.
        assert_eq!(summary.observations, 11, "{summary:?}");
    }

    #[test]
    fn the_wrong_variant_diverges_at_the_first_reordered_step() {
        let (sc, trace) = one_thread_run();
        // native-4.10 releases Unlock → HeldRemove → Close: the recorded Close is not allowed.
        let err = sc.refinement(Variant::Native410).check(&trace).unwrap_err();
        println!("{err}");
        assert_eq!(err.step, index_of(&trace, Call::Close), "{err}");
        assert!(err.reason.contains("does not allow Close(p0, t0)"), "{err}");
    }

    #[test]
    fn a_tampered_result_diverges_at_that_step() {
        let (sc, mut trace) = one_thread_run();
        let i = index_of(&trace, Call::TryLock(LockKind::Ofd));
        trace[i].outcome = Outcome::TryLock(TryLockResult::WouldBlock);
        let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
        assert_eq!(err.step, i, "{err}");
    }

    #[test]
    fn a_missing_step_diverges_at_the_next_one() {
        let (sc, mut trace) = one_thread_run();
        let i = index_of(&trace, Call::HeldInsert);
        trace.remove(i);
        let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
        assert_eq!(err.step, i, "{err}");
        assert!(err.reason.contains("does not allow Open(p0, t0)"), "{err}");
    }

    /// One thread, two rounds on the real `SimpleFsLockFactory`.
    fn one_thread_simple_run() -> (Workload, Vec<Step>) {
        let sc = Workload::new(
            "refine unit simple",
            1,
            OsLockKind::Flock,
            vec![ThreadPlan::worker(0, 0, 2)],
        );
        let run = workload::run_simple::<Std>(&sc, None);
        (sc, run.trace)
    }

    #[test]
    fn a_simple_run_is_a_model_path() {
        let (sc, trace) = one_thread_simple_run();
        let summary = sc
            .refinement(Variant::Simple)
            .check(&trace)
            .expect("refines");
        // 2 × (CreateExclusive, EnsureValid, Write, Unlink)
        assert_eq!(summary.actions, 8, "{summary:?}");
        // 2 × (create_dir_all, canonicalize_dir; ensure_valid: stat, read_file; release: stat,
        // read_file)
        assert_eq!(summary.observations, 12, "{summary:?}");
        assert_eq!(
            trace
                .iter()
                .filter(|s| s.call == Call::Closed { ok: true })
                .count(),
            2
        );
        // And it is not a path of the native protocol.
        let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
        assert_eq!(err.step, index_of(&trace, Call::CreateExclusive), "{err}");
    }

    #[test]
    fn a_refused_simple_release_is_the_models_release_refused() {
        use lockwright::{LockError, SimpleFsLockFactory};
        use std::path::Path;
        let sim = crate::file::SimOs::<Std>::new(1);
        let sys = sim.thread(0, 0);
        let factory = SimpleFsLockFactory::with_system(sys.clone());
        let lock = factory
            .try_obtain_simple(Path::new(crate::file::record::LOCK_DIR), "write.lock")
            .expect("free");
        assert!(sys.note_obtained(true).is_none());
        sim.unlink_lock_file();
        assert!(lock.ensure_valid().is_err());
        sys.note_validated(false);
        sys.note_release();
        let closed = lock.close();
        assert!(
            matches!(closed, Err(LockError::ReleaseRefused { .. })),
            "{closed:?}"
        );
        sys.note_closed(false);
        let mut trace = sim.trace();
        let r = Refinement::new(Variant::Simple, LockKind::Flock, 1);
        let summary = r.check(&trace).expect("refines");
        // CreateExclusive, UnlinkLockFile, ReleaseRefused (at the release's stat)
        assert_eq!(summary.actions, 3, "{summary:?}");
        // A release that claims success where the model refused diverges at that event.
        let i = index_of(&trace, Call::Closed { ok: false });
        trace[i].call = Call::Closed { ok: true };
        let err = r.check(&trace).unwrap_err();
        assert_eq!(err.step, i, "{err}");
        assert!(err.reason.contains("ReleaseRefused"), "{err}");
    }

    #[test]
    fn the_check_then_unlink_window_is_named() {
        let (sc, trace) = one_thread_simple_run();
        // First round only, then splice an operator's unlink between the release's read_file
        // and its unlink (a recording the real code produces when the fault lands there).
        let unlink = index_of(&trace, Call::Unlink);
        let mut t: Vec<Step> = trace[..unlink].to_vec();
        assert_eq!(t.last().map(|s| s.call), Some(Call::ReadFile));
        t.push(Step {
            actor: Actor::Env,
            call: Call::UnlinkLockFile,
            outcome: Outcome::Done,
        });
        t.push(Step {
            outcome: Outcome::Failed(FsError::NotFound),
            ..trace[unlink]
        });
        t.push(Step {
            call: Call::Closed { ok: false },
            ..trace[unlink + 1]
        });
        let err = sc.refinement(Variant::Simple).check(&t).unwrap_err();
        println!("{err}");
        assert_eq!(err.step, unlink + 1, "{err}");
        assert!(err.is_check_then_unlink_window(), "{err}");
        assert!(err.to_string().contains(CHECK_THEN_UNLINK_WINDOW), "{err}");
    }

    #[test]
    fn a_wrong_observation_diverges() {
        let (sc, mut trace) = one_thread_run();
        let i = index_of(&trace, Call::HeldContains);
        trace[i].outcome = Outcome::Bool(false);
        let err = sc.refinement(Variant::Native).check(&trace).unwrap_err();
        // held_contains is an observation: compared in place. (The ensure_valid window check
        // sees no contradiction: the recorded call still returned Ok.)
        assert_eq!(err.step, i, "{err}");
    }
}
