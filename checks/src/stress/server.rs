//! The verify server: Lucene's `LockVerifyServer` protocol, byte for byte, plus crash handling.
//!
//! Protocol (see [`lockwright::file::verifying`]): a client sends its id byte; once
//! [`ServerConfig::clients`] clients have registered, each gets the starting gun `43`; from
//! then on a client sends `1` right after it obtained the lock and `0` right before it releases
//! it, and the server echoes each byte once it has checked it. Clients that register after the
//! gun ("late joiners", e.g. replacements for killed clients) get the gun at once.
//!
//! The server keeps the set of connections that currently hold the lock. Holders are keyed by
//! connection, not by id, so a replacement that reuses a dead client's id is a different holder.
//! Violations (Lucene's messages): `id C got lock, but H already holds the lock`, `id C released
//! the lock, but H is the one holding the lock`.
//!
//! # Crashes
//!
//! A holder whose connection reaches EOF is taken to have crashed: the kernel released its OS
//! lock when it died. Its death releases the OS lock and closes the socket in the same exit,
//! in no fixed order, so the next client's `1` can be processed before the dead holder's EOF.
//! A conflict is therefore not reported at once if it can be explained by a death:
//!
//! - with `kills_announced` (the orchestrator tells the server, BEFORE each SIGKILL, which id it
//!   kills), a conflict between two connections neither of which was announced is a violation
//!   immediately: both were alive, so both held the lock at that moment;
//! - otherwise the server waits up to [`ServerConfig::crash_grace`] for the connections that may
//!   have died to reach EOF. If the old holders all die, the newcomer is granted ("crash
//!   handoff"); if the newcomer itself dies, its `1` is a stale report from a dead process and
//!   is dropped ("stale obtain"); if the grace runs out first, it is a violation. Messages from
//!   a dying holder prove nothing: they may have been queued before it died.
//!
//! What this cannot detect is written up in `docs/stress.md`.

use super::{OBTAINED, RELEASING, START};
use serde::Serialize;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What the server does on a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnViolation {
    /// Lucene's behaviour: close every connection (each client fails with "lock server died")
    /// and stop.
    Stop,
    /// Count it, echo anyway and keep going (for `stress-run`, which must count violations).
    Count,
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The starting gun fires once this many clients have sent their id.
    pub clients: usize,
    pub on_violation: OnViolation,
    /// How long a conflict may wait for a possibly dead holder's EOF before it is a violation.
    pub crash_grace: Duration,
    /// The only deaths are the ones announced through [`ServerHandle::announce_kill`].
    pub kills_announced: bool,
    /// Print Lucene's progress lines ("Listening on ...", "All clients started, fire gun...",
    /// "Server terminated.") on stdout and violations on stderr.
    pub log: bool,
}

/// Counters, as JSON in `stress-run --json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ServerStats {
    /// Connections that sent their id.
    pub connections: u64,
    /// Connections that registered after the starting gun.
    pub late_joins: u64,
    /// `1` messages accepted (in `Count` mode this includes the violating ones).
    pub acquisitions: u64,
    /// `0` messages accepted.
    pub releases: u64,
    /// Holders whose connection reached EOF while they held the lock.
    pub crash_releases: u64,
    /// Conflicts resolved because the previous holder turned out to be dead.
    pub crash_handoffs: u64,
    /// `1` messages dropped because their sender turned out to be dead.
    pub stale_obtains: u64,
    pub violations: u64,
    /// Bytes other than 0 and 1 after the gun.
    pub protocol_errors: u64,
    /// Time from the starting gun to the last message, in seconds.
    pub active_secs: f64,
}

/// What [`VerifyServer::run`] returns.
#[derive(Clone, Debug, Serialize)]
pub struct ServerReport {
    pub stats: ServerStats,
    /// The first violation messages (at most [`MAX_MESSAGES`]).
    pub violation_messages: Vec<String>,
    /// The run hit its deadline instead of ending by itself.
    pub timed_out: bool,
}

/// Two believed holders at once, as one violating obtain saw them (for `zk-stress-run`, which
/// checks each against the sessions the server still has).
#[derive(Clone, Debug)]
pub struct Overlap {
    /// When the obtain was judged.
    pub at: Instant,
    /// The client whose obtain overlapped.
    pub newcomer: u8,
    /// The clients that held the lock then.
    pub holders: Vec<u8>,
}

/// How many violation messages a report keeps.
pub const MAX_MESSAGES: usize = 20;

type ConnKey = u64;

struct Conn {
    id: u8,
    alive: bool,
    kill_announced: bool,
    stream: TcpStream,
}

#[derive(Default)]
struct State {
    conns: HashMap<ConnKey, Conn>,
    next_key: ConnKey,
    /// One entry per accepted `1` not yet matched by a `0` (a connection may appear twice).
    holders: Vec<ConnKey>,
    /// Accepted connections that have not sent their id yet.
    unregistered: usize,
    gun_at: Option<Instant>,
    last_message_at: Option<Instant>,
    stopped: bool,
    stats: ServerStats,
    messages: Vec<String>,
    /// Overlapping obtains not yet taken by [`ServerHandle::take_overlaps`].
    overlaps: Vec<Overlap>,
}

struct Shared {
    config: ServerConfig,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A bound verify server; [`VerifyServer::run`] serves it.
pub struct VerifyServer {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Lets the process that runs the server (the orchestrator) look inside and steer it.
#[derive(Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

impl ServerHandle {
    /// Records that client `id` is about to be killed. Call BEFORE sending the signal: a
    /// conflict with a connection whose kill was not announced is then a certain violation.
    pub fn announce_kill(&self, id: u8) {
        let mut st = self.shared.lock();
        for c in st.conns.values_mut().filter(|c| c.alive && c.id == id) {
            c.kill_announced = true;
        }
    }

    /// The ids of the connections that hold the lock right now.
    pub fn holder_ids(&self) -> Vec<u8> {
        let st = self.shared.lock();
        st.holders
            .iter()
            .filter_map(|k| st.conns.get(k).map(|c| c.id))
            .collect()
    }

    /// The overlapping obtains since the last call (all of them, unlike the messages).
    pub fn take_overlaps(&self) -> Vec<Overlap> {
        std::mem::take(&mut self.shared.lock().overlaps)
    }

    /// Whether the starting gun has fired.
    pub fn started(&self) -> bool {
        self.shared.lock().gun_at.is_some()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ServerStats {
        let st = self.shared.lock();
        let mut s = st.stats.clone();
        s.active_secs = active_secs(&st);
        s
    }

    /// Asks [`VerifyServer::run`] to close every connection and return.
    pub fn shutdown(&self) {
        let mut st = self.shared.lock();
        stop(&mut st);
        self.shared.changed.notify_all();
    }
}

fn active_secs(st: &State) -> f64 {
    match (st.gun_at, st.last_message_at) {
        (Some(g), Some(l)) if l > g => (l - g).as_secs_f64(),
        _ => 0.0,
    }
}

fn stop(st: &mut State) {
    st.stopped = true;
    for c in st.conns.values() {
        let _ = c.stream.shutdown(Shutdown::Both);
    }
}

impl VerifyServer {
    /// Binds to `addr` (use port 0 for an ephemeral port, as Lucene does).
    ///
    /// # Errors
    /// Bind failures.
    pub fn bind(addr: SocketAddr, config: ServerConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            config,
            state: Mutex::default(),
            changed: Condvar::new(),
        });
        Ok(VerifyServer { listener, shared })
    }

    /// The address clients connect to.
    ///
    /// # Errors
    /// As `getsockname`.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Serves until [`ServerHandle::shutdown`], until `deadline`, after a violation in
    /// [`OnViolation::Stop`] mode, or — with `exit_when_idle`, Lucene's behaviour — once the gun
    /// has fired and every connection has closed.
    ///
    /// # Errors
    /// `accept` failures other than interruptions.
    pub fn run(self, deadline: Instant, exit_when_idle: bool) -> io::Result<ServerReport> {
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let mut timed_out = false;
        loop {
            {
                let mut st = self.shared.lock();
                let live = st.conns.values().filter(|c| c.alive).count() + st.unregistered;
                if st.stopped {
                    break;
                }
                if exit_when_idle && st.gun_at.is_some() && live == 0 {
                    stop(&mut st);
                    break;
                }
                if Instant::now() >= deadline {
                    timed_out = true;
                    stop(&mut st);
                    self.shared.changed.notify_all();
                    break;
                }
            }
            match self.listener.accept() {
                Ok((stream, _)) => {
                    // Counts as live until it registers or hangs up, so that an idle exit
                    // cannot race a late joiner.
                    self.shared.lock().unregistered += 1;
                    stream.set_nonblocking(false)?;
                    stream.set_nodelay(true)?;
                    let shared = Arc::clone(&self.shared);
                    threads.push(thread::spawn(move || serve(&shared, stream)));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(2));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.handle().shutdown();
                    return Err(e);
                }
            }
        }
        self.shared.changed.notify_all();
        for t in threads {
            let _ = t.join();
        }
        let st = self.shared.lock();
        let mut stats = st.stats.clone();
        stats.active_secs = active_secs(&st);
        if self.shared.config.log {
            println!("Server terminated.");
        }
        Ok(ServerReport {
            stats,
            violation_messages: st.messages.clone(),
            timed_out,
        })
    }
}

/// One connection, from id byte to EOF.
fn serve(shared: &Shared, mut stream: TcpStream) {
    let mut id = [0u8];
    let got_id = stream.read_exact(&mut id);
    shared.lock().unregistered -= 1;
    if got_id.is_err() {
        return; // closed before communication started (Lucene throws here; nothing to check)
    }
    let id = id[0];
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let key = {
        let mut st = shared.lock();
        if st.stopped {
            return;
        }
        let key = st.next_key;
        st.next_key += 1;
        st.conns.insert(
            key,
            Conn {
                id,
                alive: true,
                kill_announced: false,
                stream: clone,
            },
        );
        st.stats.connections += 1;
        if st.gun_at.is_some() {
            st.stats.late_joins += 1;
        } else if st.stats.connections >= shared.config.clients as u64 {
            st.gun_at = Some(Instant::now());
            if shared.config.log {
                println!("All clients started, fire gun...");
            }
            shared.changed.notify_all();
        }
        while st.gun_at.is_none() && !st.stopped {
            st = shared
                .changed
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
        }
        key
    };
    if !shared.lock().stopped && stream.write_all(&[START]).is_ok() {
        serve_messages(shared, &mut stream, key);
    }
    let mut st = shared.lock();
    let was_holder = st.holders.contains(&key);
    st.holders.retain(|k| *k != key);
    if was_holder && !st.stopped {
        st.stats.crash_releases += 1;
    }
    if let Some(c) = st.conns.get_mut(&key) {
        c.alive = false;
    }
    shared.changed.notify_all();
}

fn serve_messages(shared: &Shared, stream: &mut TcpStream, key: ConnKey) {
    let mut byte = [0u8];
    loop {
        match stream.read(&mut byte) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut st = shared.lock();
        if st.stopped {
            return;
        }
        st.last_message_at = Some(Instant::now());
        let (st, echo) = match byte[0] {
            OBTAINED => on_obtained(shared, st, stream, key),
            RELEASING => on_releasing(shared, st, key),
            other => {
                let mut st = st;
                st.stats.protocol_errors += 1;
                let id = st.conns.get(&key).map_or(0, |c| c.id);
                let msg = format!("Unrecognized command: {other} (from id {id})");
                report(shared, &mut st, msg);
                if shared.config.on_violation == OnViolation::Stop {
                    stop(&mut st);
                }
                return;
            }
        };
        // Echo while still holding the state lock, as Lucene does: the client must not go on
        // (and release or obtain again) before its message is accounted for.
        if !echo || st.stopped || stream.write_all(&byte).is_err() {
            return;
        }
        drop(st);
    }
}

fn report(shared: &Shared, st: &mut State, msg: String) {
    if shared.config.log {
        eprintln!("lockwright verify-server: {msg}");
    }
    if st.messages.len() < MAX_MESSAGES {
        st.messages.push(msg);
    }
}

fn violation<'a>(
    shared: &'a Shared,
    mut st: MutexGuard<'a, State>,
    msg: String,
) -> (MutexGuard<'a, State>, bool) {
    st.stats.violations += 1;
    report(shared, &mut st, format!("VIOLATION: {msg}"));
    match shared.config.on_violation {
        OnViolation::Stop => {
            stop(&mut st);
            shared.changed.notify_all();
            (st, false)
        }
        OnViolation::Count => (st, true),
    }
}

fn on_releasing<'a>(
    shared: &'a Shared,
    mut st: MutexGuard<'a, State>,
    key: ConnKey,
) -> (MutexGuard<'a, State>, bool) {
    if let Some(pos) = st.holders.iter().position(|k| *k == key) {
        st.holders.remove(pos);
        st.stats.releases += 1;
        shared.changed.notify_all();
        return (st, true);
    }
    let id = st.conns.get(&key).map_or(0, |c| c.id);
    let holder = st
        .holders
        .first()
        .and_then(|k| st.conns.get(k))
        .map_or(-1, |c| i32::from(c.id));
    let msg = format!("id {id} released the lock, but {holder} is the one holding the lock");
    violation(shared, st, msg)
}

/// Handles a `1`. Returns whether to echo (false: stop, or the sender is dead).
fn on_obtained<'a>(
    shared: &'a Shared,
    mut st: MutexGuard<'a, State>,
    stream: &mut TcpStream,
    key: ConnKey,
) -> (MutexGuard<'a, State>, bool) {
    let cfg = &shared.config;
    let my_id = st.conns.get(&key).map_or(0, |c| c.id);
    loop {
        if st.holders.contains(&key) {
            let msg = format!(
                "id {my_id} got lock, but {my_id} already holds the lock (same connection)"
            );
            return grant_after(violation(shared, st, msg), key);
        }
        let others: Vec<(ConnKey, bool)> = st
            .holders
            .iter()
            .filter_map(|k| st.conns.get(k).map(|c| (*k, c.kill_announced)))
            .collect();
        if others.is_empty() {
            st.holders.push(key);
            st.stats.acquisitions += 1;
            return (st, true);
        }
        let first_id = st.conns.get(&others[0].0).map_or(0, |c| c.id);
        let overlap = Overlap {
            at: Instant::now(),
            newcomer: my_id,
            holders: others
                .iter()
                .filter_map(|(k, _)| st.conns.get(k).map(|c| c.id))
                .collect(),
        };
        let conflict = format!("id {my_id} got lock, but {first_id} already holds the lock");
        let me_may_die =
            !cfg.kills_announced || st.conns.get(&key).is_some_and(|c| c.kill_announced);
        let others_may_die = !cfg.kills_announced || others.iter().all(|o| o.1);
        if !me_may_die && !others_may_die {
            // Nobody involved was being killed: both are alive and both hold the lock now.
            st.overlaps.push(overlap);
            return grant_after(violation(shared, st, conflict), key);
        }
        // Wait for the deaths that would explain the conflict. A message from an old holder
        // during the wait proves nothing: it may have been queued before the holder died (a
        // `0` sent, then SIGKILL before the server read it). Only EOF counts.
        let deadline = Instant::now() + cfg.crash_grace;
        loop {
            drop(st);
            let me_dead = me_may_die && peer_closed(stream, Duration::from_millis(1));
            if !me_may_die {
                thread::sleep(Duration::from_millis(1));
            }
            st = shared.lock();
            if st.stopped {
                return (st, false);
            }
            if me_dead {
                // Our own `1` is the stale report of a process that died holding the lock; the
                // others obtained after its death.
                st.stats.stale_obtains += 1;
                return (st, false);
            }
            let all_dead = others
                .iter()
                .all(|(k, _)| st.conns.get(k).is_none_or(|c| !c.alive));
            if others_may_die && all_dead {
                st.stats.crash_handoffs += 1;
                break; // re-evaluate: the dead have left `holders`, others may have come
            }
            if Instant::now() >= deadline {
                let msg = format!(
                    "{conflict} (still connected after the {:?} crash grace)",
                    cfg.crash_grace
                );
                st.overlaps.push(overlap);
                return grant_after(violation(shared, st, msg), key);
            }
        }
    }
}

/// In `Count` mode a violating obtain still makes the sender a holder (it does hold the lock).
fn grant_after<'a>(
    (mut st, echo): (MutexGuard<'a, State>, bool),
    key: ConnKey,
) -> (MutexGuard<'a, State>, bool) {
    if echo {
        st.holders.push(key);
        st.stats.acquisitions += 1;
    }
    (st, echo)
}

/// Whether the peer closed its end, waiting at most `wait`. Bytes already queued (a client
/// that does not wait for its echo) count as alive.
fn peer_closed(stream: &TcpStream, wait: Duration) -> bool {
    if stream.set_read_timeout(Some(wait)).is_err() {
        return false;
    }
    let mut buf = [0u8];
    let closed = match stream.peek(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
        ),
    };
    let _ = stream.set_read_timeout(None);
    closed
}

#[cfg(test)]
mod tests;
