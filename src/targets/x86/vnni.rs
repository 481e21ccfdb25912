//! Sums of byte products as x86 multiply-adds over adjacent lanes: `vpdpbusd` (AVX-512
//! VNNI: four products of unsigned and signed bytes added to each 32-bit lane) and
//! `vpmaddubsw` (two such products into a 16-bit lane, saturated): x86's selection
//! strategy over the linear forms of `lower::linear`, the counterpart of Arm's dot
//! products and HVX's reduction multiplies. (Pairs of 16-bit products, `vpmaddwd` and
//! `vpdpwssd`, are the generic pairwise strategy's.)
//!
//! The taps are interleaved (lane `4i + k` of the operand is lane `i` of tap `k`) and the
//! weights are one constant register repeating them. `vpmaddubsw` saturates, so it is
//! offered only where the weights keep every pair's sum within 16 bits. Every candidate is
//! checked against the original by evaluation before selection sees it.

use crate::ir::instr::InstrTable;
use crate::ir::{Expr, Op};
use crate::lower::linear::{
    Term, agrees, call, dot_groups, part, read_sum, reinterpret, weight_in,
};
use crate::lower::strategy::{Context, Proposal, Strategy};
use crate::types::{Elem, Type};

/// x86's strategy: sums of byte products as multiply-adds over adjacent lanes.
pub struct ByteMultiplyAdds;

impl Strategy for ByteMultiplyAdds {
    fn name(&self) -> &'static str {
        "x86 byte multiply-adds"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        rebuild(e, cx.instrs).map(|x| Proposal::Instructions(x).checked())
    }
}

/// The widest register prefix (`_mm512`, `_mm256`, `_mm`) whose `name` the table has and
/// whose result lanes (`lanes` of 32 or 16 bits per 128 bits) divide `total`.
fn widest(table: &InstrTable, name: &str, per_128: u32, total: u32) -> Option<(&'static str, u32)> {
    [("_mm512", 4), ("_mm256", 2), ("_mm", 1)]
        .into_iter()
        .map(|(p, k)| (p, per_128 * k))
        .find(|(p, lanes)| {
            total.is_multiple_of(*lanes) && table.contains_key(&format!("{p}_{name}"))
        })
}

/// `e` as byte multiply-adds, when it is a sum they compute.
pub fn candidate(e: &Expr, table: &InstrTable) -> Option<Expr> {
    rebuild(e, table).filter(|out| agrees(e, out))
}

/// [`candidate`] before the check by evaluation (selection checks it where its result
/// uses it: `select::Selector::select_trusting`).
pub fn rebuild(e: &Expr, table: &InstrTable) -> Option<Expr> {
    let t = e.ty();
    let lin = read_sum(e)?;
    match t.elem {
        // Four byte products per lane: worth the interleaving from four products up.
        Elem::I32 | Elem::U32 if lin.terms.len() >= 4 => {
            let groups = dot_groups(&lin, 4, Elem::U8, Elem::I8)?;
            let (prefix, per) = widest(table, "dpbusd_epi32", 4, t.lanes)?;
            let name = format!("{prefix}_dpbusd_epi32");
            let mut parts: Vec<Expr> = (0..t.lanes / per)
                .map(|r| match &groups.acc {
                    Some(acc) => Some(reinterpret(&part(acc, r * per, per), Elem::I32)),
                    None => Expr::splat(Type::vec(Elem::I32, per), 0).ok(),
                })
                .collect::<Option<_>>()?;
            for (a, b) in &groups.groups {
                for (r, acc) in parts.iter_mut().enumerate() {
                    let at = r as u32 * per * 4;
                    *acc = call(
                        table,
                        &name,
                        vec![acc.clone(), part(a, at, per * 4), part(b, at, per * 4)],
                    )?;
                }
            }
            finish(e, parts)
        }
        // Two byte products per lane, saturated: only weights that keep every sum exact.
        Elem::I16 | Elem::U16 => {
            // The largest magnitude of a tap's product: 255 times its weight as a byte.
            let bound = |(x, w): &(Term, i128)| match x {
                Term::Tap(_) => weight_in(*w, 16, Elem::I8).map(|v| 255 * v.abs()),
                Term::Prod(..) => None,
            };
            let exact = lin.terms.len() >= 2
                && lin.terms.chunks(2).all(|pair| {
                    pair.iter()
                        .map(bound)
                        .sum::<Option<i128>>()
                        .is_some_and(|b| b <= 32767)
                });
            if !exact {
                return None;
            }
            let groups = dot_groups(&lin, 2, Elem::U8, Elem::I8)?;
            let (prefix, per) = widest(table, "maddubs_epi16", 8, t.lanes)?;
            let name = format!("{prefix}_maddubs_epi16");
            let mut sums: Vec<Expr> = Vec::new();
            for r in 0..t.lanes / per {
                let at = r * per * 2;
                let mut sum: Option<Expr> = groups
                    .acc
                    .as_ref()
                    .map(|acc| reinterpret(&part(acc, r * per, per), Elem::I16));
                for (a, b) in &groups.groups {
                    let p = call(
                        table,
                        &name,
                        vec![part(a, at, per * 2), part(b, at, per * 2)],
                    )?;
                    sum = Some(match sum {
                        None => p,
                        Some(s) => Expr::build(Op::Add, None, vec![s, p]).ok()?,
                    });
                }
                sums.push(sum?);
            }
            finish(e, sums)
        }
        _ => None,
    }
}

/// The registers joined and read as `e`'s type, kept when they give `e`'s lanes.
fn finish(e: &Expr, mut parts: Vec<Expr>) -> Option<Expr> {
    let out = if parts.len() == 1 {
        parts.pop()?
    } else {
        Expr::build(Op::Concat, None, parts).ok()?
    };
    Some(reinterpret(&out, e.ty().elem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(src: &str, ty: &str) -> Expr {
        let inputs: Vec<(&str, &str)> = ["a", "b", "c", "d"].map(|n| (n, ty)).to_vec();
        crate::lift::lift(&crate::syntax::halide::parse_with_vars(src, &inputs))
    }

    #[test]
    fn vnni_on_avx512_and_exact_maddubs_on_avx2() {
        let avx512 = crate::targets::backend("x86-avx512").unwrap();
        let avx2 = crate::targets::backend("x86-avx2").unwrap();
        let e = lifted(
            "int32(a)*-3 + int32(b)*5 + int32(c)*-7 + int32(d)*9",
            "u8x64",
        );
        let text = candidate(&e, &avx512.instrs).expect("vpdpbusd").to_string();
        assert!(text.contains("_mm512_dpbusd_epi32"), "{text}");
        assert!(candidate(&e, &avx2.instrs).is_none(), "AVX2 has no VNNI");
        // Small weights never saturate vpmaddubsw; large ones may, and are left alone.
        let e = lifted("int16(a)*3 + int16(b)*-5", "u8x32");
        let text = candidate(&e, &avx2.instrs).expect("vpmaddubsw").to_string();
        assert!(text.contains("_mm256_maddubs_epi16"), "{text}");
        let e = lifted("int16(a)*100 + int16(b)*-100", "u8x32");
        assert!(candidate(&e, &avx2.instrs).is_none());
    }
}
