//! The target-independent cost model of lifting (Pitchfork section 3.2).
//!
//! Lexicographic: first the sum over operations of their input bit widths times lanes
//! (fewer and narrower operations win), then a per-operation rank that breaks ties the way
//! typical targets would. Leaves (variables, constants, broadcasts, ramps, loads) are free,
//! so rewriting one constant into another never changes the cost.
//!
//! Every lifting rule must make its right-hand side strictly cheaper than its left-hand side
//! for every type instantiation (checked when rules load), and may not duplicate a variable;
//! so every rewrite strictly lowers the tree cost of the expression, and the rewriter
//! terminates.

use std::collections::HashMap;
use std::ops::Add;

use super::pattern::{Pat, PatKind};
use crate::ir::{Expr, Op};
use crate::types::Elem;

/// A cost: compared first by `bits`, then by `rank`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cost {
    /// Sum of input bits times lanes over operations.
    pub bits: u64,
    /// Sum of operation ranks times lanes (the tie-breaker).
    pub rank: u64,
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost {
            bits: self.bits + o.bits,
            rank: self.rank + o.rank,
        }
    }
}

impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}b/{}r", self.bits, self.rank)
    }
}

/// The tie-breaking rank of an operation: roughly how many instructions a typical target
/// needs for it. The order encodes Pitchfork's observations: `rounding_halving_add` ranks
/// below `halving_add` (x86 only has the rounding one), a widening shift below a widening
/// multiply, and `widen_right_*` above `widening_*` plus an add, so that sums of widened
/// operands regroup into widening pairs.
pub fn rank(op: &Op, elem: Elem) -> u64 {
    let _ = elem;
    match op {
        Op::Const(_) | Op::Var(_) | Op::Load(..) | Op::Ramp | Op::Broadcast | Op::Let(_) => 0,
        Op::Add | Op::Sub | Op::And | Op::Or | Op::Xor | Op::Not | Op::Min | Op::Max => 2,
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => 2,
        Op::Select => 3,
        Op::Cast | Op::Reinterpret => 2,
        // A left shift ranks above a right shift so that shifts by negative constants
        // normalise to the other direction.
        Op::Shr => 2,
        Op::Shl => 3,
        Op::Mul => 4,
        Op::Div | Op::Mod => 12,
        Op::WideningAdd | Op::WideningSub => 2,
        Op::WideningShl | Op::WideningShr => 2,
        Op::WideningMul => 3,
        Op::WidenRightAdd | Op::WidenRightSub => 4,
        Op::WidenRightMul => 5,
        Op::SaturatingAdd | Op::SaturatingSub => 3,
        Op::SaturatingCast => 3,
        Op::RoundingHalvingAdd => 2,
        Op::HalvingAdd => 3,
        Op::HalvingSub => 3,
        Op::RoundingShl | Op::RoundingShr => 3,
        Op::MulShiftRight | Op::RoundingMulShiftRight => 4,
        Op::Absd | Op::Abs => 2,
        Op::Popcount | Op::CountLeadingZeros | Op::CountTrailingZeros => 4,
        Op::FNeg | Op::Sqrt | Op::Fma => 2,
        Op::Slice { .. } | Op::Concat | Op::Interleave | Op::Shuffle(_) => 2,
        Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => 4,
        Op::Instr(i) => (i.cost.throughput * 4.0).ceil() as u64 + 1,
    }
}

/// True for nodes the model treats as free leaves.
fn is_free(op: &Op) -> bool {
    matches!(
        op,
        Op::Const(_) | Op::Var(_) | Op::Load(..) | Op::Ramp | Op::Broadcast | Op::Let(_)
    )
}

/// The cost of one operation with operands of the given element types at `lanes` lanes.
pub fn op_cost(op: &Op, result: Elem, args: impl Iterator<Item = Elem>, lanes: u32) -> Cost {
    if is_free(op) {
        return Cost::default();
    }
    let args: Vec<Elem> = args.collect();
    if matches!(op, Op::Cast | Op::Reinterpret)
        && args.first().is_some_and(|a| a.bits() == result.bits())
    {
        // Changing only the signedness moves no bits: free in a register, except for a
        // token rank so that needless casts still count against a rewrite.
        return Cost {
            bits: 0,
            rank: lanes as u64,
        };
    }
    let bits: u64 = args.iter().map(|e| e.bits() as u64).sum();
    Cost {
        bits: bits * lanes as u64,
        rank: rank(op, result) * lanes as u64,
    }
}

/// The cost of a pattern's operations, per lane (variables and constants are free).
pub fn pattern_cost(p: &Pat) -> Cost {
    p.ops()
        .into_iter()
        .map(|n| match &n.kind {
            PatKind::Op(op, args) => op_cost(op, n.elem, args.iter().map(|a| a.elem), 1),
            _ => Cost::default(),
        })
        .fold(Cost::default(), |a, b| a + b)
}

/// The cost of the node `e` alone (its operands not included).
pub fn node_cost(e: &Expr) -> Cost {
    op_cost(
        e.op(),
        e.ty().elem,
        e.args().iter().map(|a| a.ty().elem),
        e.ty().lanes,
    )
}

/// The DAG cost of `e`: each distinct node once, as a value computed once and read twice
/// costs (equality saturation extracts by it).
pub fn dag_cost(e: &Expr) -> Cost {
    crate::ir::visit::post_order(e)
        .iter()
        .map(node_cost)
        .fold(Cost::default(), |a, b| a + b)
}

/// Tree costs of expressions, memoised by node (a shared sub-expression counts once per
/// use, which is what makes the termination argument work).
#[derive(Default)]
pub struct CostCache {
    memo: HashMap<usize, (Expr, Cost)>,
}

impl CostCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tree cost of `e`.
    pub fn cost(&mut self, e: &Expr) -> Cost {
        if let Some((_, c)) = self.memo.get(&e.id()) {
            return *c;
        }
        let mut total = node_cost(e);
        for a in e.args() {
            total = total + self.cost(a);
        }
        self.memo.insert(e.id(), (e.clone(), total));
        total
    }
}
