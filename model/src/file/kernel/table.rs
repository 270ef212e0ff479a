//! Small sorted tables for the kernel's file and lock tables, stored inline.
//!
//! The model checker clones the kernel once per successor and hashes it once per successor.
//! With `BTreeMap`/`BTreeSet` every clone allocated one node per table and every hash walked
//! the trees; these tables keep up to `N` entries in a sorted array inside the value, so a
//! clone is a copy of a few dozen bytes and a hash is a pass over a slice. A table that grows
//! past `N` entries (a scenario with many processes and threads: the command line allows 8 ×
//! 8) moves to the heap and comes back inline when it shrinks again, so no scenario the
//! model accepts is refused; only the small ones, the ones checked exhaustively, stay free of
//! allocation.
//!
//! Equality, `Hash` and `Debug` are those of the B-trees they replace: the same entries in
//! the same order, and `Hash` feeds the hasher exactly what `BTreeMap`/`BTreeSet` feed it (the
//! length, then every entry; a map entry as its key then its value). So a state's fingerprint,
//! ours and Stateright's, is what it was with the B-trees (`kernel/tests.rs` checks the
//! streams are identical).

use std::fmt;
use std::hash::{Hash, Hasher};

/// A value to fill the unused part of an inline array with (never read as an entry).
pub(super) trait Blank: Copy {
    const BLANK: Self;
}

impl Blank for u8 {
    const BLANK: u8 = 0;
}

impl<A: Blank, B: Blank> Blank for (A, B) {
    const BLANK: (A, B) = (A::BLANK, B::BLANK);
}

/// Up to `N` entries in a sorted array inside the value; more on the heap.
#[derive(Clone)]
enum Repr<T, const N: usize> {
    Inline { len: u8, items: [T; N] },
    Heap(Vec<T>),
}

/// Entries kept sorted (by the caller's key) and unique; the storage behind
/// [`SortedMap`] and [`SortedSet`].
struct Table<T, const N: usize>(Repr<T, N>);

impl<T: Copy, const N: usize> Clone for Table<T, N> {
    fn clone(&self) -> Self {
        Table(self.0.clone())
    }

    /// Inline into inline is a plain copy (what the checker does once per successor): no
    /// drop of the old value, no new allocation.
    #[inline]
    fn clone_from(&mut self, source: &Self) {
        match (&mut self.0, &source.0) {
            (Repr::Inline { len, items }, Repr::Inline { len: l, items: i }) => {
                *len = *l;
                *items = *i;
            }
            (Repr::Heap(v), Repr::Heap(w)) => v.clone_from(w),
            (me, other) => *me = other.clone(),
        }
    }
}

impl<T: Blank, const N: usize> Table<T, N> {
    const EMPTY: Self = Table(Repr::Inline {
        len: 0,
        items: [T::BLANK; N],
    });

    fn as_slice(&self) -> &[T] {
        match &self.0 {
            Repr::Inline { len, items } => &items[..usize::from(*len)],
            Repr::Heap(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.0 {
            Repr::Inline { len, items } => &mut items[..usize::from(*len)],
            Repr::Heap(v) => v,
        }
    }

    /// Inserts `x` at position `at` (which keeps the order: the caller found it).
    fn insert_at(&mut self, at: usize, x: T) {
        match &mut self.0 {
            Repr::Inline { len, items } if usize::from(*len) < N => {
                let n = usize::from(*len);
                items.copy_within(at..n, at + 1);
                items[at] = x;
                *len += 1;
            }
            Repr::Inline { items, .. } => {
                // Full: move to the heap (rare: only scenarios bigger than `N` get here).
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend_from_slice(&items[..at]);
                v.push(x);
                v.extend_from_slice(&items[at..]);
                self.0 = Repr::Heap(v);
            }
            Repr::Heap(v) => v.insert(at, x),
        }
    }

    fn remove_at(&mut self, at: usize) -> T {
        let x = match &mut self.0 {
            Repr::Inline { len, items } => {
                let x = items[at];
                items.copy_within(at + 1..usize::from(*len), at);
                *len -= 1;
                return x;
            }
            Repr::Heap(v) => v.remove(at),
        };
        self.back_inline();
        x
    }

    fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        match &mut self.0 {
            Repr::Inline { len, items } => {
                let mut kept = 0;
                for i in 0..usize::from(*len) {
                    if keep(&items[i]) {
                        items[kept] = items[i];
                        kept += 1;
                    }
                }
                *len = kept as u8;
            }
            Repr::Heap(v) => {
                v.retain(|x| keep(x));
                self.back_inline();
            }
        }
    }

    /// A table holding `sorted` (which must be sorted and unique).
    fn from_sorted(sorted: &[T]) -> Self {
        if sorted.len() > N {
            return Table(Repr::Heap(sorted.to_vec()));
        }
        let mut items = [T::BLANK; N];
        items[..sorted.len()].copy_from_slice(sorted);
        Table(Repr::Inline {
            len: sorted.len() as u8,
            items,
        })
    }

    /// Back inline once the entries fit again, so clones stop allocating.
    fn back_inline(&mut self) {
        if let Repr::Heap(v) = &self.0 {
            if v.len() <= N {
                *self = Self::from_sorted(v);
            }
        }
    }
}

/// A map from `K` to `V`, sorted by key: what `BTreeMap<K, V>` was here.
pub(super) struct SortedMap<K, V, const N: usize>(Table<(K, V), N>);

impl<K: Copy, V: Copy, const N: usize> Clone for SortedMap<K, V, N> {
    fn clone(&self) -> Self {
        SortedMap(self.0.clone())
    }

    #[inline]
    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

impl<K: Blank + Ord, V: Blank, const N: usize> SortedMap<K, V, N> {
    /// Where `k` is, or where it would go.
    fn find(&self, k: &K) -> Result<usize, usize> {
        self.0.as_slice().binary_search_by(|(x, _)| x.cmp(k))
    }

    pub(super) fn get(&self, k: &K) -> Option<&V> {
        let at = self.find(k).ok()?;
        Some(&self.0.as_slice()[at].1)
    }

    pub(super) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        let at = self.find(k).ok()?;
        Some(&mut self.0.as_mut_slice()[at].1)
    }

    pub(super) fn contains_key(&self, k: &K) -> bool {
        self.find(k).is_ok()
    }

    /// Sets `k` to `v`; returns the value it replaced.
    pub(super) fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.find(&k) {
            Ok(at) => Some(std::mem::replace(&mut self.0.as_mut_slice()[at].1, v)),
            Err(at) => {
                self.0.insert_at(at, (k, v));
                None
            }
        }
    }

    pub(super) fn remove(&mut self, k: &K) -> Option<V> {
        let at = self.find(k).ok()?;
        Some(self.0.remove_at(at).1)
    }

    pub(super) fn len(&self) -> usize {
        self.0.as_slice().len()
    }

    /// The entries in key order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.0.as_slice().iter().map(|(k, v)| (k, v))
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.0.as_slice().iter().map(|(k, _)| k)
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.0.as_slice().iter().map(|(_, v)| v)
    }

    /// The entries, to change in place: the caller keeps them sorted and unique by key.
    pub(super) fn entries_mut(&mut self) -> &mut [(K, V)] {
        self.0.as_mut_slice()
    }
}

impl<K: Blank + Ord, V: Blank, const N: usize> FromIterator<(K, V)> for SortedMap<K, V, N> {
    /// As `BTreeMap`'s: sorted by key; of equal keys the last one wins.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        let mut map = SortedMap(Table::EMPTY);
        for (k, v) in entries {
            map.insert(k, v);
        }
        map
    }
}

impl<K, V, const N: usize> Default for SortedMap<K, V, N>
where
    K: Blank,
    V: Blank,
{
    fn default() -> Self {
        SortedMap(Table::EMPTY)
    }
}

impl<K: Blank + Eq, V: Blank + Eq, const N: usize> PartialEq for SortedMap<K, V, N> {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_slice() == other.0.as_slice()
    }
}

impl<K: Blank + Eq, V: Blank + Eq, const N: usize> Eq for SortedMap<K, V, N> {}

impl<K: Blank + Hash, V: Blank + Hash, const N: usize> Hash for SortedMap<K, V, N> {
    /// `BTreeMap`'s stream: the length, then each key and its value.
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let entries = self.0.as_slice();
        h.write_usize(entries.len());
        for (k, v) in entries {
            k.hash(h);
            v.hash(h);
        }
    }
}

impl<K: Blank + fmt::Debug, V: Blank + fmt::Debug, const N: usize> fmt::Debug
    for SortedMap<K, V, N>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.as_slice().iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

/// A sorted set of `T`: what `BTreeSet<T>` was here.
pub(super) struct SortedSet<T, const N: usize>(Table<T, N>);

impl<T: Copy, const N: usize> Clone for SortedSet<T, N> {
    fn clone(&self) -> Self {
        SortedSet(self.0.clone())
    }

    #[inline]
    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

impl<T: Blank + Ord, const N: usize> SortedSet<T, N> {
    pub(super) fn contains(&self, x: &T) -> bool {
        self.0.as_slice().binary_search(x).is_ok()
    }

    /// Adds `x`; whether it was new.
    pub(super) fn insert(&mut self, x: T) -> bool {
        match self.0.as_slice().binary_search(&x) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert_at(at, x);
                true
            }
        }
    }

    /// Removes `x`; whether it was there.
    pub(super) fn remove(&mut self, x: &T) -> bool {
        match self.0.as_slice().binary_search(x) {
            Ok(at) => {
                self.0.remove_at(at);
                true
            }
            Err(_) => false,
        }
    }

    pub(super) fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.0.retain(keep);
    }

    pub(super) fn len(&self) -> usize {
        self.0.as_slice().len()
    }

    /// The entries in order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.as_slice().iter()
    }

    /// The entries, to change in place: the caller keeps them sorted and unique.
    pub(super) fn entries_mut(&mut self) -> &mut [T] {
        self.0.as_mut_slice()
    }
}

impl<T: Blank + Ord, const N: usize> FromIterator<T> for SortedSet<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(entries: I) -> Self {
        let mut all: Vec<T> = entries.into_iter().collect();
        all.sort_unstable();
        all.dedup();
        SortedSet(Table::from_sorted(&all))
    }
}

impl<T: Blank, const N: usize> Default for SortedSet<T, N> {
    fn default() -> Self {
        SortedSet(Table::EMPTY)
    }
}

impl<T: Blank + Eq, const N: usize> PartialEq for SortedSet<T, N> {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_slice() == other.0.as_slice()
    }
}

impl<T: Blank + Eq, const N: usize> Eq for SortedSet<T, N> {}

impl<T: Blank + Hash, const N: usize> Hash for SortedSet<T, N> {
    /// `BTreeSet`'s stream: the length, then each entry.
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let entries = self.0.as_slice();
        h.write_usize(entries.len());
        for x in entries {
            x.hash(h);
        }
    }
}

impl<T: Blank + fmt::Debug, const N: usize> fmt::Debug for SortedSet<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::{SortedMap, SortedSet};
    use std::collections::{BTreeMap, BTreeSet};

    /// A tiny deterministic generator (xorshift), so the test needs no crate.
    fn numbers(mut x: u64) -> impl Iterator<Item = u8> {
        std::iter::from_fn(move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Some((x % 24) as u8)
        })
    }

    /// Random inserts and removes on a table of inline capacity 4 (so it moves to the heap
    /// and back many times) give the same contents as the B-tree at every step.
    #[test]
    fn tables_follow_the_btrees_across_the_heap_boundary() {
        let mut set: SortedSet<u8, 4> = SortedSet::default();
        let mut bset = BTreeSet::new();
        let mut map: SortedMap<u8, u8, 4> = SortedMap::default();
        let mut bmap = BTreeMap::new();
        // Overwritten from the tables at every step (`clone_from`, as the checker does):
        // inline over inline, heap over heap, and each over the other.
        let mut set_copy: SortedSet<u8, 4> = SortedSet::default();
        let mut map_copy: SortedMap<u8, u8, 4> = SortedMap::default();
        let mut ops = numbers(0x9e37_79b9_7f4a_7c15);
        let mut spilled = 0;
        for step in 0..20_000 {
            let (op, x) = (ops.next().unwrap(), ops.next().unwrap() % 12);
            match op % 5 {
                0 | 1 => {
                    assert_eq!(set.insert(x), bset.insert(x), "step {step}");
                    assert_eq!(map.insert(x, op), bmap.insert(x, op), "step {step}");
                }
                2 => {
                    assert_eq!(set.remove(&x), bset.remove(&x), "step {step}");
                    assert_eq!(map.remove(&x), bmap.remove(&x), "step {step}");
                }
                3 => {
                    set.retain(|&y| y % 3 != x % 3);
                    bset.retain(|&y| y % 3 != x % 3);
                }
                _ => {
                    if let Some(v) = map.get_mut(&x) {
                        *v = v.wrapping_add(1);
                    }
                    if let Some(v) = bmap.get_mut(&x) {
                        *v = v.wrapping_add(1);
                    }
                }
            }
            if set.len() > 4 {
                spilled += 1;
            }
            assert!(set.iter().eq(bset.iter()), "step {step}");
            assert!(map.iter().eq(bmap.iter()), "step {step}");
            assert_eq!(map.contains_key(&x), bmap.contains_key(&x));
            assert_eq!(set.contains(&x), bset.contains(&x));
            assert_eq!(set.clone(), set.iter().copied().collect());
            set_copy.clone_from(&set);
            map_copy.clone_from(&map);
            assert!(set_copy.iter().eq(bset.iter()), "step {step}");
            assert!(map_copy.iter().eq(bmap.iter()), "step {step}");
        }
        assert!(
            spilled > 1000,
            "the heap side was exercised ({spilled} steps)"
        );
    }
}
