//! What the document-store shuttle suites share (`docstore/shuttle.rs`,
//! `docstore/shuttle_store_faults.rs`): the coverage counted from the recordings, the
//! exploration of a workload under the random and PCT schedulers with every execution refined,
//! the model checker's verdict for a workload, and the teeth machinery — a broken variant
//! ([`Twin`]) searched until shuttle finds its property violated, its recording replayed
//! through the broken model variant, and its schedule replayed and pinned.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use lockwright_model::checker;
use lockwright_model::docstore::store::{ScriptError, StoreError};
use lockwright_testkit::docstore::refine::{self, Refinement};
use lockwright_testkit::docstore::service::Answer;
use lockwright_testkit::docstore::workload::{self, Workload};
use lockwright_testkit::docstore::workload::{Op, ThreadPlan};
use lockwright_testkit::docstore::{Call, Outcome, Step, DATA_INDEX, LOCK_INDEX};
use lockwright_testkit::schedules::{persisting, replay, search, serial, Scheduler};
use lockwright_testkit::Shuttle;
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::Runner;

pub fn deep() -> bool {
    std::env::var_os("LOCKWRIGHT_DEEP").is_some_and(|v| v == "1")
}

/// Executions per scheduler (random, then PCT) for the corrected recipe: `default` in the
/// default run, 50,000 with `LOCKWRIGHT_DEEP=1` (about a minute a test on the shared 2-core
/// machine). Each test says why its default is what it is.
pub fn iterations(default: usize) -> usize {
    if deep() {
        50_000
    } else {
        default
    }
}

/// PCT depth 3: the interleavings that matter here need two or three ordering constraints
/// (a pause lands between a check and a write, a new holder acquires and writes before the
/// paused write; a lost reply's retry comes after another client's acquire), as in the file
/// suites; the random scheduler covers the long tail.
pub const PCT_DEPTH: usize = 3;

// ---------------------------------------------------------------------------------------------
// Coverage: what the executions exercised, counted from the recordings.
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
pub struct Coverage {
    pub executions: AtomicUsize,
    pub steps: AtomicUsize,
    /// Acquires refused: "lease held by another owner".
    pub contention: AtomicUsize,
    /// Fenced writes refused: "stale fencing token".
    pub stale_refused: AtomicUsize,
    /// Acquires that took over another owner's passed lease.
    pub takeovers: AtomicUsize,
    /// Faults that took effect (not skipped).
    pub crashes: AtomicUsize,
    pub lost: AtomicUsize,
    pub pauses: AtomicUsize,
    pub stray_deletes: AtomicUsize,
    pub failovers: AtomicUsize,
    pub ticks: AtomicUsize,
    /// The store's own faults that took effect.
    pub recreated_indices: AtomicUsize,
    pub recreated_docs: AtomicUsize,
    pub rollbacks: AtomicUsize,
    /// Rollbacks that undid a write to the lock index (an acquire) / the data index (a claim
    /// or a data write).
    pub lock_rollbacks: AtomicUsize,
    pub data_rollbacks: AtomicUsize,
    /// Executions in which one of the store's own faults took effect while a client held:
    /// after its acquire was answered with a grant and before its next request to the lock
    /// index (a release, or the next acquire) or its crash — counted from the recording.
    pub store_fault_on_holder: AtomicUsize,
    /// Read-backs of the lock document (the fixed recipe's `VerifyLock`) that found it gone or
    /// carrying another token than the reader's grant.
    pub grants_found_gone: AtomicUsize,
    /// Data writes conditioned on the session's read that the store refused with 409: the
    /// document changed since the read.
    pub conflicts: AtomicUsize,
}

/// Whether one of the store's own faults took effect while a client held, judged from the
/// recording: each client's grant runs from its acquire's 2xx answer to its next request to
/// the lock index or its crash (what the client believes, whether or not the store still
/// agrees).
pub fn store_fault_on_holder(trace: &[Step]) -> bool {
    use lockwright_testkit::docstore::{Actor, LOCK_INDEX};
    let mut holding = std::collections::BTreeSet::new();
    for s in trace {
        let done = !matches!(s.outcome, Outcome::Skipped | Outcome::Dead);
        match (&s.actor, &s.call) {
            (Actor::Env, Call::RecreateIndex | Call::RecreateDoc | Call::Rollback { .. })
                if done && !holding.is_empty() =>
            {
                return true;
            }
            (Actor::Env, Call::Crash(c)) => {
                holding.remove(c);
            }
            (Actor::Client { c, .. }, Call::Request(Ok(req))) if req.index == LOCK_INDEX => {
                let granted = matches!(&s.outcome, Outcome::Answered(Answer::Model(Ok(_))))
                    && !matches!(
                        req.op,
                        lockwright_testkit::docstore::service::Op::Delete { .. }
                    )
                    && !is_release(req);
                if granted {
                    holding.insert(*c);
                } else {
                    holding.remove(c);
                }
            }
            _ => {}
        }
    }
    false
}

/// A request to the lock index that gives the lock up (the fixed recipe's `lease-release`, or
/// a delete).
fn is_release(req: &lockwright_testkit::docstore::service::Req) -> bool {
    use lockwright_model::docstore::store::{Script, UpdateBody};
    use lockwright_testkit::docstore::service::Op;
    matches!(
        req.op,
        Op::Delete { .. }
            | Op::Update {
                body: UpdateBody::Script(Script::LeaseRelease { .. }),
                ..
            }
    )
}

/// Read-backs of the lock document that did not find the reader's own grant: the client's
/// last granted acquire's token (from the store's answer) against the document the `GET`
/// returned.
pub fn grants_found_gone(trace: &[Step]) -> usize {
    use lockwright_testkit::docstore::{Actor, LOCK_INDEX};
    let mut granted = std::collections::BTreeMap::new();
    let mut n = 0;
    for s in trace {
        let Actor::Client { c, .. } = s.actor else {
            continue;
        };
        match (&s.call, &s.outcome) {
            (Call::Request(Ok(req)), Outcome::Answered(Answer::Model(Ok(w))))
                if req.index == LOCK_INDEX && !is_release(req) =>
            {
                granted.insert(c, w.token);
            }
            (Call::Get { index, .. }, Outcome::Got(doc)) if index == LOCK_INDEX => {
                if let Some(t) = granted.remove(&c) {
                    if doc.map(|d| d.token()) != Some(t) {
                        n += 1;
                    }
                }
            }
            _ => {}
        }
    }
    n
}

pub fn script_refusal(o: &Outcome, what: &str) -> bool {
    matches!(
        o,
        Outcome::Answered(Answer::Model(Err(StoreError::Script(ScriptError::Explain(m))))) if *m == what
    )
}

/// Acquires answered `updated` for an owner other than the lock document's last one: a
/// passed lease taken over.
pub fn takeovers(trace: &[Step]) -> usize {
    use lockwright_model::docstore::store::{Script, UpdateBody, WriteResult};
    use lockwright_testkit::docstore::service::Op;
    let mut owner = None;
    let mut n = 0;
    for s in trace {
        let (
            Call::Request(Ok(req)),
            Outcome::Answered(Answer::Model(Ok(w))) | Outcome::ReplyLost(Answer::Model(Ok(w))),
        ) = (&s.call, &s.outcome)
        else {
            let lost = matches!(&s.call, Call::StrayDelete | Call::RecreateIndex)
                || matches!(&s.call, Call::Rollback { index } if index == LOCK_INDEX);
            if lost && s.outcome != Outcome::Skipped {
                owner = None;
            }
            continue;
        };
        match (&req.op, w.result) {
            (
                Op::Update {
                    body: UpdateBody::Script(Script::LeaseAcquire { owner: o, .. }),
                    ..
                },
                r,
            ) => {
                if r == WriteResult::Updated && owner.is_some_and(|p| p != *o) {
                    n += 1;
                }
                owner = Some(*o);
            }
            (Op::Delete { .. }, WriteResult::Deleted) if req.index == "files-lock" => owner = None,
            _ => {}
        }
    }
    n
}

impl Coverage {
    pub fn add(&self, trace: &[Step]) {
        let n = |p: &dyn Fn(&Step) -> bool| trace.iter().filter(|s| p(s)).count();
        let add = |c: &AtomicUsize, v: usize| {
            c.fetch_add(v, Ordering::Relaxed);
        };
        let done = |s: &Step| !matches!(s.outcome, Outcome::Skipped | Outcome::Dead);
        add(&self.executions, 1);
        add(&self.steps, trace.len());
        add(
            &self.contention,
            n(&|s| script_refusal(&s.outcome, "lease held by another owner")),
        );
        add(
            &self.stale_refused,
            n(&|s| script_refusal(&s.outcome, "stale fencing token")),
        );
        add(
            &self.crashes,
            n(&|s| matches!(s.call, Call::Crash(_)) && done(s)),
        );
        add(
            &self.lost,
            n(&|s| matches!(s.outcome, Outcome::ReplyLost(_) | Outcome::RequestLost)),
        );
        add(
            &self.pauses,
            n(&|s| matches!(s.call, Call::Pause { .. }) && done(s)),
        );
        add(
            &self.stray_deletes,
            n(&|s| s.call == Call::StrayDelete && done(s)),
        );
        add(&self.failovers, n(&|s| s.call == Call::Failover));
        add(&self.takeovers, takeovers(trace));
        add(&self.ticks, n(&|s| s.call == Call::Tick && done(s)));
        add(
            &self.recreated_indices,
            n(&|s| s.call == Call::RecreateIndex && done(s)),
        );
        add(
            &self.recreated_docs,
            n(&|s| s.call == Call::RecreateDoc && done(s)),
        );
        let rolled = |index: &str| {
            n(&|s| matches!(&s.call, Call::Rollback { index: i } if i == index) && done(s))
        };
        let (lock, data) = (rolled(LOCK_INDEX), rolled(DATA_INDEX));
        add(&self.rollbacks, lock + data);
        add(&self.lock_rollbacks, lock);
        add(&self.data_rollbacks, data);
        add(
            &self.store_fault_on_holder,
            usize::from(store_fault_on_holder(trace)),
        );
        add(&self.grants_found_gone, grants_found_gone(trace));
        add(
            &self.conflicts,
            n(&|s| {
                matches!(&s.call, Call::Request(Ok(r)) if r.index == DATA_INDEX)
                    && matches!(
                        s.outcome,
                        Outcome::Answered(Answer::Model(Err(StoreError::VersionConflict)))
                    )
            }),
        );
    }

    pub fn get(c: &AtomicUsize) -> usize {
        c.load(Ordering::Relaxed)
    }

    pub fn report(&self, name: &str) -> String {
        format!(
            "{name}: {} executions, {} steps, 0 divergences; refused acquires {}, lease \
             takeovers {}, stale fenced writes refused {}, crashes {}, lost replies {}, pauses \
             {}, stray deletes {}, fail-overs {}, ticks {}",
            Self::get(&self.executions),
            Self::get(&self.steps),
            Self::get(&self.contention),
            Self::get(&self.takeovers),
            Self::get(&self.stale_refused),
            Self::get(&self.crashes),
            Self::get(&self.lost),
            Self::get(&self.pauses),
            Self::get(&self.stray_deletes),
            Self::get(&self.failovers),
            Self::get(&self.ticks),
        ) + &format!(
            "; lock index re-created {}, data document re-created {}, rollbacks {} (of an \
             acquire {}, of a data write or claim {}), executions with a store fault while a \
             client held {}, read-backs that found the grant gone {}, conditioned writes \
             refused 409 {}",
            Self::get(&self.recreated_indices),
            Self::get(&self.recreated_docs),
            Self::get(&self.rollbacks),
            Self::get(&self.lock_rollbacks),
            Self::get(&self.data_rollbacks),
            Self::get(&self.store_fault_on_holder),
            Self::get(&self.grants_found_gone),
            Self::get(&self.conflicts),
        )
    }
}

/// Runs `w` under the random scheduler, then PCT, `n` executions each (seed fixed), every
/// execution replayed through `refinement`; returns the coverage.
pub fn explore(w: &Workload, refinement: Refinement, seed: u64, n: usize) -> Arc<Coverage> {
    let _heavy = crate::heavy();
    let t = Instant::now();
    let cov = Arc::new(Coverage::default());
    let check = refine::checker(refinement);
    let body = {
        let (w, cov) = (w.clone(), Arc::clone(&cov));
        move || {
            let trace = workload::run::<Shuttle>(&w, Some(&check));
            cov.add(&trace);
        }
    };
    Runner::new(RandomScheduler::new_from_seed(seed, n), persisting()).run(body.clone());
    Runner::new(
        PctScheduler::new_from_seed(seed, PCT_DEPTH, n),
        persisting(),
    )
    .run(body);
    println!("{} in {:?}", cov.report(w.name), t.elapsed());
    cov
}

/// What the model checker says about `w`'s recipe with these faults.
pub fn model_violations(w: &Workload, faults: &str) -> Vec<&'static str> {
    let faults = lockwright_model::docstore::Faults::parse(faults).expect("faults");
    let report = checker::check(&w.model().with_faults(faults).with_symmetry(true));
    println!(
        "model {}: {} unique states, violated {:?}",
        report.model.label(),
        report.unique_states,
        report.violated()
    );
    report.violated()
}

// ---------------------------------------------------------------------------------------------
// Teeth: a broken variant, found, checked and replayed.
// ---------------------------------------------------------------------------------------------

/// A broken variant: the incident, its workload, the model's faults for it, the property the
/// model says it violates (the only one its replay enforces, so that the first failure is
/// that one).
pub struct Twin {
    pub incident: &'static str,
    pub workload: Workload,
    pub faults: &'static str,
    pub property: &'static str,
}

pub fn two_clients(rounds: usize, writes: u8, env: Vec<Op>) -> Vec<ThreadPlan> {
    vec![
        ThreadPlan::client(0, rounds, writes),
        ThreadPlan::client(1, rounds, writes),
        ThreadPlan::env(env),
    ]
}

/// Scheduler seed (any fixed value; pinned so that the finder is deterministic).
pub const SEED: u64 = 0xd0c5_7ee7;
/// Executions per scheduler per twin before giving up. Measured at this seed (20,000-run
/// sweep, before sessions read the data document): the random scheduler found every twin
/// within 653 executions, while PCT at depth 3 missed document, read-write and leased-noop
/// (their failures need a lost reply or two ticks to land between specific steps of two
/// clients: four or five ordering constraints) and depth 5 found all within 1,632. So the
/// finder runs the random scheduler, then PCT at depth 5 if random missed; 3,000 each bounds
/// a miss at about a second. With the session reads (this commit): random finds global after
/// 1 execution, leased-noop 4, fenced-unclaimed 19, read-write 25, document 106; the unfenced
/// twin is missed by random in 3,000 and found by PCT after 7.
pub const TWIN_ITERATIONS: usize = 3_000;
/// PCT depth for the twins' second chance (see [`TWIN_ITERATIONS`]).
pub const TWIN_PCT_DEPTH: usize = 5;

pub fn twin_body(t: &Twin) -> impl Fn() + Clone + Send + Sync + 'static {
    let w = Arc::new(t.workload.clone());
    let check = refine::checker(w.refinement().enforcing(&[t.property]));
    move || {
        workload::run::<Shuttle>(&w, Some(&check));
    }
}

/// Runs the random scheduler, then PCT, on one twin; returns the replayable schedule of the
/// first failure.
pub fn find(t: &Twin) -> Option<String> {
    find_within(t, TWIN_ITERATIONS)
}

/// [`find`] with `iterations` executions per scheduler.
pub fn find_within(t: &Twin, iterations: usize) -> Option<String> {
    let _heavy = crate::heavy();
    let serial = serial();
    let passes = [Scheduler::Random, Scheduler::Pct(TWIN_PCT_DEPTH)];
    let name = t.workload.name;
    let Some(found) = search(&serial, twin_body(t), SEED, iterations, &passes) else {
        println!(
            "{}: NOT caught in {iterations} random + {iterations} PCT executions",
            t.incident
        );
        return None;
    };
    assert!(
        found
            .message
            .contains(&format!("violates \"{}\"", t.property)),
        "{}: unexpected failure: {}",
        t.incident,
        found.message
    );
    // The model, not just this replay, says the broken variant violates the property.
    assert!(
        model_violations(&t.workload, t.faults).contains(&t.property),
        "{}: the model does not violate {:?} with faults {}",
        t.incident,
        t.property,
        t.faults
    );
    // The recording replays through the broken model variant to the same violation.
    let failure = workload::take_failure(name).expect("failure recorded");
    let err = t
        .workload
        .refinement()
        .enforcing(&[t.property])
        .check(&failure.trace)
        .expect_err("the broken model variant must reach the violation on this path");
    assert_eq!(err.property, Some(t.property), "{}: {err}", t.incident);
    // The schedule replays to the same failure.
    let schedule = found.schedule;
    let again = replay(&serial, &schedule, twin_body(t)).expect("the replay must fail again");
    assert!(
        again.contains(&format!("violates \"{}\"", t.property)),
        "{}: replay failed differently",
        t.incident
    );
    let _ = workload::take_failure(name);
    println!(
        "{}: the recording up to the violation:\n{}",
        t.incident,
        lockwright_testkit::docstore::format_trace(&failure.trace[..=err.step])
    );
    println!(
        "{} (model {} × {}, faults {}): \"{}\" caught by shuttle's {} scheduler after {} \
         executions, {} steps into the recording; replay schedule {schedule:?}",
        t.incident,
        t.workload.variant,
        t.workload.writes,
        t.faults,
        t.property,
        found.scheduler.name(),
        found.executions,
        err.step + 1
    );
    Some(schedule)
}

/// Replays a pinned schedule of the twin named `name`: must fail with its property.
pub fn replay_pinned(twins: Vec<Twin>, name: &str, schedule: &str) {
    let _heavy = crate::heavy();
    let serial = serial();
    let t = twins
        .into_iter()
        .find(|t| t.workload.name == name)
        .expect("known twin");
    let replayed = replay(&serial, schedule, twin_body(&t));
    let _ = workload::take_failure(t.workload.name);
    let msg = replayed.expect("the pinned schedule must still reach the violation");
    assert!(
        msg.contains(&format!("violates \"{}\"", t.property)),
        "{}: {msg}",
        t.incident
    );
}
