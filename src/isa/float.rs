//! Float vector instructions as data: what the float vectorizer (`crate::float`) may emit
//! for a target and what each costs. A target that vectorizes float kernels gives a
//! [`FloatSpec`]: a description file in the instruction description language
//! (`src/targets/<family>/float.isa`, read by the float vectorizer only) for the arithmetic,
//! and rows written in Rust for what a description cannot say. [`FloatIsa::build`] makes
//! the table (`Target::float_isa`); the vectorizer, its cost model and its C emitter read
//! only the table, never a target's name.
//!
//! Each operation's meaning is an IR expression over `f32` ([`FloatOp::semantics`]), as an
//! integer instruction's is its description's semantics.
//!
//! Templates are C with intrinsics, with `{a}`, `{b}`, `{c}` for vector operands, `{p}`
//! for a pointer, `{x}` for a scalar and `{lanes}` for a comma-separated list of scalars.
//! Shuffles are not listed: they are written as `__builtin_shufflevector`, whose lowering
//! to the target's permutes (`vpermps`, `vblendps`, `vext`, `vzip`, `vdup_lane`...) is
//! clang's; their costs are the table's estimates.

use crate::diag::{Diag, Source};
use crate::ir::instr::param_name;
use crate::ir::{Expr, Op, Sym, mk};
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

/// How the vectorizer turns a described instruction's cycles into its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatCostMeasure {
    /// The reciprocal throughput rounded up (at least one): for targets measured by time.
    Throughput,
    /// One per instruction: for targets whose benchmarks count executed instructions.
    Count,
}

/// A row written in Rust, for what a description cannot say: memory (a load, a store), a
/// register made from scalars, and operations a target has no one instruction for (x86
/// float negation is an `xor` with the sign bit).
#[derive(Debug)]
pub struct FloatTemplate {
    /// The operation.
    pub op: FloatOp,
    /// Its C template.
    pub c: &'static str,
    /// The instruction clang emits for it.
    pub instruction: &'static str,
    /// Its cost in the vectorizer's model.
    pub cost: u32,
}

impl FloatTemplate {
    /// A row (`const`, so specs are statics).
    pub const fn new(op: FloatOp, c: &'static str, instruction: &'static str, cost: u32) -> Self {
        FloatTemplate {
            op,
            c,
            instruction,
            cost,
        }
    }
}

/// What a target says of its float vector instructions: the register, the description
/// file whose entries give the arithmetic, the rows written in Rust, and the costs of what
/// is not an instruction of the table (shuffles, scalars).
#[derive(Debug)]
pub struct FloatSpec {
    /// The target family, as its integer descriptions name it (`x86`, `arm`).
    pub family: &'static str,
    /// Lanes of `float` in one register.
    pub lanes: usize,
    /// The C type of a register.
    pub vector_type: &'static str,
    /// The C header lines its code needs.
    pub header: &'static str,
    /// The description file (`src/targets/<family>/float.isa`): path and text.
    pub descriptions: (&'static str, &'static str),
    /// The rows written in Rust; every other operation comes from a description.
    pub templates: &'static [FloatTemplate],
    /// How a described instruction is priced.
    pub measure: FloatCostMeasure,
    /// Cost of a shuffle of one register (`vpermps`, `tbl`).
    pub permute_cost: u32,
    /// Cost of a lane-preserving blend of two registers.
    pub blend_cost: u32,
    /// Cost of one scalar float operation.
    pub scalar_cost: u32,
    /// Cost of moving one scalar into a lane.
    pub insert_cost: u32,
}

/// One row of a target's float table.
#[derive(Debug)]
pub struct FloatInstr {
    /// The operation.
    pub op: FloatOp,
    /// Its C template.
    pub c: String,
    /// The instruction clang emits for it (for reports and tests of the assembly).
    pub instruction: String,
    /// Its cost in the vectorizer's model (about reciprocal throughput in cycles).
    pub cost: u32,
    /// Where the row's description is (`file:line`), or `None` for a row written in Rust.
    pub described_at: Option<String>,
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
    /// The instructions, one row per operation, in [`ALL_FLOAT_OPS`] order.
    pub instrs: Vec<FloatInstr>,
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
    /// The table of `spec`: its Rust rows, and for every other operation the first entry of
    /// its description file, at the register's lane count, whose semantics are the
    /// operation's meaning with the operands bound by name. An operation with no row, and an
    /// entry at the register's lane count that no operation takes, are errors at their place.
    pub fn build(spec: &FloatSpec) -> Result<FloatIsa, Diag> {
        let (path, text) = spec.descriptions;
        let src = Source::new(path, text);
        let entries: Vec<_> = crate::isa::desc::instantiate_float_file(&src, spec.family)?
            .into_iter()
            .filter(|e| e.instr.result == Type::vec(Elem::F32, spec.lanes as u32))
            .collect();
        let mut used = vec![false; entries.len()];
        let mut instrs = Vec::new();
        for op in ALL_FLOAT_OPS {
            if let Some(t) = spec.templates.iter().find(|t| t.op == op) {
                instrs.push(FloatInstr {
                    op,
                    c: t.c.to_string(),
                    instruction: t.instruction.to_string(),
                    cost: t.cost,
                    described_at: None,
                });
                continue;
            }
            let want = op.semantics(spec.lanes as u32);
            let found = entries.iter().enumerate().find_map(|(k, e)| {
                let i = &e.instr;
                if i.imm.iter().any(|&m| m) {
                    return None;
                }
                let mut names = Vec::new();
                (bind(&want, &i.semantics, &mut names) && names.len() == i.params.len())
                    .then_some((k, names))
            });
            let Some((k, names)) = found else {
                return Err(Diag::new(
                    &src,
                    0..0,
                    format!(
                        "no description of the float operation {op:?} at {} lanes, and no row for it in Rust",
                        spec.lanes
                    ),
                )
                .note(format!("its meaning: {want}")));
            };
            used[k] = true;
            let i = &entries[k].instr;
            // Operand `#j` is the operation's operand bound to it.
            let args: Vec<String> = (0..i.params.len())
                .map(|j| {
                    let p = param_name(j);
                    let (name, _) = names
                        .iter()
                        .find(|(_, g)| &**g == p.as_str())
                        .expect("bound");
                    format!("{{{name}}}")
                })
                .collect();
            instrs.push(FloatInstr {
                op,
                c: format!("{}({})", i.intrinsic, args.join(", ")),
                instruction: i.mnemonic.clone(),
                cost: match spec.measure {
                    FloatCostMeasure::Throughput => (i.cost.throughput.ceil() as u32).max(1),
                    FloatCostMeasure::Count => 1,
                },
                described_at: Some(i.location.clone()),
            });
        }
        if let Some(k) = used.iter().position(|u| !u) {
            let i = &entries[k].instr;
            return Err(Diag::new(
                &src,
                entries[k].span.clone(),
                format!(
                    "`{}` at {} lanes is not a float operation the vectorizer uses (or another entry before it already gives that operation)",
                    i.intrinsic, spec.lanes
                ),
            )
            .note(format!("its semantics: {}", i.semantics)));
        }
        Ok(FloatIsa {
            lanes: spec.lanes,
            vector_type: spec.vector_type,
            header: spec.header,
            instrs,
            permute_cost: spec.permute_cost,
            blend_cost: spec.blend_cost,
            scalar_cost: spec.scalar_cost,
            insert_cost: spec.insert_cost,
        })
    }

    /// The table row of `op` (every table has every operation: [`FloatIsa::build`] checks).
    pub fn instr(&self, op: FloatOp) -> &FloatInstr {
        self.instrs
            .iter()
            .find(|i| i.op == op)
            .unwrap_or_else(|| panic!("float table without {op:?}"))
    }

    /// The C of `op` with its template's holes filled.
    pub fn c(&self, op: FloatOp, args: &[(&str, &str)]) -> String {
        let mut s = self.instr(op).c.clone();
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

/// Whether `got` (an instruction's semantics over `#0`, `#1`, ...) is `want` (an operation's
/// meaning over `a`, `b`, `c`, `x`) with each of `want`'s variables bound to one operand,
/// the same throughout; the bindings are added to `names` as (operation's, instruction's).
fn bind(want: &Expr, got: &Expr, names: &mut Vec<(Sym, Sym)>) -> bool {
    if want.ty() != got.ty() {
        return false;
    }
    if let (Op::Var(w), Op::Var(g)) = (want.op(), got.op()) {
        return match names.iter().find(|(n, _)| n == w) {
            Some((_, bound)) => bound == g,
            None if names.iter().any(|(_, b)| b == g) => false,
            None => {
                names.push((w.clone(), g.clone()));
                true
            }
        };
    }
    want.op() == got.op()
        && want.args().len() == got.args().len()
        && want
            .args()
            .iter()
            .zip(got.args())
            .all(|(w, g)| bind(w, g, names))
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
