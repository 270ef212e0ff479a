//! What the shuttle suites of the ZooKeeper mutex share: exploring a workload with every run
//! refined ([`explore`]), finding a broken variant and its schedule ([`find`]), replaying a
//! pinned schedule ([`replay_pinned`]), and the model's own verdict for a workload
//! ([`model_violations`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::Runner;

use crate::schedules::{persisting, replay, search, serial, Scheduler};

use super::record::{format_trace, Call, Outcome, Step};
use super::refine::Refinement;
use super::workload::{self, Workload};
use super::world::take_failure;

/// What the model checker says `w`'s recipe violates with `w`'s fault budgets (symmetry on).
pub fn model_violations(w: &Workload) -> Vec<&'static str> {
    let model = w.model().with_symmetry(true);
    let report = lockwright_model::checker::check(&model);
    println!(
        "model {}: {} unique states, violated {:?}",
        model.label(),
        report.unique_states,
        report.violated()
    );
    report.violated()
}

/// Executions per scheduler (random, then PCT) of a zk shuttle test in plain `cargo test`.
pub const STANDARD_ITERATIONS: usize = 3_000;
/// The same with `LOCKWRIGHT_DEEP=1`.
pub const DEEP_ITERATIONS: usize = 100_000;
/// The PCT depth of the zk shuttle suites: a fault between a listing and its watch, and one
/// after it.
pub const PCT_DEPTH: usize = 3;

/// [`STANDARD_ITERATIONS`], or [`DEEP_ITERATIONS`] with `LOCKWRIGHT_DEEP=1`.
pub fn iterations() -> usize {
    if crate::budget::deep() {
        DEEP_ITERATIONS
    } else {
        STANDARD_ITERATIONS
    }
}

/// The `always` properties the model proves for `w`, after asserting that it violates exactly
/// `expected`: the properties a shuttle run of `w` may enforce.
pub fn proved(w: &Workload, expected: &[&str]) -> Vec<&'static str> {
    let violated = model_violations(w);
    assert_eq!(violated, expected, "the model's verdict for {}", w.name);
    lockwright_model::zk::ALWAYS
        .iter()
        .copied()
        .filter(|p| !violated.contains(p))
        .collect()
}

/// What the executions exercised, counted from the recordings.
#[derive(Debug, Default)]
pub struct Coverage {
    pub executions: AtomicUsize,
    pub steps: AtomicUsize,
    pub acquisitions: AtomicUsize,
    /// Listings that showed a lower node (a watch was set).
    pub contention: AtomicUsize,
    pub watch_events: AtomicUsize,
    /// Expiries learned from the session event.
    pub session_events: AtomicUsize,
    /// Renewals of a shared client's session noticed by the other mutex.
    pub session_swaps: AtomicUsize,
    /// Requests answered `SessionExpired`.
    pub expired_answers: AtomicUsize,
    pub lost_replies: AtomicUsize,
    /// Releases the caller dropped (`Abandon`).
    pub abandoned: AtomicUsize,
    /// Acquires the caller dropped while they waited (`Abandon`).
    pub acquires_dropped: AtomicUsize,
    /// `sync`s before a search (or `ensure_valid`'s read).
    pub syncs: AtomicUsize,
    /// Searches answered by a lagging server.
    pub lagged: AtomicUsize,
    /// Listings that showed a client its own node under a name it does not read.
    pub misreads: AtomicUsize,
    pub expiries: AtomicUsize,
    pub restarts: AtomicUsize,
    pub old_sessions_expired: AtomicUsize,
    pub parents_recreated: AtomicUsize,
    pub locks_lost: AtomicUsize,
    pub fenced_rejected: AtomicUsize,
    /// Claims the resource refused (a later holder had claimed first).
    pub claims_refused: AtomicUsize,
    /// Updates whose read was followed by an accepted write.
    pub updates: AtomicUsize,
    pub reentries: AtomicUsize,
    /// Jumps of the simulated clock (a sleep or a timeout fired).
    pub ticks: AtomicUsize,
    /// `try_acquire`/`acquire_timeout` calls that returned `Held`/`TimedOut`.
    pub gave_up: AtomicUsize,
    /// Give-ups that handed a node to a cleanup task (`GiveUp`, the model's `Abandon`).
    pub give_up_handoffs: AtomicUsize,
    /// The longest simulated time a give-up took, in milliseconds.
    pub max_give_up_ms: AtomicUsize,
    /// Requests of a dropped future's cleanup made after its client's next acquire began
    /// (`record::cleanup_beside_next_acquire`), and the executions with any.
    pub cleanup_overlaps: AtomicUsize,
    pub runs_with_overlap: AtomicUsize,
    /// Executions where a mutex of a shared client searched, after it noticed the renewal, for
    /// a create whose reply was lost in the session the other mutex renewed
    /// (`record::search_after_lost_create_in_renewed_session`).
    pub renewed_lost_create_searches: AtomicUsize,
    /// Futures dropped at random `Pending` polls, by the model's place at the drop.
    pub drops: std::sync::Mutex<std::collections::BTreeMap<String, usize>>,
    /// Suspended connections (`Suspend`), by what the server kept queued and what became of
    /// it (`suspend::tally`).
    pub suspensions: std::sync::Mutex<super::suspend::Tally>,
}

impl Coverage {
    /// Random drops at the model's place `pc` (its `Debug` name).
    pub fn drops_at(&self, pc: &str) -> usize {
        let d = self.drops.lock().unwrap_or_else(|p| p.into_inner());
        d.get(pc).copied().unwrap_or(0)
    }
}

impl Coverage {
    fn add(&self, trace: &[Step]) {
        let n = |p: &dyn Fn(&Step) -> bool| trace.iter().filter(|s| p(s)).count();
        let add = |c: &AtomicUsize, v: usize| {
            c.fetch_add(v, Ordering::Relaxed);
        };
        let ok = |s: &Step| s.outcome == Outcome::Ok;
        add(&self.executions, 1);
        let overlaps = super::record::cleanup_beside_next_acquire(trace);
        add(&self.cleanup_overlaps, overlaps);
        add(&self.runs_with_overlap, usize::from(overlaps > 0));
        add(
            &self.renewed_lost_create_searches,
            usize::from(super::record::search_after_lost_create_in_renewed_session(
                trace,
            )),
        );
        add(&self.steps, trace.len());
        add(&self.acquisitions, n(&|s| s.call == Call::Acquired));
        add(
            &self.contention,
            n(&|s| matches!(s.call, Call::Watch { .. }) && ok(s)),
        );
        add(&self.watch_events, n(&|s| s.call == Call::WatchEvent));
        add(&self.session_events, n(&|s| s.call == Call::SessionEvent));
        add(
            &self.session_swaps,
            n(&|s| s.call == Call::NoticeSessionChange),
        );
        add(
            &self.expired_answers,
            n(&|s| s.outcome == Outcome::SessionExpired),
        );
        add(
            &self.lost_replies,
            n(&|s| matches!(s.outcome, Outcome::ReplyLost { .. })),
        );
        add(&self.misreads, n(&|s| s.outcome == Outcome::Misread));
        add(&self.syncs, n(&|s| s.call == Call::Sync));
        add(&self.abandoned, n(&|s| s.call == Call::Abandon));
        add(&self.acquires_dropped, n(&|s| s.call == Call::DropAcquire));
        add(&self.lagged, n(&|s| s.outcome == Outcome::Lagged));
        add(
            &self.expiries,
            n(&|s| matches!(s.call, Call::Expire(_)) && ok(s)),
        );
        add(&self.restarts, n(&|s| matches!(s.call, Call::Restart(_))));
        add(
            &self.old_sessions_expired,
            n(&|s| matches!(s.call, Call::ExpireOld(_)) && ok(s)),
        );
        add(
            &self.parents_recreated,
            n(&|s| s.call == Call::RecreateParent && ok(s)),
        );
        add(&self.locks_lost, n(&|s| s.call == Call::LockLost));
        add(
            &self.fenced_rejected,
            n(&|s| matches!(s.call, Call::FencedWrite { .. }) && s.outcome == Outcome::Rejected),
        );
        add(
            &self.claims_refused,
            n(&|s| matches!(s.call, Call::Claim { .. }) && s.outcome == Outcome::Rejected),
        );
        add(
            &self.updates,
            n(&|s| {
                matches!(
                    s.call,
                    Call::FencedWrite { .. } | Call::Write | Call::GuardedWrite { .. }
                ) && ok(s)
            }),
        );
        add(&self.reentries, n(&|s| s.call == Call::Reenter));
        add(&self.ticks, n(&|s| matches!(s.call, Call::Tick { .. })));
        add(&self.give_up_handoffs, n(&|s| s.call == Call::GiveUp));
        self.suspensions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(trace);
        for s in trace {
            match &s.call {
                Call::GaveUp { waited_ms } => {
                    add(&self.gave_up, 1);
                    let ms = usize::try_from(*waited_ms).unwrap_or(usize::MAX);
                    self.max_give_up_ms.fetch_max(ms, Ordering::Relaxed);
                }
                Call::Drop { at } => {
                    let mut d = self.drops.lock().unwrap_or_else(|p| p.into_inner());
                    *d.entry(format!("{at:?}")).or_default() += 1;
                }
                _ => {}
            }
        }
    }

    /// A counter's value.
    pub fn get(c: &AtomicUsize) -> usize {
        c.load(Ordering::Relaxed)
    }

    /// One line for the test output.
    pub fn report(&self, name: &str) -> String {
        let g = Self::get;
        format!(
            "{name}: {} executions, {} steps, 0 divergences; acquisitions {}, contention {}, \
             watch events {}, expiries {} (learned by event {}, by a reply {}, noticed after the other mutex {}), \
             lost replies {}, \
             misreads {}, syncs {} (searches lagged {}), releases dropped {}, acquires dropped {}, \
             restarts {} (old sessions expired {}), parents re-created {}, locks lost {}, \
             fenced writes refused {}, claims refused {}, updates {}, re-entries {}, clock ticks {}, \
             gave up {} (handed a node to a cleanup {}, longest {} ms), random drops {:?}, \
             suspensions {:?}, cleanup requests beside the next acquire {} (in {} executions), \
             searches after a lost create in the renewed session {}",
            g(&self.executions),
            g(&self.steps),
            g(&self.acquisitions),
            g(&self.contention),
            g(&self.watch_events),
            g(&self.expiries),
            g(&self.session_events),
            g(&self.expired_answers),
            g(&self.session_swaps),
            g(&self.lost_replies),
            g(&self.misreads),
            g(&self.syncs),
            g(&self.lagged),
            g(&self.abandoned),
            g(&self.acquires_dropped),
            g(&self.restarts),
            g(&self.old_sessions_expired),
            g(&self.parents_recreated),
            g(&self.locks_lost),
            g(&self.fenced_rejected),
            g(&self.claims_refused),
            g(&self.updates),
            g(&self.reentries),
            g(&self.ticks),
            g(&self.gave_up),
            g(&self.give_up_handoffs),
            g(&self.max_give_up_ms),
            self.drops.lock().unwrap_or_else(|p| p.into_inner()),
            self.suspensions.lock().unwrap_or_else(|p| p.into_inner()),
            g(&self.cleanup_overlaps),
            g(&self.runs_with_overlap),
            g(&self.renewed_lost_create_searches),
        )
    }
}

/// Runs `w` under the random scheduler, then PCT (depth `pct_depth`), `n` executions each
/// (seed fixed), every step of every execution replayed through `refinement`; returns the
/// coverage.
pub fn explore(
    w: &Workload,
    refinement: Refinement,
    seed: u64,
    n: usize,
    pct_depth: usize,
) -> Arc<Coverage> {
    let _serial = serial();
    let t = Instant::now();
    let cov = Arc::new(Coverage::default());
    let body = {
        let (w, cov, r) = (w.clone(), Arc::clone(&cov), Arc::new(refinement));
        move || {
            let trace = workload::run(&w, Some(&r));
            cov.add(&trace);
        }
    };
    Runner::new(RandomScheduler::new_from_seed(seed, n), persisting()).run(body.clone());
    Runner::new(
        PctScheduler::new_from_seed(seed, pct_depth, n),
        persisting(),
    )
    .run(body);
    println!("{} in {:?}", cov.report(w.name), t.elapsed());
    cov
}

/// A broken variant: the incident, its workload (the recipe with its defect switch), and the
/// properties the model says it violates that its replay enforces (usually one, so that the
/// first failure is that one; a variant that can also wedge a client behind its own orphan
/// enforces "no orphan node" too, since a wedged execution ends in a deadlock, not a report).
#[derive(Clone, Debug)]
pub struct Twin {
    pub incident: &'static str,
    pub workload: Workload,
    pub properties: Vec<&'static str>,
}

impl Twin {
    fn refinement(&self) -> Refinement {
        self.workload.refinement().enforcing(&self.properties)
    }

    /// The enforced property a failure message names.
    fn violated_in(&self, msg: &str) -> Option<&'static str> {
        self.properties
            .iter()
            .copied()
            .find(|p| msg.contains(&format!("violates \"{p}\"")))
    }

    fn body(&self) -> impl Fn() + Clone + Send + Sync + 'static {
        // A twin stops at its property; the end-of-run orphan check is the correct recipe's.
        let w = Workload {
            end_check: false,
            ..self.workload.clone()
        };
        let (w, r) = (Arc::new(w), Arc::new(self.refinement()));
        move || {
            workload::run(&w, Some(&r));
        }
    }
}

/// What [`find`] found.
#[derive(Clone, Debug)]
pub struct Caught {
    /// The property violated.
    pub property: &'static str,
    pub scheduler: &'static str,
    pub executions: usize,
    /// Steps of the recording up to the violation.
    pub steps: usize,
    /// Shuttle's encoded schedule (replays with [`replay_pinned`]).
    pub schedule: String,
    /// The recording up to the violation (its last step is the violating one).
    pub trace: Vec<Step>,
}

/// Runs the random scheduler, then PCT at `pct_depth`, `n` executions each, on one twin. On a
/// failure: asserts it is the twin's property, that the model checker finds the property
/// violated for the twin's recipe and budgets, that the recording replays offline through the
/// broken model variant to the same violation, and that the schedule replays to it; returns
/// the schedule. `None`: not caught.
pub fn find(t: &Twin, seed: u64, n: usize, pct_depth: usize) -> Option<Caught> {
    let serial = serial();
    let passes = [Scheduler::Random, Scheduler::Pct(pct_depth)];
    let name = t.workload.name;
    let Some(found) = search(&serial, t.body(), seed, n, &passes) else {
        println!(
            "{}: NOT caught in {n} random + {n} PCT executions",
            t.incident
        );
        return None;
    };
    let msg = found.message;
    let property = t
        .violated_in(&msg)
        .unwrap_or_else(|| panic!("{}: unexpected failure: {msg}", t.incident));
    assert!(
        model_violations(&t.workload).contains(&property),
        "{}: the model does not violate {property:?} with budgets {}",
        t.incident,
        t.workload.budgets()
    );
    let failure = take_failure(name).expect("failure recorded");
    let err = t
        .refinement()
        .check(&failure.trace)
        .expect_err("the broken model variant must reach the violation on this path");
    assert_eq!(err.property, Some(property), "{}: {err}", t.incident);
    let schedule = found.schedule;
    let again = replay(&serial, &schedule, t.body()).expect("the replay must fail again");
    assert_eq!(
        t.violated_in(&again),
        Some(property),
        "{}: the replay failed differently",
        t.incident
    );
    let _ = take_failure(name);
    println!(
        "{}: the recording up to the violation:\n{}",
        t.incident,
        format_trace(&failure.trace[..=err.step])
    );
    println!(
        "{} (model {} × {}, budgets {}): \"{property}\" caught by shuttle's {} \
         scheduler after {} executions, {} steps into the recording; replay schedule \
         {schedule:?}",
        t.incident,
        t.workload.variant(),
        t.workload.write_mode(),
        t.workload.budgets(),
        found.scheduler.name(),
        found.executions,
        err.step + 1
    );
    Some(Caught {
        property,
        scheduler: found.scheduler.name(),
        executions: found.executions,
        steps: err.step + 1,
        schedule,
        trace: failure.trace[..=err.step].to_vec(),
    })
}

/// Replays a pinned schedule of `t`: it must fail with `property`, and its recording must
/// reach the same violation offline in the broken model variant.
///
/// # Panics
/// If it does not.
pub fn replay_pinned(t: &Twin, schedule: &str, property: &str) {
    let serial = serial();
    let replayed = replay(&serial, schedule, t.body());
    let failure = take_failure(t.workload.name);
    let msg = replayed.expect("the pinned schedule must still reach the violation");
    assert_eq!(t.violated_in(&msg), Some(property), "{}: {msg}", t.incident);
    let failure = failure.expect("failure recorded");
    let err = t.refinement().check(&failure.trace).expect_err("violation");
    assert_eq!(err.property, Some(property), "{}: {err}", t.incident);
}
