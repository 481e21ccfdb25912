//! Selects their condition decides: `select(c, t, f)` is `t` when `f`, wherever `c` is
//! false, equals `t`, and `f` when `t`, wherever `c` is true, equals `f`. clang's
//! instruction simplifier removes such selects from the scalar baseline, and generated or
//! macro-expanded kernels write them: `select(a | b != 0, v, saturating_add(v, a))` is `v`
//! (where the condition is false, `a` is 0), which harrow computed lane by lane at a third
//! of the baseline's speed.
//!
//! Only equalities of a value to a constant are read from a condition (`x == k`, `x != k`
//! false, `!`, `&&` true, `||` false, `a | b == 0` for each operand, a widened value equal
//! to 0 for the narrow one); the branches, with each such value replaced by its constant,
//! are folded (scalar constants, then `fold`, the identity rules) and compared as
//! expressions. Replacing a value by what it equals where the condition holds changes no
//! lane the select takes from that branch, so this adds no semantics of its own.

use crate::ir::{Expr, Op};

/// `e` with every select its condition decides replaced by the branch it always takes,
/// inner selects first; `fold` folds the identities of a branch after the replacement.
pub fn fold_decided_selects(e: &Expr, fold: &dyn Fn(&Expr) -> Expr) -> Expr {
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        Ok(decided(&rebuilt, fold).unwrap_or(rebuilt))
    })
    .unwrap_or_else(|_| e.clone())
}

/// The branch `e`, a select, always takes, if its condition decides it.
fn decided(e: &Expr, fold: &dyn Fn(&Expr) -> Expr) -> Option<Expr> {
    if !matches!(e.op(), Op::Select) || !e.ty().is_scalar() {
        return None;
    }
    let (c, t, f) = (e.arg(0), e.arg(1), e.arg(2));
    // Where `c` holds the select is `t`: if `t` and `f` agree there, it is always `f`.
    for (truth, always) in [(true, f), (false, t)] {
        let mut equal = Vec::new();
        implied_equalities(c, truth, &mut equal);
        if equal.is_empty() {
            continue;
        }
        let with = |x: &Expr| fold(&crate::lift::fold_scalar_constants(&replaced(x, &equal)));
        if with(t) == with(f) {
            return Some(always.clone());
        }
    }
    None
}

/// Pushes onto `out` the values that equal a constant wherever `c` is `truth`, with the
/// constant.
fn implied_equalities(c: &Expr, truth: bool, out: &mut Vec<(Expr, Expr)>) {
    match (c.op(), truth) {
        (Op::Eq, true) | (Op::Ne, false) => {
            let (a, b) = (c.arg(0), c.arg(1));
            if b.as_const_bits().is_some() {
                equal_to_constant(a, b, out);
            } else if a.as_const_bits().is_some() {
                equal_to_constant(b, a, out);
            }
        }
        (Op::Not, _) => implied_equalities(c.arg(0), !truth, out),
        (Op::And, true) | (Op::Or, false) if c.ty().elem == crate::types::Elem::Bool => {
            for a in c.args() {
                implied_equalities(a, truth, out);
            }
        }
        _ => {}
    }
}

/// Pushes `x == k` onto `out`, with what follows from it when `k` is 0: each operand of an
/// `|` is 0, and so is the operand of a widening cast (zero or sign extension maps only 0
/// to 0).
fn equal_to_constant(x: &Expr, k: &Expr, out: &mut Vec<(Expr, Expr)>) {
    if x.as_const_bits().is_some() {
        return;
    }
    out.push((x.clone(), k.clone()));
    if k.as_const_bits() != Some(0) {
        return;
    }
    let zero = |of: &Expr| Expr::bits(of.ty().elem, 0);
    match x.op() {
        Op::Or => {
            for a in x.args() {
                equal_to_constant(a, &zero(a), out);
            }
        }
        Op::Cast if x.arg(0).ty().elem.bits() < x.ty().elem.bits() => {
            let a = x.arg(0);
            equal_to_constant(a, &zero(a), out);
        }
        _ => {}
    }
}

/// `e` with each value of `equal` replaced by its constant (the first constant a value is
/// equated with).
fn replaced(e: &Expr, equal: &[(Expr, Expr)]) -> Expr {
    let mut map = std::collections::HashMap::new();
    for (x, k) in equal {
        map.entry(x.id()).or_insert_with(|| k.clone());
    }
    crate::ir::visit::replace_nodes(e, &map).unwrap_or_else(|_| e.clone())
}
