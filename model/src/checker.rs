//! An exhaustive, single-threaded breadth-first checker for [`Scenario`]s.
//!
//! Why not Stateright's own checkers for the verdicts? Stateright 0.31's BFS/DFS record a
//! discovery by overwriting it at every violating state they visit, stop as soon as every
//! property has a discovery (so the state count of a violating run is not the size of the
//! space), and skip expanding a state in which every property already has a discovery. This
//! checker instead always explores the whole space, keeps the FIRST violation BFS finds (a
//! shortest counterexample: every pinned path in the tests is minimal), stores 64-bit fingerprints
//! of visited states (as Stateright does) and is deterministic by construction. It uses the same
//! [`Model`] implementation (`actions`, `next_state`, `properties`), and the tests assert that
//! Stateright's BFS counts exactly the same unique states on the scenarios that hold.

use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::time::{Duration, Instant};

use stateright::{Expectation, Model};

use crate::protocol::{Action, Scenario, State};

/// What the run concluded about one property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub name: &'static str,
    /// `Always` or `Sometimes`.
    pub expectation: Expectation,
    /// For `always`: a shortest counterexample; for `sometimes`: a shortest example.
    pub path: Option<Vec<Action>>,
}

impl Verdict {
    /// Whether the property holds: an `always` with no counterexample, a `sometimes` with an
    /// example.
    pub fn holds(&self) -> bool {
        match self.expectation {
            Expectation::Sometimes => self.path.is_some(),
            _ => self.path.is_none(),
        }
    }

    /// `"holds"`, `"VIOLATED"` (always) or `"NOT FOUND"` (sometimes).
    pub fn word(&self) -> &'static str {
        match (self.holds(), &self.expectation) {
            (true, _) => "holds",
            (false, Expectation::Sometimes) => "NOT FOUND",
            (false, _) => "VIOLATED",
        }
    }

    /// `"always"` or `"sometimes"`.
    pub fn kind(&self) -> &'static str {
        match self.expectation {
            Expectation::Sometimes => "sometimes",
            Expectation::Eventually => "eventually",
            Expectation::Always => "always",
        }
    }
}

/// The result of an exhaustive run.
#[derive(Clone, Debug)]
pub struct Report {
    pub scenario: Scenario,
    /// Distinct reachable states (the whole space: the run never stops early).
    pub unique_states: usize,
    /// Transitions generated (including ones to already-seen states).
    pub transitions: u64,
    /// Length of the longest shortest path from the initial state.
    pub max_depth: usize,
    pub elapsed: Duration,
    /// One per property, in [`Model::properties`] order.
    pub verdicts: Vec<Verdict>,
}

impl Report {
    /// The verdict for `name`. Panics on an unknown property name.
    pub fn verdict(&self, name: &str) -> &Verdict {
        self.verdicts
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no property named {name:?}"))
    }

    /// The names of the `always` properties that were violated.
    pub fn violated(&self) -> Vec<&'static str> {
        self.verdicts
            .iter()
            .filter(|v| v.expectation == Expectation::Always && !v.holds())
            .map(|v| v.name)
            .collect()
    }

    /// Whether every `always` holds and every `sometimes` has an example.
    pub fn all_hold(&self) -> bool {
        self.verdicts.iter().all(Verdict::holds)
    }

    /// Unique states per second.
    pub fn states_per_second(&self) -> f64 {
        self.unique_states as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Progress of a running check.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub unique_states: usize,
    pub queued: usize,
    pub depth: usize,
    pub elapsed: Duration,
}

/// Checks `scenario` exhaustively.
pub fn check(scenario: &Scenario) -> Report {
    check_with_progress(scenario, Duration::MAX, |_| {})
}

/// Checks `scenario` exhaustively, calling `progress` about every `every`.
pub fn check_with_progress(
    scenario: &Scenario,
    every: Duration,
    mut progress: impl FnMut(Progress),
) -> Report {
    let start = Instant::now();
    let mut next_report = start.checked_add(every);
    let properties = scenario.properties();
    // First discovery per property: the id of the state where it was found.
    let mut found: Vec<Option<u32>> = vec![None; properties.len()];
    // Fingerprints of every state seen. (Ids are assigned in BFS order; a state's id travels
    // with it in the queue, so the set needs no values: half the memory, fewer cache misses.)
    let mut seen: HashSet<u64, BuildHasherDefault<PassThrough>> = HashSet::default();
    // parents[id] = (parent id, action that led here); the init state has no parent.
    let mut parents: Vec<Option<(u32, Action)>> = Vec::new();
    // The frontier: states whose successors are not generated yet, with their id and depth.
    let mut queue: VecDeque<(State, u32, usize)> = VecDeque::new();
    let mut transitions = 0u64;
    let mut max_depth = 0usize;

    let visit = |s: &State, id: u32, found: &mut Vec<Option<u32>>| {
        for (i, p) in properties.iter().enumerate() {
            if found[i].is_none() {
                let holds = (p.condition)(scenario, s);
                let discovery = match p.expectation {
                    Expectation::Sometimes => holds,
                    _ => !holds,
                };
                if discovery {
                    found[i] = Some(id);
                }
            }
        }
    };

    for s in scenario.init_states() {
        if !seen.insert(fingerprint(&s)) {
            continue;
        }
        let id = parents.len() as u32;
        parents.push(None);
        visit(&s, id, &mut found);
        queue.push_back((s, id, 0));
    }

    let mut actions = Vec::new();
    let mut popped = 0u64;
    // Successors are built in one scratch state; only new ones are copied into the queue.
    let mut next = match queue.front() {
        Some((s, _, _)) => s.clone(),
        None => return empty_report(scenario, &properties, start),
    };
    while let Some((s, id, depth)) = queue.pop_front() {
        max_depth = max_depth.max(depth);
        scenario.actions(&s, &mut actions);
        for action in actions.drain(..) {
            next.clone_from(&s);
            scenario.apply_in_place(&mut next, action);
            transitions += 1;
            if !seen.insert(fingerprint(&next)) {
                continue;
            }
            let next_id = u32::try_from(parents.len()).expect("more than 4G states");
            parents.push(Some((id, action)));
            visit(&next, next_id, &mut found);
            queue.push_back((next.clone(), next_id, depth + 1));
        }
        if let Some(at) = next_report {
            popped += 1;
            if popped % 256 == 0 && Instant::now() >= at {
                progress(Progress {
                    unique_states: parents.len(),
                    queued: queue.len(),
                    depth,
                    elapsed: start.elapsed(),
                });
                next_report = at.checked_add(every);
            }
        }
    }

    let path_to = |mut id: u32| {
        let mut path = Vec::new();
        while let Some((parent, action)) = parents[id as usize] {
            path.push(action);
            id = parent;
        }
        path.reverse();
        path
    };
    let verdicts = properties
        .iter()
        .zip(&found)
        .map(|(p, f)| Verdict {
            name: p.name,
            expectation: p.expectation.clone(),
            path: f.map(path_to),
        })
        .collect();
    Report {
        scenario: *scenario,
        unique_states: parents.len(),
        transitions,
        max_depth,
        elapsed: start.elapsed(),
        verdicts,
    }
}

/// The report of a model without initial states.
fn empty_report(
    scenario: &Scenario,
    properties: &[stateright::Property<Scenario>],
    start: Instant,
) -> Report {
    Report {
        scenario: *scenario,
        unique_states: 0,
        transitions: 0,
        max_depth: 0,
        elapsed: start.elapsed(),
        verdicts: properties
            .iter()
            .map(|p| Verdict {
                name: p.name,
                expectation: p.expectation.clone(),
                path: None,
            })
            .collect(),
    }
}

/// Replays `path` from the initial state: every state along it, the initial one first.
/// `None` if some action is not enabled where it is taken.
pub fn replay(scenario: &Scenario, path: &[Action]) -> Option<Vec<State>> {
    let mut states = vec![scenario.init_states().remove(0)];
    for &a in path {
        let next = scenario.step(states.last().expect("non-empty"), a)?;
        states.push(next);
    }
    Some(states)
}

/// Numbered, human-readable steps of `path` (`1. p0 t0 HeldInsert: ...`).
pub fn describe_path(scenario: &Scenario, path: &[Action]) -> Vec<String> {
    let states = replay(scenario, path).expect("a discovered path replays");
    path.iter()
        .enumerate()
        .map(|(i, &a)| {
            format!(
                "{}. {}",
                i + 1,
                scenario.describe_step(&states[i], a, &states[i + 1])
            )
        })
        .collect()
}

/// The visited set's hasher: fingerprints are already well mixed, so use them as they are.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 fingerprints are hashed");
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A state's 64-bit fingerprint, deterministic across runs and builds. Like Stateright, the
/// visited set stores fingerprints only; with n states the chance that two of them collide is
/// about n²/2⁶⁵ (below 10⁻⁶ for the 5 M states of the deep scenario). The tests check that
/// Stateright's own BFS (a different hash) counts the same states.
pub fn fingerprint(s: &State) -> u64 {
    let mut h = Fingerprinter::default();
    s.hash(&mut h);
    h.finish()
}

/// Streams the bytes a derived `Hash` feeds it (mostly one-byte writes) into 64-bit words,
/// each absorbed with MurmurHash3's `fmix64` finalizer (a bijection with full avalanche), so
/// distinct inputs collide only by chance. Several times faster than SipHash here.
#[derive(Default, Clone, Copy)]
struct Fingerprinter {
    hash: u64,
    word: u64,
    filled: u32,
    total: u64,
}

impl Fingerprinter {
    #[inline]
    fn fmix64(mut k: u64) -> u64 {
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^= k >> 33;
        k
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        self.word |= u64::from(b) << (8 * self.filled);
        self.filled += 1;
        self.total += 1;
        if self.filled == 8 {
            self.hash = Self::fmix64(self.hash ^ self.word).wrapping_add(0x9e37_79b9_7f4a_7c15);
            self.word = 0;
            self.filled = 0;
        }
    }
}

impl Hasher for Fingerprinter {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.byte(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        // Lengths and discriminants: all small here; one byte each keeps the stream short.
        if i < 255 {
            self.byte(i as u8);
        } else {
            self.byte(255);
            self.write(&(i as u64).to_le_bytes());
        }
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_usize(i as usize);
    }
    #[inline]
    fn finish(&self) -> u64 {
        Self::fmix64(Self::fmix64(self.hash ^ self.word) ^ self.total)
    }
}
