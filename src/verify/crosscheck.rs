//! Imported descriptions against the hand-written ones: for every intrinsic described both
//! ways, prove that both mean the same thing on all inputs.
//!
//! Each pair becomes a lowering rule `imported semantics => hand-written intrinsic(operands)`
//! loaded against the hand-written instruction table, so the ordinary prover compares the
//! two on every input (the call's meaning is its description's semantics). Operands whose
//! types differ only in signedness, or in how a register is cut into lanes, are
//! reinterpreted: a register is a register.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use super::{Cache, Options, Verdict, verify_rules};
use crate::diag::Source;
use crate::ir::instr::Instr;
use crate::isa::Isa;
use crate::isa::import::Entry;
use crate::rules::{RuleKind, RuleSet};
use crate::types::Type;

/// How one imported description compares with the hand-written one.
#[derive(Clone, Debug)]
pub struct CrossCheck {
    /// The intrinsic.
    pub intrinsic: String,
    /// What the prover said.
    pub verdict: Verdict,
}

/// `value` (of type `from`) read as `to`: as it is, cast (same lanes) or reinterpreted.
fn as_type(value: &str, from: Type, to: Type) -> String {
    if from == to {
        value.to_string()
    } else if from.lanes == to.lanes {
        format!("{}({value})", to.halide_name())
    } else {
        format!("({})reinterpret({value})", to.halide_name())
    }
}

/// The hand-written instantiation of `e.intrinsic` to compare with: the one with `e`'s
/// operand types if there is one, else one with the same register widths.
fn counterpart<'a>(e: &Entry, hand: &'a [Arc<Instr>]) -> Option<&'a Arc<Instr>> {
    let fits = |i: &Instr, exact: bool| {
        i.intrinsic == e.intrinsic
            && i.imm.iter().all(|m| !m)
            && e.imms.iter().all(Option::is_none)
            && i.params.len() == e.params.len()
            && i.result.total_bits() == e.result.total_bits()
            && i.params.iter().zip(&e.params).all(|(a, (_, b))| {
                if exact {
                    *a == *b
                } else {
                    a.total_bits() == b.total_bits()
                }
            })
    };
    hand.iter()
        .find(|i| fits(i, true))
        .or_else(|| hand.iter().find(|i| fits(i, false)))
}

/// Proves each entry of `entries` that `hand` also describes equal to it. Entries without a
/// hand-written counterpart are left out of the result.
pub fn cross_check(
    entries: &[Entry],
    hand: &Isa,
    opts: &Options,
) -> Result<Vec<CrossCheck>, String> {
    let mut text = String::new();
    let mut names = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        let Some(h) = counterpart(e, &hand.instrs) else {
            continue;
        };
        let params: Vec<String> = e
            .params
            .iter()
            .map(|(n, t)| format!("{n}: {}{}", t.elem.name(), lanes_suffix(*t)))
            .collect();
        let args: Vec<String> = e
            .params
            .iter()
            .zip(&h.params)
            .map(|((n, t), ht)| as_type(n, *t, *ht))
            .collect();
        let call = format!(
            "({}){}({})",
            h.result.halide_name(),
            h.intrinsic,
            args.join(", ")
        );
        let _ = writeln!(
            text,
            "rule xcheck_{k}({}):\n    {} => {}",
            params.join(", "),
            e.semantics,
            as_type(&call, h.result, e.result)
        );
        names.push((format!("xcheck_{k}"), e.intrinsic.clone()));
    }
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let src = Source::new("<cross-check>", text);
    let table = Arc::new(hand.table());
    let set = RuleSet::load_with(&src, RuleKind::Lower, Some(&table))
        .map_err(|d| format!("the cross-check rules do not load (a bug): {d}"))?;
    let cache = Mutex::new(Cache::in_memory());
    let outcomes = verify_rules(&set.rules, opts, &cache, &|_, _| {});
    let mut out = Vec::new();
    for (rule, intrinsic) in names {
        let verdicts: Vec<&Verdict> = outcomes
            .iter()
            .filter(|o| o.rule == rule)
            .map(|o| &o.verdict)
            .collect();
        let verdict = verdicts
            .iter()
            .find(|v| !matches!(v, Verdict::Proved))
            .map(|v| (*v).clone())
            .unwrap_or(if verdicts.is_empty() {
                Verdict::Error("no instantiation was proved".into())
            } else {
                Verdict::Proved
            });
        out.push(CrossCheck { intrinsic, verdict });
    }
    Ok(out)
}

fn lanes_suffix(t: Type) -> String {
    if t.is_scalar() {
        String::new()
    } else {
        format!("x{}", t.lanes)
    }
}
