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
/// discriminants, lengths, booleans) into 64-bit words — a packed encoding of the state — and
/// mixes every two words with one 64 × 64 → 128-bit multiply folded to 64 bits (the mixing
/// step of wyhash), finishing with MurmurHash3's `fmix64` over the total length. The previous
/// version mixed every word with `fmix64` (two dependent multiplies per 8 bytes); this one
/// needs a quarter of the multiplies (`docs/performance.md`, "Checker v3").
///
/// The bytes are stored in a small buffer and mixed four words at a time: storing a byte is
/// then a store and an increment, where shifting it into a word register was a dependent
/// chain of five instructions (`docs/performance.md`, "Checker v4"). The words, their order and
/// so every fingerprint are the same as when they were built in a register.
#[derive(Clone, Copy)]
pub struct Fingerprinter {
    /// Bytes not yet mixed: `buf[..len]`.
    buf: [u8; BUF],
    len: usize,
    /// Mixed state of the pairs so far.
    hash: u64,
    /// Whole words mixed so far.
    words: u64,
}

/// Bytes buffered before mixing: four words, two pairs.
const BUF: usize = 32;

impl Default for Fingerprinter {
    fn default() -> Fingerprinter {
        Fingerprinter {
            buf: [0; BUF],
            len: 0,
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
    /// The `i`-th buffered word, little-endian.
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.buf[8 * i..8 * i + 8]);
        u64::from_le_bytes(w)
    }

    /// Mixes the pair of words `first`, `second` into the state.
    #[inline(always)]
    fn pair(&mut self, first: u64, second: u64) {
        self.hash = mum(first ^ K1, second ^ self.hash ^ K2);
    }

    /// The buffer is full: mix its four words. Inlined, so that no call takes the
    /// fingerprinter's address and its length can stay in a register.
    #[inline(always)]
    fn flush(&mut self) {
        self.pair(self.word(0), self.word(1));
        self.pair(self.word(2), self.word(3));
        self.words += (BUF / 8) as u64;
        self.len = 0;
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.buf[self.len % BUF] = b;
        self.len += 1;
        if self.len == BUF {
            self.flush();
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
        // Whole words still buffered are mixed in pairs; an odd one waits for the partial
        // word. The partial word is zero-padded; the total length then tells apart streams
        // that differ only in trailing zeros.
        let mut h = *self;
        let whole = self.len / 8;
        let mut i = 0;
        while i + 1 < whole {
            h.pair(self.word(i), self.word(i + 1));
            i += 2;
        }
        let mut tail = [0u8; 8];
        tail[..self.len % 8].copy_from_slice(&self.buf[8 * whole..self.len]);
        let partial = u64::from_le_bytes(tail);
        let hash = if i < whole {
            mum(self.word(i) ^ K1, partial ^ h.hash ^ K2)
        } else {
            mum(partial ^ K1, h.hash ^ K2)
        };
        let total = self.words * 8 + self.len as u64;
        fmix64(hash ^ fmix64(total))
    }
}

/// A state's packed encoding, for a model whose [`Checkable::visited_key`] fingerprints its
/// states straight from bytes instead of through the derived `Hash`: the model pushes a few
/// bytes per field into a buffer on the stack (a store and an increment each, with nothing
/// to call), and [`Packer::fingerprint`] mixes the buffer a word at a time.
///
/// The encoding is the model's to make injective (distinct states, distinct bytes); a model
/// checks the length it needs with [`Packer::fits`] first and fingerprints bigger states
/// another way.
///
/// [`Checkable::visited_key`]: super::Checkable::visited_key
#[derive(Clone)]
pub struct Packer {
    buf: [u8; Packer::CAPACITY],
    len: usize,
}

impl Default for Packer {
    fn default() -> Packer {
        Packer {
            buf: [0; Packer::CAPACITY],
            len: 0,
        }
    }
}

impl Packer {
    /// Bytes a packed encoding may take.
    pub const CAPACITY: usize = 256;

    /// Whether an encoding of `bytes` bytes fits.
    pub fn fits(bytes: usize) -> bool {
        bytes <= Packer::CAPACITY
    }

    /// Appends a byte. The caller made sure the encoding fits ([`Packer::fits`]); past the
    /// capacity, [`Packer::fingerprint`] and [`Packer::bytes`] panic.
    #[inline(always)]
    pub fn push(&mut self, b: u8) {
        self.buf[self.len % Packer::CAPACITY] = b;
        self.len += 1;
    }

    /// The encoding so far.
    ///
    /// # Panics
    /// If more than [`Packer::CAPACITY`] bytes were pushed.
    pub fn bytes(&self) -> &[u8] {
        assert!(
            self.len <= Packer::CAPACITY,
            "a packed state took {} bytes, more than the {} a Packer holds (check Packer::fits first)",
            self.len,
            Packer::CAPACITY
        );
        &self.buf[..self.len]
    }

    /// The fingerprint of the encoding: [`fingerprint_bytes`] of [`Packer::bytes`].
    #[inline]
    pub fn fingerprint(&self) -> u64 {
        fingerprint_bytes(self.bytes())
    }
}

/// The fingerprint of a byte string: the value a [`Fingerprinter`] fed the same bytes one by
/// one finishes with, computed a word at a time.
#[inline]
pub fn fingerprint_bytes(bytes: &[u8]) -> u64 {
    let word = |chunk: &[u8]| {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        u64::from_le_bytes(w)
    };
    let mut hash = SEED;
    let mut pairs = bytes.chunks_exact(16);
    for pair in &mut pairs {
        hash = mum(word(&pair[..8]) ^ K1, word(&pair[8..]) ^ hash ^ K2);
    }
    let rest = pairs.remainder();
    let hash = if rest.len() >= 8 {
        mum(word(&rest[..8]) ^ K1, word(&rest[8..]) ^ hash ^ K2)
    } else {
        mum(word(rest) ^ K1, hash ^ K2)
    };
    fmix64(hash ^ fmix64(bytes.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::{fingerprint, fmix64, mum, Fingerprinter, K1, K2, SEED};
    use std::collections::HashSet;
    use std::hash::Hasher;

    /// The fingerprint of `bytes` as the word-at-a-time version computed it (each byte shifted
    /// into a word register; pairs of words mixed as they complete).
    fn word_at_a_time(bytes: &[u8]) -> u64 {
        let (mut hash, mut first) = (SEED, None);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let w = u64::from_le_bytes(chunk.try_into().unwrap());
            match first.take() {
                Some(f) => hash = mum(f ^ K1, w ^ hash ^ K2),
                None => first = Some(w),
            }
        }
        let mut tail = [0u8; 8];
        tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        let word = u64::from_le_bytes(tail);
        let hash = match first {
            Some(f) => mum(f ^ K1, word ^ hash ^ K2),
            None => mum(word ^ K1, hash ^ K2),
        };
        fmix64(hash ^ fmix64(bytes.len() as u64))
    }

    /// The buffered fingerprinter gives every stream the value the word-at-a-time one gave,
    /// for every length around the buffer's and the words' boundaries (a buffer that dropped
    /// its last word, mixed a pair out of order or miscounted the length would fail here).
    #[test]
    fn buffering_keeps_the_fingerprints() {
        for len in 0..200usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
            let mut h = Fingerprinter::default();
            for &b in &bytes {
                h.write_u8(b);
            }
            assert_eq!(h.finish(), word_at_a_time(&bytes), "{len} bytes");
            assert_eq!(super::fingerprint_bytes(&bytes), h.finish(), "{len} bytes");
        }
    }

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
