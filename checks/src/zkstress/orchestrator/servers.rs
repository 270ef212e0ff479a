//! The ZooKeeper a run uses: one throwaway server, a throwaway ensemble (`--servers 3`), or a
//! running server given with `--connect`; and the server-side faults (`restart`,
//! `leader-kill`, `server-pause`, `partition`, `lag`).

use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::Rng;

use super::{FaultKind, Run, RunConfig};
use crate::peers::zookeeper::{ZkServer, ZkServerConfig};
use crate::zkstress::ensemble::{Ensemble, SYNC_LIMIT};

pub(super) enum Server {
    Owned(Arc<ZkServer>),
    Ensemble(Arc<Ensemble>),
    External(SocketAddr),
}

impl Server {
    /// The server given with `--connect`, else a throwaway one (or `cfg.servers` of them)
    /// whose sessions may last four session timeouts (at least 10 s).
    pub(super) fn start(cfg: &RunConfig) -> anyhow::Result<Server> {
        if let Some(c) = &cfg.connect {
            return Ok(Server::External(
                c.to_socket_addrs()
                    .with_context(|| format!("bad --connect {c}"))?
                    .next()
                    .with_context(|| format!("--connect {c} resolves to nothing"))?,
            ));
        }
        let max = u32::try_from(cfg.session_timeout.as_millis() * 4)
            .unwrap_or(u32::MAX)
            .max(10_000);
        let config = ZkServerConfig {
            max_session_ms: max,
            ..ZkServerConfig::default()
        };
        Ok(if cfg.servers > 1 {
            Server::Ensemble(Arc::new(Ensemble::start(cfg.servers, config)?))
        } else {
            Server::Owned(Arc::new(ZkServer::start_with(config)?))
        })
    }

    /// The client addresses, one per server.
    pub(super) fn addrs(&self) -> Vec<SocketAddr> {
        match self {
            Server::Owned(s) => vec![SocketAddr::from((Ipv4Addr::LOCALHOST, s.port()))],
            Server::Ensemble(e) => (0..e.size()).map(|m| e.client_addr(m)).collect(),
            Server::External(a) => vec![*a],
        }
    }

    /// A connect string for the orchestrator's own sessions (every server).
    pub(super) fn connect_string(&self) -> String {
        self.addrs()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Where to ask `dump` for the live sessions: the server, or the ensemble's leader (whose
    /// session tracker has every session); `None` while an ensemble has no leader.
    pub(super) fn dump_addr(&self) -> Option<SocketAddr> {
        match self {
            Server::Ensemble(e) => e.leader().map(|l| e.client_addr(l)),
            _ => Some(self.addrs()[0]),
        }
    }

    /// The data directories whose transaction logs judge the run (none for `--connect`).
    pub(super) fn data_dirs(&self) -> Vec<PathBuf> {
        match self {
            Server::Owned(s) => vec![s.dir().join("data")],
            Server::Ensemble(e) => (0..e.size()).map(|m| e.data_dir(m)).collect(),
            Server::External(_) => Vec::new(),
        }
    }

    /// How many servers.
    pub(super) fn count(&self) -> usize {
        match self {
            Server::Ensemble(e) => e.size(),
            _ => 1,
        }
    }

    /// For the report.
    pub(super) fn describe(&self) -> String {
        match self {
            Server::Owned(s) => format!("127.0.0.1:{} (throwaway ZooKeeper 3.8)", s.port()),
            Server::Ensemble(e) => format!(
                "{} (throwaway ZooKeeper 3.8 ensemble of {})",
                self.connect_string(),
                e.size()
            ),
            Server::External(a) => a.to_string(),
        }
    }
}

/// A server-side fault in progress that ends at a given time.
#[derive(Clone, Copy, Debug)]
pub(super) enum Held {
    /// A member SIGSTOPped.
    Paused(usize),
    /// A member's quorum links stalled (`partition`) or a follower's link to the leader
    /// (`lag`).
    Stalled,
}

impl Run<'_> {
    /// Whether a server-side fault is in progress (restart or held).
    pub(super) fn server_busy(&self) -> bool {
        self.restarting.is_some() || self.held.is_some()
    }

    /// Ends a held server fault that is due.
    pub(super) fn end_due_server_fault(&mut self, now: Instant) {
        let Some((h, until)) = self.held else {
            return;
        };
        if now < until {
            return;
        }
        if let Server::Ensemble(e) = self.rig.server {
            match h {
                Held::Paused(m) => {
                    e.resume(m);
                    self.tally.log(format!("resume server {}", m + 1));
                }
                Held::Stalled => {
                    e.heal();
                    self.tally.log("links healed".to_string());
                }
            }
        }
        self.held = None;
    }

    /// Injects a server-side fault; `false` if it cannot go now (one is in progress, or an
    /// ensemble without a leader).
    pub(super) fn strike_server(&mut self, kind: FaultKind, now: Instant) -> bool {
        if self.server_busy() {
            return false;
        }
        match (kind, self.rig.server) {
            (FaultKind::Restart, Server::Owned(s)) => {
                let s = Arc::clone(s);
                self.restart_in_background(move || s.restart());
                self.tally.log("restart the server".to_string());
            }
            (_, Server::Ensemble(e)) => {
                let Some(leader) = e.leader() else {
                    return false;
                };
                let size = e.size();
                let follower = (leader + 1 + self.victims.random_range(0..size - 1)) % size;
                let tick = e.tick();
                match kind {
                    FaultKind::LeaderKill => {
                        e.kill(leader);
                        let e = Arc::clone(e);
                        // Down for a moment: the others elect a new leader meanwhile.
                        self.restart_in_background(move || {
                            thread::sleep(Duration::from_millis(1500));
                            e.restart(leader)
                        });
                        self.tally
                            .log(format!("kill the leader, server {}", leader + 1));
                    }
                    FaultKind::ServerPause => {
                        e.pause(follower);
                        self.held = Some((Held::Paused(follower), now + self.pause_len));
                        self.tally.log(format!(
                            "pause follower server {} for {:.1}s",
                            follower + 1,
                            self.pause_len.as_secs_f64()
                        ));
                    }
                    FaultKind::Partition => {
                        let m = self.victims.random_range(0..size);
                        e.isolate(m);
                        let len = tick * SYNC_LIMIT * 2;
                        self.held = Some((Held::Stalled, now + len));
                        self.tally.log(format!(
                            "cut server {}{} off from the quorum for {:.1}s",
                            m + 1,
                            if m == leader { " (leader)" } else { "" },
                            len.as_secs_f64()
                        ));
                    }
                    FaultKind::Lag => {
                        e.lag(follower, leader);
                        let len = tick * SYNC_LIMIT / 3;
                        self.held = Some((Held::Stalled, now + len));
                        self.tally.log(format!(
                            "hold back follower server {}'s link to the leader for {:.1}s",
                            follower + 1,
                            len.as_secs_f64()
                        ));
                    }
                    _ => unreachable!("client faults are injected by strike"),
                }
            }
            _ => unreachable!("the configuration check allows no such fault here"),
        }
        self.tally.faults.bump(kind);
        true
    }

    fn restart_in_background(&mut self, f: impl FnOnce() -> anyhow::Result<()> + Send + 'static) {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(f());
        });
        self.restarting = Some(rx);
    }
}
