//! `lockwright zk-stress-run`: the ZooKeeper mutex under faults on a real server, the
//! counterpart of `stress-run` for file locks (`docs/zookeeper-stress.md`).
//!
//! - [`orchestrator`]: a throwaway ZooKeeper (or a given one), the [`proxy`] in front of it,
//!   the verify server (`crate::stress::server`), the [`ledger`] and N client processes; the
//!   seeded fault schedule (SIGKILL, SIGSTOP past the session timeout, cut and stalled
//!   connections, a server restart); the checks and the report.
//! - [`summary`]: what a run reports (fault counts, the overlap check, the ledger's verdict)
//!   and whether it passed, as a table or JSON.
//! - [`client`]: one client process (`lockwright zk-stress-client`): acquire, fenced writes,
//!   release, in a loop.
//! - [`proxy`]: a loopback TCP proxy, one port per client (per server), that can reset or
//!   stall one client's connections.
//! - [`ensemble`]: a throwaway three-server ensemble (`--servers 3`) with proxies on the
//!   links between its members, for the leader-kill, server-pause, partition and lag faults.
//! - [`ledger`]: the fenced resource (accepts a write only with a token at least the highest
//!   accepted), the log of every write, and the count of acknowledged counter increments.
//! - [`txnlog`]: ZooKeeper's transaction log read back after the run, and the checks made
//!   from it alone.

pub mod client;
pub mod ensemble;
pub mod ledger;
pub mod orchestrator;
pub mod proxy;
pub mod summary;
pub mod trace;
pub mod txnlog;
