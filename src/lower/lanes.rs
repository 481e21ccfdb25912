//! Lane structure: which nodes compute lane by lane, rebuilding them at other widths,
//! index arithmetic, dense loads and splatted constants. The bottom of `lower`: every
//! pass reads these and they read no pass.

use crate::ir::{Expr, Op, mk};
use crate::types::Elem;

/// True for nodes that compute each lane from the same lane of their vector operands.
pub fn lane_wise(e: &Expr) -> bool {
    let l = e.ty().lanes;
    !matches!(
        e.op(),
        Op::Load(..)
            | Op::Ramp
            | Op::Broadcast
            | Op::Const(_)
            | Op::Var(_)
            | Op::Slice { .. }
            | Op::Concat
            | Op::Interleave
            | Op::Shuffle(_)
            | Op::ReduceAdd
            | Op::ReduceMin
            | Op::ReduceMax
            | Op::Reinterpret
            | Op::Instr(_)
            | Op::Let(_)
    ) && e
        .args()
        .iter()
        .all(|a| a.ty().is_scalar() || a.ty().lanes == l)
}

/// The lane-wise node `e` rebuilt at `lanes` lanes over `part` of each vector operand
/// (scalar operands kept); `None` when the rebuilt node does not type-check.
pub fn rebuild_lanes(e: &Expr, lanes: u32, mut part: impl FnMut(&Expr) -> Expr) -> Option<Expr> {
    let args: Vec<Expr> = e
        .args()
        .iter()
        .map(|a| {
            if a.ty().is_scalar() {
                a.clone()
            } else {
                part(a)
            }
        })
        .collect();
    let ty = crate::ir::explicit_type(e).map(|_| e.ty().with_lanes(lanes));
    Expr::build(e.op().clone(), ty, args).ok()
}

/// True for a load whose index is `ramp(b, 1, n)`.
pub fn is_dense(load: &Expr) -> bool {
    let idx = load.arg(0);
    matches!(idx.op(), Op::Ramp) && idx.arg(1).as_const() == Some(1)
}

/// The amount of a shift by the same in-range constant in every lane (C can write it as
/// a vector shift).
pub fn shift_amount(e: &Expr) -> Option<u32> {
    let v = crate::interp::eval_closed(e.arg(1))?;
    let first = v.int(0);
    if !v.to_ints().iter().all(|&x| x == first) {
        return None;
    }
    (0..e.ty().elem.bits() as i128)
        .contains(&first)
        .then_some(first as u32)
}

/// An `i32` index constant.
pub fn i32c(v: i64) -> Expr {
    Expr::int(Elem::I32, v as i128).expect("index constants fit in i32")
}

pub fn add_i32(a: &Expr, b: &Expr) -> Expr {
    match (a.as_const(), b.as_const()) {
        (Some(0), _) => b.clone(),
        (_, Some(0)) => a.clone(),
        (Some(x), Some(y)) => i32c((x + y) as i64),
        _ => mk(Op::Add, vec![a.clone(), b.clone()]),
    }
}

pub fn mul_i32(a: &Expr, k: i64) -> Expr {
    match (a.as_const(), k) {
        (_, 0) => i32c(0),
        (_, 1) => a.clone(),
        (Some(x), _) => i32c(x as i64 * k),
        _ => mk(Op::Mul, vec![a.clone(), i32c(k)]),
    }
}

/// Prepares `e` (already lifted) for a target with `register_bits`-wide registers.
/// Replaces constant sub-expressions whose lanes are all equal by `broadcast(constant)`,
/// so that rules see immediates (`u16(x1(1))` is the shift amount `x16(1)`).
pub fn fold_splats(e: &Expr) -> Expr {
    SplatFolder::default().fold(e)
}

/// [`fold_splats`] of many expressions that share nodes, each node folded once: selection
/// folds the definition of every FPIR node it meets, over operands as deep as the kernel.
#[derive(Default)]
pub struct SplatFolder {
    /// Each node folded so far: the node (kept alive, as its id is its address), its
    /// folded form, and whether it is a constant.
    folded: crate::util::idhash::IdMap<usize, (Expr, Expr, bool)>,
    /// Why an FPIR operation is a lane loop (`cform::lane_loop_reason`), by the operation
    /// written over variables in place of its opaque operands (constants and splats stay):
    /// the answer does not depend on what those compute, and a kernel has many nodes of
    /// one shape (a tap's product per tap).
    pub(super) loop_reasons: crate::util::idhash::IdMap<usize, (Expr, Option<&'static str>)>,
}

impl SplatFolder {
    /// `e` with its splatted constants folded.
    pub fn fold(&mut self, e: &Expr) -> Expr {
        for n in crate::ir::visit::post_order_unknown(e, |n| self.folded.contains_key(&n.id())) {
            let entry = self.fold_node(&n);
            self.folded.insert(n.id(), entry);
        }
        self.folded[&e.id()].1.clone()
    }

    /// Whether `e` is a constant sub-expression (folded, if it was not yet).
    pub fn is_constant(&mut self, e: &Expr) -> bool {
        self.fold(e);
        self.folded[&e.id()].2
    }

    /// The entry of `n`, whose operands are folded.
    fn fold_node(&self, n: &Expr) -> (Expr, Expr, bool) {
        let c = n.is_constant_over(|a| self.folded[&a.id()].2);
        let args: Vec<Expr> = n
            .args()
            .iter()
            .map(|a| self.folded[&a.id()].1.clone())
            .collect();
        (n.clone(), Self::folded_node(n, args, c), c)
    }

    /// `n` over its folded operands `args`, folded itself; `constant` says whether it is.
    fn folded_node(n: &Expr, args: Vec<Expr>, constant: bool) -> Expr {
        // A kernel's weight (read from memory, or a parameter) widened to half words,
        // splatted: convert the scalar and splat it (one `vsplat`) rather than converting
        // the splat, whose narrow lanes may be converted one by one. Wider conversions
        // stay, as products such as `vmpy(Vuh, Ruh)` match them.
        if matches!(n.op(), Op::Cast)
            && !n.ty().is_scalar()
            && n.ty().elem.bits() <= 16
            && matches!(args[0].op(), Op::Broadcast)
            && matches!(args[0].arg(0).op(), Op::Load(..) | Op::Var(_))
            && args[0].arg(0).ty().is_scalar()
        {
            return args[0].arg(0).cast(n.ty().elem).broadcast(n.ty().lanes);
        }
        let rebuilt = n.with_args(args).expect("folding keeps types");
        if !constant || n.args().is_empty() || n.ty().elem == Elem::Bool {
            return rebuilt;
        }
        let Ok(v) = crate::interp::eval(n, &crate::interp::Env::new()) else {
            return rebuilt;
        };
        if v.lanes.iter().all(|&b| b == v.lanes[0]) && !n.ty().elem.is_internal() {
            let k = Expr::bits(n.ty().elem, v.lanes[0]);
            return if n.ty().is_scalar() {
                k
            } else {
                k.broadcast(n.ty().lanes)
            };
        }
        rebuilt
    }
}
