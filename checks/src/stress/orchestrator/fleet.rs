//! The fleet of client processes a run keeps going: starting them with the threads that read
//! their progress, the totals of what they reported, and the kills with their replacements.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::Rng;

use super::{lucene_factory_class, lucene_jar, ClientImpl, Run, RunConfig};
use crate::stress::client::{ClientReport, PROGRESS_PREFIX, RESULT_PREFIX};
use crate::stress::server::ServerHandle;

/// What a client process reported on stdout so far.
#[derive(Default)]
pub(super) struct Progress {
    tries: u64,
    acquired: u64,
    contended: u64,
    double_obtains: u64,
    latencies: Vec<u32>,
    result: Option<ClientReport>,
}

/// A running client process and the threads reading its output.
pub(super) struct Proc {
    child: Child,
    progress: Arc<Mutex<Progress>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<JoinHandle<()>>,
}

impl Proc {
    /// What the ended process reported, and the last lines of its stderr.
    pub(super) fn finish(mut self) -> (Progress, Vec<String>) {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let p = std::mem::take(&mut *self.progress.lock().unwrap_or_else(PoisonError::into_inner));
        let tail = self
            .stderr_tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        (p, tail)
    }
}

/// One client id: the tries it still has to do and its process, if running.
pub(super) struct Slot {
    id: u8,
    remaining: u64,
    pub(super) proc: Option<Proc>,
}

/// Kills and reaps every child still running, on every exit path.
pub(super) struct Children(pub(super) Vec<Slot>);

impl Drop for Children {
    fn drop(&mut self) {
        for s in &mut self.0 {
            if let Some(p) = s.proc.as_mut() {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
        }
    }
}

/// Starts client processes against the verify server at `addr`, locking in `dir`.
pub(super) struct Spawner<'a> {
    pub(super) cfg: &'a RunConfig,
    pub(super) addr: SocketAddr,
    pub(super) dir: PathBuf,
}

impl Spawner<'_> {
    /// Starts `cfg.clients` clients of `cfg.count` tries each.
    ///
    /// # Errors
    /// A client that cannot be started.
    pub(super) fn spawn_all(&self) -> anyhow::Result<Children> {
        let mut slots = Children(Vec::new());
        for i in 0..self.cfg.clients {
            let id = u8::try_from(i).context("client id")?;
            let proc = self.spawn(id, self.cfg.count)?;
            slots.0.push(Slot {
                id,
                remaining: self.cfg.count,
                proc: Some(proc),
            });
        }
        Ok(slots)
    }

    /// Starts client `id` for `count` tries, with the threads that read its output.
    ///
    /// # Errors
    /// The process cannot be started.
    pub(super) fn spawn(&self, id: u8, count: u64) -> anyhow::Result<Proc> {
        let mut cmd = self.command(id, count);
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start client {id} ({:?})", cmd.get_program()))?;
        let progress = Arc::new(Mutex::new(Progress::default()));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let p = Arc::clone(&progress);
            readers.push(thread::spawn(move || read_progress(out, &p)));
        }
        if let Some(err) = child.stderr.take() {
            let t = Arc::clone(&stderr_tail);
            readers.push(thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let mut t = t.lock().unwrap_or_else(PoisonError::into_inner);
                    if t.len() == 8 {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }));
        }
        Ok(Proc {
            child,
            progress,
            stderr_tail,
            readers,
        })
    }

    /// The command line of client `id`: `lockwright stress` or Lucene's `LockStressTest`.
    fn command(&self, id: u8, count: u64) -> Command {
        let cfg = self.cfg;
        let sleep = cfg.sleep.as_millis().to_string();
        match cfg.client_impl {
            ClientImpl::Lockwright => {
                let mut c = Command::new(&cfg.exe);
                c.arg("stress")
                    .args(["--id", &id.to_string(), "--server", &self.addr.to_string()])
                    .args([
                        "--factory",
                        cfg.factory.name(),
                        "--os",
                        cfg.os_lock.kind().name(),
                    ])
                    .arg("--dir")
                    .arg(&self.dir)
                    .args([
                        "--lock-name",
                        &cfg.lock_name,
                        "--sleep-ms",
                        &sleep,
                        "--count",
                        &count.to_string(),
                    ])
                    .args(["--keep-going", "--report-every", "10", "--quiet"]);
                c
            }
            ClientImpl::Lucene => {
                let mut c = Command::new("java");
                c.arg("-cp")
                    .arg(lucene_jar())
                    .arg("org.apache.lucene.store.LockStressTest")
                    .args([
                        &id.to_string(),
                        "127.0.0.1",
                        &self.addr.port().to_string(),
                        lucene_factory_class(cfg.factory),
                    ])
                    .arg(&self.dir)
                    .args([&sleep, &count.to_string()]);
                c
            }
        }
    }
}

fn read_progress(out: impl std::io::Read, p: &Mutex<Progress>) {
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        if let Some(rest) = line.strip_prefix(PROGRESS_PREFIX) {
            let mut g = p.lock().unwrap_or_else(PoisonError::into_inner);
            for kv in rest.split_whitespace() {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                if k == "lat" {
                    g.latencies
                        .extend(v.split(',').filter_map(|x| x.parse::<u32>().ok()));
                    continue;
                }
                let v = v.parse().unwrap_or(0);
                match k {
                    "tries" => g.tries = v,
                    "acquired" => g.acquired = v,
                    "contended" => g.contended = v,
                    "double" => g.double_obtains = v,
                    _ => {}
                }
            }
        } else if let Some(rest) = line.strip_prefix(RESULT_PREFIX) {
            if let Ok(r) = serde_json::from_str::<ClientReport>(rest.trim()) {
                p.lock().unwrap_or_else(PoisonError::into_inner).result = Some(r);
            }
        }
    }
}

/// What the clients reported, summed over every process of every slot.
#[derive(Default)]
pub(super) struct Totals {
    pub(super) tries: u64,
    pub(super) contended: u64,
    pub(super) double_obtains: u64,
    pub(super) latencies: Vec<u32>,
}

impl Totals {
    /// The final report if the client finished, else its last progress line; latencies
    /// always from the progress lines (a killed client's since its last line are lost).
    pub(super) fn add(&mut self, p: Progress) {
        self.latencies.extend(p.latencies);
        match p.result {
            Some(r) => {
                self.tries += r.tries;
                self.contended += r.contended;
                self.double_obtains += r.double_obtains;
            }
            None => {
                self.tries += p.tries;
                self.contended += p.contended;
                self.double_obtains += p.double_obtains;
            }
        }
    }
}

/// When the next kill is due: exponential gaps of mean `1 / rate` (`None` for rate 0).
pub(super) fn next_kill_at(rng: &mut impl Rng, rate: f64, now: Instant) -> Option<Instant> {
    if rate <= 0.0 {
        return None;
    }
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    Some(now + Duration::from_secs_f64(-u.ln() / rate))
}

/// Three times in four the current holder (if it runs a process we may kill), else any
/// running client. Returns the slot index and whether it was chosen as holder.
fn pick_victim(rng: &mut impl Rng, slots: &[Slot], handle: &ServerHandle) -> Option<(usize, bool)> {
    let running: Vec<usize> = (0..slots.len())
        .filter(|&i| slots[i].proc.is_some())
        .collect();
    if running.is_empty() {
        return None;
    }
    if rng.random_bool(0.75) {
        let holders = handle.holder_ids();
        if let Some(&i) = running.iter().find(|&&i| holders.contains(&slots[i].id)) {
            return Some((i, true));
        }
    }
    Some((running[rng.random_range(0..running.len())], false))
}

/// Announces the kill of `slot`'s client, SIGKILLs and reaps it, adds what it reported, and
/// starts a replacement for the tries it had not reported done.
///
/// # Errors
/// The replacement cannot be started.
fn kill_and_replace(
    slot: &mut Slot,
    handle: &ServerHandle,
    spawner: &Spawner<'_>,
    totals: &mut Totals,
) -> anyhow::Result<()> {
    let Some(mut p) = slot.proc.take() else {
        return Ok(());
    };
    handle.announce_kill(slot.id);
    let _ = p.child.kill(); // SIGKILL
    let _ = p.child.wait();
    let (progress, _) = p.finish();
    let done = progress.result.as_ref().map_or(progress.tries, |r| r.tries);
    let exited_by_itself = progress.result.is_some();
    totals.add(progress);
    slot.remaining = if exited_by_itself {
        0
    } else {
        slot.remaining.saturating_sub(done)
    };
    if slot.remaining > 0 {
        slot.proc = Some(spawner.spawn(slot.id, slot.remaining)?);
    }
    Ok(())
}

impl Run<'_> {
    /// Reaps the clients that ended by themselves, adding what they reported; notes the ones
    /// that failed.
    ///
    /// # Errors
    /// A client that cannot be waited for.
    pub(super) fn reap(&mut self) -> anyhow::Result<()> {
        for slot in &mut self.slots.0 {
            let Some(p) = slot.proc.as_mut() else {
                continue;
            };
            if let Some(status) = p.child.try_wait()? {
                let p = slot.proc.take().expect("present");
                let (progress, tail) = p.finish();
                self.tally.totals.add(progress);
                slot.remaining = 0;
                if !status.success() {
                    self.tally.failures.push(format!(
                        "client {} exited with {status}: {}",
                        slot.id,
                        tail.join(" | ")
                    ));
                }
            }
        }
        Ok(())
    }

    /// Once the next kill is due (and the starting gun has gone), kills a victim, replaces it
    /// and draws the time of the kill after.
    ///
    /// # Errors
    /// The replacement cannot be started.
    pub(super) fn kill_if_due(&mut self, now: Instant) -> anyhow::Result<()> {
        let Some(at) = self.next_kill else {
            return Ok(());
        };
        if now >= at && self.handle.started() {
            if let Some((i, was_holder)) = pick_victim(&mut self.rng, &self.slots.0, self.handle) {
                let t = &mut self.tally;
                kill_and_replace(
                    &mut self.slots.0[i],
                    self.handle,
                    self.spawner,
                    &mut t.totals,
                )?;
                t.kills += 1;
                t.aimed += u64::from(was_holder);
                if self.slots.0[i].proc.is_some() {
                    t.replacements += 1;
                }
            }
            self.next_kill = next_kill_at(&mut self.rng, self.cfg.kill_rate, Instant::now());
        }
        Ok(())
    }
}
