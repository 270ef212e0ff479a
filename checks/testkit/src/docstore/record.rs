//! What a simulated run records: who made which call and what it returned, in linearization
//! order (the world mutex's order).

use std::fmt;

use lockwright::docstore::Token as WireToken;
use lockwright_model::docstore::ClientId;
use lockwright_model::docstore::Delivery;

use super::service::{Answer, Req};

/// Milliseconds on the simulated clock.
pub type Millis = u64;

/// The simulated clock's reading when a run starts (an arbitrary absolute time, so that the
/// model's relative times are really mapped).
pub const CLOCK_START: Millis = 1_700_000_000_000;
/// One model tick on the simulated clock.
pub const TICK_MS: Millis = 1_000;

/// Who made a recorded call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// Client `c` in its `incarnation`.
    Client { c: ClientId, incarnation: u8 },
    /// The environment: setup and injected faults.
    Env,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Client { c, incarnation } => write!(f, "c{c}-i{incarnation}"),
            Actor::Env => f.write_str("env"),
        }
    }
}

/// A recorded call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    // ---- setup ----
    /// `POST _scripts/<id>` with `source`.
    PutScript {
        id: String,
        source: String,
    },
    // ---- client calls through the store interface ----
    /// `now()` returned `value`.
    Now {
        value: Millis,
    },
    /// A request (`Err`: the client's request could not be put in the model's vocabulary).
    Request(Result<Req, String>),
    /// `GET` of a document.
    Get {
        index: String,
        id: String,
    },
    /// `sleep()` between acquire attempts (a scheduling point; no time passes).
    Sleep,
    // ---- harness events: what the client code returned ----
    /// `try_acquire` returned: `Some((token, valid_until))` for a lock.
    Acquired {
        lock: Option<(WireToken, Option<Millis>)>,
    },
    /// `ensure_valid` returned (leased; `until` is the guard's deadline).
    Checked {
        ok: bool,
        until: Option<Millis>,
    },
    // ---- faults (actor: env) ----
    Crash(ClientId),
    Restart(ClientId),
    StrayDelete,
    Failover,
    /// The lock index is deleted and created again.
    RecreateIndex,
    /// The data document is deleted and created again without its fence.
    RecreateDoc,
    /// The last acknowledged write, to `index`, is lost at a fail-over (`index` empty when
    /// skipped: there was none).
    Rollback {
        index: String,
    },
    /// The clock advances one tick.
    Tick,
    /// Client `c`, between a passed lease check and its write, is not scheduled until its
    /// deadline: the clock jumps to `to`.
    Pause {
        c: ClientId,
        to: Millis,
    },
    /// The next request (of any client) will be lost this way.
    Arm(Delivery),
}

/// What a recorded call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done (events, setup, faults, clock reads, sleeps).
    Done,
    /// A fault that could not happen now (no effect): a crash of a dead client, a tick while
    /// a client is between a clock read and its request, a stray delete with no document.
    Skipped,
    /// The store answered.
    Answered(Answer),
    /// The store applied the request and the reply was lost: the client saw no answer.
    ReplyLost(Answer),
    /// The request never reached the store: the client saw no answer.
    RequestLost,
    /// `GET`'s answer.
    Got(Option<lockwright_model::docstore::store::Doc>),
    /// The caller's incarnation is dead: no effect.
    Dead,
}

/// One recorded step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub actor: Actor,
    pub call: Call,
    pub outcome: Outcome,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let call = match &self.call {
            Call::Request(Ok(r)) => format!("{} {:?}", r.line(), r.op),
            Call::Request(Err(e)) => format!("unmodelled request: {e}"),
            c => format!("{c:?}"),
        };
        write!(f, "{} {call} -> {:?}", self.actor, self.outcome)
    }
}

/// Formats a recording, one numbered step a line.
pub fn format_trace(steps: &[Step]) -> String {
    let mut s = String::new();
    for (i, step) in steps.iter().enumerate() {
        s.push_str(&format!("  #{i:<3} {step}\n"));
    }
    s
}
