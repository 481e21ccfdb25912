//! The operators of harrow IR: Halide's integer operators, FPIR, and shuffles.

use std::fmt;
use std::sync::Arc;

/// An interned-by-value name (variables, buffers, let-bindings).
pub type Sym = Arc<str>;

/// Alignment facts of a load: the index base is congruent to `remainder` modulo `modulus`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub struct Align {
    /// The modulus (positive).
    pub modulus: i64,
    /// The remainder, in `0..modulus`.
    pub remainder: i64,
}

/// One IR operator. The node's result type and children live in [`super::Node`].
///
/// Ops whose result type is not implied by their operands (`Cast`, `Reinterpret`,
/// `SaturatingCast`, `Const`, `Var`, `Load`, `Broadcast`, `Ramp`, `Slice`, the reductions)
/// take it from the node's type.
#[derive(Clone, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub enum Op {
    /// A scalar constant, stored as its bit pattern zero-extended to 128 bits.
    Const(u128),
    /// A named input (scalar or vector).
    Var(Sym),
    /// `buf[index]`: one lane per lane of the `i32` index child.
    Load(Sym, Option<Align>),
    /// `ramp(base, stride, lanes)` over `i32`: children `[base, stride]`, both scalars.
    Ramp,
    /// Repeats its child (a scalar or a whole vector) to fill the result lanes.
    Broadcast,
    /// Wrapping (truncating or extending) conversion to the node type.
    Cast,
    /// Bit-for-bit reinterpretation to a type of the same total width.
    Reinterpret,
    Add,
    Sub,
    Mul,
    /// Halide division: rounds so that the remainder is non-negative; `x / 0 == 0`.
    Div,
    /// Halide modulus: always in `0..|b|`; `x % 0 == 0`.
    Mod,
    Min,
    Max,
    /// Bitwise and (logical and on `bool`).
    And,
    /// Bitwise or (logical or on `bool`).
    Or,
    Xor,
    /// Bitwise not (logical not on `bool`).
    Not,
    /// Shift left; a negative amount shifts right.
    Shl,
    /// Shift right (arithmetic for signed types); a negative amount shifts left.
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `select(cond, then, else)`, lane-wise.
    Select,
    /// `let name = value in body`: children `[value, body]`.
    Let(Sym),
    WideningAdd,
    WideningSub,
    WideningMul,
    WideningShl,
    WideningShr,
    WidenRightAdd,
    WidenRightSub,
    WidenRightMul,
    RoundingShl,
    RoundingShr,
    SaturatingAdd,
    SaturatingSub,
    SaturatingCast,
    HalvingAdd,
    HalvingSub,
    RoundingHalvingAdd,
    MulShiftRight,
    RoundingMulShiftRight,
    Absd,
    Abs,
    Popcount,
    CountLeadingZeros,
    CountTrailingZeros,
    /// Lanes `start, start + stride, ...` of the child; lane count from the node type.
    Slice {
        start: u32,
        stride: u32,
    },
    /// Concatenation of all children.
    Concat,
    /// Lane 0 of each child, then lane 1 of each child, ...
    Interleave,
    /// Picks lanes of the concatenation of the children by constant index.
    Shuffle(Arc<[u32]>),
    /// Sums groups of adjacent lanes (wrapping); the group size is input lanes / output lanes.
    ReduceAdd,
    /// Minimum of groups of adjacent lanes.
    ReduceMin,
    /// Maximum of groups of adjacent lanes.
    ReduceMax,
    /// IEEE-754 negation of a float (flips the sign bit: `-0.0` from `0.0`, which
    /// `0 - x` would not give).
    FNeg,
    /// IEEE-754 square root of a float, correctly rounded.
    Sqrt,
    /// `fma(a, b, c)`: `a * b + c` on floats with one rounding.
    Fma,
    /// A target instruction; its meaning is its description's semantics.
    Instr(#[serde(with = "crate::ir::instr::instr_ref")] Arc<crate::ir::instr::Instr>),
}

/// How an operator is spelled and how many operands it takes.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The call name in Halide syntax and the head in the S-expression form.
    pub name: &'static str,
    /// Number of children, or `None` when variadic.
    pub arity: Option<usize>,
    /// True for FPIR operations.
    pub fpir: bool,
}

const fn info(name: &'static str, arity: usize, fpir: bool) -> OpInfo {
    OpInfo {
        name,
        arity: Some(arity),
        fpir,
    }
}

/// A constructor of an operator without payload.
pub type OpCtor = fn() -> Op;

/// Every fixed-name operator that can be written as a call.
pub const CALL_OPS: &[(&str, OpCtor)] = &[
    ("add", || Op::Add),
    ("sub", || Op::Sub),
    ("mul", || Op::Mul),
    ("div", || Op::Div),
    ("mod", || Op::Mod),
    ("min", || Op::Min),
    ("max", || Op::Max),
    ("bitwise_and", || Op::And),
    ("bitwise_or", || Op::Or),
    ("bitwise_xor", || Op::Xor),
    ("bitwise_not", || Op::Not),
    ("shift_left", || Op::Shl),
    ("shift_right", || Op::Shr),
    ("select", || Op::Select),
    ("widening_add", || Op::WideningAdd),
    ("widening_sub", || Op::WideningSub),
    ("widening_mul", || Op::WideningMul),
    ("widening_shift_left", || Op::WideningShl),
    ("widening_shift_right", || Op::WideningShr),
    ("widen_right_add", || Op::WidenRightAdd),
    ("widen_right_sub", || Op::WidenRightSub),
    ("widen_right_mul", || Op::WidenRightMul),
    ("rounding_shift_left", || Op::RoundingShl),
    ("rounding_shift_right", || Op::RoundingShr),
    ("saturating_add", || Op::SaturatingAdd),
    ("saturating_sub", || Op::SaturatingSub),
    ("halving_add", || Op::HalvingAdd),
    ("halving_sub", || Op::HalvingSub),
    ("rounding_halving_add", || Op::RoundingHalvingAdd),
    ("mul_shift_right", || Op::MulShiftRight),
    ("rounding_mul_shift_right", || Op::RoundingMulShiftRight),
    ("absd", || Op::Absd),
    ("abs", || Op::Abs),
    ("popcount", || Op::Popcount),
    ("count_leading_zeros", || Op::CountLeadingZeros),
    ("count_trailing_zeros", || Op::CountTrailingZeros),
    ("concat_vectors", || Op::Concat),
    ("interleave_vectors", || Op::Interleave),
    ("vector_reduce_add", || Op::ReduceAdd),
    ("vector_reduce_min", || Op::ReduceMin),
    ("vector_reduce_max", || Op::ReduceMax),
    ("fneg", || Op::FNeg),
    ("sqrt", || Op::Sqrt),
    ("fma", || Op::Fma),
];

/// Looks up a fixed-name call operator.
pub fn call_op(name: &str) -> Option<Op> {
    CALL_OPS.iter().find(|(n, _)| *n == name).map(|(_, f)| f())
}

impl Op {
    /// Name, arity and class of this operator.
    pub fn info(&self) -> OpInfo {
        use Op::*;
        match self {
            Const(_) => info("const", 0, false),
            Var(_) => info("var", 0, false),
            Load(..) => info("load", 1, false),
            Ramp => info("ramp", 2, false),
            Broadcast => info("broadcast", 1, false),
            Cast => info("cast", 1, false),
            Reinterpret => info("reinterpret", 1, false),
            Add => info("add", 2, false),
            Sub => info("sub", 2, false),
            Mul => info("mul", 2, false),
            Div => info("div", 2, false),
            Mod => info("mod", 2, false),
            Min => info("min", 2, false),
            Max => info("max", 2, false),
            And => info("bitwise_and", 2, false),
            Or => info("bitwise_or", 2, false),
            Xor => info("bitwise_xor", 2, false),
            Not => info("bitwise_not", 1, false),
            Shl => info("shift_left", 2, false),
            Shr => info("shift_right", 2, false),
            Eq => info("eq", 2, false),
            Ne => info("ne", 2, false),
            Lt => info("lt", 2, false),
            Le => info("le", 2, false),
            Gt => info("gt", 2, false),
            Ge => info("ge", 2, false),
            Select => info("select", 3, false),
            Let(_) => info("let", 2, false),
            WideningAdd => info("widening_add", 2, true),
            WideningSub => info("widening_sub", 2, true),
            WideningMul => info("widening_mul", 2, true),
            WideningShl => info("widening_shift_left", 2, true),
            WideningShr => info("widening_shift_right", 2, true),
            WidenRightAdd => info("widen_right_add", 2, true),
            WidenRightSub => info("widen_right_sub", 2, true),
            WidenRightMul => info("widen_right_mul", 2, true),
            RoundingShl => info("rounding_shift_left", 2, true),
            RoundingShr => info("rounding_shift_right", 2, true),
            SaturatingAdd => info("saturating_add", 2, true),
            SaturatingSub => info("saturating_sub", 2, true),
            SaturatingCast => info("saturating_cast", 1, true),
            HalvingAdd => info("halving_add", 2, true),
            HalvingSub => info("halving_sub", 2, true),
            RoundingHalvingAdd => info("rounding_halving_add", 2, true),
            MulShiftRight => info("mul_shift_right", 3, true),
            RoundingMulShiftRight => info("rounding_mul_shift_right", 3, true),
            Absd => info("absd", 2, true),
            Abs => info("abs", 1, true),
            Popcount => info("popcount", 1, false),
            CountLeadingZeros => info("count_leading_zeros", 1, false),
            CountTrailingZeros => info("count_trailing_zeros", 1, false),
            Slice { .. } => info("slice_vectors", 1, false),
            Concat => OpInfo {
                name: "concat_vectors",
                arity: None,
                fpir: false,
            },
            Interleave => OpInfo {
                name: "interleave_vectors",
                arity: None,
                fpir: false,
            },
            Shuffle(_) => OpInfo {
                name: "shuffle",
                arity: None,
                fpir: false,
            },
            ReduceAdd => info("vector_reduce_add", 1, false),
            ReduceMin => info("vector_reduce_min", 1, false),
            ReduceMax => info("vector_reduce_max", 1, false),
            FNeg => info("fneg", 1, false),
            Sqrt => info("sqrt", 1, false),
            Fma => info("fma", 3, false),
            Instr(_) => OpInfo {
                name: "instr",
                arity: None,
                fpir: false,
            },
        }
    }

    /// The operator's name as written in calls and S-expressions (`instr` for every target
    /// instruction; see [`Op::display_name`]).
    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// The name to show: the intrinsic for instructions, the operator name otherwise.
    pub fn display_name(&self) -> String {
        match self {
            Op::Instr(i) => i.intrinsic.clone(),
            op => op.name().to_string(),
        }
    }

    /// True for FPIR operations.
    pub fn is_fpir(&self) -> bool {
        self.info().fpir
    }

    /// True for the six comparisons.
    pub fn is_comparison(&self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// True when swapping the two operands never changes the result.
    pub fn is_commutative(&self) -> bool {
        use Op::*;
        matches!(
            self,
            Add | Mul
                | Min
                | Max
                | And
                | Or
                | Xor
                | Eq
                | Ne
                | WideningAdd
                | WideningMul
                | SaturatingAdd
                | HalvingAdd
                | RoundingHalvingAdd
                | Absd
        )
    }

    /// The infix spelling in Halide syntax, if the operator has one.
    pub fn infix(&self) -> Option<&'static str> {
        Some(match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Mod => "%",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            _ => return None,
        })
    }

    /// A payload-free key, for indexing rules by root operator.
    pub fn key(&self) -> OpKey {
        OpKey(std::mem::discriminant(self))
    }
}

/// An operator with its payload erased; equal for all constants, all variables, all slices, ...
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct OpKey(std::mem::Discriminant<Op>);

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
