//! Hash maps keyed by node identities and precomputed hashes.
//!
//! Selection and traversal keep maps from expression ids (`Expr::id`, an address) to
//! values, and the interner keys its table by structural hashes that are already hashes.
//! The standard SipHash is built to resist adversarial keys, which these are not, and it
//! was the largest single cost of compiling a 7x7 stencil (a fifth of the time in hashing).
//! This hasher mixes one integer with a multiply and a fold instead.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for keys that are one integer (addresses, ids, precomputed hashes), or a few
/// (tuples of them, e-graph nodes); other bytes (names) go through FNV-1a.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used by integer keys; FNV-1a keeps any other key correct.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        // Addresses are aligned, so their low bits are zero: multiply to spread every bit
        // upwards, then fold the high half back so the low bits (the bucket) vary too.
        let h = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    // E-graph ids are `u32`s: one multiply, not four bytes of FNV.
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// A `HashMap` keyed by ids or hashes.
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
/// A `HashSet` of ids or hashes.
pub type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_keys_spread_over_buckets() {
        // 1,000 keys 16 apart (like addresses of nodes) land in many distinct low-bit
        // buckets; an identity hash would put them all in every 16th.
        let mut buckets = IdSet::default();
        for i in 0..1000u64 {
            let mut h = IdHasher::default();
            h.write_u64(0x7f00_0000_0000 + 16 * i);
            buckets.insert(h.finish() & 1023);
        }
        assert!(buckets.len() > 500, "{}", buckets.len());
        let mut m: IdMap<usize, usize> = IdMap::default();
        for i in 0..100 {
            m.insert(i * 16, i);
        }
        assert_eq!(m.get(&(42 * 16)), Some(&42));
        assert_eq!(m.len(), 100);
    }
}
