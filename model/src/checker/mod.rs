//! The exhaustive breadth-first checker every lock family's model runs on.
//!
//! Generic over a Stateright [`Model`] that also implements [`Checkable`] (two optional hooks:
//! successors built in a reused scratch state, and a symmetry representative).
//!
//! Why not Stateright's own checkers for the verdicts? Stateright 0.31's BFS/DFS record a
//! discovery by overwriting it at every violating state they visit, stop as soon as every
//! property has a discovery (so the state count of a violating run is not the size of the
//! space), and skip expanding a state in which every property already has a discovery. This
//! checker instead always explores the whole space, keeps the FIRST violation BFS finds (a
//! shortest counterexample: every pinned path in the tests is minimal), stores 64-bit
//! fingerprints of visited states (as Stateright does) and is deterministic by construction.
//! It uses the model's own `actions`, `next_state` and `properties`, and each family's tests
//! assert that Stateright's BFS counts exactly the same unique states.

mod checkable;
mod claims;
mod fingerprint;
mod parallel;
pub mod pinned;
mod report;
#[cfg(test)]
mod tests;
mod visited;

use std::time::{Duration, Instant};

use stateright::{Expectation, Model, Property};

pub use checkable::{Checkable, Options};
pub use fingerprint::{fingerprint, fingerprint_bytes, Fingerprinter, Packer};
pub use report::{Memory, Progress, Report, Verdict};
use visited::Visited;

/// Checks `model` exhaustively, with every core.
pub fn check<M>(model: &M) -> Report<M>
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    check_with(model, Options::default(), Duration::MAX, |_| {})
}

/// Checks `model` exhaustively, calling `progress` about every `every`.
pub fn check_with_progress<M>(
    model: &M,
    every: Duration,
    progress: impl FnMut(Progress),
) -> Report<M>
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    check_with(model, Options::default(), every, progress)
}

/// Where a property was first discovered.
#[derive(Clone, Copy, Debug)]
pub(super) enum Found {
    /// In the state with this id.
    State(u32),
    /// In the successor of state `.0` by the `.1`-th recorded transition discovery: a
    /// `sometimes` property seen on a transition into a state merged with one visited
    /// earlier (its merged fields — those the visited key leaves out — differ).
    Transition(u32, usize),
}

/// Checks `model` exhaustively with `options`, calling `progress` about every `every`.
///
/// Breadth-first. With one thread, a plain FIFO search: each successor goes into the visited
/// set as it is generated. With several, level by level (the `parallel` module): the threads expand
/// chunks of a level into a shared visited set that keeps, per new state, the lowest position
/// (parent id, action index) that reached it, so the state, its parent and the first
/// discoveries are those of the FIFO search whichever thread got there first. So the
/// unique-state count, every transition count and every first (shortest) counterexample are
/// the same for any number of threads.
///
/// # Panics
/// A model with more than 64 properties, or more than 4G states.
pub fn check_with<M>(
    model: &M,
    options: Options,
    every: Duration,
    mut progress: impl FnMut(Progress),
) -> Report<M>
where
    M: Checkable + Clone + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    let start = Instant::now();
    let mut next_report = start.checked_add(every);
    let properties = model.properties();
    assert!(properties.len() <= 64, "at most 64 properties");
    // First discovery per property.
    let mut found: Vec<Option<Found>> = vec![None; properties.len()];
    // The actions of transition discoveries, indexed by `Found::Transition`'s `.1`.
    let mut transition_actions: Vec<M::Action> = Vec::new();
    let sometimes: u64 = properties
        .iter()
        .enumerate()
        .filter(|(_, p)| p.expectation == Expectation::Sometimes)
        .fold(0, |bits, (i, _)| bits | (1 << i));
    // Fingerprints of every state seen (of its symmetry representative, if the model has
    // one). Ids are assigned in BFS order and travel with the states, so the set needs no
    // values: half the memory, fewer cache misses.
    let mut seen = Visited::new();
    // parents[id] = (parent id, action that led here); initial states have no parent.
    let mut parents: Vec<Option<(u32, M::Action)>> = Vec::new();
    let mut transitions = 0u64;
    let mut depth = 0usize;

    let key = |s: &M::State| model.visited_key(s);
    let discoveries = |s: &M::State, pending: u64| discoveries(model, &properties, s, pending);

    let mut frontier: Vec<(M::State, u32)> = Vec::new();
    for s in model.init_states() {
        if !seen.insert(key(&s)) {
            continue;
        }
        let id = parents.len() as u32;
        parents.push(None);
        let bits = discoveries(&s, pending_of(&found));
        record(&mut found, bits, Found::State(id));
        frontier.push((s, id));
    }
    if frontier.is_empty() {
        return empty_report(model, &properties, start);
    }

    // One thread: the same search without candidates — each successor goes into the visited
    // set at once, in the order the merge below would put it. A parent's successors are built
    // first, each in its own reused slot of `built`, and their keys' slots prefetched, so the
    // visited set's cache misses overlap instead of coming one after the other. A new
    // successor moves into the next frontier (its slot gets a spare state: one whose expansion
    // is done), so no state is cloned for the frontier.
    let mut actions = Vec::new();
    let mut built: Vec<M::State> = Vec::new();
    let mut keys: Vec<Option<u64>> = Vec::new();
    let mut spares: Vec<M::State> = Vec::new();
    let mut next_frontier = Vec::new();
    let mut pending = pending_of(&found);
    while options.threads <= 1 && !frontier.is_empty() {
        for (s, id) in frontier.drain(..) {
            model.actions(&s, &mut actions);
            while built.len() < actions.len() {
                built.push(s.clone());
            }
            keys.clear();
            for (action, out) in actions.iter().zip(&mut built) {
                let k = model
                    .successor_into(&s, action.clone(), out)
                    .then(|| key(out));
                if let Some(k) = k {
                    seen.prefetch(k);
                }
                keys.push(k);
            }
            for (i, action) in actions.drain(..).enumerate() {
                let Some(k) = keys[i] else { continue };
                transitions += 1;
                if seen.insert(k) {
                    let next_id = u32::try_from(parents.len()).expect("more than 4G states");
                    parents.push(Some((id, action)));
                    if pending != 0 {
                        let bits = discoveries(&built[i], pending);
                        if bits != 0 {
                            record(&mut found, bits, Found::State(next_id));
                            pending = pending_of(&found);
                        }
                    }
                    let spare = spares.pop().unwrap_or_else(|| s.clone());
                    next_frontier.push((std::mem::replace(&mut built[i], spare), next_id));
                } else if pending & sometimes != 0 {
                    let bits = discoveries(&built[i], pending & sometimes);
                    if bits != 0 {
                        transition_actions.push(action);
                        let at = Found::Transition(id, transition_actions.len() - 1);
                        record(&mut found, bits, at);
                        pending = pending_of(&found);
                    }
                }
            }
            spares.push(s);
        }
        if !next_frontier.is_empty() {
            depth += 1;
        }
        std::mem::swap(&mut frontier, &mut next_frontier);
        if let Some(at) = next_report {
            if Instant::now() >= at {
                progress(Progress {
                    unique_states: parents.len(),
                    queued: frontier.len(),
                    depth,
                    elapsed: start.elapsed(),
                });
                next_report = at.checked_add(every);
            }
        }
    }

    let mut visited_bytes = seen.bytes();
    if options.threads > 1 && !frontier.is_empty() {
        let outcome = parallel::search(
            model,
            &properties,
            std::mem::take(&mut frontier),
            options.threads,
            found,
            &mut parents,
            |unique_states, queued, depth| {
                if let Some(at) = next_report {
                    if Instant::now() >= at {
                        progress(Progress {
                            unique_states,
                            queued,
                            depth,
                            elapsed: start.elapsed(),
                        });
                        next_report = at.checked_add(every);
                    }
                }
            },
        );
        transitions = outcome.transitions;
        depth = outcome.depth;
        found = outcome.found;
        transition_actions = outcome.transition_actions;
        visited_bytes = outcome.visited_bytes;
        debug_assert_eq!(outcome.visited_len, parents.len());
    } else {
        debug_assert_eq!(seen.len(), parents.len());
    }

    let path_to = |found: Found| {
        let (mut id, last) = match found {
            Found::State(id) => (id, None),
            Found::Transition(parent, i) => (parent, Some(transition_actions[i].clone())),
        };
        let mut path = Vec::new();
        path.extend(last);
        while let Some((parent, action)) = &parents[id as usize] {
            path.push(action.clone());
            id = *parent;
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
    let memory = Memory {
        visited_set_bytes: visited_bytes,
        parents_bytes: parents.capacity() * std::mem::size_of::<Option<(u32, M::Action)>>(),
    };
    Report {
        model: model.clone(),
        unique_states: parents.len(),
        transitions,
        max_depth: depth,
        elapsed: start.elapsed(),
        verdicts,
        memory,
    }
}

/// Bit `i`: property `i`, pending in `pending`, is discovered in `s` (an `always` fails, a
/// `sometimes` holds).
fn discoveries<M: Model>(model: &M, properties: &[Property<M>], s: &M::State, pending: u64) -> u64 {
    let mut bits = 0u64;
    for (i, p) in properties.iter().enumerate() {
        if pending & (1 << i) != 0 {
            let holds = (p.condition)(model, s);
            if holds == (p.expectation == Expectation::Sometimes) {
                bits |= 1 << i;
            }
        }
    }
    bits
}

/// The properties not discovered yet.
fn pending_of(found: &[Option<Found>]) -> u64 {
    found
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_none())
        .fold(0, |bits, (i, _)| bits | (1 << i))
}

/// Records `at` as the first discovery of the properties in `bits` not discovered yet.
fn record(found: &mut [Option<Found>], bits: u64, at: Found) {
    for (i, f) in found.iter_mut().enumerate() {
        if f.is_none() && bits & (1 << i) != 0 {
            *f = Some(at);
        }
    }
}

/// The report of a model without initial states.
fn empty_report<M: Model + Clone>(
    model: &M,
    properties: &[Property<M>],
    start: Instant,
) -> Report<M> {
    Report {
        model: model.clone(),
        unique_states: 0,
        transitions: 0,
        max_depth: 0,
        elapsed: start.elapsed(),
        memory: Memory::default(),
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

/// Replays `path` from the (first) initial state: every state along it, the initial one
/// first. `None` if some action is not enabled where it is taken.
pub fn replay<M: Model>(model: &M, path: &[M::Action]) -> Option<Vec<M::State>>
where
    M::Action: Clone + PartialEq,
{
    let mut states = vec![model.init_states().into_iter().next()?];
    for a in path {
        let last = states.last().expect("non-empty");
        let mut enabled = Vec::new();
        model.actions(last, &mut enabled);
        if !enabled.contains(a) {
            return None;
        }
        let next = model.next_state(last, a.clone())?;
        states.push(next);
    }
    Some(states)
}

/// Numbered, human-readable steps of `path` (`1. p0 t0 HeldInsert: ...`), from
/// [`Checkable::describe_path`].
///
/// # Panics
/// If `path` does not replay from the initial state (every path the checker reports does).
pub fn describe_path<M>(model: &M, path: &[M::Action]) -> Vec<String>
where
    M: Checkable,
    M::Action: PartialEq,
{
    model
        .describe_path(path)
        .expect("a discovered path replays")
}
