//! What the `zk-stress-run` tests share: a quick configuration, running it with the report on
//! stderr, and the report with the fault log for an assertion's message.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lockwright_checks::zkstress::ledger::ResourceMode;
use lockwright_checks::zkstress::orchestrator::{self, FaultKind, RunConfig, ZkRunSummary};

pub const BIN: &str = env!("CARGO_BIN_EXE_lockwright");

pub fn config(name: &str) -> RunConfig {
    RunConfig {
        clients: 3,
        curator_clients: 0,
        acquisitions: 300,
        hold: Duration::from_millis(5),
        // Short sessions keep the pauses short (a pause lasts 2 × 1.5 s + 1 s); the server's
        // tick is 200 ms, so expiry is still 7 ticks away.
        session_timeout: Duration::from_millis(1500),
        faults: FaultKind::ALL.to_vec(),
        fault_every: Duration::from_millis(800),
        min_each_fault: 1,
        seed: 13,
        resource: ResourceMode::Guarded,
        connect: None,
        servers: 1,
        lock_path: format!("/lockwright-test/{name}"),
        exe: PathBuf::from(BIN),
        peers_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        max_duration: Duration::from_secs(300),
        progress: true,
        client_variant: None,
        trace_copy: None,
    }
}

pub fn run(cfg: &RunConfig) -> ZkRunSummary {
    let t = Instant::now();
    let s = orchestrator::run(cfg).unwrap_or_else(|e| panic!("{e:#}"));
    eprintln!("{}({:.1} s)", s.render(), t.elapsed().as_secs_f64());
    s
}

pub fn show(s: &ZkRunSummary) -> String {
    format!("{}\nfault log:\n  {}", s.render(), s.fault_log.join("\n  "))
}

/// The twin's verdict: the counter and the transaction log catch the unfenced writes without
/// asking the lock (lost increments, a failure naming them, log violations), and the run fails.
pub fn assert_the_oracles_catch_it(s: &ZkRunSummary) {
    assert!(!s.passed(), "{}", show(s));
    assert!(s.lost_increments > 0, "{}", show(s));
    assert!(
        s.failures.iter().any(|f| f.contains("lost increments")),
        "{}",
        show(s)
    );
    assert!(s.log_violations > 0, "{}", show(s));
    // Two holders that read the same value write it twice: the exact counter sees it too.
    assert!(
        s.verdict
            .counter_log_violations
            .iter()
            .any(|v| v.contains("again")),
        "{}",
        show(s)
    );
}

/// The unfenced twin's configuration: pauses only (at least 3, 2.5 s apart, so the others get
/// the lock in between), the counter written without the lock check, a hold long enough that a
/// pause lands between a holder's two writes.
pub fn unfenced_twin(name: &str) -> RunConfig {
    let mut cfg = config(name);
    cfg.resource = ResourceMode::Unchecked;
    cfg.faults = vec![FaultKind::Pause];
    cfg.min_each_fault = 3;
    cfg.acquisitions = 60;
    cfg.fault_every = Duration::from_millis(2500);
    cfg.hold = Duration::from_millis(40);
    cfg
}
