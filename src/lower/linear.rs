//! Sums read as linear forms: any tree of adds, subtractions, products by constants,
//! shifts and widening operations whose result is `acc + sum(weight * tap)` (or a sum of
//! tap products), exact modulo the result's width. A rule per shape of such a sum would
//! never end (a weight of one is a bare widening, a power of two a shift), so strategies
//! that compute sums with multiply-add instructions read the form here and rebuild it for
//! their machine: the pairwise multiply-adds of every target (`super::pairs`), HVX's
//! reduction multiplies (`targets/hvx/reduce.rs`), Arm's dot products
//! (`targets/arm/dot.rs`).
//!
//! Only exact arithmetic is read through: adds, subtractions, products by constants and
//! shifts at the result's width (which wrap there, as a rebuilt sum does), and the
//! widening FPIR operations and widening casts below it (which never wrap). Every rebuilt
//! candidate is checked against the original by evaluation ([`agrees`]).

use std::sync::Arc;

use crate::ir::instr::{Instr, InstrTable};
use crate::ir::{Expr, Op, mk_typed};
use crate::types::{Elem, Type};

/// One summand's variable part.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Term {
    /// The value of a narrow vector's lanes (extended by their own signedness).
    Tap(Expr),
    /// The product of two byte vectors' lanes.
    Prod(Expr, Expr),
}

/// `acc + sum(weight * term)`, weights modulo 2^bits.
#[derive(Debug)]
pub struct Linear {
    pub terms: Vec<(Term, i128)>,
    pub acc: Option<Expr>,
    /// Whether products of 16-bit taps are terms too (the pairwise builder of `pairs`
    /// multiplies half words; HVX's reduction multiplies take bytes only).
    pub word_products: bool,
    /// The most terms read before giving up: [`DEFAULT_MAX_TERMS`] for the reduction
    /// multiplies and dot products, which sum at most four taps per instruction; the
    /// pairwise builder takes a whole 16-tap row (two taps per instruction).
    pub max_terms: usize,
    /// Nodes read so far: a shared sub-expression is read once per use, so reading stops
    /// at [`BUDGET`] rather than growing with the number of paths through a DAG.
    visits: usize,
}

/// The default of [`Linear::max_terms`].
pub const DEFAULT_MAX_TERMS: usize = 8;

impl Default for Linear {
    fn default() -> Self {
        Linear {
            terms: Vec::new(),
            acc: None,
            word_products: false,
            max_terms: DEFAULT_MAX_TERMS,
            visits: 0,
        }
    }
}

/// The most nodes a linear form is read through (a reduction multiply sums at most four).
const BUDGET: usize = 256;

impl Linear {
    /// An empty form read with at most `max_terms` terms.
    pub fn with_max_terms(max_terms: usize) -> Linear {
        Linear {
            max_terms,
            ..Linear::default()
        }
    }

    /// The form `sum(weight * term)`, without accumulator.
    pub fn of_terms(terms: Vec<(Term, i128)>) -> Linear {
        Linear {
            terms,
            ..Linear::default()
        }
    }

    fn add(&mut self, t: Term, w: i128) {
        if let Some(p) = self.terms.iter_mut().find(|(u, _)| *u == t) {
            p.1 += w;
        } else {
            self.terms.push((t, w));
        }
    }
}

/// Reads `e` (of the result's width `bits`) as a linear form scaled by `scale`.
pub fn read(e: &Expr, scale: i128, bits: u32, out: &mut Linear) -> Option<()> {
    out.visits += 1;
    if out.visits > BUDGET || out.terms.len() > out.max_terms {
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
    if out.visits > BUDGET || out.terms.len() > out.max_terms {
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
            let mut inner = Linear::with_max_terms(out.max_terms);
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
pub fn range(lin: &Linear) -> Option<(i128, i128)> {
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
pub fn weight_in(w: i128, bits: u32, elem: Elem) -> Option<i128> {
    let m = 1i128 << bits;
    let w = w.rem_euclid(m);
    let signed = if w >= m / 2 { w - m } else { w };
    [w, signed]
        .into_iter()
        .find(|&v| v >= elem.min_value() && elem.max_value().is_none_or(|x| v <= x))
}

/// Finds the instruction `intrinsic` taking operands of `params`.
pub fn instr(table: &InstrTable, intrinsic: &str, params: &[Type]) -> Option<Arc<Instr>> {
    table
        .get(intrinsic)?
        .iter()
        .find(|i| {
            i.params.len() == params.len() && i.params.iter().zip(params).all(|(a, b)| a == b)
        })
        .cloned()
}

/// The instruction `intrinsic` applied to `args` (found by their types).
pub fn call(table: &InstrTable, intrinsic: &str, args: Vec<Expr>) -> Option<Expr> {
    let types: Vec<Type> = args.iter().map(|a| a.ty()).collect();
    let i = instr(table, intrinsic, &types)?;
    Expr::build(Op::Instr(i), None, args).ok()
}

/// `e`'s bits read as lanes of `elem`.
pub fn reinterpret(e: &Expr, elem: Elem) -> Expr {
    if e.ty().elem == elem {
        return e.clone();
    }
    let t = e.ty();
    let lanes = t.lanes * t.elem.bits() / elem.bits();
    mk_typed(Op::Reinterpret, Type::vec(elem, lanes), vec![e.clone()])
}

/// Lanes `start .. start + n` of `e`, written without a slice where that is free.
pub fn part(e: &Expr, start: u32, n: u32) -> Expr {
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
pub fn strided_source(taps: &[Expr]) -> Option<Expr> {
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

/// How many random environments validation evaluates in.
pub const VALIDATION_SEEDS: u64 = 6;
/// The seed of the first.
pub const VALIDATION_SEED: u64 = 0x5eed;

/// Translation validation by evaluation: the rebuilt sum must give the original's lanes on
/// random and edge-case inputs (the instructions evaluate by their qemu-checked
/// descriptions). The construction is exact by design; this guards its bookkeeping.
pub fn agrees(e: &Expr, cand: &Expr) -> bool {
    (0..VALIDATION_SEEDS).all(|seed| {
        let env = crate::interp::random_env(e, VALIDATION_SEED + seed, &[]);
        agrees_in(&mut crate::interp::CachedEval::new(env), e, cand)
    })
}

/// Whether `cand` gives `e`'s lanes in the environment of `ev`.
pub fn agrees_in(ev: &mut crate::interp::CachedEval, e: &Expr, cand: &Expr) -> bool {
    match (ev.eval(e), ev.eval(cand)) {
        (Ok(a), Ok(b)) => a.lanes == b.lanes,
        _ => false,
    }
}

/// `e` read as a linear form at its own width, when it is a sum of at least two weighted
/// terms: the shape every multiply-add strategy starts from.
pub fn read_sum(e: &Expr) -> Option<Linear> {
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
    (lin.terms.len() >= 2).then_some(lin)
}

/// A linear form as dot products of interleaved vectors: each group holds `n` terms (the
/// last padded with zero terms), its first operand the terms' vectors interleaved (lane
/// `n * i + k` is lane `i` of term `k`) and its second the weights repeated, or the second
/// factors interleaved likewise. `acc + sum(group)` is the form's value, where a group's
/// value is the sum over each `n` adjacent lanes of the product of its operands: what
/// dot-product instructions (`udot`, `vpdpbusd`, `vpdpwssd`) compute per result lane.
#[derive(Debug)]
pub struct DotGroups {
    /// (first operand, second operand) per group, `n` times the lanes of a term each.
    pub groups: Vec<(Expr, Expr)>,
    /// The accumulator, if the form has one.
    pub acc: Option<Expr>,
}

/// `lin` as [`DotGroups`] of `n` terms whose first operands are vectors of `first` and
/// second operands of `second` (weights must fit it; products are taken in either
/// order), or `None` when some term does not fit.
pub fn dot_groups(lin: &Linear, n: usize, first: Elem, second: Elem) -> Option<DotGroups> {
    if !matches!(n, 2 | 4) || lin.terms.is_empty() {
        return None;
    }
    let mut firsts = Vec::new();
    let mut seconds: Vec<Result<i128, Expr>> = Vec::new();
    for (t, w) in &lin.terms {
        match t {
            Term::Tap(x) if x.ty().elem == first => {
                firsts.push(x.clone());
                seconds.push(Ok(weight_in(*w, 32, second)?));
            }
            Term::Prod(a, b) if w.rem_euclid(1 << 32) == 1 => {
                let (a, b) = if a.ty().elem == first && b.ty().elem == second {
                    (a, b)
                } else if b.ty().elem == first && a.ty().elem == second {
                    (b, a)
                } else {
                    return None;
                };
                firsts.push(a.clone());
                seconds.push(Err(b.clone()));
            }
            _ => return None,
        }
    }
    let tap = firsts[0].ty();
    if firsts.iter().any(|x| x.ty() != tap) {
        return None;
    }
    let by_weights = seconds.iter().all(|s| s.is_ok());
    if !by_weights && seconds.iter().any(|s| s.is_ok()) {
        return None;
    }
    let mut groups = Vec::new();
    for start in (0..firsts.len()).step_by(n) {
        let mut a: Vec<Expr> = firsts[start..(start + n).min(firsts.len())].to_vec();
        let mut b: Vec<Result<i128, Expr>> =
            seconds[start..(start + n).min(seconds.len())].to_vec();
        while a.len() < n {
            a.push(Expr::splat(tap, 0).ok()?);
            b.push(Ok(0));
        }
        let first_op = interleave_taps(a)?;
        let second_op = if by_weights {
            let w: Vec<i128> = b.iter().map(|x| *x.as_ref().expect("weights")).collect();
            repeated(&w, second, tap.lanes)?
        } else {
            // Padding pairs a zero tap with a zero second factor.
            let zero = Expr::splat(Type::vec(second, tap.lanes), 0).ok()?;
            let v: Vec<Expr> = b
                .into_iter()
                .map(|x| match x {
                    Err(factor) => factor,
                    Ok(_) => zero.clone(),
                })
                .collect();
            if v.iter().any(|x| x.ty() != zero.ty()) {
                return None;
            }
            interleave_taps(v)?
        };
        groups.push((first_op, second_op));
    }
    Some(DotGroups {
        groups,
        acc: lin.acc.clone(),
    })
}

/// Two or four vectors of one type interleaved (lane `n * i + k` is lane `i` of vector
/// `k`), as rounds of two-way interleaves (four taps: `(t0, t2)` and `(t1, t3)`, then the
/// two results), which compilers write as `zip`/`unpack` pairs; a four-way shuffle of
/// registers is not always found to be one.
pub fn interleave_taps(taps: Vec<Expr>) -> Option<Expr> {
    let two =
        |a: &Expr, b: &Expr| Expr::build(Op::Interleave, None, vec![a.clone(), b.clone()]).ok();
    match taps.as_slice() {
        [a, b] => two(a, b),
        [a, b, c, d] => two(&two(a, c)?, &two(b, d)?),
        _ => None,
    }
}

/// The constant vector of `elem` lanes holding `weights` repeated `times` times, written
/// as a broadcast of the weights packed into one wider scalar (one constant register).
pub fn repeated(weights: &[i128], elem: Elem, times: u32) -> Option<Expr> {
    let bits = elem.bits();
    let wide_bits = bits * weights.len() as u32;
    let wide = match wide_bits {
        16 => Elem::U16,
        32 => Elem::U32,
        64 => Elem::U64,
        _ => return None,
    };
    let packed = weights.iter().enumerate().fold(0u128, |acc, (k, &w)| {
        acc | (((w as u128) & elem.mask()) << (k as u32 * bits))
    });
    let splat = Expr::bits(wide, packed).broadcast(times);
    Some(mk_typed(
        Op::Reinterpret,
        Type::vec(elem, times * weights.len() as u32),
        vec![splat],
    ))
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
}
