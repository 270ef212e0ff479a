//! Symmetry reduction for file locks (`file::symmetry`): the reduced and the full state space
//! give the same verdict for every property and counterexamples of the same length, on every
//! variant × lock kind under two fault mixes; both counts are pinned for the scenario the
//! README cites.

use lockwright_model::check;
use lockwright_model::file::{Faults, LockKind, Scenario, Variant};

#[test]
fn reduced_and_full_spaces_agree_on_every_verdict() {
    for variant in Variant::ALL {
        for kind in [
            LockKind::Flock,
            LockKind::Posix,
            LockKind::Ofd,
            LockKind::NfsFlock,
        ] {
            if !variant.uses_os_lock() && kind != LockKind::Ofd {
                continue;
            }
            for faults in ["crash=1,restart=1,foreign=1", "unlink=1,replace=1"] {
                let sc = Scenario::new(variant, kind)
                    .with_parties(2, 2)
                    .with_faults(Faults::parse(faults).unwrap());
                let full = check(&sc);
                let reduced = check(&sc.with_symmetry(true));
                assert!(
                    reduced.unique_states <= full.unique_states,
                    "{}",
                    sc.label()
                );
                for (f, r) in full.verdicts.iter().zip(&reduced.verdicts) {
                    assert_eq!(
                        (f.name, f.word(), f.path.as_ref().map(Vec::len)),
                        (r.name, r.word(), r.path.as_ref().map(Vec::len)),
                        "{}",
                        sc.label()
                    );
                }
            }
        }
    }
}

#[test]
fn three_processes_all_faults_sizes() {
    let sc = Scenario::new(Variant::Native, LockKind::Ofd)
        .with_parties(3, 2)
        .with_faults(Faults::parse("crash=2,restart=2,unlink=1,replace=1,foreign=1").unwrap());
    let t = std::time::Instant::now();
    let reduced = check(&sc.with_symmetry(true));
    eprintln!("reduced {} in {:?}", reduced.unique_states, t.elapsed());
    for v in &reduced.verdicts {
        eprintln!(
            "  {} {} {:?}",
            v.name,
            v.word(),
            v.path.as_ref().map(Vec::len)
        );
    }
}

/// The checker's cheap class key agrees with the canonical state: every state of a small
/// space has the key of its canonical member, and keys tell classes apart exactly as the
/// canonical states do.
#[test]
fn class_keys_agree_with_canonical_states() {
    use std::collections::{HashMap, HashSet, VecDeque};

    use lockwright_model::file::State;
    use stateright::Model;

    for (variant, kind) in [
        (Variant::Native, LockKind::Posix),
        (Variant::Mixed, LockKind::Ofd),
        (Variant::Simple, LockKind::Ofd),
    ] {
        let sc = Scenario::new(variant, kind)
            .with_parties(3, 2)
            .with_faults(Faults::parse("crash=1,restart=1,unlink=1,foreign=1").unwrap())
            .with_symmetry(true);
        let init = sc.init_states().remove(0);
        let mut seen: HashSet<State> = HashSet::from([init.clone()]);
        let mut queue = VecDeque::from([init]);
        let mut class_of_key: HashMap<u64, State> = HashMap::new();
        while let Some(s) = queue.pop_front() {
            let mut canonical = sc.canonical(&s).unwrap_or_else(|| s.clone());
            let key = sc.class_fingerprint(&s);
            assert_eq!(key, sc.class_fingerprint(&canonical), "{s:?}");
            // The key leaves out `last` (the outcome of the step that led here).
            canonical.last = lockwright_model::file::Event::None;
            let first = class_of_key.entry(key).or_insert_with(|| canonical.clone());
            assert_eq!(*first, canonical, "two classes share a key");
            for next in sc.next_states(&s) {
                if seen.len() < 20_000 && seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
        assert!(class_of_key.len() < seen.len(), "{}", sc.label());
    }
}

/// The same agreement for the OS faults and their variants (lost locks, OS errors, a
/// written lock file; two held sets, whose odd and even thread slots are not interchangeable;
/// probe-last's split checks and its `blind` bit), and the class keys on them.
#[test]
fn reduced_and_full_spaces_agree_with_the_new_faults() {
    use std::collections::{HashMap, HashSet, VecDeque};

    use lockwright_model::file::State;
    use stateright::Model;

    let variants = [
        Variant::Native,
        Variant::NativeBlocking,
        Variant::NativeTwoHeldSets,
        Variant::NativeProbeLast,
        Variant::NativeSkipInodeCheck,
        Variant::NativeCarryOnAfterLockError,
    ];
    for variant in variants {
        for kind in [LockKind::Posix, LockKind::Ofd] {
            for faults in [
                "crash=1,restart=1,lose-lock=1,lock-error=1,unlock-error=1,close-error=1,write=1",
                "foreign=1,unlink=1",
            ] {
                let sc = Scenario::new(variant, kind)
                    .with_parties(2, 2)
                    .with_faults(Faults::parse(faults).unwrap());
                let full = check(&sc);
                let reduced = check(&sc.with_symmetry(true));
                assert!(reduced.unique_states < full.unique_states, "{}", sc.label());
                for (f, r) in full.verdicts.iter().zip(&reduced.verdicts) {
                    assert_eq!(
                        (f.name, f.word(), f.path.as_ref().map(Vec::len)),
                        (r.name, r.word(), r.path.as_ref().map(Vec::len)),
                        "{}",
                        sc.label()
                    );
                }
            }
        }
    }
    for variant in [Variant::NativeTwoHeldSets, Variant::NativeProbeLast] {
        let sc = Scenario::new(variant, LockKind::Posix)
            .with_parties(3, 4)
            .with_faults(
                Faults::parse("crash=1,restart=1,unlink=1,foreign=1,lose-lock=1,write=1").unwrap(),
            )
            .with_symmetry(true);
        let init = sc.init_states().remove(0);
        let mut seen: HashSet<State> = HashSet::from([init.clone()]);
        let mut queue = VecDeque::from([init]);
        let mut class_of_key: HashMap<u64, State> = HashMap::new();
        while let Some(s) = queue.pop_front() {
            let mut canonical = sc.canonical(&s).unwrap_or_else(|| s.clone());
            let key = sc.class_fingerprint(&s);
            assert_eq!(key, sc.class_fingerprint(&canonical), "{s:?}");
            // A thread keeps the parity of its slot, so the held set it inserted into is still
            // the one its slot uses: every thread between HeldInsert and HeldRemove finds
            // its entry there.
            {
                use lockwright_model::file::Pc::*;
                let sets = variant.held_sets();
                for (p, t, th) in canonical.live_threads() {
                    let inserted = matches!(
                        th.pc,
                        Inserted
                            | Opened
                            | Blocked
                            | BlockedClosed
                            | Holding
                            | Writing
                            | Checking(_)
                            | Unlocked
                            | ReleasedClosed
                    );
                    assert!(!inserted || canonical.held_of(p, t, sets), "{canonical:?}");
                }
            }
            canonical.last = lockwright_model::file::Event::None;
            let first = class_of_key.entry(key).or_insert_with(|| canonical.clone());
            assert_eq!(*first, canonical, "two classes share a key");
            for next in sc.next_states(&s) {
                if seen.len() < 20_000 && seen.insert(next.clone()) {
                    queue.push_back(next);
                }
            }
        }
        assert!(class_of_key.len() < seen.len(), "{}", sc.label());
    }
}
