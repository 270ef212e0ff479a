//! The search with several threads: breadth-first, level by level, with the sequential
//! search's result (the same ids, first discoveries and shortest paths).
//!
//! Every thread — the calling one and `threads - 1` helpers — takes chunks of a level in two
//! phases. **Expand**: build each parent's successors and claim their keys in the shared
//! visited set ([`Claims`]), which keeps per key the lowest position (parent id, action
//! index) that reached it in this level; a successor that is old, or already claimed from a
//! lower position, is dropped at once, the rest are kept as candidates. **Resolve**: a
//! candidate whose position is still its key's claim is the state's first discovery in
//! sequential order — it joins the next level, in the chunk's order. The calling thread then
//! appends the chunks' parent links and applies their first discoveries, chunk by chunk, in
//! order (a few operations per new state), and the next level starts.
//!
//! Before (checker v4) the workers only read the visited set and the calling thread inserted
//! the level's candidates and moved them into the next frontier while the workers waited:
//! two probes per new state, a hash set per chunk, a serial pass over every candidate
//! (`docs/performance.md`, "Checker v5").

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, Mutex, RwLock};

use stateright::Property;

use super::claims::{floor, position, Claim, Claims};
use super::{discoveries, pending_of, record, Checkable, Found};

/// Parents in a chunk of the initial level; later chunks are what a chunk of the level
/// before kept (split when over 4 × this). Small enough that the last chunk of a phase leaves
/// the other thread idle for a fraction of a millisecond (a quarter of the 1,024 first tried:
/// 2.00–2.07 cpu s against 2.08–2.16 for the two-thread run, 02:04, 4 pairs), large enough
/// that taking a chunk costs nothing.
const CHUNK: usize = 256;

/// Chunks expanded again after the table was full (for the test that makes it happen).
#[cfg(test)]
pub(super) static REDONE: AtomicUsize = AtomicUsize::new(0);

/// A successor kept by the expansion (its state is the chunk's next `kept` one), or one that
/// can only carry `sometimes` discoveries of its transition (its key was visited, or claimed
/// from a lower position).
struct Candidate<A> {
    parent: u32,
    action: A,
    key: u64,
    position: u64,
    kept: bool,
    /// Bit `i`: property `i` (pending when the level began) is discovered here.
    discoveries: u64,
}

/// A first discovery within a chunk, in the chunk's order.
enum Event<A> {
    /// In the chunk's `index`-th new state.
    State { index: u32, bits: u64 },
    /// On a transition into a state discovered before it.
    Transition { parent: u32, action: A, bits: u64 },
}

/// A chunk of a level and what the two phases made of it.
struct Chunk<S, A> {
    /// The parents; their ids are `first_id..`.
    states: Vec<S>,
    first_id: u32,
    candidates: Vec<Candidate<A>>,
    /// The kept candidates' states, in order. Resolving removes the few that another chunk
    /// reached from a lower position, and what is left is the next level's part: each new
    /// state is moved once, into this vector, as in the one-thread search.
    kept: Vec<S>,
    transitions: u64,
    /// The expansion stopped at a full table: grow it and expand the chunk again.
    full: bool,
    /// The next level's states found here, in order, in vectors of at most [`CHUNK`].
    winners: Vec<Vec<S>>,
    /// `(parent id, action)` of each of them.
    links: Vec<(u32, A)>,
    events: Vec<Event<A>>,
}

impl<S, A> Chunk<S, A> {
    fn new(states: Vec<S>, first_id: u32) -> Self {
        Chunk {
            states,
            first_id,
            candidates: Vec::new(),
            kept: Vec::new(),
            transitions: 0,
            full: false,
            winners: Vec::new(),
            links: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// A thread's buffers, kept for the whole run so the hot loop does not allocate.
struct Scratch<S, A> {
    /// `built[i]`: the current parent's successor under its `i`-th action.
    built: Vec<S>,
    keys: Vec<Option<u64>>,
    actions: Vec<A>,
    /// States whose expansion is done (or that lost), to refill a slot whose successor moved
    /// on.
    spares: Vec<S>,
    /// Emptied state vectors.
    vecs: Vec<Vec<S>>,
    /// Indices in a chunk's `kept` of the states that lost.
    lost: Vec<usize>,
}

impl<S, A> Default for Scratch<S, A> {
    fn default() -> Self {
        Scratch {
            built: Vec::new(),
            keys: Vec::new(),
            actions: Vec::new(),
            spares: Vec::new(),
            vecs: Vec::new(),
            lost: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Expand,
    Resolve,
    /// Move blocks of the visited set into its grown table.
    Rehash,
    Stop,
}

/// What the threads share. The calling thread changes it only between phases, while the
/// helpers wait at the barrier.
struct Shared<S, A> {
    phase: Mutex<Phase>,
    chunks: RwLock<Vec<Mutex<Chunk<S, A>>>>,
    /// Indices of the chunks this phase works on, taken in turn through `next`.
    todo: RwLock<Vec<usize>>,
    next: AtomicUsize,
    claims: RwLock<Claims>,
    /// The current level's lowest position, and the properties pending when it began.
    level: Mutex<(u64, u64)>,
    barrier: Barrier,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// What the search adds to the sequential part's results.
pub(super) struct Outcome<A> {
    pub transitions: u64,
    pub depth: usize,
    pub visited_bytes: usize,
    pub visited_len: usize,
    pub found: Vec<Option<Found>>,
    pub transition_actions: Vec<A>,
}

/// Explores everything reachable from `frontier` (the initial states, whose ids are their
/// indices in `parents`) with `threads` threads.
#[allow(clippy::too_many_arguments)]
pub(super) fn search<M>(
    model: &M,
    properties: &[Property<M>],
    frontier: Vec<(M::State, u32)>,
    threads: usize,
    mut found: Vec<Option<Found>>,
    parents: &mut Vec<Option<(u32, M::Action)>>,
    mut progress: impl FnMut(usize, usize, usize),
) -> Outcome<M::Action>
where
    M: Checkable + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    let sometimes = sometimes_of(properties);
    let claims = Claims::new(frontier.len() * 2);
    let mut first = Vec::new();
    for (s, id) in frontier {
        let (claim, inserted) = claims.claim(model.visited_key(&s), position(id, 0), 0);
        debug_assert!(claim == Claim::Kept && inserted && id == first.len() as u32);
        claims.add_len(1);
        first.push(s);
    }
    let mut chunks = Vec::new();
    for (i, states) in split(first).into_iter().enumerate() {
        chunks.push(Chunk::new(states, (i * CHUNK) as u32));
    }
    let shared = Shared {
        phase: Mutex::new(Phase::Expand),
        chunks: RwLock::new(Vec::new()),
        todo: RwLock::new(Vec::new()),
        next: AtomicUsize::new(0),
        claims: RwLock::new(claims),
        level: Mutex::new((0, 0)),
        barrier: Barrier::new(threads),
        panic: Mutex::new(None),
    };
    let work = |w: &mut Scratch<M::State, M::Action>| {
        let phase = *shared.phase.lock().expect("phases do not panic");
        let (floor, pending) = *shared.level.lock().expect("phases do not panic");
        let chunks = shared.chunks.read().expect("phases do not panic");
        let todo = shared.todo.read().expect("phases do not panic");
        let claims = shared.claims.read().expect("phases do not panic");
        loop {
            let t = shared.next.fetch_add(1, Relaxed);
            let Some(&i) = todo.get(t) else { break };
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match phase {
                Phase::Expand => {
                    let mut chunk = chunks[i].lock().expect("a chunk is taken once");
                    expand(
                        model, properties, sometimes, w, &mut chunk, &claims, floor, pending,
                    );
                }
                Phase::Resolve => {
                    let mut chunk = chunks[i].lock().expect("a chunk is taken once");
                    resolve(sometimes, w, &mut chunk, &claims);
                }
                Phase::Rehash => claims.move_block(i),
                Phase::Stop => {}
            }));
            if let Err(panic) = run {
                shared
                    .panic
                    .lock()
                    .expect("held briefly")
                    .get_or_insert(panic);
                break;
            }
        }
    };
    let mut transitions = 0u64;
    let mut depth = 0usize;
    let mut transition_actions = Vec::new();
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(|| {
                let mut w = Scratch::default();
                loop {
                    shared.barrier.wait();
                    if *shared.phase.lock().expect("phases do not panic") == Phase::Stop {
                        break;
                    }
                    work(&mut w);
                    shared.barrier.wait();
                }
            });
        }
        let mut w = Scratch::default();
        // Runs one phase on the chunks `todo` with every thread; on a panic in any of them,
        // stops the helpers and panics with its message.
        let mut run = |phase: Phase, todo: Vec<usize>| {
            *shared.phase.lock().expect("phases do not panic") = phase;
            *shared.todo.write().expect("phases do not panic") = todo;
            shared.next.store(0, Relaxed);
            shared.barrier.wait();
            work(&mut w);
            shared.barrier.wait();
            if let Some(panic) = shared.panic.lock().expect("held briefly").take() {
                *shared.phase.lock().expect("phases do not panic") = Phase::Stop;
                shared.barrier.wait();
                let message = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                panic!("a worker panicked: {message}");
            }
        };
        // Moves the blocks of a rehash under way, with every thread.
        let rehash = |run: &mut dyn FnMut(Phase, Vec<usize>), blocks: usize| {
            if blocks != 0 {
                run(Phase::Rehash, (0..blocks).collect());
                shared
                    .claims
                    .write()
                    .expect("phases do not panic")
                    .finish_rehash();
            }
        };
        // New states per parent in the last level (at most 4: a one-state level followed by a
        // wide one must not reserve room for a square): sizes the table for the next level. A
        // level that brings more makes a chunk find the table full; the table then grows and
        // the chunk is expanded again.
        let mut growth = 4.0f64;
        while !chunks.is_empty() {
            let level_first = chunks[0].first_id;
            let frontier: usize = chunks.iter().map(|c| c.states.len()).sum();
            {
                let mut claims = shared.claims.write().expect("phases do not panic");
                let expected = (frontier as f64 * growth.clamp(1.0, 4.0) * 1.5) as usize;
                let len = claims.len();
                let blocks = claims.reserve(len.saturating_add(expected));
                drop(claims);
                rehash(&mut run, blocks);
            }
            *shared.level.lock().expect("phases do not panic") =
                (floor(level_first), pending_of(&found));
            let n = chunks.len();
            *shared.chunks.write().expect("phases do not panic") =
                chunks.drain(..).map(Mutex::new).collect();
            let mut todo: Vec<usize> = (0..n).collect();
            loop {
                run(Phase::Expand, todo);
                todo = shared
                    .chunks
                    .read()
                    .expect("phases do not panic")
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.lock().expect("phases do not panic").full)
                    .map(|(i, _)| i)
                    .collect();
                if todo.is_empty() {
                    break;
                }
                #[cfg(test)]
                REDONE.fetch_add(todo.len(), Relaxed);
                let blocks = shared.claims.write().expect("phases do not panic").grow();
                rehash(&mut run, blocks);
            }
            run(Phase::Resolve, (0..n).collect());
            // In chunk order: the sequential search's ids and first discoveries.
            let level: Vec<Chunk<M::State, M::Action>> =
                std::mem::take(&mut *shared.chunks.write().expect("phases do not panic"))
                    .into_iter()
                    .map(|c| c.into_inner().expect("phases do not panic"))
                    .collect();
            let before = parents.len();
            for mut c in level {
                let base = u32::try_from(parents.len()).expect("more than 4G states");
                transitions += c.transitions;
                for event in c.events.drain(..) {
                    match event {
                        Event::State { index, bits } => {
                            record(&mut found, bits, Found::State(base + index));
                        }
                        Event::Transition {
                            parent,
                            action,
                            bits,
                        } => {
                            let bits = bits & pending_of(&found);
                            if bits != 0 {
                                transition_actions.push(action);
                                let at = Found::Transition(parent, transition_actions.len() - 1);
                                record(&mut found, bits, at);
                            }
                        }
                    }
                }
                parents.extend(c.links.drain(..).map(Some));
                let mut id = base;
                for states in c.winners.drain(..) {
                    let next_id = id + states.len() as u32;
                    chunks.push(Chunk::new(states, id));
                    id = next_id;
                }
            }
            u32::try_from(parents.len()).expect("more than 4G states");
            let new = parents.len() - before;
            growth = new as f64 / frontier.max(1) as f64;
            if new != 0 {
                depth += 1;
            }
            progress(parents.len(), new, depth);
        }
        *shared.phase.lock().expect("phases do not panic") = Phase::Stop;
        shared.barrier.wait();
    });
    let claims = shared.claims.into_inner().expect("phases do not panic");
    Outcome {
        transitions,
        depth,
        visited_bytes: claims.bytes(),
        visited_len: claims.len(),
        found,
        transition_actions,
    }
}

/// The bits of the `sometimes` properties.
fn sometimes_of<M: stateright::Model>(properties: &[Property<M>]) -> u64 {
    properties
        .iter()
        .enumerate()
        .filter(|(_, p)| p.expectation == stateright::Expectation::Sometimes)
        .fold(0, |bits, (i, _)| bits | (1 << i))
}

/// `states` in vectors of at most [`CHUNK`].
fn split<S>(mut states: Vec<S>) -> Vec<Vec<S>> {
    let mut out = Vec::new();
    while states.len() > CHUNK {
        let rest = states.split_off(CHUNK);
        out.push(std::mem::replace(&mut states, rest));
    }
    if !states.is_empty() {
        out.push(states);
    }
    out
}

/// Phase 1 on one chunk: each parent's successors are built in reused slots and their keys'
/// slots prefetched (so the cache misses overlap), then claimed in parent and action order.
#[allow(clippy::too_many_arguments)]
fn expand<M: Checkable>(
    model: &M,
    properties: &[Property<M>],
    sometimes: u64,
    w: &mut Scratch<M::State, M::Action>,
    chunk: &mut Chunk<M::State, M::Action>,
    claims: &Claims,
    floor: u64,
    pending: u64,
) {
    // A chunk expanded again after a full table starts over (its claims stay, and claiming
    // the same transition again keeps it).
    chunk.candidates.clear();
    w.spares.append(&mut chunk.kept);
    if chunk.kept.capacity() == 0 {
        chunk.kept = w.vecs.pop().unwrap_or_default();
    }
    // Room for twice the parents: growing the vector would move every state again.
    chunk.kept.reserve(chunk.states.len() * 2);
    chunk.transitions = 0;
    chunk.full = false;
    let mut inserted = 0usize;
    'parents: for (j, s) in chunk.states.iter().enumerate() {
        let id = chunk.first_id + j as u32;
        model.actions(s, &mut w.actions);
        assert!(w.actions.len() < 1 << 16, "at most 65535 actions per state");
        while w.built.len() < w.actions.len() {
            w.built.push(s.clone());
        }
        w.keys.clear();
        for (action, out) in w.actions.iter().zip(&mut w.built) {
            let k = model
                .successor_into(s, action.clone(), out)
                .then(|| model.visited_key(out));
            if let Some(k) = k {
                claims.prefetch(k);
            }
            w.keys.push(k);
        }
        for (i, action) in w.actions.drain(..).enumerate() {
            let Some(key) = w.keys[i] else { continue };
            let at = position(id, i);
            let (claim, new) = claims.claim(key, at, floor);
            inserted += usize::from(new);
            match claim {
                Claim::Full => {
                    chunk.full = true; // (dropping the drain empties `w.actions`)
                    break 'parents;
                }
                Claim::Kept => {
                    chunk.transitions += 1;
                    let bits = discoveries(model, properties, &w.built[i], pending);
                    let spare = match w.spares.pop() {
                        Some(spare) => spare,
                        None => w.built[i].clone(),
                    };
                    chunk.kept.push(std::mem::replace(&mut w.built[i], spare));
                    chunk.candidates.push(Candidate {
                        parent: id,
                        action,
                        key,
                        position: at,
                        kept: true,
                        discoveries: bits,
                    });
                }
                Claim::Old | Claim::Lost => {
                    chunk.transitions += 1;
                    // Visited: only a `sometimes` property can still be discovered here (the
                    // key may leave out fields that such a property reads).
                    if pending & sometimes != 0 {
                        let bits = discoveries(model, properties, &w.built[i], pending & sometimes);
                        if bits != 0 {
                            chunk.candidates.push(Candidate {
                                parent: id,
                                action,
                                key,
                                position: at,
                                kept: false,
                                discoveries: bits,
                            });
                        }
                    }
                }
            }
        }
    }
    claims.add_len(inserted);
    if !chunk.full && w.spares.len() < 4 * CHUNK {
        w.spares.append(&mut chunk.states);
    }
}

/// Phase 2 on one chunk: in order, a candidate that still holds its key's claim is new (it
/// moves into the next level), any other can only carry a transition discovery.
fn resolve<S, A: Clone>(
    sometimes: u64,
    w: &mut Scratch<S, A>,
    chunk: &mut Chunk<S, A>,
    claims: &Claims,
) {
    let mut seen = 0u64;
    let mut index = 0u32;
    let mut parents = std::mem::take(&mut chunk.states);
    parents.clear();
    if w.vecs.len() < 64 {
        w.vecs.push(parents);
    }
    w.lost.clear();
    let candidates = &chunk.candidates;
    const AHEAD: usize = 8;
    for c in candidates.iter().take(AHEAD) {
        claims.prefetch(c.key);
    }
    let mut k = 0usize;
    for (i, c) in candidates.iter().enumerate() {
        if let Some(c) = candidates.get(i + AHEAD) {
            if c.kept {
                claims.prefetch(c.key);
            }
        }
        let won = c.kept && claims.resolve(c.key, c.position);
        let bits = if won {
            c.discoveries & !seen
        } else {
            c.discoveries & sometimes & !seen
        };
        seen |= bits;
        if won {
            chunk.links.push((c.parent, c.action.clone()));
            if bits != 0 {
                chunk.events.push(Event::State { index, bits });
            }
            index += 1;
        } else {
            if c.kept {
                w.lost.push(k);
            }
            if bits != 0 {
                chunk.events.push(Event::Transition {
                    parent: c.parent,
                    action: c.action.clone(),
                    bits,
                });
            }
        }
        k += usize::from(c.kept);
    }
    chunk.candidates.clear();
    let mut kept = std::mem::take(&mut chunk.kept);
    if !w.lost.is_empty() {
        // Move the winners to the front, in order, and the losers to the spares.
        let mut lost = w.lost.iter().copied().peekable();
        let mut write = 0;
        for read in 0..kept.len() {
            if lost.peek() == Some(&read) {
                lost.next();
                continue;
            }
            kept.swap(write, read);
            write += 1;
        }
        let room = (4 * CHUNK).saturating_sub(w.spares.len());
        w.spares.extend(kept.drain(write..).take(room));
        kept.truncate(write);
    }
    if kept.is_empty() {
        w.vecs.push(kept);
    } else if kept.len() > 4 * CHUNK {
        chunk.winners.extend(split(kept));
    } else {
        chunk.winners.push(kept);
    }
}
