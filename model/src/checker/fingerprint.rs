//! 64-bit state fingerprints for the visited set.

use std::hash::{Hash, Hasher};

/// A state's 64-bit fingerprint, deterministic across runs and builds. Like Stateright, the
/// visited set stores fingerprints only; with n states the chance that two of them collide is
/// about n²/2⁶⁵ (below 10⁻⁶ for the 5 M states of the deep scenario). The tests check that
/// Stateright's own BFS (a different hash) counts the same states.
pub fn fingerprint<S: Hash + ?Sized>(s: &S) -> u64 {
    let mut h = Fingerprinter::default();
    s.hash(&mut h);
    h.finish()
}

/// Packs the bytes a derived `Hash` feeds it (mostly one-byte writes: small integers,
/// discriminants, lengths, booleans) into 64-bit words — a packed encoding of the state, kept
/// in registers — and mixes every two words with one 64 × 64 → 128-bit multiply folded to 64
/// bits (the mixing step of wyhash), finishing with MurmurHash3's `fmix64` over the total
/// length. The previous version mixed every word with `fmix64` (two dependent multiplies per 8
/// bytes); this one needs a quarter of the multiplies (`docs/performance.md`, "Checker v3").
#[derive(Clone, Copy)]
pub struct Fingerprinter {
    /// The word being filled, low byte first.
    word: u64,
    /// Bytes in `word`.
    filled: u32,
    /// The first word of a pair, when `paired`.
    first: u64,
    paired: bool,
    /// Mixed state of the pairs so far.
    hash: u64,
    /// Whole words so far.
    words: u64,
}

impl Default for Fingerprinter {
    fn default() -> Fingerprinter {
        Fingerprinter {
            word: 0,
            filled: 0,
            first: 0,
            paired: false,
            hash: SEED,
            words: 0,
        }
    }
}

/// Arbitrary odd constants with about half their bits set (wyhash's secrets).
const SEED: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;
const K2: u64 = 0x8ebc_6af0_9c88_c6e3;

/// The 128-bit product of `a` and `b`, its halves xored.
#[inline]
fn mum(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// MurmurHash3's 64-bit finalizer: a bijection with full avalanche.
#[inline]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

impl Fingerprinter {
    #[inline]
    fn push_word(&mut self, w: u64) {
        self.words += 1;
        if self.paired {
            self.hash = mum(self.first ^ K1, w ^ self.hash ^ K2);
            self.paired = false;
        } else {
            self.first = w;
            self.paired = true;
        }
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.word |= u64::from(b) << (8 * self.filled);
        self.filled += 1;
        if self.filled == 8 {
            self.push_word(self.word);
            self.word = 0;
            self.filled = 0;
        }
    }
}

impl Fingerprinter {
    /// A length or discriminant of 255 or more: a marker byte, then all eight bytes.
    #[cold]
    #[inline(never)]
    fn large(&mut self, i: usize) {
        self.byte(255);
        self.write(&(i as u64).to_le_bytes());
    }
}

impl Hasher for Fingerprinter {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }
    #[inline(always)]
    fn write_u8(&mut self, i: u8) {
        self.byte(i);
    }
    #[inline(always)]
    fn write_usize(&mut self, i: usize) {
        // Lengths and discriminants: all small here; one byte each keeps the stream short.
        if i < 255 {
            self.byte(i as u8);
        } else {
            self.large(i);
        }
    }
    #[inline(always)]
    fn write_isize(&mut self, i: isize) {
        self.write_usize(i as usize);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The partial word is zero-padded; the total length then tells apart streams that
        // differ only in trailing zeros.
        let total = self.words * 8 + u64::from(self.filled);
        let hash = if self.paired {
            mum(self.first ^ K1, self.word ^ self.hash ^ K2)
        } else {
            mum(self.word ^ K1, self.hash ^ K2)
        };
        fmix64(hash ^ fmix64(total))
    }
}

/// The visited set's hasher: fingerprints are already well mixed, so use them as they are.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

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

#[cfg(test)]
mod tests {
    use super::fingerprint;
    use std::collections::HashSet;

    /// Streams that differ in one byte, in trailing zeros, or in where a block ends give
    /// different fingerprints (a fingerprinter that ignored the tail, the length or a block
    /// would fail here).
    #[test]
    fn nearby_streams_differ() {
        let mut seen = HashSet::new();
        let mut n = 0;
        for len in 0..200usize {
            let zeros = vec![0u8; len];
            assert!(seen.insert(fingerprint(&zeros[..])), "{len} zeros");
            n += 1;
            for at in 0..len {
                let mut one = zeros.clone();
                one[at] = 1;
                assert!(seen.insert(fingerprint(&one[..])), "{len} bytes, 1 at {at}");
                n += 1;
            }
        }
        assert_eq!(seen.len(), n);
    }
}
