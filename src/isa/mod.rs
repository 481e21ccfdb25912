//! Target instructions as data: the description language ([`desc`]), per-target tables,
//! and the hardware check of every description ([`hwcheck`]).
//!
//! A target is a folder of description files under `isa/` (embedded in the binary) plus a
//! thin Rust module with what data cannot say: register widths, C types and compiler
//! flags ([`x86`], [`arm`]).

pub mod arm;
pub mod desc;
pub mod hwcheck;
pub mod instr;
pub mod target;
pub mod x86;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

pub use instr::{Instr, InstrCost};

use crate::diag::{Diag, Source};
use crate::ir::{Expr, Op, Sym};
use crate::rules::Rule;

/// Replaces every instruction by its semantics applied to its operands, leaving plain IR
/// (for the SMT encoding and for anything else that wants to see inside instructions).
pub fn expand(e: &Expr) -> Expr {
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        match node.op() {
            Op::Instr(ins) => {
                let map: HashMap<Sym, Expr> = args
                    .into_iter()
                    .enumerate()
                    .map(|(i, a)| (Sym::from(instr::param_name(i).as_str()), a))
                    .collect();
                crate::ir::visit::substitute(&ins.semantics, &map)
            }
            _ => node.with_args(args),
        }
    })
    .expect("instruction semantics have their declared types")
}

/// Instructions by intrinsic name (several instantiations may share one).
pub type InstrTable = HashMap<String, Vec<Arc<Instr>>>;

/// The instructions of a target and the rules derived from their semantics.
#[derive(Clone, Debug, Default)]
pub struct Isa {
    /// Target family (`x86`).
    pub target: String,
    /// Every instantiated instruction.
    pub instrs: Vec<Arc<Instr>>,
    /// Derived rules `semantics => instruction`, one per instruction that has a pattern.
    pub derived: Vec<Rule>,
}

impl Isa {
    /// Loads description files for a target family.
    pub fn load(target: &str, sources: &[Arc<Source>]) -> Result<Isa, Diag> {
        let mut isa = Isa {
            target: target.to_string(),
            ..Default::default()
        };
        let mut seen = std::collections::HashSet::new();
        for src in sources {
            for it in desc::instantiate_file(src, target)? {
                if !seen.insert(it.instr.key.clone()) {
                    return Err(Diag::new(
                        src,
                        it.span.clone(),
                        format!("instruction {} is described twice", it.instr.key),
                    ));
                }
                isa.instrs.push(it.instr);
                if let Some(r) = it.rule {
                    isa.derived.push(r);
                }
            }
        }
        Ok(isa)
    }

    /// Only the instructions whose features are all in `features`.
    pub fn with_features(&self, features: &BTreeSet<&str>) -> Isa {
        let ok = |i: &Instr| i.features.iter().all(|f| features.contains(f.as_str()));
        Isa {
            target: self.target.clone(),
            instrs: self.instrs.iter().filter(|i| ok(i)).cloned().collect(),
            derived: self
                .derived
                .iter()
                .filter(|r| match &r.insts[0].rhs.kind {
                    crate::rules::PatKind::Op(Op::Instr(i), _) => ok(i),
                    _ => true,
                })
                .cloned()
                .collect(),
        }
    }

    /// The instructions by intrinsic name.
    pub fn table(&self) -> InstrTable {
        let mut t: InstrTable = HashMap::new();
        for i in &self.instrs {
            t.entry(i.intrinsic.clone()).or_default().push(i.clone());
        }
        t
    }
}
