//! Sums of weighted narrow taps as chains of widening multiply-accumulates: a generic
//! selection strategy over the linear forms of `super::linear`.
//!
//! A kernel's sum `acc + w0*t0 + w1*t1 + ...` of byte or half-word taps by constant or
//! uniform weights (a splatted parameter or a weight read from memory) is rebuilt as
//! `((acc + widening_mul(t0, w0)) + widening_mul(t1, w1)) + ...` at the sum's width, the
//! weights splatted scalars: the shape of the multiply-accumulate instructions that take
//! the weight in a scalar register (RISC-V `vwmacc.vx`, `vwmaccsu.vx`; Arm `umlal` by a
//! splat), so that the weights need no vector registers and each tap costs one
//! instruction. A sum four times as wide as its taps widens each tap once first (RISC-V
//! `vzext`), as clang's own vectorizer does. The chain is plain IR: the target's rules
//! choose the instructions, and the candidate is kept only when cheaper.

use super::linear::{Linear, Term, agrees, read_sum};
use super::strategy::{Context, Proposal, Strategy};
use crate::ir::{Expr, Op};
use crate::types::Type;

/// Sums of weighted taps as multiply-accumulate chains.
pub struct MultiplyAccumulateChain;

impl Strategy for MultiplyAccumulateChain {
    fn name(&self) -> &'static str {
        "multiply-accumulate chains"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        // A sum inside a larger one is read as part of the whole (reading each part again
        // would be quadratic in the number of taps).
        if cx.is_inner_sum(e) {
            return None;
        }
        rebuild(e).map(|x| Proposal::Select(x).checked())
    }
}

/// A scalar splatted to every lane (a uniform weight), if `e` is one.
fn uniform(e: &Expr) -> Option<Expr> {
    (matches!(e.op(), Op::Broadcast) && e.arg(0).ty().is_scalar()).then(|| e.arg(0).clone())
}

/// `e` as a multiply-accumulate chain, when it is a sum of at least two taps by constant
/// or uniform weights, twice or four times as wide as the taps.
pub fn candidate(e: &Expr) -> Option<Expr> {
    rebuild(e).filter(|chain| agrees(e, chain))
}

/// [`candidate`] before the check by evaluation (selection checks it where its result
/// uses it: `select::Selector::select_trusting`).
pub fn rebuild(e: &Expr) -> Option<Expr> {
    let t = e.ty();
    let lin = read_sum(e)?;
    if lin.terms.len() < 2 {
        return None;
    }
    build(&lin, t)
}

/// The chain over the terms of `lin`, of type `t`.
fn build(lin: &Linear, t: Type) -> Option<Expr> {
    let signed = t.elem.is_signed();
    let mut acc = lin.acc.clone();
    for (term, w) in &lin.terms {
        let (tap, weight) = match term {
            Term::Tap(x) => (x.clone(), Weight::Constant(*w)),
            Term::Prod(a, b) if w.rem_euclid(1 << t.elem.bits()) == 1 => {
                if let Some(s) = uniform(b) {
                    (a.clone(), Weight::Scalar(s))
                } else if let Some(s) = uniform(a) {
                    (b.clone(), Weight::Scalar(s))
                } else {
                    return None;
                }
            }
            _ => return None,
        };
        let narrow = tap.ty().elem;
        // The multiply's operands: the tap, widened once when the sum is four times as
        // wide, and the weight as a scalar of the same width and the sum's signedness.
        let tap = match t.elem.bits() / narrow.bits() {
            2 => tap,
            4 => tap.cast(narrow.widen()?),
            _ => return None,
        };
        let op_elem = tap.ty().elem;
        // The weight takes the sum's signedness: a signed weight on unsigned taps gives
        // the signed product a signed sum adds.
        let weight_elem = op_elem.with_signed(signed);
        let s = match weight {
            Weight::Constant(w) => {
                let v = super::linear::weight_in(w, t.elem.bits(), weight_elem)?;
                Expr::int(weight_elem, v).ok()?
            }
            Weight::Scalar(s) => {
                // A uniform factor must be exact at the operand width.
                let se = s.ty().elem;
                if se.bits() > op_elem.bits() {
                    return None;
                }
                if se.bits() < op_elem.bits() {
                    s.cast(op_elem.with_signed(se.is_signed()))
                } else {
                    s
                }
            }
        };
        let product = Expr::build(
            Op::WideningMul,
            None,
            vec![tap.clone(), s.broadcast(tap.ty().lanes)],
        )
        .ok()?;
        // The product must have the sum's type (a signed weight on unsigned taps gives a
        // signed product, which an unsigned sum cannot take without a conversion).
        if product.ty() != t {
            return None;
        }
        acc = Some(match acc {
            None => product,
            Some(a) => Expr::build(Op::Add, None, vec![a, product]).ok()?,
        });
    }
    acc
}

/// A term's weight: a constant, or a uniform scalar.
enum Weight {
    Constant(i128),
    Scalar(Expr),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(src: &str, inputs: &[(&str, &str)]) -> Expr {
        crate::lift::lift(&crate::syntax::halide::parse_with_vars(src, inputs))
    }

    #[test]
    fn weighted_taps_become_chains_of_widening_products_by_splats() {
        let ins = [("a", "u8x16"), ("b", "u8x16"), ("c", "u8x16"), ("w", "i8")];
        let e = lifted("int16(a)*3 + int16(b)*-2 + int16(c)", &ins);
        let got = candidate(&e).expect("a chain");
        assert_eq!(got.ty(), e.ty());
        let text = got.to_string();
        assert_eq!(text.matches("widening_mul").count(), 3, "{text}");
        // Four times as wide: each tap widened once; a weight read at run time splatted.
        let e = lifted(
            "int32(widening_mul(a, x16(w))) + int32(widening_mul(b, x16(w))) + int32(c)*5",
            &ins,
        );
        let got = candidate(&e).expect("a chain");
        let text = got.to_string();
        assert!(
            text.contains("widening_mul(uint16x16(a), x16(int16(w)))"),
            "{text}"
        );
        assert_eq!(got.ty(), e.ty());
    }
}
