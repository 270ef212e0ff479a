//! The fenced resource of `zk-stress-run`, and the ledger of everything written to it.
//!
//! A resource in the orchestrator process, reached over loopback TCP, that accepts a write only
//! if its fencing token is at least the highest token it accepted before (Kleppmann's check;
//! [`ResourceMode::Unchecked`] accepts everything, for the twin that proves the report has
//! teeth). Every write is logged with its client, session and token, accepted or not.
//!
//! Protocol: one line per request, one line per answer.
//!
//! ```text
//! HOLD <id> <pid> <seq> <token> <session>          after an acquire  -> OK [STOP]
//! WRITE <id> <pid> <seq> <n> <token> <session>     a fenced write    -> ACCEPT [STOP] | REJECT <highest> [STOP]
//! LOST <id> <pid> <seq> <token> <valid> <reason>   after a rejection: what ensure_valid said -> OK
//! RELEASED <id> <pid> <seq>                         after the release -> OK [STOP]
//! ERROR <id> <pid> <text...>                        a lock error the client went on after -> OK
//! INCR <id> <pid> <seq> <token> <outcome> <value>   a counter write: ok | rejected | unknown -> OK
//! STATS <id> <pid> <key=value...>                   the client's request counters at its end -> OK
//! CLAIM <id> <pid> <seq> <token>                    fenced-claim: claim the counter, read it -> OK <value> | REJECT <highest>
//! CWRITE <id> <pid> <seq> <token> <value>           fenced-claim: write the counter -> ACCEPT | REJECT <highest>
//! ```
//!
//! With `--resource fenced-claim` the counter lives here, fenced with claim-at-acquire: a
//! holder's `CLAIM` raises the counter's high-water mark to its token and reads the value in
//! one step; `CWRITE` stores a value; both are refused with a token below the highest claimed
//! or written. The ledger counts the writes it accepted itself (a killed client cannot leave
//! an increment unreported).
//!
//! `STOP` asks the client to end after its current hold. Tokens and sessions are decimal i64.
//!
//! A write is **stale** when its token is below the highest token of any write the resource
//! received before it (accepted or not), recomputed here from the log whatever the mode; a
//! stale write accepted is a write the fence let through after a newer holder had written. The
//! ledger also counts writes accepted after a newer grant was announced (`HOLD`) but before
//! that holder's first write: the window fencing cannot close (Kleppmann's scheme has it too),
//! reported, not failed.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::Serialize;

mod conn;
pub use conn::{LedgerConn, WriteOutcome};

/// The protected resource of a run: where the lost-update counter lives and whether the
/// ledger checks fencing tokens.
///
/// `fenced-claim` (the external resource with claim-at-acquire) is not here yet:
/// it needs `HighWaterMark::claim`, which that issue adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceMode {
    /// The counter is a znode written with `ZkGuard::guarded_write` (a `multi` whose first
    /// op checks the lock node); the ledger's token writes are fenced.
    Guarded,
    /// No counter; the ledger accepts a write only with a token >= the highest accepted.
    Checked,
    /// The counter znode written with a plain `multi` (no lock-node check), the ledger
    /// accepts everything: the twin that must lose increments under pauses.
    Unchecked,
    /// The counter lives in the resource, fenced with claim-at-acquire: the holder claims its
    /// token and reads in one request, then writes value + 1 with its token; a claim or a
    /// write below the highest token claimed or written is refused
    FencedClaim,
}

impl ResourceMode {
    /// Whether the lockwright clients run the lost-update counter.
    pub fn has_counter(self) -> bool {
        !matches!(self, ResourceMode::Checked)
    }

    /// Whether the counter lives in the resource (not in a znode).
    pub fn counter_in_resource(self) -> bool {
        matches!(self, ResourceMode::FencedClaim)
    }

    /// Whether the ledger checks tokens.
    pub fn fenced(self) -> bool {
        !matches!(self, ResourceMode::Unchecked)
    }

    /// The client's command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            ResourceMode::Guarded => "guarded",
            ResourceMode::Checked => "checked",
            ResourceMode::Unchecked => "unchecked",
            ResourceMode::FencedClaim => "fenced-claim",
        }
    }
}

/// A client's current hold, as it announced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HoldRecord {
    pub client: u8,
    pub pid: u32,
    pub seq: u64,
    pub token: i64,
    pub session: i64,
}

/// One write that was stale (kept for the report; the first few only).
#[derive(Clone, Debug, Serialize)]
pub struct StaleWrite {
    pub client: u8,
    pub pid: u32,
    pub seq: u64,
    pub n: u8,
    pub token: i64,
    pub session: i64,
    /// The highest token received before it.
    pub highest_before: i64,
    pub accepted: bool,
    /// Milliseconds since the ledger started.
    pub at_ms: u64,
}

/// What the ledger counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LedgerReport {
    pub holds: u64,
    /// Holds announced, by client id.
    pub holds_by_client: BTreeMap<u8, u64>,
    pub writes: u64,
    pub writes_accepted: u64,
    /// Fenced writes the resource refused (the writer had lost the lock).
    pub writes_rejected: u64,
    /// Writes whose token was below one the resource had already received.
    pub stale_writes: u64,
    /// Stale writes the resource accepted: MUST be 0.
    pub stale_writes_accepted: u64,
    /// Accepted writes whose token was below a grant announced before them (the newer holder
    /// had not written yet): the window fencing leaves open. Not a failure.
    pub accepted_after_newer_grant: u64,
    /// What `ensure_valid` said after each rejection, by reason.
    pub lost_reasons: BTreeMap<String, u64>,
    /// Rejections after which `ensure_valid` still said the lock was held: MUST be 0 (the
    /// recipe would believe in a lock a newer holder has already written under).
    pub rejected_while_valid: u64,
    /// Lock errors the clients reported and went on after (acquire timeouts, ...).
    pub client_errors: u64,
    pub client_error_samples: Vec<String>,
    pub stale_samples: Vec<StaleWrite>,
    /// Counter writes the resource acknowledged (`guarded_write` or the plain `multi` said OK).
    pub increments_acked: u64,
    /// Counter writes refused (the guarded write's lock check failed: nothing written).
    pub increments_rejected: u64,
    /// Counter writes whose reply was lost: applied or not.
    pub increments_unknown: u64,
    /// Counter reads or writes that failed otherwise (the critical section was abandoned).
    pub counter_errors: u64,
    /// `fenced-claim`: the counter's value at the end.
    pub resource_counter: Option<u64>,
    /// Request counters the clients reported when they ended (killed clients report none).
    pub client_stats: BTreeMap<String, u64>,
    /// Clients that reported their counters.
    pub clients_reporting_stats: u64,
}

/// Every hold announced (for the transaction-log check) and when each lock error came.
#[derive(Clone, Debug, Default)]
pub struct LedgerHistory {
    pub holds: Vec<HoldRecord>,
    /// `(pid, hold number)` of every counter write a client reported, whatever its outcome.
    pub increments_reported: std::collections::HashSet<(u32, u64)>,
    /// `(when, client id, text)`.
    pub errors: Vec<(Instant, u8, String)>,
}

const SAMPLES: usize = 20;

struct State {
    mode: ResourceMode,
    start: Instant,
    highest_accepted: Option<i64>,
    highest_received: Option<i64>,
    highest_granted: Option<i64>,
    /// `fenced-claim`: the counter and the highest token claimed or written at it.
    counter: u64,
    counter_highest: Option<i64>,
    /// Each client id's last few holds, with when they were announced.
    holds: HashMap<u8, VecDeque<(Instant, HoldRecord)>>,
    report: LedgerReport,
    history: LedgerHistory,
}

struct Shared {
    state: Mutex<State>,
    stopping: AtomicBool,
    closed: AtomicBool,
    conns: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The running resource; [`Ledger::finish`] stops it and returns the report.
pub struct Ledger {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Ledger {
    /// Listens on a free loopback port.
    ///
    /// # Errors
    /// Bind failures.
    pub fn start(mode: ResourceMode) -> io::Result<Ledger> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                mode,
                start: Instant::now(),
                highest_accepted: None,
                highest_received: None,
                highest_granted: None,
                counter: 0,
                counter_highest: None,
                holds: HashMap::new(),
                report: LedgerReport::default(),
                history: LedgerHistory::default(),
            }),
            stopping: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            conns: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        let acceptor = thread::Builder::new()
            .name("zk-ledger".to_string())
            .spawn(move || accept_loop(&listener, &s))?;
        Ok(Ledger {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The last hold client `id` announced before `at`.
    pub fn hold_before(&self, id: u8, at: Instant) -> Option<HoldRecord> {
        let st = self.shared.lock();
        st.holds
            .get(&id)?
            .iter()
            .rev()
            .find(|(t, _)| *t <= at)
            .map(|(_, h)| *h)
    }

    /// A snapshot of the counters.
    pub fn report(&self) -> LedgerReport {
        self.shared.lock().report.clone()
    }

    /// Every hold announced and every lock error, so far.
    pub fn history(&self) -> LedgerHistory {
        self.shared.lock().history.clone()
    }

    /// From now on every answer asks the client to stop after its current hold.
    pub fn ask_to_stop(&self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
    }

    /// Closes every connection and returns the final report.
    pub fn finish(mut self) -> LedgerReport {
        self.close();
        self.report()
    }

    fn close(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        for c in self
            .shared
            .conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        self.close();
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.closed.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                if let Ok(c) = stream.try_clone() {
                    shared
                        .conns
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(c);
                }
                let s = Arc::clone(shared);
                let _ = thread::Builder::new()
                    .name("zk-ledger-conn".to_string())
                    .spawn(move || serve(stream, &s));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    for line in BufReader::new(stream).lines().map_while(Result::ok) {
        let answer = handle(shared, &line);
        if out.write_all(answer.as_bytes()).is_err() {
            break;
        }
    }
}

fn num<T: std::str::FromStr>(w: Option<&str>) -> Option<T> {
    w.and_then(|v| v.parse().ok())
}

fn handle(shared: &Shared, line: &str) -> String {
    let stop = if shared.stopping.load(Ordering::SeqCst) {
        " STOP"
    } else {
        ""
    };
    let mut w = line.split_whitespace();
    let verb = w.next().unwrap_or("");
    let mut st = shared.lock();
    let at_ms = u64::try_from(st.start.elapsed().as_millis()).unwrap_or(u64::MAX);
    match verb {
        "HOLD" => {
            let (Some(client), Some(pid), Some(seq), Some(token), Some(session)) = (
                num(w.next()),
                num(w.next()),
                num(w.next()),
                num(w.next()),
                num(w.next()),
            ) else {
                return format!("ERR bad HOLD: {line}\n");
            };
            st.report.holds += 1;
            *st.report.holds_by_client.entry(client).or_insert(0) += 1;
            st.highest_granted = st.highest_granted.max(Some(token));
            st.history.holds.push(HoldRecord {
                client,
                pid,
                seq,
                token,
                session,
            });
            let recent = st.holds.entry(client).or_default();
            if recent.len() == 8 {
                recent.pop_front();
            }
            recent.push_back((
                Instant::now(),
                HoldRecord {
                    client,
                    pid,
                    seq,
                    token,
                    session,
                },
            ));
            format!("OK{stop}\n")
        }
        "WRITE" => {
            let (Some(client), Some(pid), Some(seq), Some(n), Some(token), Some(session)) = (
                num(w.next()),
                num(w.next()),
                num(w.next()),
                num::<u8>(w.next()),
                num::<i64>(w.next()),
                num(w.next()),
            ) else {
                return format!("ERR bad WRITE: {line}\n");
            };
            let highest_before = st.highest_received;
            let stale = highest_before.is_some_and(|h| token < h);
            let accepted = !st.mode.fenced() || st.highest_accepted.is_none_or(|h| token >= h);
            st.highest_received = st.highest_received.max(Some(token));
            let r = &mut st.report;
            r.writes += 1;
            if stale {
                r.stale_writes += 1;
                if accepted {
                    r.stale_writes_accepted += 1;
                }
                if r.stale_samples.len() < SAMPLES && (accepted || r.stale_samples.len() < 5) {
                    r.stale_samples.push(StaleWrite {
                        client,
                        pid,
                        seq,
                        n,
                        token,
                        session,
                        highest_before: highest_before.unwrap_or(0),
                        accepted,
                        at_ms,
                    });
                }
            }
            if accepted {
                st.report.writes_accepted += 1;
                if !stale && st.highest_granted.is_some_and(|g| token < g) {
                    st.report.accepted_after_newer_grant += 1;
                }
                st.highest_accepted = st.highest_accepted.max(Some(token));
                format!("ACCEPT{stop}\n")
            } else {
                st.report.writes_rejected += 1;
                format!("REJECT {}{stop}\n", st.highest_accepted.unwrap_or(0))
            }
        }
        "LOST" => {
            let (_, _, _, _, Some(valid)) =
                (w.next(), w.next(), w.next(), w.next(), num::<u8>(w.next()))
            else {
                return format!("ERR bad LOST: {line}\n");
            };
            let reason = w.next().unwrap_or("unknown").to_string();
            if valid != 0 {
                st.report.rejected_while_valid += 1;
            }
            *st.report.lost_reasons.entry(reason).or_insert(0) += 1;
            "OK\n".to_string()
        }
        "RELEASED" => format!("OK{stop}\n"),
        "INCR" => {
            let (_, pid, seq) = (w.next(), w.next(), w.next());
            if let (Some(Ok(pid)), Some(Ok(seq))) = (pid.map(str::parse), seq.map(str::parse)) {
                st.history.increments_reported.insert((pid, seq));
            }
            let outcome = w.nth(1).unwrap_or("");
            let r = &mut st.report;
            match outcome {
                "ok" => r.increments_acked += 1,
                "rejected" => r.increments_rejected += 1,
                "unknown" => r.increments_unknown += 1,
                "error" => r.counter_errors += 1,
                _ => return format!("ERR bad INCR: {line}\n"),
            }
            "OK\n".to_string()
        }
        "CLAIM" | "CWRITE" if st.mode.counter_in_resource() => {
            let (Some(_client), Some(pid), Some(seq), Some(token)) = (
                num::<u8>(w.next()),
                num::<u32>(w.next()),
                num::<u64>(w.next()),
                num::<i64>(w.next()),
            ) else {
                return format!("ERR bad {verb}: {line}\n");
            };
            if let Some(h) = st.counter_highest.filter(|h| token < *h) {
                st.report.increments_rejected += 1;
                st.history.increments_reported.insert((pid, seq));
                return format!("REJECT {h}\n");
            }
            st.counter_highest = Some(token);
            if verb == "CLAIM" {
                return format!("OK {}\n", st.counter);
            }
            let Some(value) = num::<u64>(w.next()) else {
                return format!("ERR bad CWRITE: {line}\n");
            };
            st.counter = value;
            st.report.resource_counter = Some(value);
            st.report.increments_acked += 1;
            st.history.increments_reported.insert((pid, seq));
            "ACCEPT\n".to_string()
        }
        "STATS" => {
            let _ = (w.next(), w.next());
            st.report.clients_reporting_stats += 1;
            for kv in w {
                if let Some((k, v)) = kv.split_once('=') {
                    if let Ok(v) = v.parse::<u64>() {
                        *st.report.client_stats.entry(k.to_string()).or_insert(0) += v;
                    }
                }
            }
            "OK\n".to_string()
        }
        "ERROR" => {
            let secs = st.start.elapsed().as_secs_f64();
            let client = num(w.next()).unwrap_or(u8::MAX);
            let text = line.splitn(4, ' ').nth(3).unwrap_or("").to_string();
            st.history.errors.push((Instant::now(), client, text));
            st.report.client_errors += 1;
            if st.report.client_error_samples.len() < SAMPLES {
                let text = line.strip_prefix("ERROR ").unwrap_or(line);
                st.report
                    .client_error_samples
                    .push(format!("{secs:.1}s {text}"));
            }
            "OK\n".to_string()
        }
        _ => format!("ERR unknown request: {line}\n"),
    }
}
