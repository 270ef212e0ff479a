//! The give-up's time oracle (moved out of `workload.rs` to keep it under 600 lines).

use std::time::Duration;

use lockwright::zk::{ZkLockError, GIVE_UP_WAIT};

use super::GiveUp;

/// The time oracle of a give-up, read on the simulated clock (not the recipe's own report):
/// `acquire_timeout(t)` returns within `t` plus one bounded request ([`GIVE_UP_WAIT`], the
/// documented wait for the cleanup's answer), plus the simulated time the scheduler held the
/// client back (a request's reply in flight, a spawn): the documented bound excludes "the last
/// request", and in the simulation the clock may move while a ready client is not scheduled;
/// the oracle cannot tell the last request from the others, so it allows all of that time.
/// `try_acquire` has no documented time bound (it retries lost replies with pauses until a
/// listing shows a node ahead), so only its wait is recorded.
pub(super) fn check_give_up_time(
    how: GiveUp,
    waited: Duration,
    in_requests: Duration,
    e: &ZkLockError,
) -> Result<(), String> {
    let GiveUp::Timeout(t) = how else {
        return Ok(());
    };
    let bound = t + GIVE_UP_WAIT + in_requests;
    if waited <= bound {
        return Ok(());
    }
    Err(format!(
        "{how:?} returned after {waited:?} of simulated time, past its bound {bound:?} \
         (the timeout, one bounded request, and {in_requests:?} held back by the scheduler): {e}"
    ))
}
