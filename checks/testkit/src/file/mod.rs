//! The real file-lock code (`lockwright::file`) on a simulated OS, for loom and shuttle.
//!
//! - [`record`]: what a run records ([`Step`]s: actor, call, outcome) and the fixed names of
//!   the one simulated lock directory.
//! - [`world`]: [`SimOs`], the simulated kernel (the model's `lockwright_model::file::kernel`)
//!   and the held sets behind one mutex; fault injection; scripted replay.
//! - [`system`]: [`SimSystem`], one simulated thread's `lockwright::file::sys::System`.
//! - [`workload`]: which simulated threads do what on the real `NativeFsLockFactory`
//!   ([`workload::run`]) or `SimpleFsLockFactory` ([`workload::run_simple`]); the direct "at
//!   most one writer" check.
//! - [`refine`]: replays a recording through the Stateright model step by step.

pub mod record;
pub mod refine;
pub mod system;
pub mod workload;
pub mod world;

pub use lockwright_model::file::Tid;
pub use record::{format_trace, Actor, Call, Outcome, Step};
pub use system::{SimFile, SimSystem};
pub use workload::{Fault, MakeFactory, Op, ThreadPlan, Workload};
pub use world::{SimOs, Violation};
