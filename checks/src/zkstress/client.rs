//! One `zk-stress-run` client process (`lockwright zk-stress-client`, hidden): the ZooKeeper
//! mutex in a loop, each hold reported to the verify server and written to the fenced
//! resource:
//!
//! ```text
//! acquire -> HOLD (ledger) -> 1 (verify server) -> WRITE 1 -> hold -> WRITE 2 -> 0 (verify server) -> release
//! ```
//!
//! With a counter (`--resource guarded|unchecked`) the hold between the two writes is the
//! lost-update critical section: read the counter znode (plain `getData`), wait the hold
//! time, write value + 1 — with `guarded` through [`ZkGuard::guarded_write`] (a `multi` that
//! checks the lock node first), with `unchecked` through the same `multi` without the check.
//! With `fenced-claim` the counter lives in the resource (the ledger): the holder claims it
//! with its token (claim and read in one request), waits, and writes value + 1 with its token.
//! The data written is `"<value> <lock node>"`, so the server's transaction log names the
//! writer of every increment. What came back (ok, rejected, reply lost) goes to the ledger,
//! which counts the acknowledged increments; the client never decides whether one was lost.
//!
//! The writes carry the guard's fencing token and nothing checks the lock before them: a
//! holder paused past its session timeout wakes up and writes as if it still held the lock,
//! which is exactly what the fence is for. A rejected write ends the hold: the client stops
//! writing, asks [`ZkGuard::ensure_valid`] what became of the lock (it must not say "held":
//! that is reported), tells the verify server it releases, and releases. Lock errors (an
//! acquire that timed out while the server restarted, ...) are reported to the ledger and the
//! loop goes on; only a lost verify-server or ledger connection ends the process with an error.
//!
//! [`ZkGuard::ensure_valid`]: lockwright::zk::ZkGuard::ensure_valid

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use lockwright::file::verifying::{VerifierConnection, OBTAINED, RELEASING};
use lockwright::zk::{
    block_on, CoordError, Coordination, GuardedOp, LostReason, ZkClient, ZkGuard, ZkLockError,
    ZkMutex,
};

use super::ledger::{LedgerConn, ResourceMode, WriteOutcome};
use super::trace::record::{Event, Op, Recorder, Res, Traced};

/// The client's coordination handle: the production client, every step recorded when the run
/// asks for a trace.
type Coord = Traced<ZkClient>;

/// How a client runs.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The ZooKeeper connect string (the client's proxy port).
    pub connect: String,
    /// The lock directory.
    pub path: String,
    pub id: u8,
    /// The verify server.
    pub server: String,
    /// The ledger (fenced resource).
    pub ledger: String,
    /// Hold time between the two writes.
    pub hold: Duration,
    pub session_timeout: Duration,
    /// Stop after this many holds (the orchestrator usually stops the clients through the
    /// ledger first).
    pub count: u64,
    /// Where the counter lives and how it is written.
    pub resource: ResourceMode,
    /// The counter znode (with a counter resource).
    pub counter: String,
    /// Where to write this process's trace (`None`: no trace).
    pub trace: Option<std::path::PathBuf>,
    /// A deliberately broken recipe variant (`--client-variant`; needs the `client-variants`
    /// feature), by the model's name.
    pub variant: Option<String>,
}

/// How long an acquire may wait before the client reports it and tries again.
pub const ACQUIRE_PATIENCE: Duration = Duration::from_secs(30);

fn reason_name(e: &ZkLockError) -> String {
    match e {
        ZkLockError::LockLost { reason, .. } => match reason {
            LostReason::SessionExpired { .. } => "session-expired",
            LostReason::Suspended => "suspended-unresolved",
            LostReason::NodeDeleted => "node-deleted",
            LostReason::NodeReplaced { .. } => "node-replaced",
            LostReason::SessionReplaced { .. } => "session-replaced",
            LostReason::AuthFailed { .. } => "auth-failed",
            LostReason::ClientClosed { .. } => "client-closed",
            _ => "other",
        }
        .to_string(),
        _ => "error".to_string(),
    }
}

/// Runs the client loop.
///
/// # Errors
/// A verify-server or ledger connection that fails, or no ZooKeeper session within a minute.
pub fn run(cfg: &ClientConfig) -> anyhow::Result<ExitCode> {
    let mut ledger = LedgerConn::connect(&cfg.ledger, cfg.id)
        .with_context(|| format!("cannot reach the ledger at {}", cfg.ledger))?;
    let verify = VerifierConnection::connect(cfg.server.as_str(), cfg.id, Duration::from_secs(30))
        .with_context(|| format!("cannot register with verify server {}", cfg.server))?;
    block_on(async {
        let zk = connect(cfg, &mut ledger).await?;
        let rec = match &cfg.trace {
            Some(p) => Recorder::create(p)
                .with_context(|| format!("cannot create the trace file {}", p.display()))?,
            None => Recorder::none(),
        };
        let mutex = with_variant(
            ZkMutex::new(Traced::new(zk, rec, cfg.counter.clone()), &cfg.path)?,
            cfg.variant.as_deref(),
        )?;
        let mut seq = 0u64;
        while seq < cfg.count {
            let guard = match mutex.acquire_timeout(ACQUIRE_PATIENCE).await {
                Ok(g) => {
                    let c = mutex.coordination();
                    let mut ev = Event::new(Op::Acquired, Res::Ok, g.session());
                    ev.path = Some(g.node().to_string());
                    ev.zxid = Some(g.token().get());
                    c.observe(ev);
                    g
                }
                Err(e) => {
                    let c = mutex.coordination();
                    let mut ev = Event::new(Op::AcquireFailed, Res::Error, c.session());
                    ev.data = Some(e.to_string());
                    c.observe(ev);
                    ledger.error(&format!("acquire: {e}"))?;
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            seq += 1;
            let (token, session) = (guard.token().get(), guard.session().0);
            let mut stop = ledger.hold(seq, token, session)?;
            verify.verify(OBTAINED)?;
            let mut rejected = false;
            for n in 1..=2u8 {
                if n == 2 {
                    if cfg.resource.has_counter() {
                        rejected = increment(cfg, &mutex, &guard, &mut ledger, seq).await?;
                        if rejected {
                            break;
                        }
                    } else if !cfg.hold.is_zero() {
                        std::thread::sleep(cfg.hold);
                    }
                }
                let (outcome, s) = ledger.write(seq, n, token, session)?;
                stop |= s;
                if let WriteOutcome::Rejected { .. } = outcome {
                    rejected = true;
                    break;
                }
            }
            if rejected {
                // The fence says a newer holder wrote: the recipe must agree the lock is gone.
                let (valid, reason) = final_answer(&guard, cfg.session_timeout).await;
                ledger.lost(seq, token, valid, &reason)?;
            }
            verify.verify(RELEASING)?;
            if let Err(e) = guard.release().await {
                ledger.error(&format!("release: {e}"))?;
            }
            stop |= ledger.released(seq)?;
            if stop {
                break;
            }
        }
        let st = mutex.coordination().inner().stats();
        ledger.stats(&format!(
            "creates={} lists={} watches={} exists={} deletes={} multis={} other={} renewals={} searches={} holds={seq}",
            st.creates, st.lists, st.watches, st.exists, st.deletes, st.multis, st.other, st.renewals, st.searches
        ))?;
        println!("zk-stress-client {} done after {seq} holds", cfg.id);
        Ok(ExitCode::SUCCESS)
    })
}

/// The mutex with the recipe variant `name` (the model's name of a [`ZkDefect`]).
///
/// [`ZkDefect`]: https://docs.rs/lockwright (test-only, behind `test-util`)
///
/// # Errors
/// An unknown name, or a binary built without the `client-variants` feature.
#[cfg(feature = "client-variants")]
fn with_variant(m: ZkMutex<Coord>, name: Option<&str>) -> anyhow::Result<ZkMutex<Coord>> {
    use lockwright::zk::ZkDefect;
    let Some(name) = name else {
        return Ok(m);
    };
    let defect = match name {
        "no-protection" => ZkDefect::NoProtection,
        "release-forgets" => ZkDefect::ReleaseForgets,
        "adopt-old-session" => ZkDefect::AdoptOldSession,
        "delete-by-name-retry" => ZkDefect::DeleteByNameRetry,
        "search-without-sync" => ZkDefect::SearchWithoutSync,
        "text-order" => ZkDefect::TextOrder,
        "unfenced" => ZkDefect::UnfencedWrites,
        other => anyhow::bail!("--client-variant {other}: not a recipe defect this client can run"),
    };
    Ok(m.with_defect(defect))
}

#[cfg(not(feature = "client-variants"))]
fn with_variant(m: ZkMutex<Coord>, name: Option<&str>) -> anyhow::Result<ZkMutex<Coord>> {
    match name {
        None => Ok(m),
        Some(n) => anyhow::bail!(
            "--client-variant {n}: this lockwright was built without the `client-variants` \
             feature (cargo run -p lockwright-checks --features client-variants -- ...)"
        ),
    }
}

/// Opens the session, retrying for a minute (the server may be restarting).
async fn connect(cfg: &ClientConfig, ledger: &mut LedgerConn) -> anyhow::Result<ZkClient> {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        match ZkClient::builder()
            .session_timeout(cfg.session_timeout)
            .connect(&cfg.connect)
            .await
        {
            Ok(zk) => return Ok(zk),
            Err(e) if Instant::now() < end => {
                ledger.error(&format!("connect: {e}"))?;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(e).context("no ZooKeeper session within a minute"),
        }
    }
}

/// What the recipe says after a rejection, waiting out a `Suspended` answer (not a loss: the
/// session may come back) for up to three session timeouts; `still-held` or a final reason.
async fn final_answer(guard: &ZkGuard<Coord>, session_timeout: Duration) -> (bool, String) {
    let end = Instant::now() + session_timeout * 3;
    loop {
        match guard.ensure_valid().await {
            Ok(()) => return (true, "still-held".to_string()),
            Err(e) if e.lost_reason() == Some(LostReason::Suspended) && Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return (false, reason_name(&e)),
        }
    }
}

/// The lost-update critical section: read the counter, hold, write value + 1. Returns whether
/// the write was refused (the lock is gone). Read errors abandon the section (reported).
async fn increment(
    cfg: &ClientConfig,
    mutex: &ZkMutex<Coord>,
    guard: &ZkGuard<Coord>,
    ledger: &mut LedgerConn,
    seq: u64,
) -> anyhow::Result<bool> {
    let token = guard.token().get();
    if cfg.resource.counter_in_resource() {
        // Claim-at-acquire: the claim raises the resource's mark to our token and reads; a
        // holder paused past its session finds a newer claim and is refused, at the claim or
        // at the write. The resource counts what it accepted.
        let Some(value) = ledger.claim_counter(seq, token)? else {
            return Ok(true);
        };
        if !cfg.hold.is_zero() {
            std::thread::sleep(cfg.hold);
        }
        return Ok(!ledger.write_counter(seq, token, value + 1)?);
    }
    let zk = mutex.coordination();
    let value = match zk.read_node(&cfg.counter).await {
        Ok((data, _)) => parse_counter(&data),
        Err(e) => {
            ledger.increment(seq, token, "error", 0)?;
            ledger.error(&format!("counter read: {e}"))?;
            return Ok(false);
        }
    };
    let Some(value) = value else {
        anyhow::bail!("the counter {} holds no number", cfg.counter);
    };
    if !cfg.hold.is_zero() {
        std::thread::sleep(cfg.hold);
    }
    let next = value + 1;
    let ops = [GuardedOp::set_data(
        cfg.counter.as_str(),
        format!("{next} {}", guard.node()),
    )];
    let outcome = if cfg.resource == ResourceMode::Guarded {
        match guard.guarded_write(&ops).await {
            Ok(_) => "ok",
            Err(e) if e.is_lost() => "rejected",
            Err(ZkLockError::Zk { source, .. }) if source.outcome_unknown() => "unknown",
            Err(e) => {
                ledger.error(&format!("counter write: {e}"))?;
                "error"
            }
        }
    } else {
        // The unfenced writer: nothing ties the write to the lock, and like any ZooKeeper
        // client that wants its write to land it retries a lost connection and opens a new
        // session when the old one expired (a few times, 100 ms apart).
        let mut r = zk.guarded_write(None, &ops).await;
        for _ in 0..20 {
            match &r {
                Err(e) if e.error == CoordError::SessionExpired => {
                    let _ = zk.new_session(zk.session()).await;
                }
                Err(e) if e.error.outcome_unknown() => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                _ => break,
            }
            r = zk.guarded_write(None, &ops).await;
        }
        match r {
            Ok(_) => "ok",
            Err(e) if e.error.outcome_unknown() => "unknown",
            Err(e) => {
                ledger.error(&format!("counter write: {}", e.error))?;
                "error"
            }
        }
    };
    ledger.increment(seq, token, outcome, next)?;
    Ok(outcome == "rejected")
}

/// The counter's value: the first word of its data.
pub fn parse_counter(data: &[u8]) -> Option<u64> {
    std::str::from_utf8(data)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
