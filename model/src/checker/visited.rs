//! The one-thread search's visited set: 64-bit state keys in an open-addressing table.

/// A set of 64-bit keys: one flat array, linear probing, `0` marking an empty slot (the key 0
/// itself is a flag). Keys are fingerprints, already well mixed, so their low bits index the
/// array directly. A lookup touches one cache line in the common case, where a general hash
/// set (hashbrown) reads a control byte and then the key in another array: the profile of the
/// 1.66 M-state scenario had a quarter of the run in hashbrown's insert.
pub(super) struct Table {
    slots: Vec<u64>,
    /// Keys in `slots` (not counting the key 0).
    len: usize,
    zero: bool,
}

/// Slots of a new table (a power of two).
const INITIAL: usize = 1 << 10;

impl Table {
    fn new() -> Table {
        Table {
            slots: vec![0; INITIAL],
            len: 0,
            zero: false,
        }
    }

    #[cfg(test)]
    fn contains(&self, key: u64) -> bool {
        if key == 0 {
            return self.zero;
        }
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            match self.slots[i] {
                0 => return false,
                k if k == key => return true,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Whether `key` was new.
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        if key == 0 {
            return !std::mem::replace(&mut self.zero, true);
        }
        // At most 3/4 full: a miss then probes 2.5 slots on average at the fullest.
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = key;
                    self.len += 1;
                    return true;
                }
                k if k == key => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Hints the cache to load `key`'s first slot.
    #[inline]
    fn prefetch(&self, key: u64) {
        let i = key as usize & (self.slots.len() - 1);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `_mm_prefetch` only hints the cache; `i` is in bounds, so the pointer is
        // into the allocation (a prefetch of any address is harmless anyway).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(i).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    fn grow(&mut self) {
        let doubled = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        let mask = self.slots.len() - 1;
        for key in old.into_iter().filter(|&k| k != 0) {
            let mut i = key as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = key;
        }
    }

    fn len(&self) -> usize {
        self.len + usize::from(self.zero)
    }
}

/// The visited set of the one-thread search (the search with several threads uses
/// [`super::claims::Claims`]).
pub(super) struct Visited {
    table: Table,
}

impl Visited {
    pub(super) fn new() -> Visited {
        Visited {
            table: Table::new(),
        }
    }

    #[inline]
    pub(super) fn insert(&mut self, key: u64) -> bool {
        self.table.insert(key)
    }

    /// Hints the cache to load the slot `key` would be looked up in first.
    #[inline]
    pub(super) fn prefetch(&self, key: u64) {
        self.table.prefetch(key);
    }

    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// The allocation: 8 bytes per slot, the table at most 3/4 full.
    pub(super) fn bytes(&self) -> usize {
        self.table.slots.len() * std::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::Table;
    use std::collections::HashSet;

    /// The table agrees with std's set on a stream with repeats, the key 0, keys that share
    /// their low bits (long probe runs) and several growths.
    #[test]
    fn agrees_with_a_hash_set() {
        let mut table = Table::new();
        let mut std_set = HashSet::new();
        let mut x: u64 = 1;
        for i in 0..50_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = match i % 5 {
                0 => x % 3_000,      // repeats, and 0
                1 => (x % 64) << 20, // same low bits: one long probe run
                _ => x,
            };
            assert_eq!(table.contains(key), std_set.contains(&key), "{key}");
            assert_eq!(table.insert(key), std_set.insert(key), "{key}");
            assert!(table.contains(key));
        }
        assert_eq!(table.len(), std_set.len());
    }
}
