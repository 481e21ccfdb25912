//! A tiny deterministic random number generator for test inputs.
//!
//! SplitMix64 is used rather than a crate so that a seed printed in a failure report
//! reproduces the same inputs forever, independent of any dependency's version.

use crate::types::Elem;

/// SplitMix64 (Steele, Lea and Flood, 2014).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    /// A uniform value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform value in the inclusive range `lo..=hi`.
    pub fn range_i128(&mut self, lo: i128, hi: i128) -> i128 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u128 + 1;
        let r = ((self.next_u64() as u128) << 64 | self.next_u64() as u128) % span;
        lo + r as i128
    }

    /// A random lane of `elem`: one time in four an edge case (see [`edge_cases`]),
    /// otherwise uniform bits.
    pub fn lane(&mut self, elem: Elem) -> u128 {
        if self.below(4) == 0 {
            let edges = edge_cases(elem);
            return edges[self.below(edges.len() as u64) as usize];
        }
        let bits = (self.next_u64() as u128) << 64 | self.next_u64() as u128;
        bits & elem.mask()
    }
}

/// The values every test should try: 0, 1, -1 (all ones), min, max, their neighbours and
/// the two alternating bit patterns.
pub fn edge_cases(elem: Elem) -> Vec<u128> {
    let m = elem.mask();
    let min = crate::types::from_i128(elem.min_value(), elem);
    let max = match elem.max_value() {
        Some(v) => v as u128,
        None => u128::MAX,
    } & m;
    let mut v = vec![
        0,
        1,
        m,
        min,
        max,
        min.wrapping_add(1) & m,
        max.wrapping_sub(1) & m,
        0x5555_5555_5555_5555_5555_5555_5555_5555 & m,
        0xaaaa_aaaa_aaaa_aaaa_aaaa_aaaa_aaaa_aaaa & m,
    ];
    v.sort();
    v.dedup();
    v
}
