//! Which simulated clients do what with the REAL `lockwright::zk::ZkMutex` on a [`SimZk`],
//! under shuttle.
//!
//! Each client is a shuttle thread blocking on its async rounds: `acquire` (waits as long as
//! it takes), in [`Writes::FencedClaim`] the claim of the resource, `c0` re-enters and releases
//! the inner guard (when the workload says so), a few updates (a read, then a write in the
//! workload's [`Writes`] mode), release, then wait for the recipe's background
//! tasks (the model's client deletes its node before it acquires again). One more thread, the
//! environment, injects the faults of its plan in order. A workload may share one simulated
//! client between `c0` and `c1` (`shared_client`), and have one client's caller drop an
//! acquire while it waits (`drop_acquire`) or a release after a lost delete reply
//! (`drop_release`). One client may acquire with `try_acquire` or `acquire_timeout` for its
//! first give-ups ([`GiveUps`]; each give-up's time is checked on the simulated clock), and
//! callers may drop acquire and release futures at random `Pending` polls where the model
//! allows it (`random_drops`). A third kind of thread, the clock, moves simulated time. Every
//! step is replayed through the model as it is recorded ([`super::refine`]); after the run,
//! the server must keep no node of a live session (`end_check`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lockwright::zk::{Claimed, HoldState, LostReason, ZkDefect, ZkGuard, ZkLockError, ZkMutex};
use lockwright_model::zk::{ClientId, Faults, Scenario, Variant, WriteMode};

use super::record::{Call, Step};
use super::refine::Refinement;
use super::world::{Counter, SimCoord, SimResource, SimZk, DIR};

mod give_up_time;
use give_up_time::check_give_up_time;

/// How a holder writes (the guard API the workload exercises).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// `ZkGuard::guarded_write` (a `multi` with the lock-node check): the model's `guarded`;
    /// with [`ZkDefect::UnfencedWrites`] the check is dropped: `unfenced`.
    Guarded,
    /// `ZkGuard::token` carried to a resource that refuses a token below the highest it took:
    /// `fenced`; with [`ZkDefect::FenceBySequence`] the token is the suffix:
    /// `fenced-by-sequence`. No claim: the unclaimed twin of [`Writes::FencedClaim`].
    Fenced,
    /// `ZkGuard::claim` on the resource right after the grant (the production
    /// `FencedResource` trait on [`SimResource`]), then every read and write through the
    /// returned `Claimed` handle: `fenced-claim`.
    FencedClaim,
    /// `ZkGuard::ensure_valid`, then a write without a token: `check-then-write`.
    EnsureValid,
}

/// One fault of the environment's plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The server expires the client's current session.
    Expire(ClientId),
    /// The client's next create or delete is applied (`true`) or not, its reply lost.
    LoseReply(ClientId, bool),
    /// The client replaces its handle (a new session; the old one abandoned).
    Restart(ClientId),
    /// The server times out the client's abandoned session.
    ExpireOld(ClientId),
    /// The empty parent is reaped and made again.
    RecreateParent,
    /// The client's next applied create makes a node the server names to it under a name it
    /// does not read as a lock node (the model's `MisreadOwnNode`, budget `misread`).
    Misread(ClientId),
    /// The client's next search that finds its node, unless a `sync` came first, is answered
    /// by a server that has not applied its writes (the model's `LaggedSearch`, budget `lag`).
    Lag(ClientId),
    /// The client's connection drops at its next request that can carry it, its session alive
    /// (the model's `Suspend`, budget `suspend`): a create or a retried delete stays queued.
    Suspend(ClientId),
    /// Once the suspension fired, the server may apply the queued request (shuttle's choice;
    /// the model's `ApplySent`, no budget).
    ApplySent(ClientId),
    /// This long (simulated time) after the suspension fired, the client reconnects to its
    /// session (the model's `Reconnect`; skipped if the client learned of an expiry first).
    Reconnect(ClientId, Duration),
}

/// How an impatient client acquires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// `ZkMutex::try_acquire`: gives up as soon as a node is ahead.
    Try,
    /// `ZkMutex::acquire_timeout` with this timeout (simulated time).
    Timeout(Duration),
}

/// A client that acquires with a bound (`try_acquire` or `acquire_timeout`) for its first
/// `times` give-ups, then waits as long as it takes. Each give-up that holds a node hands it
/// to a cleanup task: the model's `Abandon` (budget `abandon`), one per give-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GiveUps {
    pub client: ClientId,
    pub how: GiveUp,
    pub times: u8,
}

/// A scenario: the recipe (and its defect), the clients and their rounds, the faults.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Keys recorded failures ([`super::take_failure`]).
    pub name: &'static str,
    pub defect: Option<ZkDefect>,
    pub writes: Writes,
    pub clients: u8,
    /// Rounds (acquire … release) per client.
    pub rounds: usize,
    /// Writes per hold.
    pub writes_per_hold: usize,
    /// Whether `c0` re-enters once per hold.
    pub reenter: bool,
    /// The environment's faults, in order (one thread).
    pub faults: Vec<Fault>,
    /// `c0` and `c1` are two mutexes sharing one simulated client (the model's
    /// `--shared-client`).
    pub shared_client: bool,
    /// This client's caller drops one `release()` after its delete lost a reply (the model's
    /// `Abandon`, budget `abandon=1`).
    pub drop_release: Option<ClientId>,
    /// This client's caller drops one `acquire()` while it waits for its predecessor (the
    /// model's `Abandon` at `Waiting`, budget `abandon=1`).
    pub drop_acquire: Option<ClientId>,
    /// A client acquiring with a bound ([`GiveUps`]).
    pub give_ups: Option<GiveUps>,
    /// Callers may drop this many `acquire()`/`acquire_timeout()`/`release()` futures in a run,
    /// at `Pending` polls where the model's `Abandon` is enabled (shuttle's random choice;
    /// budget `abandon`).
    pub random_drops: u8,
    /// Test-only: the simulated client hides a dropped connection (`session_event()` answers
    /// `Connected` while suspended), the twin of the clock's bound across a suspension.
    pub hide_disconnects: bool,
    /// After the run, no lock node of a live session may be left (the server's children: an
    /// oracle that asks neither the recipe nor the model). On for the correct recipe; a
    /// broken variant's twin stops at its property first.
    pub end_check: bool,
    /// A dropped or given-up future's cleanup runs beside the client's next acquire (the
    /// model's cleanup actions), each attempt with a protection id of its own; otherwise the
    /// client waits for its cleanups first.
    pub overlap: bool,
    /// With `overlap`: the simulated client hands out one protection id per client instead
    /// of one per attempt (a broken uuid source; the model's `protection-id-per-client`).
    pub one_id_per_client: bool,
    /// Test-only: the resource checks a write's token and runs the write as two steps (the
    /// recipe's fenced write before issue #33), the twin of the one-step
    /// `FencedResource::write_fenced`; with [`Writes::FencedClaim`] its counter loses an
    /// increment.
    pub two_step_writes: bool,
    /// Issue #33's simulated time ([`SimZk::strict_time`]): every request and session re-open
    /// take this long, and the clock moves only while no client is ready to run, so the
    /// give-up oracle forgives no request time.
    pub request_latency: Option<Duration>,
}

impl Workload {
    /// The curator recipe, `clients` clients, 2 rounds of 2 writes, `c0` re-entrant, no faults.
    pub fn curator(name: &'static str, writes: Writes, clients: u8) -> Workload {
        Workload {
            name,
            defect: None,
            writes,
            clients,
            rounds: 2,
            writes_per_hold: 2,
            reenter: true,
            faults: Vec::new(),
            shared_client: false,
            drop_release: None,
            drop_acquire: None,
            give_ups: None,
            random_drops: 0,
            hide_disconnects: false,
            end_check: true,
            overlap: false,
            one_id_per_client: false,
            two_step_writes: false,
            request_latency: None,
        }
    }

    /// [`Workload::request_latency`].
    pub fn with_request_latency(mut self, latency: Duration) -> Workload {
        self.request_latency = Some(latency);
        self
    }

    /// [`Workload::two_step_writes`] on.
    pub fn with_two_step_writes(mut self) -> Workload {
        self.two_step_writes = true;
        self
    }

    /// [`Workload::overlap`] on.
    pub fn with_overlap(mut self) -> Workload {
        self.overlap = true;
        self
    }

    /// Overlap with one protection id per client ([`Workload::one_id_per_client`]).
    pub fn with_one_id_per_client(mut self) -> Workload {
        self.overlap = true;
        self.one_id_per_client = true;
        self.end_check = false;
        self
    }

    pub fn with_faults(mut self, faults: Vec<Fault>) -> Workload {
        self.faults = faults;
        self
    }

    pub fn with_defect(mut self, defect: ZkDefect) -> Workload {
        self.defect = Some(defect);
        self.end_check = false;
        self
    }

    pub fn with_give_ups(mut self, client: ClientId, how: GiveUp, times: u8) -> Workload {
        self.give_ups = Some(GiveUps { client, how, times });
        self
    }

    pub fn with_random_drops(mut self, n: u8) -> Workload {
        self.random_drops = n;
        self
    }

    pub fn with_end_check(mut self, on: bool) -> Workload {
        self.end_check = on;
        self
    }

    pub fn with_rounds(mut self, rounds: usize, writes_per_hold: usize) -> Workload {
        self.rounds = rounds;
        self.writes_per_hold = writes_per_hold;
        self
    }

    pub fn with_shared_client(mut self, shared: bool) -> Workload {
        self.shared_client = shared;
        self
    }

    pub fn with_dropped_release(mut self, c: ClientId) -> Workload {
        self.drop_release = Some(c);
        self
    }

    pub fn with_dropped_acquire(mut self, c: ClientId) -> Workload {
        self.drop_acquire = Some(c);
        self
    }

    pub fn with_reenter(mut self, reenter: bool) -> Workload {
        self.reenter = reenter;
        self
    }

    /// The model's variant for this recipe.
    pub fn variant(&self) -> Variant {
        match self.defect {
            Some(ZkDefect::NoProtection) => Variant::NoProtection,
            Some(ZkDefect::ReleaseForgets) => Variant::ReleaseForgets,
            Some(ZkDefect::AdoptOldSession) => Variant::AdoptOldSession,
            Some(ZkDefect::DeleteByNameRetry) => Variant::DeleteByNameRetry,
            Some(ZkDefect::AbandonWithoutDelete) => Variant::AbandonWithoutDelete,
            Some(ZkDefect::DropOwnOnSessionSwap) => Variant::DropOwnOnSessionSwap,
            Some(ZkDefect::SearchWithoutSync) => Variant::SearchWithoutSync,
            Some(ZkDefect::ReleaseCancelUnsafe) => Variant::ReleaseCancelUnsafe,
            Some(ZkDefect::GiveUpCancelUnsafe) => Variant::GiveUpCancelUnsafe,
            Some(ZkDefect::TextOrder) => Variant::TextOrder,
            _ if self.one_id_per_client => Variant::ProtectionIdPerClient,
            _ => Variant::Curator,
        }
    }

    /// The model's write mode for this recipe.
    pub fn write_mode(&self) -> WriteMode {
        match (self.writes, self.defect) {
            (Writes::Guarded, Some(ZkDefect::UnfencedWrites)) => WriteMode::Unfenced,
            (Writes::Guarded, _) => WriteMode::Guarded,
            (Writes::Fenced, Some(ZkDefect::FenceBySequence)) => WriteMode::FencedBySequence,
            (Writes::Fenced, _) => WriteMode::Fenced,
            (Writes::FencedClaim, _) => WriteMode::FencedClaim,
            (Writes::EnsureValid, _) => WriteMode::CheckThenWrite,
        }
    }

    /// The fault budgets: what the plan can inject.
    pub fn budgets(&self) -> Faults {
        let n = |p: &dyn Fn(&Fault) -> bool| {
            u8::try_from(self.faults.iter().filter(|f| p(f)).count()).expect("few faults")
        };
        Faults {
            expire: n(&|f| matches!(f, Fault::Expire(_))),
            lose_reply: n(&|f| matches!(f, Fault::LoseReply(..))),
            restart: n(&|f| matches!(f, Fault::Restart(_))),
            recreate_parent: n(&|f| matches!(f, Fault::RecreateParent)),
            abandon: u8::from(self.drop_release.is_some())
                + u8::from(self.drop_acquire.is_some())
                + self.give_ups.map_or(0, |g| g.times)
                + self.random_drops,
            suspend: n(&|f| matches!(f, Fault::Suspend(_))),
            lag: n(&|f| matches!(f, Fault::Lag(_))),
            misread: n(&|f| matches!(f, Fault::Misread(_))),
            refuse_session: 0,
        }
    }

    /// The model scenario (lockwright guard, no symmetry: client ids are the recording's).
    pub fn model(&self) -> Scenario {
        Scenario::new(self.variant(), self.write_mode())
            .with_clients(self.clients)
            .with_reentrant(self.reenter)
            .with_faults(self.budgets())
            .with_shared_client(self.shared_client)
            .with_symmetry(false)
    }

    /// The refinement check of this workload's runs, all `always` properties enforced.
    pub fn refinement(&self) -> Refinement {
        Refinement::new(self.model())
    }
}

fn lost(e: &ZkLockError) -> bool {
    e.lost_reason().is_some_and(LostReason::is_final)
}

/// Whether the guard knows its client runs another session (the model's guard reported the
/// loss at the session change): it touches the resource no more. An expiry it has not learned
/// of does not stop it: the fence must.
fn replaced(guard: &ZkGuard<SimCoord>) -> bool {
    matches!(
        guard.state(),
        HoldState::Lost(LostReason::SessionReplaced { .. })
    )
}

/// One update's write (after its read); `false` once the hold is lost.
async fn write_once(
    w: &Workload,
    coord: &SimCoord,
    guard: &ZkGuard<SimCoord>,
    claimed: Option<&Claimed<'_, SimResource>>,
    i: usize,
) -> bool {
    if let Some(claimed) = claimed {
        if replaced(guard) {
            return false;
        }
        // As a user writes: the increment runs inside the resource's fenced write.
        let accepted = claimed.write(Counter::increment).is_ok();
        if accepted {
            coord.resource().count_accepted();
        }
        return accepted;
    }
    match w.writes {
        Writes::Guarded => {
            let op =
                lockwright::zk::GuardedOp::set_data("/resource", format!("c{}-{i}", coord.id()));
            match guard.guarded_write(&[op]).await {
                Ok(_) => true,
                Err(e) if lost(&e) => {
                    coord.note(Call::LockLost);
                    false
                }
                Err(e) => panic!("c{}: guarded write failed: {e}", coord.id()),
            }
        }
        Writes::Fenced | Writes::FencedClaim => {
            if replaced(guard) {
                return false;
            }
            coord.fenced_write(guard.token()).await.is_ok()
        }
        Writes::EnsureValid => match guard.ensure_valid().await {
            Ok(()) => {
                coord.write().await;
                true
            }
            Err(e) if lost(&e) => {
                coord.note(Call::LockLost);
                false
            }
            Err(e) => panic!("c{}: ensure_valid failed: {e}", coord.id()),
        },
    }
}

async fn client(w: Arc<Workload>, coord: SimCoord) {
    let c = coord.id();
    let mut mutex = ZkMutex::new(coord.clone(), DIR).expect("a valid path");
    let mut dropped = false;
    let mut dropped_acquire = false;
    if let Some(d) = w.defect {
        mutex = mutex.with_defect(d);
    }
    let mut give_ups = w.give_ups.filter(|g| g.client == c).map_or(0, |g| g.times);
    for _ in 0..w.rounds {
        let guard = loop {
            let bounded = w.give_ups.filter(|_| give_ups > 0).map(|g| g.how);
            // Each bounded acquire may give up once (or be dropped): one `Abandon` each.
            give_ups = give_ups.saturating_sub(1);
            let start = coord.sim().elapsed();
            let requests = coord.request_time();
            coord.set_acquiring(true);
            let r = match bounded {
                Some(GiveUp::Try) => droppable(&w, &coord, mutex.try_acquire()).await,
                Some(GiveUp::Timeout(t)) => droppable(&w, &coord, mutex.acquire_timeout(t)).await,
                None => acquire(&w, &coord, &mutex, &mut dropped_acquire).await,
            };
            coord.set_acquiring(false);
            match (r, bounded) {
                (Some(Ok(g)), _) => break g,
                (
                    Some(Err(e @ (ZkLockError::Held { .. } | ZkLockError::TimedOut { .. }))),
                    Some(how),
                ) => {
                    let waited = coord.sim().elapsed() - start;
                    let in_requests = coord.request_time() - requests;
                    if let Err(m) = check_give_up_time(how, waited, in_requests, &e) {
                        panic!(
                            "c{c}: {m}\nrecording:\n{}",
                            super::record::format_trace(&coord.sim().trace())
                        );
                    }
                    coord.gave_up(waited);
                    settle_cleanup(&w, &coord).await;
                }
                (Some(Err(e)), _) => panic!("c{c}: acquire failed: {e}"),
                // Dropped (while it waited, or at random): its cleanup (first, or beside it),
                // then a new acquire.
                (None, _) => settle_cleanup(&w, &coord).await,
            }
        };
        coord.note(Call::Acquired);
        let resource = coord.resource();
        let claimed = match w.writes {
            Writes::FencedClaim if replaced(&guard) => Err(()),
            Writes::FencedClaim => guard.claim(&resource).map(Some).map_err(|_| ()),
            _ => Ok(None),
        };
        // A refused claim: a later holder has claimed; this hold is lost (the model's
        // `LockLost`), so no re-entry and no update.
        let Ok(claimed) = claimed else {
            if let Err(e) = guard.release().await {
                panic!("c{c}: release failed: {e}");
            }
            coord.quiesce().await;
            continue;
        };
        if w.reenter && c == 0 && guard.state() == HoldState::Held {
            // Re-entrancy takes no request: both steps happen at once.
            let inner = guard.reenter();
            coord.note(Call::Reenter);
            inner
                .release()
                .await
                .expect("an inner release sends nothing");
            coord.note(Call::ReleaseInner);
        }
        for i in 0..w.writes_per_hold {
            // An update: read (the claimed handle, or the resource directly), then write.
            if replaced(&guard) {
                break;
            }
            match &claimed {
                Some(h) => h.read(SimResource::read),
                None => coord.read().await,
            }
            if !write_once(&w, &coord, &guard, claimed.as_ref(), i).await {
                break;
            }
        }
        match release(&w, &coord, guard, &mut dropped).await {
            Ok(true) => settle_cleanup(&w, &coord).await,
            Ok(false) => coord.quiesce().await,
            Err(e) => panic!("c{c}: release failed: {e}"),
        }
    }
    // The last cleanups finish before the end-of-run check.
    if w.overlap {
        coord.quiesce().await;
    }
}

/// After a dropped or given-up future: wait for its cleanup, unless the workload lets the
/// cleanup run beside the next acquire ([`Workload::overlap`]).
async fn settle_cleanup(w: &Workload, coord: &SimCoord) {
    if !w.overlap {
        coord.quiesce().await;
    }
}

/// `fut` (an acquire or a release); with random drops in the workload, at each `Pending` poll
/// the caller may drop it ([`SimCoord::try_drop`]): `None`.
async fn droppable<F: Future>(w: &Workload, coord: &SimCoord, fut: F) -> Option<F::Output> {
    if w.random_drops == 0 {
        return Some(fut.await);
    }
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(r) = fut.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(r));
        }
        if coord.try_drop() {
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Pending
    })
    .await
}

/// `mutex.acquire()`; for the workload's `drop_acquire` client, its first acquire that waits
/// for a predecessor is dropped there (`None`).
async fn acquire(
    w: &Workload,
    coord: &SimCoord,
    mutex: &ZkMutex<SimCoord>,
    dropped: &mut bool,
) -> Option<Result<ZkGuard<SimCoord>, ZkLockError>> {
    if *dropped || w.drop_acquire != Some(coord.id()) {
        return droppable(w, coord, mutex.acquire()).await;
    }
    let mut fut = std::pin::pin!(mutex.acquire());
    let out = std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(r) = fut.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(r));
        }
        if coord.try_drop_acquire() {
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Pending
    })
    .await;
    if out.is_none() {
        *dropped = true;
    }
    out
}

/// `guard.release()`; for the workload's `drop_release` client, the first release whose
/// delete loses its reply is dropped there (a timeout around `release()`). `Ok(true)`: the
/// caller dropped it.
async fn release(
    w: &Workload,
    coord: &SimCoord,
    guard: ZkGuard<SimCoord>,
    dropped: &mut bool,
) -> Result<bool, ZkLockError> {
    if *dropped || w.drop_release != Some(coord.id()) {
        // A release dropped at random: its delete goes on (or not) as the recipe says.
        return match droppable(w, coord, guard.release()).await {
            Some(r) => r.map(|()| false),
            None => Ok(true),
        };
    }
    let mut fut = std::pin::pin!(guard.release());
    let out = std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(r) = fut.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(r));
        }
        if coord.try_abandon(cx.waker()) {
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Pending
    })
    .await;
    match out {
        Some(r) => r.map(|()| false),
        None => {
            *dropped = true;
            Ok(true)
        }
    }
}

/// Runs one execution of `w` (inside a shuttle test), every step replayed through
/// `refinement` if given. Returns the recording.
pub fn run(w: &Workload, refinement: Option<&Refinement>) -> Vec<Step> {
    let sim = SimZk::sharing(w.name, w.clients, w.shared_client, refinement);
    sim.allow_drops(w.random_drops);
    sim.hide_disconnects(w.hide_disconnects);
    sim.two_step_writes(w.two_step_writes);
    if let Some(l) = w.request_latency {
        sim.strict_time(l);
    }
    if w.overlap && !w.one_id_per_client {
        sim.fresh_ids();
    }
    let w = Arc::new(w.clone());
    let mut handles = Vec::new();
    for c in 0..w.clients {
        let (w, coord) = (Arc::clone(&w), sim.client(c));
        sim.client_started();
        handles.push(shuttle::thread::spawn(move || {
            shuttle::future::block_on(client(w, coord.clone()));
            coord.sim().client_done();
        }));
    }
    // The clock: moves simulated time while a sleep waits and any client runs.
    {
        let sim = sim.clone();
        handles.push(shuttle::thread::spawn(move || {
            shuttle::future::block_on(sim.run_clock());
        }));
    }
    if !w.faults.is_empty() {
        let (w, sim) = (Arc::clone(&w), sim.clone());
        handles.push(shuttle::thread::spawn(move || {
            for f in &w.faults {
                match *f {
                    Fault::Expire(c) => sim.expire(c),
                    Fault::LoseReply(c, applied) => sim.arm(c, applied),
                    Fault::Restart(c) => sim.restart(c),
                    Fault::ExpireOld(c) => sim.expire_old(c),
                    Fault::RecreateParent => sim.recreate_parent(),
                    Fault::Misread(c) => sim.arm_misread(c),
                    Fault::Lag(c) => sim.arm_lag(c),
                    Fault::Suspend(c) => sim.arm_suspend(c),
                    Fault::ApplySent(c) => sim.apply_sent(c),
                    Fault::Reconnect(c, after) => sim.reconnect(c, after),
                }
            }
        }));
    }
    for h in handles {
        if let Err(p) = h.join() {
            std::panic::resume_unwind(p);
        }
    }
    if w.writes == Writes::FencedClaim {
        // The counter oracle: every write `Claimed::write` accepted incremented the
        // resource's counter once, and no two of them ran at the same time.
        let (counter, accepted) = sim.resource_tally();
        assert_eq!(
            counter,
            accepted,
            "the fenced resource's counter is {counter} after {accepted} accepted writes: \
             an increment was lost (two writes ran at once)\nrecording:\n{}",
            super::record::format_trace(&sim.trace())
        );
    }
    if w.end_check {
        let left = sim.live_nodes();
        assert!(
            left.is_empty(),
            "no orphan node after the run: every client released, yet the server keeps {left:?}\nrecording:\n{}",
            super::record::format_trace(&sim.trace())
        );
    }
    sim.trace()
}
