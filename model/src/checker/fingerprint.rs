//! 64-bit state fingerprints for the visited set.

use std::hash::{Hash, Hasher};

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

/// A state's 64-bit fingerprint, deterministic across runs and builds. Like Stateright, the
/// visited set stores fingerprints only; with n states the chance that two of them collide is
/// about n²/2⁶⁵ (below 10⁻⁶ for the 5 M states of the deep scenario). The tests check that
/// Stateright's own BFS (a different hash) counts the same states.
pub fn fingerprint<S: Hash + ?Sized>(s: &S) -> u64 {
    let mut h = Fingerprinter::default();
    s.hash(&mut h);
    h.finish()
}

/// Streams the bytes a derived `Hash` feeds it (mostly one-byte writes) into 64-bit words,
/// each absorbed with MurmurHash3's `fmix64` finalizer (a bijection with full avalanche), so
/// distinct inputs collide only by chance. Several times faster than SipHash here.
#[derive(Default, Clone, Copy)]
pub struct Fingerprinter {
    hash: u64,
    word: u64,
    filled: u32,
    total: u64,
}

impl Fingerprinter {
    #[inline]
    fn fmix64(mut k: u64) -> u64 {
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^= k >> 33;
        k
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        self.word |= u64::from(b) << (8 * self.filled);
        self.filled += 1;
        self.total += 1;
        if self.filled == 8 {
            self.hash = Self::fmix64(self.hash ^ self.word).wrapping_add(0x9e37_79b9_7f4a_7c15);
            self.word = 0;
            self.filled = 0;
        }
    }
}

impl Hasher for Fingerprinter {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.byte(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        // Lengths and discriminants: all small here; one byte each keeps the stream short.
        if i < 255 {
            self.byte(i as u8);
        } else {
            self.byte(255);
            self.write(&(i as u64).to_le_bytes());
        }
    }
    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_usize(i as usize);
    }
    #[inline]
    fn finish(&self) -> u64 {
        Self::fmix64(Self::fmix64(self.hash ^ self.word) ^ self.total)
    }
}
