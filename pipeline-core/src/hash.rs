//! The hash tables of the compiler's passes, with a cheap deterministic hash.
//!
//! Std's `HashMap` hashes with SipHash under a random key: a defence against
//! inputs crafted to collide, which a compiler's own tables (keyed by func
//! ids, loop names, interned expression nodes, node addresses) do not need.
//! SipHash was 4% of the instructions of a 100-func pipeline's expansion.
//! This is the multiply-rotate hash of Firefox and rustc: a word at a time,
//! one rotate, xor and multiply each. Being unkeyed, it also makes every
//! table's iteration order the same from one build to the next (nothing the
//! macro emits depends on that order; see `lower::loops`). The hottest
//! lookups go through [`Table`], a plainer table than std's.

use std::hash::{BuildHasherDefault, Hash, Hasher};

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
    /// The bytes as little-endian words, the last one padded with zeros.
    /// (A byte at a time, by index: unoptimized, as Cargo builds the
    /// macro, this is 4 M instructions fewer than slicing into words over
    /// the 100-func chain's expansion, on names of about 9 bytes.)
    fn write(&mut self, bytes: &[u8]) {
        let (mut word, mut shift, mut i) = (0u64, 0, 0);
        while i < bytes.len() {
            word |= (bytes[i] as u64) << shift;
            i += 1;
            shift += 8;
            if shift == 64 {
                self.add(word);
                (word, shift) = (0, 0);
            }
        }
        if shift > 0 {
            self.add(word);
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

/// A hash table for the passes' hottest lookups: open addressing with
/// linear probing over a table of entry numbers, the entries in a vector
/// in the order they were inserted.
///
/// Std's table probes sixteen control bytes at a time with SSE2, which
/// optimized is the fastest there is, but a macro built as Cargo builds
/// proc macros by default (unoptimized) calls every intrinsic and its
/// debug checks: about a thousand instructions a lookup, 83 M of the
/// 100-func chain's 699 M. Here a lookup is the key's hash (half of what
/// is left) and a few indexed reads: the tables of common subexpressions,
/// of the names the emitter's closures read and bind, of its identifiers
/// and of the vector emitter's uniform nodes, moved here, took the chain
/// to 663 M.
#[derive(Clone)]
pub(crate) struct Table<K, V> {
    /// Each entry with its key's hash.
    entries: Vec<(u64, K, V)>,
    /// Entry number + 1 by hash, 0 where free; a power of two long, at
    /// most half full.
    slots: Vec<u32>,
}

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Table {
            entries: Vec::new(),
            slots: Vec::new(),
        }
    }
}

impl<K: Hash + Eq, V> Table<K, V> {
    fn hash(key: &K) -> u64 {
        let mut h = WordHasher::default();
        key.hash(&mut h);
        h.finish()
    }

    /// The slot of `key`, of hash `hash`, in a table with slots, and its
    /// entry; or the free slot it would take.
    fn find(&self, hash: u64, key: &K) -> (usize, Option<usize>) {
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return (at, None);
            }
            let entry = &self.entries[slot as usize - 1];
            if entry.0 == hash && entry.1 == *key {
                return (at, Some(slot as usize - 1));
            }
            at = (at + 1) & mask;
        }
    }

    fn entry_of(&self, key: &K) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        self.find(Self::hash(key), key).1
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.entry_of(key).map(|e| &self.entries[e].2)
    }

    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.entry_of(key).map(|e| &mut self.entries[e].2)
    }

    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.entry_of(key).is_some()
    }

    /// The value of `key`, inserted as `make()` if there is none.
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        if 2 * (self.entries.len() + 1) > self.slots.len() {
            self.grow();
        }
        let hash = Self::hash(&key);
        let e = match self.find(hash, &key) {
            (_, Some(e)) => e,
            (at, None) => {
                self.entries.push((hash, key, make()));
                self.slots[at] = self.entries.len() as u32;
                self.entries.len() - 1
            }
        };
        &mut self.entries[e].2
    }

    /// Sets the value of `key`; returns the one it replaces.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        let mut value = Some(value);
        let slot = self.get_or_insert_with(key, || value.take().expect("taken once"));
        value.map(|v| std::mem::replace(slot, v))
    }

    /// Removes `key`; returns its value. The last entry takes the removed
    /// one's place in the order.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        if self.entries.is_empty() {
            return None;
        }
        let (mut hole, e) = self.find(Self::hash(key), key);
        let e = e?;
        let mask = self.slots.len() - 1;
        // Empty its slot, moving back each later slot of the run that
        // may sit there (its own slot is not between the hole and it).
        let mut next = (hole + 1) & mask;
        while self.slots[next] != 0 {
            let home = self.entries[self.slots[next] as usize - 1].0 as usize & mask;
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                self.slots[hole] = self.slots[next];
                hole = next;
            }
            next = (next + 1) & mask;
        }
        self.slots[hole] = 0;
        let last = self.entries.len() - 1;
        if e != last {
            let (hash, key, _) = &self.entries[last];
            let (at, _) = self.find(*hash, key);
            self.slots[at] = e as u32 + 1;
        }
        Some(self.entries.swap_remove(e).2)
    }

    /// The entries, in the order they were inserted, but for removals
    /// (only tests list them: what the macro emits never depends on a
    /// table's order).
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(_, k, v)| (k, v))
    }

    /// Twice the slots (16 at first), the entries placed again.
    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(16);
        assert!(
            len <= u32::MAX as usize,
            "a table of fewer than 2^31 entries"
        );
        self.slots = vec![0; len];
        let mask = len - 1;
        for (e, (hash, _, _)) in self.entries.iter().enumerate() {
            let mut at = *hash as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = e as u32 + 1;
        }
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

    /// The table against std's on a long mixed run of insertions,
    /// lookups and removals, keys colliding in the low bits included.
    #[test]
    fn the_table_finds_what_std_finds() {
        let mut ours: Table<u64, u64> = Table::default();
        let mut std: std::collections::HashMap<u64, u64> = Default::default();
        let mut x = 12345u64;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (x >> 40) % 3000 * if i % 3 == 0 { 1 << 20 } else { 1 };
            match i % 5 {
                0 => assert_eq!(ours.insert(key, i), std.insert(key, i)),
                1 => {
                    *ours.get_or_insert_with(key, || 7) += 1;
                    *std.entry(key).or_insert(7) += 1;
                }
                2 => assert_eq!(ours.get(&key), std.get(&key)),
                3 if i % 2 == 0 => assert_eq!(ours.remove(&key), std.remove(&key)),
                _ => assert_eq!(ours.contains_key(&key), std.contains_key(&key)),
            }
            if i % 1000 == 0 {
                // A copy answers as the table did.
                let copy = ours.clone();
                assert!(std.iter().all(|(k, v)| copy.get(k) == Some(v)));
            }
        }
        assert_eq!(ours.iter().count(), std.len());
        for (k, v) in ours.iter() {
            assert_eq!(std.get(k), Some(v));
        }
    }

    #[test]
    fn the_table_keeps_insertion_order_and_replaces_values() {
        let mut t: Table<&str, u32> = Table::default();
        assert_eq!(t.get(&"a"), None);
        for (k, v) in [("b", 1), ("a", 2), ("c", 3)] {
            assert_eq!(t.insert(k, v), None);
        }
        assert_eq!(t.insert("a", 4), Some(2));
        *t.get_mut(&"c").unwrap() += 10;
        let all: Vec<_> = t.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(all, [("b", 1), ("a", 4), ("c", 13)]);
    }
}
