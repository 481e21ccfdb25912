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

/// Sums whose terms share a constant multiplier, factored: `a*6 + b + c*6` becomes
/// `(a + c)*6 + b` (wrapping addition and multiplication distribute exactly). A symmetric
/// 7-tap filter then needs three multiplies instead of five. Only sums with some
/// multiplier used twice change; callers compare both forms by cost (`lower::lower`).
pub fn factor_common_multipliers(e: &Expr) -> Expr {
    use crate::ir::Op;
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        if !matches!(rebuilt.op(), Op::Add) || rebuilt.ty().elem == crate::types::Elem::Bool {
            return Ok(rebuilt);
        }
        let mut terms = Vec::new();
        flatten_sum(&rebuilt, &mut terms);
        // Terms by multiplier, in order of first appearance.
        let mut groups: Vec<(Option<Expr>, Vec<Expr>)> = Vec::new();
        for t in terms {
            let (k, x) = constant_multiple(&t);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, xs)) => xs.push(x),
                None => groups.push((k, vec![x])),
            }
        }
        if !groups.iter().any(|(k, xs)| k.is_some() && xs.len() > 1) {
            return Ok(rebuilt);
        }
        let mut sum: Option<Expr> = None;
        for (k, xs) in groups {
            let inner = xs
                .into_iter()
                .reduce(|a, b| crate::ir::mk(Op::Add, vec![a, b]))
                .expect("every group has a term");
            let term = match k {
                Some(k) => crate::ir::mk(Op::Mul, vec![inner, k]),
                None => inner,
            };
            sum = Some(match sum {
                None => term,
                Some(s) => crate::ir::mk(Op::Add, vec![s, term]),
            });
        }
        Ok(sum.expect("a sum has terms"))
    })
    .unwrap_or_else(|_| e.clone())
}

/// The terms of a tree of additions.
fn flatten_sum(e: &Expr, out: &mut Vec<Expr>) {
    if matches!(e.op(), crate::ir::Op::Add) {
        flatten_sum(e.arg(0), out);
        flatten_sum(e.arg(1), out);
    } else {
        out.push(e.clone());
    }
}

/// `(k, x)` for a term `x * k` or `k * x` with a constant `k` other than 1 (splatted or
/// scalar), else `(None, term)`.
fn constant_multiple(t: &Expr) -> (Option<Expr>, Expr) {
    use crate::ir::Op;
    if matches!(t.op(), Op::Mul) {
        let konst = |x: &Expr| {
            crate::interp::eval_closed(x).is_some_and(|v| {
                let first = v.int(0);
                first != 1 && v.to_ints().iter().all(|&l| l == first)
            })
        };
        if konst(t.arg(1)) {
            return (Some(t.arg(1).clone()), t.arg(0).clone());
        }
        if konst(t.arg(0)) {
            return (Some(t.arg(0).clone()), t.arg(1).clone());
        }
    }
    (None, t.clone())
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

    #[test]
    fn sums_sharing_a_multiplier_are_factored_exactly() {
        let t = Type::parse("i32x8", false).unwrap();
        let decls = crate::syntax::elab::Decls::new()
            .var("a", t)
            .var("b", t)
            .var("c", t)
            .var("d", t);
        let e = crate::syntax::halide::parse_str("a*6 + b + 6*c + (d*15 + b*15)", &decls)
            .unwrap_or_else(|d| panic!("{d}"));
        let f = factor_common_multipliers(&e);
        assert_eq!(
            f.to_string(),
            "((((a + c) * x8(6)) + b) + ((d + b) * x8(15)))"
        );
        let mut rng = crate::util::rng::SplitMix64::new(3);
        for _ in 0..50 {
            let mut env = crate::interp::Env::new();
            for v in ["a", "b", "c", "d"] {
                let lanes = (0..8).map(|_| rng.lane(crate::types::Elem::I32)).collect();
                env.set(v, crate::interp::Value { ty: t, lanes });
            }
            assert_eq!(
                crate::interp::eval(&e, &env).unwrap(),
                crate::interp::eval(&f, &env).unwrap()
            );
        }
        // Nothing shared: unchanged.
        let g = crate::syntax::halide::parse_str("a*6 + b*7", &decls).unwrap();
        assert_eq!(factor_common_multipliers(&g), g);
    }
}
