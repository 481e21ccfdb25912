//! Parts of vectors written without data movement where that is free: halves by lanes,
//! even and odd lanes, shuffles sunk through lane-wise nodes, parts of concatenations and
//! of loads. Lane-wise nodes are rebuilt over the parts of their operands, so that rules
//! see the same shapes at the narrower width. The strategies of `super::strategy` build
//! their candidates from these.

use std::collections::HashMap;

use super::lanes::{lane_wise, rebuild_lanes};
use crate::ir::{Expr, Op, mk_typed};
use crate::types::Elem;
use crate::util::idhash::IdMap;

/// A shuffle of one lane-wise node as the node over its operands shuffled alike (each
/// lane is computed from the same lane of its operands, so it can be computed where the
/// shuffle puts it), sunk through every lane-wise node below to the leaves. Rules that
/// consume lanes in a permuted order (x86 packs work within 128-bit blocks) ask for such
/// shuffles; sunk to the leaves, the shuffles of loads meet rules that produce that order
/// directly (unpacks against zero widen within blocks), and the arithmetic between them
/// is the arithmetic rules know, not opaque shuffles.
pub fn sunk_shuffle(e: &Expr) -> Option<Expr> {
    let Op::Shuffle(idx) = e.op() else {
        return None;
    };
    if e.args().len() != 1 || !lane_wise(e.arg(0)) {
        return None;
    }
    let mut memo = HashMap::new();
    Some(shuffled(e.arg(0), idx, &mut memo))
}

/// `shuffle(idx, e)` with the shuffle moved below lane-wise nodes, written without a
/// shuffle where that is free: a broadcast stays a broadcast, and a shuffle of a shuffle
/// is one shuffle. `memo` is keyed by node and lane order (a DAG shares operands).
pub fn shuffled(e: &Expr, idx: &[u32], memo: &mut HashMap<(usize, Vec<u32>), Expr>) -> Expr {
    let key = (e.id(), idx.to_vec());
    if let Some(x) = memo.get(&key) {
        return x.clone();
    }
    let lanes = idx.len() as u32;
    let plain = || {
        mk_typed(
            Op::Shuffle(idx.into()),
            e.ty().with_lanes(lanes),
            vec![e.clone()],
        )
    };
    let out = match e.op() {
        _ if e.ty().is_scalar() => e.clone(),
        Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(lanes),
        Op::Shuffle(inner) if e.args().len() == 1 => {
            let composed: Vec<u32> = idx.iter().map(|&i| inner[i as usize]).collect();
            shuffled(e.arg(0), &composed, memo)
        }
        _ if idx.iter().enumerate().all(|(i, &j)| i as u32 == j) && lanes == e.ty().lanes => {
            e.clone()
        }
        _ if lane_wise(e) => {
            rebuild_lanes(e, lanes, |a| shuffled(a, idx, memo)).unwrap_or_else(plain)
        }
        _ => plain(),
    };
    memo.insert(key, out.clone());
    out
}

/// How [`half_memo`] takes halves.
#[derive(Clone, Copy, Debug)]
pub struct HalfOptions {
    /// The widest register in bits.
    pub register_bits: u32,
    /// Whether half of a strided slice of a load is the same slice of half the load
    /// (targets with deinterleaving loads).
    pub structured: bool,
    /// Whether a lane-wise value that fits one register is computed once and sliced,
    /// rather than rebuilt at half the lanes from halves of its operands.
    pub keep_registers: bool,
}

/// The low or high half of `e` by lanes (memoized in `memo`, one per side), written
/// without a slice where that is free:
/// lane-wise nodes are rebuilt at half the lanes over the halves of their operands, so
/// that rules see the same shapes at the narrower width.
pub fn half_memo(e: &Expr, hi: bool, how: HalfOptions, memo: &mut IdMap<usize, Expr>) -> Expr {
    let HalfOptions {
        register_bits,
        structured,
        keep_registers,
    } = how;
    if let Some(h) = memo.get(&e.id()) {
        return h.clone();
    }
    let t = e.ty();
    let h = t.lanes / 2;
    let start = if hi { h } else { 0 };
    let slice = || {
        crate::ir::mk_typed(
            Op::Slice { start, stride: 1 },
            t.with_lanes(h),
            vec![e.clone()],
        )
    };
    let out = if let Some(p) = concat_part(e, start, h) {
        p
    } else {
        match e.op() {
            Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(h),
            // A load that fits a register stays one load: its halves are slices, which
            // high-half instructions read directly. Wider loads become two loads.
            Op::Load(..) if t.total_bits() > register_bits as u64 => {
                load_part(e, start, h).unwrap_or_else(slice)
            }
            // On targets with deinterleaving loads, half of a strided slice wider than a
            // register is the same slice of half the load: each half is one `ld2` instead
            // of the whole load being deinterleaved and then split. A slice that fits a
            // register stays whole: high-half instructions read its halves. (On AVX2,
            // clang's shuffles of the whole load are faster than of two half-loads.)
            Op::Slice {
                start: first,
                stride,
            } if structured
                && *stride > 1
                && t.total_bits() > register_bits as u64
                && first < stride
                && stride * (start + h) <= e.arg(0).ty().lanes
                && matches!(e.arg(0).op(), Op::Load(..))
                && e.arg(0).ty().total_bits() > register_bits as u64 =>
            {
                load_part(e.arg(0), stride * start, stride * h)
                    .map(|part| {
                        crate::ir::mk_typed(
                            Op::Slice {
                                start: *first,
                                stride: *stride,
                            },
                            t.with_lanes(h),
                            vec![part],
                        )
                    })
                    .unwrap_or_else(slice)
            }
            // Keeping registers: a value that fits one register is computed once and its
            // halves read from it (the low half is the register; high-half instructions
            // such as `smlal2` read the other), rather than computed twice at half the
            // lanes from halves of its operands: a widened byte row stays one `ushll`, not
            // four. Rebuilding instead keeps the halves' sums of taps visible to the
            // multiply-add builders (`pmaddwd` pairs); selection costs both.
            _ if keep_registers
                && lane_wise(e)
                && t.total_bits() <= register_bits as u64
                && e.args()
                    .iter()
                    .any(|a| !a.ty().is_scalar() && a.as_const().is_none()) =>
            {
                slice()
            }
            _ if lane_wise(e) => {
                rebuild_lanes(e, h, |a| half_memo(a, hi, how, memo)).unwrap_or_else(slice)
            }
            _ => slice(),
        }
    };
    memo.insert(e.id(), out.clone());
    out
}

/// The even or odd lanes of `e` (memoized in `memo`, one per parity): lane-wise nodes are
/// rebuilt at half the lanes over the same parity of their operands, so that a widening
/// node over registers becomes the half that a deinterleaving instruction computes; other
/// nodes are sliced.
pub fn parity_memo(e: &Expr, odd: bool, memo: &mut IdMap<usize, Expr>) -> Expr {
    if let Some(h) = memo.get(&e.id()) {
        return h.clone();
    }
    let t = e.ty();
    let h = t.lanes / 2;
    let slice = || {
        crate::ir::mk_typed(
            Op::Slice {
                start: odd as u32,
                stride: 2,
            },
            t.with_lanes(h),
            vec![e.clone()],
        )
    };
    let out = match e.op() {
        Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(h),
        // Interleaving the halves back is undone by taking a parity.
        Op::Interleave if e.args().len() == 2 => e.arg(odd as usize).clone(),
        _ if lane_wise(e) => {
            rebuild_lanes(e, h, |a| parity_memo(a, odd, memo)).unwrap_or_else(slice)
        }
        _ => slice(),
    };
    memo.insert(e.id(), out.clone());
    out
}

/// Lanes `start .. start + lanes` of the concatenation `e` when they lie in one of its
/// arguments: that argument, or a slice of it.
pub fn concat_part(e: &Expr, start: u32, lanes: u32) -> Option<Expr> {
    if !matches!(e.op(), Op::Concat) {
        return None;
    }
    let mut at = 0;
    for a in e.args() {
        let n = a.ty().lanes;
        if at == start && n == lanes {
            return Some(a.clone());
        }
        if at <= start && start + lanes <= at + n {
            return Some(crate::ir::mk_typed(
                Op::Slice {
                    start: start - at,
                    stride: 1,
                },
                a.ty().with_lanes(lanes),
                vec![a.clone()],
            ));
        }
        at += n;
    }
    None
}

/// Lanes `start .. start + lanes` of the load `e` (index `ramp(b, s, n)` with a constant
/// stride) as a load of their own.
pub fn load_part(e: &Expr, start: u32, lanes: u32) -> Option<Expr> {
    let Op::Load(buf, align) = e.op() else {
        return None;
    };
    let idx = e.arg(0);
    if !matches!(idx.op(), Op::Ramp) {
        return None;
    }
    let stride = idx.arg(1).as_const()? as i64;
    let base = super::lanes::add_i32(
        idx.arg(0),
        &Expr::int(Elem::I32, (stride * start as i64) as i128).ok()?,
    );
    let ramp = crate::ir::mk_typed(
        Op::Ramp,
        idx.ty().with_lanes(lanes),
        vec![base, idx.arg(1).clone()],
    );
    Some(crate::ir::mk_typed(
        Op::Load(buf.clone(), *align),
        e.ty().with_lanes(lanes),
        vec![ramp],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::mk;
    use crate::types::Type;

    /// A shuffle of arithmetic becomes the arithmetic of shuffled leaves: splats stay splats
    /// at the new width, a shuffle of a shuffle is one composed shuffle, and what is not
    /// lane-wise (a vector variable) keeps the shuffle.
    #[test]
    fn shuffles_sink_to_the_leaves() {
        let t = Type::vec(Elem::U16, 8);
        let a = Expr::var("a", t);
        let s = Expr::var("s", Type::scalar(Elem::U16));
        let inner = mk_typed(
            Op::Shuffle(vec![7, 6, 5, 4, 3, 2, 1, 0].into()),
            t,
            vec![a.clone()],
        );
        let sum = mk(Op::Add, vec![inner, s.broadcast(8)]);
        let widened = sum.cast(Elem::U32);
        let e = mk_typed(
            Op::Shuffle(vec![0, 1, 4, 5].into()),
            Type::vec(Elem::U32, 4),
            vec![widened],
        );
        let sunk = sunk_shuffle(&e).expect("sinks through the cast and the add");
        let leaf = mk_typed(
            Op::Shuffle(vec![7, 6, 3, 2].into()),
            Type::vec(Elem::U16, 4),
            vec![a],
        );
        let expected = mk(Op::Add, vec![leaf, s.broadcast(4)]).cast(Elem::U32);
        assert_eq!(sunk, expected, "{}", crate::syntax::halide::print(&sunk));
        // Nothing to sink into: a shuffle of a variable stays as it is.
        let v = Expr::var("v", t);
        let plain = mk_typed(
            Op::Shuffle(vec![0, 1].into()),
            Type::vec(Elem::U16, 2),
            vec![v],
        );
        assert!(sunk_shuffle(&plain).is_none());
    }
}
