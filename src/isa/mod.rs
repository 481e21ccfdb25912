//! Target instructions as data: the description language ([`desc`]), per-target tables,
//! and the hardware check of every description ([`hwcheck`]).
//!
//! The targets themselves (their descriptions, rules and [`target::Target`]
//! implementations) are folders under `src/targets/`.

pub mod desc;
pub mod float;
pub mod hwcheck;
pub mod import;
pub mod target;
pub mod toolchain;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

pub use crate::ir::instr::{Instr, InstrCost, InstrTable, param_name};

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
                    .map(|(i, a)| (Sym::from(param_name(i).as_str()), a))
                    .collect();
                crate::ir::visit::substitute(&ins.semantics, &map)
            }
            _ => node.with_args(args),
        }
    })
    .expect("instruction semantics have their declared types")
}

/// For an instruction whose semantics is `concat_vectors(X, Y)` (a register pair such as
/// HVX's deinterleaved widening results), the rules `X => lo(instruction)` and
/// `Y => hi(instruction)`, when the family describes taking the low and high halves
/// (`slice_vectors(p, 0, 1, h)` and `slice_vectors(p, h, 1, h)`). Selection then finds each
/// half of a pair where only that half is wanted, and shares the instruction between both.
fn half_rules(isa: &Isa) -> Vec<Rule> {
    use crate::rules::PatKind;
    // Half extractors by (pair type, which half).
    let mut extract: HashMap<(crate::types::Type, bool), Arc<Instr>> = HashMap::new();
    for i in &isa.instrs {
        if i.params.len() != 1 {
            continue;
        }
        let p = i.params[0];
        if let Op::Slice { start, stride: 1 } = i.semantics.op()
            && matches!(i.semantics.arg(0).op(), Op::Var(_))
            && 2 * i.result.lanes == p.lanes
            && (*start == 0 || *start == i.result.lanes)
        {
            extract.insert((p, *start != 0), i.clone());
        }
    }
    let mut out = Vec::new();
    for r in &isa.derived {
        let inst = &r.insts[0];
        let PatKind::Op(Op::Concat, parts) = &inst.lhs.kind else {
            continue;
        };
        let PatKind::Op(Op::Instr(ins), _) = &inst.rhs.kind else {
            continue;
        };
        if parts.len() != 2 || parts[0].lanes != parts[1].lanes {
            continue;
        }
        let nvars = inst.vars.len();
        let bound: BTreeSet<u32> = inst.lhs.wildcards().into_iter().collect();
        for (k, part) in parts.iter().enumerate() {
            let Some(ex) = extract.get(&(ins.result, k == 1)) else {
                continue;
            };
            // The half must still bind every operand and immediate of the instruction.
            if part.var_counts(nvars).contains(&0)
                || part.wildcards().into_iter().collect::<BTreeSet<u32>>() != bound
            {
                continue;
            }
            if !matches!(part.kind, PatKind::Op(..)) {
                continue;
            }
            let mut rule = r.clone();
            rule.decl.name = format!("{} ({} half)", r.decl.name, ["low", "high"][k]);
            rule.insts[0].lhs = part.clone();
            rule.insts[0].rhs = crate::rules::Pat {
                kind: PatKind::Op(Op::Instr(ex.clone()), vec![inst.rhs.clone()]),
                elem: ex.result.elem,
                lanes: Some(ex.result.lanes),
            };
            out.push(rule);
        }
    }
    out
}

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
    /// [`Isa::load`] of a target's built-in files, given as (name, text) pairs.
    pub fn load_files(target: &str, files: &[(&str, &str)]) -> Result<Isa, Diag> {
        let sources: Vec<Arc<Source>> = files.iter().map(|(n, t)| Source::new(*n, *t)).collect();
        Isa::load(target, &sources)
    }

    /// [`Isa::load_files`], plus the descriptions `imported` (a family's generated file)
    /// holds of intrinsics the hand-written files do not describe: those add instructions,
    /// the others are the hand-written ones' doubles (proved equal by the cross-check).
    pub fn load_files_with_imported(
        target: &str,
        files: &[(&str, &str)],
        imported: (&str, &str),
    ) -> Result<Isa, Diag> {
        let mut isa = Isa::load_files(target, files)?;
        let hand: std::collections::HashSet<String> =
            isa.instrs.iter().map(|i| i.intrinsic.clone()).collect();
        let src = Source::new(imported.0, imported.1);
        for it in desc::instantiate_imported_file(&src, target)? {
            if hand.contains(&it.instr.intrinsic) || !selectable(&it.instr) {
                continue;
            }
            isa.instrs.push(it.instr);
            if let Some(r) = it.rule {
                isa.derived.push(r);
            }
        }
        Ok(isa)
    }

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
        let halves = half_rules(&isa);
        isa.derived.extend(halves);
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

/// The intrinsics `all` adds to `hand` (the imported descriptions a family's tables load),
/// after checking that none of them is also described by hand. For the families' tests.
#[cfg(test)]
pub(crate) fn imported_additions<'a>(hand: &Isa, all: &'a Isa) -> Vec<&'a str> {
    let hand_names: std::collections::HashSet<&str> =
        hand.instrs.iter().map(|i| i.intrinsic.as_str()).collect();
    let added: Vec<&str> = all.instrs[hand.instrs.len()..]
        .iter()
        .map(|i| i.intrinsic.as_str())
        .collect();
    println!(
        "{} hand-written, {} imported added",
        hand.instrs.len(),
        added.len()
    );
    assert!(added.iter().all(|n| !hand_names.contains(n)));
    added
}

/// Whether an imported description belongs in the selection tables. Selection lowers
/// vector expressions lane-chunk by lane-chunk: an instruction with a scalar result (Arm's
/// `vqaddb_s8`, a reduction), or one whose result lanes are a scalar operand's bits
/// (`vcreate_s8`, which no other chunk width can have), matches no vector pattern and is
/// kept out; it stays described and checked in the imported file. (A scalar reinterpreted
/// into a few lanes and broadcast, as HVX's `vmpyi` does, is selectable.)
fn selectable(instr: &crate::ir::instr::Instr) -> bool {
    use crate::ir::Op;
    let lanes = instr.result.lanes;
    !instr.result.is_scalar()
        && !crate::ir::visit::any_node(&instr.semantics, |e| {
            matches!(e.op(), Op::Reinterpret)
                && e.ty().lanes == lanes
                && e.args().first().is_some_and(|a| a.ty().is_scalar())
        })
}
