//! One `zk-stress-run` client process (`lockwright zk-stress-client`, hidden): the ZooKeeper
//! mutex in a loop, each hold reported to the verify server and written to the fenced
//! resource:
//!
//! ```text
//! acquire -> HOLD (ledger) -> 1 (verify server) -> WRITE 1 -> hold -> WRITE 2 -> 0 (verify server) -> release
//! ```
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
use lockwright::zk::{block_on, LostReason, ZkClient, ZkLockError, ZkMutex};

use super::ledger::{LedgerConn, WriteOutcome};

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
}

/// How long an acquire may wait before the client reports it and tries again.
const ACQUIRE_PATIENCE: Duration = Duration::from_secs(30);

fn reason_name(e: &ZkLockError) -> String {
    match e {
        ZkLockError::LockLost { reason, .. } => match reason {
            LostReason::SessionExpired { .. } => "session-expired",
            LostReason::Suspended => "suspended",
            LostReason::NodeDeleted => "node-deleted",
            LostReason::NodeReplaced { .. } => "node-replaced",
            LostReason::SessionReplaced { .. } => "session-replaced",
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
        let mutex = ZkMutex::new(zk, &cfg.path)?;
        let mut seq = 0u64;
        while seq < cfg.count {
            let guard = match mutex.acquire_timeout(ACQUIRE_PATIENCE).await {
                Ok(g) => g,
                Err(e) => {
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
                if n == 2 && !cfg.hold.is_zero() {
                    std::thread::sleep(cfg.hold);
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
                let (valid, reason) = match guard.ensure_valid().await {
                    Ok(()) => (true, "still-held".to_string()),
                    Err(e) => (false, reason_name(&e)),
                };
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
        println!("zk-stress-client {} done after {seq} holds", cfg.id);
        Ok(ExitCode::SUCCESS)
    })
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
