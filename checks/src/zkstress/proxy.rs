//! A loopback TCP proxy in front of ZooKeeper with one listening port per client slot, so the
//! orchestrator can break one client's connections without touching the others':
//!
//! - [`Proxy::cut`]: every open connection of the slot is reset on both sides (`SO_LINGER` 0,
//!   then shutdown): the client sees its connection drop and reconnects (through the proxy
//!   again); the server sees the socket go and keeps the session until its timeout.
//! - [`Proxy::stall`]: bytes stop flowing both ways, on the open connections and on any new
//!   one, until [`Proxy::resume`]. The connections stay open: the client's pings go unanswered
//!   (it reports the connection lost after its read timeout and tries again), and the server
//!   hears nothing from the session; a stall longer than the session timeout expires it.
//!
//! The upstream address never changes (a restarted server comes back on the same port); while
//! the server is down a new connection is accepted and closed at once.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

struct Link {
    id: u64,
    client: TcpStream,
    server: TcpStream,
}

struct Slot {
    addr: SocketAddr,
    stalled: AtomicBool,
    links: Mutex<Vec<Link>>,
    accepted: AtomicU64,
}

impl Slot {
    fn links(&self) -> std::sync::MutexGuard<'_, Vec<Link>> {
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The proxy; dropping it closes every listener and connection.
pub struct Proxy {
    upstream: SocketAddr,
    slots: Vec<Arc<Slot>>,
    stop: Arc<AtomicBool>,
    acceptors: Vec<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on `slots` fresh loopback ports, each forwarding to `upstream`.
    ///
    /// # Errors
    /// Bind failures.
    pub fn start(upstream: SocketAddr, slots: usize) -> io::Result<Proxy> {
        let stop = Arc::new(AtomicBool::new(false));
        let next_id = Arc::new(AtomicU64::new(0));
        let mut out = Vec::new();
        let mut acceptors = Vec::new();
        for i in 0..slots {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
            listener.set_nonblocking(true)?;
            let slot = Arc::new(Slot {
                addr: listener.local_addr()?,
                stalled: AtomicBool::new(false),
                links: Mutex::new(Vec::new()),
                accepted: AtomicU64::new(0),
            });
            let (s, st, ids) = (Arc::clone(&slot), Arc::clone(&stop), Arc::clone(&next_id));
            acceptors.push(
                thread::Builder::new()
                    .name(format!("zk-proxy-{i}"))
                    .spawn(move || accept_loop(&listener, upstream, &s, &st, &ids))?,
            );
            out.push(slot);
        }
        Ok(Proxy {
            upstream,
            slots: out,
            stop,
            acceptors,
        })
    }

    /// The address client `slot` connects to.
    pub fn addr(&self, slot: usize) -> SocketAddr {
        self.slots[slot].addr
    }

    /// The server behind the proxy.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// Connections accepted for `slot` so far.
    pub fn connections(&self, slot: usize) -> u64 {
        self.slots[slot].accepted.load(Ordering::Relaxed)
    }

    /// Resets every open connection of `slot`, both sides. Returns how many there were.
    pub fn cut(&self, slot: usize) -> usize {
        let links: Vec<Link> = std::mem::take(&mut *self.slots[slot].links());
        for l in &links {
            reset(&l.client);
            reset(&l.server);
        }
        links.len()
    }

    /// Stops forwarding on `slot` (open and new connections) until [`Proxy::resume`].
    pub fn stall(&self, slot: usize) {
        self.slots[slot].stalled.store(true, Ordering::SeqCst);
    }

    /// Forwards again on `slot` (the bytes held back are delivered).
    pub fn resume(&self, slot: usize) {
        self.slots[slot].stalled.store(false, Ordering::SeqCst);
    }

    /// Whether `slot` is stalled.
    pub fn is_stalled(&self, slot: usize) -> bool {
        self.slots[slot].stalled.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for i in 0..self.slots.len() {
            self.resume(i);
            self.cut(i);
        }
        for a in self.acceptors.drain(..) {
            let _ = a.join();
        }
    }
}

/// An abortive close: `SO_LINGER` {on, 0} makes the last close send RST instead of FIN; the
/// shutdown wakes the pump threads blocked on the socket, which then drop it.
fn reset(s: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a socket we own, with a pointer to a live `linger` of the size
    // passed.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            std::ptr::addr_of!(linger).cast(),
            libc::socklen_t::try_from(std::mem::size_of::<libc::linger>()).unwrap_or(8),
        );
    }
    let _ = s.shutdown(Shutdown::Both);
}

fn accept_loop(
    listener: &TcpListener,
    upstream: SocketAddr,
    slot: &Arc<Slot>,
    stop: &AtomicBool,
    ids: &AtomicU64,
) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                slot.accepted.fetch_add(1, Ordering::Relaxed);
                let _ = client.set_nonblocking(false);
                let Ok(server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(1))
                else {
                    reset(&client); // the server is down (restarting): the client retries
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let id = ids.fetch_add(1, Ordering::Relaxed);
                let clones = (
                    client.try_clone(),
                    server.try_clone(),
                    client.try_clone(),
                    server.try_clone(),
                );
                let (Ok(c1), Ok(s1), Ok(c2), Ok(s2)) = clones else {
                    reset(&client);
                    reset(&server);
                    continue;
                };
                slot.links().push(Link { id, client, server });
                for (from, to) in [(c1, s1), (s2, c2)] {
                    let s = Arc::clone(slot);
                    let spawned = thread::Builder::new()
                        .name("zk-proxy-pump".to_string())
                        .spawn(move || pump(from, to, &s, id));
                    if spawned.is_err() {
                        // Out of threads: drop the link rather than forward one way only.
                        let mut links = slot.links();
                        if let Some(p) = links.iter().position(|l| l.id == id) {
                            let l = links.remove(p);
                            reset(&l.client);
                            reset(&l.server);
                        }
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(2));
            }
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Copies `from` to `to` until either side closes; holds each chunk while the slot is stalled.
fn pump(mut from: TcpStream, mut to: TcpStream, slot: &Slot, id: u64) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        while slot.stalled.load(Ordering::SeqCst) {
            if !slot.links().iter().any(|l| l.id == id) {
                return; // cut while stalled
            }
            thread::sleep(Duration::from_millis(5));
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    // One side closed: close the other too (the peer pump then ends), and forget the link.
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
    let mut links = slot.links();
    if let Some(p) = links.iter().position(|l| l.id == id) {
        links.remove(p);
    }
}

/// The clients' proxies: one [`Proxy`] per server, each with a slot per client. Client
/// `slot`'s connect string lists its port on every proxy, starting at server `slot mod N`,
/// so the clients are spread over the servers and move on to the next when theirs goes.
/// Cutting or stalling a client acts on its slot of every proxy.
pub struct ClientLinks(Vec<Proxy>);

impl ClientLinks {
    /// A proxy with `slots` ports in front of each of `upstreams`.
    ///
    /// # Errors
    /// Bind failures.
    pub fn start(upstreams: &[SocketAddr], slots: usize) -> io::Result<ClientLinks> {
        upstreams
            .iter()
            .map(|&u| Proxy::start(u, slots))
            .collect::<io::Result<Vec<_>>>()
            .map(ClientLinks)
    }

    /// Client `slot`'s connect string (`host:port,...`).
    pub fn connect_string(&self, slot: usize) -> String {
        let n = self.0.len();
        (0..n)
            .map(|k| self.0[(slot + k) % n].addr(slot).to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Resets every open connection of client `slot`; how many there were.
    pub fn cut(&self, slot: usize) -> usize {
        self.0.iter().map(|p| p.cut(slot)).sum()
    }

    /// Stops forwarding client `slot`'s connections, to every server.
    pub fn stall(&self, slot: usize) {
        for p in &self.0 {
            p.stall(slot);
        }
    }

    /// Forwards client `slot`'s connections again.
    pub fn resume(&self, slot: usize) {
        for p in &self.0 {
            p.resume(slot);
        }
    }
}
