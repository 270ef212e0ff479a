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

mod fingerprint;
pub mod pinned;
mod report;
mod visited;

use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash};
use std::time::{Duration, Instant};

use stateright::{Expectation, Model, Property};

use fingerprint::PassThrough;
pub use fingerprint::{fingerprint, Fingerprinter};
pub use report::{Memory, Progress, Report, Verdict};
use visited::Visited;

/// What the checker needs of a model beyond [`Model`]: both methods have defaults.
pub trait Checkable: Model<State: Hash + Clone, Action: Clone + fmt::Debug> {
    /// Writes the successor of `s` under `action` into `out` and returns `true`; `false` if
    /// the action has no successor (Stateright's `next_state` returning `None`). `action`
    /// comes from [`Model::actions`]`(s)`; `out` holds some earlier state, to be overwritten.
    /// The default calls [`Model::next_state`]; a model overrides it to reuse `out`'s
    /// allocations (`out.clone_from(s)`, then mutate: the checker passes one scratch state for
    /// all successors, and most successors are already known).
    fn successor_into(&self, s: &Self::State, action: Self::Action, out: &mut Self::State) -> bool {
        match self.next_state(s, action) {
            Some(next) => {
                *out = next;
                true
            }
            None => false,
        }
    }

    /// Symmetry reduction: the representative of `s`'s class (for example, interchangeable
    /// processes sorted), or `None` to fingerprint `s` itself. The checker deduplicates by
    /// the representative's fingerprint but keeps exploring from the concrete state, so every
    /// path it reports replays from the initial state as it is. Only sound when every
    /// property gives the same answer on every member of a class.
    fn representative(&self, s: &Self::State) -> Option<Self::State> {
        let _ = s;
        None
    }

    /// The visited set's key for `s`: equal for states the checker may merge. The default is
    /// the fingerprint of [`Checkable::representative`] (or of `s` itself); a model with
    /// symmetry may override it with a cheaper fingerprint of the class that never builds
    /// the representative state.
    fn visited_key(&self, s: &Self::State) -> u64 {
        match self.representative(s) {
            Some(r) => fingerprint(&r),
            None => fingerprint(s),
        }
    }

    /// One line saying what `action` did between `before` and `after`, for counterexample
    /// listings. The default is [`Model::format_action`].
    fn describe_step(
        &self,
        before: &Self::State,
        action: &Self::Action,
        after: &Self::State,
    ) -> String {
        let _ = (before, after);
        self.format_action(action)
    }

    /// Numbered descriptions of a path from the initial state (`1. p0 t0 HeldInsert: …`).
    /// The default replays the path and describes each step with [`Checkable::describe_step`];
    /// a model that renumbers its state (to stay finite) may override it to show stable
    /// names. `None` if the path does not replay.
    fn describe_path(&self, path: &[Self::Action]) -> Option<Vec<String>>
    where
        Self::Action: PartialEq,
    {
        let states = replay(self, path)?;
        Some(
            path.iter()
                .enumerate()
                .map(|(i, a)| {
                    format!(
                        "{}. {}",
                        i + 1,
                        self.describe_step(&states[i], a, &states[i + 1])
                    )
                })
                .collect(),
        )
    }
}

/// How to run a check.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Worker threads that generate successors (1: everything on the calling thread). The
    /// result does not depend on it: same counts, same shortest paths.
    pub threads: usize,
}

impl Default for Options {
    /// Every core the machine has.
    fn default() -> Options {
        Options {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

impl Options {
    /// One thread.
    pub const SINGLE: Options = Options { threads: 1 };

    /// `threads` worker threads (at least one).
    pub fn threads(threads: usize) -> Options {
        Options {
            threads: threads.max(1),
        }
    }
}

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

/// A successor generated by a worker: not in the visited set when its level began.
struct Candidate<S, A> {
    parent: u32,
    action: A,
    key: u64,
    /// `None` when the successor was visited before the level began (then the candidate
    /// only carries `sometimes` discoveries of the transition).
    state: Option<S>,
    /// Bit `i`: property `i` (not yet discovered when the level began) is discovered here.
    discoveries: u64,
}

/// Where a property was first discovered.
#[derive(Clone, Copy, Debug)]
enum Found {
    /// In the state with this id.
    State(u32),
    /// In the successor of state `.0` by the `.1`-th recorded transition discovery: a
    /// `sometimes` property seen on a transition into a state merged with one visited
    /// earlier (its merged fields — those the visited key leaves out — differ).
    Transition(u32, usize),
}

/// A chunk of a level for a worker.
struct Job<S, A> {
    /// The chunk's place in the frontier.
    index: usize,
    chunk: Vec<(S, u32)>,
    /// Properties not yet discovered when the level began.
    pending: u64,
    /// An empty list to fill with candidates.
    list: Vec<Candidate<S, A>>,
    /// States the worker may overwrite.
    spares: Vec<S>,
}

/// What a worker made of a [`Job`]: the candidates, and the job's vectors emptied.
struct Done<S, A> {
    index: usize,
    chunk: Vec<(S, u32)>,
    candidates: Vec<Candidate<S, A>>,
    spares: Vec<S>,
    /// Transitions generated.
    transitions: u64,
}

/// States of the frontier handed to a worker at a time.
const CHUNK: usize = 2048;

/// A worker's buffers, kept from level to level so the hot loop does not allocate.
struct Scratch<S, A> {
    /// `built[i]`: the current parent's successor under its `i`-th action.
    built: Vec<S>,
    keys: Vec<Option<u64>>,
    actions: Vec<A>,
    /// States whose expansion is done, to refill a slot whose successor moved on.
    spares: Vec<S>,
    mine: HashSet<u64, BuildHasherDefault<PassThrough>>,
}

impl<S, A> Default for Scratch<S, A> {
    fn default() -> Self {
        Scratch {
            built: Vec::new(),
            keys: Vec::new(),
            actions: Vec::new(),
            spares: Vec::new(),
            mine: HashSet::default(),
        }
    }
}

/// Checks `model` exhaustively with `options`, calling `progress` about every `every`.
///
/// Breadth-first, level by level: workers generate the successors of a level's states in
/// parallel (skipping those already visited and evaluating the properties not yet discovered),
/// then one thread merges them in frontier order — parent by parent, action by action, as a
/// single-threaded FIFO search would — assigning state ids and recording first discoveries.
/// So the unique-state count, every transition count and every first (shortest)
/// counterexample are the same for any number of threads.
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
    let mut seen = Visited::new(options.threads.max(1).next_power_of_two());
    // parents[id] = (parent id, action that led here); initial states have no parent.
    let mut parents: Vec<Option<(u32, M::Action)>> = Vec::new();
    let mut transitions = 0u64;
    let mut depth = 0usize;

    let key = |s: &M::State| model.visited_key(s);
    let discoveries = |s: &M::State, pending: u64| -> u64 {
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
    };
    let pending_of = |found: &[Option<Found>]| -> u64 {
        found
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_none())
            .fold(0, |bits, (i, _)| bits | (1 << i))
    };
    let record = |found: &mut Vec<Option<Found>>, bits: u64, at: Found| {
        for (i, f) in found.iter_mut().enumerate() {
            if f.is_none() && bits & (1 << i) != 0 {
                *f = Some(at);
            }
        }
    };

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

    // Several threads, level by level. The workers live for the whole run (so their
    // allocator caches do too) and take one chunk of the frontier at a time: they build each
    // parent's successors in reused slots and hand on, as candidates, those not visited before
    // the level began (and not produced earlier in the chunk), moved out of their slots; a
    // slot is refilled with an expanded parent, so states are recycled, not freed and
    // allocated again. The calling thread then merges the level in frontier order.
    let expand = |w: &mut Scratch<M::State, M::Action>,
                  chunk: &mut Vec<(M::State, u32)>,
                  seen: &Visited,
                  pending: u64,
                  out: &mut Vec<Candidate<M::State, M::Action>>| {
        let mut transitions = 0u64;
        // Keys this chunk already produced a new candidate for: a later successor with the
        // same key comes after it in merge order too, so it cannot be the one that is new.
        w.mine.clear();
        for (s, id) in chunk.drain(..) {
            model.actions(&s, &mut w.actions);
            while w.built.len() < w.actions.len() {
                w.built.push(s.clone());
            }
            w.keys.clear();
            for (action, out) in w.actions.iter().zip(&mut w.built) {
                let k = model
                    .successor_into(&s, action.clone(), out)
                    .then(|| key(out));
                if let Some(k) = k {
                    seen.prefetch(k);
                }
                w.keys.push(k);
            }
            let mut parent = Some(s);
            for (i, action) in w.actions.drain(..).enumerate() {
                let Some(k) = w.keys[i] else { continue };
                transitions += 1;
                if seen.contains(k) || !w.mine.insert(k) {
                    // Visited: only a `sometimes` property can still be discovered here (the
                    // key may leave out fields that such a property reads).
                    if pending & sometimes != 0 {
                        let bits = discoveries(&w.built[i], pending & sometimes);
                        if bits != 0 {
                            out.push(Candidate {
                                parent: id,
                                action,
                                key: k,
                                discoveries: bits,
                                state: None,
                            });
                        }
                    }
                    continue;
                }
                let spare = match parent.take().or_else(|| w.spares.pop()) {
                    Some(spare) => spare,
                    None => w.built[i].clone(),
                };
                out.push(Candidate {
                    parent: id,
                    action,
                    key: k,
                    discoveries: discoveries(&w.built[i], pending),
                    state: Some(std::mem::replace(&mut w.built[i], spare)),
                });
            }
            if w.spares.len() < CHUNK {
                w.spares.extend(parent);
            }
        }
        transitions
    };

    // The frontier in chunks; emptied chunks and candidate lists are reused.
    let mut chunks: Vec<Vec<(M::State, u32)>> = Vec::new();
    let mut empty_chunks: Vec<Vec<(M::State, u32)>> = Vec::new();
    let mut lists: Vec<Vec<Candidate<M::State, M::Action>>> = Vec::new();
    let push = |chunks: &mut Vec<Vec<(M::State, u32)>>,
                empty: &mut Vec<Vec<(M::State, u32)>>,
                entry: (M::State, u32)| {
        match chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(entry),
            _ => {
                let mut chunk = empty.pop().unwrap_or_else(|| Vec::with_capacity(CHUNK));
                chunk.push(entry);
                chunks.push(chunk);
            }
        }
    };
    for entry in frontier.drain(..) {
        push(&mut chunks, &mut empty_chunks, entry);
    }
    let seen = std::sync::RwLock::new(seen);
    let (job_tx, job_rx) = std::sync::mpsc::channel::<Job<M::State, M::Action>>();
    let job_rx = std::sync::Mutex::new(job_rx);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<Done<M::State, M::Action>>();
    std::thread::scope(|scope| {
        for _ in 0..options.threads.min(chunks.len()) {
            let (job_rx, done_tx, seen, expand) = (&job_rx, done_tx.clone(), &seen, &expand);
            scope.spawn(move || {
                let mut w = Scratch::default();
                loop {
                    let job = job_rx.lock().expect("no worker panicked").recv();
                    let Ok(mut job) = job else { break };
                    w.spares.append(&mut job.spares);
                    let transitions = {
                        let seen = seen.read().expect("no merge panicked");
                        expand(&mut w, &mut job.chunk, &seen, job.pending, &mut job.list)
                    };
                    let done = Done {
                        index: job.index,
                        chunk: job.chunk,
                        candidates: job.list,
                        spares: job.spares,
                        transitions,
                    };
                    if done_tx.send(done).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        // States of candidates that were not new, and emptied spare lists: back to workers.
        let mut returned: Vec<M::State> = Vec::new();
        let mut spare_lists: Vec<Vec<M::State>> = Vec::new();
        while !chunks.is_empty() {
            let pending = pending_of(&found);
            let n = chunks.len();
            for (index, chunk) in chunks.drain(..).enumerate() {
                let mut spares = spare_lists.pop().unwrap_or_default();
                spares.extend(returned.drain(returned.len().saturating_sub(CHUNK / 4)..));
                let job = Job {
                    index,
                    chunk,
                    pending,
                    list: lists.pop().unwrap_or_default(),
                    spares,
                };
                job_tx.send(job).expect("workers run until the search ends");
            }
            returned.clear();
            let mut results: Vec<Option<Done<M::State, M::Action>>> =
                (0..n).map(|_| None).collect();
            for _ in 0..n {
                let done = done_rx.recv().expect("a worker panicked");
                let at = done.index;
                results[at] = Some(done);
            }
            let results: Vec<Done<M::State, M::Action>> = results
                .into_iter()
                .map(|d| d.expect("every chunk is expanded"))
                .collect();
            // Merge in frontier order: exactly the ids and first discoveries of a FIFO search.
            // First which candidates are new (the visited set's shards in parallel), then ids.
            let keys: Vec<(u64, bool)> = results
                .iter()
                .flat_map(|d| d.candidates.iter().map(|c| (c.key, c.state.is_some())))
                .collect();
            let mut is_new = seen
                .write()
                .expect("no worker panicked")
                .insert_all(&keys)
                .into_iter();
            for done in results {
                transitions += done.transitions;
                empty_chunks.push(done.chunk);
                spare_lists.push(done.spares);
                let mut list = done.candidates;
                for c in list.drain(..) {
                    match (c.state, is_new.next()) {
                        (Some(state), Some(true)) => {
                            let id = u32::try_from(parents.len()).expect("more than 4G states");
                            parents.push(Some((c.parent, c.action)));
                            record(&mut found, c.discoveries, Found::State(id));
                            push(&mut chunks, &mut empty_chunks, (state, id));
                        }
                        (state, _) => {
                            returned.extend(state);
                            let bits = c.discoveries & sometimes & pending_of(&found);
                            if bits != 0 {
                                transition_actions.push(c.action);
                                let at = Found::Transition(c.parent, transition_actions.len() - 1);
                                record(&mut found, bits, at);
                            }
                        }
                    }
                }
                lists.push(list);
            }
            if !chunks.is_empty() {
                depth += 1;
            }
            if let Some(at) = next_report {
                if Instant::now() >= at {
                    progress(Progress {
                        unique_states: parents.len(),
                        queued: chunks.iter().map(Vec::len).sum(),
                        depth,
                        elapsed: start.elapsed(),
                    });
                    next_report = at.checked_add(every);
                }
            }
        }
        drop(job_tx);
    });
    let seen = seen.into_inner().expect("no worker panicked");

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
    debug_assert_eq!(seen.len(), parents.len());
    let memory = Memory {
        visited_set_bytes: seen.bytes(),
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
