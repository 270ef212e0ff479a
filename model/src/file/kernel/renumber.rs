//! Renumbering inode generations densely ([`Os::compact`]), so that a model in which files
//! are created again and again keeps a finite state space.

use super::{Inode, Os};

impl Os {
    /// Whether [`Os::compact`] with `referenced` would change nothing: every generation below
    /// the next fresh one is linked, open or referenced. Lets callers skip the compaction on
    /// the many steps that create or drop no inode.
    pub fn is_compact(&self, referenced: impl IntoIterator<Item = Inode>) -> bool {
        if self.next_inode > 64 {
            return false;
        }
        let mut mask: u128 = 0;
        for &i in self.inodes.keys() {
            mask |= 1 << i;
        }
        for i in referenced {
            mask |= 1 << i;
        }
        mask == (1u128 << self.next_inode) - 1
    }

    /// Renumbers inode generations densely (0, 1, ...) in creation order, keeping those that
    /// are linked, open, or in `referenced` (identities the caller remembers). Returns the
    /// renumbering, which the caller applies to what it remembers. This keeps the model's
    /// state space finite when files are created again and again (SimpleFs,
    /// delete-on-release). Allocates nothing: the renumbering keeps order, so every table
    /// stays sorted and is rewritten in place.
    pub fn compact(&mut self, referenced: impl IntoIterator<Item = Inode>) -> Renumbering {
        let mut map = Renumbering::default();
        for &i in self.inodes.keys() {
            map.keep(i);
        }
        for i in referenced {
            map.keep(i);
        }
        let m = |i: Inode| map.get(i);
        self.path = self.path.map(m);
        for (i, _) in self.inodes.entries_mut() {
            *i = m(*i);
        }
        for (_, i) in self.descs.entries_mut() {
            *i = m(*i);
        }
        for l in self.locks.entries_mut() {
            *l = l.map_inode(m);
        }
        for i in self.written.entries_mut() {
            *i = m(*i);
        }
        self.next_inode = map.len();
        map
    }
}

/// What [`Os::compact`] did: the kept generations, each renumbered to its rank among them (so
/// the order of creation is kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Renumbering {
    /// Bit `i` of word `i / 64`: generation `i` is kept.
    kept: [u64; 4],
}

impl Renumbering {
    fn keep(&mut self, i: Inode) {
        self.kept[usize::from(i / 64)] |= 1 << (i % 64);
    }

    /// Whether generation `old` was kept.
    pub fn contains(&self, old: Inode) -> bool {
        self.kept[usize::from(old / 64)] & (1 << (old % 64)) != 0
    }

    /// The new number of the kept generation `old`.
    ///
    /// # Panics
    /// If `old` was not kept (it was neither linked, open nor referenced).
    pub fn get(&self, old: Inode) -> Inode {
        assert!(
            self.contains(old),
            "inode {old} was not kept by the compaction"
        );
        let (word, bit) = (usize::from(old / 64), old % 64);
        let below: u32 = self.kept[..word].iter().map(|w| w.count_ones()).sum();
        (below + (self.kept[word] & ((1 << bit) - 1)).count_ones()) as Inode
    }

    /// How many generations were kept: the next fresh generation after the compaction.
    pub fn len(&self) -> Inode {
        self.kept.iter().map(|w| w.count_ones()).sum::<u32>() as Inode
    }

    /// Whether no generation was kept.
    pub fn is_empty(&self) -> bool {
        self.kept == [0; 4]
    }

    /// `(old, new)` for every kept generation, in order.
    pub fn iter(&self) -> impl Iterator<Item = (Inode, Inode)> + '_ {
        (0..=Inode::MAX)
            .filter(|&i| self.contains(i))
            .enumerate()
            .map(|(new, old)| (old, new as Inode))
    }
}
