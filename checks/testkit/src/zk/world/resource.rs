//! [`SimResource`]: the fenced resource as one simulated client sees it, behind the
//! production trait [`FencedResource`], so the real guard's claim path
//! ([`lockwright::zk::ZkGuard::claim`] and [`lockwright::zk::Claimed::write`]) runs on it as a
//! user calls it. Each claim and fenced write is one recorded step (`Claim`, `FencedWrite`:
//! the check, on the model's high-water mark) followed by a scheduling point; a read is `Read`.
//!
//! The data is a [`Counter`], the workload's oracle: a user's write increments it by a load
//! and a store. The workload counts the writes `Claimed::write` accepted; after the run the
//! counter must equal that count. As `FencedResource::write_fenced` requires, the check and
//! the write are one step: the write runs inside the check's step, with no scheduling point
//! until it is done, so no claim or write of another client comes between them (the model's
//! atomic `FencedWrite`; a lock would add a scheduling point before the check, where the
//! model has none). With [`SimZk::two_step_writes`] the resource checks, yields, and then
//! runs the write, whose increment yields between its load and its store (the recipe's old
//! `admit(token)?; f(resource)`, `HighWaterMark`'s lock released in between): another
//! holder's claim, read and write come in between, and the counter loses an increment under
//! shuttle (`zk_sim/shuttle_fenced_write.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use lockwright::zk::{FencedResource, FencingToken, StaleToken};

use super::super::record::{Call, Outcome};
use super::{SimCoord, SimZk};

/// The resource every client of one run writes: its lock, its data, and the tally of
/// accepted writes the workload keeps.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// The data: a counter every accepted write increments ([`Counter`]).
    counter: AtomicU64,
    /// Writes `Claimed::write` returned `Ok` for (kept by the workload, not the resource).
    accepted: AtomicU64,
    /// The twin: the check and the write as two steps.
    two_step: AtomicBool,
}

/// The resource's data as a write sees it: a handle on the shared counter, incremented by
/// load and store (no atomic read-modify-write); in the two-step twin with a scheduling point
/// between them, so that concurrent increments lose one.
#[derive(Debug)]
pub struct Counter(Arc<Shared>);

impl Counter {
    /// The user's write: reads the value, (two-step twin: yields to shuttle,) writes the
    /// value plus one.
    pub fn increment(&mut self) {
        let v = self.0.counter.load(Ordering::SeqCst);
        if self.0.two_step.load(Ordering::SeqCst) {
            shuttle::thread::yield_now();
        }
        self.0.counter.store(v + 1, Ordering::SeqCst);
    }
}

impl SimZk {
    /// Test-only: the resource checks a write's token and runs the write as two steps, its
    /// lock released between them (the recipe's write before issue #33: `admit`, then the
    /// write).
    pub fn two_step_writes(&self, on: bool) {
        self.resource.two_step.store(on, Ordering::SeqCst);
    }

    /// The resource's counter and the writes the workload saw accepted: equal unless an
    /// increment was lost.
    pub fn resource_tally(&self) -> (u64, u64) {
        (
            self.resource.counter.load(Ordering::SeqCst),
            self.resource.accepted.load(Ordering::SeqCst),
        )
    }
}

/// One client's handle on the simulated fenced resource (the same resource every client
/// writes).
#[derive(Clone, Debug)]
pub struct SimResource {
    coord: SimCoord,
    shared: Arc<Shared>,
}

impl SimCoord {
    /// This client's handle on the fenced resource.
    pub fn resource(&self) -> SimResource {
        SimResource {
            coord: self.clone(),
            shared: Arc::clone(&self.sim().resource),
        }
    }
}

impl SimResource {
    /// Reads the resource (the model's `Read`).
    pub fn read(&self) {
        self.coord.client_step(Call::Read, |_| (Outcome::Ok, ()));
        shuttle::thread::yield_now();
    }

    /// The workload saw `Claimed::write` accept a write.
    pub fn count_accepted(&self) {
        self.shared.accepted.fetch_add(1, Ordering::SeqCst);
    }

    /// The check of a claim or a fenced write, on the model's high-water mark: one step.
    fn check(&self, call: Call, token: FencingToken) -> Result<(), StaleToken> {
        self.coord.client_step(call, |core| {
            let before = core.highest;
            let o = core.fenced_write(token.get());
            let r = match (o, before) {
                (Outcome::Ok, _) => Ok(()),
                (_, Some(h)) => Err(StaleToken {
                    offered: token,
                    highest: FencingToken::new(h),
                }),
                (o, None) => unreachable!("refused with no token accepted: {o:?}"),
            };
            (o, r)
        })
    }
}

impl FencedResource for SimResource {
    type Data = Counter;

    fn claim(&self, token: FencingToken) -> Result<(), StaleToken> {
        let r = self.check(Call::Claim { token: token.get() }, token);
        shuttle::thread::yield_now();
        r
    }

    fn write_fenced<T>(
        &self,
        token: FencingToken,
        write: impl FnOnce(&mut Counter) -> T,
    ) -> Result<T, StaleToken> {
        let mut data = Counter(Arc::clone(&self.shared));
        let checked = self.check(Call::FencedWrite { token: token.get() }, token);
        if self.shared.two_step.load(Ordering::SeqCst) {
            // The twin: the check is one step, the write another; a claim may come between.
            shuttle::thread::yield_now();
            checked?;
            return Ok(write(&mut data));
        }
        // One step: the write runs before anything else can (no scheduling point).
        let out = checked.map(|()| write(&mut data));
        shuttle::thread::yield_now();
        out
    }
}
