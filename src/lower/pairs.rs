//! Weighted sums of narrow taps as sums of adjacent-lane products (pairwise multiply-add).
//!
//! A 32-bit sum `acc + w0*a + w1*b + w2*c + ...` of byte or half-word taps (a stencil or a
//! small matrix product accumulated in 32 bits) costs, written as it reads, one widening,
//! one multiply and one add per tap. Many machines multiply adjacent 16-bit lanes and add
//! each pair into a 32-bit lane (x86 `pmaddwd`, Arm's pairwise `smull`+`addp` forms): with
//! two taps interleaved lane by lane and the two weights repeated as one 32-bit constant,
//! one such instruction does two taps. This module reads the sum as a linear form (the
//! reader of `dot`, exact modulo 2^32) and rebuilds it as
//! `acc + sum(vector_reduce_add(widening_mul(interleave(a, b), (w0, w1)...)))`, which is
//! exactly the semantics of those instructions, so the target's own descriptions select
//! them. The result is one more candidate: the selector keeps it only when cheaper, and it
//! is checked against the original by evaluation before it is offered.

use crate::ir::{Expr, Op, mk, mk_typed};
use crate::types::{Elem, Type};

use super::linear::{Linear, Term, read, reinterpret, weight_in};

/// The most taps a pairwise form is built from: a 16-tap row of a small matrix product is
/// eight instructions, where the default limit of a linear form left half its taps to
/// 32-bit multiplies.
const MAX_TERMS: usize = 16;

/// The pairwise form of `e`, when `e` is a 32-bit vector sum of at least two weighted taps
/// that 16 bits hold, with weights 16 bits hold; checked by evaluation.
#[cfg(test)]
pub(super) fn candidate(e: &Expr) -> Option<Expr> {
    rebuild(e).filter(|out| super::linear::agrees(e, out))
}

/// [`candidate`] before the check (selection checks it where its result uses it:
/// `select::Selector::select_trusting`).
pub(super) fn rebuild(e: &Expr) -> Option<Expr> {
    let t = e.ty();
    if t.is_scalar()
        || t.elem.bits() != 32
        || !matches!(
            e.op(),
            Op::Add | Op::Sub | Op::WidenRightAdd | Op::WidenRightSub | Op::Cast
        )
    {
        return None;
    }
    let mut lin = Linear::with_max_terms(MAX_TERMS);
    lin.word_products = true;
    read(e, 1, 32, &mut lin)?;
    lin.terms.retain(|(_, w)| w.rem_euclid(1 << 32) != 0);
    if lin.terms.len() < 2 {
        return None;
    }
    let half_word = |x: &Expr| {
        matches!(x.ty().elem, Elem::U8 | Elem::I8 | Elem::I16) && x.ty().lanes == t.lanes
    };
    let mut factors = Vec::new();
    for (term, w) in &lin.terms {
        let f = match term {
            Term::Tap(a) => (a.clone(), Factor::Weight(weight_in(*w, 32, Elem::I16)?)),
            // A product with a weight other than one would need a third factor.
            Term::Prod(a, b) if w.rem_euclid(1 << 32) == 1 => (a.clone(), Factor::Lanes(b.clone())),
            Term::Prod(..) => return None,
        };
        if !half_word(&f.0) || matches!(&f.1, Factor::Lanes(b) if !half_word(b)) {
            return None;
        }
        factors.push(f);
    }
    let mut sum = lin.acc.clone().map(|a| reinterpret(&a, Elem::I32));
    for pair in factors.chunks(2) {
        let (a, fa) = &pair[0];
        let (b, fb) = match pair.get(1) {
            Some(p) => p.clone(),
            None => (Expr::splat(a.ty(), 0).ok()?, Factor::Weight(0)),
        };
        let prod = pair_product(a, fa, &b, &fb)?;
        sum = Some(match sum {
            None => prod,
            Some(s) => mk(Op::Add, vec![s, prod]),
        });
    }
    Some(reinterpret(&sum?, t.elem))
}

/// What a tap is multiplied by.
#[derive(Clone)]
enum Factor {
    /// A constant that 16 bits hold.
    Weight(i128),
    /// The lanes of another tap.
    Lanes(Expr),
}

/// Two taps interleaved lane by lane as 16-bit lanes: taps of one byte type interleave as
/// bytes and widen once; others widen first.
fn interleaved_words(a: &Expr, b: &Expr) -> Expr {
    if a.ty() == b.ty() && a.ty().elem.bits() == 8 {
        interleave_lanes(a, b).cast(Elem::I16)
    } else {
        interleave_lanes(&a.cast(Elem::I16), &b.cast(Elem::I16))
    }
}

/// `interleave(a, b)`, moved below the lane-wise operations `a` and `b` share: widening
/// casts of one type, and arithmetic with the same broadcast operand (a zero point). The
/// narrow operands then interleave in fewer registers (bytes before a subtraction in
/// words: one unpack instead of three shuffles across a 256-bit register).
fn interleave_lanes(a: &Expr, b: &Expr) -> Expr {
    let plain = || mk(Op::Interleave, vec![a.clone(), b.clone()]);
    if a.op() != b.op() || a.ty() != b.ty() {
        return plain();
    }
    match a.op() {
        Op::Cast if a.arg(0).ty() == b.arg(0).ty() => {
            interleave_lanes(a.arg(0), b.arg(0)).cast(a.ty().elem)
        }
        Op::Add | Op::Sub | Op::WideningAdd | Op::WideningSub
            if a.arg(1) == b.arg(1)
                && matches!(a.arg(1).op(), Op::Broadcast)
                && a.arg(1).arg(0).ty().is_scalar()
                && a.arg(0).ty() == b.arg(0).ty() =>
        {
            let shared = a.arg(1).arg(0).broadcast(2 * a.arg(1).ty().lanes);
            let lanes = interleave_lanes(a.arg(0), b.arg(0));
            crate::ir::Expr::build(a.op().clone(), None, vec![lanes, shared])
                .unwrap_or_else(|_| plain())
        }
        _ => plain(),
    }
}

/// `fa*a + fb*b` in 32-bit lanes as one reduction of adjacent 16-bit products.
fn pair_product(a: &Expr, fa: &Factor, b: &Expr, fb: &Factor) -> Option<Expr> {
    let lanes = a.ty().lanes;
    let words = interleaved_words(a, b);
    let factors = match (fa, fb) {
        (Factor::Weight(wa), Factor::Weight(wb)) => {
            // Both weights in one 32-bit constant: the low half word pairs with `a`.
            let packed = (*wa as u16 as i128) | ((*wb as u16 as i128) << 16);
            reinterpret(
                &Expr::splat(Type::vec(Elem::U32, lanes), packed).ok()?,
                Elem::I16,
            )
        }
        _ => {
            let lanes_of = |f: &Factor| match f {
                Factor::Weight(w) => Expr::splat(Type::vec(Elem::I16, lanes), *w).ok(),
                Factor::Lanes(x) => Some(x.clone()),
            };
            interleaved_words(&lanes_of(fa)?, &lanes_of(fb)?)
        }
    };
    let products = mk(Op::WideningMul, vec![words, factors]);
    Some(mk_typed(
        Op::ReduceAdd,
        Type::vec(Elem::I32, lanes),
        vec![products],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, vars: &[(&str, &str)]) -> Expr {
        crate::lift::lift(&crate::syntax::halide::parse_with_vars(text, vars))
    }

    fn pairs_in(e: &Expr) -> usize {
        crate::ir::visit::post_order(e)
            .iter()
            .filter(|n| matches!(n.op(), Op::ReduceAdd))
            .count()
    }

    #[test]
    fn weighted_byte_taps_become_one_pair_product_per_two_taps() {
        let vars = [
            ("a", "u8x8"),
            ("b", "i8x8"),
            ("c", "u8x8"),
            ("acc", "i32x8"),
        ];
        let e = parse(
            "acc + int32(a)*(int32)-3 + int32(b)*(int32)7 + int32(c)*(int32)300",
            &vars,
        );
        let cand = candidate(&e).expect("three weighted byte taps and an accumulator");
        // Three taps: two pairs, the last padded with a zero tap.
        assert_eq!(pairs_in(&cand), 2, "{cand}");
        // `candidate` checked it by evaluation; check again on other inputs.
        for seed in 0..20 {
            let env = crate::interp::random_env(&e, seed, &[]);
            assert_eq!(
                crate::interp::eval(&e, &env).unwrap().lanes,
                crate::interp::eval(&cand, &env).unwrap().lanes
            );
        }
    }

    /// A row of a small matrix product: sixteen byte taps times sixteen splatted words
    /// (more than the default limit of a linear form) are eight pair products.
    #[test]
    fn a_sixteen_tap_row_is_eight_pair_products() {
        let mut vars = vec![];
        let mut terms = vec![];
        for k in 0..16 {
            vars.push((format!("t{k}"), "u8x8"));
            vars.push((format!("w{k}"), "i16x8"));
            terms.push(format!("int32(t{k})*int32(w{k})"));
        }
        let vars: Vec<(&str, &str)> = vars.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        let e = parse(&terms.join(" + "), &vars);
        let cand = candidate(&e).expect("sixteen products of bytes and words");
        assert_eq!(pairs_in(&cand), 8, "{cand}");
    }

    #[test]
    fn products_of_words_pair_and_wide_taps_do_not() {
        let vars = [
            ("a", "i16x8"),
            ("b", "i16x8"),
            ("c", "i16x8"),
            ("d", "i16x8"),
        ];
        let e = parse("int32(a)*int32(b) + int32(c)*int32(d)", &vars);
        assert_eq!(pairs_in(&candidate(&e).expect("two word products")), 1);
        // A 32-bit tap has no 16-bit form.
        let w = parse(
            "int32(a)*(int32)3 + x*(int32)5",
            &[("a", "i16x8"), ("x", "i32x8")],
        );
        assert!(candidate(&w).is_none());
        // A weight outside 16 bits cannot be a pmaddwd factor.
        let big = parse("int32(a)*(int32)70000 + int32(b)*(int32)2", &vars);
        assert!(candidate(&big).is_none());
    }
}
