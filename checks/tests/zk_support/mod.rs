//! Shared by the `zk_*` suites: the shared throwaway server, clients, peers, polling.
//! These suites FAIL (never skip) when ZooKeeper, a JDK, Curator or kazoo is missing; the
//! message names the Debian package (`.ci/run` installs them).
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use lockwright::zk::{block_on, Coordination, ZkClient};
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
    let mut c = block_on(zk.list_children(dir)).unwrap_or_default();
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
