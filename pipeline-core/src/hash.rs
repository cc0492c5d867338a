//! The hash tables of the compiler's passes, with a cheap deterministic hash.
//!
//! Std's `HashMap` hashes with SipHash under a random key: a defence against
//! inputs crafted to collide, which a compiler's own tables (keyed by func
//! ids, loop names, interned expression nodes, node addresses) do not need.
//! SipHash was 4% of the instructions of a 100-func pipeline's expansion.
//! This is the multiply-rotate hash of Firefox and rustc: a word at a time,
//! one rotate, xor and multiply each. Being unkeyed, it also makes every
//! table's iteration order the same from one build to the next (nothing the
//! macro emits depends on that order; see `lower::loops`).

use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`WordHasher`].
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// A `HashSet` with [`WordHasher`].
pub(crate) type HashSet<T> = std::collections::HashSet<T, BuildHasherDefault<WordHasher>>;

/// Odd, with its bits well mixed (the multiplier of rustc's own hasher;
/// the test below checks that small keys spread over the buckets).
const SEED: u64 = 0xf1_35_7a_ea_2e_62_a9_c5;

/// Folds each word into the state with a rotate, an xor and a multiply.
#[derive(Clone, Copy, Default)]
pub(crate) struct WordHasher {
    state: u64,
}

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.add(v as u64)
    }

    fn write_u16(&mut self, v: u16) {
        self.add(v as u64)
    }

    fn write_u32(&mut self, v: u32) {
        self.add(v as u64)
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v)
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64)
    }

    /// The multiply leaves its best-mixed bits at the top; the table picks
    /// a bucket from the bottom bits, so the top ones are rotated down.
    fn finish(&self) -> u64 {
        self.state.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of(v: impl Hash) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(v)
    }

    #[test]
    fn equal_keys_hash_equal_and_near_keys_differ() {
        assert_eq!(hash_of("f12"), hash_of(String::from("f12")));
        assert_ne!(hash_of("f12"), hash_of("f21"));
        // Consecutive ids and aligned addresses, the tables' usual keys,
        // spread over the buckets of a small table.
        for stride in [1u64, 8, 16, 64, 4096] {
            let buckets: HashSet<u64> = (0..64u64).map(|k| hash_of(k * stride) & 63).collect();
            assert!(
                buckets.len() >= 32,
                "stride {stride}: {} of 64 buckets",
                buckets.len()
            );
        }
    }

    #[test]
    fn strings_of_every_length_hash_all_their_bytes() {
        let s = "abcdefghijklmnopqrstuvwxyz";
        let all: HashSet<u64> = (0..=s.len()).map(|n| hash_of(&s[..n])).collect();
        assert_eq!(all.len(), s.len() + 1);
    }
}
