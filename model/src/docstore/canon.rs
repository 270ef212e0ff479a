//! Keeping the state space finite and small: dense renumbering of sequence numbers and epochs
//! after every step, and the symmetry representative (interchangeable clients sorted).

use std::hash::{Hash, Hasher};

use crate::docstore::protocol::{Client, ClientId, Epoch, State};
use crate::docstore::requests::Index;
use crate::docstore::scenario::{Role, Scenario};
use crate::docstore::store::{Doc, Owner, SeqNo, Shard, Source, Token};

/// At most this many distinct sequence numbers or epochs are referenced in one state (a lock
/// document, a fence, and a token or epoch per client; clients are at most a handful).
const MAX_REFS: usize = 16;

/// A small sorted set on the stack (renumbering runs after every step: no allocation).
struct Refs<T> {
    items: [T; MAX_REFS],
    len: usize,
}

impl<T: Copy + Ord + Default> Refs<T> {
    fn new() -> Self {
        Refs {
            items: [T::default(); MAX_REFS],
            len: 0,
        }
    }

    fn push(&mut self, x: T) {
        assert!(
            self.len < MAX_REFS,
            "more than {MAX_REFS} referenced values"
        );
        self.items[self.len] = x;
        self.len += 1;
    }

    /// Sorts and deduplicates; returns the distinct values.
    fn finish(&mut self) -> &[T] {
        let v = &mut self.items[..self.len];
        v.sort_unstable();
        let mut n = 0;
        for i in 0..v.len() {
            if n == 0 || v[i] != v[n - 1] {
                v[n] = v[i];
                n += 1;
            }
        }
        self.len = n;
        &self.items[..n]
    }
}

/// The rank of `x` among the sorted, deduplicated `values`.
fn rank<T: Ord>(values: &[T], x: &T) -> usize {
    values.binary_search(x).expect("a referenced value")
}

impl Scenario {
    /// Renumbers what only matters by order, so repeated acquisitions do not grow the space:
    ///
    /// - the lock index's `_seq_no`s — of its documents, of the tokens clients keep, and of the
    ///   fence in the data document — onto `0..n` in order, with `n` the next one (every write
    ///   takes a sequence number above all existing ones, and only equality and order are ever
    ///   compared);
    /// - the data index's own `_seq_no`, which nothing reads, to 0;
    /// - the ghost epochs onto `0..n` in order.
    pub(crate) fn canonicalize(&self, s: &mut State) {
        let mut refs = Refs::<SeqNo>::new();
        s.locks.docs().for_each(|(_, d)| refs.push(d.seq_no));
        refs.push(s.locks.next_seq_no());
        s.clients
            .iter()
            .flat_map(|cl| cl.token.into_iter().chain(cl.renewed))
            .for_each(|t| refs.push(t.seq_no));
        s.files
            .docs()
            .filter_map(|(_, d)| d.source.fence())
            .for_each(|t| refs.push(t.seq_no));
        match &s.undo {
            Some((Index::Locks, shard)) => shard.docs().for_each(|(_, d)| refs.push(d.seq_no)),
            Some((Index::Files, shard)) => shard
                .docs()
                .filter_map(|(_, d)| d.source.fence())
                .for_each(|t| refs.push(t.seq_no)),
            None => {}
        }
        let seqs = refs.finish();
        // Dense: the referenced values are 0..n and the next one is n. (After the lock index
        // is re-created, the next sequence number can lie below older tokens: it is then
        // ranked among them too, which keeps every comparison a later write can make.)
        let dense = seqs.iter().enumerate().all(|(i, &x)| i as SeqNo == x)
            && s.locks.next_seq_no() == seqs.len() as SeqNo - 1;
        if !dense {
            let renamed = |x: SeqNo| rank(seqs, &x) as SeqNo;
            let token = |t: Token| Token {
                seq_no: renamed(t.seq_no),
                ..t
            };
            let next = renamed(s.locks.next_seq_no());
            s.locks.renumber(renamed, next);
            for cl in &mut s.clients {
                cl.token = cl.token.map(token);
                cl.renewed = cl.renewed.map(token);
            }
            s.files.map_sources(|src| src.map_fence(token));
            match &mut s.undo {
                Some((Index::Locks, shard)) => shard.renumber(renamed, next),
                Some((Index::Files, shard)) => shard.map_sources(|src| src.map_fence(token)),
                None => {}
            }
        }
        if let Some((Index::Locks, shard)) = &mut s.undo {
            // Not read by a rollback (the sequence number goes on): kept equal to the index's.
            let next = s.locks.next_seq_no();
            if shard.next_seq_no() != next {
                shard.renumber(|x| x, next);
            }
        }
        if self.variant.conditions_writes() && self.writes.fenced() {
            self.renumber_data_index(s);
        } else {
            if s.files.next_seq_no() != 1 {
                s.files.renumber(|_| 0, 1);
            }
            if let Some((Index::Files, shard)) = &mut s.undo {
                if shard.next_seq_no() != 1 {
                    shard.renumber(|_| 0, 1);
                }
            }
        }

        let mut refs = Refs::<Epoch>::new();
        s.clients
            .iter()
            .filter_map(|cl| cl.epoch)
            .for_each(|e| refs.push(e));
        s.written.into_iter().for_each(|e| refs.push(e));
        let epochs = refs.finish();
        if epochs.iter().enumerate().any(|(i, &e)| i as Epoch != e) {
            let renamed = |e: Epoch| rank(epochs, &e) as Epoch;
            for cl in &mut s.clients {
                cl.epoch = cl.epoch.map(renamed);
            }
            s.written = s.written.map(renamed);
        }
    }

    /// The fix's conditioned writes read the data index's `_seq_no`: it is renumbered like the
    /// lock index's — the data document's, a rolled-back copy's, and the ones clients read —
    /// onto `0..n` in order, with `n` the next one (the data index is never re-created, so
    /// the next sequence number is always above every referenced one).
    fn renumber_data_index(&self, s: &mut State) {
        let mut refs = Refs::<SeqNo>::new();
        s.files.docs().for_each(|(_, d)| refs.push(d.seq_no));
        refs.push(s.files.next_seq_no());
        s.clients
            .iter()
            .filter_map(|cl| cl.read)
            .for_each(|t| refs.push(t.seq_no));
        if let Some((Index::Files, shard)) = &s.undo {
            shard.docs().for_each(|(_, d)| refs.push(d.seq_no));
        }
        let seqs = refs.finish();
        let dense = seqs.iter().enumerate().all(|(i, &x)| i as SeqNo == x);
        if dense {
            return;
        }
        let renamed = |x: SeqNo| rank(seqs, &x) as SeqNo;
        let next = renamed(s.files.next_seq_no());
        s.files.renumber(renamed, next);
        for cl in &mut s.clients {
            cl.read = cl.read.map(|t| Token {
                seq_no: renamed(t.seq_no),
                ..t
            });
        }
        if let Some((Index::Files, shard)) = &mut s.undo {
            shard.renumber(renamed, next);
        }
    }

    /// Symmetry reduction: clients of the same role are interchangeable, so the representative
    /// sorts each role's clients by their state — together with whether the lock document
    /// names them as owner, the only place a client id is stored — and renames the owner.
    /// Every property counts clients by role, so it gives the same answer on every member of a
    /// class. `None` when symmetry is off or the order is already canonical.
    pub(crate) fn symmetric_representative(&self, s: &State) -> Option<State> {
        if !self.symmetry {
            return None;
        }
        let ids = self.variant.lock_ids();
        let owners = |shard: &Shard<&'static str>| -> [Option<Owner>; 2] {
            let owner = |i: usize| {
                ids.get(i)
                    .and_then(|id| shard.get(id))
                    .and_then(|d| d.source.owner())
            };
            [owner(0), owner(1)]
        };
        let named = owners(&s.locks);
        let undone = match &s.undo {
            Some((Index::Locks, shard)) => owners(shard),
            _ => [None, None],
        };
        let key = |c: &ClientId| {
            let of = |o: Option<Owner>| {
                o.filter(|o| o.client == *c && *o != Owner::INSTALLER)
                    .map(|o| o.incarnation)
            };
            (s.clients[*c as usize], named.map(of), undone.map(of))
        };
        // perm[new] = old.
        let mut perm: Vec<ClientId> = (0..self.clients).collect();
        let readers = (0..self.clients)
            .filter(|&c| self.role(c) == Role::Reader)
            .count();
        perm[..readers].sort_by_key(key);
        perm[readers..].sort_by_key(key);
        if perm.iter().enumerate().all(|(i, &c)| i as ClientId == c) {
            return None;
        }
        let mut new_of_old = vec![0; perm.len()];
        for (new, &old) in perm.iter().enumerate() {
            new_of_old[old as usize] = new as ClientId;
        }
        let mut rep = s.clone();
        for (new, &old) in perm.iter().enumerate() {
            rep.clients[new] = s.clients[old as usize];
        }
        let rename = |src: Source| {
            src.map_owner(|o| {
                if o == Owner::INSTALLER {
                    return o;
                }
                Owner {
                    client: new_of_old[o.client as usize],
                    ..o
                }
            })
        };
        rep.locks.map_sources(rename);
        if let Some((Index::Locks, shard)) = &mut rep.undo {
            shard.map_sources(rename);
        }
        Some(rep)
    }
}

// ---------------------------------------------------------------------------------------------
// Fingerprints: every number hashed as one `usize` (the checker's fingerprinter writes values
// below 255 as one byte), the same fields `Eq` compares.
// ---------------------------------------------------------------------------------------------

fn num<H: Hasher>(h: &mut H, x: u64) {
    h.write_usize(x as usize);
}

fn opt<H: Hasher>(h: &mut H, x: Option<u64>) {
    match x {
        None => h.write_usize(0),
        Some(x) => h.write_usize(x as usize + 1),
    }
}

fn token<H: Hasher>(h: &mut H, t: Option<Token>) {
    opt(h, t.map(|t| t.primary_term));
    opt(h, t.map(|t| t.seq_no));
}

fn owner<H: Hasher>(h: &mut H, o: Owner) {
    num(h, o.client.into());
    num(h, o.incarnation.into());
}

fn source<H: Hasher>(h: &mut H, s: Source) {
    match s {
        Source::Empty => num(h, 0),
        Source::ProcessId(o) => {
            num(h, 1);
            owner(h, o);
        }
        Source::Shared { lock_count } => {
            num(h, 2);
            num(h, lock_count.into());
        }
        Source::Exclusive => num(h, 3),
        Source::Lease { owner: o, expires } => {
            num(h, 4);
            owner(h, o);
            num(h, expires);
        }
        Source::Data { fence } => {
            num(h, 5);
            token(h, fence);
        }
    }
}

fn shard<H: Hasher>(h: &mut H, s: &Shard<&'static str>) {
    num(h, s.next_seq_no());
    num(h, s.primary_term());
    for (id, d) in s.docs() {
        let Doc {
            source: src,
            seq_no,
            primary_term,
        } = *d;
        id.hash(h);
        source(h, src);
        num(h, seq_no);
        num(h, primary_term);
    }
    h.write_usize(usize::MAX); // end of documents
}

fn client<H: Hasher>(h: &mut H, c: &Client) {
    let Client {
        alive,
        incarnation,
        pc,
        token: t,
        deadline,
        epoch,
        session,
        bulk,
        read,
        renewed,
    } = *c;
    num(h, alive.into());
    num(h, incarnation.into());
    num(h, pc as u64);
    token(h, t);
    opt(h, deadline);
    opt(h, epoch.map(u64::from));
    num(h, session as u64);
    num(h, bulk.into());
    token(h, read);
    token(h, renewed);
}

impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        shard(h, &self.locks);
        shard(h, &self.files);
        for c in &self.clients {
            client(h, c);
        }
        for b in self.budget.counts() {
            num(h, b.into());
        }
        opt(h, self.written.map(u64::from));
        num(h, self.orphaned.into());
        num(h, self.last as u64);
        num(h, self.lost_update.into());
        num(h, self.clock_offset);
        num(h, self.reinstall_pending.into());
        match &self.undo {
            None => num(h, 0),
            Some((index, before)) => {
                num(h, 1 + *index as u64);
                shard(h, before);
            }
        }
    }
}
