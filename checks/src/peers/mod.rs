//! Other ZooKeeper lock clients, and the throwaway server they meet on, for lockwright's
//! interop tests and benchmarks (`lockwright zk-bench`, `checks/tests/zk/`, `checks/tests/zk_sim/`):
//!
//! - [`zookeeper`]: the one server harness ([`zookeeper::ZkServer`]).
//! - [`curator`]: Curator 5.4's `InterProcessMutex` (Debian `libcurator-recipes-java`), a Java
//!   peer compiled at run time from `checks/peers/java/CuratorPeer.java`.
//! - [`bench`](mod@bench): `lockwright zk-bench`, the three side by side on one server.
//! - [`kazoo`]: kazoo 2.8's `Lock` (Debian `python3-kazoo`), run by Debian's `/usr/bin/python3`
//!   from `checks/peers/python/kazoo_peer.py`.
//!
//! Every missing piece is an error naming the Debian package to install: the tests fail, they
//! never skip.

pub mod bench;
pub mod curator;
pub mod kazoo;
pub mod zookeeper;

use std::process::Command;

use crate::stress::proc::Spawned;

/// A peer's answer line `RESULT n=.. median_us=.. p99_us=.. max_us=..`, parsed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PeerResult {
    pub n: u64,
    pub median_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// The lowest median of consecutive blocks of 200 samples.
    pub best_block_median_us: u64,
}

impl PeerResult {
    /// Parses the `RESULT ...` line of a peer's stdout.
    pub fn parse(stdout: &str) -> Option<PeerResult> {
        let line = stdout.lines().find(|l| l.starts_with("RESULT "))?;
        let mut r = PeerResult::default();
        for kv in line.split_whitespace().skip(1) {
            let (k, v) = kv.split_once('=')?;
            let v: u64 = v.parse().ok()?;
            match k {
                "n" => r.n = v,
                "median_us" => r.median_us = v,
                "p99_us" => r.p99_us = v,
                "max_us" => r.max_us = v,
                "best_block_median_us" => r.best_block_median_us = v,
                _ => {}
            }
        }
        Some(r)
    }
}

/// Starts a peer command with its output captured (killed on drop).
///
/// # Errors
/// If the program cannot be started.
pub fn spawn(name: impl Into<String>, mut cmd: Command) -> anyhow::Result<Spawned> {
    Ok(Spawned::spawn(name, &mut cmd)?)
}
