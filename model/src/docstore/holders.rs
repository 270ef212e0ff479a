//! Who holds the lock by the model's definition (the `always` properties count writers and
//! readers with these), and the checks the replayer and the tools run on one state.

use stateright::Model;

use crate::docstore::protocol::{next, Client, ClientId, Pc, State};
use crate::docstore::scenario::{Role, Scenario, Variant};

impl Scenario {
    /// Whether client `c` is a writer: a writer-role client whose acquire succeeded, who has
    /// not started to release and who would still pass its own validity check (leased: its
    /// deadline has not passed), or who is between a passed lease check and its write.
    pub fn is_writer(&self, s: &State, c: ClientId) -> bool {
        let cl = s.clients[c as usize];
        cl.alive
            && self.role(c) == Role::Writer
            && match cl.pc {
                Pc::Writing => true,
                Pc::Claiming | Pc::Verifying | Pc::Holding | Pc::Computing => {
                    !self.timed() || cl.deadline.is_some_and(|d| d > 0)
                }
                _ => false,
            }
    }

    /// Whether client `c` is a reader holding the shared lock.
    pub fn is_reader(&self, s: &State, c: ClientId) -> bool {
        let cl = s.clients[c as usize];
        cl.alive && self.role(c) == Role::Reader && cl.pc == Pc::Holding
    }

    pub(crate) fn count(&self, f: impl Fn(ClientId) -> bool) -> usize {
        (0..self.clients).filter(|&c| f(c)).count()
    }

    /// Whether a fresh client of `role` (a new `process_id`) would acquire the lock now or once
    /// every lease has passed, by sending its real acquire request to a copy of the lock
    /// index.
    pub fn fresh_acquire_succeeds_eventually(&self, s: &State, role: Role) -> bool {
        let mut scratch = s.clone();
        scratch
            .locks
            .map_sources(|src| src.map_times(|_| 0 /* every lease has passed */));
        let fresh = Client {
            incarnation: u8::MAX,
            ..Client::START
        };
        let c = match role {
            Role::Reader => 0,
            Role::Writer => self.clients - 1,
        };
        debug_assert_eq!(self.role(c), role);
        scratch.clients[c as usize] = fresh;
        if self.variant == Variant::DocumentBulk {
            // Every item of its bulk must create its document.
            let ids = self.variant.lock_ids();
            return ids.iter().all(|id| scratch.locks.get(id).is_none());
        }
        let step = next(self.variant, role, Pc::Idle)[0];
        let request = self.request(&scratch, c, step).expect("an acquire request");
        request.execute(&mut scratch).is_ok()
    }

    /// The names of the `always` properties that `s` violates (the replayer checks every state
    /// of a recorded run with this).
    pub fn violated(&self, s: &State) -> Vec<&'static str> {
        self.properties()
            .into_iter()
            .filter(|p| p.expectation == stateright::Expectation::Always && !(p.condition)(self, s))
            .map(|p| p.name)
            .collect()
    }
}
