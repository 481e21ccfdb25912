//! Sums of byte products as HVX reduction multiplies (`vrmpy`, `vdmpy`, `vmpa`, `vtmpy`):
//! HVX's selection strategy over the linear forms of `lower::linear`.
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

use crate::ir::instr::InstrTable;
use crate::ir::{Expr, Op};
use crate::lower::linear::{
    Linear, Term, agrees, call, part, read_sum, reinterpret, strided_source, weight_in,
};
use crate::lower::strategy::{Context, Proposal, Strategy};
use crate::types::{Elem, Type};

/// HVX's strategy: sums of byte products as reduction multiplies.
pub struct ReductionMultiplies;

impl Strategy for ReductionMultiplies {
    fn name(&self) -> &'static str {
        "hvx reduction multiplies"
    }

    fn propose(&self, e: &Expr, cx: &mut Context<'_>) -> Option<Proposal> {
        rebuild(e, cx.instrs).map(|x| Proposal::Instructions(x).checked())
    }

    fn reads_sums_as_written(&self) -> bool {
        // The reduction multiplies read sums of byte products as linear forms; factoring
        // hides the products they consume, and the per-node cost estimate does not see
        // that, so the sum is kept as written.
        true
    }
}

/// Bytes `b` as the signed 32-bit scalar register holding them (byte 0 lowest).
fn bytes_register(b: [i128; 4]) -> Expr {
    let u = b
        .iter()
        .enumerate()
        .fold(0u32, |acc, (i, &v)| acc | (((v & 255) as u32) << (8 * i)));
    Expr::int(Elem::I32, u as i32 as i128).expect("an i32")
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
pub fn candidate(e: &Expr, table: &InstrTable) -> Option<Expr> {
    rebuild(e, table).filter(|out| agrees(e, out))
}

/// [`candidate`] before the check by evaluation (selection checks it where its result
/// uses it: `select::Selector::select_trusting`).
pub fn rebuild(e: &Expr, table: &InstrTable) -> Option<Expr> {
    let t = e.ty();
    let bits = t.elem.bits();
    let lin = read_sum(e)?;
    let out = if lin.terms.iter().all(|(t, _)| matches!(t, Term::Tap(_))) {
        by_weights(&lin, t, table)?
    } else {
        by_products(&lin, t, table)?
    };
    if out.ty().lanes * out.ty().elem.bits() != t.lanes * bits {
        return None;
    }
    Some(reinterpret(&out, t.elem))
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
        let lin32 = Linear::of_terms(
            lin.terms
                .iter()
                .map(|(x, w)| (x.clone(), signed16(*w)))
                .collect(),
        );
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
        || !crate::lower::lanes::is_dense(a)
        || !crate::lower::lanes::is_dense(b)
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
        ["a", "b", "c", "d"]
            .into_iter()
            .map(|n| (n, "u8x128"))
            .collect()
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
