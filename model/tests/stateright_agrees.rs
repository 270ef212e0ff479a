//! Cross-check: Stateright's own breadth-first checker, run on the same [`Model`]
//! implementation, finds exactly as many unique states and exactly the same set of
//! discoveries (violated `always`, found `sometimes`) as `lockwright_model::checker`, for
//! every variant × lock kind under two fault mixes. This guards the custom checker (and its
//! 64-bit fingerprints) against silently skipping states.
//!
//! Stateright is told never to finish early (`AnyOf` an empty set), because by default it
//! stops once every property has a discovery.

use std::collections::BTreeSet;

use lockwright_model::check;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use stateright::{Checker, HasDiscoveries, Model};

#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries() {
    for variant in Variant::ALL {
        for kind in [LockKind::Flock, LockKind::Posix, LockKind::Ofd] {
            if !variant.uses_os_lock() && kind != LockKind::Ofd {
                continue; // the kind does not matter
            }
            for faults in ["crash=1,restart=1,foreign=1", "unlink=1,replace=1"] {
                let sc = Scenario::new(variant, kind).with_faults(Faults::parse(faults).unwrap());
                let ours = check(&sc);
                let theirs = sc
                    .checker()
                    .finish_when(HasDiscoveries::AnyOf(BTreeSet::new()))
                    .spawn_bfs()
                    .join();
                assert!(theirs.is_done());
                assert_eq!(
                    theirs.unique_state_count(),
                    ours.unique_states,
                    "{}",
                    sc.label()
                );
                let mut found: Vec<&str> = theirs.discoveries().into_keys().collect();
                found.sort_unstable();
                let mut ours_found: Vec<&str> = ours
                    .verdicts
                    .iter()
                    .filter(|v| v.path.is_some())
                    .map(|v| v.name)
                    .collect();
                ours_found.sort_unstable();
                assert_eq!(found, ours_found, "{}", sc.label());
            }
        }
    }
}
