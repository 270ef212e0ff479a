//! The file model's packed encoding (`file::packed`, what the checker fingerprints without
//! symmetry) tells apart every pair of distinct reachable states: if it merged two, the
//! checker would silently drop states (a smaller count, perhaps a missed counterexample).
//!
//! The oracle is the state's own `Eq` (derived, field by field), which shares nothing with
//! the encoding: 2 processes × 2 threads, the variants, lock kinds and faults of [`CASES`],
//! explored with a `HashSet<State>`.

use std::collections::{HashMap, HashSet, VecDeque};

use lockwright_model::checker::{fingerprint, Packer};
use lockwright_model::file::{Action, Event, Faults, LockKind, Scenario, State, Variant};
use stateright::Model;

const MIXES: [&str; 2] = [
    "crash=1,restart=1,foreign=1,unlink=1,replace=1",
    "crash=1,restart=1,lose-lock=1,lock-error=1,unlock-error=1,close-error=1,write=1",
];

/// Every variant (those whose space equals `native`'s left out), every lock kind the model
/// records (`flock` through `mixed`, OFD, POSIX), every fault; budgets cut down for the
/// variants whose spaces grow fastest, about 700,000 states in all.
const CASES: [(Variant, LockKind, &str); 17] = [
    (Variant::Native, LockKind::Ofd, MIXES[0]),
    (Variant::Native, LockKind::Posix, MIXES[1]),
    (Variant::Mixed, LockKind::Posix, MIXES[0]),
    (Variant::Mixed, LockKind::Posix, MIXES[1]),
    (Variant::Simple, LockKind::Posix, MIXES[0]),
    (Variant::Simple, LockKind::Posix, MIXES[1]),
    (Variant::SingleInstance, LockKind::Posix, MIXES[0]),
    (Variant::NoLock, LockKind::Posix, MIXES[0]),
    (Variant::NativeBlocking, LockKind::Ofd, MIXES[0]),
    (Variant::NativeBlocking, LockKind::Ofd, MIXES[1]),
    (Variant::NativeBlockingNoRecheck, LockKind::Posix, MIXES[0]),
    (Variant::NativeProbeLast, LockKind::Ofd, MIXES[1]),
    (
        Variant::NativeTwoHeldSets,
        LockKind::Posix,
        "crash=1,restart=1,write=1",
    ),
    (
        Variant::NativeDeleteOnRelease,
        LockKind::Posix,
        "crash=1,restart=1,unlink=1,replace=1",
    ),
    (
        Variant::NativeNoHeldSet,
        LockKind::Posix,
        "crash=1,restart=1,foreign=1",
    ),
    (Variant::Native410, LockKind::Posix, "foreign=1,unlink=1"),
    (
        Variant::NativeCarryOnAfterLockError,
        LockKind::Ofd,
        MIXES[1],
    ),
];

/// Every state reachable in `sc`, by `Eq`.
fn reachable(sc: &Scenario) -> Vec<State> {
    let mut seen: HashSet<State> = sc.init_states().into_iter().collect();
    let mut queue: VecDeque<State> = seen.iter().cloned().collect();
    while let Some(s) = queue.pop_front() {
        for next in sc.next_states(&s) {
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    seen.into_iter().collect()
}

fn packed(s: &State) -> Vec<u8> {
    let mut out = Packer::default();
    assert!(s.packed_len().is_some(), "a 2 × 2 state fits: {s:?}");
    s.pack(&mut out);
    assert_eq!(Some(out.bytes().len()), s.packed_len(), "{s:?}");
    out.bytes().to_vec()
}

/// How many distinct values `encode` gives `states`, and two distinct states it merges.
fn merged(
    states: &[State],
    encode: impl Fn(&State) -> Vec<u8>,
) -> (usize, Option<(&State, &State)>) {
    let mut by_code: HashMap<Vec<u8>, &State> = HashMap::new();
    let mut clash = None;
    for s in states {
        if let Some(other) = by_code.insert(encode(s), s) {
            clash.get_or_insert((other, s));
        }
    }
    (by_code.len(), clash)
}

#[test]
fn distinct_reachable_states_have_distinct_packed_encodings() {
    let mut total = 0;
    for (variant, kind, mix) in CASES {
        let sc = Scenario::new(variant, kind).with_faults(Faults::parse(mix).expect("a valid mix"));
        let states = reachable(&sc);
        let (codes, clash) = merged(&states, packed);
        if let Some((a, b)) = clash {
            panic!("{}: the encoding merges\n{a:?}\nand\n{b:?}", sc.label());
        }
        assert_eq!(codes, states.len(), "{}", sc.label());
        let fingerprints: HashSet<u64> = states.iter().map(State::packed_fingerprint).collect();
        assert_eq!(fingerprints.len(), states.len(), "{}", sc.label());
        total += states.len();
    }
    assert!(total > 500_000, "{total} states compared");
}

/// The twin: an encoding that leaves out one field (`last`, the outcome of the step that led
/// here) is caught merging states on the same space, so the check above can fail.
#[test]
fn an_encoding_that_forgets_a_field_is_caught() {
    let sc = Scenario::new(Variant::Native, LockKind::Ofd)
        .with_faults(Faults::parse(MIXES[0]).expect("a valid mix"));
    let states = reachable(&sc);
    let forgetful = |s: &State| {
        let mut s = s.clone();
        s.last = Event::None;
        packed(&s)
    };
    let (codes, clash) = merged(&states, forgetful);
    let (a, b) = clash.expect("states that differ only in `last` exist");
    assert_ne!(a, b);
    assert!(codes < states.len());
}

/// The same twin for the blocking variants' `Thread::just_obtained` (the moment an obtain
/// returns, which "a blocking obtain returns a lock on the current lock file" judges): an
/// encoding without it merges states, so the cases above that reach it check its bit.
#[test]
fn an_encoding_that_forgets_just_obtained_is_caught() {
    let sc = Scenario::new(Variant::NativeBlocking, LockKind::Ofd)
        .with_faults(Faults::parse(MIXES[0]).expect("a valid mix"));
    let states = reachable(&sc);
    let forgetful = |s: &State| {
        let mut s = s.clone();
        for th in &mut s.threads {
            th.just_obtained = false;
        }
        packed(&s)
    };
    let (codes, clash) = merged(&states, forgetful);
    let (a, b) = clash.expect("states that differ only in `just_obtained` exist");
    assert_ne!(a, b);
    assert!(codes < states.len());
}

/// A state too big to pack (8 × 8, every thread with the file open: 64 descriptions, more
/// than the kernel keeps inline too) is fingerprinted through its derived `Hash` instead.
#[test]
fn a_state_too_big_to_pack_falls_back_to_the_derived_hash() {
    let sc = Scenario::new(Variant::NativeNoHeldSet, LockKind::Ofd).with_parties(8, 8);
    let mut s = sc.init_states().remove(0);
    assert!(s.packed_len().is_some());
    for p in 0..8 {
        for t in 0..8 {
            s = sc
                .next_state(&s, Action::Open(p, t))
                .expect("Open is enabled");
        }
    }
    assert_eq!(s.os.descs().count(), 64);
    assert_eq!(s.packed_len(), None);
    assert_eq!(s.packed_fingerprint(), fingerprint(&s));
}
