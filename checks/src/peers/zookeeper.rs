//! The one throwaway ZooKeeper server harness: Debian's ZooKeeper 3.8 (`apt-get install -y
//! --no-install-recommends zookeeper`) on a free loopback port, everything in a temporary
//! directory, stopped on drop.
//!
//! What it does (established on the CI image):
//! - `zoo.cfg` with a short `tickTime` (default 200 ms) and explicit `minSessionTimeout` /
//!   `maxSessionTimeout` (the negotiated timeout is the client's request clamped to them), no
//!   admin server, the four-letter words `ruok srvr stat cons mntr wchs dump crst srst`;
//!   `forceSync=no` by default (no fsync per transaction: throwaway data, ~30 % faster writes).
//! - the JVM with `-XX:-UsePerfData`, so nothing is written outside the directory, and log4j on
//!   the classpath so `WARN` lines reach `server.out`.
//! - ready when `ruok` answers `imok` (0.6–1.3 s on an idle machine).
//! - `-Dznode.container.checkIntervalMs` (default here 100 ms), so an empty container lock
//!   directory is reaped quickly (the parent re-creation that restarts sequence numbers).
//! - the process gets `PR_SET_PDEATHSIG = SIGKILL` from a spawner thread that lives as long as
//!   the test process, so a killed test run never leaves a server behind.
//!
//! Restarting a server does NOT expire sessions (clients reconnect to the same session); to
//! expire one, use [`lockwright::zk::ZkClient::kill_session`] or [`ZkServer::pause`] longer than
//! 1.4× the session timeout.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// Debian's ZooKeeper server jar.
pub const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// What to install when it is missing.
pub const INSTALL_ZOOKEEPER: &str = "apt-get install -y --no-install-recommends zookeeper";

/// How to run the server.
#[derive(Clone, Debug)]
pub struct ZkServerConfig {
    /// `tickTime` in ms.
    pub tick_ms: u32,
    /// `minSessionTimeout` in ms (ZooKeeper's default: 2 ticks).
    pub min_session_ms: u32,
    /// `maxSessionTimeout` in ms (ZooKeeper's default: 20 ticks).
    pub max_session_ms: u32,
    /// `forceSync` (fsync each transaction log write).
    pub force_sync: bool,
    /// `znode.container.checkIntervalMs`; `None` = ZooKeeper's 60 s.
    pub container_check_ms: Option<u32>,
    /// C1-only JIT: starts faster, runs slower (tests: yes; benchmarks: no).
    pub quick_jvm: bool,
    /// How long to wait for `imok`.
    pub start_timeout: Duration,
}

impl Default for ZkServerConfig {
    fn default() -> Self {
        ZkServerConfig {
            tick_ms: 200,
            min_session_ms: 400,
            max_session_ms: 10_000,
            force_sync: false,
            container_check_ms: Some(100),
            quick_jvm: true,
            start_timeout: Duration::from_secs(60),
        }
    }
}

/// A running throwaway server. Dropping it kills the server and removes its directory.
pub struct ZkServer {
    port: u16,
    child: Mutex<Child>,
    dir: tempfile::TempDir,
    config: ZkServerConfig,
}

impl std::fmt::Debug for ZkServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkServer")
            .field("port", &self.port)
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

/// Checks that the server can be run here.
///
/// # Errors
/// Which package to install.
pub fn check_installed() -> anyhow::Result<()> {
    if !Path::new(ZOOKEEPER_JAR).is_file() {
        bail!(
            "{ZOOKEEPER_JAR} is missing: install Debian's ZooKeeper 3.8 ({INSTALL_ZOOKEEPER}); \
             the ZooKeeper tests and benchmarks run a real server"
        );
    }
    let java = Command::new("java").arg("-version").output();
    if !java.is_ok_and(|o| o.status.success()) {
        bail!("`java` is missing: the zookeeper package pulls in a JRE ({INSTALL_ZOOKEEPER})");
    }
    Ok(())
}

impl ZkServer {
    /// Starts a server with the default configuration.
    ///
    /// # Errors
    /// Missing packages (named), or a server that did not come up (with its output).
    pub fn start() -> anyhow::Result<ZkServer> {
        ZkServer::start_with(ZkServerConfig::default())
    }

    /// Starts a server; retries twice on another port if the chosen one was taken meanwhile.
    ///
    /// # Errors
    /// As [`ZkServer::start`].
    pub fn start_with(config: ZkServerConfig) -> anyhow::Result<ZkServer> {
        check_installed()?;
        let mut last = None;
        for _ in 0..3 {
            match ZkServer::try_start(config.clone()) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("tried"))
    }

    /// The server shared by the tests of one test binary: started by the first caller, stopped
    /// when the last holder drops it (a later caller starts a fresh one).
    ///
    /// # Panics
    /// If the server cannot start (the message names the missing package).
    pub fn shared() -> Arc<ZkServer> {
        static SHARED: Mutex<Weak<ZkServer>> = Mutex::new(Weak::new());
        let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slot.upgrade() {
            return s;
        }
        let s = Arc::new(ZkServer::start().unwrap_or_else(|e| panic!("{e:#}")));
        *slot = Arc::downgrade(&s);
        s
    }

    /// Starts a server whose data directory `prepare` fills first (it gets the empty `data/`
    /// directory the server's `dataDir` names): a snapshot written there with ZooKeeper's own
    /// classes is what the server loads, so a test can begin from a state that would take
    /// billions of requests to reach (a parent's sequence counter near its top).
    ///
    /// # Errors
    /// As [`ZkServer::start`], or what `prepare` returns.
    pub fn start_prepared(
        config: ZkServerConfig,
        prepare: impl Fn(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<ZkServer> {
        check_installed()?;
        let mut last = None;
        for _ in 0..3 {
            match ZkServer::try_start_prepared(config.clone(), &prepare) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("tried"))
    }

    fn try_start(config: ZkServerConfig) -> anyhow::Result<ZkServer> {
        ZkServer::try_start_prepared(config, &|_| Ok(()))
    }

    fn try_start_prepared(
        config: ZkServerConfig,
        prepare: &dyn Fn(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<ZkServer> {
        let dir = tempfile::Builder::new()
            .prefix("lockwright-zk-")
            .tempdir()
            .context("cannot make the server's temporary directory")?;
        let port = free_port()?;
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data)?;
        prepare(&data).context("cannot prepare the server's data directory")?;
        let mut cfg = format!(
            "tickTime={}\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
             minSessionTimeout={}\nmaxSessionTimeout={}\nadmin.enableServer=false\n\
             maxClientCnxns=0\n4lw.commands.whitelist=ruok,srvr,stat,cons,mntr,wchs,dump,crst,srst\n",
            config.tick_ms,
            data.display(),
            config.min_session_ms,
            config.max_session_ms
        );
        if !config.force_sync {
            cfg.push_str("forceSync=no\n");
        }
        let cfg_path = dir.path().join("zoo.cfg");
        std::fs::write(&cfg_path, cfg)?;
        let child = spawn_server(dir.path(), &config)?;
        let server = ZkServer {
            port,
            child: Mutex::new(child),
            dir,
            config,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&self) -> anyhow::Result<()> {
        let end = Instant::now() + self.config.start_timeout;
        loop {
            if let Ok(r) = self.four_letter("ruok") {
                if r == "imok" {
                    return Ok(());
                }
            }
            let exited = self
                .child
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .try_wait()?;
            if let Some(status) = exited {
                bail!(
                    "ZooKeeper exited ({status}) before answering imok on port {}:\n{}",
                    self.port,
                    self.output()
                );
            }
            if Instant::now() >= end {
                bail!(
                    "ZooKeeper did not answer imok on port {} within {:?}:\n{}",
                    self.port,
                    self.config.start_timeout,
                    self.output()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's directory (zoo.cfg, data/, server.out).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &ZkServerConfig {
        &self.config
    }

    /// What the server logged (WARN and above).
    pub fn output(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.out")).unwrap_or_default()
    }

    /// Sends a four-letter word (`ruok`, `srvr`, `mntr`, `cons`, `wchs`, ...) and returns the
    /// answer.
    ///
    /// # Errors
    /// Connection errors.
    pub fn four_letter(&self, word: &str) -> io::Result<String> {
        four_letter_word(
            SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
            word,
            Duration::from_secs(5),
        )
    }

    /// Packets the server has received (`srvr`'s `Received:`; each probe adds one).
    ///
    /// # Errors
    /// Connection errors, or an answer without the counter.
    pub fn received_packets(&self) -> anyhow::Result<u64> {
        let srvr = self.four_letter("srvr")?;
        srvr.lines()
            .find_map(|l| l.strip_prefix("Received: "))
            .and_then(|n| n.trim().parse().ok())
            .with_context(|| format!("no 'Received:' in srvr's answer: {srvr:?}"))
    }

    /// Freezes the server (SIGSTOP): clients see their connection go silent, then declare
    /// their sessions expired after 1.4× the session timeout.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// Thaws a paused server (SIGCONT).
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, sig: i32) {
        let child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) on our own child's pid; no memory is involved.
            unsafe {
                libc::kill(pid, sig);
            }
        }
    }

    /// Stops the server with SIGKILL and starts it again on the same port and data directory
    /// (a crash and restart: `forceSync=no` only skips the fsync, the log is written before each
    /// reply, so nothing acknowledged is lost). Returns once the new process answers `imok`.
    /// Sessions survive: the server reloads them and gives each a fresh timeout.
    ///
    /// # Errors
    /// A server that does not come back (with its output).
    pub fn restart(&self) -> anyhow::Result<()> {
        {
            let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
            let _ = child.kill();
            let _ = child.wait();
            *child = spawn_server(self.dir.path(), &self.config)?;
        }
        self.wait_ready()
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap_or_else(|p| p.into_inner()).id()
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|p| p.into_inner());
        // A throwaway: no graceful shutdown needed (SIGTERM takes ~2 s and buys nothing).
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Starts a standalone server (`ZooKeeperServerMain`) on `dir/zoo.cfg`.
fn spawn_server(dir: &Path, config: &ZkServerConfig) -> anyhow::Result<Child> {
    spawn_java(
        dir,
        config,
        "org.apache.zookeeper.server.ZooKeeperServerMain",
    )
}

/// Starts `java` running `main_class` on `dir/zoo.cfg` (a standalone server, or an ensemble
/// member: `org.apache.zookeeper.server.quorum.QuorumPeerMain`), its output appended to
/// `dir/server.out`.
///
/// # Errors
/// `java` cannot be started, or `dir` is not writable.
pub fn spawn_java(dir: &Path, config: &ZkServerConfig, main_class: &str) -> anyhow::Result<Child> {
    let cfg_path = dir.join("zoo.cfg");
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.out"))?;
    let mut classpath = String::new();
    if Path::new("/etc/zookeeper/conf").is_dir() {
        classpath.push_str("/etc/zookeeper/conf:");
    }
    classpath.push_str(ZOOKEEPER_JAR);
    for jar in [
        "/usr/share/java/slf4j-log4j12.jar",
        "/usr/share/java/log4j-1.2.jar",
    ] {
        if Path::new(jar).is_file() {
            classpath.push(':');
            classpath.push_str(jar);
        }
    }
    let mut cmd = Command::new("java");
    cmd.args([
        "-Xms32m",
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:-UsePerfData",
    ]);
    if config.quick_jvm {
        cmd.arg("-XX:TieredStopAtLevel=1");
    }
    if let Some(ms) = config.container_check_ms {
        cmd.arg(format!("-Dznode.container.checkIntervalMs={ms}"));
    }
    cmd.arg("-cp")
        .arg(&classpath)
        .arg(format!("-Dzookeeper.log.dir={}", dir.display()))
        .arg("-Dzookeeper.root.logger=WARN,CONSOLE")
        .arg("-Dzookeeper.jmx.log4j.disable=true")
        .arg(main_class)
        .arg(&cfg_path)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    spawn_orphan_proof(cmd).context("cannot start `java` for ZooKeeper")
}

/// Sends the four-letter word `word` (`ruok`, `srvr`, `dump`, ...) to the server at `addr`
/// and returns its answer; the connection times out after 1 s, the answer after `read`.
///
/// # Errors
/// Connection errors and timeouts.
pub fn four_letter_word(addr: SocketAddr, word: &str, read: Duration) -> io::Result<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    s.set_read_timeout(Some(read))?;
    s.write_all(word.as_bytes())?;
    s.shutdown(std::net::Shutdown::Write)?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

/// A loopback port free now, for a server to bind next — and to bind AGAIN after it is killed
/// and restarted (the stress runs' `restart` and `leader-kill` faults).
///
/// The port is taken below the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`,
/// here 32768–60999), from the 12,000 ports under it, probing each by binding it. A port the
/// kernel hands out itself (`bind(0)`) lies inside that range, where every outgoing connection
/// also takes its local port: while a killed server is down, a client's or a follower's next
/// connection can take the server's old port, and the restarted server then dies with "Address
/// already in use" (seen once in a CI rehearsal: an ensemble member's election port). Below the
/// range only explicit binds like this one take ports. Successive calls in one process walk the
/// range from a point that depends on the process id, so concurrent tests do not probe the same
/// ports. Falls back to `bind(0)` when the range below is unusable.
///
/// # Errors
/// Loopback cannot be bound.
pub fn free_port() -> anyhow::Result<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32768);
    const SPAN: u32 = 12_000;
    if low > SPAN + 1024 {
        let start = low - SPAN;
        let first = std::process::id().wrapping_mul(7919) % SPAN;
        for _ in 0..SPAN {
            let step = NEXT.fetch_add(1, Ordering::Relaxed);
            let port = start + (first + step) % SPAN;
            let port = u16::try_from(port).expect("below the ephemeral range");
            if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
                return Ok(port);
            }
        }
    }
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("cannot bind loopback")?;
    Ok(l.local_addr()?.port())
}

type SpawnRequest = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns `cmd` with `PR_SET_PDEATHSIG = SIGKILL`, from a thread that lives as long as the
/// process (the death signal follows the spawning THREAD, so a test thread that ends must not
/// be the parent of a server another test still uses). `zk-stress-run` starts its clients
/// through it too.
///
/// # Errors
/// As [`Command::spawn`].
pub fn spawn_orphan_proof(cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let tx = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("lockwright-zk-spawner".to_string())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    use std::os::unix::process::CommandExt;
                    // SAFETY: prctl(2) is async-signal-safe and touches no memory of the
                    // parent; it runs in the child between fork and exec.
                    unsafe {
                        cmd.pre_exec(|| {
                            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                                return Err(io::Error::last_os_error());
                            }
                            Ok(())
                        });
                    }
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("cannot start the spawner thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    tx.lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((cmd, reply_tx))
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| io::Error::other("the spawner thread is gone"))?
}

/// A directory for compiled peers that survives between runs of one build (tests pass
/// `CARGO_TARGET_TMPDIR`); `None` = a fresh temporary directory.
pub fn peers_dir(base: Option<&Path>) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    match base {
        Some(b) => {
            let d = b.join("lockwright-peers");
            std::fs::create_dir_all(&d)?;
            Ok((d, None))
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("lockwright-peers-")
                .tempdir()?;
            Ok((t.path().to_path_buf(), Some(t)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ports a server binds (and binds again after a restart) lie below the kernel's
    /// ephemeral range, where no outgoing connection can take them, and successive calls give
    /// different ports. Fails on a `bind(0)` allocator (its ports lie inside the range).
    #[test]
    fn free_ports_lie_below_the_ephemeral_range_and_differ() {
        let low: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .expect("Linux")
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a number");
        let ports: Vec<u16> = (0..20).map(|_| free_port().unwrap()).collect();
        for &p in &ports {
            assert!(p < low, "port {p} is inside the ephemeral range from {low}");
        }
        let mut distinct = ports.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
    }
}
