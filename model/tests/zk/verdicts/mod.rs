//! The ZooKeeper family's verdict table (`docs/zookeeper.md`), pinned: for every scenario, each
//! property's verdict, the exact number of unique states, and the exact (shortest, BFS-first)
//! counterexample of every violated `always` property. A change to the model that alters the
//! state space or a counterexample shows up here as a diff.
//!
//! Every row runs exhaustively, so "holds" means "holds in every reachable state". Every row
//! that holds has a twin in which the check finds the bug (named in each test's comment). The
//! rows use 2 clients (c0 reentrant, c1) except the standard scenario (3 clients). `fencing.rs`
//! holds the lost update of plain `fenced` writes and claim-at-acquire, which prevents it.
//!
//! Check them all: `cargo test -p lockwright-model --test zk verdicts::`.

use lockwright_model::checker::pinned::{assert_pinned, reachable, Pinned};
use lockwright_model::zk::{Faults, Guard, Scenario, Variant, WriteMode};
use stateright::Model;

use Variant::*;
use WriteMode::*;

struct Expected {
    scenario: Scenario,
    unique_states: usize,
    /// Every property, in report order: `holds`, `VIOLATED` (always) or `NOT FOUND`
    /// (sometimes).
    verdicts: [(&'static str, &'static str); 13],
    /// The counterexample of each violated `always` property.
    counterexamples: &'static [(&'static str, &'static [&'static str])],
}

/// `variant` × `writes`, 2 clients (c0 reentrant), faults `faults`.
fn sc(variant: Variant, writes: WriteMode, faults: &str) -> Scenario {
    Scenario::new(variant, writes)
        .with_clients(2)
        .with_faults(Faults::parse(faults).expect("valid fault list"))
}

fn expect(e: Expected) {
    let sc = e.scenario;
    let label = sc.label();
    // "fenced writes are exclusive" is not vacuous: in every scenario a holder granted after
    // an accepted write's holder is about to write.
    assert!(
        reachable(&sc, |s| s.holders().any(|c| {
            let own = s.clients[c as usize].own.expect("a holder has a node");
            s.resource.max_czxid.is_some_and(|m| m < own.czxid)
        })),
        "{label}: no later grant ever writes"
    );
    // Nor is "no lost update": wherever a session can expire, some holder is inside an update
    // (read, not yet written) when a write made under another grant is accepted — the step a
    // lost update needs. Where it holds, the write that would lose it is refused.
    if sc.faults.expire > 0 {
        assert!(
            reachable(&sc, |s| s.clients.iter().any(|c| c.overwritten)),
            "{label}: no update is ever overtaken by another grant's write"
        );
    }
    let report = assert_pinned(
        &sc,
        &label,
        &Pinned {
            unique_states: e.unique_states,
            verdicts: &e.verdicts,
            counterexamples: e.counterexamples,
        },
    );
    // Every discovery is also a path of the replayer's API (`Scenario::step`), and reads as
    // numbered steps with stable names (what docs/zookeeper.md lists).
    for v in &report.verdicts {
        let Some(path) = &v.path else { continue };
        let mut s = sc.init_states().remove(0);
        for a in path {
            s = sc
                .step(&s, *a)
                .unwrap_or_else(|| panic!("{label}: {a} is enabled"));
        }
        let lines = sc.describe_path(path).expect("describable");
        assert_eq!(lines.len(), path.len());
    }
}

mod cancel;
mod curator;
mod defects;
mod fencing;
mod lag;
mod misread;
mod overlap;
mod shared;
mod suspend;
