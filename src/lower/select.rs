//! Instruction selection: a memoized dynamic program over the chunk expression.
//!
//! For each node the candidates are: every lowering rule whose left-hand side matches the
//! node (derived rules `semantics => instruction` and the hand-written `rules/<target>.rules`),
//! with its predicate checked against interval bounds; for FPIR operations, their definition
//! in primitive operators; and always the generic fallback, which the C emitter can write
//! for any node. A candidate's cost is its instructions' costs plus the best costs of the
//! sub-expressions it leaves to select; the cheapest wins. A rule's right-hand side may
//! contain ordinary operators (`or` of two `subs_epu8`), which are selected in turn.
//!
//! Shared sub-expressions are counted once per use, which slightly over-prices DAGs but
//! never changes what is computed.

use std::collections::{HashMap, HashSet};

use crate::bounds::{Bounds, Intervals};
use crate::ir::{Expr, Op};
use crate::rules::RuleSet;

/// What selection produced for one node.
#[derive(Clone, Debug)]
pub struct Selected {
    /// Estimated cost in cycles of reciprocal throughput.
    pub cost: f64,
    /// The node with instructions chosen below it (instructions, generic nodes, leaves).
    pub expr: Expr,
}

/// Cost of one instruction: throughput with a small latency weight.
pub fn instr_cost(i: &crate::isa::Instr) -> f64 {
    i.cost.throughput.max(0.25) as f64 + 0.1 * i.cost.latency as f64
}

/// Cost of writing a node with generic C (clang chooses the instructions). Deliberately
/// above a described instruction's, so that described instructions win when they apply.
pub fn generic_cost(e: &Expr, register_bits: u32) -> f64 {
    let t = e.ty();
    if t.is_scalar() {
        return 0.0;
    }
    let regs = (t.total_bits() as f64 / register_bits as f64)
        .ceil()
        .max(1.0);
    let lanes = t.lanes as f64;
    match e.op() {
        Op::Instr(i) => instr_cost(i),
        Op::Const(_) | Op::Var(_) | Op::Reinterpret => 0.0,
        // A cast that keeps the width only changes how lanes are read.
        Op::Cast if e.arg(0).ty().elem.bits() == t.elem.bits() => 0.0,
        Op::Load(..) => {
            if is_dense(e) {
                0.5 * regs
            } else {
                lanes
            }
        }
        // A ramp is a load index: the load pays for it (dense loads need none).
        Op::Ramp => 0.0,
        Op::Broadcast => 0.5 * regs,
        Op::Add
        | Op::Sub
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Not
        | Op::Min
        | Op::Max
        | Op::Eq
        | Op::Ne
        | Op::Lt
        | Op::Le
        | Op::Gt
        | Op::Ge
        | Op::Select
        | Op::Cast => 1.5 * regs,
        Op::Mul if t.elem.bits() <= 32 => 2.0 * regs,
        Op::Shl | Op::Shr if shift_amount(e).is_some() => 1.5 * regs,
        Op::Slice { .. } | Op::Concat | Op::Interleave | Op::Shuffle(_) => 1.5 * regs,
        // Everything else is written lane by lane.
        _ => 2.0 * regs + lanes / 2.0,
    }
}

/// The amount of a shift by the same in-range constant in every lane (C can write it as
/// a vector shift).
pub fn shift_amount(e: &Expr) -> Option<u32> {
    let b = e.arg(1);
    if crate::ir::visit::any_node(b, |n| matches!(n.op(), Op::Var(_) | Op::Load(..))) {
        return None;
    }
    let v = crate::interp::eval(b, &crate::interp::Env::new()).ok()?;
    let first = v.int(0);
    if !v.to_ints().iter().all(|&x| x == first) {
        return None;
    }
    (0..e.ty().elem.bits() as i128)
        .contains(&first)
        .then_some(first as u32)
}

/// The cost of a selected DAG: each distinct node once (a value used twice is computed
/// once), constant sub-expressions free (clang folds them).
pub fn dag_cost(e: &Expr, register_bits: u32) -> f64 {
    let mut constant: HashMap<usize, bool> = HashMap::new();
    let mut total = 0.0;
    for n in crate::ir::visit::post_order(e) {
        let c = match n.op() {
            Op::Var(_) | Op::Load(..) => false,
            _ => n.args().iter().all(|a| constant[&a.id()]),
        };
        constant.insert(n.id(), c);
        if !c {
            total += generic_cost(&n, register_bits);
        }
    }
    total
}

/// True for a load whose index is `ramp(b, 1, n)`.
pub fn is_dense(load: &Expr) -> bool {
    let idx = load.arg(0);
    matches!(idx.op(), Op::Ramp) && idx.arg(1).as_const() == Some(1)
}

/// The selector: rules, bounds and memo tables for one compilation.
pub struct Selector<'r> {
    rules: &'r RuleSet,
    register_bits: u32,
    bounds: Intervals,
    memo: HashMap<usize, (Expr, Selected)>,
    active: HashSet<usize>,
}

impl<'r> Selector<'r> {
    /// A selector over `rules` for registers of `register_bits`, with `bounds` for predicates.
    pub fn new(rules: &'r RuleSet, register_bits: u32, bounds: Intervals) -> Self {
        Selector {
            rules,
            register_bits,
            bounds,
            memo: HashMap::new(),
            active: HashSet::new(),
        }
    }

    /// The cheapest implementation of `e`.
    pub fn select(&mut self, e: &Expr) -> Selected {
        if let Some((_, s)) = self.memo.get(&e.id()) {
            return s.clone();
        }
        let s = self.compute(e);
        self.memo.insert(e.id(), (e.clone(), s.clone()));
        s
    }

    fn compute(&mut self, e: &Expr) -> Selected {
        // Scalars (index arithmetic, parameters) and leaves stay as they are.
        if e.ty().is_scalar() || e.args().is_empty() || matches!(e.op(), Op::Load(..)) {
            return Selected {
                cost: generic_cost(e, self.register_bits),
                expr: e.clone(),
            };
        }
        let args: Vec<Selected> = e.args().iter().map(|a| self.select(a)).collect();
        let expr = e
            .with_args(args.iter().map(|a| a.expr.clone()).collect())
            .expect("selection keeps types");
        let mut best = Selected {
            cost: dag_cost(&expr, self.register_bits),
            expr,
        };
        if !self.active.insert(e.id()) {
            return best;
        }
        for &(ri, ii) in self.rules.candidates(e) {
            let rule = &self.rules.rules[ri];
            let Some(rhs) = crate::rewrite::apply(rule, &rule.insts[ii], e, &mut self.bounds)
            else {
                continue;
            };
            if rhs == *e {
                continue;
            }
            let cand = self.select_rhs(&rhs);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        if e.op().is_fpir() {
            let def =
                super::prepare::fold_splats(&crate::fpir::definition(e.op(), e.ty(), e.args()));
            let cand = self.select(&def);
            if cand.cost < best.cost {
                best = cand;
            }
        }
        self.active.remove(&e.id());
        best
    }

    /// Selects a rule's right-hand side: its instructions stay, everything else is selected.
    fn select_rhs(&mut self, e: &Expr) -> Selected {
        let expr = self.select_rhs_expr(e);
        Selected {
            cost: dag_cost(&expr, self.register_bits),
            expr,
        }
    }

    fn select_rhs_expr(&mut self, e: &Expr) -> Expr {
        match e.op() {
            Op::Instr(_) => {
                let args: Vec<Expr> = e.args().iter().map(|a| self.select_rhs_expr(a)).collect();
                e.with_args(args).expect("selection keeps types")
            }
            _ => self.select(e).expr,
        }
    }

    /// Bounds used by predicates (exposed for reports).
    pub fn bounds(&mut self) -> &mut dyn Bounds {
        &mut self.bounds
    }
}
