//! Redis locks: the single-instance lock (`SET k tok NX PX ttl`, a Lua compare-and-delete
//! release) and Redlock over N independent instances, with the two sides of the 2016
//! argument as rows — Martin Kleppmann's "How to do distributed locking" (a pause or a clock
//! jump breaks a lock with no fencing token) and Salvatore Sanfilippo's "Is Redlock safe?"
//! (re-check the elapsed time after acquiring, check-and-set by the random value, delayed
//! restarts).
//!
//! - [`server`]: what one Redis instance does with the recipe's commands (keys expiring by
//!   that instance's clock, restarts without persistence, an asynchronously replicated
//!   replica and its promotion); shared with the simulated server of the checks.
//! - [`scenario`]: recipes, write modes, fault budgets, [`Scenario`].
//! - [`protocol`]: the model — [`State`], the step table [`next`] and [`recipe`],
//!   [`Action`], the property names, the [`stateright::Model`] impl.
//!
//! `docs/redis.md` has the verdict table and the commands.

mod family;
pub mod protocol;
pub mod scenario;
pub mod server;
#[cfg(test)]
mod tests;
mod verdicts;

pub use protocol::{
    next, recipe, Action, Client, ClientId, Delivery, Event, Pc, Recipe, ReleaseBy, Resource,
    State, Step, Token, Validity, ValidityBy, ALWAYS, SOMETIMES,
};
pub use scenario::{Faults, Scenario, Variant, Writes, WIDTH};
