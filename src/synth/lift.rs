//! `harrow synth lift`: lifting rules from search. The same enumeration as lowering
//! synthesis, with the FPIR operations (and the plain ones) as its instructions instead of
//! a target's: for a corpus sub-expression the lifting rules leave unlifted, find a
//! cheaper expression under lifting's cost model (`rules::cost`) that computes the same,
//! prove it with z3, and propose it as a lifting rule over element types.
//!
//! Terms are searched at [`SEARCH_LANES`] lanes (the fingerprints see that many values per
//! environment) and written at one lane: lifting rules hold at every lane count.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use crate::interp::{Env, Value};
use crate::ir::instr::{Instr, InstrCost, param_name};
use crate::ir::{Expr, Op};
use crate::rules::RuleKind;
use crate::rules::cost::{Cost, CostCache};
use crate::types::{Type, USER_INT_ELEMS};

use super::{Options, SearchStats, Term, TermReport, Verdict};

/// Lanes at which terms are searched.
pub const SEARCH_LANES: u32 = 16;

/// Most operations in a corpus term: the search finds expressions of a few operations, so
/// larger sub-expressions would only meet the budget.
pub const MAX_TERM_OPS: usize = 3;

/// The operations of two operands of one type that the search applies (FPIR's and the
/// plain ones). Those whose type rules refuse an operand type are left out at that type.
const BINARY: [Op; 21] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Min,
    Op::Max,
    Op::And,
    Op::Or,
    Op::Shr,
    Op::Shl,
    Op::SaturatingAdd,
    Op::SaturatingSub,
    Op::HalvingAdd,
    Op::HalvingSub,
    Op::RoundingHalvingAdd,
    Op::RoundingShr,
    Op::Absd,
    Op::WideningAdd,
    Op::WideningSub,
    Op::WideningMul,
    Op::WideningShl,
    Op::WideningShr,
];

/// The operations of three operands (a product shifted right by the third).
const TERNARY: [Op; 2] = [Op::MulShiftRight, Op::RoundingMulShiftRight];

/// The search's instructions at `lanes` lanes: each operation above at every integer
/// element type, `abs`, and the casts and saturating casts between every two types. Each
/// is an [`Instr`] whose semantics is the operation itself, so the enumerator and the
/// interpreter treat them as they treat a target's.
pub fn instructions(lanes: u32) -> Vec<Arc<Instr>> {
    let mut out = Vec::new();
    for elem in USER_INT_ELEMS {
        let t = Type::vec(elem, lanes);
        for op in BINARY {
            out.extend(instr(op, None, &[t, t]));
        }
        for op in TERNARY {
            out.extend(instr(op, None, &[t, t, t]));
        }
        out.extend(instr(Op::Abs, None, &[t]));
        for to in USER_INT_ELEMS {
            if to != elem {
                let r = Type::vec(to, lanes);
                out.extend(instr(Op::Cast, Some(r), &[t]));
                out.extend(instr(Op::SaturatingCast, Some(r), &[t]));
            }
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// The instruction for `op` over operands of `params`, when the operation admits them.
fn instr(op: Op, ty: Option<Type>, params: &[Type]) -> Option<Arc<Instr>> {
    let args: Vec<Expr> = params
        .iter()
        .enumerate()
        .map(|(i, t)| Expr::var(param_name(i).as_str(), *t))
        .collect();
    let semantics = Expr::build(op.clone(), ty, args).ok()?;
    let result = semantics.ty();
    // A widening of the widest type is harrow's internal 128-bit arithmetic, no lifting.
    if !USER_INT_ELEMS.contains(&result.elem) {
        return None;
    }
    let names: Vec<String> = params.iter().map(|t| super::type_name(*t)).collect();
    Some(Arc::new(Instr {
        target: "fpir".into(),
        mnemonic: op.name().to_string(),
        intrinsic: op.name().to_string(),
        params: params.to_vec(),
        imm: vec![false; params.len()],
        imm_range: vec![None; params.len()],
        result,
        semantics,
        features: Vec::new(),
        cost: InstrCost {
            latency: 1.0,
            throughput: 1.0,
            load_throughput: None,
        },
        location: String::new(),
        key: format!(
            "fpir {} ({}) -> {}",
            op.name(),
            names.join(", "),
            super::type_name(result)
        ),
    }))
}

/// `e` with every instruction replaced by its semantics over its operands, and every
/// reinterpretation written as the cast it is (the rule language's form of it).
fn inline(e: &Expr) -> Option<Expr> {
    crate::ir::visit::rebuild(e, |n, args| -> Result<Expr, ()> {
        match n.op() {
            Op::Instr(i) => {
                let map: HashMap<crate::ir::Sym, Expr> = args
                    .into_iter()
                    .enumerate()
                    .map(|(k, a)| (param_name(k).as_str().into(), a))
                    .collect();
                crate::ir::visit::substitute(&i.semantics, &map).map_err(|_| ())
            }
            Op::Reinterpret => Expr::build(Op::Cast, Some(n.ty()), args).map_err(|_| ()),
            _ if args.is_empty() => Ok(n.clone()),
            _ => n.with_args(args).map_err(|_| ()),
        }
    })
    .ok()
}

/// The environment of a counterexample at the term's types: each input's lanes repeated
/// to the term's lane count (the prover proves lifting rules at a few lanes, the search
/// runs at [`SEARCH_LANES`]).
fn env_of_counterexample(term: &Expr, cex: &crate::verify::Counterexample) -> Option<Env> {
    let mut env = Env::new();
    for (name, ty) in crate::ir::visit::free_vars(term) {
        let (_, v) = cex.inputs.iter().find(|(n, _)| **n == *name)?;
        if v.ty.elem != ty.elem || v.lanes.is_empty() {
            return None;
        }
        let lanes = (0..ty.lanes as usize)
            .map(|i| v.lanes[i % v.lanes.len()])
            .collect();
        env.set(name, Value { ty, lanes });
    }
    Some(env)
}

/// Lifting's tree cost of `e` at one lane (what a rule's sides are compared by).
fn lift_cost(e: &Expr) -> Cost {
    CostCache::new().cost(e)
}

/// The terms of a corpus for lifting synthesis: every sub-expression of one to
/// [`MAX_TERM_OPS`] operations of each source (`name`, expression) after lifting that
/// lifting leaves unlifted (an integer result of a plain operation, with at least one
/// operation besides casts), its loads made variables, at [`SEARCH_LANES`] lanes, and
/// deduplicated up to renaming of variables and constants. Names are
/// `<source>_<k>`, `k` counting the source's kept terms.
pub fn unlifted_terms(sources: &[(String, Expr)]) -> Vec<Term> {
    super::terms::sub_expression_terms(sources, "", &|sub| {
        if !sub.ty().elem.is_int() || sub.op().is_fpir() || sub.args().is_empty() {
            return None;
        }
        let reads_memory = crate::ir::visit::any_node(sub, |n| matches!(n.op(), Op::Load(..)));
        let vars = if reads_memory {
            super::terms::over_variables(sub)?
        } else {
            sub.clone()
        };
        let scalar = super::terms::at_lanes(&super::terms::renamed(&vars)?, 1)?;
        let ops = super::terms::operations(&scalar);
        if !(1..=MAX_TERM_OPS).contains(&ops.len())
            || ops
                .iter()
                .all(|n| matches!(n.op(), Op::Cast | Op::Reinterpret))
            || ops.iter().any(|n| !n.ty().elem.is_int())
        {
            return None;
        }
        super::terms::at_lanes(&scalar, SEARCH_LANES)
    })
}

/// A found expression for a term, ready to be written as a rule.
struct Candidate {
    /// At one lane.
    scalar: Expr,
    /// At the search's lanes (what the interpreter compares with the term).
    wide: Expr,
    cost: Cost,
    nodes: usize,
}

/// Searches, proves and generalizes for one term, learning from refutations as lowering
/// synthesis does ([`super::synthesize`]); `today` and `cost` of the report are lifting's
/// cost in bits (its tie-breaking rank is in the rule's comment).
pub fn synthesize(term: &Term, instrs: &[Arc<Instr>], opts: &Options, index: usize) -> TermReport {
    let start = Instant::now();
    let mut report = TermReport {
        term: term.clone(),
        today: 0.0,
        verdict: Verdict::NoneFound,
        stats: SearchStats::default(),
    };
    let Some(scalar_term) = super::terms::at_lanes(&term.expr, 1) else {
        report.verdict = Verdict::Skipped(
            "not over variables and constants (a lifting term reads no buffer and no lane index)"
                .into(),
        );
        return report;
    };
    let today = lift_cost(&scalar_term);
    report.today = today.bits as f64;
    super::search_rounds(
        term,
        instrs,
        Vec::new(),
        opts,
        start,
        &mut report,
        &mut |search, envs, report| {
            // A leaf equal to the term (the operation does nothing here) is the cheapest.
            let found = search.leaf.into_iter().chain(search.matches);
            let candidates = candidates(found, today);
            prove_cheapest(
                term,
                &scalar_term,
                today,
                candidates,
                opts,
                index,
                envs,
                report,
            );
            true
        },
    );
    report.stats.seconds = start.elapsed().as_secs_f64();
    report
}

/// The matches as candidates, cheapest first (then the fewest nodes, then the first
/// found); those no cheaper than `today` are left out but the cheapest of them is kept
/// last, for the verdict.
fn candidates(found: impl Iterator<Item = Expr>, today: Cost) -> Vec<Candidate> {
    let mut out: Vec<(usize, Candidate)> = found
        .filter_map(|m| {
            let wide = inline(&m)?;
            let scalar = super::terms::at_lanes(&wide, 1)?;
            let cost = lift_cost(&scalar);
            let nodes = crate::ir::visit::post_order(&scalar).len();
            Some(Candidate {
                scalar,
                wide,
                cost,
                nodes,
            })
        })
        .enumerate()
        .collect();
    out.sort_by(|(i, a), (j, b)| {
        a.cost
            .cmp(&b.cost)
            .then(a.nodes.cmp(&b.nodes))
            .then(i.cmp(j))
    });
    let cheaper = out.iter().take_while(|(_, c)| c.cost < today).count();
    out.truncate(cheaper + 1);
    out.into_iter().map(|(_, c)| c).collect()
}

/// Proves the candidates cheaper than `today` in order until one is proved: that one,
/// generalized over its constant where the prover allows, becomes the verdict. A
/// candidate the rule loader refuses (it would duplicate a variable, which lifting rules
/// may not) is passed over.
#[allow(clippy::too_many_arguments)]
fn prove_cheapest(
    term: &Term,
    scalar_term: &Expr,
    today: Cost,
    candidates: Vec<Candidate>,
    opts: &Options,
    index: usize,
    envs: &mut Vec<Env>,
    report: &mut TermReport,
) {
    let prover = |r: &str| super::prove_as(r, RuleKind::Lift, None, &opts.verify);
    let mut learned: Vec<Env> = Vec::new();
    let name = format!("synth_lift_{}_{index}", term.name);
    let scalar = Term {
        name: term.name.clone(),
        expr: scalar_term.clone(),
    };
    for c in candidates {
        if c.cost >= today {
            if matches!(report.verdict, Verdict::NoneFound) {
                report.verdict = Verdict::NotCheaper {
                    cost: c.cost.bits as f64,
                };
            }
            break;
        }
        if learned
            .iter()
            .any(|env| super::differs(&term.expr, &c.wide, env))
        {
            report.stats.pruned += 1;
            continue;
        }
        let header = |generalized: bool| {
            let range = if generalized {
                " Found at that constant; proved as `c0` over the range below."
            } else {
                ""
            };
            format!(
                ";; `{scalar_term}` ({}): lifting cost {today} -> {}, proved with z3.{range}\n",
                term.name, c.cost
            )
        };
        let mut rule = header(false);
        let _ = writeln!(
            rule,
            "rule {name}({}):\n    {scalar_term} => {}",
            super::rule_params(&scalar),
            c.scalar
        );
        match prover(&rule) {
            Ok(None) => {
                let rule = super::generalize::generalize(
                    &scalar,
                    &c.scalar,
                    &header(true),
                    &name,
                    &prover,
                )
                .unwrap_or(rule);
                let carried = carry_to_widths(&scalar, &c.scalar, &name, &prover);
                report.stats.abstracted = carried.len();
                let rule = std::iter::once(rule).chain(carried).collect::<String>();
                report.verdict = Verdict::Found {
                    rhs: c.scalar.to_string(),
                    cost: c.cost.bits as f64,
                    rule,
                };
                return;
            }
            Ok(Some(cex)) => {
                report.stats.refuted += 1;
                // The prover's inputs may be at another lane count than the search's;
                // learned only where they bind the term's variables at its types.
                if let Some(env) = env_of_counterexample(&term.expr, &cex)
                    && super::differs(&term.expr, &c.wide, &env)
                {
                    report.stats.learned += 1;
                    envs.push(env.clone());
                    learned.push(env);
                }
            }
            Err(e) if e.starts_with("a synthesized rule does not load") => continue,
            Err(e) => {
                report.verdict = Verdict::Skipped(e);
                return;
            }
        }
    }
}

/// The rule `term => rhs` carried to other element widths (every width scaled alike by a
/// power of two, signedness kept; MISAAL's abstraction over types), kept where it is still
/// cheaper, its constants fit, and the prover agrees; each generalized over its constant
/// like the found one.
fn carry_to_widths(term: &Term, rhs: &Expr, name: &str, prover: &super::Prover) -> Vec<String> {
    let mut out = Vec::new();
    for shift in [-3, -2, -1, 1, 2, 3] {
        let (Some(t1), Some(r1)) = (
            super::terms::retyped(&term.expr, 1, shift),
            super::terms::retyped(rhs, 1, shift),
        ) else {
            continue;
        };
        let (today, cost) = (lift_cost(&t1), lift_cost(&r1));
        if cost >= today {
            continue;
        }
        let mapped = Term {
            name: format!("{name}_as_{}", super::type_name(t1.ty())),
            expr: t1,
        };
        let header = |generalized: bool| {
            let range = if generalized {
                " Found at that constant; proved as `c0` over the range below."
            } else {
                ""
            };
            format!(
                ";; `{}`: carried from `{}`; lifting cost {today} -> {cost}, proved with z3.{range}\n",
                mapped.expr, term.expr
            )
        };
        let rule = format!(
            "{}rule {}({}):\n    {} => {}\n",
            header(false),
            mapped.name,
            super::rule_params(&mapped),
            mapped.expr,
            r1
        );
        if let Ok(None) = prover(&rule) {
            let generalized =
                super::generalize::generalize(&mapped, &r1, &header(true), &mapped.name, prover);
            out.push(generalized.unwrap_or(rule));
        }
    }
    out
}

/// The header of a lifting rule file written by `harrow synth lift` with `max_ops`.
pub fn file_header(max_ops: u32) -> String {
    format!(
        ";; Lifting rules synthesized by `harrow synth lift --max-ops {max_ops}`: each rewrites a \
         sub-expression the lifting rules left unlifted into a cheaper one under lifting's cost \
         model, proved with z3. Proposals: apply them with `harrow lift --rules FILE`, and move \
         the ones worth keeping to rules/lift.rules. Generated: do not edit; run the command \
         again.\n"
    )
}

/// The rule file for the found rules of `reports`.
pub fn rule_file(reports: &[TermReport], max_ops: u32) -> String {
    let mut s = file_header(max_ops);
    let mut seen = HashSet::new();
    for r in reports {
        if let Verdict::Found { rule, .. } = &r.verdict {
            s.push('\n');
            s.push_str(&super::without_repeats(rule, &mut seen));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_instructions_are_the_operations_at_every_type() {
        let instrs = instructions(4);
        let has = |key: &str| instrs.iter().any(|i| i.key == key);
        assert!(
            has("fpir widening_add (u8x4, u8x4) -> u16x4"),
            "{:?}",
            instrs[0].key
        );
        assert!(has("fpir saturating_cast (i32x4) -> u8x4"));
        assert!(has("fpir absd (i16x4, i16x4) -> u16x4"));
        // A widening of the widest type has no result type.
        assert!(
            !instrs
                .iter()
                .any(|i| i.key.starts_with("fpir widening_add (u64x4"))
        );
        // Keys are unique: the enumerator tells instructions apart by them.
        let mut keys: Vec<&str> = instrs.iter().map(|i| i.key.as_str()).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
    }
}
