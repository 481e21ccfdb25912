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
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, serde::Serialize, serde::Deserialize)]
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

/// Instructions written as indices into a list while expressions and patterns are
/// (de)serialized (the tables cache, `rules::snapshot`): an instruction is shared by
/// every rule and node that names it, and is written once. The list is per thread and
/// installed with [`instr_ref::with_instr_list`]; an instruction outside it cannot be
/// written.
pub mod instr_ref {
    use std::sync::Arc;

    use serde::{Deserializer, Serializer};

    use super::Instr;
    use crate::util::ref_list::{self, Installed, RefList};

    /// The instructions being written or read, told apart by key.
    pub type InstrList = RefList<Instr, String>;

    /// An empty list of instructions.
    pub fn new_list() -> InstrList {
        RefList::new(|i| i.key.clone())
    }

    thread_local! {
        static CURRENT: Installed<Instr, String> = const { std::cell::RefCell::new(None) };
    }

    /// Runs `f` with `list` installed for this thread, and gives the list back (grown by
    /// what `f` added).
    pub fn with_instr_list<R>(list: InstrList, f: impl FnOnce() -> R) -> (R, InstrList) {
        ref_list::with_list(&CURRENT, list, f)
    }

    /// Adds `i` to the installed list (reading: the instructions in the order written).
    pub fn push(i: Arc<Instr>) -> Result<(), String> {
        ref_list::push(&CURRENT, i)
    }

    /// Writes an instruction as its index in the installed list.
    pub fn serialize<S: Serializer>(i: &Arc<Instr>, s: S) -> Result<S::Ok, S::Error> {
        ref_list::write(&CURRENT, i, &format!("instruction {}", i.key), s)
    }

    /// Reads an index into the installed list.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Instr>, D::Error> {
        ref_list::read(&CURRENT, "instruction", d)
    }
}
