//! The visited set of the search with several threads: a flat open-addressing table that the
//! workers insert into at the same time, where each key also holds a *claim* — the smallest
//! position, in the sequential search's order, of a transition that reached it in the current
//! level. After a level, the candidate whose position equals its key's claim is the one the
//! sequential search would have found first, so the threads keep its state and parent and the
//! result does not depend on which thread got there first.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// A transition's position in the sequential search's order: its parent's id (ids are
/// assigned in that order) and the action's index among the parent's actions. Positions of a
/// later level are greater than every position of an earlier one, and initial states have the
/// position 0.
#[inline]
pub(super) fn position(parent: u32, action: usize) -> u64 {
    debug_assert!(action < 1 << 16);
    ((u64::from(parent) + 1) << 16) | action as u64
}

/// The smallest position of a level whose parents' ids start at `first`: a claim below it was
/// made in an earlier level.
#[inline]
pub(super) fn floor(first: u32) -> u64 {
    position(first, 0)
}

/// What [`Claims::claim`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// The key was visited in an earlier level.
    Old,
    /// A transition earlier in the sequential order already reached the key in this level.
    Lost,
    /// This transition is (so far) the first in this level to reach the key; whether it stays
    /// first is known when the level's expansion is over ([`Claims::resolve`]).
    Kept,
    /// No free slot near the key's: grow the table and expand the chunk again.
    Full,
}

/// One key and its claim, side by side so that a probe reads both in one cache line.
#[repr(C, align(16))]
struct Slot {
    /// `0`: empty (the key 0 is kept aside).
    key: AtomicU64,
    /// The complement of the claim (`!position`), so that a zeroed slot is empty and
    /// unclaimed: `0` until the inserting thread writes its position (a moment after the key).
    claim: AtomicU64,
}

/// Probes after which an insert gives up with [`Claim::Full`]. The main thread sizes the table
/// before every level (at most 3/4 full with the level's expected new states), so this is a
/// backstop for a level that brings more new states than expected.
const MAX_PROBE: usize = 256;

/// Slots of the old table one thread moves at a time in a rehash.
const BLOCK: usize = 1 << 16;

/// The concurrent visited set with claims. (A variant with the claims in a second array, and
/// the keys of the current level marked in the first, had every probe of an old key read
/// half as much memory, but the claims' own cache misses cost more than that saved:
/// `docs/performance.md`, "Checker v5".)
pub(super) struct Claims {
    slots: Slots,
    /// The table being moved into `slots` during a rehash.
    old: Option<Slots>,
    /// The claim of the key 0 (complemented, as in a slot: `0` while absent).
    zero: AtomicU64,
    /// Keys inserted (added to in batches by the workers).
    len: AtomicUsize,
}

/// `n` empty slots: zeroed memory (`calloc`: fresh pages from the kernel, zeroed when first
/// touched, so the zeroing is spread over the threads that probe or fill them). (Huge pages,
/// `madvise(MADV_HUGEPAGE)`, were tried: fewer TLB misses in the probes, but the kernel's
/// zeroing and compaction of 2 MiB pages cost more system time than they saved;
/// `docs/performance.md`, "Checker v5".)
struct Slots {
    ptr: std::ptr::NonNull<Slot>,
    len: usize,
}

// SAFETY: `Slots` owns its memory, all atomics, which may be shared and sent.
unsafe impl Send for Slots {}
// SAFETY: as above: every slot is an atomic.
unsafe impl Sync for Slots {}

impl Slots {
    fn zeroed(n: usize) -> Slots {
        let layout = Self::layout(n);
        // SAFETY: the layout's size is not zero (at least 1024 slots).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw.cast::<Slot>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        Slots { ptr, len: n }
    }

    fn layout(n: usize) -> std::alloc::Layout {
        std::alloc::Layout::array::<Slot>(n).expect("a table fits in memory")
    }

    fn as_slice(&self) -> &[Slot] {
        // SAFETY: `ptr` holds `len` zeroed slots (a zeroed atomic is a valid one) for
        // `self`'s life.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), Self::layout(self.len)) }
    }
}

impl std::ops::Deref for Slots {
    type Target = [Slot];
    fn deref(&self) -> &[Slot] {
        self.as_slice()
    }
}

impl Claims {
    /// A table of `slots` slots (rounded up to a power of two, at least 1024).
    pub(super) fn new(slots: usize) -> Claims {
        Claims {
            slots: Slots::zeroed(slots.next_power_of_two().max(1 << 10)),
            old: None,
            zero: AtomicU64::new(0),
            len: AtomicUsize::new(0),
        }
    }

    /// Records that the transition at `position` (at least `floor`, the current level's)
    /// reached `key`. Returns what it found, and whether the key was inserted now.
    #[inline]
    pub(super) fn claim(&self, key: u64, position: u64, floor: u64) -> (Claim, bool) {
        if key == 0 {
            let inserted = self.zero.load(Relaxed) == 0;
            return (Self::lower(&self.zero, position, floor), inserted);
        }
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        for _ in 0..MAX_PROBE {
            let slot = &self.slots[i];
            let mut k = slot.key.load(Relaxed);
            if k == 0 {
                // The claim is a separate word: a thread that sees the key before its claim
                // is written reads no claim (the greatest position) and lowers it itself; the lowest wins either way.
                match slot.key.compare_exchange(0, key, Relaxed, Relaxed) {
                    Ok(_) => return (Self::lower(&slot.claim, position, floor), true),
                    Err(other) => k = other,
                }
            }
            if k == key {
                return (Self::lower(&slot.claim, position, floor), false);
            }
            i = (i + 1) & mask;
        }
        (Claim::Full, false)
    }

    /// Lowers `claim` to `position` unless it is lower already. Reads first and writes only
    /// when this transition may be the first: most transitions reach old states, and a write
    /// to their slots would bounce the cache lines between the cores.
    #[inline]
    fn lower(claim: &AtomicU64, position: u64, floor: u64) -> Claim {
        let seen = !claim.load(Relaxed);
        if seen < floor {
            return Claim::Old;
        }
        if seen <= position {
            return if seen == position {
                Claim::Kept // the same transition again: a chunk expanded a second time
            } else {
                Claim::Lost
            };
        }
        let before = !claim.fetch_max(!position, Relaxed);
        if before < position {
            Claim::Lost
        } else {
            Claim::Kept
        }
    }

    /// Once a level's expansion is over: whether the transition at `position` is the first,
    /// in sequential order, that reached `key`.
    #[inline]
    pub(super) fn resolve(&self, key: u64, position: u64) -> bool {
        if key == 0 {
            return !self.zero.load(Relaxed) == position;
        }
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let slot = &self.slots[i];
            match slot.key.load(Relaxed) {
                k if k == key => return !slot.claim.load(Relaxed) == position,
                0 => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Hints the cache to load `key`'s first slot.
    #[inline]
    pub(super) fn prefetch(&self, key: u64) {
        let i = key as usize & (self.slots.len() - 1);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `_mm_prefetch` only hints the cache; `i` is in bounds.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(i).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Counts `n` keys inserted by one worker.
    pub(super) fn add_len(&self, n: usize) {
        if n != 0 {
            self.len.fetch_add(n, Relaxed);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    /// Grows the table (between levels) so that `keys` keys fill at most 3/4 of it. Returns
    /// the number of blocks to move with [`Claims::move_block`] (0: nothing to move, or a
    /// small table moved at once).
    #[must_use]
    pub(super) fn reserve(&mut self, keys: usize) -> usize {
        let mut slots = self.slots.len();
        while keys.saturating_mul(4) > slots * 3 {
            slots *= 2;
        }
        if slots > self.slots.len() {
            self.rehash(slots)
        } else {
            0
        }
    }

    /// Doubles the table (in the middle of a level: claims are kept). Returns the number of
    /// blocks to move, as [`Claims::reserve`].
    #[must_use]
    pub(super) fn grow(&mut self) -> usize {
        self.rehash(self.slots.len() * 2)
    }

    /// Starts moving every key, with its claim, into a new table of `slots` slots: at once if
    /// the old table is one block, else by blocks that the threads share (the moves write
    /// into fresh memory, and its page faults and zeroing were a serial 5 % of a two-thread
    /// run when one thread did them all).
    fn rehash(&mut self, slots: usize) -> usize {
        let old = std::mem::replace(&mut self.slots, Slots::zeroed(slots));
        let blocks = old.len().div_ceil(BLOCK);
        self.old = Some(old);
        if blocks == 1 {
            self.move_block(0);
            self.old = None;
            0
        } else {
            blocks
        }
    }

    /// Moves block `b` of the old table into the new one (threads moving different blocks at
    /// the same time is fine: the keys are distinct).
    pub(super) fn move_block(&self, b: usize) {
        let old = self.old.as_ref().expect("a rehash is under way");
        let mask = self.slots.len() - 1;
        let end = old.len().min((b + 1) * BLOCK);
        for slot in &old[b * BLOCK..end] {
            let key = slot.key.load(Relaxed);
            if key == 0 {
                continue;
            }
            let mut i = key as usize & mask;
            while self.slots[i]
                .key
                .compare_exchange(0, key, Relaxed, Relaxed)
                .is_err()
            {
                i = (i + 1) & mask;
            }
            self.slots[i].claim.store(slot.claim.load(Relaxed), Relaxed);
        }
    }

    /// Ends a rehash (every block moved): frees the old table.
    pub(super) fn finish_rehash(&mut self) {
        self.old = None;
    }

    /// The allocation: 16 bytes per slot (key and claim).
    pub(super) fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }
}

#[cfg(test)]
mod tests {
    use super::{floor, position, Claim, Claims};

    /// Claims in a level: the lowest position wins whatever the arrival order, a key from an
    /// earlier level is old, repeating a claim keeps it, growing in the middle of a level
    /// keeps keys and claims, and in the next level every key is old. The key 0 (kept aside)
    /// behaves like any other.
    #[test]
    fn the_lowest_position_wins() {
        let mut t = Claims::new(0);
        for key in [0, 7, 1 << 40] {
            assert_eq!(t.claim(key, 0, 0), (Claim::Kept, true), "initial {key}");
        }
        let f = floor(5);
        for key in [0, 7, 1 << 40] {
            assert_eq!(
                t.claim(key, position(9, 3), f),
                (Claim::Old, false),
                "{key}"
            );
        }
        for key in [99, u64::MAX, !7] {
            assert_eq!(
                t.claim(key, position(9, 3), f),
                (Claim::Kept, true),
                "{key}"
            );
            assert_eq!(
                t.claim(key, position(6, 0), f),
                (Claim::Kept, false),
                "{key}"
            );
            assert_eq!(
                t.claim(key, position(9, 3), f),
                (Claim::Lost, false),
                "{key}"
            );
            assert_eq!(
                t.claim(key, position(6, 0), f),
                (Claim::Kept, false),
                "{key}"
            );
        }
        for _ in 0..3 {
            assert_eq!(t.grow(), 0, "one block: moved at once");
        }
        for key in [99, u64::MAX, !7] {
            assert_eq!(
                t.claim(key, position(9, 3), f),
                (Claim::Lost, false),
                "{key}"
            );
            assert!(!t.resolve(key, position(9, 3)), "{key}");
            assert!(t.resolve(key, position(6, 0)), "{key}");
        }
        assert_eq!(
            t.reserve(200_000),
            0,
            "8192 slots: one block, moved at once"
        );
        let next = floor(20);
        for key in [0, 7, 1 << 40, 99, u64::MAX, !7] {
            assert_eq!(
                t.claim(key, position(30, 1), next),
                (Claim::Old, false),
                "{key}"
            );
        }
        assert_eq!(t.claim(12345, position(30, 1), next), (Claim::Kept, true));
        t.add_len(4);
        assert_eq!(t.len(), 4);
    }

    /// Two threads claim the same keys in opposite orders: every key ends with the lowest
    /// position, exactly one claim per key reports an insert, and a full table says so.
    #[test]
    fn two_threads_agree_on_the_first() {
        let t = Claims::new(1 << 14);
        let keys: Vec<u64> = (1..=5_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let inserted: usize = std::thread::scope(|s| {
            let a = s.spawn(|| {
                let mut n = 0;
                for (i, &k) in keys.iter().enumerate() {
                    n += usize::from(t.claim(k, position(100 + i as u32, 1), floor(1)).1);
                }
                n
            });
            let b = s.spawn(|| {
                let mut n = 0;
                for (i, &k) in keys.iter().enumerate().rev() {
                    n += usize::from(t.claim(k, position(100 + i as u32, 0), floor(1)).1);
                }
                n
            });
            a.join().unwrap() + b.join().unwrap()
        });
        assert_eq!(inserted, keys.len());
        for (i, &k) in keys.iter().enumerate() {
            assert!(!t.resolve(k, position(100 + i as u32, 1)));
            assert!(t.resolve(k, position(100 + i as u32, 0)));
        }
        let small = Claims::new(0);
        let full = (1..=2_000u64).any(|k| small.claim(k << 20, position(1, 0), 0).0 == Claim::Full);
        assert!(full, "a table with 1024 slots cannot take 2000 keys");
    }

    /// A table of several blocks is moved by two threads, a block at a time, and keeps every
    /// key with its claim.
    #[test]
    fn two_threads_move_the_blocks() {
        let mut t = Claims::new(1 << 17);
        let keys: Vec<u64> = (1..=90_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(t.claim(k, position(i as u32, 2), 0).0, Claim::Kept);
        }
        let blocks = t.grow();
        assert_eq!(blocks, 2);
        std::thread::scope(|s| {
            let t = &t;
            s.spawn(move || t.move_block(1));
            s.spawn(move || t.move_block(0));
        });
        t.finish_rehash();
        assert_eq!(t.slots.len(), 1 << 18);
        for (i, &k) in keys.iter().enumerate() {
            assert!(t.resolve(k, position(i as u32, 2)), "{k}");
            assert_eq!(t.claim(k, position(i as u32, 2), 0).0, Claim::Kept);
        }
    }
}
