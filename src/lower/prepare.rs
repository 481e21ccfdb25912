//! Preparing an expression for instruction selection: inputs become loads, a boolean result
//! becomes bytes, and an element-wise expression is cut into register-sized chunks.
//!
//! A *chunk* computes `L` consecutive output lanes. When every vector node of the expression
//! has the output's lane count and every load index is affine in the lane (`ramp(b, s, N)`
//! or a broadcast), lane `j` of any node only depends on lane `j` of its operands, so the
//! chunk starting at output lane `xo` is the same expression at `L` lanes with every load
//! re-based by `xo * s`. The emitted C loops over `xo`; the last chunk stores only the lanes
//! that exist. Loads may read up to one chunk past the last lane (callers pad buffers).
//!
//! A strided load `buf[ramp(b, s, L)]` (constant `s` of 2 to 4) becomes a dense load of
//! `s * L` lanes and a `slice`, so that loads of `2x` and `2x + 1` share one dense load and
//! rules can match the pair (pmaddwd and pmaddubsw sum adjacent lanes).
//!
//! Expressions that move lanes (slices, concatenations, shuffles, reductions, broadcasts of
//! vectors) are computed whole as one chunk; the generic code handles any lane count.

use std::collections::HashMap;

use super::lanes::{add_i32, fold_splats, i32c, mul_i32};
use crate::ir::{Expr, Op, Sym, mk, mk_typed};
use crate::types::{Elem, Type};

/// The name of the chunk's first output lane in chunked expressions.
pub const CHUNK_VAR: &str = "hv_xo";

/// An expression ready for selection.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The expression one chunk computes (in terms of [`CHUNK_VAR`] when chunked).
    pub chunk: Expr,
    /// Output lanes in total.
    pub lanes: u32,
    /// Lanes per chunk.
    pub chunk_lanes: u32,
    /// Whether the chunk expression is re-based per chunk (false: one chunk, `hv_xo` unused).
    pub chunked: bool,
    /// Vector inputs that became buffers (name and element type).
    pub vector_inputs: Vec<(Sym, Type)>,
    /// Whether a boolean result was turned into `u8` 0/1 lanes.
    pub bool_result: bool,
}

/// The chunk variable as an expression.
pub fn chunk_var() -> Expr {
    Expr::var(CHUNK_VAR, Type::INDEX)
}

/// An affine index: `base + stride * lane`.
struct Affine {
    base: Expr,
    stride: i64,
}

/// The affine form of a vector index expression, if it has one.
fn affine(e: &Expr) -> Option<Affine> {
    if e.ty().is_scalar() {
        return Some(Affine {
            base: e.clone(),
            stride: 0,
        });
    }
    match e.op() {
        Op::Ramp => Some(Affine {
            base: e.arg(0).clone(),
            stride: e.arg(1).as_const()? as i64,
        }),
        Op::Broadcast if e.arg(0).ty().is_scalar() => Some(Affine {
            base: e.arg(0).clone(),
            stride: 0,
        }),
        Op::Add => {
            let (a, b) = (affine(e.arg(0))?, affine(e.arg(1))?);
            Some(Affine {
                base: add_i32(&a.base, &b.base),
                stride: a.stride + b.stride,
            })
        }
        Op::Sub => {
            let (a, b) = (affine(e.arg(0))?, affine(e.arg(1))?);
            Some(Affine {
                base: mk(Op::Sub, vec![a.base, b.base]),
                stride: a.stride - b.stride,
            })
        }
        Op::Mul => {
            let (a, k) = match (e.arg(0).as_const(), e.arg(1).as_const()) {
                (_, Some(k)) => (affine(e.arg(0))?, k),
                (Some(k), _) => (affine(e.arg(1))?, k),
                _ => return None,
            };
            Some(Affine {
                base: mul_i32(&a.base, k as i64),
                stride: a.stride * k as i64,
            })
        }
        _ => None,
    }
}

/// Turns vector variables into loads from buffers of the same name and a boolean result into
/// `u8` lanes.
fn normalize_inputs(e: &Expr) -> (Expr, Vec<(Sym, Type)>, bool) {
    let e = crate::ir::visit::inline_lets(e);
    let mut inputs = Vec::new();
    let mut map = HashMap::new();
    for (name, ty) in crate::ir::visit::free_vars(&e) {
        if !ty.is_scalar() {
            let idx = mk_typed(
                Op::Ramp,
                Type::vec(Elem::I32, ty.lanes),
                vec![i32c(0), i32c(1)],
            );
            let load = mk_typed(Op::Load(name.clone(), None), ty, vec![idx]);
            map.insert(name.clone(), load);
            inputs.push((name, ty));
        }
    }
    let mut e = crate::ir::visit::substitute(&e, &map).expect("loads have their variable's type");
    let is_bool = e.ty().elem == Elem::Bool;
    if is_bool {
        let t = e.ty().with_elem(Elem::U8);
        let one = Expr::splat(t, 1).expect("1 fits");
        let zero = Expr::splat(t, 0).expect("0 fits");
        e = mk(Op::Select, vec![e, one, zero]);
    }
    (e, inputs, is_bool)
}

fn element_wise(e: &Expr, lanes: u32) -> bool {
    crate::ir::visit::post_order(e).iter().all(|n| {
        let t = n.ty();
        if t.is_scalar() {
            return true;
        }
        if t.lanes != lanes {
            return false;
        }
        match n.op() {
            Op::Load(..) => affine(n.arg(0)).is_some(),
            Op::Broadcast => n.arg(0).ty().is_scalar(),
            Op::Slice { .. }
            | Op::Concat
            | Op::Interleave
            | Op::Shuffle(_)
            | Op::ReduceAdd
            | Op::ReduceMin
            | Op::ReduceMax
            | Op::Let(_) => false,
            _ => true,
        }
    })
}

/// Chooses the lanes per chunk: a full register of the result type (at least 128 bits of
/// it), but no more than the output needs, rounded up to a power of two. Wider operands
/// (a narrowing cast's input) then span several registers, which rules such as the pack
/// instructions consume whole.
fn chunk_lanes(e: &Expr, register_bits: u32, by_narrowest: bool) -> u32 {
    let mut bits = e.ty().elem.bits().max(8);
    let mut registers = 1;
    if by_narrowest {
        let mut widest = bits;
        // Values only: load indices are address arithmetic.
        let mut index = std::collections::HashSet::new();
        for n in crate::ir::visit::post_order(e) {
            if let Op::Load(..) = n.op() {
                for i in crate::ir::visit::post_order(n.arg(0)) {
                    index.insert(i.id());
                }
            }
        }
        for n in crate::ir::visit::post_order(e) {
            let t = n.ty();
            if !t.is_scalar() && t.elem != Elem::Bool && !index.contains(&n.id()) {
                bits = bits.min(t.elem.bits().max(8));
                widest = widest.max(t.elem.bits().max(8));
            }
        }
        // Without widening, a register pair is as cheap to compute as one register.
        if widest == bits {
            registers = 2;
        }
    }
    let most = (registers * register_bits / bits).max(1);
    let least = (128 / bits).max(1);
    most.min(e.ty().lanes.next_power_of_two().max(least))
}

/// Rebuilds the element-wise expression `e` at `l` lanes for the chunk starting at
/// [`CHUNK_VAR`].
fn rechunk(e: &Expr, l: u32, aligned: bool) -> Expr {
    let xo = chunk_var();
    let windows = StridedWindows::of(e);
    crate::ir::visit::rebuild(e, |n, args| -> Result<Expr, crate::ir::TypeError> {
        let t = n.ty();
        if t.is_scalar() {
            return n.with_args(args);
        }
        let lt = t.with_lanes(l);
        Ok(match n.op() {
            Op::Load(buf, align) => {
                let a = affine(n.arg(0)).expect("checked element-wise");
                let first = windows.first_offset(buf, &a, aligned);
                let base = add_i32(&a.base, &mul_i32(&xo, a.stride));
                strided_load(buf, *align, lt, base, a.stride, first, aligned)
            }
            Op::Ramp => {
                let a = affine(n).expect("a ramp is affine");
                let base = add_i32(&a.base, &mul_i32(&xo, a.stride));
                mk_typed(Op::Ramp, lt, vec![base, i32c(a.stride)])
            }
            Op::Broadcast => mk_typed(Op::Broadcast, lt, args),
            _ => Expr::build(
                n.op().clone(),
                crate::ir::explicit_type(n).map(|_| lt),
                args,
            )?,
        })
    })
    .expect("re-chunking keeps types")
}

/// The strided loads of an expression grouped by buffer, stride and non-constant base, with
/// the smallest constant offset of each group: loads of `2x + 1` and `2x + 2` share one
/// window, and nothing reads before the group's first offset rounded down to a multiple of
/// the stride (outside what the caller provides: a load of `2x + 5` alone never reads
/// `2x`).
struct StridedWindows(Vec<(Sym, i64, Expr, i64)>);

impl StridedWindows {
    fn of(e: &Expr) -> Self {
        let mut groups: Vec<(Sym, i64, Expr, i64)> = Vec::new();
        for n in crate::ir::visit::post_order(e) {
            let Op::Load(buf, _) = n.op() else { continue };
            let Some(a) = affine(n.arg(0)) else { continue };
            if !(2..=4).contains(&a.stride) {
                continue;
            }
            let (rest, k) = split_const(&a.base);
            match groups
                .iter_mut()
                .find(|g| g.0 == *buf && g.1 == a.stride && g.2 == rest)
            {
                Some(g) => g.3 = g.3.min(k),
                None => groups.push((buf.clone(), a.stride, rest, k)),
            }
        }
        StridedWindows(groups)
    }

    /// The constant offset at which the window of `a`'s group starts: the group's smallest,
    /// rounded down to a multiple of the stride when `aligned`.
    fn first_offset(&self, buf: &Sym, a: &Affine, aligned: bool) -> i64 {
        let (rest, k) = split_const(&a.base);
        let first = self
            .0
            .iter()
            .find(|g| g.0 == *buf && g.1 == a.stride && g.2 == rest)
            .map_or(k, |g| g.3);
        if aligned {
            first - first.rem_euclid(a.stride)
        } else {
            first
        }
    }
}

/// `buf[ramp(base, stride, lanes)]`, with small positive strides as a dense load and a slice,
/// the load starting at the group's window `first` when this load's offset is less than a
/// stride after it (so `2x` and `2x + 1` share a load), else at its own offset (rounded
/// down to a multiple of the stride when `aligned`); stride 0 is a broadcast of one scalar
/// load.
fn strided_load(
    buf: &Sym,
    align: Option<crate::ir::Align>,
    t: Type,
    base: Expr,
    stride: i64,
    first: i64,
    aligned: bool,
) -> Expr {
    let load_at = |b: Expr, s: i64, lanes: u32| {
        let idx = mk_typed(Op::Ramp, Type::vec(Elem::I32, lanes), vec![b, i32c(s)]);
        mk_typed(Op::Load(buf.clone(), align), t.with_lanes(lanes), vec![idx])
    };
    match stride {
        1 => load_at(base, 1, t.lanes),
        0 => {
            let s = mk_typed(Op::Load(buf.clone(), align), t.element(), vec![base]);
            s.broadcast(t.lanes)
        }
        2..=4 => {
            let (rest, k) = split_const(&base);
            let start = if (0..stride).contains(&(k - first)) {
                k - first
            } else if aligned {
                k.rem_euclid(stride)
            } else {
                0
            };
            let dense_base = add_i32(&rest, &i32c(k - start));
            let dense = load_at(dense_base, 1, t.lanes * stride as u32);
            mk_typed(
                Op::Slice {
                    start: start as u32,
                    stride: stride as u32,
                },
                t,
                vec![dense],
            )
        }
        _ => load_at(base, stride, t.lanes),
    }
}

/// `e` as `rest + k` with a constant `k`, gathering the constants of a sum of any shape
/// (a chunk's base is `(b + k) + xo * s`).
pub(super) fn split_const(e: &Expr) -> (Expr, i64) {
    if let Some(k) = e.as_const() {
        return (i32c(0), k as i64);
    }
    if matches!(e.op(), Op::Add) {
        let (ra, ka) = split_const(e.arg(0));
        let (rb, kb) = split_const(e.arg(1));
        if ka != 0 || kb != 0 {
            return (add_i32(&ra, &rb), ka + kb);
        }
    }
    (e.clone(), 0)
}

pub fn prepare(e: &Expr, register_bits: u32) -> Prepared {
    prepare_with(e, register_bits, false, false)
}

/// [`prepare`], with chunks a register of the narrowest element type in `e` when
/// `by_narrowest` (wider values then span register pairs), and strided loads' windows
/// starting at multiples of their stride when `aligned_windows` (so they stay aligned
/// where aligned loads are cheaper, HVX; elsewhere they start at the first element used,
/// which clang shuffles better on AVX2).
pub fn prepare_with(
    e: &Expr,
    register_bits: u32,
    by_narrowest: bool,
    aligned_windows: bool,
) -> Prepared {
    let (e, vector_inputs, bool_result) = normalize_inputs(e);
    let e = super::parity::interleave_parity_selects(&e);
    let e = fold_splats(&e);
    let lanes = e.ty().lanes;
    if lanes > 1 && element_wise(&e, lanes) {
        let l = chunk_lanes(&e, register_bits, by_narrowest);
        return Prepared {
            chunk: rechunk(&e, l, aligned_windows),
            lanes,
            chunk_lanes: l,
            chunked: true,
            vector_inputs,
            bool_result,
        };
    }
    Prepared {
        chunk: e,
        lanes,
        chunk_lanes: lanes,
        chunked: false,
        vector_inputs,
        bool_result,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::syntax::opcheck;

    /// A simd_op_check entry at `w` lanes, parsed (for tests here and in `parity`).
    pub(crate) fn entry(expr: &str, w: u32) -> Expr {
        let e = opcheck::Entry {
            target: "t".into(),
            instr: "x".into(),
            width: w,
            expr: expr.into(),
            line: 1,
            col: 1,
        };
        opcheck::parse_entry("t", &e).unwrap_or_else(|d| panic!("{d}"))
    }

    #[test]
    fn element_wise_expressions_are_chunked_by_register() {
        let e = entry("(uint8)in_u8(x) + (uint8)in_u8(x + 16)", 40);
        let p = prepare(&e, 256);
        assert!(p.chunked);
        assert_eq!(p.chunk_lanes, 32);
        assert_eq!(
            p.chunk.to_string(),
            "((uint8x32)in_u8[ramp(hv_xo, 1, 32)] + (uint8x32)in_u8[ramp((16 + hv_xo), 1, 32)])"
        );
        // Narrow outputs are padded to a 128-bit register.
        let p = prepare(&entry("(uint16)in_u16(x) * (uint16)3", 4), 512);
        assert_eq!(p.chunk_lanes, 8);
    }

    #[test]
    fn a_widened_splat_of_a_loaded_weight_splats_the_widened_weight() {
        let w = mk_typed(
            Op::Load("mask".into(), None),
            Type::scalar(Elem::I8),
            vec![Expr::int(Elem::I32, 0).unwrap()],
        );
        let e = w.broadcast(64).cast(Elem::I16);
        let f = fold_splats(&e);
        assert!(matches!(f.op(), Op::Broadcast), "{f}");
        assert_eq!(f.arg(0), &w.cast(Elem::I16));
        // Wider conversions stay: products by a scalar register match them.
        let e = w.broadcast(64).cast(Elem::I32);
        assert_eq!(fold_splats(&e), e);
    }

    #[test]
    fn strided_loads_share_a_dense_load() {
        let e = entry(
            "(int16((uint8)in_u8(2*x)) + int16((uint8)in_u8((2*x) + 1)))",
            16,
        );
        let p = prepare(&e, 256);
        let loads: Vec<Expr> = crate::ir::visit::post_order(&p.chunk)
            .into_iter()
            .filter(|n| matches!(n.op(), Op::Load(..)))
            .collect();
        assert_eq!(loads.len(), 1, "{}", p.chunk);
        assert_eq!(loads[0].ty(), Type::vec(Elem::U8, 32));
    }

    #[test]
    fn a_lone_strided_load_starts_at_its_own_offset() {
        // `2x + 5` alone reads from `2x + 5`, or from `2x + 4` where windows are aligned
        // (the footprint allows a stride minus one before it), never from `2x`.
        let e = entry("(int16((uint8)in_u8((2*x) + 5)) + (int16)3)", 16);
        for (aligned, first) in [(false, 5), (true, 4)] {
            let p = prepare_with(&e, 256, false, aligned);
            let load = crate::ir::visit::post_order(&p.chunk)
                .into_iter()
                .find(|n| matches!(n.op(), Op::Load(..)))
                .expect("a load");
            let (_, k) = split_const(load.arg(0).arg(0));
            assert_eq!(k, first, "{}", p.chunk);
        }
    }

    #[test]
    fn lane_moving_expressions_are_one_chunk() {
        let t = Type::vec(Elem::U8, 16);
        let v = Expr::var("v", t);
        let s = mk_typed(
            Op::Slice {
                start: 1,
                stride: 2,
            },
            Type::vec(Elem::U8, 8),
            vec![v],
        );
        let p = prepare(&s, 256);
        assert!(!p.chunked);
        assert_eq!(p.vector_inputs.len(), 1);
        assert!(!crate::ir::visit::any_node(&p.chunk, |n| matches!(
            n.op(),
            Op::Var(_)
        )));
    }
}
