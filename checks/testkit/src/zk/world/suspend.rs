//! A suspended connection in the simulation (the model's `suspend`; the server's side is
//! `zk::suspend`). The environment arms a suspension ([`SimZk::arm_suspend`]); the client's
//! next request that can carry it records `Suspend` (its queued request in it) and waits, as
//! every request of that client does while the connection is down. ZooKeeper's client queues
//! requests while disconnected; the recipe sees `session_event()` answer `Suspended`, and a
//! request it stops waiting for (a deadline passed) has an unknown outcome. The suspension
//! ends in one of two ways:
//!
//! - `Reconnect` ([`SimZk::reconnect`], an environment step): the queued request is dropped
//!   (ZooKeeper refuses a moved session's old requests) and its answer is `ConnectionLoss`; a
//!   waiting read is sent now, as a normal step.
//! - the session expired meanwhile: the waiting request learns it (`SessionEvent`, the model's
//!   `ReceiveSessionEvent`; the client opens its next session), and answers `ConnectionLoss`
//!   for the queued request (its outcome is unknown to the client), `SessionExpired` for a read.
//!
//! Before either, the server may apply the queued request ([`SimZk::apply_sent`], `ApplySent`);
//! no answer reaches the client.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use lockwright::zk::coord::CoordError;
use lockwright_model::zk::{ClientId, SessionId};

use super::super::core::Core;
use super::super::record::{Call, Outcome, Step};
use super::super::suspend::Request;
use super::{SimCoord, SimZk};

/// A request's future: at once (connected), or after the connection is back.
pub(super) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A request that waits for the connection: whether it is the queued one (its answer is
/// `ConnectionLoss`), and the session it was sent in.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    queued: bool,
    session: SessionId,
}

impl SimZk {
    /// Test-only: with `on`, `session_event()` answers `Connected` while the connection is down
    /// (a client that hides the disconnect), so the recipe cannot give up a request under its
    /// deadline: the twin of the clock's bound across a suspension.
    pub fn hide_disconnects(&self, on: bool) {
        self.lock().hide_disconnects = on;
    }

    /// Client `c`'s connection drops at its next request that can carry it, in a live session
    /// (a create, a delete retried after a lost reply, a read).
    pub fn arm_suspend(&self, c: ClientId) {
        self.env(Call::ArmSuspend(c), |core| core.arm_suspend(c));
    }

    /// The server may apply client `c`'s queued request (shuttle's choice), once the armed
    /// suspension fired. Skipped if nothing is queued, or if it never fired (the client was done).
    pub fn apply_sent(&self, c: ClientId) {
        use shuttle::rand::Rng;
        self.wait_fired(c);
        if !shuttle::rand::thread_rng().gen_bool(0.5) {
            return;
        }
        self.env(Call::ApplySent(c), |core| core.apply_sent(c));
    }

    /// Client `c` reconnects to its session `after` the armed suspension fired (simulated
    /// time). Skipped if the suspension ended otherwise (the session expired and the client
    /// learned it) or never fired.
    pub fn reconnect(&self, c: ClientId, after: Duration) {
        self.wait_fired(c);
        if !after.is_zero() {
            let mut sleep = std::pin::pin!(self.sleep(None, after));
            shuttle::future::block_on(poll_fn(|cx| {
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(());
                }
                let mut w = self.lock();
                if w.clock.running == 0 || !w.core.suspended(c) {
                    return Poll::Ready(());
                }
                w.wakers.push(cx.waker().clone());
                w.env_waker = Some(cx.waker().clone());
                Poll::Pending
            }));
        }
        self.env(Call::Reconnect(c), |core| core.reconnect(c));
    }

    /// Waits until `c`'s armed suspension fired, or every client is done.
    fn wait_fired(&self, c: ClientId) {
        shuttle::future::block_on(poll_fn(|cx| {
            let mut w = self.lock();
            if !w.core.conn[usize::from(c)].armed || w.clock.running == 0 {
                return Poll::Ready(());
            }
            w.wakers.push(cx.waker().clone());
            w.env_waker = Some(cx.waker().clone());
            Poll::Pending
        }));
    }
}

impl SimCoord {
    /// Request `r` of this client through the connection: while connected, `f` is its step at
    /// once (the answer taken after a scheduling point, as before); if the connection is down,
    /// or drops now (an armed suspension fires: `Suspend`), it waits. After a reconnect a read
    /// is sent (`f`); the queued request, and any request whose session ended meanwhile, are
    /// answered by `cut` with the error.
    pub(super) fn request<'a, T: Send + 'a>(
        &'a self,
        r: Request,
        call: Call,
        in_flight: bool,
        f: impl FnOnce(&mut Core) -> (Outcome, T) + Send + 'a,
        cut: impl FnOnce(CoordError) -> T + Send + 'a,
    ) -> Pending<'a, T> {
        // Issue #33's simulated time: the request travels for `latency` before the server
        // applies it (its step); a reply, once the step is recorded, is not held up.
        let latency = self.sim.lock().latency;
        if !latency.is_zero() {
            return Box::pin(async move {
                self.sim.sleep(None, latency).await;
                self.send(r, call, in_flight, f, cut).await
            });
        }
        self.send(r, call, in_flight, f, cut)
    }

    fn send<'a, T: Send + 'a>(
        &'a self,
        r: Request,
        call: Call,
        in_flight: bool,
        f: impl FnOnce(&mut Core) -> (Outcome, T) + Send + 'a,
        cut: impl FnOnce(CoordError) -> T + Send + 'a,
    ) -> Pending<'a, T> {
        match self.gate(r) {
            None => {
                let out = self.client_step(call, f);
                Box::pin(self.replied(out, in_flight))
            }
            Some(held) => Box::pin(async move {
                match self.held(held).await {
                    None => {
                        let out = self.client_step(call, f);
                        self.replied(out, in_flight).await
                    }
                    Some(e) => self.replied(cut(e), false).await,
                }
            }),
        }
    }

    /// `None`: connected, send now. Otherwise the request waits (the suspension fired at it, a
    /// recorded `Suspend`, or was on already).
    pub(super) fn gate(&self, r: Request) -> Option<Held> {
        let c = self.c;
        self.sim.step(|w| {
            let session = w.core.session(c);
            if w.core.suspended(c) {
                let held = Held {
                    queued: false,
                    session,
                };
                return (None, Some(held));
            }
            let Some(queued) = w.core.fires(c, r) else {
                return (None, None);
            };
            assert_eq!(w.core.suspend(c, queued), Outcome::Ok);
            let step = Step {
                client: Some(c),
                call: Call::Suspend { queued },
                outcome: Outcome::Ok,
            };
            let held = Held {
                queued: queued.is_some(),
                session,
            };
            (Some(step), Some(held))
        })
    }

    /// Waits for the suspension to end: `None` to send the request now, or its answer.
    pub(super) async fn held(&self, held: Held) -> Option<CoordError> {
        let c = self.c;
        let lost = || CoordError::ConnectionLoss {
            detail: "simulated disconnect: sent before the connection dropped".into(),
        };
        poll_fn(|cx| {
            let waker = cx.waker().clone();
            self.sim.step(|w| {
                if w.core.session(c) != held.session {
                    // A new session under it (a new handle): the old connection's requests
                    // fail.
                    return (None, Poll::Ready(Some(lost())));
                }
                if !w.core.suspended(c) {
                    // Reconnected: the queued request was dropped; a read goes now.
                    return (None, Poll::Ready(held.queued.then(lost)));
                }
                if !w.core.live(c) {
                    // The session expired while the connection was down: the client learns it
                    // (`ReceiveSessionEvent`) and opens its next session.
                    assert!(w.core.learn(c));
                    let step = Step {
                        client: Some(c),
                        call: Call::SessionEvent,
                        outcome: Outcome::Ok,
                    };
                    let answer = if held.queued {
                        lost()
                    } else {
                        CoordError::SessionExpired
                    };
                    return (Some(step), Poll::Ready(Some(answer)));
                }
                w.wakers.push(waker);
                (None, Poll::Pending)
            })
        })
        .await
    }
}
