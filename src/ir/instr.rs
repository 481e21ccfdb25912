//! One target instruction at concrete operand types, as the IR sees it: operand and result
//! types, which operands are immediates, and its meaning as an IR expression. The IR
//! needs nothing else to type, interpret or rewrite an instruction node; the descriptions
//! that create them (`crate::isa`) and the targets that emit them sit above the IR.

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::ir::Expr;
use crate::types::Type;

/// Latency and reciprocal throughput in cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstrCost {
    /// Cycles from operands to result.
    pub latency: f32,
    /// Cycles between independent issues (reciprocal throughput).
    pub throughput: f32,
    /// Reciprocal throughput when the operand is read straight from memory (`load T` in a
    /// description): some conversions cost less with the load folded in than from a
    /// register (x86 `vpmovzxbw ymm, m128` issues twice as often as from `xmm`).
    pub load_throughput: Option<f32>,
}

/// An instruction instantiated at concrete types. Its meaning is `semantics`, an IR
/// expression over the variables `#0`, `#1`, ... (one per operand, immediates included).
#[derive(Debug)]
pub struct Instr {
    /// The target family it belongs to (`x86`, `arm`, `hvx`).
    pub target: String,
    /// Assembly mnemonic (what conformance looks for).
    pub mnemonic: String,
    /// C intrinsic to call.
    pub intrinsic: String,
    /// Operand types; immediates are scalars.
    pub params: Vec<Type>,
    /// Which operands are immediates (compile-time constants in C).
    pub imm: Vec<bool>,
    /// Allowed range of each immediate.
    pub imm_range: Vec<Option<(i128, i128)>>,
    /// Result type.
    pub result: Type,
    /// The meaning, over `#0`, `#1`, ...
    pub semantics: Expr,
    /// CPU features the instruction needs.
    pub features: Vec<String>,
    /// Cost.
    pub cost: InstrCost,
    /// `file:line` of the description.
    pub location: String,
    /// Identity: target, intrinsic and operand types.
    pub key: String,
}

impl PartialEq for Instr {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Instr {}
impl Hash for Instr {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.key.hash(h)
    }
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.intrinsic)
    }
}

/// The variable naming operand `i` in semantics.
pub fn param_name(i: usize) -> String {
    format!("#{i}")
}

/// Instructions by intrinsic name (several instantiations may share one).
pub type InstrTable = HashMap<String, Vec<Arc<Instr>>>;
