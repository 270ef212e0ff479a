//! The fleet of client processes a run keeps going: starting them (lockwright or Curator) with
//! their output tails, signals, reaping and replacing them, and stopping them at the end.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::overlaps::Overlaps;
use super::tally::Tally;
use super::{Run, RunConfig};
use crate::peers::curator::CuratorPeer;
use crate::peers::zookeeper;
use crate::zkstress::proxy::ClientLinks;

/// Which program a client process runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Impl {
    Lockwright,
    Curator,
}

/// One client slot: its process (if running) and the faults it is under.
pub(super) struct ClientProc {
    pub(super) id: u8,
    pub(super) kind: Impl,
    pub(super) child: Option<Child>,
    /// The last lines of its stdout and stderr.
    pub(super) tail: Arc<Mutex<VecDeque<String>>>,
    pub(super) paused_until: Option<Instant>,
    pub(super) stalled_until: Option<Instant>,
}

impl ClientProc {
    /// Paused or stalled.
    pub(super) fn busy(&self) -> bool {
        self.paused_until.is_some() || self.stalled_until.is_some()
    }

    pub(super) fn signal(&self, sig: i32) {
        if let Some(pid) = self.child.as_ref().and_then(|c| i32::try_from(c.id()).ok()) {
            // SAFETY: kill(2) on our own child's pid; no memory is involved.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }

    fn tail(&self) -> String {
        self.tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

/// Thaws, kills and reaps every client still running, on every exit path (panics included).
pub(super) struct Clients(pub(super) Vec<ClientProc>);

impl Drop for Clients {
    fn drop(&mut self) {
        for c in &mut self.0 {
            c.signal(libc::SIGCONT);
            if let Some(mut ch) = c.child.take() {
                let _ = ch.kill();
                let _ = ch.wait();
            }
        }
    }
}

/// Starts client processes, each through its own proxy port.
pub(super) struct Spawner<'a> {
    pub(super) cfg: &'a RunConfig,
    pub(super) proxy: &'a ClientLinks,
    pub(super) verify: SocketAddr,
    pub(super) ledger: SocketAddr,
    pub(super) curator: Option<CuratorPeer>,
    /// Where the lockwright clients write their traces, one file per process.
    pub(super) trace_dir: std::path::PathBuf,
    /// Processes started so far (numbers the trace files).
    pub(super) started: std::sync::atomic::AtomicUsize,
}

impl Spawner<'_> {
    /// Starts the first `cfg.clients` lockwright clients and then the Curator ones, `total`
    /// in all.
    ///
    /// # Errors
    /// A client that cannot be started.
    pub(super) fn spawn_all(&self, total: usize) -> anyhow::Result<Clients> {
        let mut clients = Clients(Vec::new());
        for i in 0..total {
            let id = u8::try_from(i).context("client id")?;
            let kind = if i < self.cfg.clients {
                Impl::Lockwright
            } else {
                Impl::Curator
            };
            let (child, tail) = self.spawn(id, kind)?;
            clients.0.push(ClientProc {
                id,
                kind,
                child: Some(child),
                tail,
                paused_until: None,
                stalled_until: None,
            });
        }
        Ok(clients)
    }

    /// Starts client `id` and the threads that keep the last lines of its output.
    ///
    /// # Errors
    /// The process cannot be started (or the Curator peer was not built).
    pub(super) fn spawn(
        &self,
        id: u8,
        kind: Impl,
    ) -> anyhow::Result<(Child, Arc<Mutex<VecDeque<String>>>)> {
        let mut cmd = self.command(id, kind)?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = zookeeper::spawn_orphan_proof(cmd)
            .with_context(|| format!("cannot start client {id}"))?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let outs: [Option<Box<dyn Read + Send>>; 2] = [
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn Read + Send>),
        ];
        for out in outs.into_iter().flatten() {
            let t = Arc::clone(&tail);
            thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let mut t = t.lock().unwrap_or_else(PoisonError::into_inner);
                    if t.len() == 12 {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            });
        }
        Ok((child, tail))
    }

    /// The command line of client `id`: `lockwright zk-stress-client` or the Curator peer's
    /// `fenced` mode.
    fn command(&self, id: u8, kind: Impl) -> anyhow::Result<Command> {
        let cfg = self.cfg;
        let zk = self.proxy.connect_string(usize::from(id));
        let hold = cfg.hold.as_millis().to_string();
        let session = cfg.session_timeout.as_millis().to_string();
        Ok(match kind {
            Impl::Lockwright => {
                let mut c = Command::new(&cfg.exe);
                c.arg("zk-stress-client")
                    .args(["--connect", &zk, "--path", &cfg.lock_path])
                    .args(["--id", &id.to_string()])
                    .args(["--server", &self.verify.to_string()])
                    .args(["--ledger", &self.ledger.to_string()])
                    .args(["--hold-ms", &hold, "--session-timeout-ms", &session])
                    .args(["--resource", cfg.resource.name()])
                    .args(["--counter", &cfg.counter_path()]);
                let n = self
                    .started
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                c.arg("--trace")
                    .arg(self.trace_dir.join(format!("c{id}-p{n}.jsonl")));
                if let Some(v) = &cfg.client_variant {
                    c.args(["--client-variant", v]);
                }
                c
            }
            Impl::Curator => {
                let peer = self
                    .curator
                    .as_ref()
                    .context("the Curator peer was not built")?;
                peer.command([
                    "fenced".to_string(),
                    zk,
                    cfg.lock_path.clone(),
                    self.verify.ip().to_string(),
                    self.verify.port().to_string(),
                    self.ledger.ip().to_string(),
                    self.ledger.port().to_string(),
                    id.to_string(),
                    hold,
                    session,
                ])
            }
        })
    }
}

impl Run<'_> {
    /// Reaps the clients that ended by themselves; notes the failed ones; replaces them all
    /// unless the clients were asked to stop.
    ///
    /// # Errors
    /// A client that cannot be waited for or restarted.
    pub(super) fn reap_and_replace(&mut self) -> anyhow::Result<()> {
        for c in &mut self.clients.0 {
            let Some(ch) = c.child.as_mut() else {
                continue;
            };
            if let Some(status) = ch.try_wait()? {
                c.child = None;
                c.paused_until = None;
                if c.stalled_until.take().is_some() {
                    self.rig.proxy.resume(usize::from(c.id));
                }
                if !status.success() {
                    thread::sleep(Duration::from_millis(20)); // let the readers catch up
                    self.tally.failures_seen.push(format!(
                        "client {} exited with {status}: {}",
                        c.id,
                        c.tail()
                    ));
                }
                if self.stopping_since.is_none() {
                    let (child, tail) = self.rig.spawner.spawn(c.id, c.kind)?;
                    c.child = Some(child);
                    c.tail = tail;
                    self.tally.replacements += 1;
                }
            }
        }
        Ok(())
    }

    /// Asked to stop `since`: whether every client has exited, or 90 s have passed (noting
    /// the ones still running as a failure).
    pub(super) fn clients_gone(&mut self, now: Instant, since: Instant) -> bool {
        if self.clients.0.iter().all(|c| c.child.is_none()) {
            return true;
        }
        if now.duration_since(since) > Duration::from_secs(90) {
            let left: Vec<String> = self
                .clients
                .0
                .iter()
                .filter(|c| c.child.is_some())
                .map(|c| format!("client {}: {}", c.id, c.tail()))
                .collect();
            self.tally.failures_seen.push(format!(
                "clients still running 90 s after the stop request: {}",
                left.join("; ")
            ));
            return true;
        }
        false
    }

    /// Wind down: thaws the paused clients, resumes the stalled ones, kills and reaps them
    /// all; what the run saw is left.
    pub(super) fn stop_clients(self) -> (Tally, Overlaps) {
        let Run {
            rig,
            mut clients,
            tally,
            overlaps,
            ..
        } = self;
        for c in &mut clients.0 {
            if c.paused_until.take().is_some() {
                c.signal(libc::SIGCONT);
            }
            if c.stalled_until.take().is_some() {
                rig.proxy.resume(usize::from(c.id));
            }
        }
        drop(clients);
        (tally, overlaps)
    }
}
