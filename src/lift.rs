//! Lifting integer IR to FPIR (Pitchfork section 3.2) with the built-in rules in
//! `rules/lift.rules`, plus any rule files given at run time.

use std::sync::{Arc, LazyLock};

use crate::bounds::{Bounds, Intervals};
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::rewrite::{Engine, Greedy, TraceEvent};
use crate::rules::{RuleKind, RuleSet};

/// The text of the built-in lifting rules, embedded in the binary.
pub const BUILTIN_LIFT_RULES: &str = include_str!("../rules/lift.rules");

static BUILTIN: LazyLock<Result<RuleSet, Diag>> = LazyLock::new(|| {
    RuleSet::load(
        &Source::new("rules/lift.rules", BUILTIN_LIFT_RULES),
        RuleKind::Lift,
    )
});

/// The built-in lifting rules. An error here is a bug in the shipped rule file; tests keep
/// it from happening.
pub fn builtin_rules() -> Result<&'static RuleSet, Diag> {
    BUILTIN.as_ref().map_err(|e| e.clone())
}

/// The built-in rules plus the rules of the given files.
pub fn rules_with(extra: &[Arc<Source>]) -> Result<RuleSet, Diag> {
    let mut set = builtin_rules()?.clone();
    for src in extra {
        set.extend(RuleSet::load(src, RuleKind::Lift)?)?;
    }
    Ok(set)
}

/// Lifts `e` (after inlining its `let`s and dropping casts that change nothing) with
/// `rules`.
pub fn lift_with(
    e: &Expr,
    rules: &RuleSet,
    bounds: &mut dyn Bounds,
    trace: Option<&mut Vec<TraceEvent>>,
) -> Expr {
    let e = fold_scalar_constants(&drop_noop_casts(&crate::ir::visit::inline_lets(e)));
    Greedy::new(rules).run(&e, bounds, trace)
}

/// Evaluates scalar operations on constants (`shift_left((int64)1, (uint64)31)`, which
/// simd_op_check writes for 2^31), so that rules see the constant their wildcards match.
pub fn fold_scalar_constants(e: &Expr) -> Expr {
    use crate::ir::Op;
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args.clone())?;
        let foldable = rebuilt.ty().is_scalar()
            && !args.is_empty()
            && !matches!(node.op(), Op::Load(..) | Op::Let(_) | Op::Instr(_))
            && args.iter().all(|a| matches!(a.op(), Op::Const(_)));
        if !foldable {
            return Ok(rebuilt);
        }
        match crate::interp::eval(&rebuilt, &crate::interp::Env::new()) {
            Ok(v) => Ok(Expr::bits(rebuilt.ty().elem, v.lanes[0])),
            Err(_) => Ok(rebuilt),
        }
    })
    .unwrap_or_else(|_| e.clone())
}

/// Removes casts to the type their operand already has (a user may write `u16(x)` of a
/// `u16`; rules never match such a cast, because in a rule it would be no cast at all).
pub fn drop_noop_casts(e: &Expr) -> Expr {
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        if matches!(node.op(), crate::ir::Op::Cast) && args[0].ty() == node.ty() {
            return Ok(args[0].clone());
        }
        node.with_args(args)
    })
    .expect("rebuilding with same-typed operands")
}

/// Lifts `e` with the built-in rules and interval bounds.
pub fn lift(e: &Expr) -> Expr {
    let rules = builtin_rules().expect("the built-in lifting rules load");
    lift_with(e, rules, &mut Intervals::new(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Type;

    #[test]
    fn a_constant_written_as_a_shift_is_folded_before_lifting() {
        let decls = crate::syntax::elab::Decls::new()
            .var("a", Type::parse("i32x32", false).unwrap())
            .var("b", Type::parse("i32x32", false).unwrap());
        let e = crate::syntax::halide::parse_str(
            "saturating_cast((int64(a)*int64(b))/(int64)shift_left((int64)1, (uint64)31))",
            &decls,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let lifted = lift(&e).to_string();
        assert!(lifted.contains("mul_shift_right(a, b"), "{lifted}");
    }
}
