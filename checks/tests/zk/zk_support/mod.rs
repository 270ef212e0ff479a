//! Shared by the `zk_*` suites: the shared throwaway server, clients, peers, polling.
//! These suites FAIL (never skip) when ZooKeeper, a JDK, Curator or kazoo is missing; the
//! message names the Debian package (`.ci/run` installs them).
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use lockwright::zk::{block_on, Coordination, ZkClient, ZkMutex};
use lockwright_checks::peers::curator::CuratorPeer;
use lockwright_checks::peers::kazoo::KazooPeer;
use lockwright_checks::peers::zookeeper::ZkServer;

/// The `lockwright` binary (verify-server, zk-stress).
pub const BIN: &str = env!("CARGO_BIN_EXE_lockwright");

/// The server shared by this test binary's tests.
pub fn server() -> Arc<ZkServer> {
    ZkServer::shared()
}

/// A client with a 4 s session (well inside the server's 0.4–10 s).
pub fn client(server: &ZkServer) -> ZkClient {
    client_with(server, Duration::from_secs(4))
}

pub fn client_with(server: &ZkServer, session: Duration) -> ZkClient {
    block_on(
        ZkClient::builder()
            .session_timeout(session)
            .connect(&server.connect_string()),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A lock directory for one test.
pub fn dir(name: &str) -> String {
    format!("/lockwright-test/{name}")
}

/// The lock directory's children, sorted (empty if it does not exist).
pub fn children(zk: &ZkClient, dir: &str) -> Vec<String> {
    let mut c = block_on(zk.list_children(dir))
        .map(|l| l.children)
        .unwrap_or_default();
    c.sort();
    c
}

/// Polls `f` every 20 ms until it holds or `timeout` passes; returns whether it held.
pub fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn peers_base() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// The Curator peer, compiled once per build.
pub fn curator() -> &'static CuratorPeer {
    static PEER: OnceLock<CuratorPeer> = OnceLock::new();
    PEER.get_or_init(|| {
        let (dir, _) =
            lockwright_checks::peers::zookeeper::peers_dir(Some(peers_base())).expect("peers dir");
        CuratorPeer::build(&dir).unwrap_or_else(|e| panic!("{e:#}"))
    })
}

/// The kazoo peer.
pub fn kazoo() -> &'static KazooPeer {
    static PEER: OnceLock<KazooPeer> = OnceLock::new();
    PEER.get_or_init(|| {
        let (dir, _) =
            lockwright_checks::peers::zookeeper::peers_dir(Some(peers_base())).expect("peers dir");
        KazooPeer::build(&dir).unwrap_or_else(|e| panic!("{e:#}"))
    })
}

use lockwright_checks::stress::proc::{listening_port, Spawned};
use std::process::Command;

/// How long a peer (a JVM on a loaded machine) may take.
pub const PEER_WAIT: Duration = Duration::from_secs(120);

/// Runs a peer to its end; returns its stdout (panics with its output if it failed).
pub fn run_peer(name: &str, mut cmd: Command) -> String {
    let mut p = Spawned::spawn(name, &mut cmd).unwrap_or_else(|e| panic!("{e}"));
    let ok = p.wait(PEER_WAIT).is_some_and(|s| s.success());
    assert!(ok, "{name} failed\n{}", p.describe());
    p.stdout()
}

/// Starts a peer in `hold` mode and waits for its `HELD <node> <session>` line: the node.
pub fn start_holder(name: &str, mut cmd: Command) -> (Spawned, String) {
    let mut p = Spawned::spawn(name, &mut cmd).unwrap_or_else(|e| panic!("{e}"));
    let line = p
        .wait_for_line("HELD ", PEER_WAIT)
        .unwrap_or_else(|| panic!("{name} never held the lock\n{}", p.describe()));
    let node = line
        .split_whitespace()
        .nth(1)
        .expect("HELD <node>")
        .to_string();
    (p, node)
}

/// lockwright behind a peer's holder of `dir` (the peer started with [`start_holder`], its lock
/// node `node`): `try_acquire` fails naming that node, with data `data_ok` accepts, as the
/// holder; `acquire` is granted only once the peer's node is gone; the peer then exits cleanly.
pub fn acquire_behind_peer(
    zk: &ZkClient,
    dir: &str,
    mut holder: Spawned,
    node: &str,
    data_ok: impl Fn(Option<&[u8]>) -> bool,
) {
    let m = ZkMutex::new(zk.clone(), dir).unwrap();
    block_on(async {
        let e = m.try_acquire().await.unwrap_err();
        let h = e.holder().expect("the holder is named");
        assert_eq!(h.node, node, "{e}");
        assert!(data_ok(h.data.as_deref()), "the holder's data: {e}");
        let g = m.acquire().await.unwrap();
        assert_eq!(
            zk.check_node(node).await.unwrap(),
            None,
            "granted only after the peer's release"
        );
        g.release().await.unwrap();
    });
    assert!(
        holder.wait(PEER_WAIT).is_some_and(|s| s.success()),
        "{}",
        holder.describe()
    );
}

/// `lockwright verify-server --clients N`: the process and its port.
pub fn verify_server(clients: usize) -> (Spawned, u16) {
    let mut cmd = Command::new(BIN);
    cmd.args(["verify-server", "--clients", &clients.to_string()]);
    let mut s = Spawned::spawn("lockwright verify-server", &mut cmd).unwrap();
    let line = s
        .wait_for_line("Listening on", PEER_WAIT)
        .unwrap_or_else(|| panic!("no port\n{}", s.describe()));
    let port = listening_port(&line).unwrap_or_else(|| panic!("bad line {line:?}"));
    (s, port)
}

/// `lockwright zk-stress` against the verify server on `port`.
pub fn zk_stress(
    server: &ZkServer,
    path: &str,
    id: u8,
    port: u16,
    count: u64,
    sleep_ms: u64,
) -> Spawned {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "zk-stress",
        "--connect",
        &server.connect_string(),
        "--path",
        path,
    ])
    .args([
        "--id",
        &id.to_string(),
        "--server",
        &format!("127.0.0.1:{port}"),
    ])
    .args([
        "--count",
        &count.to_string(),
        "--sleep-ms",
        &sleep_ms.to_string(),
    ]);
    Spawned::spawn(format!("lockwright zk-stress {id}"), &mut cmd).unwrap()
}

/// Two `lockwright zk-stress` clients (ids 1, 2) and two peer clients (ids 3, 4) take the lock
/// in one directory, `count` times each, under one verify server, which must count every
/// acquisition and no overlap. `peer(args)` builds a peer's command for its `stress` mode from
/// `stress CONNECT PATH VHOST VPORT ID COUNT SLEEP_MS`.
pub fn mixed_stress(dir_name: &str, peer_name: &str, peer: impl Fn(&[String]) -> Command) {
    let s = server();
    let d = dir(dir_name);
    let count = 40;
    let (verifier, port) = verify_server(4);
    let mut clients = vec![
        zk_stress(&s, &d, 1, port, count, 1),
        zk_stress(&s, &d, 2, port, count, 1),
    ];
    for id in [3u8, 4] {
        let args = [
            "stress".to_string(),
            s.connect_string(),
            d.clone(),
            "127.0.0.1".to_string(),
            port.to_string(),
            id.to_string(),
            count.to_string(),
            "1".to_string(),
        ];
        let name = format!("{peer_name} stress {id}");
        clients.push(Spawned::spawn(name, &mut peer(&args)).unwrap());
    }
    finish_stress(verifier, clients, 4 * count);
}

/// Waits for every client and then the verify server; asserts all succeeded and the server
/// counted `acquisitions` without a violation.
pub fn finish_stress(mut verifier: Spawned, mut clients: Vec<Spawned>, acquisitions: u64) {
    let oks: Vec<bool> = clients
        .iter_mut()
        .map(|c| c.wait(PEER_WAIT).is_some_and(|s| s.success()))
        .collect();
    let server_ok = verifier.wait(PEER_WAIT).is_some_and(|s| s.success());
    let all = std::iter::once(&verifier)
        .chain(clients.iter())
        .map(Spawned::describe)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        server_ok && oks.iter().all(|ok| *ok),
        "a process failed\n{all}"
    );
    let out = verifier.stdout();
    assert!(
        out.contains(&format!("acquisitions={acquisitions} ")) && out.contains("violations=0"),
        "{all}"
    );
}
