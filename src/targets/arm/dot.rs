//! Sums of byte products as Arm dot products (`udot`, `sdot`): Arm's selection strategy
//! over the linear forms of `lower::linear`, the counterpart of HVX's reduction
//! multiplies.
//!
//! `udot` adds to each 32-bit lane the four products of the bytes of that lane in its two
//! operands. A kernel writes `w0*a[x] + w1*b[x] + w2*c[x] + w3*d[x]` over separate byte
//! vectors (taps), so the taps are interleaved first (lane `4i + k` of the operand is lane
//! `i` of tap `k`, the `zip`s clang makes of the shuffle) and the weights are one constant
//! register repeating them; sums of more taps take several dot products into one
//! accumulator, and products of two byte vectors interleave both sides. Unsigned bytes
//! with weights in 0..=255 take `udot`, signed bytes with weights in -128..=127 `sdot`;
//! each lane's sum is exact, so a signed result reads the unsigned one's bits. Every
//! candidate is checked against the original by evaluation before selection sees it.

use crate::ir::instr::InstrTable;
use crate::ir::{Expr, Op};
use crate::lower::linear::{agrees, call, dot_groups, part, read_sum, reinterpret};
use crate::lower::strategy::{Context, Proposal, Strategy};
use crate::types::{Elem, Type};

/// Arm's strategy: sums of byte products as dot products.
pub struct DotProducts;

impl Strategy for DotProducts {
    fn name(&self) -> &'static str {
        "arm dot products"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        rebuild(e, cx.instrs).map(|x| Proposal::Instructions(x).checked())
    }
}

/// `e` as dot products, when it is a 32-bit sum of byte products they compute.
pub fn candidate(e: &Expr, table: &InstrTable) -> Option<Expr> {
    rebuild(e, table).filter(|out| agrees(e, out))
}

/// [`candidate`] before the check by evaluation (selection checks it where its result
/// uses it: `select::Selector::select_trusting`).
pub fn rebuild(e: &Expr, table: &InstrTable) -> Option<Expr> {
    let t = e.ty();
    if !matches!(t.elem, Elem::U32 | Elem::I32) || !t.lanes.is_multiple_of(2) {
        return None;
    }
    let lin = read_sum(e)?;
    // Fewer than four products are a widening multiply and multiply-accumulates:
    // interleaving them with zeros for a dot product costs more than it saves (measured
    // on generated kernels: three taps ran 0.7 times as fast as the widening form).
    if lin.terms.len() < 4 {
        return None;
    }
    let (groups, signed) = match dot_groups(&lin, 4, Elem::U8, Elem::U8) {
        Some(g) => (g, false),
        None => (dot_groups(&lin, 4, Elem::I8, Elem::I8)?, true),
    };
    // A q register holds four sums; a d register two.
    let per = if t.lanes.is_multiple_of(4) { 4 } else { 2 };
    let intrinsic = match (signed, per) {
        (false, 4) => "vdotq_u32",
        (false, _) => "vdot_u32",
        (true, 4) => "vdotq_s32",
        (true, _) => "vdot_s32",
    };
    let acc_elem = if signed { Elem::I32 } else { Elem::U32 };
    let regs = t.lanes / per;
    let mut parts: Vec<Expr> = (0..regs)
        .map(|r| match &groups.acc {
            Some(acc) => Some(reinterpret(&part(acc, r * per, per), acc_elem)),
            None => Expr::splat(Type::vec(acc_elem, per), 0).ok(),
        })
        .collect::<Option<_>>()?;
    for (a, b) in &groups.groups {
        for (r, acc) in parts.iter_mut().enumerate() {
            let bytes = per * 4;
            let at = r as u32 * bytes;
            *acc = call(
                table,
                intrinsic,
                vec![acc.clone(), part(a, at, bytes), part(b, at, bytes)],
            )?;
        }
    }
    let out = if parts.len() == 1 {
        parts.pop()?
    } else {
        Expr::build(Op::Concat, None, parts).ok()?
    };
    Some(reinterpret(&out, t.elem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(src: &str, ty: &str) -> Expr {
        let inputs: Vec<(&str, &str)> = ["a", "b", "c", "d", "e"].map(|n| (n, ty)).to_vec();
        crate::lift::lift(&crate::syntax::halide::parse_with_vars(src, &inputs))
    }

    #[test]
    fn four_weighted_byte_taps_are_one_udot_per_register() {
        let arm = crate::targets::backend("arm-neon").unwrap();
        let e = lifted(
            "uint32(a)*200 + uint32(b)*201 + uint32(c)*202 + uint32(d)*203",
            "u8x16",
        );
        let got = candidate(&e, &arm.instrs).expect("a udot candidate");
        let text = got.to_string();
        assert_eq!(text.matches("vdotq_u32").count(), 4, "{text}");
        // Five taps take two dot products per register into one accumulator.
        let e = lifted(
            "uint32(a)*2 + uint32(b)*3 + uint32(c)*4 + uint32(d)*5 + uint32(e)*6",
            "u8x16",
        );
        let text = candidate(&e, &arm.instrs)
            .expect("a udot candidate")
            .to_string();
        assert_eq!(text.matches("vdotq_u32").count(), 8, "{text}");
        // Signed taps with negative weights take sdot; unsigned ones cannot.
        let e = lifted("int32(a)*-2 + int32(b)*3 + int32(c)*4 + int32(d)*5", "i8x8");
        let text = candidate(&e, &arm.instrs)
            .expect("an sdot candidate")
            .to_string();
        assert!(text.contains("vdotq_s32"), "{text}");
        let e = lifted("int32(a)*-2 + int32(b)*3 + int32(c)*4 + int32(d)*5", "u8x8");
        assert!(candidate(&e, &arm.instrs).is_none());
        // Three taps are left to the widening multiplies; other targets have no such
        // instruction.
        let e = lifted("uint32(a)*2 + uint32(b)*3 + uint32(c)*4", "u8x16");
        assert!(candidate(&e, &arm.instrs).is_none());
        let x86 = crate::targets::backend("x86-avx2").unwrap();
        let e = lifted("uint32(a)*2 + uint32(b)*3 + uint32(c)*4", "u8x16");
        assert!(candidate(&e, &x86.instrs).is_none());
    }
}
