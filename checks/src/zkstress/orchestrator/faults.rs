//! The faults of a run: the seeded schedule, aiming at a holder, injecting each kind, and
//! ending pauses, stalls and server restarts.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::{FaultKind, Run, RunConfig, HOLDER_PATIENCE};

/// The fault schedule: kinds in shuffled rounds, exponential gaps, durations; all from `seed`.
pub(super) struct Schedule {
    rng: StdRng,
    /// The enabled kinds, sorted, each once.
    pub(super) kinds: Vec<FaultKind>,
    round: Vec<FaultKind>,
    mean_gap: Duration,
}

impl Schedule {
    pub(super) fn new(cfg: &RunConfig) -> Self {
        Schedule {
            rng: StdRng::seed_from_u64(cfg.seed),
            kinds: {
                let mut k = cfg.faults.clone();
                k.sort();
                k.dedup();
                k
            },
            round: Vec::new(),
            mean_gap: cfg.fault_every,
        }
    }

    fn next_kind(&mut self) -> Option<FaultKind> {
        if self.kinds.is_empty() {
            return None;
        }
        if self.round.is_empty() {
            self.round = self.kinds.clone();
            self.round.shuffle(&mut self.rng);
        }
        self.round.pop()
    }

    pub(super) fn gap(&mut self) -> Duration {
        let u: f64 = self.rng.random_range(f64::EPSILON..1.0);
        self.mean_gap
            .mul_f64(-u.ln())
            .max(Duration::from_millis(100))
    }

    fn stall_factor(&mut self) -> f64 {
        self.rng.random_range(0.3..2.5)
    }
}

impl Run<'_> {
    /// Ends the pauses and stalls that are due.
    pub(super) fn end_due_faults(&mut self, now: Instant) {
        for c in &mut self.clients.0 {
            if c.paused_until.is_some_and(|t| now >= t) {
                c.signal(libc::SIGCONT);
                c.paused_until = None;
            }
            if c.stalled_until.is_some_and(|t| now >= t) {
                self.rig.proxy.resume(usize::from(c.id));
                c.stalled_until = None;
            }
        }
    }

    /// Notes a restarted server that is back.
    ///
    /// # Errors
    /// The server did not come back, or the thread restarting it died: the run cannot go on.
    pub(super) fn poll_restart(&mut self) -> anyhow::Result<()> {
        let Some(rx) = &self.restarting else {
            return Ok(());
        };
        match rx.try_recv() {
            Ok(Ok(())) => {
                self.tally.log("server(s) back".to_string());
                self.restarting = None;
                Ok(())
            }
            Ok(Err(e)) => Err(e.context("the ZooKeeper server did not come back")),
            Err(mpsc::TryRecvError::Empty) => Ok(()),
            Err(mpsc::TryRecvError::Disconnected) => {
                Err(anyhow::anyhow!("the restart thread died"))
            }
        }
    }

    /// Draws the next fault when its time has come (none while winding down, while one is
    /// still pending, or before the starting gun).
    pub(super) fn draw_fault(&mut self, now: Instant) {
        if !self.winding_down
            && self.pending.is_none()
            && now >= self.next_fault
            && self.rig.handle.started()
        {
            if let Some(k) = self.schedule.next_kind() {
                self.pending = Some((k, now + HOLDER_PATIENCE));
            }
            self.next_fault = now + self.schedule.gap();
        }
    }

    /// Injects the pending fault if it can go now: a server fault once none is in flight (and
    /// an ensemble has a leader), a client fault once a victim is found.
    ///
    /// # Errors
    /// A killed client's replacement that cannot be started.
    pub(super) fn inject_pending(&mut self, now: Instant) -> anyhow::Result<()> {
        let Some((kind, patience)) = self.pending else {
            return Ok(());
        };
        if kind.on_servers() {
            if self.strike_server(kind, now) {
                self.pending = None;
            }
        } else if let Some((i, was_holder)) = self.pick_victim(now, patience) {
            self.pending = None;
            self.tally.faults.bump(kind);
            self.tally.faults.aimed_at_holder += u64::from(was_holder);
            self.strike(kind, i, was_holder, now)?;
        }
        Ok(())
    }

    /// A running client not under a fault: one the verify server sees holding, else (once
    /// `patience` is over) any. Returns its index and whether it was chosen as holder.
    fn pick_victim(&mut self, now: Instant, patience: Instant) -> Option<(usize, bool)> {
        let clients = &self.clients.0;
        let holders = self.rig.handle.holder_ids();
        let idle: Vec<usize> = (0..clients.len())
            .filter(|&i| clients[i].child.is_some() && !clients[i].busy())
            .collect();
        let aimed: Vec<usize> = idle
            .iter()
            .copied()
            .filter(|&i| holders.contains(&clients[i].id))
            .collect();
        if let Some(&i) = aimed.first() {
            Some((i, true))
        } else if now >= patience && !idle.is_empty() {
            Some((idle[self.victims.random_range(0..idle.len())], false))
        } else {
            None
        }
    }

    /// Injects a fault other than `restart` into client `i`.
    fn strike(
        &mut self,
        kind: FaultKind,
        i: usize,
        was_holder: bool,
        now: Instant,
    ) -> anyhow::Result<()> {
        let c = &mut self.clients.0[i];
        let who = format!(
            "client {}{}",
            c.id,
            if was_holder { " (holder)" } else { "" }
        );
        match kind {
            FaultKind::Kill => {
                self.rig.handle.announce_kill(c.id);
                if let Some(mut ch) = c.child.take() {
                    self.tally.killed_pids.push(ch.id());
                    let _ = ch.kill();
                    let _ = ch.wait();
                }
                let (child, tail) = self.rig.spawner.spawn(c.id, c.kind)?;
                c.child = Some(child);
                c.tail = tail;
                self.tally.replacements += 1;
                self.tally.log(format!("kill {who}, replaced"));
            }
            FaultKind::Pause => {
                c.signal(libc::SIGSTOP);
                c.paused_until = Some(now + self.pause_len);
                self.tally.log(format!(
                    "pause {who} for {:.1}s",
                    self.pause_len.as_secs_f64()
                ));
            }
            FaultKind::Cut => {
                let n = self.rig.proxy.cut(usize::from(c.id));
                self.tally.faults.connections_reset += n as u64;
                self.tally.log(format!("cut {who} ({n} connections)"));
            }
            FaultKind::Stall => {
                let timeout = self.rig.cfg.session_timeout;
                let len = timeout.mul_f64(self.schedule.stall_factor());
                if len > timeout {
                    self.tally.faults.stalls_past_session_timeout += 1;
                }
                self.rig.proxy.stall(usize::from(c.id));
                c.stalled_until = Some(now + len);
                self.tally
                    .log(format!("stall {who} for {:.1}s", len.as_secs_f64()));
            }
            _ => unreachable!("server faults are injected by strike_server"),
        }
        Ok(())
    }
}
