//! The real `lockwright` protocol code on a simulated OS, for loom and shuttle.
//!
//! - [`prims`]: the one sync facade (loom, shuttle, std) with identical signatures.
//! - [`os`]: [`SimOs`]/[`SimSystem`], `lockwright::sys::System` on the model's OS semantics
//!   (`lockwright_model::os`), one mutex acquisition per call, every call recorded.
//! - [`scenario`]: which simulated threads do what, on the real `NativeFsLockFactory`
//!   ([`scenario::run`]) or `SimpleFsLockFactory` ([`scenario::run_simple`]); the direct "at
//!   most one writer" check.
//! - [`refine`]: replays a recording through the Stateright model step by step.

pub mod os;
pub mod prims;
pub mod refine;
pub mod scenario;

pub use os::{Actor, Call, Outcome, SimOs, SimSystem, Step, Tid};
pub use prims::{Loom, Runtime, Shuttle, Std};
pub use scenario::{MakeFactory, Op, Scenario, ThreadPlan};
