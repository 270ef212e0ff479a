//! Simulated time. `now()` is the run's start plus the simulated elapsed time, and a
//! [`SimSleep`] is pending until the simulated clock reaches its deadline. Time moves only as a
//! step of the run: the clock thread ([`SimZk::run_clock`]), whenever shuttle schedules it and
//! a timer is pending, jumps to the earliest deadline, records `Tick` (a step with no model
//! action: the model has no time; a timeout shows in it as the give-up) and wakes the timers
//! due. So shuttle explores a timer firing between any two steps, and an execution stays
//! finite: the clock moves only while some sleep waits for it, and stops when the clients are
//! done.

use std::collections::BTreeMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::super::record::{Call, Outcome, Step};
use super::SimZk;

/// The clock's state, inside the world.
#[derive(Debug, Default)]
pub(crate) struct Clock {
    /// Simulated time since the start of the run.
    pub(crate) elapsed: Duration,
    /// Pending sleeps: id → (deadline, the sleeper's waker).
    timers: BTreeMap<u64, (Duration, Waker)>,
    next_id: u64,
    /// Client threads still running (the clock stops at 0).
    pub(crate) running: usize,
    /// The clock thread's waker while it waits for a timer.
    pub(crate) waker: Option<Waker>,
    /// Strict: time moves only while no client is ready to run (no sleep due and untaken, no
    /// reply ready and untaken), so no client is held back while the clock moves, and a
    /// time oracle need not forgive anything (issue #33).
    pub(crate) strict: bool,
    /// Replies recorded and not taken yet (strict clock only).
    pub(crate) ready: usize,
}

impl Clock {
    /// The earliest deadline still ahead (a due sleep was woken and ends at its next poll).
    /// A strict clock has none while a client is ready to run: a due sleep not taken yet, or a
    /// reply not taken yet.
    fn earliest(&self) -> Option<Duration> {
        if self.strict && (self.ready > 0 || self.timers.values().any(|(d, _)| *d <= self.elapsed))
        {
            return None;
        }
        self.timers
            .values()
            .map(|(d, _)| *d)
            .filter(|d| *d > self.elapsed)
            .min()
    }
}

/// A sleep on the simulated clock (`Coordination::sleep`).
#[derive(Debug)]
pub struct SimSleep {
    sim: SimZk,
    /// The sleeping client (its held-back time grows by how late the sleep is taken).
    client: Option<usize>,
    deadline: Duration,
    id: Option<u64>,
    counted: bool,
}

impl SimZk {
    /// Issue #33's simulated time: every request and every session re-open take `latency`,
    /// and the clock is strict (it moves only while no client is ready to run), so a
    /// give-up's time on the clock is the recipe's own and its oracle forgives nothing.
    pub fn strict_time(&self, latency: Duration) {
        let mut w = self.lock();
        w.clock.strict = true;
        w.latency = latency;
    }

    /// Simulated time since the start of the run.
    pub fn elapsed(&self) -> Duration {
        self.lock().clock.elapsed
    }

    /// A sleep of `d` from now.
    pub(crate) fn sleep(&self, client: Option<usize>, d: Duration) -> SimSleep {
        let deadline = self.elapsed().saturating_add(d);
        SimSleep {
            sim: self.clone(),
            client,
            deadline,
            id: None,
            counted: false,
        }
    }

    /// A client thread starts (the clock runs while any does).
    pub(crate) fn client_started(&self) {
        self.lock().clock.running += 1;
    }

    /// A client thread is done.
    pub(crate) fn client_done(&self) {
        let (waker, waiting) = {
            let mut w = self.lock();
            w.clock.running -= 1;
            // The environment may wait for a client's request (a suspension to fire).
            (w.clock.waker.take(), w.env_waker.take())
        };
        if let Some(wk) = waker {
            wk.wake();
        }
        if let Some(wk) = waiting {
            wk.wake();
        }
    }

    /// The clock thread: while clients run, waits for a pending timer, then jumps to the
    /// earliest deadline (one `Tick` step) and yields.
    pub(crate) async fn run_clock(&self) {
        loop {
            let due = poll_fn(|cx| {
                let mut w = self.lock();
                if w.clock.running == 0 {
                    return Poll::Ready(None);
                }
                if let Some(d) = w.clock.earliest() {
                    return Poll::Ready(Some(d));
                }
                w.clock.waker = Some(cx.waker().clone());
                Poll::Pending
            })
            .await;
            let Some(due) = due else { return };
            self.tick(due);
            shuttle::future::yield_now().await;
        }
    }

    /// Advances the clock to `to` (a recorded step) and wakes the sleeps due by then.
    fn tick(&self, to: Duration) {
        let due = self.step(|w| {
            w.clock.elapsed = w.clock.elapsed.max(to);
            let now = w.clock.elapsed;
            let due: Vec<Waker> = w
                .clock
                .timers
                .values()
                .filter(|(d, _)| *d <= now)
                .map(|(_, wk)| wk.clone())
                .collect();
            let step = Step {
                client: None,
                call: Call::Tick {
                    ms: u64::try_from(now.as_millis()).unwrap_or(u64::MAX),
                },
                outcome: Outcome::Ok,
            };
            (Some(step), due)
        });
        for wk in due {
            wk.wake();
        }
    }
}

impl Future for SimSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let sim = this.sim.clone();
        let clock_waker = {
            let mut w = sim.lock();
            if w.clock.elapsed >= this.deadline {
                if let Some(id) = this.id.take() {
                    w.clock.timers.remove(&id);
                }
                this.count_late(&mut w);
                // A strict clock waits for due sleeps to be taken.
                let clock = if w.clock.strict {
                    w.clock.waker.take()
                } else {
                    None
                };
                drop(w);
                if let Some(wk) = clock {
                    wk.wake();
                }
                return Poll::Ready(());
            }
            let id = match this.id {
                Some(id) => id,
                None => {
                    let id = w.clock.next_id;
                    w.clock.next_id += 1;
                    this.id = Some(id);
                    id
                }
            };
            w.clock
                .timers
                .insert(id, (this.deadline, cx.waker().clone()));
            w.clock.waker.take()
        };
        if let Some(wk) = clock_waker {
            wk.wake();
        }
        Poll::Pending
    }
}

impl SimSleep {
    /// A sleep taken (or dropped) after its deadline: the client was ready and not scheduled
    /// for that long (held back, as a slow machine would be).
    fn count_late(&mut self, w: &mut super::World) {
        if let (Some(c), false) = (self.client, self.counted) {
            self.counted = true;
            let late = w.clock.elapsed.saturating_sub(self.deadline);
            w.request_time[c] += late;
        }
    }
}

impl Drop for SimSleep {
    fn drop(&mut self) {
        let sim = self.sim.clone();
        let mut w = sim.lock();
        if let Some(id) = self.id.take() {
            w.clock.timers.remove(&id);
        }
        if w.clock.elapsed >= self.deadline {
            self.count_late(&mut w);
        }
        let clock = if w.clock.strict {
            w.clock.waker.take()
        } else {
            None
        };
        drop(w);
        if let Some(wk) = clock {
            wk.wake();
        }
    }
}
