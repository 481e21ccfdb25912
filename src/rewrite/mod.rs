//! Rewriting engines over rule sets.
//!
//! The [`Engine`] interface is deliberately small so that the equality-saturation engine
//! ([`eqsat::EqSat`]) sits beside the greedy one over the same [`RuleSet`]. [`Greedy`] is Pitchfork's: it walks the
//! DAG bottom-up, and at each node applies the applicable rule with the highest priority and,
//! among those, the cheapest result; it then normalises the result again, until no rule
//! applies anywhere. Because every rewrite strictly lowers the tree cost (checked when rules
//! load, and again here), it terminates.

pub mod eqsat;

use std::collections::HashMap;

use crate::bounds::Bounds;
use crate::ir::Expr;
use crate::rules::cost::{Cost, CostCache};
use crate::rules::{Binds, Inst, Rule, RuleSet, cexpr};

/// One rule application, for `--trace`.
#[derive(Clone, Debug)]
pub struct TraceEvent {
    /// The rule's name.
    pub rule: String,
    /// `file:line` of the rule.
    pub location: String,
    /// The instantiation that matched.
    pub instantiation: String,
    /// The expression before.
    pub before: Expr,
    /// The expression after.
    pub after: Expr,
}

/// A rewriting engine.
pub trait Engine {
    /// Rewrites `e` to a normal form.
    fn run(&self, e: &Expr, bounds: &mut dyn Bounds, trace: Option<&mut Vec<TraceEvent>>) -> Expr;
}

/// The greedy bottom-up rewriter.
pub struct Greedy<'r> {
    rules: &'r RuleSet,
}

impl<'r> Greedy<'r> {
    /// A rewriter over `rules`.
    pub fn new(rules: &'r RuleSet) -> Self {
        Greedy { rules }
    }
}

/// Evaluates a rule's predicate (true when there is none).
pub fn predicate_holds(rule: &Rule, inst: &Inst, b: &Binds, bounds: &mut dyn Bounds) -> bool {
    let Some(p) = &rule.decl.pred else {
        return true;
    };
    let wild = |id: u32| b.wild(id);
    let mut bf = |v: &str| {
        let i = rule.vars.iter().position(|n| n == v)?;
        let e = b.vars[i].as_ref()?;
        Some(bounds.range(e))
    };
    let mut env = cexpr::CEnv {
        scope: &inst.scope,
        wild: &wild,
        bounds: &mut bf,
    };
    matches!(cexpr::eval(p, &mut env), Ok(v) if v != 0)
}

/// Builds a matched rule's right-hand side at `lanes` lanes, or `None` when a computed
/// constant has no value or does not fit.
pub fn build_rhs(inst: &Inst, b: &Binds, lanes: u32) -> Option<Expr> {
    let wild = |id: u32| b.wild(id);
    let mut no_bounds = |_: &str| None;
    let mut computed = |ast: &crate::syntax::parse::Ast| {
        let mut env = cexpr::CEnv {
            scope: &inst.scope,
            wild: &wild,
            bounds: &mut no_bounds,
        };
        cexpr::eval(ast, &mut env).ok()
    };
    inst.rhs.build(lanes, b, &mut computed)
}

/// Applies one rule instantiation at the root of `e`: the right-hand side when the left-hand
/// side matches, the predicate holds and every computed constant has a value.
pub fn apply(rule: &Rule, inst: &Inst, e: &Expr, bounds: &mut dyn Bounds) -> Option<Expr> {
    if !inst.lhs.has_shape(e) {
        return None;
    }
    let mut b = Binds::new(rule.vars.len());
    if !inst.lhs.matches(e, &mut b) || !predicate_holds(rule, inst, &b, bounds) {
        return None;
    }
    build_rhs(inst, &b, e.ty().lanes)
}

/// `e` as the constant it computes, when every operand is a constant and every lane of the
/// result is the same value. Rules leave such nodes behind (`x - x` becomes 0, leaving
/// `rounding_shift_right(0, 10)`), and clang folds them in the scalar baseline; selected
/// as written they cost instructions. The interpreter defines the value, so the fold is
/// exact, and a constant is free under the cost model, so folding keeps rewriting
/// terminating.
pub fn fold_constant_node(e: &Expr) -> Option<Expr> {
    use crate::ir::Op;
    // Boolean vectors stay as written (their constants are not splats of bits); a scalar
    // boolean folds like any scalar.
    if e.args().is_empty()
        || (e.ty().elem == crate::types::Elem::Bool && !e.ty().is_scalar())
        || matches!(
            e.op(),
            Op::Const(_)
                | Op::Var(_)
                | Op::Load(..)
                | Op::Ramp
                | Op::Broadcast
                | Op::Let(_)
                | Op::Instr(_)
        )
        || !e.args().iter().all(|a| a.as_const_bits().is_some())
    {
        return None;
    }
    let value = crate::interp::eval(e, &crate::interp::Env::new()).ok()?;
    let first = *value.lanes.first()?;
    if value.lanes.iter().any(|&l| l != first) {
        return None;
    }
    Some(Expr::bits(e.ty().elem, first).broadcast(e.ty().lanes))
}

struct Run<'a, 'r> {
    rules: &'r RuleSet,
    bounds: &'a mut dyn Bounds,
    trace: Option<&'a mut Vec<TraceEvent>>,
    /// Input node id to (input kept alive, normal form).
    memo: HashMap<usize, (Expr, Expr)>,
    costs: CostCache,
}

impl Run<'_, '_> {
    fn norm(&mut self, e: &Expr) -> Expr {
        if let Some((_, r)) = self.memo.get(&e.id()) {
            return r.clone();
        }
        let args: Vec<Expr> = e.args().iter().map(|a| self.norm(a)).collect();
        let cur = e.with_args(args).expect("normal forms keep types");
        if let Some(folded) = fold_constant_node(&cur) {
            if let Some(t) = self.trace.as_deref_mut() {
                t.push(TraceEvent {
                    rule: "fold_constants".into(),
                    location: "(the reference interpreter)".into(),
                    instantiation: String::new(),
                    before: cur.clone(),
                    after: folded.clone(),
                });
            }
            self.memo.insert(e.id(), (e.clone(), folded.clone()));
            return folded;
        }
        let result = match self.best(&cur) {
            Some((next, ri, ii)) => {
                if let Some(t) = self.trace.as_deref_mut() {
                    let r = &self.rules.rules[ri];
                    t.push(TraceEvent {
                        rule: r.decl.name.clone(),
                        location: r.decl.location(),
                        instantiation: r.insts[ii].describe(),
                        before: cur.clone(),
                        after: next.clone(),
                    });
                }
                // The new nodes may enable further rewrites, including at the new root.
                self.norm(&next)
            }
            None => cur,
        };
        self.memo.insert(e.id(), (e.clone(), result.clone()));
        self.memo
            .insert(result.id(), (result.clone(), result.clone()));
        result
    }

    /// The best applicable rewrite of the root of `e`: highest priority, then cheapest
    /// result, then first in file order; only rewrites that lower the cost count.
    fn best(&mut self, e: &Expr) -> Option<(Expr, usize, usize)> {
        let current = self.costs.cost(e);
        let mut best: Option<(i32, Cost, Expr, usize, usize)> = None;
        for &(ri, ii) in self.rules.candidates(e) {
            let rule = &self.rules.rules[ri];
            let Some(out) = apply(rule, &rule.insts[ii], e, self.bounds) else {
                continue;
            };
            let c = self.costs.cost(&out);
            if c >= current {
                continue;
            }
            let better = match &best {
                None => true,
                Some((p, bc, ..)) => {
                    rule.decl.priority > *p || (rule.decl.priority == *p && c < *bc)
                }
            };
            if better {
                best = Some((rule.decl.priority, c, out, ri, ii));
            }
        }
        best.map(|(_, _, e, ri, ii)| (e, ri, ii))
    }
}

impl Engine for Greedy<'_> {
    fn run(&self, e: &Expr, bounds: &mut dyn Bounds, trace: Option<&mut Vec<TraceEvent>>) -> Expr {
        let mut run = Run {
            rules: self.rules,
            bounds,
            trace,
            memo: HashMap::new(),
            costs: CostCache::new(),
        };
        run.norm(e)
    }
}
