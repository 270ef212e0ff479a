//! Where a passed `ensure_valid` takes effect. The real call makes several observations;
//! the model's `EnsureValid` is one atomic step, placed at the latest state during the call
//! in which the model says the lock is valid (see the parent module's docs).

use std::collections::BTreeMap;

use lockwright_model::file::kernel::Pid;
use lockwright_model::file::{Scenario, State};

use super::super::record::{Actor, Call, Outcome, Step};
use super::super::Tid;
use super::{divergence, Divergence};

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

/// `native-probe-last`: for each step index `k`, the threads whose `ensure_valid` call begins
/// right before step `k` (its model `BeginCheck`): where the linearization window of a call
/// that returned starts, right after the thread's previous harness event. (A call cut short
/// by a crash has no `Validated` event; its call begins at its first check, see the stepper.)
pub(super) fn call_starts(trace: &[Step]) -> BTreeMap<usize, Vec<(Pid, Tid)>> {
    let mut out: BTreeMap<usize, Vec<(Pid, Tid)>> = BTreeMap::new();
    for w in validation_windows(trace) {
        out.entry(w.first).or_default().push((w.pid, w.tid));
    }
    out
}

/// For each step index `k`, the threads whose `EnsureValid` is placed right before step `k`
/// (in state `states[k]`). `states[k]` is the model state after the first `k` steps of
/// `trace` without any `EnsureValid`/`Write` steps.
///
/// # Errors
/// A call that returned `Ok` although the model says the lock was invalid throughout it, or
/// one that failed although the model says it was valid throughout.
pub(super) fn linearization_points(
    scenario: &Scenario,
    states: &[State],
    trace: &[Step],
) -> Result<BTreeMap<usize, Vec<(Pid, Tid)>>, Divergence> {
    let windows = validation_windows(trace);
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
    Ok(insert_at)
}
