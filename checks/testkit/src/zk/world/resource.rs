//! [`SimResource`]: the fenced resource as one simulated client sees it, behind the
//! production trait [`FencedResource`], so the real guard's claim path
//! ([`lockwright::zk::ZkGuard::claim`] and [`lockwright::zk::Claimed`]) runs on it. Each call is
//! one recorded step (`Claim`, `Read`, `FencedWrite`) followed by a scheduling point.

use lockwright::zk::{FencedResource, FencingToken, StaleToken};

use super::super::record::{Call, Outcome};
use super::SimCoord;

/// One client's handle on the simulated fenced resource (the same resource every client
/// writes: the simulated server's high-water mark).
#[derive(Clone, Debug)]
pub struct SimResource {
    coord: SimCoord,
}

impl SimCoord {
    /// This client's handle on the fenced resource.
    pub fn resource(&self) -> SimResource {
        SimResource {
            coord: self.clone(),
        }
    }
}

impl SimResource {
    /// Reads the resource (the model's `Read`).
    pub fn read(&self) {
        self.coord.client_step(Call::Read, |_| (Outcome::Ok, ()));
        shuttle::thread::yield_now();
    }

    /// A claim or a fenced write: accepted unless a higher token was.
    fn fenced(&self, call: Call, token: FencingToken) -> Result<(), StaleToken> {
        let r = self.coord.client_step(call, |core| {
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
        });
        shuttle::thread::yield_now();
        r
    }
}

impl FencedResource for SimResource {
    fn claim(&self, token: FencingToken) -> Result<(), StaleToken> {
        self.fenced(Call::Claim { token: token.get() }, token)
    }

    fn admit(&self, token: FencingToken) -> Result<(), StaleToken> {
        self.fenced(Call::FencedWrite { token: token.get() }, token)
    }
}
