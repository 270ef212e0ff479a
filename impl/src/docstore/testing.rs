//! Test-only (feature `test-util`; never in production): the recipe's vocabulary, for the test
//! kit that replays runs through the model, and the one switch that lets a client run another
//! recipe table than [`Recipe::Leased`](super::Recipe::Leased)'s — the broken recipes of `docs/docstore.md`, which
//! live in the test kit (`lockwright_testkit::docstore::recipes`) as [`Rules`] tables of the
//! same shape as the production one ([`LEASED`]) and drive the same client code through the
//! same [`DocStore`] interface.

use super::recipe::Role;
pub use super::recipe::{
    claim_request, release_request, write_request, AcquireFn, Pc, Request, Row, Rules, Step, LEASED,
};
use super::store::DocStore;
use super::{LeaseGuard, LeaseLock};

impl<S: DocStore> LeaseLock<S> {
    /// A deliberately broken client (test-only): the same lock running the table `rules` in
    /// `role` instead of [`Recipe::Leased`](super::Recipe::Leased)'s.
    #[doc(hidden)]
    pub fn with_rules(mut self, rules: &'static Rules, role: Role) -> Self {
        self.rules = rules;
        self.role = role;
        self
    }

    /// The table this client runs ([`LEASED`] unless set with [`LeaseLock::with_rules`]).
    #[doc(hidden)]
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }
}

impl<S: DocStore> LeaseGuard<'_, S> {
    /// Where the guard is in the recipe's loop (the model's program counter). Test-only.
    pub fn pc(&self) -> Pc {
        self.pc
    }
}
