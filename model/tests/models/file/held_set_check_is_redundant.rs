//! Why `ensure_valid`'s held-set check has no finder: it never fails for a writer.
//!
//! The held-set entry of a writer is inserted by that writer's own obtain and removed only by
//! that thread's own release (or with the whole process, by a crash, which takes the writer
//! too): no other step of any thread or any fault removes it. So "the path is in the held set
//! this writer uses" holds in every reachable state of every variant that has a held set, under
//! every fault, including two held sets in one process (each thread checks the set it
//! inserted into). Consequently the variant without the check (`native-skip-held-contains`,
//! the `SkipHeldContains` defect) has exactly `native`'s state space, verdicts and
//! counterexamples: no property, under any fault the model has, can tell them apart.
//!
//! The assumptions this rests on, stated where the model makes them: only the thread that
//! inserted an entry removes it (the held set is private to the crate: `System` is sealed,
//! `HeldSet` public only behind `unstable-system`), and the lock keeps the very path it
//! inserted. Code that removes another thread's entry (with `unstable-system`:
//! `impl/tests/file/native_steps_match_the_model.rs`, `ensure_valid_stops_at_the_first_failed_check`)
//! is the only way to make the check fail; the check stays as cheap defence in depth, as in
//! Lucene's `ensureValid`.

use std::collections::{HashSet, VecDeque};

use lockwright_model::check;
use lockwright_model::checker::fingerprint;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use stateright::Model;

const MIXES: [&str; 3] = [
    "crash=1,restart=1,foreign=1,unlink=1,replace=1",
    "crash=1,restart=1,lose-lock=1,lock-error=1,unlock-error=1,close-error=1,write=1",
    "foreign=2,lose-lock=1",
];

/// POSIX only: the held set's entries do not depend on the lock kind, only on which obtains
/// succeed, and POSIX (the kind the held set exists for) lets the most of them succeed. The
/// faults are those that decide which obtains succeed or fail, and so which threads insert
/// and remove entries; every fault is in the equality test below.
#[test]
fn every_writer_finds_its_entry_in_every_reachable_state() {
    for variant in Variant::ALL
        .into_iter()
        .filter(|v| v.uses_held_set() && *v != Variant::NativeSkipHeldContains)
    {
        for faults in [
            "crash=1,restart=1,lock-error=1,close-error=1",
            "foreign=1,lose-lock=1",
        ] {
            let sc =
                Scenario::new(variant, LockKind::Posix).with_faults(Faults::parse(faults).unwrap());
            let init = sc.init_states().remove(0);
            let mut seen: HashSet<u64> = HashSet::from([fingerprint(&init)]);
            let mut queue = VecDeque::from([init]);
            while let Some(s) = queue.pop_front() {
                for (p, t) in s.writers() {
                    assert!(
                        sc.observe_held_contains_of(&s, p, t),
                        "{}: writer p{p}.t{t} without its entry in\n{s:?}",
                        sc.label()
                    );
                }
                for next in sc.next_states(&s) {
                    if seen.insert(fingerprint(&next)) {
                        queue.push_back(next);
                    }
                }
            }
        }
    }
}

#[test]
fn skip_held_contains_has_natives_state_space_exactly() {
    for kind in LockKind::ALL {
        for faults in MIXES {
            let faults = Faults::parse(faults).unwrap();
            let native = check(&Scenario::new(Variant::Native, kind).with_faults(faults));
            let skip =
                check(&Scenario::new(Variant::NativeSkipHeldContains, kind).with_faults(faults));
            assert_eq!(native.unique_states, skip.unique_states, "{kind} {faults}");
            let key = |r: &lockwright_model::Report<Scenario>| -> Vec<(String, String, Option<Vec<String>>)> {
                r.verdicts
                    .iter()
                    .map(|v| {
                        (
                            v.name.to_owned(),
                            v.word().to_owned(),
                            v.path
                                .as_ref()
                                .map(|p| p.iter().map(ToString::to_string).collect()),
                        )
                    })
                    .collect()
            };
            assert_eq!(key(&native), key(&skip), "{kind} {faults}");
        }
    }
}
