//! The one sync facade of the simulation: a mutex and threads, with identical signatures for
//! loom, shuttle and std.
//!
//! The simulated OS (`SimOs`) is generic over [`Runtime`], so the same code (and the
//! same real protocol code on top of it) runs under loom's exhaustive explorer, under
//! shuttle's randomized schedulers, and on plain threads. Every [`Runtime::with`] is one lock
//! acquisition, which both loom and shuttle treat as a scheduling point.
//!
//! A simulated blocking call waits by retrying: [`Runtime::with`], and if it cannot complete
//! yet, [`Runtime::yield_now`] (loom and shuttle then run another thread; a loom spin loop
//! needs the yield to stay finite). [`Runtime::current`] names the running thread, so one
//! simulated system shared by several threads can tell which thread calls it.

/// Primitives of one concurrency runtime. Sealed: implemented by [`Loom`], [`Shuttle`] and
/// [`Std`] only.
pub trait Runtime: sealed::Sealed + Send + Sync + 'static {
    /// The runtime's mutex.
    type Mutex<T: Send + 'static>: Send + Sync + 'static;
    /// The runtime's join handle.
    type JoinHandle<T: Send + 'static>;
    /// The runtime's thread id.
    type ThreadId: Copy + Eq + std::hash::Hash + std::fmt::Debug + Send + Sync + 'static;
    /// The runtime's name, for messages (`loom`, `shuttle`, `std`).
    const NAME: &'static str;

    /// A new mutex holding `value`.
    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T>;
    /// Runs `f` with the mutex held: one atomic step and one scheduling point. A poisoned
    /// mutex (a thread panicked while holding it) is entered anyway: the panic is reported by
    /// the runtime, and the data is only ever updated whole.
    fn with<T: Send + 'static, R>(m: &Self::Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R;
    /// Spawns a thread of the runtime.
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T>;
    /// Joins a thread; `Err` carries its panic.
    fn join<T: Send + 'static>(h: Self::JoinHandle<T>) -> std::thread::Result<T>;
    /// Lets other threads run (a waiting thread between two retries).
    fn yield_now();
    /// The id of the calling thread.
    fn current() -> Self::ThreadId;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Loom {}
    impl Sealed for super::Shuttle {}
    impl Sealed for super::Std {}
}

/// loom's primitives: use inside `loom::model::Builder::check`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Loom;

/// shuttle's primitives: use inside `shuttle::check_random`, `check_pct`, `replay`, ...
#[derive(Debug, Clone, Copy, Default)]
pub struct Shuttle;

/// std's primitives: plain threads (deterministic replays and sanity runs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Std;

impl Runtime for Loom {
    type Mutex<T: Send + 'static> = loom::sync::Mutex<T>;
    type JoinHandle<T: Send + 'static> = loom::thread::JoinHandle<T>;
    type ThreadId = loom::thread::ThreadId;
    const NAME: &'static str = "loom";

    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
        loom::sync::Mutex::new(value)
    }
    fn with<T: Send + 'static, R>(m: &Self::Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = m.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T> {
        loom::thread::spawn(f)
    }
    fn join<T: Send + 'static>(h: Self::JoinHandle<T>) -> std::thread::Result<T> {
        h.join()
    }
    fn yield_now() {
        loom::thread::yield_now();
    }
    fn current() -> Self::ThreadId {
        loom::thread::current().id()
    }
}

impl Runtime for Shuttle {
    type Mutex<T: Send + 'static> = shuttle::sync::Mutex<T>;
    type JoinHandle<T: Send + 'static> = shuttle::thread::JoinHandle<T>;
    type ThreadId = shuttle::thread::ThreadId;
    const NAME: &'static str = "shuttle";

    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
        shuttle::sync::Mutex::new(value)
    }
    fn with<T: Send + 'static, R>(m: &Self::Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = m.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T> {
        shuttle::thread::spawn(f)
    }
    fn join<T: Send + 'static>(h: Self::JoinHandle<T>) -> std::thread::Result<T> {
        h.join()
    }
    fn yield_now() {
        shuttle::thread::yield_now();
    }
    fn current() -> Self::ThreadId {
        shuttle::thread::current().id()
    }
}

impl Runtime for Std {
    type Mutex<T: Send + 'static> = std::sync::Mutex<T>;
    type JoinHandle<T: Send + 'static> = std::thread::JoinHandle<T>;
    type ThreadId = std::thread::ThreadId;
    const NAME: &'static str = "std";

    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T> {
        std::sync::Mutex::new(value)
    }
    fn with<T: Send + 'static, R>(m: &Self::Mutex<T>, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = m.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
    fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Self::JoinHandle<T> {
        std::thread::spawn(f)
    }
    fn join<T: Send + 'static>(h: Self::JoinHandle<T>) -> std::thread::Result<T> {
        h.join()
    }
    fn yield_now() {
        std::thread::yield_now();
    }
    fn current() -> Self::ThreadId {
        std::thread::current().id()
    }
}
