//! [`VerifyingLockFactory`]: reports every obtain and release to a lock verify server, so that an
//! outside observer can prove that no two processes ever held the same lock at once.
//!
//! Wire protocol (Lucene's `LockVerifyServer`/`VerifyingLockFactory`, identical in Lucene 4.10.4
//! and 9.x, so either side can be Lucene's):
//!
//! 1. the client connects over TCP and sends its id, one byte `0..=255`;
//! 2. once every expected client is connected the server sends the starting gun, byte
//!    [`START`] (43);
//! 3. right AFTER the inner lock was obtained the client sends [`OBTAINED`] (1), and right
//!    BEFORE the inner lock is released it sends [`RELEASING`] (0); each time it waits until the
//!    server echoes the same byte back.
//!
//! The order in step 3 is what makes the check sound: the interval the server sees for a
//! holder lies inside the interval in which that process really held the OS lock, so two
//! overlapping intervals at the server mean two real holders. (The converse does not hold: an
//! overlap confined to the margins, between the inner obtain and the `1`, or between the `0`
//! and the inner release, is invisible to the server.)

use super::{Lock, LockError, LockFactory, LockHandle};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The starting gun: the server sends it once every expected client has connected.
pub const START: u8 = 43;
/// Sent by a client right after it obtained the lock.
pub const OBTAINED: u8 = 1;
/// Sent by a client right before it releases the lock.
pub const RELEASING: u8 = 0;

/// One client's connection to a verify server, after the handshake. Shared by every
/// [`VerifyingLockFactory`] of the process that reports under the same id (Lucene's stress
/// client builds a second factory on the same streams); exchanges are serialized so that two
/// locks of one process never read each other's echo.
///
/// Every blocking point is bounded by the timeout given to [`VerifierConnection::connect`]: a
/// server that stops answering makes an exchange fail with `TimedOut` instead of hanging the
/// client while it holds the lock. After any failed exchange the connection is closed (a late
/// echo would otherwise be read as the answer to the next byte) and every later exchange
/// fails at once.
#[derive(Debug)]
pub struct VerifierConnection {
    id: u8,
    peer: SocketAddr,
    timeout: Duration,
    /// `None` once an exchange failed.
    stream: Mutex<Option<TcpStream>>,
}

impl VerifierConnection {
    /// Connects to the server at `addr`, sends `id`, and waits for the starting gun.
    ///
    /// `timeout` bounds each step: the TCP connect, the wait for the gun (which comes once
    /// every client the server expects has connected, so leave room for the slowest one to
    /// start), and later every exchange (sending a byte and reading its echo). A server applies
    /// its own checks before echoing (the project's verify server may wait out a crash grace):
    /// leave room for that too.
    ///
    /// # Errors
    /// `InvalidInput` for a zero timeout; connection failures; `TimedOut` when a step took
    /// longer than `timeout`; `UnexpectedEof` if the server hung up before the gun;
    /// `InvalidData` if the first byte it sent is not [`START`].
    pub fn connect(addr: impl ToSocketAddrs, id: u8, timeout: Duration) -> io::Result<Self> {
        if timeout.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a verify-server connection needs a non-zero timeout",
            ));
        }
        let mut last = None;
        let mut stream = None;
        for a in addr.to_socket_addrs()? {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let mut stream = match (stream, last) {
            (Some(s), _) => s,
            (None, Some(e)) => return Err(e),
            (None, None) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "verify server address resolved to nothing",
                ))
            }
        };
        // One byte each way per step: without TCP_NODELAY Nagle + delayed ACK add ~40 ms.
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let peer = stream.peer_addr()?;
        stream.write_all(&[id])?;
        stream.flush()?;
        let mut gun = [0u8];
        stream.read_exact(&mut gun).map_err(|e| {
            let (kind, what) = timed_out(&e);
            io::Error::new(
                kind,
                format!("verify server {peer} {what} before the starting gun: {e}"),
            )
        })?;
        if gun[0] != START {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "protocol violation: verify server {peer} sent {} instead of the starting gun {START}",
                    gun[0]
                ),
            ));
        }
        Ok(VerifierConnection {
            id,
            peer,
            timeout,
            stream: Mutex::new(Some(stream)),
        })
    }

    /// The id this process reports under.
    pub fn id(&self) -> u8 {
        self.id
    }

    /// The server's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The bound on each exchange.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends `byte` and waits for the server's echo, at most the connection's timeout.
    ///
    /// # Errors
    /// `UnexpectedEof` if the server closed the connection (Lucene's server does that to every
    /// client as soon as it sees a violation: "lock server died because of locking error");
    /// `TimedOut` if the echo did not come in time; `InvalidData` if the echo differs;
    /// `NotConnected` after an earlier exchange failed; other I/O errors as they come.
    pub fn verify(&self, byte: u8) -> io::Result<()> {
        let mut guard = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(stream) = guard.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                format!(
                    "the connection to verify server {} was closed after an earlier exchange failed",
                    self.peer
                ),
            ));
        };
        let result = exchange(stream, byte, self.peer, self.timeout);
        if result.is_err() {
            // Out of step with the server for good: close, so it sees EOF rather than silence.
            *guard = None;
        }
        result
    }
}

/// `read_exact` with `SO_RCVTIMEO` reports a timeout as `WouldBlock` on Unix.
fn timed_out(e: &io::Error) -> (io::ErrorKind, &'static str) {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            (io::ErrorKind::TimedOut, "did not answer in time")
        }
        io::ErrorKind::UnexpectedEof => (io::ErrorKind::UnexpectedEof, "hung up"),
        kind => (kind, "failed"),
    }
}

fn exchange(
    stream: &mut TcpStream,
    byte: u8,
    peer: SocketAddr,
    timeout: Duration,
) -> io::Result<()> {
    let sent = stream.write_all(&[byte]).and_then(|()| stream.flush());
    if let Err(e) = sent {
        let (kind, _) = timed_out(&e);
        return Err(io::Error::new(
            kind,
            format!("cannot send {byte} to verify server {peer}: {e}"),
        ));
    }
    let mut echo = [0u8];
    match stream.read_exact(&mut echo) {
        Ok(()) if echo[0] == byte => Ok(()),
        Ok(()) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("protocol violation: sent {byte} to verify server {peer}, it echoed {}", echo[0]),
        )),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "verify server {peer} closed the connection after we sent {byte}: it died or detected a locking error"
            ),
        )),
        Err(e) => match timed_out(&e) {
            (io::ErrorKind::TimedOut, _) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "verify server {peer} did not echo {byte} within {:.3}s",
                    timeout.as_secs_f64()
                ),
            )),
            _ => Err(e),
        },
    }
}

/// Wraps a [`LockFactory`] and reports each obtain and release to a verify server (Lucene's
/// `VerifyingLockFactory`).
pub struct VerifyingLockFactory {
    inner: Box<dyn LockFactory>,
    conn: Arc<VerifierConnection>,
}

impl VerifyingLockFactory {
    /// Connects to the verify server at `addr` as client `id`, waits for the starting gun,
    /// and wraps `inner`. `timeout` bounds every exchange; see [`VerifierConnection::connect`].
    ///
    /// # Errors
    /// See [`VerifierConnection::connect`].
    pub fn connect(
        inner: impl LockFactory + 'static,
        addr: impl ToSocketAddrs,
        id: u8,
        timeout: Duration,
    ) -> io::Result<Self> {
        let conn = VerifierConnection::connect(addr, id, timeout)?;
        Ok(Self::with_connection(Box::new(inner), Arc::new(conn)))
    }

    /// Wraps `inner` around an existing connection (Lucene's stress client does this to check
    /// that a *fresh* factory instance in the same process cannot obtain the lock either).
    pub fn with_connection(inner: Box<dyn LockFactory>, conn: Arc<VerifierConnection>) -> Self {
        VerifyingLockFactory { inner, conn }
    }

    /// The connection this factory reports on.
    pub fn connection(&self) -> &Arc<VerifierConnection> {
        &self.conn
    }

    /// Reports [`OBTAINED`] for a lock the inner factory just obtained.
    fn report(&self, lock: Lock) -> Result<Lock, LockError> {
        let path = lock.path().to_path_buf();
        if let Err(source) = self.conn.verify(OBTAINED) {
            drop(lock);
            return Err(LockError::Io { path, source });
        }
        Ok(Lock::new(Box::new(VerifyingLock {
            inner: Some(lock),
            conn: Arc::clone(&self.conn),
            path,
        })))
    }
}

impl std::fmt::Debug for VerifyingLockFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingLockFactory")
            .field("conn", &self.conn)
            .finish_non_exhaustive()
    }
}

/// Every way to obtain goes through the inner factory's, then reports [`OBTAINED`] and waits
/// for the echo.
///
/// # Errors
/// The inner factory's error unchanged (so "held by another process" stays recognizable);
/// if the report fails, the inner lock is released again and the failure is returned as
/// [`LockError::Io`] with the lock's path.
impl LockFactory for VerifyingLockFactory {
    fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        self.report(self.inner.try_obtain(dir, name)?)
    }

    fn obtain_timeout(&self, dir: &Path, name: &str, timeout: Duration) -> Result<Lock, LockError> {
        self.report(self.inner.obtain_timeout(dir, name, timeout)?)
    }

    fn obtain_blocking(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
        self.report(self.inner.obtain_blocking(dir, name)?)
    }
}

/// A lock obtained through a [`VerifyingLockFactory`].
struct VerifyingLock {
    /// `None` once closed.
    inner: Option<Lock>,
    conn: Arc<VerifierConnection>,
    path: PathBuf,
}

impl LockHandle for VerifyingLock {
    fn ensure_valid(&self) -> Result<(), LockError> {
        match &self.inner {
            Some(lock) => lock.ensure_valid(),
            None => Err(LockError::AlreadyClosed {
                path: self.path.clone(),
            }),
        }
    }

    /// Reports [`RELEASING`] BEFORE releasing the inner lock (Lucene's order: the server must
    /// hear about the release while the lock is still held), then releases it. Idempotent.
    ///
    /// # Errors
    /// The report's failure as [`LockError::Io`] (the inner lock is released anyway), else the
    /// inner release's error.
    fn close(&mut self) -> Result<(), LockError> {
        let Some(lock) = self.inner.take() else {
            return Ok(());
        };
        let reported = self.conn.verify(RELEASING);
        let released = lock.close();
        reported.map_err(|source| LockError::Io {
            path: self.path.clone(),
            source,
        })?;
        released
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for VerifyingLock {
    fn drop(&mut self) {
        // Report the release, as an explicit close would: dropping the inner lock alone
        // would release it without telling the server.
        let _ = LockHandle::close(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;

    /// A lock that only records whether it is held.
    struct Flag(Arc<AtomicBool>, PathBuf);
    impl LockHandle for Flag {
        fn ensure_valid(&self) -> Result<(), LockError> {
            Ok(())
        }
        fn close(&mut self) -> Result<(), LockError> {
            self.0.store(false, Ordering::SeqCst);
            Ok(())
        }
        fn path(&self) -> &Path {
            &self.1
        }
    }
    struct FlagFactory(Arc<AtomicBool>);
    impl LockFactory for FlagFactory {
        fn try_obtain(&self, dir: &Path, name: &str) -> Result<Lock, LockError> {
            self.0.store(true, Ordering::SeqCst);
            Ok(Lock::new(Box::new(Flag(
                Arc::clone(&self.0),
                dir.join(name),
            ))))
        }
    }

    /// Lucene's order: `1` after the inner obtain, `0` before the inner release.
    #[test]
    fn reports_obtain_after_and_release_before_the_inner_lock() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let held = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&held);
        let server = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut b = [0u8];
            s.read_exact(&mut b).unwrap();
            assert_eq!(b[0], 9, "client id");
            s.write_all(&[START]).unwrap();
            let mut log = Vec::new();
            while s.read(&mut b).unwrap() == 1 {
                log.push((b[0], seen.load(Ordering::SeqCst)));
                s.write_all(&b).unwrap();
            }
            log
        });
        let f = VerifyingLockFactory::connect(
            FlagFactory(Arc::clone(&held)),
            addr,
            9,
            Duration::from_secs(5),
        )
        .unwrap();
        let lock = f.try_obtain(Path::new("/d"), "x.lock").unwrap();
        assert_eq!(lock.path(), Path::new("/d/x.lock"));
        let mut handle = lock.into_handle();
        handle.close().unwrap();
        handle.close().unwrap(); // idempotent: no second `0`
        assert!(matches!(
            handle.ensure_valid(),
            Err(LockError::AlreadyClosed { .. })
        ));
        drop(handle); // nor on drop
        drop(f);
        let log = server.join().unwrap();
        assert_eq!(log, [(OBTAINED, true), (RELEASING, true)]);
        assert!(!held.load(Ordering::SeqCst));
    }

    #[test]
    fn a_server_that_hangs_up_is_an_io_error_with_the_path_and_releases_the_lock() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut b = [0u8];
            s.read_exact(&mut b).unwrap();
            s.write_all(&[START]).unwrap();
            s.read_exact(&mut b).unwrap(); // the `1`, then hang up without an echo
        });
        let held = Arc::new(AtomicBool::new(false));
        let f = VerifyingLockFactory::connect(
            FlagFactory(Arc::clone(&held)),
            addr,
            1,
            Duration::from_secs(5),
        )
        .unwrap();
        let Err(err) = f.try_obtain(Path::new("/d"), "x.lock") else {
            panic!("must fail: the server hung up");
        };
        server.join().unwrap();
        match &err {
            LockError::Io { path, source } => {
                assert_eq!(path, Path::new("/d/x.lock"));
                assert_eq!(source.kind(), io::ErrorKind::UnexpectedEof, "{source}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            !held.load(Ordering::SeqCst),
            "the inner lock must be released again"
        );
    }

    /// A server that goes silent cannot hang a client that holds the lock: the exchange times
    /// out, the inner lock is released, and the connection is closed for good.
    #[test]
    fn a_silent_server_times_out_and_the_connection_is_closed() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let server = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut b = [0u8];
            s.read_exact(&mut b).unwrap();
            s.write_all(&[START]).unwrap();
            s.read_exact(&mut b).unwrap(); // the `1`: never echoed
            let _ = done_rx.recv_timeout(Duration::from_secs(10));
        });
        let held = Arc::new(AtomicBool::new(false));
        let f = VerifyingLockFactory::connect(
            FlagFactory(Arc::clone(&held)),
            addr,
            2,
            Duration::from_millis(200),
        )
        .unwrap();
        let Err(err) = f.try_obtain(Path::new("/d"), "x.lock") else {
            panic!("must fail: the server never echoes");
        };
        assert_eq!(err.io_kind(), Some(io::ErrorKind::TimedOut), "{err:?}");
        assert!(
            !held.load(Ordering::SeqCst),
            "the inner lock must be released"
        );
        let again = f.connection().verify(OBTAINED).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::NotConnected, "{again}");
        done_tx.send(()).unwrap();
        server.join().unwrap();
    }
}
