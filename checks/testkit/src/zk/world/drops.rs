//! What a caller and the scheduler do to a simulated client besides its requests: drops of its
//! futures at random `Pending` polls ([`SimCoord::try_drop`]), and the simulated time the
//! scheduler holds it back ([`SimCoord::request_time`]: a reply taken late, a spawn).

use std::future::Future;
use std::time::Duration;

use super::super::record::{Call, Outcome, Step};
use super::{SimCoord, SimZk};

/// The chance that a caller with a drop left drops its future at a `Pending` poll where the
/// model allows it: low enough that a run's drop is not always at the first such poll (an
/// acquire passes several: waiting, a pause, a cleanup's answer).
const DROP_CHANCE: f64 = 0.25;

/// Adds the simulated time since `.2` to client `.1`'s held-back time when dropped.
pub(super) struct HeldBack<'a>(pub(super) &'a SimZk, pub(super) usize, pub(super) Duration);

impl Drop for HeldBack<'_> {
    fn drop(&mut self) {
        let mut w = self.0.lock();
        let took = w.clock.elapsed.saturating_sub(self.2);
        w.request_time[self.1] += took;
    }
}

impl SimCoord {
    /// At a `Pending` poll of this client's acquire or release: whether the caller drops the
    /// future now. Offered only while the run has drops left, no create's or search's reply is
    /// on its way to the recipe, and the online replay's model enables `Abandon` for this
    /// client; then shuttle's random choice decides. A drop is recorded (`Drop`, the model's
    /// place in it) in the same step, and the caller drops the future at once.
    pub fn try_drop(&self) -> bool {
        use shuttle::rand::Rng;
        let c = self.c;
        let i = usize::from(c);
        self.sim.step(|w| {
            if w.drops_left == 0 || w.in_flight[i] {
                return (None, false);
            }
            let Some(at) = w.replay.as_ref().and_then(|r| r.may_abandon(c)) else {
                return (None, false);
            };
            if !shuttle::rand::thread_rng().gen_bool(DROP_CHANCE) {
                return (None, false);
            }
            w.drops_left -= 1;
            w.acquiring[i] = false;
            w.in_wait[i] = false;
            let step = Step {
                client: Some(c),
                call: Call::Drop { at },
                outcome: Outcome::Ok,
            };
            (Some(step), true)
        })
    }

    /// The reply of the step just recorded, taken at the next poll after a scheduling point.
    /// The simulated time that passes meanwhile (the clock may tick while the scheduler holds
    /// this client back) is the request's time, summed per client ([`SimCoord::request_time`]).
    /// With `in_flight` (a create or a search) no drop is offered until the recipe took it.
    pub(super) fn replied<'a, T: Send + 'a>(
        &'a self,
        out: T,
        in_flight: bool,
    ) -> impl Future<Output = T> + Send + 'a {
        struct Taken<'a> {
            sim: &'a SimZk,
            i: usize,
            sent: Duration,
            /// Counted as a ready reply (strict clock) until taken.
            ready: bool,
        }
        impl Drop for Taken<'_> {
            fn drop(&mut self) {
                let clock = {
                    let mut w = self.sim.lock();
                    w.in_flight[self.i] = false;
                    let took = w.clock.elapsed.saturating_sub(self.sent);
                    w.request_time[self.i] += took;
                    if self.ready {
                        w.clock.ready -= 1;
                        w.clock.waker.take()
                    } else {
                        None
                    }
                };
                if let Some(wk) = clock {
                    wk.wake();
                }
            }
        }
        let i = usize::from(self.c);
        let sent = {
            let mut w = self.sim.lock();
            w.in_flight[i] = in_flight;
            w.clock.elapsed
        };
        let mut taken = Taken {
            sim: &self.sim,
            i,
            sent,
            ready: false,
        };
        async move {
            {
                let mut w = self.sim.lock();
                if w.clock.strict {
                    w.clock.ready += 1;
                    taken.ready = true;
                }
            }
            shuttle::future::yield_now().await;
            drop(taken);
            out
        }
    }

    /// The simulated time the scheduler held this client back so far: from each request's
    /// step to the recipe taking its reply, across each spawn (a scheduling point), and from a
    /// sleep's deadline to the poll that takes it (or drops it). A
    /// client that is ready to go on but not scheduled is a slow machine or network, which no
    /// timeout can bound.
    pub fn request_time(&self) -> Duration {
        self.sim.lock().request_time[usize::from(self.c)]
    }
}
