//! Float vector instructions as data: what the float vectorizer (`crate::float`) may emit
//! for a target and what each costs. A target that vectorizes float kernels gives one
//! [`FloatIsa`] table (`Target::float_isa`); the vectorizer, its cost model and its C
//! emitter read only the table, never a target's name.
//!
//! Each operation's meaning is an IR expression over `f32` ([`FloatOp::semantics`]), as an
//! integer instruction's is its description's semantics.
//!
//! Templates are C with intrinsics, with `{a}`, `{b}`, `{c}` for vector operands, `{p}`
//! for a pointer, `{x}` for a scalar and `{lanes}` for a comma-separated list of scalars.
//! Shuffles are not listed: they are written as `__builtin_shufflevector`, whose lowering
//! to the target's permutes (`vpermps`, `vblendps`, `vext`, `vzip`, `vdup_lane`...) is
//! clang's; their costs are the table's estimates.

use crate::ir::{Expr, Op, mk};
use crate::types::{Elem, Type};

/// A float vector operation the vectorizer emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatOp {
    /// Unaligned load of a whole register from `{p}`.
    Load,
    /// Unaligned store of `{a}` to `{p}`.
    Store,
    /// Every lane set to the scalar `{x}`.
    Splat,
    /// A register from scalars, lane 0 first: `{lanes}`.
    FromLanes,
    /// Lane-wise `{a} + {b}`.
    Add,
    /// Lane-wise `{a} - {b}`.
    Sub,
    /// Lane-wise `{a} * {b}`.
    Mul,
    /// Lane-wise `{a} / {b}`.
    Div,
    /// Lane-wise square root of `{a}`.
    Sqrt,
    /// Lane-wise `{a} * {b} + {c}` rounded once.
    Fma,
    /// Lane-wise sign flip of `{a}`.
    Neg,
}

impl FloatOp {
    /// What the operation computes, in harrow IR over the operand registers `a`, `b`, `c`
    /// (`f32` x `lanes`) and the scalar `x`: the meaning the hardware check
    /// (`harrow float check-isa`) holds every table row to, evaluated by the reference
    /// interpreter. A load, a store and a register made from scalars hold `a`'s lanes.
    pub fn semantics(self, lanes: u32) -> Expr {
        let v = Type::vec(Elem::F32, lanes);
        let reg = |name: &str| Expr::var(name, v);
        let (a, b, c) = (reg("a"), reg("b"), reg("c"));
        match self {
            FloatOp::Load | FloatOp::Store | FloatOp::FromLanes => a,
            FloatOp::Splat => Expr::var("x", Type::scalar(Elem::F32)).broadcast(lanes),
            FloatOp::Add => mk(Op::Add, vec![a, b]),
            FloatOp::Sub => mk(Op::Sub, vec![a, b]),
            FloatOp::Mul => mk(Op::Mul, vec![a, b]),
            FloatOp::Div => mk(Op::Div, vec![a, b]),
            FloatOp::Sqrt => mk(Op::Sqrt, vec![a]),
            FloatOp::Fma => mk(Op::Fma, vec![a, b, c]),
            FloatOp::Neg => mk(Op::FNeg, vec![a]),
        }
    }
}

/// One row of a target's float table.
#[derive(Debug)]
pub struct FloatInstr {
    /// The operation.
    pub op: FloatOp,
    /// Its C template.
    pub c: &'static str,
    /// The instruction clang emits for it (for reports and tests of the assembly).
    pub instruction: &'static str,
    /// Its cost in the vectorizer's model (about reciprocal throughput in cycles).
    pub cost: u32,
}

impl FloatInstr {
    /// A table row (`const`, so tables are statics).
    pub const fn new(op: FloatOp, c: &'static str, instruction: &'static str, cost: u32) -> Self {
        FloatInstr {
            op,
            c,
            instruction,
            cost,
        }
    }
}

/// A target's float vector instructions.
#[derive(Debug)]
pub struct FloatIsa {
    /// Lanes of `float` in one register.
    pub lanes: usize,
    /// The C type of a register.
    pub vector_type: &'static str,
    /// The C header lines its code needs.
    pub header: &'static str,
    /// The instructions, one row per operation.
    pub instrs: &'static [FloatInstr],
    /// Cost of a shuffle of one register (`vpermps`, `tbl`).
    pub permute_cost: u32,
    /// Cost of a lane-preserving blend of two registers.
    pub blend_cost: u32,
    /// Cost of one scalar float operation.
    pub scalar_cost: u32,
    /// Cost of moving one scalar into a lane.
    pub insert_cost: u32,
}

impl FloatIsa {
    /// The table row of `op` (every table has every operation: checked by the tests).
    pub fn instr(&self, op: FloatOp) -> &FloatInstr {
        self.instrs
            .iter()
            .find(|i| i.op == op)
            .unwrap_or_else(|| panic!("float table without {op:?}"))
    }

    /// The C of `op` with its template's holes filled.
    pub fn c(&self, op: FloatOp, args: &[(&str, &str)]) -> String {
        let mut s = self.instr(op).c.to_string();
        for (k, v) in args {
            s = s.replace(&format!("{{{k}}}"), v);
        }
        s
    }

    /// Cost of `op`.
    pub fn cost(&self, op: FloatOp) -> u32 {
        self.instr(op).cost
    }
}

/// Every operation a table must have.
pub const ALL_FLOAT_OPS: [FloatOp; 11] = [
    FloatOp::Load,
    FloatOp::Store,
    FloatOp::Splat,
    FloatOp::FromLanes,
    FloatOp::Add,
    FloatOp::Sub,
    FloatOp::Mul,
    FloatOp::Div,
    FloatOp::Sqrt,
    FloatOp::Fma,
    FloatOp::Neg,
];
