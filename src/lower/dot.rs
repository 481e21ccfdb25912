//! Sums of byte products as HVX reduction multiplies (`vrmpy`, `vdmpy`).
//!
//! `vrmpy` sums four adjacent byte lanes times four weights into one word lane; `vdmpy` sums
//! two adjacent lanes into one lane twice as wide. A kernel rarely writes adjacent lanes: it
//! writes `w0*a[x] + w1*b[x] + w2*c[x] + w3*d[x]` over separate byte vectors (taps), or over
//! the lanes `4x`, `4x+1`, ... of one buffer. Rules see that sum as a tree of widening adds
//! and products whose shape depends on the weights (a weight of one is a bare widening, a
//! power of two a shift), so instead of a rule per shape this module reads any such tree as
//! a linear form, `acc + sum(weight * tap)` or `acc + sum(tap * tap)`, exact modulo the
//! result's width, and rebuilds it for the machine:
//!
//! - taps that are the strided slices `k, k + n, ...` (`k < n`) of one vector are that
//!   vector's adjacent lanes already, so each of its registers is one reduction multiply;
//! - four taps of one register each are interleaved first (two rounds of `vshuff`, four
//!   instructions), which puts lane `i` of every tap side by side for `vrmpy`.
//!
//! The result is one more candidate for the selector, which keeps it only when cheaper.
//! Only exact arithmetic is read through: adds, subtractions, products by constants and
//! shifts at the result's width (which wrap there, as the rebuilt sum does), and the
//! widening FPIR operations and widening casts below it (which never wrap).

use std::sync::Arc;

use crate::ir::{Expr, Op, mk_typed};
use crate::isa::{Instr, InstrTable};
use crate::types::{Elem, Type};

/// One summand's variable part.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) enum Term {
    /// The value of a narrow vector's lanes (extended by their own signedness).
    Tap(Expr),
    /// The product of two byte vectors' lanes.
    Prod(Expr, Expr),
}

/// `acc + sum(weight * term)`, weights modulo 2^bits.
#[derive(Default, Debug)]
pub(super) struct Linear {
    pub(super) terms: Vec<(Term, i128)>,
    pub(super) acc: Option<Expr>,
    /// Whether products of 16-bit taps are terms too (the pairwise builder of `pairs`
    /// multiplies half words; HVX's reduction multiplies take bytes only).
    pub(super) word_products: bool,
    /// Nodes read so far: a shared sub-expression is read once per use, so reading stops
    /// at [`BUDGET`] rather than growing with the number of paths through a DAG.
    visits: usize,
}

/// The most nodes a linear form is read through (a reduction multiply sums at most four).
const BUDGET: usize = 256;

impl Linear {
    fn add(&mut self, t: Term, w: i128) {
        if let Some(p) = self.terms.iter_mut().find(|(u, _)| *u == t) {
            p.1 += w;
        } else {
            self.terms.push((t, w));
        }
    }
}

/// Reads `e` (of the result's width `bits`) as a linear form scaled by `scale`.
pub(super) fn read(e: &Expr, scale: i128, bits: u32, out: &mut Linear) -> Option<()> {
    out.visits += 1;
    if out.visits > BUDGET || out.terms.len() > 8 {
        return None;
    }
    let t = e.ty();
    if t.elem.bits() == bits {
        match e.op() {
            Op::Add => {
                read(e.arg(0), scale, bits, out)?;
                return read(e.arg(1), scale, bits, out);
            }
            Op::Sub => {
                read(e.arg(0), scale, bits, out)?;
                return read(e.arg(1), -scale, bits, out);
            }
            Op::Mul => {
                if let Some(c) = e.arg(1).as_const() {
                    return read(e.arg(0), scale.checked_mul(c)?, bits, out);
                }
                if let Some(c) = e.arg(0).as_const() {
                    return read(e.arg(1), scale.checked_mul(c)?, bits, out);
                }
            }
            Op::Shl => {
                if let Some(k) = e
                    .arg(1)
                    .as_const()
                    .filter(|k| (0..bits as i128).contains(k))
                {
                    return read(e.arg(0), scale.checked_mul(1 << k)?, bits, out);
                }
            }
            Op::WidenRightAdd | Op::WidenRightSub => {
                read(e.arg(0), scale, bits, out)?;
                let s = if matches!(e.op(), Op::WidenRightAdd) {
                    scale
                } else {
                    -scale
                };
                return exact(e.arg(1), s, out);
            }
            // A cast between the two signednesses of the result's width keeps the bits.
            Op::Cast | Op::Reinterpret if e.arg(0).ty().elem.bits() == bits => {
                return read(e.arg(0), scale, bits, out);
            }
            _ => {}
        }
        if let Some(()) = exact_node(e, scale, out) {
            return Some(());
        }
        // Anything else at the result's width is the accumulator (once, unscaled).
        if scale == 1 && out.acc.is_none() && !t.is_scalar() {
            out.acc = Some(e.clone());
            return Some(());
        }
        return None;
    }
    exact(e, scale, out)
}

/// Reads a value computed exactly (no wrap-around) as a linear form.
fn exact(e: &Expr, scale: i128, out: &mut Linear) -> Option<()> {
    out.visits += 1;
    if out.visits > BUDGET || out.terms.len() > 8 {
        return None;
    }
    // A change of signedness of a sum is read through when the sum fits (it changes `out`
    // only when it succeeds); otherwise the cast value is a tap of its own.
    if matches!(e.op(), Op::Cast)
        && !widening(e)
        && e.arg(0).ty().elem.bits() == e.ty().elem.bits()
        && exact_node(e, scale, out).is_some()
    {
        return Some(());
    }
    if e.ty().elem.bits() <= 16 && is_tap(e) {
        out.add(Term::Tap(e.clone()), scale);
        return Some(());
    }
    exact_node(e, scale, out)
}

/// A vector worth keeping whole as a tap: anything but the exact operations read through.
fn is_tap(e: &Expr) -> bool {
    !e.ty().is_scalar()
        && e.as_const().is_none()
        && !matches!(
            e.op(),
            Op::WideningAdd | Op::WideningSub | Op::WideningMul | Op::WideningShl
        )
        && (!matches!(e.op(), Op::Cast) || !widening(e))
}

fn widening(e: &Expr) -> bool {
    e.arg(0).ty().elem.bits() < e.ty().elem.bits()
}

/// The widening operations, which compute their exact results.
fn exact_node(e: &Expr, scale: i128, out: &mut Linear) -> Option<()> {
    match e.op() {
        Op::Cast if widening(e) => exact(e.arg(0), scale, out),
        // A change of signedness keeps an exact value whose every lane fits the new type.
        Op::Cast if e.arg(0).ty().elem.bits() == e.ty().elem.bits() => {
            let mut inner = Linear::default();
            exact(e.arg(0), 1, &mut inner)?;
            let (lo, hi) = range(&inner)?;
            let el = e.ty().elem;
            if lo < el.min_value() || el.max_value().is_some_and(|m| hi > m) {
                return None;
            }
            for (t, w) in inner.terms {
                out.add(t, w.checked_mul(scale)?);
            }
            Some(())
        }
        Op::WideningAdd => {
            exact(e.arg(0), scale, out)?;
            exact(e.arg(1), scale, out)
        }
        Op::WideningSub => {
            exact(e.arg(0), scale, out)?;
            exact(e.arg(1), -scale, out)
        }
        Op::WideningShl => {
            let k = e.arg(1).as_const().filter(|k| (0..32).contains(k))?;
            exact(e.arg(0), scale.checked_mul(1 << k)?, out)
        }
        Op::WideningMul => {
            let (a, b) = (e.arg(0), e.arg(1));
            if let Some(c) = b.as_const() {
                return exact(a, scale.checked_mul(c)?, out);
            }
            if let Some(c) = a.as_const() {
                return exact(b, scale.checked_mul(c)?, out);
            }
            // The pairwise builder takes any half-word vector as a factor (it interleaves
            // values, not loads); HVX's reduction multiplies need byte taps.
            let factor = |x: &Expr| {
                is_tap(x) || out.word_products && !x.ty().is_scalar() && x.as_const().is_none()
            };
            let narrow_enough = a.ty().elem.bits() == 8 || out.word_products;
            if narrow_enough && a.ty().elem.bits() <= 16 && factor(a) && factor(b) {
                out.add(Term::Prod(a.clone(), b.clone()), scale);
                return Some(());
            }
            None
        }
        _ => None,
    }
}

/// The smallest and largest value of a linear form without accumulator.
fn range(lin: &Linear) -> Option<(i128, i128)> {
    let span = |e: &Expr| -> Option<(i128, i128)> {
        let el = e.ty().elem;
        Some((el.min_value(), el.max_value()?))
    };
    let (mut lo, mut hi) = (0i128, 0i128);
    for (t, w) in &lin.terms {
        let (a, b) = match t {
            Term::Tap(x) => span(x)?,
            Term::Prod(x, y) => {
                let (p, q) = (span(x)?, span(y)?);
                let c = [p.0 * q.0, p.0 * q.1, p.1 * q.0, p.1 * q.1];
                (*c.iter().min()?, *c.iter().max()?)
            }
        };
        let (a, b) = (a.checked_mul(*w)?, b.checked_mul(*w)?);
        lo = lo.checked_add(a.min(b))?;
        hi = hi.checked_add(a.max(b))?;
    }
    Some((lo, hi))
}

/// The weight `w` (modulo 2^bits) as a value of `elem`, if it is one.
pub(super) fn weight_in(w: i128, bits: u32, elem: Elem) -> Option<i128> {
    let m = 1i128 << bits;
    let w = w.rem_euclid(m);
    let signed = if w >= m / 2 { w - m } else { w };
    [w, signed]
        .into_iter()
        .find(|&v| v >= elem.min_value() && elem.max_value().is_none_or(|x| v <= x))
}

/// Bytes `b` as the signed 32-bit scalar register holding them (byte 0 lowest).
fn bytes_register(b: [i128; 4]) -> Expr {
    let u = b
        .iter()
        .enumerate()
        .fold(0u32, |acc, (i, &v)| acc | (((v & 255) as u32) << (8 * i)));
    Expr::int(Elem::I32, u as i32 as i128).expect("an i32")
}

/// Finds the instruction `intrinsic` taking operands of `params`.
fn instr(table: &InstrTable, intrinsic: &str, params: &[Type]) -> Option<Arc<Instr>> {
    table
        .get(intrinsic)?
        .iter()
        .find(|i| {
            i.params.len() == params.len() && i.params.iter().zip(params).all(|(a, b)| a == b)
        })
        .cloned()
}

fn call(table: &InstrTable, intrinsic: &str, args: Vec<Expr>) -> Option<Expr> {
    let types: Vec<Type> = args.iter().map(|a| a.ty()).collect();
    let i = instr(table, intrinsic, &types)?;
    Expr::build(Op::Instr(i), None, args).ok()
}

pub(super) fn reinterpret(e: &Expr, elem: Elem) -> Expr {
    if e.ty().elem == elem {
        return e.clone();
    }
    let t = e.ty();
    let lanes = t.lanes * t.elem.bits() / elem.bits();
    mk_typed(Op::Reinterpret, Type::vec(elem, lanes), vec![e.clone()])
}

/// Lanes `start .. start + n` of `e`, written without a slice where that is free.
fn part(e: &Expr, start: u32, n: u32) -> Expr {
    let t = e.ty();
    if start == 0 && n == t.lanes {
        return e.clone();
    }
    let slice = || {
        mk_typed(
            Op::Slice { start, stride: 1 },
            t.with_lanes(n),
            vec![e.clone()],
        )
    };
    match e.op() {
        Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(n),
        Op::Load(buf, align) if matches!(e.arg(0).op(), Op::Ramp) => {
            let idx = e.arg(0);
            let Some(stride) = idx.arg(1).as_const() else {
                return slice();
            };
            let offset = stride * start as i128;
            let Ok(k) = Expr::int(Elem::I32, offset) else {
                return slice();
            };
            let base = super::lanes::add_i32(idx.arg(0), &k);
            let ramp = mk_typed(
                Op::Ramp,
                idx.ty().with_lanes(n),
                vec![base, idx.arg(1).clone()],
            );
            // No fact (rather than a wrong one) when the input's modulus is not positive.
            let align = align.filter(|a| a.modulus > 0).and_then(|a| {
                Some(crate::ir::Align {
                    modulus: a.modulus,
                    remainder: a
                        .remainder
                        .checked_add(i64::try_from(offset).ok()?)?
                        .rem_euclid(a.modulus),
                })
            });
            mk_typed(Op::Load(buf.clone(), align), t.with_lanes(n), vec![ramp])
        }
        Op::Concat => {
            let mut at = 0;
            for a in e.args() {
                let l = a.ty().lanes;
                if start >= at && start + n <= at + l {
                    return part(a, start - at, n);
                }
                at += l;
            }
            slice()
        }
        _ if super::lanes::lane_wise(e) => {
            super::lanes::rebuild_lanes(e, n, |a| part(a, start, n)).unwrap_or_else(slice)
        }
        _ => slice(),
    }
}

/// If every tap is the slice `k, k + n, ...` of one vector for `k` in `0..n`, in order:
/// that vector (its adjacent lanes are the taps side by side).
fn strided_source(taps: &[Expr]) -> Option<Expr> {
    let n = taps.len() as u32;
    let first = taps.first()?;
    if !matches!(first.op(), Op::Slice { .. }) {
        return None;
    }
    let src = first.arg(0);
    let ok = taps.iter().enumerate().all(|(k, t)| {
        matches!(t.op(), Op::Slice { start, stride } if *start == k as u32 && *stride == n)
            && t.arg(0) == src
    });
    ok.then(|| src.clone())
}

/// Four byte vectors of one register each, interleaved (lane `i` of each side by side) as
/// the four registers of the result: `vshuff` by bytes, then by half words.
fn interleave4(table: &InstrTable, t: &[Expr]) -> Option<Vec<Expr>> {
    let e = t[0].ty().elem;
    let h = if e.is_signed() { Elem::I16 } else { Elem::U16 };
    let k1 = Expr::int(Elem::I32, -1).ok()?;
    let k2 = Expr::int(Elem::I32, -2).ok()?;
    let w1 = call(
        table,
        "Q6_W_vshuff_VVR",
        vec![t[1].clone(), t[0].clone(), k1.clone()],
    )?;
    let w2 = call(
        table,
        "Q6_W_vshuff_VVR",
        vec![t[3].clone(), t[2].clone(), k1],
    )?;
    let lo = |w: &Expr| call(table, "Q6_V_lo_W", vec![w.clone()]);
    let hi = |w: &Expr| call(table, "Q6_V_hi_W", vec![w.clone()]);
    let x = call(
        table,
        "Q6_W_vshuff_VVR",
        vec![
            reinterpret(&lo(&w2)?, h),
            reinterpret(&lo(&w1)?, h),
            k2.clone(),
        ],
    )?;
    let y = call(
        table,
        "Q6_W_vshuff_VVR",
        vec![reinterpret(&hi(&w2)?, h), reinterpret(&hi(&w1)?, h), k2],
    )?;
    Some(vec![
        reinterpret(&lo(&x)?, e),
        reinterpret(&hi(&x)?, e),
        reinterpret(&lo(&y)?, e),
        reinterpret(&hi(&y)?, e),
    ])
}

/// `e` as reduction multiplies, when it is a sum they compute (see the module docs).
pub(crate) fn candidate(e: &Expr, table: &InstrTable) -> Option<Expr> {
    let t = e.ty();
    let bits = t.elem.bits();
    if t.is_scalar()
        || !matches!(bits, 16 | 32)
        || !matches!(
            e.op(),
            Op::Add
                | Op::Sub
                | Op::Mul
                | Op::Shl
                | Op::WidenRightAdd
                | Op::WidenRightSub
                | Op::WideningAdd
                | Op::WideningSub
                | Op::Cast
        )
    {
        return None;
    }
    let mut lin = Linear::default();
    read(e, 1, bits, &mut lin)?;
    lin.terms.retain(|(_, w)| w.rem_euclid(1 << bits) != 0);
    if lin.terms.len() < 2 {
        return None;
    }
    let out = if lin.terms.iter().all(|(t, _)| matches!(t, Term::Tap(_))) {
        by_weights(&lin, t, table)?
    } else {
        by_products(&lin, t, table)?
    };
    if out.ty().lanes * out.ty().elem.bits() != t.lanes * bits {
        return None;
    }
    let out = reinterpret(&out, t.elem);
    agrees(e, &out).then_some(out)
}

/// Translation validation by evaluation: the rebuilt sum must give the original's lanes on
/// random and edge-case inputs (the instructions evaluate by their qemu-checked
/// descriptions). The construction is exact by design; this guards its bookkeeping.
pub(super) fn agrees(e: &Expr, cand: &Expr) -> bool {
    (0..6).all(|seed| {
        let env = crate::interp::random_env(e, 0x5eed + seed, &[]);
        match (
            crate::interp::eval(e, &env),
            crate::interp::eval(cand, &env),
        ) {
            (Ok(a), Ok(b)) => a.lanes == b.lanes,
            _ => false,
        }
    })
}

/// Taps times constant weights: `vrmpy(ub, r)` over four byte taps (three are padded with a
/// zero weight), `vdmpy(ub, r.b)` over two strided byte taps and `vdmpy(h, r.b)` over two
/// strided half-word taps.
fn by_weights(lin: &Linear, t: Type, table: &InstrTable) -> Option<Expr> {
    let bits = t.elem.bits();
    let mut taps = Vec::new();
    let mut weights = Vec::new();
    for (x, w) in &lin.terms {
        let Term::Tap(a) = x else { return None };
        taps.push(a.clone());
        weights.push(*w);
    }
    let te = taps[0].ty().elem;
    if taps.iter().any(|a| a.ty() != taps[0].ty()) {
        return None;
    }
    let regs = if let Some(src) = strided_source(&taps) {
        registers(&src)?
    } else {
        if taps.len() == 2 {
            return two_taps(&taps, &weights, lin.acc.as_ref(), t, table);
        }
        if taps.len() == 3
            && let Some(out) = sliding_three_taps(&taps, &weights, lin.acc.as_ref(), t, table)
        {
            return Some(out);
        }
        if bits != 32 || te != Elem::U8 || taps[0].ty().lanes != 128 || taps.len() > 4 {
            return None;
        }
        while taps.len() < 4 {
            taps.push(taps[0].clone());
            weights.push(0);
        }
        interleave4(table, &taps)?
    };
    // Four byte taps summed into half words: the word sums narrowed keep the same bits.
    if bits == 16 && te == Elem::U8 && matches!(weights.len(), 3 | 4) {
        let wide = Type::vec(Elem::I32, t.lanes);
        let signed16 = |w: i128| {
            let w = w.rem_euclid(1 << 16);
            if w >= 1 << 15 { w - (1 << 16) } else { w }
        };
        let lin32 = Linear {
            terms: lin
                .terms
                .iter()
                .map(|(x, w)| (x.clone(), signed16(*w)))
                .collect(),
            ..Linear::default()
        };
        let sum = by_weights(&lin32, wide, table)?;
        let sum = reinterpret(&sum, Elem::I32).cast(t.elem);
        return Some(match &lin.acc {
            None => sum,
            Some(acc) => Expr::build(Op::Add, None, vec![acc.clone(), sum]).ok()?,
        });
    }
    let (elem, name, acc_name, r) = match (bits, te, weights.len()) {
        (32, Elem::U8, 4) => {
            let w = |e| {
                weights
                    .iter()
                    .map(|&w| weight_in(w, 32, e))
                    .collect::<Option<Vec<_>>>()
            };
            // Either form computes the same bits when the weights fit both; the one whose
            // result has the sum's signedness reads as what the kernel wrote.
            let unsigned = if t.elem.is_signed() && w(Elem::I8).is_some() {
                None
            } else {
                w(Elem::U8)
            };
            if let Some(w) = unsigned {
                let r = [w[0], w[1], w[2], w[3]];
                (
                    Elem::U32,
                    "Q6_Vuw_vrmpy_VubRub",
                    "Q6_Vuw_vrmpyacc_VuwVubRub",
                    r,
                )
            } else {
                let w = w(Elem::I8)?;
                let r = [w[0], w[1], w[2], w[3]];
                (Elem::I32, "Q6_Vw_vrmpy_VubRb", "Q6_Vw_vrmpyacc_VwVubRb", r)
            }
        }
        (16, Elem::U8, 2) | (32, Elem::I16, 2) => {
            let w0 = weight_in(weights[0], bits, Elem::I8)?;
            let w1 = weight_in(weights[1], bits, Elem::I8)?;
            if bits == 16 {
                (
                    Elem::I16,
                    "Q6_Vh_vdmpy_VubRb",
                    "Q6_Vh_vdmpyacc_VhVubRb",
                    [w0, w1, w0, w1],
                )
            } else {
                (
                    Elem::I32,
                    "Q6_Vw_vdmpy_VhRb",
                    "Q6_Vw_vdmpyacc_VwVhRb",
                    [w0, w1, w0, w1],
                )
            }
        }
        _ => return None,
    };
    let r = bytes_register(r);
    reduce(&regs, lin.acc.as_ref(), elem, |x, acc| match acc {
        None => call(table, name, vec![x.clone(), r.clone()]),
        Some(acc) => call(table, acc_name, vec![acc, x.clone(), r.clone()]),
    })
}

/// Two taps of one register each, into lanes twice as wide: vmpa of the register pair
/// (b, a) with the weights alternating in the scalar's bytes gives a deinterleaved pair,
/// shuffled once into lane order (the accumulator, if any, is added after).
fn two_taps(
    taps: &[Expr],
    weights: &[i128],
    acc: Option<&Expr>,
    t: Type,
    table: &InstrTable,
) -> Option<Expr> {
    let bits = t.elem.bits();
    let (name, lanes, k) = match (bits, taps[0].ty().elem) {
        (16, Elem::U8) => ("Q6_Wh_vmpa_WubRb", 128, -2),
        (32, Elem::I16) => ("Q6_Ww_vmpa_WhRb", 64, -4),
        _ => return None,
    };
    if taps[0].ty().lanes != lanes {
        return None;
    }
    let w0 = weight_in(weights[0], bits, Elem::I8)?;
    let w1 = weight_in(weights[1], bits, Elem::I8)?;
    let pair = call(
        table,
        "Q6_W_vcombine_VV",
        vec![taps[1].clone(), taps[0].clone()],
    )?;
    let sum = call(table, name, vec![pair, bytes_register([w0, w1, w0, w1])])?;
    in_lane_order(sum, k, acc, t, table)
}

/// A deinterleaved pair (even lanes low, odd lanes high) shuffled once into lane order
/// (`k` names the lane size), read as `t`, plus the accumulator if there is one.
fn in_lane_order(
    pair: Expr,
    k: i128,
    acc: Option<&Expr>,
    t: Type,
    table: &InstrTable,
) -> Option<Expr> {
    let k = Expr::int(Elem::I32, k).ok()?;
    let sum = call(table, "hv_W_vshuff_W", vec![pair, k])?;
    let sum = reinterpret(&sum, t.elem);
    match acc {
        None => Some(sum),
        Some(acc) => Expr::build(Op::Add, None, vec![acc.clone(), sum]).ok(),
    }
}

/// How many lanes `b` starts after `a`, when both are dense loads of one register from
/// the same buffer whose starts differ by a constant (checked on random index values; the
/// candidate is validated as a whole by [`agrees`] anyway).
fn load_offset(a: &Expr, b: &Expr) -> Option<i128> {
    let (Op::Load(buf_a, _), Op::Load(buf_b, _)) = (a.op(), b.op()) else {
        return None;
    };
    if buf_a != buf_b
        || a.ty() != b.ty()
        || !super::lanes::is_dense(a)
        || !super::lanes::is_dense(b)
    {
        return None;
    }
    let (base_a, base_b) = (a.arg(0).arg(0), b.arg(0).arg(0));
    let both = Expr::build(Op::Add, None, vec![base_a.clone(), base_b.clone()]).ok()?;
    let mut diff = None;
    for seed in 0..3 {
        let env = crate::interp::random_env(&both, 0x0ff5 + seed, &[]);
        let va = crate::interp::eval(base_a, &env).ok()?.int(0);
        let vb = crate::interp::eval(base_b, &env).ok()?.int(0);
        let d = vb - va;
        if diff.is_some_and(|x| x != d) {
            return None;
        }
        diff = Some(d);
    }
    diff
}

/// Three byte taps at adjacent offsets `o, o + 1, o + 2` of one buffer, the last with weight
/// one: `vtmpy` of the register pair (load at `o`, load at `o + 2`) computes the even
/// outputs `x[2i] w0 + x[2i+1] w1 + x[2i+2]` in its low register and the odd ones in its
/// high register, so both loads stay within the taps' footprint; one shuffle puts the
/// pair in lane order (the accumulator, if any, is added after).
fn sliding_three_taps(
    taps: &[Expr],
    weights: &[i128],
    acc: Option<&Expr>,
    t: Type,
    table: &InstrTable,
) -> Option<Expr> {
    let name = match taps[0].ty().elem {
        Elem::U8 => "Q6_Wh_vtmpy_WubRb",
        Elem::I8 => "Q6_Wh_vtmpy_WbRb",
        _ => return None,
    };
    if t.elem.bits() != 16 || taps[0].ty().lanes != 128 {
        return None;
    }
    // The taps in order of their offsets from the first.
    let mut at: Vec<(i128, usize)> = taps
        .iter()
        .enumerate()
        .map(|(i, x)| Some((load_offset(&taps[0], x)?, i)))
        .collect::<Option<_>>()?;
    at.sort();
    let o = at[0].0;
    if at.iter().enumerate().any(|(k, &(d, _))| d != o + k as i128) {
        return None;
    }
    let [(_, i0), (_, i1), (_, i2)] = [at[0], at[1], at[2]];
    if weights[i2].rem_euclid(1 << 16) != 1 {
        return None;
    }
    let w0 = weight_in(weights[i0], 16, Elem::I8)?;
    let w1 = weight_in(weights[i1], 16, Elem::I8)?;
    let pair = call(
        table,
        "Q6_W_vcombine_VV",
        vec![taps[i2].clone(), taps[i0].clone()],
    )?;
    let sum = call(table, name, vec![pair, bytes_register([w0, w1, w0, w1])])?;
    in_lane_order(sum, -2, acc, t, table)
}

/// Products of byte taps, all with weight one: `vrmpy` of two registers.
fn by_products(lin: &Linear, t: Type, table: &InstrTable) -> Option<Expr> {
    if t.elem.bits() != 32 || lin.terms.len() > 4 {
        return None;
    }
    let mut a_side = Vec::new();
    let mut b_side = Vec::new();
    for (x, w) in &lin.terms {
        let Term::Prod(a, b) = x else { return None };
        if w.rem_euclid(1 << 32) != 1 {
            return None;
        }
        // The mixed form takes the unsigned operand first.
        let (a, b) = if a.ty().elem.is_signed() && !b.ty().elem.is_signed() {
            (b, a)
        } else {
            (a, b)
        };
        a_side.push(a.clone());
        b_side.push(b.clone());
    }
    let ta = a_side[0].ty();
    let tb = b_side[0].ty();
    if a_side.iter().any(|a| a.ty() != ta) || b_side.iter().any(|b| b.ty() != tb) {
        return None;
    }
    let (elem, name, acc_name) = match (ta.elem, tb.elem) {
        (Elem::U8, Elem::U8) => (
            Elem::U32,
            "Q6_Vuw_vrmpy_VubVub",
            "Q6_Vuw_vrmpyacc_VuwVubVub",
        ),
        (Elem::U8, Elem::I8) => (Elem::I32, "Q6_Vw_vrmpy_VubVb", "Q6_Vw_vrmpyacc_VwVubVb"),
        (Elem::I8, Elem::I8) => (Elem::I32, "Q6_Vw_vrmpy_VbVb", "Q6_Vw_vrmpyacc_VwVbVb"),
        _ => return None,
    };
    let side = |mut v: Vec<Expr>, pad: Expr| -> Option<Vec<Expr>> {
        if let Some(src) = strided_source(&v) {
            return registers(&src);
        }
        if v[0].ty().lanes != 128 {
            return None;
        }
        while v.len() < 4 {
            v.push(pad.clone());
        }
        interleave4(table, &v)
    };
    let zero = Expr::splat(tb, 0).ok()?;
    let ra = side(a_side.clone(), a_side[0].clone())?;
    let rb = side(b_side, zero)?;
    if ra.len() != rb.len() {
        return None;
    }
    let pairs: Vec<(Expr, Expr)> = ra.into_iter().zip(rb).collect();
    let mut k = 0;
    let regs: Vec<Expr> = pairs.iter().map(|(a, _)| a.clone()).collect();
    reduce(&regs, lin.acc.as_ref(), elem, |_, acc| {
        let (a, b) = pairs[k].clone();
        k += 1;
        match acc {
            None => call(table, name, vec![a, b]),
            Some(acc) => call(table, acc_name, vec![acc, a, b]),
        }
    })
}

/// The registers of `v`: one register's lanes each (the source of strided taps).
fn registers(v: &Expr) -> Option<Vec<Expr>> {
    let t = v.ty();
    let per = 1024 / t.elem.bits();
    if !t.lanes.is_multiple_of(per) {
        return None;
    }
    Some((0..t.lanes / per).map(|m| part(v, m * per, per)).collect())
}

/// One reduction per register, each with its slice of the accumulator, concatenated.
fn reduce(
    regs: &[Expr],
    acc: Option<&Expr>,
    elem: Elem,
    mut one: impl FnMut(&Expr, Option<Expr>) -> Option<Expr>,
) -> Option<Expr> {
    let mut outs = Vec::new();
    let mut at = 0;
    for x in regs {
        let a = match acc {
            None => None,
            Some(acc) => {
                let per = 1024 / elem.bits();
                let p = part(acc, at, per);
                at += per;
                Some(reinterpret(&p, elem))
            }
        };
        outs.push(one(x, a)?);
    }
    if outs.len() == 1 {
        return outs.pop();
    }
    Expr::build(Op::Concat, None, outs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str, inputs: &[(&str, &str)]) -> Expr {
        crate::syntax::halide::parse_with_vars(src, inputs)
    }

    fn inputs() -> Vec<(&'static str, &'static str)> {
        let mut v = vec![("s", "i32x128"), ("p", "u16x128"), ("q", "u16x128")];
        v.extend([
            ("a", "u8x128"),
            ("b", "u8x128"),
            ("c", "u8x128"),
            ("d", "u8x128"),
        ]);
        v
    }

    fn linear(src: &str) -> Linear {
        let e = crate::lift::lift(&parse(src, &inputs()));
        let mut lin = Linear::default();
        read(&e, 1, e.ty().elem.bits(), &mut lin).unwrap_or_else(|| panic!("not linear: {e}"));
        lin
    }

    fn weights(lin: &Linear) -> Vec<(String, i128)> {
        let mut v: Vec<(String, i128)> = lin
            .terms
            .iter()
            .map(|(t, w)| {
                let name = match t {
                    Term::Tap(x) => x.to_string(),
                    Term::Prod(x, y) => format!("{x}*{y}"),
                };
                (name, *w)
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn weights_are_read_through_every_shape_of_the_sum() {
        // Lifting writes a weight of 2 as a shift, mixes signed and unsigned products and
        // casts between them; the linear form is the same sum.
        let lin = linear(
            "((((s + int32(int16(a)*(int16)2)) + int32(int16(b)*(int16)-3)) + int32(int16(c)*(int16)-4)) + int32(int16(d)*(int16)5))",
        );
        let w: Vec<(String, i128)> = [("a", 2), ("b", -3), ("c", -4), ("d", 5)]
            .into_iter()
            .map(|(n, w)| (n.to_string(), w))
            .collect();
        assert_eq!(weights(&lin), w);
        assert_eq!(lin.acc.map(|a| a.to_string()), Some("s".to_string()));
        let sq = linear("int32(a)*int32(a) + int32(b)*int32(b)");
        assert_eq!(
            weights(&sq),
            vec![("a*a".to_string(), 1), ("b*b".to_string(), 1)]
        );
    }

    #[test]
    fn a_sum_that_may_wrap_stays_one_tap() {
        // `p + q` wraps at 16 bits: its lanes are not `p` plus `q` in 32 bits.
        let lin = linear("int32(p + q) + int32(a)*3");
        assert_eq!(weights(&lin).len(), 2);
        assert!(
            weights(&lin).iter().any(|(n, w)| n == "(p + q)" && *w == 1),
            "{:?}",
            weights(&lin)
        );
    }

    #[test]
    fn hvx_builds_vrmpy_and_other_targets_do_not() {
        let e = crate::lift::lift(&parse(
            "int32(a)*2 + int32(b)*3 + int32(c)*4 + int32(d)*5",
            &inputs(),
        ));
        let hvx = crate::targets::backend("hvx").unwrap();
        let got = candidate(&e, &hvx.instrs)
            .expect("a vrmpy candidate")
            .to_string();
        assert!(got.contains("Q6_Vw_vrmpy_VubRb"), "{got}");
        let x86 = crate::targets::backend("x86-avx2").unwrap();
        assert!(candidate(&e, &x86.instrs).is_none());
        // A weight outside the byte range has no reduction multiply.
        let e = crate::lift::lift(&parse(
            "int32(a)*2 + int32(b)*3 + int32(c)*4 + int32(d)*500",
            &inputs(),
        ));
        assert!(candidate(&e, &hvx.instrs).is_none());
    }
}
