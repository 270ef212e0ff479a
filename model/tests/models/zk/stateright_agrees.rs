//! Cross-check: Stateright's own breadth-first checker, run on the same `Model`
//! implementation of the ZooKeeper family, finds exactly as many unique states and exactly the
//! same set of discoveries (violated `always`, found `sometimes`) as
//! `lockwright_model::checker`, for every variant and write mode under two fault mixes (2
//! clients, symmetry off: Stateright explores the concrete states). This guards the shared
//! checker (and its 64-bit fingerprints) and the model's renumbering, which must give every
//! state one canonical form whichever checker asks.
//!
//! Stateright is told never to finish early (`AnyOf` an empty set), because by default it
//! stops once every property has a discovery.

use lockwright_model::checker::pinned::assert_stateright_agrees;
use lockwright_model::zk::{Faults, Guard, Scenario, Variant, WriteMode};

fn agree(sc: Scenario) {
    assert_stateright_agrees(&sc, &sc.label(), 1);
}

#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries() {
    for variant in Variant::ALL {
        for (writes, faults) in [
            (WriteMode::Fenced, "expire=1,lose-reply=1,restart=1"),
            (
                WriteMode::Unfenced,
                "expire=1,lose-reply=1,recreate-parent=1",
            ),
        ] {
            agree(
                Scenario::new(variant, writes)
                    .with_clients(2)
                    .with_symmetry(false)
                    .with_faults(Faults::parse(faults).unwrap()),
            );
        }
    }
    for writes in [
        WriteMode::CheckThenWrite,
        WriteMode::FencedBySequence,
        WriteMode::Guarded,
    ] {
        agree(
            Scenario::new(Variant::Curator, writes)
                .with_clients(2)
                .with_symmetry(false)
                .with_faults(Faults::parse("expire=1,lose-reply=1,recreate-parent=1").unwrap()),
        );
    }
    agree(
        Scenario::new(Variant::Curator, WriteMode::Fenced)
            .with_clients(2)
            .with_guard(Guard::Curator)
            .with_symmetry(false)
            .with_faults(Faults::parse("expire=1,lose-reply=1,restart=1").unwrap()),
    );
    // A 3-bit sequence counter at its top: repeated and wrapped suffixes, the fix's refusal
    // and the order it replaces.
    for variant in [Variant::Curator, Variant::TextOrder] {
        agree(
            Scenario::new(variant, WriteMode::Fenced)
                .with_clients(2)
                .with_symmetry(false)
                .with_sequence_width(Some(3))
                .with_faults(Faults::parse("expire=1,lose-reply=1").unwrap()),
        );
    }
    // A suspension with its queued request, and dropped futures.
    agree(
        Scenario::new(Variant::Curator, WriteMode::Fenced)
            .with_clients(2)
            .with_symmetry(false)
            .with_faults(Faults::parse("expire=1,lose-reply=1,abandon=1,suspend=1").unwrap()),
    );
    // A misread listing, and two mutexes sharing one client (with a restart of it and a
    // third, unshared client: its sessions are renumbered beside the shared client's).
    agree(
        Scenario::new(Variant::Curator, WriteMode::Fenced)
            .with_clients(2)
            .with_symmetry(false)
            .with_faults(Faults::parse("lose-reply=1,misread=1").unwrap()),
    );
    for variant in [Variant::Curator, Variant::DropOwnOnSessionSwap] {
        for (clients, faults) in [(2, "expire=1,restart=1"), (3, "expire=1")] {
            agree(
                Scenario::new(variant, WriteMode::Fenced)
                    .with_clients(clients)
                    .with_shared_client(true)
                    .with_symmetry(false)
                    .with_faults(Faults::parse(faults).unwrap()),
            );
        }
    }
}
