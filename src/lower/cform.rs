//! What C writes as whole vectors: the C spelling of operators and names, and for each
//! vector node whether the emitter writes it with clang's vector extensions or as a loop
//! over lanes (and why). Selection prices nodes by it and the emitter writes them by it.

use crate::ir::{Expr, Op};
use crate::types::Elem;
use crate::util::idhash::IdSet;

use super::lanes::SplatFolder;

/// The C infix operator of a binary operator that C writes infix (arithmetic, bitwise,
/// comparisons).
pub fn c_operator(op: &Op) -> Option<&'static str> {
    Some(match op {
        Op::Add => "+",
        Op::Sub => "-",
        Op::Mul => "*",
        Op::And => "&",
        Op::Or => "|",
        Op::Xor => "^",
        Op::Eq => "==",
        Op::Ne => "!=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
        _ => return None,
    })
}

/// A C identifier for a user name.
pub fn c_ident(prefix: &str, name: &str) -> String {
    let mut s = String::from(prefix);
    for ch in name.chars() {
        s.push(if ch.is_ascii_alphanumeric() { ch } else { '_' });
    }
    s
}

/// The clang builtin computing a saturating add or subtract whose operands have the
/// result's type (`add_sat`, `sub_sat`).
pub fn saturating_builtin(e: &Expr) -> Option<&'static str> {
    let f = match e.op() {
        Op::SaturatingAdd => "add_sat",
        Op::SaturatingSub => "sub_sat",
        _ => return None,
    };
    e.args().iter().all(|a| a.ty() == e.ty()).then_some(f)
}

/// The FPIR node `e`'s definition in primitive operators, with splatted constants folded
/// (what the emitter writes, and what `lane_loop_reason` inspects).
pub fn folded_definition(e: &Expr) -> Expr {
    folded_definition_with(e, &mut SplatFolder::default())
}

/// [`folded_definition`], folding with `folder` (which remembers the nodes it folded).
pub fn folded_definition_with(e: &Expr, folder: &mut SplatFolder) -> Expr {
    folder.fold(&crate::fpir::definition(e.op(), e.ty(), e.args()))
}

/// The divisor of a division or remainder by the same positive constant in every lane.
pub fn positive_divisor(e: &Expr) -> Option<i128> {
    let v = crate::interp::eval_closed(e.arg(1))?;
    let k = v.int(0);
    (k > 0 && v.to_ints().iter().all(|&x| x == k)).then_some(k)
}

/// True when the emitter writes the vector node `e` with a whole-vector C operator,
/// builtin or shuffle (no loop over lanes), not counting the fallbacks below.
fn direct_vector_form(e: &Expr) -> bool {
    let t = e.ty();
    let bool_arg = |i: usize| e.arg(i).ty().elem == Elem::Bool;
    match e.op() {
        Op::Load(..)
        | Op::Ramp
        | Op::Broadcast
        | Op::Reinterpret
        | Op::Instr(_)
        | Op::Const(_)
        | Op::Var(_)
        | Op::Slice { .. }
        | Op::Concat
        | Op::Interleave
        | Op::Shuffle(_)
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Not => true,
        Op::Add | Op::Sub | Op::Mul | Op::Min | Op::Max => t.elem != Elem::Bool,
        Op::Shl | Op::Shr => super::lanes::shift_amount(e).is_some(),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => !bool_arg(0),
        Op::Select => e.arg(0).ty().is_scalar() || t.elem != Elem::Bool,
        Op::Cast => t.elem != Elem::Bool && e.arg(0).ty().elem.bits() <= 64,
        _ => false,
    }
}

/// Why the emitter writes the vector node `e` as a loop over lanes, or `None` when it is
/// whole-vector C. The operations with no vector form in C (docs/isa.md lists them):
/// bit counts, division by a non-constant, operations on 128-bit lanes (64-bit FPIR
/// definitions), boolean arithmetic and horizontal reductions.
pub fn lane_loop_reason(e: &Expr) -> Option<&'static str> {
    lane_loop_reason_with(e, &mut SplatFolder::default())
}

/// [`lane_loop_reason`], folding definitions with `folder`.
pub fn lane_loop_reason_with(e: &Expr, folder: &mut SplatFolder) -> Option<&'static str> {
    let t = e.ty();
    if t.is_scalar() || direct_vector_form(e) {
        return None;
    }
    let wide = |x: &Expr| x.ty().elem.bits() > 64;
    match e.op() {
        Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
            Some("a horizontal reduction is a loop over each output lane's inputs")
        }
        Op::Popcount | Op::CountLeadingZeros | Op::CountTrailingZeros => {
            Some("clang has no element-wise bit-count builtin")
        }
        _ if wide(e) || e.args().iter().any(wide) => Some("128-bit lanes have no vector type"),
        _ if t.elem == Elem::Bool || e.args().iter().any(|a| a.ty().elem == Elem::Bool) => {
            Some("arithmetic on boolean lanes")
        }
        Op::Div | Op::Mod => match positive_divisor(e) {
            Some(_) => None,
            None => Some("the divisor is not the same positive constant in every lane"),
        },
        Op::Shl | Op::Shr if e.arg(1).ty().lanes == t.lanes => None,
        op if op.is_fpir() => {
            if saturating_builtin(e).is_some() {
                return None;
            }
            let shape = over_variables(e, folder);
            if let Some((_, reason)) = folder.loop_reasons.get(&shape.id()) {
                return *reason;
            }
            let reason = fpir_loop_reason(&shape, folder);
            folder.loop_reasons.insert(shape.id(), (shape, reason));
            reason
        }
        _ => Some("no vector form in C"),
    }
}

/// `e` with each operand that folding leaves alone and that is neither a constant nor a
/// splat written as a variable of its type: such an operand is a leaf of `e`'s definition
/// that nothing looks into (its value is not known, and folding stops at it), so the
/// FPIR operation's lane-loop reason is that of this shape.
fn over_variables(e: &Expr, folder: &mut SplatFolder) -> Expr {
    const NAMES: [&str; 4] = ["@operand0", "@operand1", "@operand2", "@operand3"];
    if e.args().len() > NAMES.len() {
        return e.clone();
    }
    let args = e
        .args()
        .iter()
        .zip(NAMES)
        .map(|(a, name)| {
            let opaque = !a.ty().is_scalar()
                && !matches!(a.op(), Op::Const(_) | Op::Broadcast)
                && !folder.is_constant(a)
                && folder.fold(a) == *a;
            if opaque {
                Expr::var(name, a.ty())
            } else {
                a.clone()
            }
        })
        .collect();
    e.with_args(args).unwrap_or_else(|_| e.clone())
}

/// [`lane_loop_reason`] of an FPIR operation without a saturating builtin.
fn fpir_loop_reason(e: &Expr, folder: &mut SplatFolder) -> Option<&'static str> {
    let def = folded_definition_with(e, folder);
    // The operands are leaves of the definition: how they are written is theirs.
    let leaves: IdSet<usize> = e.args().iter().map(|a| a.id()).collect();
    // Neon and AVX2 have no 64-bit lane multiply: written as vector code the product is
    // scalarized, while clang turns the lane loop into widening multiplies (smull, vpmuldq).
    if crate::ir::visit::any_node_above(&def, &leaves, |n| {
        matches!(n.op(), Op::Mul) && !n.ty().is_scalar() && n.ty().elem.bits() == 64
    }) {
        return Some("a 64-bit lane product (clang vectorizes the loop with widening multiplies)");
    }
    definition_reason(&def, &leaves, &mut IdSet::default(), folder)
}

/// The first reason any node of an FPIR definition (above its operands, `leaves`) would be
/// written lane by lane.
fn definition_reason(
    e: &Expr,
    leaves: &IdSet<usize>,
    seen: &mut IdSet<usize>,
    folder: &mut SplatFolder,
) -> Option<&'static str> {
    if leaves.contains(&e.id()) || !seen.insert(e.id()) {
        return None;
    }
    for a in e.args() {
        if let Some(r) = definition_reason(a, leaves, seen, folder) {
            return Some(r);
        }
    }
    lane_loop_reason_with(e, folder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::prepare::tests::entry;

    /// The lane-loop reason of an FPIR node is remembered by its shape over variables:
    /// for every FPIR node of these lifted expressions (over loads, over other FPIR nodes,
    /// over splats and constants, one remembered table for all of them, as in a selection),
    /// it is the reason computed from the node itself; and the table is shared (fewer
    /// shapes than nodes), or it would save nothing.
    #[test]
    fn loop_reasons_by_shape_are_the_nodes_own() {
        let exprs = [
            "rounding_shift_right(int32((int16)in_i16(x)) * (int32)7 + int32((int16)in_i16(x + 1)), (int32)3)",
            "absd((uint8)in_u8(x), (uint8)in_u8(x + 1)) + absd((uint8)in_u8(x + 2), (uint8)in_u8(x + 3))",
            "int16((uint8)in_u8(x)) * (int16)3 + int16((uint8)in_u8(x + 1)) * (int16)3 + int16((uint8)in_u8(x + 2)) * (int16)5",
            "(uint8)(((uint16)in_u8(x) + (uint16)in_u8(x + 1) + (uint16)1) >> (uint16)1)",
            "(int32)((int64)in_i32(x) * (int64)in_i32(x + 1) >> (int64)31)",
            "(int16)min(max(((int32)in_i16(x) * (int32)in_i16(x + 1) + (int32)16384) >> (int32)15, (int32)-32768), (int32)32767)",
            "rounding_mul_shift_right((int32)in_i32(x), (int32)in_i32(x + 1), (uint32)31) + (int32)widening_mul((int32)in_i32(x + 2), (int32)in_i32(x + 3))",
            "count_leading_zeros(widening_mul((uint32)in_u32(x), (uint32)in_u32(x + 1)))",
        ];
        let mut shared = SplatFolder::default();
        let (mut nodes, mut reasons) = (0, 0);
        for w in [8, 16, 32] {
            for text in exprs {
                let e = crate::lift::lift(&crate::lower::lanes::fold_splats(&entry(text, w)));
                for n in crate::ir::visit::post_order(&e) {
                    if !n.op().is_fpir() || n.ty().is_scalar() || saturating_builtin(&n).is_some() {
                        continue;
                    }
                    nodes += 1;
                    let own = fpir_loop_reason(&n, &mut SplatFolder::default());
                    let remembered = lane_loop_reason_with(&n, &mut shared);
                    assert_eq!(remembered, own, "{n}");
                    reasons += usize::from(own.is_some());
                }
            }
        }
        let shapes = shared.loop_reasons.len();
        println!("{nodes} FPIR nodes, {shapes} shapes, {reasons} lane loops");
        assert!(
            nodes > 20 && shapes < nodes,
            "{nodes} nodes, {shapes} shapes"
        );
        assert!(reasons > 0, "no FPIR node here is a lane loop");
    }
}
