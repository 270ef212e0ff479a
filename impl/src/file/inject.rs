//! The file gate's test hook, below its errno classification (unit tests only): per thread,
//! a queue of errnos that the next raw calls of a given [`RawCall`] answer instead of the
//! kernel, and a count of the calls made. `gate.rs` asks it before every raw call.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;

use super::gate::RawCall;

thread_local! {
    static QUEUE: RefCell<Vec<(RawCall, i32)>> = const { RefCell::new(Vec::new()) };
    static CALLS: RefCell<HashMap<RawCall, usize>> = RefCell::new(HashMap::new());
}

/// The next call of `call` on this thread fails with `errno` (after those already queued).
pub(crate) fn fail_next(call: RawCall, errno: i32) {
    QUEUE.with(|q| q.borrow_mut().push((call, errno)));
}

/// Forgets the queue and the counts.
pub(crate) fn reset() {
    QUEUE.with(|q| q.borrow_mut().clear());
    CALLS.with(|c| c.borrow_mut().clear());
}

/// How many scripted errors are still waiting.
pub(crate) fn pending() -> usize {
    QUEUE.with(|q| q.borrow().len())
}

/// How many times `call` was made (scripted or real) since the last reset.
pub(crate) fn calls(call: RawCall) -> usize {
    CALLS.with(|c| c.borrow().get(&call).copied().unwrap_or(0))
}

pub(super) fn take(call: RawCall) -> Option<io::Error> {
    CALLS.with(|c| *c.borrow_mut().entry(call).or_default() += 1);
    QUEUE.with(|q| {
        let mut q = q.borrow_mut();
        let at = q.iter().position(|&(c, _)| c == call)?;
        Some(io::Error::from_raw_os_error(q.remove(at).1))
    })
}
