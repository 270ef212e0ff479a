//! Cross-check: Stateright's own breadth-first checker, run on the same `Model`
//! implementation, finds exactly as many unique states and exactly the same set of
//! discoveries (violated `always`, found `sometimes`) as `lockwright_model::checker`, for
//! every variant × lock kind under two fault mixes. This guards the custom checker (and its
//! 64-bit fingerprints) against silently skipping states.
//!
//! Stateright is told never to finish early (`AnyOf` an empty set), because by default it
//! stops once every property has a discovery.

use lockwright_model::checker::pinned::assert_stateright_agrees;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};

#[test]
fn stateright_bfs_counts_the_same_states_and_discoveries() {
    for variant in Variant::ALL {
        for kind in [LockKind::Flock, LockKind::Posix, LockKind::Ofd] {
            if !variant.uses_os_lock() && kind != LockKind::Ofd {
                continue; // the kind does not matter
            }
            for faults in ["crash=1,restart=1,foreign=1", "unlink=1,replace=1"] {
                let sc = Scenario::new(variant, kind).with_faults(Faults::parse(faults).unwrap());
                assert_stateright_agrees(&sc, &sc.label(), 1);
            }
        }
    }
}

/// The same cross-check for the OS faults and their variants (lost locks, OS errors, a
/// written lock file, two held sets, probe-last).
#[test]
fn stateright_bfs_agrees_on_the_new_faults_and_variants() {
    let variants = [
        Variant::Native,
        Variant::NativeBlocking,
        Variant::NativeTwoHeldSets,
        Variant::NativeProbeLast,
        Variant::NativeSkipInodeCheck,
        Variant::NativeSkipHeldContains,
        Variant::NativeCarryOnAfterLockError,
    ];
    for variant in variants {
        for kind in [LockKind::Posix, LockKind::Ofd] {
            // The new faults (crashes are in the test above); for ProbeLast also the mix its
            // violation needs (a lost lock and an unlink).
            let mixes: &[&str] = if variant == Variant::NativeProbeLast {
                &[
                    "lose-lock=1,lock-error=1,unlock-error=1,close-error=1,write=1",
                    "foreign=1,unlink=1",
                ]
            } else {
                &["lose-lock=1,lock-error=1,unlock-error=1,close-error=1,write=1"]
            };
            for faults in mixes {
                let sc = Scenario::new(variant, kind).with_faults(Faults::parse(faults).unwrap());
                assert_stateright_agrees(&sc, &sc.label(), 1);
            }
        }
    }
}
