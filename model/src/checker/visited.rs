//! The checker's visited set: 64-bit state keys in shards, so a level's new keys can be
//! inserted by one thread per shard with the sequential outcome.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use super::fingerprint::PassThrough;

/// The visited set: 64-bit keys, split into shards by the key's high bits so that one thread
/// per shard can insert a level's candidates at once (the keys of different shards are
/// disjoint, and each shard sees its keys in merge order, so the outcome is the sequential
/// one).
pub(super) struct Visited {
    shards: Vec<HashSet<u64, BuildHasherDefault<PassThrough>>>,
}

impl Visited {
    /// `shards` must be a power of two.
    pub(super) fn new(shards: usize) -> Visited {
        Visited {
            shards: (0..shards).map(|_| HashSet::default()).collect(),
        }
    }

    pub(super) fn shard(&self, key: u64) -> usize {
        (key >> 40) as usize & (self.shards.len() - 1)
    }

    pub(super) fn contains(&self, key: u64) -> bool {
        self.shards[self.shard(key)].contains(&key)
    }

    pub(super) fn insert(&mut self, key: u64) -> bool {
        let i = self.shard(key);
        self.shards[i].insert(key)
    }

    /// Inserts `keys` (those marked `true`) in order and returns, per position, whether the key
    /// was new — one thread per shard.
    pub(super) fn insert_all(&mut self, keys: &[(u64, bool)]) -> Vec<bool> {
        let n = self.shards.len();
        if n == 1 {
            let shard = &mut self.shards[0];
            return keys
                .iter()
                .map(|&(k, try_it)| try_it && shard.insert(k))
                .collect();
        }
        let shard_of = |k: u64| (k >> 40) as usize & (n - 1);
        let new_per_shard: Vec<Vec<u32>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .shards
                .iter_mut()
                .enumerate()
                .map(|(i, shard)| {
                    scope.spawn(move || {
                        keys.iter()
                            .enumerate()
                            .filter(|&(_, &(k, try_it))| try_it && shard_of(k) == i)
                            .filter(|&(_, &(k, _))| shard.insert(k))
                            .map(|(at, _)| at as u32)
                            .collect::<Vec<u32>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("no shard thread panics"))
                .collect()
        });
        let mut new = vec![false; keys.len()];
        for at in new_per_shard.into_iter().flatten() {
            new[at as usize] = true;
        }
        new
    }

    pub(super) fn len(&self) -> usize {
        self.shards.iter().map(HashSet::len).sum()
    }

    /// The allocation: hashbrown keeps its load at most 7/8 in a power-of-two number of
    /// buckets, each an 8-byte key plus one control byte.
    pub(super) fn bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                (s.capacity() * 8 / 7 + 1).next_power_of_two() * (std::mem::size_of::<u64>() + 1)
            })
            .sum()
    }
}
