//! Loads a chunk loop takes from the previous chunk rather than from memory.
//!
//! A sum of taps along a row (`in(x) + in(x + 1) + ... + in(x + 4)`) reads the row at
//! consecutive offsets, one vector load each. Where the row loop computes several chunks
//! one after another, the load at offset `h - s` of a chunk holds the last `s` lanes of the
//! previous chunk's load at offset `h` and the first lanes of this chunk's: one two-source
//! shuffle (on AVX2 a `vperm2i128`, shared by every offset, and one `vpalignr` each). clang
//! -O3 makes the same recurrence of the scalar loop (one offset), and with two vector loads
//! per cycle such a sum is bound by its loads: a 5-tap row sum took its loads at 0.86x clang
//! -O3 and 1.15x with two of the five taken from the previous chunk. Half of a run of
//! offsets (rounded down) is taken so, which keeps the shuffles below the loads.
//!
//! A chunk wider than a register loads each offset once per register: the load of `L`
//! lanes at `h - s` then takes its first lanes from the load at `h - L`, which is the
//! chunk's own load of the register before (the second register's taps from the first's)
//! or, for the first register, the previous chunk's load of its last register. A 5-tap sum
//! of 16-bit lanes narrowed to bytes (32 lanes, two registers a chunk) loaded 20 registers
//! per 64 lanes and ran 1.0x clang -O3; with four loads of every ten taken so, 1.11x.

use std::collections::BTreeMap;

use crate::ir::{Expr, Op};

/// A load taken from the `anchor` (the same row at `shift` lanes more) and the load
/// before it: lanes `n - shift ..` of `before`'s value (this chunk's, or the previous
/// chunk's when `before_from_previous_chunk`), then lanes `.. n - shift` of the anchor's.
#[derive(Clone, Debug)]
pub struct NeighbourLoad {
    /// The load taken so.
    pub load: Expr,
    /// The load of the same row `shift` lanes further on.
    pub anchor: Expr,
    /// How many lanes further on the anchor reads (below the load's lanes).
    pub shift: u32,
    /// The load whose value ends where the anchor's begins.
    pub before: Expr,
    /// Whether `before`'s value is the previous chunk's (in the loop's first chunk, the
    /// load is loaded).
    pub before_from_previous_chunk: bool,
}

/// The dense loads below `roots` that a loop over consecutive chunks of `lanes` lanes
/// takes from neighbouring loads: for each run of three or more consecutive offsets into
/// one row, the highest is the anchor and the next `(k - 1) / 2` below it are taken from
/// it and the load of the row one register before it (this chunk's, or the previous
/// chunk's last), where that one is loaded rather than taken.
pub fn neighbour_loads(roots: &[Expr], lanes: u32) -> Vec<NeighbourLoad> {
    if !load_bound(roots) {
        return Vec::new();
    }
    // Loads by row (buffer, element type and the position without its constant offset),
    // then by constant offset; in the order a walk meets them, for a stable result.
    let mut rows: Vec<(RowKey, BTreeMap<i128, Expr>)> = Vec::new();
    // A load widened as it is read (`vpmovsxbw ymm, m128`) would need a conversion of its
    // own once taken from a register: such loads stay loads (a 9-tap byte sum widened to
    // words ran at 0.86x clang -O3 with them taken, 1.02x without).
    let widened: std::collections::HashSet<usize> = roots
        .iter()
        .flat_map(crate::ir::visit::post_order)
        .filter(|n| matches!(n.op(), Op::Cast) && n.arg(0).ty().elem.bits() < n.ty().elem.bits())
        .map(|n| n.arg(0).id())
        .collect();
    for root in roots {
        for n in crate::ir::visit::post_order(root) {
            let Some((key, offset)) = row_offset(&n, lanes) else {
                continue;
            };
            if widened.contains(&n.id()) {
                continue;
            }
            match rows.iter_mut().find(|(k, _)| *k == key) {
                Some((_, offsets)) => {
                    offsets.insert(offset, n.clone());
                }
                None => rows.push((key, BTreeMap::from([(offset, n.clone())]))),
            }
        }
    }
    let mut taken = Vec::new();
    for (key, offsets) in &rows {
        taken.extend(taken_from_neighbours(offsets, key.1.lanes, lanes));
    }
    // A load taken from one that is itself taken could form a cycle: such stay loads.
    let ids: std::collections::HashSet<usize> = taken.iter().map(|n| n.load.id()).collect();
    taken.retain(|n| !ids.contains(&n.before.id()) && !ids.contains(&n.anchor.id()));
    taken
}

/// The loads of one row, `register` lanes each at the given offsets of a chunk of `lanes`
/// lanes, taken from neighbouring loads (see [`neighbour_loads`]).
fn taken_from_neighbours(
    offsets: &BTreeMap<i128, Expr>,
    register: u32,
    lanes: u32,
) -> Vec<NeighbourLoad> {
    let loads: Vec<(i128, Expr)> = offsets.iter().map(|(o, e)| (*o, e.clone())).collect();
    let register_lanes = i128::from(register);
    let mut out = Vec::new();
    let mut start = 0;
    while start < loads.len() {
        let mut end = start + 1;
        while end < loads.len() && loads[end].0 == loads[end - 1].0 + 1 {
            end += 1;
        }
        let run = &loads[start..end];
        start = end;
        let (top, anchor) = &run[run.len() - 1];
        // The register before the anchor: this chunk's, else the previous chunk's load at
        // the same place (this chunk's a chunk further on; the anchor itself when the
        // chunk is one register).
        let before = match offsets.get(&(top - register_lanes)) {
            Some(e) => (e.clone(), false),
            None => match offsets.get(&(top - register_lanes + i128::from(lanes))) {
                Some(e) => (e.clone(), true),
                None => continue,
            },
        };
        for (offset, load) in run.iter().rev().skip(1).take((run.len() - 1) / 2) {
            let shift = (top - offset) as u32;
            if shift < register {
                out.push(NeighbourLoad {
                    load: load.clone(),
                    anchor: anchor.clone(),
                    shift,
                    before: before.0.clone(),
                    before_from_previous_chunk: before.1,
                });
            }
        }
    }
    out
}

/// Whether loads bound the chunks of `roots`: with two vector loads and four vector
/// operations per cycle, fewer than two operations per load. Measured on AVX2 (Zen 4):
/// row sums and maxima with about one operation per load ran 8% to 45% faster with
/// loads taken from the previous chunk; 3x3 and 5x5 stencils with 2.4 to 7 operations
/// per load (products, median networks, packs) ran 5% to 15% slower.
fn load_bound(roots: &[Expr]) -> bool {
    let (mut loads, mut ops) = (0usize, 0usize);
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        for n in crate::ir::visit::post_order(root) {
            if n.ty().is_scalar() || !seen.insert(n.id()) {
                continue;
            }
            match n.op() {
                Op::Load(..) => loads += 1,
                // Free: reinterpretations, leaves, loop-invariant splats, load positions.
                Op::Reinterpret | Op::Var(_) | Op::Const(_) | Op::Broadcast | Op::Ramp => {}
                Op::Cast if n.arg(0).ty().elem.bits() == n.ty().elem.bits() => {}
                _ => ops += 1,
            }
        }
    }
    ops < 2 * loads
}

/// A row: the buffer, the loaded type, and the position without its constant offset.
type RowKey = (String, crate::types::Type, Expr);

/// The row and constant offset of a dense load of `lanes` lanes or a part of them (a
/// register of a wider chunk).
fn row_offset(e: &Expr, lanes: u32) -> Option<(RowKey, i128)> {
    let Op::Load(buf, _) = e.op() else {
        return None;
    };
    let n = e.ty().lanes;
    if n < 2 || !lanes.is_multiple_of(n) || !super::lanes::is_dense(e) {
        return None;
    }
    let (rest, offset) = super::prepare::split_const(e.arg(0).arg(0));
    Some(((buf.to_string(), e.ty(), rest), i128::from(offset)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::prepare::tests::entry;

    /// A five-tap row sum takes its two loads next below the highest from it; a lone pair of
    /// offsets and loads of another row or width are left alone.
    #[test]
    fn runs_of_offsets_take_half_their_loads_from_the_highest() {
        let e = entry(
            "(uint16)in_u16(x) + (uint16)in_u16(x + 1) + (uint16)in_u16(x + 2) + (uint16)in_u16(x + 3) + (uint16)in_u16(x + 4) + (uint16)in_u16(x + 9) + (uint16)in_u16(x + 10)",
            16,
        );
        let found = neighbour_loads(std::slice::from_ref(&e), 16);
        let offsets: Vec<(String, u32)> = found
            .iter()
            .map(|n| (n.load.arg(0).arg(0).to_string(), n.shift))
            .collect();
        assert_eq!(offsets.len(), 2, "{offsets:?}");
        assert_eq!(found.iter().map(|n| n.shift).collect::<Vec<_>>(), [1, 2]);
        assert!(found.iter().all(|n| n.anchor == found[0].anchor));
        // At another width nothing matches.
        assert!(neighbour_loads(std::slice::from_ref(&e), 8).is_empty());
    }

    /// In a chunk of two registers, each register's taps come from its own anchor and the
    /// register before it: the second's from the first register's anchor in the same
    /// chunk, the first's from the previous chunk's second register.
    #[test]
    fn registers_of_a_wider_chunk_take_their_taps_from_the_register_before() {
        let taps = |base: i32| {
            (0..5)
                .map(|k| format!("(uint16)in_u16(x + {})", base + k))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        let e = entry(&format!("{} + {}", taps(0), taps(16)), 16);
        let found = neighbour_loads(std::slice::from_ref(&e), 32);
        let offset = |l: &Expr| super::super::prepare::split_const(l.arg(0).arg(0)).1;
        let mut seen: Vec<(i64, u32, i64, bool)> = found
            .iter()
            .map(|n| {
                (
                    offset(&n.load),
                    n.shift,
                    offset(&n.before),
                    n.before_from_previous_chunk,
                )
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [
                (2, 2, 20, true),
                (3, 1, 20, true),
                (18, 2, 4, false),
                (19, 1, 4, false)
            ]
        );
        // A chunk of one register takes the same taps from the previous chunk's anchor.
        let one = entry(&taps(0), 16);
        let found = neighbour_loads(std::slice::from_ref(&one), 16);
        assert!(
            found
                .iter()
                .all(|n| n.before == n.anchor && n.before_from_previous_chunk)
        );
        assert_eq!(found.len(), 2);
    }
}
