//! A throwaway ZooKeeper 3.8 ensemble on loopback for `zk-stress-run --servers 3`: N members
//! (`QuorumPeerMain`), each in its own data directory under one temporary directory, with a
//! [`Proxy`] on every link between two members so that one member can be cut off from the
//! quorum or made to lag.
//!
//! Each member's `zoo.cfg` lists itself at its real quorum and election ports (it binds
//! them) and every other member at a port of a proxy in front of that member (slot = the
//! member connecting). A follower reaches its leader through `quorum[leader]` slot
//! `follower`; election connections go through `election[m]` one way (ZooKeeper 3.8 answers a
//! lower id's election connection by connecting back to the address that id sent, which is
//! its real port), so faults act on the quorum links, which carry everything a follower
//! learns and forwards.
//!
//! - [`Ensemble::kill`] / [`Ensemble::restart`]: SIGKILL a member, start it again on its
//!   ports and data (the leader's crash: the others elect a new one, sessions survive).
//! - [`Ensemble::pause`] / [`Ensemble::resume`]: SIGSTOP / SIGCONT a member.
//! - [`Ensemble::isolate`] / [`Ensemble::heal`]: stall every quorum link to and from a member:
//!   past `syncLimit` ticks it leaves the quorum (a leader loses its followers and steps down;
//!   a follower stops serving), its clients move to the others.
//! - [`Ensemble::lag`] / [`Ensemble::heal`]: stall only the link between a follower and the
//!   leader, for less than `syncLimit` ticks: the follower stays in the quorum but answers
//!   reads from state that misses the latest commits.
//!
//! Ready when every member answers `srvr` with a `Mode:` and exactly one says `leader`.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::proxy::Proxy;
use crate::peers::zookeeper::{
    check_installed, four_letter_word, free_port, spawn_java, ZkServerConfig,
};

const QUORUM_MAIN: &str = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

/// `initLimit` and `syncLimit`, in ticks.
const INIT_LIMIT: u32 = 20;
pub const SYNC_LIMIT: u32 = 10;

struct Member {
    /// `myid`: 1-based.
    id: usize,
    client_port: u16,
    dir: PathBuf,
    /// `None` while killed.
    child: Mutex<Option<Child>>,
    /// SIGSTOPped: not asked anything (it would not answer).
    paused: std::sync::atomic::AtomicBool,
}

/// A running ensemble. Dropping it kills every member and removes the directory.
pub struct Ensemble {
    dir: tempfile::TempDir,
    config: ZkServerConfig,
    members: Vec<Member>,
    /// `quorum[m]` forwards to member `m`'s quorum port; slot `n` carries member `n`'s
    /// connections to it (slot `m` unused).
    quorum: Vec<Proxy>,
    /// The same for the election ports.
    election: Vec<Proxy>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A four-letter word to `port` on loopback (a member that does not answer within a second
/// is taken as not serving: the orchestrator asks often and must not stall).
fn four_letter(port: u16, word: &str) -> io::Result<String> {
    four_letter_word(
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        word,
        Duration::from_secs(1),
    )
}

impl Ensemble {
    /// Starts `size` members (at least 3) and waits until they have elected a leader.
    ///
    /// # Errors
    /// Missing packages (named); ports; a member that exits or an ensemble without a leader
    /// within `config.start_timeout` (with every member's output).
    pub fn start(size: usize, config: ZkServerConfig) -> anyhow::Result<Ensemble> {
        check_installed()?;
        if size < 3 {
            bail!("an ensemble needs at least 3 servers (got {size})");
        }
        let dir = tempfile::Builder::new()
            .prefix("lockwright-zk-ensemble-")
            .tempdir()
            .context("cannot make the ensemble's temporary directory")?;
        let mut ports = Vec::new();
        for _ in 0..size {
            ports.push((free_port()?, free_port()?, free_port()?));
        }
        let mut quorum = Vec::new();
        let mut election = Vec::new();
        for &(_, q, e) in &ports {
            let up = |p: u16| SocketAddr::from((Ipv4Addr::LOCALHOST, p));
            quorum.push(Proxy::start(up(q), size).context("cannot start a quorum-link proxy")?);
            election
                .push(Proxy::start(up(e), size).context("cannot start an election-link proxy")?);
        }
        let mut members = Vec::new();
        for (n, &(client_port, _, _)) in ports.iter().enumerate() {
            let mdir = dir.path().join(format!("server{}", n + 1));
            let data = mdir.join("data");
            std::fs::create_dir_all(&data)
                .with_context(|| format!("cannot create {}", data.display()))?;
            std::fs::write(data.join("myid"), format!("{}\n", n + 1))?;
            let mut cfg = format!(
                "tickTime={}\ninitLimit={INIT_LIMIT}\nsyncLimit={SYNC_LIMIT}\ndataDir={}\n\
                 clientPort={client_port}\nclientPortAddress=127.0.0.1\n\
                 minSessionTimeout={}\nmaxSessionTimeout={}\nadmin.enableServer=false\n\
                 maxClientCnxns=0\n4lw.commands.whitelist=ruok,srvr,stat,cons,mntr,wchs,dump\n",
                config.tick_ms,
                data.display(),
                config.min_session_ms,
                config.max_session_ms
            );
            if !config.force_sync {
                cfg.push_str("forceSync=no\n");
            }
            for (m, &(_, q, e)) in ports.iter().enumerate() {
                let (q, e) = if m == n {
                    (q, e)
                } else {
                    (quorum[m].addr(n).port(), election[m].addr(n).port())
                };
                cfg.push_str(&format!("server.{}=127.0.0.1:{q}:{e}\n", m + 1));
            }
            std::fs::write(mdir.join("zoo.cfg"), cfg)?;
            members.push(Member {
                id: n + 1,
                client_port,
                dir: mdir,
                child: Mutex::new(None),
                paused: std::sync::atomic::AtomicBool::new(false),
            });
        }
        let ens = Ensemble {
            dir,
            config,
            members,
            quorum,
            election,
        };
        for m in 0..size {
            ens.spawn(m)?;
        }
        ens.wait_ready(ens.config.start_timeout)?;
        Ok(ens)
    }

    fn spawn(&self, m: usize) -> anyhow::Result<()> {
        let member = &self.members[m];
        let child = spawn_java(&member.dir, &self.config, QUORUM_MAIN)?;
        *lock(&member.child) = Some(child);
        Ok(())
    }

    /// `tickTime`.
    pub fn tick(&self) -> Duration {
        Duration::from_millis(u64::from(self.config.tick_ms))
    }

    /// Members.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Member `m`'s client address (0-based).
    pub fn client_addr(&self, m: usize) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.members[m].client_port))
    }

    /// Member `m`'s data directory (`dataDir`, holding `version-2/`).
    pub fn data_dir(&self, m: usize) -> PathBuf {
        self.members[m].dir.join("data")
    }

    /// The ensemble's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Member `m`'s `Mode:` (`leader`, `follower`), if it runs, answers and serves.
    pub fn mode(&self, m: usize) -> Option<String> {
        let member = &self.members[m];
        if member.paused.load(std::sync::atomic::Ordering::SeqCst) || lock(&member.child).is_none()
        {
            return None;
        }
        let srvr = four_letter(self.members[m].client_port, "srvr").ok()?;
        srvr.lines()
            .find_map(|l| l.strip_prefix("Mode: "))
            .map(|x| x.trim().to_string())
    }

    /// The member that says it leads, if exactly one does.
    pub fn leader(&self) -> Option<usize> {
        let leaders: Vec<usize> = (0..self.size())
            .filter(|&m| self.mode(m).as_deref() == Some("leader"))
            .collect();
        match leaders[..] {
            [l] => Some(l),
            _ => None,
        }
    }

    /// A four-letter word to member `m`.
    ///
    /// # Errors
    /// Connection errors.
    pub fn four_letter(&self, m: usize, word: &str) -> io::Result<String> {
        four_letter(self.members[m].client_port, word)
    }

    /// Waits until every running member serves and exactly one leads.
    ///
    /// # Errors
    /// A member that exited, or no such state within `patience` (with every member's output).
    pub fn wait_ready(&self, patience: Duration) -> anyhow::Result<()> {
        let end = Instant::now() + patience;
        loop {
            let mut all = true;
            for (m, member) in self.members.iter().enumerate() {
                let mut child = lock(&member.child);
                let Some(c) = child.as_mut() else {
                    continue;
                };
                if let Some(status) = c.try_wait()? {
                    bail!(
                        "ensemble member {} exited ({status}):\n{}",
                        member.id,
                        self.output(m)
                    );
                }
                drop(child);
                all &= self.mode(m).is_some();
            }
            if all && self.leader().is_some() {
                return Ok(());
            }
            if Instant::now() >= end {
                let outputs: Vec<String> = (0..self.size())
                    .map(|m| format!("member {}: {}", m + 1, self.output(m)))
                    .collect();
                bail!(
                    "the ZooKeeper ensemble had no leader serving within {patience:?}:\n{}",
                    outputs.join("\n")
                );
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// What member `m` logged (WARN and above).
    pub fn output(&self, m: usize) -> String {
        std::fs::read_to_string(self.members[m].dir.join("server.out")).unwrap_or_default()
    }

    fn signal(&self, m: usize, sig: i32) {
        if let Some(c) = lock(&self.members[m].child).as_ref() {
            if let Ok(pid) = i32::try_from(c.id()) {
                // SAFETY: kill(2) on our own child's pid; no memory is involved.
                unsafe {
                    libc::kill(pid, sig);
                }
            }
        }
    }

    /// SIGKILLs member `m` (its data stays).
    pub fn kill(&self, m: usize) {
        if let Some(mut c) = lock(&self.members[m].child).take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts member `m` again (after [`Ensemble::kill`]) on its ports and data, and waits
    /// until the ensemble serves with one leader again.
    ///
    /// # Errors
    /// As [`Ensemble::wait_ready`].
    pub fn restart(&self, m: usize) -> anyhow::Result<()> {
        self.kill(m);
        self.spawn(m)?;
        self.wait_ready(self.config.start_timeout)
    }

    /// SIGSTOPs member `m`.
    pub fn pause(&self, m: usize) {
        self.members[m]
            .paused
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.signal(m, libc::SIGSTOP);
    }

    /// SIGCONTs member `m`.
    pub fn resume(&self, m: usize) {
        self.signal(m, libc::SIGCONT);
        self.members[m]
            .paused
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stalls every quorum and election link to and from member `m`.
    pub fn isolate(&self, m: usize) {
        for n in 0..self.size() {
            if n != m {
                for p in [&self.quorum, &self.election] {
                    p[m].stall(n);
                    p[n].stall(m);
                }
            }
        }
    }

    /// Stalls the quorum link between follower `f` and leader `l` (both ways).
    pub fn lag(&self, f: usize, l: usize) {
        self.quorum[l].stall(f);
        self.quorum[f].stall(l);
    }

    /// Forwards again on every link (the bytes held back are delivered).
    pub fn heal(&self) {
        for n in 0..self.size() {
            for m in 0..self.size() {
                self.quorum[n].resume(m);
                self.election[n].resume(m);
            }
        }
    }
}

impl Drop for Ensemble {
    fn drop(&mut self) {
        for m in 0..self.members.len() {
            self.resume(m);
            self.kill(m);
        }
    }
}
