//! Test-only (feature `test-util`; never in production): the recipe's vocabulary, for the test
//! kit that replays runs through the model, and the one switch that lets a client run another
//! recipe table than [`Recipe::Leased`]'s — the broken recipes of `docs/docstore.md`, which
//! live in the test kit (`lockwright_testkit::docstore::recipes`) as [`Rules`] tables of the
//! same shape as the production one ([`LEASED`]) and drive the same client code through the
//! same [`DocStore`] interface.

// The model's vocabulary (recipes, roles, write modes): production has one of each, so only
// the test kit names them (issue #37: they were in the default API).
pub use super::recipe::{
    claim_request, release_request, write_request, AcquireFn, Pc, Request, Row, Rules, Step, LEASED,
};
pub use super::recipe::{Recipe, Role};
use super::store::DocStore;
use super::{LeaseGuard, LeaseLock};

impl<S: DocStore> LeaseLock<S> {
    /// A deliberately broken client (test-only): the same lock running the table `rules` in
    /// `role` instead of [`Recipe::Leased`]'s.
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

impl Recipe {
    /// The model's name (`leased`).
    pub fn name(self) -> &'static str {
        self.rules().name
    }

    /// Whether the recipe is a lease (a clock read before each write).
    pub fn leased(self) -> bool {
        self.rules().leased
    }

    /// Whether the recipe is the fix of `docs/docstore.md` §6 (the model's
    /// `installs_lock_once`, `verifies_grant`, `conditions_writes`, `checks_fence_on_read`:
    /// the client has all four pieces or none).
    pub fn fixed(self) -> bool {
        self.rules().fixed
    }
}

/// How the holder writes the protected document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Writes {
    /// The `fenced-write` script with the holder's token: the data document refuses a token
    /// lower than the highest it accepted. A token the document has not seen yet is accepted,
    /// so an older holder's late write can land between a newer holder's read and its write
    /// (a lost update: `docs/docstore.md`).
    Fenced,
    /// `Fenced`, and right after the grant, before its first read, the holder claims the data
    /// document with its token (the `fence-claim` script with an `upsert`): from then on the
    /// document refuses every older token. [`crate::docstore::LeaseGuard::claim`].
    FencedClaim,
}

impl Writes {
    /// Whether writes carry the holder's token (`Fenced`, `FencedClaim`: always).
    pub fn fenced(self) -> bool {
        matches!(self, Writes::Fenced | Writes::FencedClaim)
    }
}
