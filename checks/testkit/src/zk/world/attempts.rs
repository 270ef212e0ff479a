//! Protection ids per attempt (issue #20's overlap): the real recipe takes a fresh uuid for
//! each `acquire`, so a dropped attempt's cleanup, searching for its own id, never takes the
//! next attempt's node. With [`SimZk::fresh_ids`](super::SimZk::fresh_ids) the simulation
//! does the same: client `c`'s n-th id is `c{c + 8·(n mod 32)}` (the model's names keep the
//! client in `uuid mod 8`, `lockwright_model::zk::PREVIOUS_ATTEMPT`), and a request about an
//! older attempt's id is its cleanup's. Without it every attempt of `c` is `c{c}`, as before.

use lockwright_model::zk::{ClientId, PREVIOUS_ATTEMPT};

/// The ids handed out, per client.
#[derive(Debug)]
pub(crate) struct Attempts {
    fresh: bool,
    /// Ids handed out so far, per client.
    issued: Vec<u8>,
    /// The id of the client's latest attempt.
    latest: Vec<Option<u8>>,
}

impl Attempts {
    pub(crate) fn new(clients: u8) -> Attempts {
        Attempts {
            fresh: false,
            issued: vec![0; usize::from(clients)],
            latest: vec![None; usize::from(clients)],
        }
    }

    pub(crate) fn set_fresh(&mut self, fresh: bool) {
        self.fresh = fresh;
    }

    /// The next attempt's protection id (`new_protection_id`).
    pub(crate) fn next_id(&mut self, c: ClientId) -> String {
        let i = usize::from(c);
        let u = if self.fresh {
            c + PREVIOUS_ATTEMPT * (self.issued[i] % 32)
        } else {
            c
        };
        self.issued[i] = self.issued[i].wrapping_add(1);
        self.latest[i] = Some(u);
        format!("c{u}")
    }

    /// Whether `uuid` is an id of an attempt of `c` older than its latest one: a request about
    /// it is a cleanup's.
    pub(crate) fn is_older(&self, c: ClientId, uuid: Option<u8>) -> bool {
        self.fresh && uuid.is_some() && uuid != self.latest[usize::from(c)]
    }
}

/// The protection id in a search prefix (`_c_c9-` → `Some(9)`).
pub(super) fn prefix_id(prefix: Option<&str>) -> Option<u8> {
    prefix?
        .strip_prefix("_c_c")?
        .strip_suffix('-')?
        .parse()
        .ok()
}
