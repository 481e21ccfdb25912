//! Value bounds of expressions, for bounds-predicated rules (`upper_bound(x) <= 32767`).
//!
//! Rules ask through the [`Bounds`] trait. [`TypeBounds`] is the conservative default: the
//! whole range of the type. [`Intervals`] is an interval analysis over the whole IR (every
//! integer operator, FPIR operation, shuffle and reduction), with a cache per compilation
//! and value-range facts for buffers and variables (from Rake spec axioms). Every interval
//! rule is property-tested: sampled values always fall inside the computed interval.

use std::collections::HashMap;

use crate::ir::{Expr, Op, Sym};
use crate::types::Elem;

/// Something that can bound the lanes of an expression.
pub trait Bounds {
    /// Inclusive `(lower, upper)` bounds on every lane of `e`.
    fn range(&mut self, e: &Expr) -> (i128, i128);
}

/// The type's own range: always correct, never informative.
#[derive(Clone, Copy, Debug, Default)]
pub struct TypeBounds;

impl Bounds for TypeBounds {
    fn range(&mut self, e: &Expr) -> (i128, i128) {
        type_range(e.ty().elem)
    }
}

/// An inclusive interval of exact integers.
pub type Interval = (i128, i128);

/// The range of an element type.
pub fn type_range(e: Elem) -> Interval {
    (e.min_value(), e.max_value().unwrap_or(i128::MAX))
}

/// Interval analysis with a cache and facts.
#[derive(Clone, Default)]
pub struct Intervals {
    /// Value ranges of buffers' elements.
    pub buffer_facts: HashMap<Sym, Interval>,
    /// Value ranges of variables' lanes.
    pub var_facts: HashMap<Sym, Interval>,
    cache: crate::util::idhash::IdMap<usize, (Expr, Interval)>,
}

impl Bounds for Intervals {
    fn range(&mut self, e: &Expr) -> (i128, i128) {
        self.interval(e)
    }
}

/// Each end clamped into the type (what saturation does to the values).
fn clamp_to(i: Interval, e: Elem) -> Interval {
    let (lo, hi) = type_range(e);
    (i.0.clamp(lo, hi), i.1.clamp(lo, hi))
}

/// The interval if it fits the type, else the whole type (the operation wrapped).
fn or_wrap(i: Option<Interval>, e: Elem) -> Interval {
    let (lo, hi) = type_range(e);
    match i {
        Some((a, b)) if a >= lo && b <= hi && a <= b => (a, b),
        _ => (lo, hi),
    }
}

/// The interval of the product of `e`'s first two operands, whose intervals are `a`'s
/// first two: a square is never negative (`x * x` of `[-163, 143]` is `[0, 26569]`, not
/// `[-23309, 26569]`), as clang knows: the high dword of such a square is 0, which it
/// folds away. `None` on overflow.
fn product(e: &Expr, a: &[Interval]) -> Option<Interval> {
    let p = corners(a[0], a[1], |x, y| x.checked_mul(y))?;
    if e.arg(0) == e.arg(1) && a[0].0 <= 0 && a[0].1 >= 0 {
        return Some((0, p.1));
    }
    if e.arg(0) == e.arg(1) {
        let (l, h) = (a[0].0.checked_mul(a[0].0)?, a[0].1.checked_mul(a[0].1)?);
        return Some((l.min(h), l.max(h)));
    }
    Some(p)
}

fn corners(a: Interval, b: Interval, f: impl Fn(i128, i128) -> Option<i128>) -> Option<Interval> {
    let vals = [f(a.0, b.0)?, f(a.0, b.1)?, f(a.1, b.0)?, f(a.1, b.1)?];
    Some((*vals.iter().min()?, *vals.iter().max()?))
}

/// The range of a bitwise operation on operands that may be negative: values in
/// [-2^k, 2^k - 1] are k + 1 bits sign-extended, and bitwise operations keep every bit above
/// the k-th a copy of the sign, so the result is in that range too (a zero point subtracted
/// before an xor keeps its result small, which bounds-predicated rules need).
fn signed_bitwise(a: &[Interval]) -> Option<Interval> {
    let bits = |v: i128| 128 - if v < 0 { !v } else { v }.leading_zeros();
    let k = [a[0].0, a[0].1, a[1].0, a[1].1]
        .into_iter()
        .map(bits)
        .max()?;
    (k < 126).then(|| (-(1i128 << k), (1i128 << k) - 1))
}

/// floor(x / 2^k) for k >= 0 (exact for every i128).
fn shr_exact(x: i128, k: i128) -> i128 {
    x >> k.clamp(0, 127)
}

/// x * 2^k, if it fits i128.
fn shl_exact(x: i128, k: i128) -> Option<i128> {
    if !(0..=126).contains(&k) {
        return if x == 0 { Some(0) } else { None };
    }
    x.checked_mul(1i128 << k)
}

/// Bounds of a Halide shift `x << k` (left) or `x >> k` for amounts in `k`, exact when no
/// bits are lost, else `None`.
fn shift_interval(x: Interval, k: Interval, left: bool) -> Option<Interval> {
    // A monotone function of x for each fixed k, and of k for each fixed x of one sign:
    // the extremes are at the corners, once the amount's sign is fixed.
    let eval = |v: i128, amt: i128| -> Option<i128> {
        let l = if left { amt } else { -amt };
        if l >= 0 {
            shl_exact(v, l)
        } else {
            Some(shr_exact(v, -l))
        }
    };
    if k.0 < 0 && k.1 > 0 {
        // Both directions: evaluate the corners and the direction change at 0.
        let a = shift_interval(x, (k.0, 0), left)?;
        let b = shift_interval(x, (0, k.1), left)?;
        return Some((a.0.min(b.0), a.1.max(b.1)));
    }
    corners(x, k, eval)
}

impl Intervals {
    /// An analysis with no facts.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a fact: every element of `buffer` lies in `range`.
    pub fn with_buffer_fact(mut self, buffer: impl Into<Sym>, range: Interval) -> Self {
        self.buffer_facts.insert(buffer.into(), range);
        self
    }

    /// The interval of every lane of `e`.
    pub fn interval(&mut self, e: &Expr) -> Interval {
        if let Some((_, i)) = self.cache.get(&e.id()) {
            return *i;
        }
        let args: Vec<Interval> = e.args().iter().map(|a| self.interval(a)).collect();
        let i = self.node(e, &args);
        let i = clamp_to(i, e.ty().elem);
        self.cache.insert(e.id(), (e.clone(), i));
        i
    }

    fn node(&mut self, e: &Expr, a: &[Interval]) -> Interval {
        let elem = e.ty().elem;
        let full = type_range(elem);
        let arg_elem = |i: usize| e.arg(i).ty().elem;
        match e.op() {
            Op::Const(_) => match e.as_const() {
                Some(v) => (v, v),
                None => full,
            },
            Op::Var(name) => self.var_facts.get(name).copied().unwrap_or(full),
            Op::Load(name, _) => self.buffer_facts.get(name).copied().unwrap_or(full),
            Op::Ramp => {
                let n = e.ty().lanes as i128 - 1;
                let last = corners(a[0], a[1], |b, s| b.checked_add(s.checked_mul(n)?));
                match last {
                    Some(l) => or_wrap(Some((a[0].0.min(l.0), a[0].1.max(l.1))), elem),
                    None => full,
                }
            }
            Op::Broadcast | Op::Slice { .. } | Op::ReduceMin | Op::ReduceMax => a[0],
            Op::Concat | Op::Interleave | Op::Shuffle(_) => (
                a.iter().map(|x| x.0).min().unwrap_or(full.0),
                a.iter().map(|x| x.1).max().unwrap_or(full.1),
            ),
            Op::ReduceAdd => {
                let k = (e.arg(0).ty().lanes / e.ty().lanes) as i128;
                or_wrap(a[0].0.checked_mul(k).zip(a[0].1.checked_mul(k)), elem)
            }
            Op::Cast | Op::Reinterpret if elem == Elem::Bool => (0, 1),
            Op::Cast => or_wrap(Some(a[0]), elem),
            Op::Reinterpret => {
                if e.ty().lanes == e.arg(0).ty().lanes {
                    // Same width: values that are valid in both types survive.
                    or_wrap(Some(a[0]), elem)
                } else {
                    full
                }
            }
            Op::Let(_) => full,
            Op::Add | Op::WideningAdd => or_wrap(
                a[0].0.checked_add(a[1].0).zip(a[0].1.checked_add(a[1].1)),
                elem,
            ),
            Op::Sub | Op::WideningSub => or_wrap(
                a[0].0.checked_sub(a[1].1).zip(a[0].1.checked_sub(a[1].0)),
                elem,
            ),
            Op::Mul | Op::WideningMul => or_wrap(product(e, a), elem),
            Op::WidenRightAdd => or_wrap(
                a[0].0.checked_add(a[1].0).zip(a[0].1.checked_add(a[1].1)),
                elem,
            ),
            Op::WidenRightSub => or_wrap(
                a[0].0.checked_sub(a[1].1).zip(a[0].1.checked_sub(a[1].0)),
                elem,
            ),
            Op::WidenRightMul => or_wrap(corners(a[0], a[1], |x, y| x.checked_mul(y)), elem),
            Op::Div => {
                let (b0, b1) = a[1];
                if b0 > 0 {
                    // Floor division by a positive divisor: monotone in both.
                    or_wrap(corners(a[0], a[1], |x, y| Some(x.div_euclid(y))), elem)
                } else if b1 < 0 {
                    or_wrap(corners(a[0], a[1], |x, y| x.checked_div_euclid(y)), elem)
                } else {
                    // The divisor may be zero (quotient 0) or either sign: |q| <= |x|.
                    let m = a[0].0.unsigned_abs().max(a[0].1.unsigned_abs()) as i128;
                    or_wrap(Some((-m, m)), elem)
                }
            }
            Op::Mod => {
                let m = a[1].0.unsigned_abs().max(a[1].1.unsigned_abs());
                if m == 0 {
                    (0, 0)
                } else {
                    let hi = (m - 1) as i128;
                    // A non-negative dividend smaller than every divisor is unchanged.
                    if a[0].0 >= 0 && a[1].0 > a[0].1 {
                        a[0]
                    } else {
                        (0, hi)
                    }
                }
            }
            Op::Min => (a[0].0.min(a[1].0), a[0].1.min(a[1].1)),
            Op::Max => (a[0].0.max(a[1].0), a[0].1.max(a[1].1)),
            Op::And if elem != Elem::Bool => {
                if a[0].0 >= 0 && a[1].0 >= 0 {
                    (0, a[0].1.min(a[1].1))
                } else if a[0].0 >= 0 {
                    (0, a[0].1)
                } else if a[1].0 >= 0 {
                    (0, a[1].1)
                } else {
                    signed_bitwise(a).unwrap_or(full)
                }
            }
            Op::Or | Op::Xor if elem != Elem::Bool => {
                if a[0].0 >= 0 && a[1].0 >= 0 {
                    let m = a[0].1.max(a[1].1);
                    let bound = if m == 0 {
                        0
                    } else {
                        (1i128 << (128 - m.leading_zeros())) - 1
                    };
                    let lo = if matches!(e.op(), Op::Or) {
                        a[0].0.max(a[1].0)
                    } else {
                        0
                    };
                    (lo, bound)
                } else {
                    signed_bitwise(a).unwrap_or(full)
                }
            }
            Op::Not if elem != Elem::Bool => {
                if elem.is_signed() {
                    (-a[0].1 - 1, -a[0].0 - 1)
                } else {
                    let m = elem.max_value().unwrap_or(i128::MAX);
                    (m - a[0].1, m - a[0].0)
                }
            }
            Op::And | Op::Or | Op::Xor | Op::Not => (0, 1),
            Op::Shl => or_wrap(shift_interval(a[0], a[1], true), elem),
            Op::Shr => or_wrap(shift_interval(a[0], a[1], false), elem),
            Op::WideningShl => or_wrap(shift_interval(a[0], a[1], true), elem),
            Op::WideningShr => or_wrap(shift_interval(a[0], a[1], false), elem),
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => (0, 1),
            Op::Select => {
                if a[0] == (1, 1) {
                    a[1]
                } else if a[0] == (0, 0) {
                    a[2]
                } else {
                    (a[1].0.min(a[2].0), a[1].1.max(a[2].1))
                }
            }
            Op::SaturatingAdd => clamp_to(
                a[0].0
                    .checked_add(a[1].0)
                    .zip(a[0].1.checked_add(a[1].1))
                    .unwrap_or(full),
                elem,
            ),
            Op::SaturatingSub => clamp_to(
                a[0].0
                    .checked_sub(a[1].1)
                    .zip(a[0].1.checked_sub(a[1].0))
                    .unwrap_or(full),
                elem,
            ),
            Op::SaturatingCast => clamp_to(a[0], elem),
            Op::HalvingAdd => (
                (a[0].0 + a[1].0).div_euclid(2),
                (a[0].1 + a[1].1).div_euclid(2),
            ),
            Op::RoundingHalvingAdd => (
                (a[0].0 + a[1].0 + 1).div_euclid(2),
                (a[0].1 + a[1].1 + 1).div_euclid(2),
            ),
            Op::HalvingSub => or_wrap(
                Some((
                    (a[0].0 - a[1].1).div_euclid(2),
                    (a[0].1 - a[1].0).div_euclid(2),
                )),
                elem,
            ),
            Op::RoundingShr | Op::RoundingShl => {
                let left = matches!(e.op(), Op::RoundingShl);
                // Right shifts that round: floor((x + 2^(k-1)) / 2^k) is monotone in x and
                // lies between the floor and the ceiling of x / 2^k.
                let k = if left { (-a[1].1, -a[1].0) } else { a[1] };
                if k.0 > 0 && k.0 == k.1 && k.0 < 127 {
                    // One amount: exactly the shifted ends, by monotonicity.
                    let f = |x: i128| x.checked_add(1 << (k.0 - 1)).map(|v| shr_exact(v, k.0));
                    or_wrap(f(a[0].0).zip(f(a[0].1)), elem)
                } else if k.0 > 0 {
                    let lo = corners(a[0], k, |x, s| Some(shr_exact(x, s))).map(|i| i.0);
                    let hi = corners(a[0], k, |x, s| Some(shr_exact(x, s) + 1)).map(|i| i.1);
                    or_wrap(lo.zip(hi), elem)
                } else if k.1 <= 0 {
                    or_wrap(shift_interval(a[0], (-k.1, -k.0), true), elem)
                } else {
                    full
                }
            }
            Op::MulShiftRight | Op::RoundingMulShiftRight => {
                let p = product(e, a);
                let rounding = matches!(e.op(), Op::RoundingMulShiftRight);
                match p {
                    Some(p) => {
                        let lo = corners(p, a[2], |x, q| Some(shr_exact(x, q))).map(|i| i.0);
                        let hi = corners(p, a[2], |x, q| Some(shr_exact(x, q) + rounding as i128))
                            .map(|i| i.1);
                        clamp_to(lo.zip(hi).unwrap_or(full), elem)
                    }
                    None => full,
                }
            }
            Op::Absd => {
                let hi = (a[0].1 - a[1].0).max(a[1].1 - a[0].0);
                let lo = (a[0].0 - a[1].1).max(a[1].0 - a[0].1).max(0);
                or_wrap(Some((lo, hi)), elem)
            }
            Op::Abs => {
                let (l, h) = a[0];
                let hi = l.unsigned_abs().max(h.unsigned_abs()) as i128;
                let lo = if l <= 0 && h >= 0 {
                    0
                } else {
                    l.abs().min(h.abs())
                };
                or_wrap(Some((lo, hi)), elem)
            }
            Op::Popcount | Op::CountLeadingZeros | Op::CountTrailingZeros => {
                (0, arg_elem(0).bits() as i128)
            }
            // Float lanes have no integer interval: their bit patterns can be anything.
            Op::FNeg | Op::Sqrt | Op::Fma => full,
            Op::Instr(ins) => {
                // The interval of the semantics, with the operands' intervals as facts.
                let mut inner = Intervals::new();
                for (i, iv) in a.iter().enumerate() {
                    inner
                        .var_facts
                        .insert(crate::ir::instr::param_name(i).into(), *iv);
                }
                inner.interval(&ins.semantics)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{eval, random_env};
    use crate::ir::visit::post_order;
    use crate::syntax::exprgen::Gen;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// Every node of a random expression evaluates inside its interval, for several
        /// random environments (which include edge values).
        #[test]
        fn intervals_contain_every_sampled_value(seed in any::<u64>(), depth in 1u32..6) {
            let mut g = Gen::new(seed);
            let t = g.ty();
            let e = g.expr(t, depth);
            let mut iv = Intervals::new();
            for s in 0..4 {
                let env = random_env(&e, seed ^ s, &[]);
                for node in post_order(&e) {
                    if matches!(node.op(), Op::Let(_)) || crate::ir::visit::free_vars(&node).keys().any(|n| n.starts_with('l')) {
                        continue;
                    }
                    let Ok(v) = eval(&node, &env) else { continue };
                    let (lo, hi) = iv.interval(&node);
                    for x in v.to_ints() {
                        prop_assert!(lo <= x && x <= hi, "{} = {} is outside [{}, {}]", crate::syntax::halide::print(&node), x, lo, hi);
                    }
                }
            }
        }
    }

    #[test]
    fn facts_narrow_loads() {
        let src = crate::diag::Source::new(
            "<t>",
            "(uint16x8)widening_add((uint8x8)buf[ramp(0, 1, 8)], (uint8x8)buf[ramp(8, 1, 8)])",
        );
        let e = crate::syntax::halide::parse_expr(
            &src,
            &crate::syntax::elab::Decls::new(),
            Default::default(),
        )
        .unwrap();
        let mut iv = Intervals::new().with_buffer_fact("buf", (0, 100));
        assert_eq!(iv.interval(&e), (0, 200));
        assert_eq!(Intervals::new().interval(&e), (0, 510));
    }

    #[test]
    fn a_square_is_never_negative() {
        let interval = |text: &str| {
            let src = crate::diag::Source::new("<t>", text);
            let decls = crate::syntax::elab::Decls::new();
            let e = crate::syntax::halide::parse_expr(&src, &decls, Default::default()).unwrap();
            Intervals::new().interval(&e)
        };
        let x = "(int32x4((int8x4)buf[ramp(0, 1, 4)]) - (int32)3)";
        let y = "(int32x4((int8x4)buf[ramp(4, 1, 4)]) - (int32)3)";
        assert_eq!(interval(&format!("{x} * {x}")), (0, 131 * 131));
        assert_eq!(interval(&format!("{x} * {y}")), (-131 * 124, 131 * 131));
        // The high dword of the square is 0; of any other product, 0 or -1.
        assert_eq!(
            interval(&format!("mul_shift_right({x}, {x}, (uint32)31)")),
            (0, 0)
        );
        assert_eq!(
            interval(&format!("mul_shift_right({x}, {y}, (uint32)31)")),
            (-1, 0)
        );
        // Away from zero, the square's least is the square of the end nearer it.
        let z = "(int32x4((uint8x4)buf[ramp(0, 1, 4)]) + (int32)10)";
        assert_eq!(interval(&format!("{z} * {z}")), (100, 265 * 265));
    }

    #[test]
    fn bitwise_operations_of_small_signed_values_stay_small() {
        // Every pair of operands in the ranges, so the bound is checked, not assumed.
        let ranges = [(-5, 3), (-8, 7), (-1, 0), (-300, 2), (0, 9)];
        for &(a, b) in &ranges {
            for &(c, d) in &ranges {
                let (lo, hi) = signed_bitwise(&[(a, b), (c, d)]).unwrap();
                for x in a..=b {
                    for y in c..=d {
                        for v in [x & y, x | y, x ^ y] {
                            assert!(lo <= v && v <= hi, "{v} outside [{lo}, {hi}]");
                        }
                    }
                }
            }
        }
        assert_eq!(signed_bitwise(&[(-255, 255), (0, 510)]), Some((-512, 511)));
    }
}
