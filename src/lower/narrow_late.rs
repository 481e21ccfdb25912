//! Narrow wrapping arithmetic on narrowings of one wider type, done at the wider type and
//! narrowed once: `i8(a) - saturating_cast<i8>(b)` as `i8(a - clamp(b, -128, 127))`.
//!
//! A truncation commutes with wrapping `+ - * & | ^ ~` (the low bits of a result depend only
//! on the low bits of its operands), and a saturating narrowing is a clamp in the wide type
//! followed by the truncation. Lifting narrows early, which is right when the narrowings
//! are cheap, but where each one is a pack sequence of its own (two of the same strided
//! 32-bit lanes on x86 took a saturating and a truncating pack each) one narrowing of the
//! result is cheaper: fuzz_3_76 of seed 3 ran at 0.93x clang -O3, which computes in 32
//! bits. Whether it is cheaper depends on what else reads the narrowings, so this is a
//! whole form that lowering costs beside the lifted one (as it does the factored form),
//! not a per-node strategy: offered per node, it won where it was proposed and lost the
//! sharing of the narrow values with the rest of the expression (Arm's fuzz_3_37).

use crate::bounds::Intervals;
use crate::ir::{Expr, Op};
use crate::types::Elem;
use crate::util::idhash::IdMap;

/// `e` with every largest narrow wrapping computation over two or more narrowings of one
/// wider type computed at that type and narrowed once; `e` itself where there is none.
/// With `through_extensions`, a narrowing extended again counts as one, extended in place.
pub fn narrowed_once_at_the_end(e: &Expr, through_extensions: bool) -> Expr {
    let scope = Scope {
        through_extensions,
        selects_only: false,
    };
    rewrite(e, scope, &mut IdMap::default())
}

/// [`narrowed_once_at_the_end`] for selects only: a select between narrowings of the type
/// its condition compares, with the computations below it, done at that type.
///
/// Narrow, the condition's mask must be narrowed too, and where the arms are narrowings
/// clang folds the select's masking into them (`and` of the wide value, then `xtn`) and
/// no longer forms one bit-select: Arm's fuzz_7_181 of seed 7 (a select of an `i8`
/// truncation and a saturating one of i16 lanes, by an i16 comparison) ran at 0.90x clang
/// -O3, which selects at 16 bits. Other narrow arithmetic stays narrow there: done wide
/// as a whole it ran slower on Arm (docs/kernels.md).
pub fn selects_narrowed_once_at_the_end(e: &Expr) -> Expr {
    let scope = Scope {
        through_extensions: false,
        selects_only: true,
    };
    rewrite(e, scope, &mut IdMap::default())
}

/// Which computations [`rewrite`] does wide.
#[derive(Clone, Copy)]
struct Scope {
    /// A narrowing extended again counts as one, extended in place.
    through_extensions: bool,
    /// Only computations whose root is a select by a comparison of the wide type.
    selects_only: bool,
}

/// The rewrite of [`narrowed_once_at_the_end`] below `e`, top-down so that each rewritten
/// computation is the largest one.
fn rewrite(e: &Expr, scope: Scope, memo: &mut IdMap<usize, Expr>) -> Expr {
    if let Some(done) = memo.get(&e.id()) {
        return done.clone();
    }
    let extended_back = if scope.through_extensions {
        never_narrowed(e)
            .or_else(|| wrapped_back(e))
            .or_else(|| compared_at_wide_type(e))
    } else {
        None
    };
    let out = extended_back
        .or_else(|| at_the_end(e, scope))
        .unwrap_or_else(|| {
            let args = e.args().iter().map(|a| rewrite(a, scope, memo)).collect();
            e.with_args(args).unwrap_or_else(|_| e.clone())
        });
    memo.insert(e.id(), out.clone());
    out
}

/// `e` computed at the wider type and narrowed once, where it is narrow wrapping
/// arithmetic over at least two narrowings.
fn at_the_end(e: &Expr, scope: Scope) -> Option<Expr> {
    let e = &primitive(e);
    let t = e.ty();
    if t.is_scalar() || !t.elem.is_int() || !is_wrapping_arith(e) {
        return None;
    }
    let wide = narrowed_from(e, is_wrapping_arith)?;
    if scope.selects_only && compared_bits(e) != Some(wide.bits()) {
        return None;
    }
    let mut narrowings = 0;
    let rebuilt = at_wide_type(e, wide, scope.through_extensions, false, &mut narrowings)?;
    // One narrowing alone gains nothing over the narrow arithmetic.
    (narrowings >= 2).then(|| rebuilt.cast(t.elem))
}

/// The lane width of the comparison `e` selects by, where `e` is a select of vectors by a
/// comparison of vectors.
fn compared_bits(e: &Expr) -> Option<u32> {
    if !matches!(e.op(), Op::Select) || e.arg(0).ty().is_scalar() {
        return None;
    }
    let c = primitive(e.arg(0));
    let compared = c.op().is_comparison();
    compared.then(|| c.arg(0).ty().elem.bits())
}

/// `e`, an unsigned narrow computation extended back to at least the width it was narrowed
/// from (`u16(rounding_shift_right(u8(x) & saturating_cast<u8>(x), 5))` of i16 lanes,
/// fuzz_5_120 of seed 5), computed at that width without narrowing at all, where every step
/// keeps the narrow value exactly (masks, clamps, bitwise operations, shifts right,
/// averages: never above the narrow type's maximum, so the wide values are the extended
/// narrow ones). Packed to bytes and unpacked again on AVX2 it ran at 0.86x clang -O3.
fn never_narrowed(e: &Expr) -> Option<Expr> {
    let t = e.ty();
    if t.is_scalar() || !matches!(e.op(), Op::Cast) {
        return None;
    }
    let narrow = e.arg(0);
    let n = narrow.ty().elem;
    if !n.is_int() || !t.elem.is_int() || t.elem.bits() <= n.bits() {
        return None;
    }
    // A signed narrow computation whose every value is non-negative is an unsigned one
    // (`u32(clamp(saturating_cast<i8>(x), 52, 112) / 5)` of u16 lanes, fuzz_8_112 of seed 8:
    // packed to bytes, divided as bytes and unpacked on AVX2 it ran at 0.84x clang -O3,
    // which computes in 16 bits).
    if n.is_signed() && !never_negative(narrow, &mut Intervals::new()) {
        return None;
    }
    let wide = narrowed_from(narrow, is_exact_step)?;
    if wide.bits() > t.elem.bits() {
        return None;
    }
    // A lone narrowing of words read back as words stays, for the per-node strategies to
    // price (a saturating one is x86's `ClampConvertedBack`): as a whole form it changed
    // fuzz_3_16 of seed 3 (a stride-3 gather of words) 1.04x -> 1.00x.
    let lone = matches!(narrow.op(), Op::Cast | Op::SaturatingCast);
    if lone && wide.bits() < 32 && t.elem.bits() == wide.bits() {
        return None;
    }
    let mut narrowings = 0;
    let exact = exactly_at_wide_type(narrow, wide, &mut narrowings)?;
    (narrowings >= 1).then(|| exact.cast(t.elem))
}

/// `e`, narrow wrapping arithmetic extended back to at least the widest type its
/// narrowings narrow from (`u32(u8(a) - (u8(b) - clamp(saturating_cast<u8>(a), 27, 171)))`
/// with `a` of u32 lanes and `b` of i16 ones, fuzz_7_75 of seed 7), computed at that type
/// and truncated there: narrowings from narrower types are extended to it, exact unsigned
/// steps (the clamp) are computed exactly. Packed to bytes and unpacked again on AVX2 it ran
/// at 0.87x clang -O3, which computes in 32 bits; 0.99x so. Only where the result is read
/// back that wide: where it stays narrower, the narrow arithmetic was cheaper (fuzz_7_115,
/// 1.08x against 0.90x done in 32 bits).
fn wrapped_back(e: &Expr) -> Option<Expr> {
    let t = e.ty();
    if t.is_scalar() || !matches!(e.op(), Op::Cast) || !t.elem.is_int() {
        return None;
    }
    let narrow = primitive(e.arg(0));
    let n = narrow.ty().elem;
    if !n.is_int() || t.elem.bits() <= n.bits() || !is_wrapping_arith(&narrow) {
        return None;
    }
    let wide = narrowed_from(&narrow, is_wrapping_arith)?;
    if wide.bits() > t.elem.bits() {
        return None;
    }
    let mut narrowings = 0;
    let rebuilt = at_wide_type(&narrow, wide, true, true, &mut narrowings)?;
    if narrowings == 0 {
        return None;
    }
    // Read back at the wide width itself, the narrow bits are extended in place (a mask,
    // or a shift pair: `u16(select(c, i8(a), saturating_cast<i8>(b)))` of words, fuzz_7_181
    // of seed 7); wider, the narrow value is extended as its type extends.
    if wide.bits() == t.elem.bits() {
        return Some(extended_in_place(&rebuilt, n)?.cast(t.elem));
    }
    Some(rebuilt.cast(n).cast(t.elem))
}

/// Whether every value of the narrow computation `e` (its exact steps down to narrowings
/// and constants, as [`exactly_at_wide_type`] reads it) is non-negative.
fn never_negative(e: &Expr, bounds: &mut Intervals) -> bool {
    if bounds.interval(e).0 < 0 {
        return false;
    }
    match e.op() {
        Op::Cast | Op::SaturatingCast => true,
        _ if is_exact_step(e) => values(e).iter().all(|a| never_negative(a, bounds)),
        _ => true,
    }
}

/// `e`, a comparison of exact narrow computations (as [`never_narrowed`] reads them) over
/// two or more narrowings of one wider type, compared at that type: the narrow values are
/// the wide ones, never negative. `u8(a) <= (saturating_cast<u8>(b) & saturating_cast<u8>(c))`
/// of u16 lanes (fuzz_8_132 of seed 8) was packed to bytes and compared unsigned by a
/// `pminub` and `pcmpeqb` on AVX2: 0.82x clang -O3, which compares the words.
fn compared_at_wide_type(e: &Expr) -> Option<Expr> {
    let (a, b) = match e.args() {
        [a, b] if e.op().is_comparison() && !a.ty().is_scalar() => (a, b),
        _ => return None,
    };
    let n = a.ty().elem;
    let wide = [a, b]
        .into_iter()
        .filter_map(|x| narrowed_from(x, is_exact_step))
        .max_by_key(|w| w.bits())?;
    let bounds = &mut Intervals::new();
    if !n.is_int() || (n.is_signed() && !(never_negative(a, bounds) && never_negative(b, bounds))) {
        return None;
    }
    let mut narrowings = 0;
    let a = exactly_at_wide_type(a, wide, &mut narrowings)?;
    let b = exactly_at_wide_type(b, wide, &mut narrowings)?;
    // One narrowing alone gains nothing over the narrow comparison.
    if narrowings < 2 {
        return None;
    }
    Expr::build(e.op().clone(), None, vec![a, b]).ok()
}

/// `e` (unsigned narrow steps that keep values exact, over narrowings from `wide` and
/// constants) computed at `wide` with the same values, counting the narrowings it removes.
fn exactly_at_wide_type(e: &Expr, wide: Elem, narrowings: &mut u32) -> Option<Expr> {
    let t = e.ty();
    match e.op() {
        Op::Cast | Op::SaturatingCast if e.arg(0).ty().elem == wide => {
            *narrowings += 1;
            extension_at_wide_type(e)
        }
        _ if is_exact_step(e) => {
            // A shift's amount is a constant within the narrow type's width.
            if matches!(e.op(), Op::Shr | Op::RoundingShr) {
                let c = e.arg(1).as_const()?;
                if !(0..i128::from(t.elem.bits())).contains(&c) {
                    return None;
                }
            }
            with_values(e, |a| exactly_at_wide_type(a, wide, narrowings))
        }
        _ => {
            let c = e.as_const()?;
            Expr::splat(t.with_elem(wide), c).ok()
        }
    }
}

/// `x` clamped to the range of `narrow` in its own type, the value a saturating narrowing
/// to `narrow` keeps (`min(max(x, -128), 127)` for `i8`); a bound `x`'s type cannot pass
/// needs no clamp.
pub fn clamped_to(x: &Expr, narrow: Elem) -> Option<Expr> {
    let (t, from) = (x.ty(), x.ty().elem);
    let (lo, hi) = (narrow.min_value(), narrow.max_value()?);
    let mut clamped = x.clone();
    if lo > from.min_value() {
        let bound = Expr::splat(t, lo).ok()?;
        clamped = Expr::build(Op::Max, None, vec![clamped, bound]).ok()?;
    }
    if hi < from.max_value()? {
        let bound = Expr::splat(t, hi).ok()?;
        clamped = Expr::build(Op::Min, None, vec![clamped, bound]).ok()?;
    }
    Some(clamped)
}

/// `e` as the wrapping arithmetic it is defined as, where it is a widening FPIR operation
/// (`widen_right_sub(a, b)` is `a - T(b)`, as lifting writes `u16(x) - u16(i8(x))`), else
/// `e`.
fn primitive(e: &Expr) -> Expr {
    match e.op() {
        Op::WidenRightAdd
        | Op::WidenRightSub
        | Op::WidenRightMul
        | Op::WideningAdd
        | Op::WideningSub
        | Op::WideningMul => crate::fpir::definition(e.op(), e.ty(), e.args()),
        _ => e.clone(),
    }
}

/// `x` with its low `narrow` bits extended over the rest of its type, as `narrow` extends
/// (a mask for unsigned, a shift left and an arithmetic shift right for signed).
fn extended_in_place(x: &Expr, narrow: Elem) -> Option<Expr> {
    let (t, from) = (x.ty(), x.ty().elem);
    if !narrow.is_int() || narrow.bits() >= from.bits() {
        return None;
    }
    if !narrow.is_signed() {
        let mask = Expr::splat(t, narrow.max_value()?).ok()?;
        return Expr::build(Op::And, None, vec![x.clone(), mask]).ok();
    }
    let signed = Elem::from_bits(from.bits(), true)?;
    let shift = Expr::splat(t.with_elem(signed), i128::from(from.bits() - narrow.bits())).ok()?;
    let up = Expr::build(Op::Shl, None, vec![x.cast(signed), shift.clone()]).ok()?;
    let back = Expr::build(Op::Shr, None, vec![up, shift]).ok()?;
    Some(back.cast(from))
}

/// The operands of `e` that are values: all of them but a select's condition, which is
/// not narrowed with them.
fn values(e: &Expr) -> &[Expr] {
    let condition = usize::from(matches!(e.op(), Op::Select));
    &e.args()[condition..]
}

/// `e` rebuilt with `f` of each of its [`values`] (a select's condition stays as it is).
fn with_values(e: &Expr, mut f: impl FnMut(&Expr) -> Option<Expr>) -> Option<Expr> {
    let condition = e.args().len() - values(e).len();
    let mut args = e.args()[..condition].to_vec();
    for a in values(e) {
        args.push(f(a)?);
    }
    Expr::build(e.op().clone(), None, args).ok()
}

/// `narrow`, a truncation or saturating narrowing of `x`, as a value of `x`'s type with the
/// same low bits: `x` itself, or its clamp to the narrow type.
fn low_bits_of_narrowing(narrow: &Expr) -> Option<Expr> {
    let x = narrow.arg(0);
    if matches!(narrow.op(), Op::Cast) {
        return Some(x.clone());
    }
    clamped_to(x, narrow.ty().elem)
}

/// `narrow`, a truncation or saturating narrowing of a wider value `x`, as the value of
/// `x`'s type whose low bits extend as the narrow type extends: `x` extended in place
/// (a mask, or a shift pair), or the clamp, whose value already is the narrow one.
fn extension_at_wide_type(narrow: &Expr) -> Option<Expr> {
    let (x, to) = (narrow.arg(0), narrow.ty().elem);
    if matches!(narrow.op(), Op::SaturatingCast) {
        clamped_to(x, to)
    } else {
        extended_in_place(x, to)
    }
}

/// Whether `op`, on unsigned narrow values, never goes above its operands' largest value,
/// so that computed on their extensions it gives the extension of its narrow result (a
/// select picks one of its values).
fn is_exact_step(e: &Expr) -> bool {
    // A quotient by a positive constant is at most its dividend (and, dividend and divisor
    // non-negative, a floored quotient is the truncated one the wide type computes).
    if matches!(e.op(), Op::Div) {
        return e.arg(1).as_const().is_some_and(|c| c > 0);
    }
    matches!(
        e.op(),
        Op::Select
            | Op::And
            | Op::Or
            | Op::Xor
            | Op::Min
            | Op::Max
            | Op::Shr
            | Op::RoundingShr
            | Op::HalvingAdd
            | Op::RoundingHalvingAdd
    )
}

/// Whether `e` computes each lane's low bits from its operands' low bits alone (a
/// select's from the values it picks between; its condition stays; a shift left by a
/// constant within the lane, `saturating_cast<i8>(x) << 3` of fuzz_7_71 of seed 7).
fn is_wrapping_arith(e: &Expr) -> bool {
    match e.op() {
        Op::Add | Op::Sub | Op::Mul | Op::And | Op::Or | Op::Xor | Op::Not | Op::Select => true,
        Op::Shl => e
            .arg(1)
            .as_const()
            .is_some_and(|c| (0..i128::from(e.ty().elem.bits())).contains(&c)),
        _ => false,
    }
}

/// The widest integer type the narrowings below `e` (through the operations `through`
/// accepts and casts that keep the width) narrow from (the first found, of equally wide
/// ones).
fn narrowed_from(e: &Expr, through: fn(&Expr) -> bool) -> Option<Elem> {
    let bits = e.ty().elem.bits();
    let mut stack = vec![e.clone()];
    let mut widest: Option<Elem> = None;
    while let Some(x) = stack.pop() {
        let x = primitive(&x);
        match x.op() {
            Op::Cast | Op::SaturatingCast => {
                let from = x.arg(0).ty().elem;
                if from.is_int() && from.bits() > bits {
                    if widest.is_none_or(|w| from.bits() > w.bits()) {
                        widest = Some(from);
                    }
                    continue;
                }
                if from.bits() == bits && matches!(x.op(), Op::Cast) {
                    stack.push(x.arg(0).clone());
                }
            }
            // Not through a select's condition, whose narrowings are not its value's.
            _ if through(&x) => stack.extend(values(&x).iter().cloned()),
            _ => {}
        }
    }
    widest
}

/// `e` (narrow wrapping arithmetic over narrowings from `wide` and constants) computed at
/// `wide`, counting the narrowings it removes; `None` where a leaf is anything else.
fn at_wide_type(
    e: &Expr,
    wide: Elem,
    through_extensions: bool,
    read_back: bool,
    narrowings: &mut u32,
) -> Option<Expr> {
    let e = &primitive(e);
    let (t, bits) = (e.ty(), e.ty().elem.bits());
    let wide_t = t.with_elem(wide);
    match e.op() {
        Op::Cast | Op::SaturatingCast if e.arg(0).ty().elem == wide => {
            *narrowings += 1;
            low_bits_of_narrowing(e)
        }
        Op::Cast if e.arg(0).ty().elem.bits() == bits => {
            at_wide_type(e.arg(0), wide, through_extensions, read_back, narrowings)
        }
        // A narrowing from a type between this one and `wide` (`u8(in1(x))` of i16 lanes
        // beside `u8(in0(x))` of u32 ones, fuzz_7_75 of seed 7): its value (the clamp, for a
        // saturating one) extended to `wide` has the same low bits.
        Op::Cast | Op::SaturatingCast
            if read_back
                && e.arg(0).ty().elem.is_int()
                && e.arg(0).ty().elem.bits() > bits
                && e.arg(0).ty().elem.bits() <= wide.bits() =>
        {
            *narrowings += 1;
            Some(low_bits_of_narrowing(e)?.cast(wide))
        }
        // A narrowing from `wide` extended again (`u16(i8(x))` of i32 lanes, fuzz_5_4 of
        // seed 5): the wide value's low bits extended in place, or its clamp, whose wide
        // value already is the extension of the narrow one.
        Op::Cast
            if through_extensions
                && e.arg(0).ty().elem.bits() < bits
                && matches!(e.arg(0).op(), Op::Cast | Op::SaturatingCast)
                && e.arg(0).arg(0).ty().elem == wide =>
        {
            *narrowings += 1;
            extension_at_wide_type(e.arg(0))
        }
        _ if is_wrapping_arith(e) => with_values(e, |a| {
            at_wide_type(a, wide, through_extensions, read_back, narrowings)
        }),
        // An exact unsigned computation (a clamp of a narrowing, fuzz_7_75 of seed 7) has
        // its narrow value at `wide`, low bits and all.
        _ if read_back && is_exact_step(e) && !t.elem.is_signed() => {
            exactly_at_wide_type(e, wide, narrowings)
        }
        _ => {
            // A constant keeps its low bits: any wide value with them will do.
            let c = e.as_const()?;
            let value = crate::types::to_i128(crate::types::from_i128(c, wide), wide);
            Expr::splat(wide_t, value).ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{Env, Value, eval};
    use crate::types::Type;

    fn var(name: &str, ty: Type) -> Expr {
        Expr::var(name, ty)
    }

    /// `saturating_cast<elem>(x)`.
    fn saturated(x: &Expr, elem: Elem) -> Expr {
        Expr::build(
            Op::SaturatingCast,
            Some(x.ty().with_elem(elem)),
            vec![x.clone()],
        )
        .unwrap()
    }

    #[test]
    fn narrow_arithmetic_over_narrowings_is_done_wide_and_computes_the_same_lanes() {
        let wide = Type::vec(Elem::I32, 8);
        let (a, b) = (var("a", wide), var("b", wide));
        let sat = saturated(&b, Elem::I8);
        let diff = Expr::build(Op::Sub, None, vec![a.cast(Elem::I8), sat]).unwrap();
        let e = Expr::build(Op::Xor, None, vec![diff, b.cast(Elem::I8)])
            .unwrap()
            .cast(Elem::U8);
        let f = narrowed_once_at_the_end(&e, true);
        assert_eq!(
            f.to_string(),
            "uint8x8(int8x8((int32x8)bitwise_xor((a - min(max(b, x8(-128)), x8(127))), b)))"
        );
        let mut rng = crate::util::rng::SplitMix64::new(7);
        for round in 0..200 {
            let mut env = Env::new();
            for v in ["a", "b"] {
                let lanes = (0..8)
                    .map(|i| match (round, i) {
                        (0, _) => 0,
                        (1, i) => crate::types::from_i128([127, 128, -128, -129][i % 4], Elem::I32),
                        _ => rng.lane(Elem::I32),
                    })
                    .collect();
                env.set(v, Value { ty: wide, lanes });
            }
            assert_eq!(eval(&e, &env).unwrap(), eval(&f, &env).unwrap());
        }
    }

    #[test]
    fn narrowings_extended_again_are_extended_in_place_at_the_wide_type() {
        let wide = Type::vec(Elem::I32, 8);
        let a = var("a", wide);
        let sext = a.cast(Elem::I8).cast(Elem::U16);
        let zext = a.cast(Elem::U8).cast(Elem::U16);
        let sat = saturated(&a, Elem::I8).cast(Elem::U16);
        let diff = Expr::build(Op::Sub, None, vec![a.cast(Elem::U16), sext]).unwrap();
        let e = Expr::build(
            Op::Add,
            None,
            vec![Expr::build(Op::Xor, None, vec![diff, zext]).unwrap(), sat],
        )
        .unwrap()
        .cast(Elem::U32);
        // Without reading through extensions, every such leaf stops the rewrite.
        assert_eq!(narrowed_once_at_the_end(&e, false), e);
        let f = narrowed_once_at_the_end(&e, true);
        let text = f.to_string();
        assert!(!text.contains("int8x8"), "{text}");
        assert!(
            text.contains("shift_left") && text.contains("shift_right") && text.contains("255"),
            "{text}"
        );
        assert_same_lanes_in_a(&e, &f, [127, 128, -128, -129, 0, -1, 255, 65535]);
    }

    /// `e` and `f`, over the 8-lane variable `a`, agree on `edges` and on random lanes.
    fn assert_same_lanes_in_a(e: &Expr, f: &Expr, edges: [i128; 8]) {
        let ty = crate::ir::visit::free_vars(e)["a"];
        let mut rng = crate::util::rng::SplitMix64::new(5);
        for round in 0..300 {
            let lanes = (0..8)
                .map(|i| match round {
                    0 => crate::types::from_i128(edges[i], ty.elem),
                    _ => rng.lane(ty.elem),
                })
                .collect();
            let mut env = Env::new();
            env.set("a", Value { ty, lanes });
            assert_eq!(eval(e, &env).unwrap(), eval(f, &env).unwrap(), "{f}");
        }
    }

    #[test]
    fn an_exact_narrow_computation_extended_back_is_never_narrowed() {
        let wide = Type::vec(Elem::I16, 8);
        let a = var("a", wide);
        let sat = saturated(&a, Elem::U8);
        let masked = Expr::build(Op::And, None, vec![a.cast(Elem::U8), sat.clone()]).unwrap();
        let five = Expr::splat(wide.with_elem(Elem::U8), 5).unwrap();
        let e = Expr::build(Op::RoundingShr, None, vec![masked, five])
            .unwrap()
            .cast(Elem::U16);
        let f = narrowed_once_at_the_end(&e, true);
        let text = f.to_string();
        assert!(!text.contains("uint8"), "{text}");
        // Without it, only the `&` of two narrowings is done wide, and narrowed.
        assert!(
            narrowed_once_at_the_end(&e, false)
                .to_string()
                .contains("uint8")
        );
        assert_same_lanes_in_a(&e, &f, [0, 255, 256, -1, -32768, 32767, 16, 15]);
        // A sum is exact only in its low bits; a lone word narrowing read back as words
        // stays (module docs).
        let sum = Expr::build(Op::Add, None, vec![a.cast(Elem::U8), sat.clone()])
            .unwrap()
            .cast(Elem::U16);
        assert_eq!(never_narrowed(&sum), None);
        assert_eq!(never_narrowed(&sat.cast(Elem::I16)), None);
        assert!(never_narrowed(&sat.cast(Elem::I32)).is_some());
    }

    #[test]
    fn a_non_negative_signed_narrow_division_extended_back_is_never_narrowed() {
        // `u32(max(min(saturating_cast<i8>(a), 112), lo) / 5)` of u16 lanes: every value
        // is in [0, 127] for lo = 52, so it is computed on the words; for lo = -3 the max
        // can be negative and it stays narrow.
        let wide = Type::vec(Elem::U16, 8);
        let a = var("a", wide);
        let byte = |c: i128| Expr::splat(wide.with_elem(Elem::I8), c).unwrap();
        let clamped = |lo: i128| {
            let hi = Expr::build(Op::Min, None, vec![saturated(&a, Elem::I8), byte(112)]);
            Expr::build(Op::Max, None, vec![hi.unwrap(), byte(lo)]).unwrap()
        };
        let divided = |x: Expr| Expr::build(Op::Div, None, vec![x, byte(5)]).unwrap();
        let e = divided(clamped(52)).cast(Elem::U32);
        let f = never_narrowed(&e).expect("computed on the words");
        let text = f.to_string();
        assert!(!text.contains("int8"), "{text}");
        assert_same_lanes_in_a(&e, &f, [0, 51, 52, 53, 112, 113, 127, 65535]);
        assert_eq!(never_narrowed(&divided(clamped(-3)).cast(Elem::U32)), None);
        // A negative divisor is no exact step.
        let by_minus_five = Expr::build(Op::Div, None, vec![clamped(52), byte(-5)]).unwrap();
        assert_eq!(never_narrowed(&by_minus_five.cast(Elem::U32)), None);
    }

    #[test]
    fn a_comparison_of_exact_narrow_computations_is_done_at_the_wide_type() {
        // `u8(a) <= (saturating_cast<u8>(a) & u8(a >> 3))` of u16 lanes: compared on the
        // words; with one narrowing only, or a wrapping sum, it stays narrow.
        let wide = Type::vec(Elem::U16, 8);
        let a = var("a", wide);
        let three = Expr::splat(wide, 3).unwrap();
        let shifted = Expr::build(Op::Shr, None, vec![a.clone(), three]).unwrap();
        let masked = Expr::build(
            Op::And,
            None,
            vec![saturated(&a, Elem::U8), shifted.cast(Elem::U8)],
        )
        .unwrap();
        let e = Expr::build(Op::Le, None, vec![a.cast(Elem::U8), masked.clone()]).unwrap();
        let f = compared_at_wide_type(&e).expect("compared on the words");
        assert!(!f.to_string().contains("uint8"), "{f}");
        assert_same_lanes_in_a(&e, &f, [0, 255, 256, 511, 65535, 2047, 2040, 7]);
        let byte = Expr::splat(wide.with_elem(Elem::U8), 9).unwrap();
        let lone = Expr::build(Op::Lt, None, vec![a.cast(Elem::U8), byte.clone()]).unwrap();
        assert_eq!(compared_at_wide_type(&lone), None);
        let sum = Expr::build(Op::Add, None, vec![a.cast(Elem::U8), byte]).unwrap();
        let wrapped = Expr::build(Op::Le, None, vec![sum, masked]).unwrap();
        assert_eq!(compared_at_wide_type(&wrapped), None);
    }

    #[test]
    fn a_select_between_narrowings_is_an_exact_step_and_its_condition_stays() {
        // `i32(min(select(a < 0, u16(a), saturating_cast<u16>(a)), 133))` of dwords: the
        // select picks one of its narrow values, so all of it is computed on the dwords.
        let wide = Type::vec(Elem::I32, 8);
        let a = var("a", wide);
        let zero = Expr::splat(wide, 0).unwrap();
        let cond = Expr::build(Op::Lt, None, vec![a.clone(), zero]).unwrap();
        let sat = saturated(&a, Elem::U16);
        let picked =
            Expr::build(Op::Select, None, vec![cond.clone(), a.cast(Elem::U16), sat]).unwrap();
        let bound = Expr::splat(wide.with_elem(Elem::U16), 133).unwrap();
        let e = Expr::build(Op::Min, None, vec![picked, bound])
            .unwrap()
            .cast(Elem::I32);
        let f = narrowed_once_at_the_end(&e, true);
        let text = f.to_string();
        assert!(!text.contains("uint16"), "{text}");
        assert!(
            crate::ir::visit::post_order(&f).contains(&cond),
            "the condition is kept: {text}"
        );
        assert_same_lanes_in_a(&e, &f, [0, -1, 65535, 65536, 133, 134, i32::MIN as i128, 7]);
        // A narrowing inside the condition alone is not the select's.
        let (b, c) = (
            var("b", wide.with_elem(Elem::U8)),
            var("c", wide.with_elem(Elem::U8)),
        );
        let narrow_cond = Expr::build(Op::Lt, None, vec![a.cast(Elem::U8), b.clone()]).unwrap();
        let pick = Expr::build(Op::Select, None, vec![narrow_cond, b, c]).unwrap();
        assert_eq!(narrowed_from(&pick, is_exact_step), None);
    }

    #[test]
    fn a_select_between_two_narrowings_is_done_wide_and_narrowed_once() {
        // `select(c, u8(a), saturating_cast<u8>(a))` of dwords read as words: selected on
        // the dwords (the clamp for the saturating one) and narrowed once, its condition
        // as it was (fuzz_7_162 of seed 7: 0.84x -> 0.96x clang -O3 on x86-avx2).
        let wide = Type::vec(Elem::I32, 8);
        let a = var("a", wide);
        let cond = Expr::build(
            Op::Lt,
            None,
            vec![
                a.cast(Elem::U16),
                Expr::splat(wide.with_elem(Elem::U16), 300).unwrap(),
            ],
        )
        .unwrap();
        let sat = saturated(&a, Elem::U8);
        let e = Expr::build(Op::Select, None, vec![cond.clone(), a.cast(Elem::U8), sat])
            .unwrap()
            .cast(Elem::I16);
        let f = narrowed_once_at_the_end(&e, false);
        let nodes = crate::ir::visit::post_order(&f);
        assert!(nodes.contains(&cond), "the condition is kept: {f}");
        assert!(
            nodes
                .iter()
                .any(|n| matches!(n.op(), Op::Select) && n.ty().elem == Elem::I32),
            "selected on the dwords: {f}"
        );
        assert_same_lanes_in_a(&e, &f, [0, 255, 256, -1, 299, 300, 65835, i32::MIN as i128]);
    }

    #[test]
    fn only_selects_by_a_comparison_of_the_wide_type_are_done_wide_in_select_scope() {
        // `select(a < 300, u8(a), saturating_cast<u8>(a))` of dwords compared as dwords:
        // selected on the dwords, its mask never narrowed (Arm's fuzz_7_181 of seed 7).
        let wide = Type::vec(Elem::I32, 8);
        let a = var("a", wide);
        let below = |x: Expr, c: i128| {
            let limit = Expr::splat(x.ty(), c).unwrap();
            Expr::build(Op::Lt, None, vec![x, limit]).unwrap()
        };
        let pick = |cond: Expr| {
            let sat = saturated(&a, Elem::U8);
            Expr::build(Op::Select, None, vec![cond, a.cast(Elem::U8), sat])
                .unwrap()
                .cast(Elem::I16)
        };
        let e = pick(below(a.clone(), 300));
        let f = selects_narrowed_once_at_the_end(&e);
        assert!(
            crate::ir::visit::post_order(&f)
                .iter()
                .any(|n| matches!(n.op(), Op::Select) && n.ty().elem == Elem::I32),
            "selected on the dwords: {f}"
        );
        assert_same_lanes_in_a(&e, &f, [0, 255, 256, -1, 299, 300, 65835, i32::MIN as i128]);
        // Compared as words, the mask is not the dwords' either way: it stays.
        let by_words = pick(below(a.cast(Elem::U16), 300));
        assert_eq!(selects_narrowed_once_at_the_end(&by_words), by_words);
        // Other narrow arithmetic stays narrow in this scope.
        let sum = Expr::build(
            Op::Add,
            None,
            vec![a.cast(Elem::U8), saturated(&a, Elem::U8)],
        )
        .unwrap();
        assert_eq!(selects_narrowed_once_at_the_end(&sum), sum);
        assert_ne!(narrowed_once_at_the_end(&sum, false), sum);
    }

    #[test]
    fn wrapping_arithmetic_read_back_wide_is_done_at_its_widest_source() {
        // `u32(u8(a) - (u8(i16(a)) - clamp(saturating_cast<u8>(a), 27, 171)))`: narrowings
        // from u32 and from i16, a clamp; read back as u32, all of it is done on the dwords.
        let wide = Type::vec(Elem::U32, 8);
        let a = var("a", wide);
        let words = a.cast(Elem::I16);
        let sat = saturated(&a, Elem::U8);
        let bytes = |c: i128| Expr::splat(wide.with_elem(Elem::U8), c).unwrap();
        let clamp = Expr::build(
            Op::Max,
            None,
            vec![
                Expr::build(Op::Min, None, vec![sat, bytes(171)]).unwrap(),
                bytes(27),
            ],
        )
        .unwrap();
        let inner = Expr::build(Op::Sub, None, vec![words.cast(Elem::U8), clamp]).unwrap();
        let narrow = Expr::build(Op::Sub, None, vec![a.cast(Elem::U8), inner]).unwrap();
        let e = narrow.cast(Elem::U32);
        let f = narrowed_once_at_the_end(&e, true);
        let ops = crate::ir::visit::post_order(&f);
        assert!(
            ops.iter()
                .all(|n| !matches!(n.op(), Op::Min | Op::Max | Op::Sub) || n.ty().elem == Elem::U32),
            "{f}"
        );
        assert_same_lanes_in_a(&e, &f, [0, 26, 27, 171, 172, 255, 256, 0xffff_ffff]);
        // Read back narrower than its widest source, it stays narrow.
        assert_eq!(wrapped_back(&narrow.cast(Elem::I16)), None);
    }

    #[test]
    fn a_signed_narrow_result_read_back_at_its_source_width_is_extended_in_place() {
        // `u16(select(c, i8(a), saturating_cast<i8>(a)))` of words: selected on the words
        // and sign-extended in place by a shift pair, no narrowing left.
        let wide = Type::vec(Elem::I16, 8);
        let a = var("a", wide);
        let cond =
            Expr::build(Op::Lt, None, vec![a.clone(), Expr::splat(wide, 3).unwrap()]).unwrap();
        let sat = saturated(&a, Elem::I8);
        let e = Expr::build(Op::Select, None, vec![cond, a.cast(Elem::I8), sat])
            .unwrap()
            .cast(Elem::U16);
        let f = wrapped_back(&e).expect("read back at the words' width");
        let ops = crate::ir::visit::post_order(&f);
        assert!(ops.iter().all(|n| n.ty().elem.bits() != 8), "{f}");
        assert!(ops.iter().any(|n| matches!(n.op(), Op::Shl)), "{f}");
        assert_same_lanes_in_a(&e, &f, [0, 127, 128, -128, -129, 255, 3, i16::MIN as i128]);
    }

    #[test]
    fn a_shift_left_by_a_constant_within_the_lane_is_wrapping_arithmetic() {
        // `i32(saturating_cast<i8>(i16(a)) | (saturating_cast<i8>(a) << 3))` of u16 lanes
        // (fuzz_7_71 of seed 7): read back as i32, clamped, shifted and or-ed in 16 bits, as
        // clang does, instead of packed to bytes (where x86 has no shift) and widened.
        let wide = Type::vec(Elem::U16, 8);
        let a = var("a", wide);
        let bytes = |c: i128| Expr::splat(wide.with_elem(Elem::I8), c).unwrap();
        let signed = saturated(&a.cast(Elem::I16), Elem::I8);
        let shifted = Expr::build(Op::Shl, None, vec![saturated(&a, Elem::I8), bytes(3)]).unwrap();
        let narrow = Expr::build(Op::Or, None, vec![signed, shifted]).unwrap();
        let e = narrow.cast(Elem::I32);
        let f = wrapped_back(&e).expect("a shift by 3 keeps the low bits");
        let ops = crate::ir::visit::post_order(&f);
        assert!(
            ops.iter()
                .all(|n| !matches!(n.op(), Op::Shl | Op::Or) || n.ty().elem.bits() == 16),
            "{f}"
        );
        assert_same_lanes_in_a(&e, &f, [0, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff]);
        // A shift by the lane's width or more is not.
        let far = Expr::build(Op::Shl, None, vec![saturated(&a, Elem::I8), bytes(8)]).unwrap();
        assert!(!is_wrapping_arith(&far));
    }

    #[test]
    fn one_narrowing_or_a_non_wrapping_operation_is_left_alone() {
        let wide = Type::vec(Elem::U16, 8);
        let (a, b) = (var("a", wide), var("b", wide.with_elem(Elem::U8)));
        let one = Expr::build(Op::Add, None, vec![a.cast(Elem::U8), b]).unwrap();
        assert_eq!(narrowed_once_at_the_end(&one, true), one);
        let shifted = Expr::build(Op::Shr, None, vec![a.cast(Elem::U8), a.cast(Elem::U8)]).unwrap();
        assert_eq!(narrowed_once_at_the_end(&shifted, true), shifted);
    }
}
