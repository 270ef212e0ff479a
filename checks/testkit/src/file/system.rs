//! [`SimSystem`]: one simulated thread's `lockwright::file::sys::System`, every call one step
//! of the [`SimOs`] world (or one process's, shared by its threads: [`SimOs::process`]).
//!
//! The two blocking calls wait by retrying: each attempt takes the world mutex once (one
//! scheduling point) and, when the call cannot complete yet (the path is in the held set;
//! another owner holds a conflicting lock), releases it and yields. Nothing is recorded until
//! the attempt that completes, which is the call's one step: the model's `HeldInsert`
//! (enabled only while the path is absent) or `TryLock` (enabled only while it would be
//! acquired). A thread of a crashed process stops waiting (`Dead`).
//!
//! Here: the handle, its step machinery and the harness events; `syscalls`: the `System` calls.

mod syscalls;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;

use lockwright_model::file::kernel::{Desc, Pid};

use super::record::*;
use super::world::{SimOs, Violation, World, Writer};
use super::Tid;
use crate::prims::Runtime;

/// An open simulated descriptor.
#[derive(Debug)]
pub struct SimFile {
    desc: Desc,
}

impl SimFile {
    /// The model descriptor.
    pub fn desc(&self) -> Desc {
        self.desc
    }
}

/// One simulated thread's view of the system (or one process's, shared by its threads):
/// what the real protocol code runs on.
pub struct SimSystem<R: Runtime> {
    pub(crate) os: SimOs<R>,
    pub(crate) pid: Pid,
    /// `None`: shared by the process's threads; each call is made as the thread the calling
    /// runtime thread is bound to ([`SimOs::bind`]).
    pub(crate) tid: Option<Tid>,
    /// Which of the process's two held sets this thread's copy of the crate uses.
    pub(crate) copy: u8,
    pub(crate) incarnation: u32,
    /// Constant observations not yet logged, per thread; see [`SimSystem::constant_step`].
    pub(crate) pending: Arc<std::sync::Mutex<BTreeMap<Tid, Vec<Call>>>>,
}

impl<R: Runtime> Clone for SimSystem<R> {
    fn clone(&self) -> Self {
        SimSystem {
            os: self.os.clone(),
            pid: self.pid,
            tid: self.tid,
            copy: self.copy,
            incarnation: self.incarnation,
            pending: Arc::clone(&self.pending),
        }
    }
}

impl<R: Runtime> fmt::Debug for SimSystem<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tid = self.tid.map_or_else(|| "*".to_owned(), |t| t.to_string());
        write!(
            f,
            "SimSystem<{}>(p{}.t{tid} copy {} incarnation {})",
            R::NAME,
            self.pid,
            self.copy,
            self.incarnation
        )
    }
}

fn dead_error(pid: Pid) -> io::Error {
    io::Error::other(format!("simulated process {pid} has crashed"))
}

impl<R: Runtime> SimSystem<R> {
    /// The simulated process.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The simulated thread making the current call: this system's own, or (shared by the
    /// process's threads) the one the calling runtime thread is bound to.
    pub fn tid(&self) -> Tid {
        match self.tid {
            Some(tid) => tid,
            None => {
                let (pid, tid) = self.os.bound();
                assert_eq!(
                    pid, self.pid,
                    "a thread of p{pid} called p{}'s system",
                    self.pid
                );
                tid
            }
        }
    }

    /// The simulated OS.
    pub fn sim(&self) -> &SimOs<R> {
        &self.os
    }

    fn actor(&self) -> Actor {
        Actor::Thread {
            pid: self.pid,
            tid: self.tid(),
        }
    }

    fn desc(&self) -> Desc {
        Desc {
            pid: self.pid,
            slot: self.tid(),
        }
    }

    fn take_pending(&self) -> Vec<Call> {
        let tid = self.tid();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&tid)
            .unwrap_or_default()
    }

    /// One step: if our incarnation is dead, record `Dead` and return `dead`; otherwise run
    /// `f` on the world, record its outcome, and return its result.
    fn step<T>(
        &self,
        call: Call,
        dead: impl FnOnce() -> T,
        f: impl FnOnce(&mut World) -> (Outcome, T),
    ) -> T {
        let actor = self.actor();
        let pending = self.take_pending();
        self.os.turn(actor, |w| {
            for call in pending {
                w.record(actor, call, Outcome::Done);
            }
            if !w.alive(self.pid, self.incarnation) {
                w.record(actor, call, Outcome::Dead);
                return dead();
            }
            let (outcome, value) = f(w);
            w.record(actor, call, outcome);
            value
        })
    }

    /// A constant observation (`create_dir_all`, `canonicalize_dir` of the one simulated
    /// directory): it reads nothing shared, so it commutes with every step and needs no
    /// scheduling point of its own. It is logged just before this thread's next step, which is
    /// a valid linearization. (Taking the mutex for it would multiply loom's executions by the
    /// extra interleavings for nothing: 2 threads × 1 round took 1,035,836 loom executions
    /// with it, 42,196 without.)
    fn constant_step<T>(&self, call: Call, value: T) -> T {
        let tid = self.tid();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(tid)
            .or_default()
            .push(call);
        value
    }

    /// A blocking call: attempts `attempt` (one world step each: `None` = cannot complete
    /// yet, nothing recorded) until it completes, yielding between attempts. The attempt that
    /// completes records `call` with its outcome. A thread of a dead incarnation stops
    /// waiting: `Dead`.
    fn wait_step<T>(
        &self,
        call: Call,
        attempt: impl Fn(&mut World) -> Option<(Outcome, io::Result<T>)>,
    ) -> io::Result<T> {
        let actor = self.actor();
        let pending = self.take_pending();
        let mut pending = Some(pending);
        loop {
            let done = self.os.turn(actor, |w| {
                for call in pending.take().unwrap_or_default() {
                    w.record(actor, call, Outcome::Done);
                }
                if !w.alive(self.pid, self.incarnation) {
                    w.record(actor, call, Outcome::Dead);
                    return Some(Err(dead_error(self.pid)));
                }
                let Some((outcome, value)) = attempt(w) else {
                    w.retries += 1;
                    return None;
                };
                w.record(actor, call, outcome);
                Some(value)
            });
            if let Some(value) = done {
                return value;
            }
            R::yield_now();
        }
    }

    fn io_step<T>(
        &self,
        call: Call,
        f: impl FnOnce(&mut World) -> (Outcome, io::Result<T>),
    ) -> io::Result<T> {
        let pid = self.pid;
        self.step(call, || Err(dead_error(pid)), f)
    }

    // ---- harness events: each is one step, recorded like a call ----

    /// The test program saw its obtain return. Returns a [`Violation`] if the harness now
    /// counts two live writers (and no unpreventable fault has happened).
    pub fn note_obtained(&self, ok: bool) -> Option<Violation> {
        self.note_obtained_inner(ok, None)
    }

    /// Like `note_obtained(false)`, and keeps `message` (the obtain's error, e.g. SimpleFs's
    /// "held" error naming the holder) for [`SimOs::obtain_errors`]. Same step, no extra
    /// scheduling point.
    pub fn note_obtain_failed(&self, message: String) -> Option<Violation> {
        self.note_obtained_inner(false, Some(message))
    }

    fn note_obtained_inner(&self, ok: bool, message: Option<String>) -> Option<Violation> {
        let me = (self.pid, self.tid());
        let incarnation = self.incarnation;
        self.step(
            Call::Obtained { ok },
            || None,
            |w| {
                if ok {
                    w.writers.insert(me, Writer { incarnation });
                }
                if let Some(message) = message {
                    // `step` records this step right after `f`: its index is the log length.
                    let at = w.log.len();
                    w.obtain_errors.insert(at, message);
                }
                let live = w.live_writers();
                let violation = (live.len() > 1 && !w.unpreventable_fault).then(|| {
                    let mut trace = w.log.clone();
                    trace.push(Step {
                        actor: Actor::Thread {
                            pid: me.0,
                            tid: me.1,
                        },
                        call: Call::Obtained { ok },
                        outcome: Outcome::Done,
                    });
                    let names: Vec<String> =
                        live.iter().map(|(p, t)| format!("p{p}.t{t}")).collect();
                    Violation {
                        message: format!(
                            "at most one writer: {} hold the lock at once (harness count)",
                            names.join(" and ")
                        ),
                        trace,
                    }
                });
                (Outcome::Done, violation)
            },
        )
    }

    /// The test program saw `ensure_valid` return.
    pub fn note_validated(&self, ok: bool) {
        self.step(Call::Validated { ok }, || (), |_| (Outcome::Done, ()));
    }

    /// The test program writes (after a successful `ensure_valid`).
    pub fn note_write(&self) {
        self.step(Call::Write, || (), |_| (Outcome::Done, ()));
    }

    /// The test program's release (`close`) returned (`ok`: `Ok(())`).
    pub fn note_closed(&self, ok: bool) {
        self.step(Call::Closed { ok }, || (), |_| (Outcome::Done, ()));
    }

    /// The test program is about to release: it is no longer a writer.
    pub fn note_release(&self) {
        let me = (self.pid, self.tid());
        self.step(
            Call::Release,
            || (),
            |w| {
                w.writers.remove(&me);
                (Outcome::Done, ())
            },
        );
    }
}
