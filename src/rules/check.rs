//! Testing rules against the reference interpreter.
//!
//! For each instantiation, both sides are built over vector inputs in which every rule
//! variable, every constant wildcard and every computed constant is its own input, so one
//! evaluation covers many assignments of constants at once (an operator treats a constant
//! operand and a variable operand alike). Lanes whose constants fail the rule's predicate
//! are not generated; bounds predicates (`upper_bound(x) <= 32767`) restrict the values
//! drawn for their variable.
//!
//! Variables of 8-bit types are covered exhaustively (every combination, for each of a set
//! of constant assignments that always includes the type's edge values); wider ones get
//! random and edge-case values. A failure names the rule, the instantiation and the input.

use std::collections::BTreeMap;

use super::pattern::{Pat, PatKind};
use super::{Inst, Rule, cexpr};
use crate::interp::{Env, Value, eval, lane};
use crate::ir::{Expr, Op};
use crate::syntax::parse::{Ast, AstKind, Binary};
use crate::types::{Elem, Type};
use crate::util::rng::{SplitMix64, edge_cases};

/// How hard to test.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Random input lanes for instantiations that are not exhaustive.
    pub random_lanes: usize,
    /// Exhaustive coverage when the rule's variables have at most this many bits in total.
    pub exhaustive_bits: u32,
    /// Constant assignments tried with each exhaustive sweep.
    pub exhaustive_const_sets: usize,
    /// Seed.
    pub seed: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            random_lanes: 100_000,
            exhaustive_bits: 16,
            exhaustive_const_sets: 12,
            seed: 0x6861_7272_6f77,
        }
    }
}

/// Outcome of testing one instantiation.
#[derive(Clone, Debug)]
pub struct InstReport {
    /// Lanes compared.
    pub lanes: u64,
    /// True when every combination of variable values was covered.
    pub exhaustive: bool,
}

/// Computed constants met while building a rule side over inputs.
#[derive(Default, Clone)]
pub struct Slots {
    /// Each computed constant and its element type; input `k<j>` is entry `j`.
    pub computed: Vec<(Ast, Elem)>,
}

/// Builds one rule side over lane-varying inputs: `v<i>` for variable `i`, `c<id>` for a
/// wildcard, `k<j>` for computed constant `j`.
pub fn build_side(p: &Pat, lanes: u32, slots: &mut Slots) -> Result<Expr, String> {
    let lanes = p.lanes.unwrap_or(lanes);
    let ty = Type::vec(p.elem, lanes);
    Ok(match &p.kind {
        PatKind::Var(i) => Expr::var(format!("v{i}").as_str(), ty),
        PatKind::Wild(id) => Expr::var(format!("c{id}:{}", p.elem).as_str(), ty),
        PatKind::Lit(v) => Expr::splat(ty, *v).map_err(|e| e.0)?,
        PatKind::Computed(k) => {
            let j = match slots
                .computed
                .iter()
                .position(|(a, e)| a.span == k.ast.span && *e == p.elem)
            {
                Some(j) => j,
                None => {
                    slots.computed.push((k.ast.clone(), p.elem));
                    slots.computed.len() - 1
                }
            };
            Expr::var(format!("k{j}").as_str(), ty)
        }
        PatKind::Op(op, args) => {
            let built = args
                .iter()
                .map(|a| build_side(a, lanes, slots))
                .collect::<Result<Vec<_>, _>>()?;
            let explicit = matches!(
                op,
                Op::Cast
                    | Op::Reinterpret
                    | Op::SaturatingCast
                    | Op::Broadcast
                    | Op::Ramp
                    | Op::Slice { .. }
                    | Op::ReduceAdd
                    | Op::ReduceMin
                    | Op::ReduceMax
            )
            .then_some(ty);
            Expr::build(op.clone(), explicit, built).map_err(|e| e.0)?
        }
    })
}

/// Every wildcard and the element types it is used at.
fn wild_elems(p: &Pat, out: &mut BTreeMap<u32, Vec<Elem>>) {
    match &p.kind {
        PatKind::Wild(id) => {
            let v = out.entry(*id).or_default();
            if !v.contains(&p.elem) {
                v.push(p.elem);
            }
        }
        PatKind::Op(_, args) => args.iter().for_each(|a| wild_elems(a, out)),
        _ => {}
    }
}

/// Interesting values of a type: every value for 8 bits or fewer, otherwise small numbers,
/// powers of two and their neighbours, and the edge cases.
fn candidates(elem: Elem, rng: &mut SplitMix64) -> Vec<i128> {
    let (lo, hi) = (elem.min_value(), elem.max_value().unwrap_or(i128::MAX));
    if elem.bits() <= 8 {
        return (lo..=hi).collect();
    }
    let mut v: Vec<i128> = (-4..=70).collect();
    for k in 0..elem.bits() as i128 {
        for d in [-1, 0, 1] {
            v.push((1i128 << k) + d);
            v.push(-(1i128 << k) + d);
        }
    }
    v.extend(edge_cases(elem).iter().map(|&b| lane::to_i128(b, elem)));
    for _ in 0..16 {
        v.push(lane::to_i128(rng.lane(elem), elem));
    }
    v.retain(|x| *x >= lo && *x <= hi);
    v.sort();
    v.dedup();
    v
}

/// Bounds the predicate puts on a variable, as conjuncts `upper_bound(x) <= E` and the like.
fn bound_conjuncts<'a>(ast: &'a Ast, out: &mut Vec<(&'a str, bool, Binary, &'a Ast)>) {
    if let AstKind::Binary(Binary::LogAnd, a, b) = &ast.kind {
        bound_conjuncts(a, out);
        bound_conjuncts(b, out);
        return;
    }
    if let AstKind::Binary(op, a, b) = &ast.kind
        && let AstKind::Call { name, args, .. } = &a.kind
        && (name == "upper_bound" || name == "lower_bound")
        && let [
            Ast {
                kind: AstKind::Name(v),
                ..
            },
        ] = args.as_slice()
    {
        out.push((v, name == "upper_bound", *op, b));
    }
}

/// The variables a rule's predicate takes the bounds of (`upper_bound(x)`,
/// `lower_bound(x)`).
fn bounded_vars(rule: &Rule) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<&Ast> = rule.decl.pred.iter().collect();
    while let Some(a) = stack.pop() {
        match &a.kind {
            AstKind::Call { name, args, .. } => {
                if name == "upper_bound" || name == "lower_bound" {
                    for arg in args {
                        if let AstKind::Name(v) = &arg.kind {
                            out.push(v.to_string());
                        }
                    }
                }
                stack.extend(args.iter());
            }
            AstKind::Unary(_, e) => stack.push(e),
            AstKind::Binary(_, x, y) => {
                stack.push(x);
                stack.push(y);
            }
            _ => {}
        }
    }
    out
}

/// Conjuncts `cK == E` (either way round) of a predicate.
fn equality_conjuncts<'a>(ast: &'a Ast, out: &mut Vec<(u32, &'a Ast)>) {
    match &ast.kind {
        AstKind::Binary(Binary::LogAnd, a, b) => {
            equality_conjuncts(a, out);
            equality_conjuncts(b, out);
        }
        AstKind::Binary(Binary::Eq, a, b) => {
            let as_wild = |x: &Ast| match &x.kind {
                AstKind::Name(n) if crate::syntax::elab::is_wildcard(n) => {
                    n[1..].parse::<u32>().ok()
                }
                _ => None,
            };
            if let Some(k) = as_wild(a) {
                out.push((k, b));
            } else if let Some(k) = as_wild(b) {
                out.push((k, a));
            }
        }
        _ => {}
    }
}

/// Wildcards mentioned in a constant expression.
fn wildcards_in(ast: &Ast) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![ast];
    while let Some(a) = stack.pop() {
        match &a.kind {
            AstKind::Name(n) if crate::syntax::elab::is_wildcard(n) => {
                if let Ok(k) = n[1..].parse() {
                    out.push(k);
                }
            }
            AstKind::Unary(_, e) => stack.push(e),
            AstKind::Binary(_, x, y) => {
                stack.push(x);
                stack.push(y);
            }
            AstKind::Call { args, .. } => stack.extend(args.iter()),
            _ => {}
        }
    }
    out
}

/// One generated input lane: variable values, wildcard values.
struct LaneIn {
    vars: Vec<i128>,
    wilds: BTreeMap<u32, i128>,
}

/// Tests one instantiation of `rule`; `Err` describes the first disagreement.
pub fn test_inst(rule: &Rule, inst: &Inst, budget: &Budget) -> Result<InstReport, String> {
    let mut rng = SplitMix64::new(budget.seed ^ (rule.decl.line as u64).wrapping_mul(0x9e37_79b9));
    let mut wilds = BTreeMap::new();
    wild_elems(&inst.lhs, &mut wilds);
    let wild_ids: Vec<u32> = wilds.keys().copied().collect();
    // A wildcard used at several widths must have a value that fits all of them.
    let wild_elem: Vec<Elem> = wild_ids.iter().map(|id| wilds[id][0]).collect();
    let mut wild_cands: Vec<Vec<i128>> =
        wild_elem.iter().map(|e| candidates(*e, &mut rng)).collect();
    for (i, id) in wild_ids.iter().enumerate() {
        let all = &wilds[id];
        wild_cands[i].retain(|v| {
            all.iter()
                .all(|e| *v >= e.min_value() && e.max_value().is_none_or(|m| *v <= m))
        });
    }
    let conj = {
        let mut c = Vec::new();
        if let Some(p) = &rule.decl.pred {
            bound_conjuncts(p, &mut c);
        }
        c
    };
    let var_index = |n: &str| rule.vars.iter().position(|v| v == n);

    // The variable ranges a constant assignment allows (from bounds predicates).
    let ranges_for = |w: &BTreeMap<u32, i128>| -> Vec<(i128, i128)> {
        let mut r: Vec<(i128, i128)> = inst
            .vars
            .iter()
            .map(|e| (e.min_value(), e.max_value().unwrap_or(i128::MAX)))
            .collect();
        for (v, upper, op, e) in &conj {
            let Some(i) = var_index(v) else { continue };
            let wf = |id: u32| w.get(&id).copied();
            let mut nb = |_: &str| None;
            let mut env = cexpr::CEnv {
                scope: &inst.scope,
                wild: &wf,
                bounds: &mut nb,
            };
            let Ok(k) = cexpr::eval(e, &mut env) else {
                continue;
            };
            match (upper, op) {
                (true, Binary::Le) => r[i].1 = r[i].1.min(k),
                (true, Binary::Lt) => r[i].1 = r[i].1.min(k - 1),
                (false, Binary::Ge) => r[i].0 = r[i].0.max(k),
                (false, Binary::Gt) => r[i].0 = r[i].0.max(k + 1),
                _ => {}
            }
        }
        r
    };
    let pred_holds = |w: &BTreeMap<u32, i128>, ranges: &[(i128, i128)]| -> bool {
        let Some(p) = &rule.decl.pred else {
            return true;
        };
        if ranges.iter().any(|(lo, hi)| lo > hi) {
            return false;
        }
        let wf = |id: u32| w.get(&id).copied();
        let mut bf = |v: &str| var_index(v).map(|i| ranges[i]);
        let mut env = cexpr::CEnv {
            scope: &inst.scope,
            wild: &wf,
            bounds: &mut bf,
        };
        matches!(cexpr::eval(p, &mut env), Ok(v) if v != 0)
    };
    // Bounds predicates that are not simple conjuncts (`upper_bound(x) + upper_bound(y) <=
    // T.max`): shrink the ranges of the variables toward zero until the predicate holds.
    let uses_bounds = rule
        .decl
        .pred
        .as_ref()
        .is_some_and(|p| crate::rules::ast_text(&rule.decl.src, p).contains("_bound("));
    let ranges_for = |w: &BTreeMap<u32, i128>| -> Vec<(i128, i128)> {
        let r = ranges_for(w);
        if !uses_bounds || pred_holds(w, &r) {
            return r;
        }
        for k in 1..=126 {
            let shrunk: Vec<(i128, i128)> = r.iter().map(|(lo, hi)| (lo >> k, hi >> k)).collect();
            if pred_holds(w, &shrunk) {
                return shrunk;
            }
        }
        // A predicate that orders the bounds of two variables (`upper_bound(x) <
        // lower_bound(y)`) holds where each lies in its own half of the type's range:
        // try the variables the predicate bounds in the lower or the upper half.
        let bounded = bounded_vars(rule);
        let split: Vec<usize> = (0..r.len())
            .filter(|&i| bounded.contains(&rule.vars[i]))
            .collect();
        if split.len() <= 4 {
            for halves in 0..1u32 << split.len() {
                let mut h = r.clone();
                for (bit, &i) in split.iter().enumerate() {
                    let (lo, hi) = r[i];
                    let mid = lo + (hi - lo) / 2;
                    h[i] = if halves >> bit & 1 == 0 {
                        (lo, mid)
                    } else {
                        (mid + 1, hi)
                    };
                }
                if pred_holds(w, &h) {
                    return h;
                }
            }
        }
        r
    };
    let pred_ok =
        |w: &BTreeMap<u32, i128>, ranges: &[(i128, i128)]| -> bool { pred_holds(w, ranges) };

    // Constant assignments that satisfy the predicate. Wildcards fixed by an equality
    // conjunct (`c1 == 1 << (c0 - 1)`) are computed from the others; the rest range over
    // their candidates (the cross product when small, a random sample otherwise).
    let eqs = {
        let mut e = Vec::new();
        if let Some(p) = &rule.decl.pred {
            equality_conjuncts(p, &mut e);
        }
        e
    };
    let mut defined: Vec<(u32, &Ast)> = Vec::new();
    let mut known: Vec<u32> = Vec::new();
    // Repeatedly take equalities whose right side only uses known or free wildcards.
    let free_ids: Vec<u32> = wild_ids
        .iter()
        .copied()
        .filter(|id| !eqs.iter().any(|(k, _)| k == id))
        .collect();
    known.extend(free_ids.iter().copied());
    loop {
        let before = defined.len();
        for (k, e) in &eqs {
            if known.contains(k) || defined.iter().any(|(d, _)| d == k) {
                continue;
            }
            if wildcards_in(e).iter().all(|w| known.contains(w)) {
                defined.push((*k, e));
                known.push(*k);
            }
        }
        if defined.len() == before {
            break;
        }
    }
    // Wildcards in a cycle of equalities fall back to enumeration.
    let free_ids: Vec<u32> = wild_ids
        .iter()
        .copied()
        .filter(|id| !defined.iter().any(|(d, _)| d == id))
        .collect();
    let free_cands: Vec<&Vec<i128>> = free_ids
        .iter()
        .map(|id| &wild_cands[wild_ids.iter().position(|x| x == id).expect("a wildcard")])
        .collect();
    let total: usize = free_cands.iter().map(|c| c.len().max(1)).product();
    let mut assignments: Vec<BTreeMap<u32, i128>> = Vec::new();
    let consider = |k: usize, out: &mut Vec<BTreeMap<u32, i128>>| {
        let mut idx = k;
        let mut w = BTreeMap::new();
        for (i, id) in free_ids.iter().enumerate() {
            let c = free_cands[i];
            if c.is_empty() {
                return;
            }
            w.insert(*id, c[idx % c.len()]);
            idx /= c.len();
        }
        for (id, e) in &defined {
            let wf = |x: u32| w.get(&x).copied();
            let mut nb = |_: &str| None;
            let mut env = cexpr::CEnv {
                scope: &inst.scope,
                wild: &wf,
                bounds: &mut nb,
            };
            let Ok(v) = cexpr::eval(e, &mut env) else {
                return;
            };
            let elems = &wilds[id];
            if !elems
                .iter()
                .all(|el| v >= el.min_value() && el.max_value().is_none_or(|m| v <= m))
            {
                return;
            }
            w.insert(*id, v);
        }
        let r = ranges_for(&w);
        if pred_ok(&w, &r) {
            out.push(w);
        }
    };
    if total <= 20_000 {
        for k in 0..total {
            consider(k, &mut assignments);
        }
    } else {
        for _ in 0..20_000 {
            let k = rng.below(total as u64) as usize;
            consider(k, &mut assignments);
        }
    }
    if assignments.is_empty() {
        // Nothing satisfies the predicate among the candidates; the rule can still be
        // proved by the solver, but testing it here is impossible.
        return Ok(InstReport {
            lanes: 0,
            exhaustive: false,
        });
    }

    let var_bits: u32 = inst.vars.iter().map(|e| e.bits()).sum();
    let exhaustive = var_bits <= budget.exhaustive_bits && inst.vars.iter().all(|e| e.bits() <= 8);
    let mut lanes: Vec<LaneIn> = Vec::new();
    if exhaustive {
        // Spread the exhaustive sweeps over the constant assignments: the first and last
        // (edge values) and evenly spaced ones in between.
        let n = assignments.len();
        let picks: Vec<usize> = if n <= budget.exhaustive_const_sets {
            (0..n).collect()
        } else {
            let mut p: Vec<usize> = (0..budget.exhaustive_const_sets)
                .map(|i| i * (n - 1) / (budget.exhaustive_const_sets - 1))
                .collect();
            p.dedup();
            p
        };
        for &a in &picks {
            let w = &assignments[a];
            let r = ranges_for(w);
            let sizes: Vec<i128> = r.iter().map(|(lo, hi)| hi - lo + 1).collect();
            let combos: i128 = sizes.iter().product();
            for k in 0..combos {
                let mut idx = k;
                let vars = r
                    .iter()
                    .zip(&sizes)
                    .map(|((lo, _), s)| {
                        let v = lo + idx % s;
                        idx /= s;
                        v
                    })
                    .collect();
                lanes.push(LaneIn {
                    vars,
                    wilds: w.clone(),
                });
            }
        }
    }
    // Random lanes (all instantiations): a random constant assignment and random values
    // within its ranges, a quarter of them edge values.
    let random = if exhaustive {
        budget.random_lanes / 10
    } else {
        budget.random_lanes
    };
    // Each assignment's ranges once: finding them evaluates the predicate up to a few
    // hundred times where it bounds several variables against each other.
    let assignment_ranges: Vec<Vec<(i128, i128)>> = assignments.iter().map(ranges_for).collect();
    for _ in 0..random {
        let k = rng.below(assignments.len() as u64) as usize;
        let (w, r) = (&assignments[k], &assignment_ranges[k]);
        let vars = inst
            .vars
            .iter()
            .zip(r)
            .map(|(e, (lo, hi))| {
                let v = lane::to_i128(rng.lane(*e), *e);
                if v < *lo || v > *hi {
                    rng.range_i128(*lo, *hi)
                } else {
                    v
                }
            })
            .collect();
        lanes.push(LaneIn {
            vars,
            wilds: w.clone(),
        });
    }

    let mut compared = 0u64;
    for chunk in lanes.chunks(4096) {
        compared += check_chunk(rule, inst, chunk)? as u64;
    }
    Ok(InstReport {
        lanes: compared,
        exhaustive,
    })
}

fn check_chunk(rule: &Rule, inst: &Inst, chunk: &[LaneIn]) -> Result<usize, String> {
    let mut slots = Slots::default();
    let n = chunk.len() as u32;
    let lhs = build_side(&inst.lhs, n, &mut slots)?;
    let rhs = build_side(&inst.rhs, n, &mut slots)?;
    // Computed constants per lane; a lane whose constant has no value (or does not fit) is
    // one where the rule would not fire, so it is dropped.
    let mut keep = vec![true; chunk.len()];
    let mut computed: Vec<Vec<i128>> = vec![vec![0; chunk.len()]; slots.computed.len()];
    for (l, li) in chunk.iter().enumerate() {
        for (j, (ast, elem)) in slots.computed.iter().enumerate() {
            let wf = |id: u32| li.wilds.get(&id).copied();
            let mut nb = |_: &str| None;
            let mut env = cexpr::CEnv {
                scope: &inst.scope,
                wild: &wf,
                bounds: &mut nb,
            };
            match cexpr::eval(ast, &mut env) {
                Ok(v) if v >= elem.min_value() && elem.max_value().is_none_or(|m| v <= m) => {
                    computed[j][l] = v
                }
                _ => keep[l] = false,
            }
        }
    }
    let mut env = Env::new();
    for (i, e) in inst.vars.iter().enumerate() {
        let vals: Vec<i128> = chunk.iter().map(|li| li.vars[i]).collect();
        env.set(format!("v{i}"), Value::from_ints(*e, &vals));
    }
    let mut wilds = BTreeMap::new();
    wild_elems(&inst.lhs, &mut wilds);
    wild_elems(&inst.rhs, &mut wilds);
    for (id, elems) in &wilds {
        for e in elems {
            let vals: Vec<i128> = chunk
                .iter()
                .map(|li| li.wilds.get(id).copied().unwrap_or(0))
                .collect();
            env.set(format!("c{id}:{e}"), Value::from_ints(*e, &vals));
        }
    }
    for (j, (_, e)) in slots.computed.iter().enumerate() {
        env.set(format!("k{j}"), Value::from_ints(*e, &computed[j]));
    }
    let a = eval(&lhs, &env).map_err(|e| e.to_string())?;
    let b = eval(&rhs, &env).map_err(|e| e.to_string())?;
    let mut count = 0;
    for l in 0..chunk.len() {
        if !keep[l] {
            continue;
        }
        count += 1;
        if a.lanes[l] != b.lanes[l] {
            let li = &chunk[l];
            let vars: Vec<String> = rule
                .vars
                .iter()
                .zip(&li.vars)
                .map(|(n, v)| format!("{n} = {v}"))
                .collect();
            let ws: Vec<String> = li
                .wilds
                .iter()
                .map(|(id, v)| format!("c{id} = {v}"))
                .collect();
            return Err(format!(
                "rule `{}` ({}) is wrong for {}: with {}{}{} the left-hand side gives {} but the right-hand side gives {}",
                rule.decl.name,
                rule.decl.location(),
                inst.describe(),
                vars.join(", "),
                if ws.is_empty() { "" } else { ", " },
                ws.join(", "),
                a.int(l),
                b.int(l)
            ));
        }
    }
    Ok(count)
}

/// Tests every instantiation of every rule; returns (rule name, instantiation, report or
/// error) in order.
pub fn test_rules(
    rules: &[Rule],
    budget: &Budget,
) -> Vec<(String, String, Result<InstReport, String>)> {
    let mut out = Vec::new();
    for r in rules {
        for inst in &r.insts {
            out.push((
                r.decl.name.clone(),
                inst.describe(),
                test_inst(r, inst, budget),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::rules::{RuleKind, RuleSet};

    #[test]
    fn every_builtin_lifting_rule_agrees_with_the_interpreter() {
        assert_every_rule_agrees(crate::lift::builtin_rules().unwrap_or_else(|d| panic!("{d}")));
    }

    #[test]
    fn every_builtin_equality_agrees_with_the_interpreter() {
        assert_every_rule_agrees(crate::lift::algebra_rules().unwrap_or_else(|d| panic!("{d}")));
    }

    fn assert_every_rule_agrees(rules: &RuleSet) {
        let results = test_rules(&rules.rules, &Budget::default());
        let mut failures = Vec::new();
        let mut untested = Vec::new();
        let (mut lanes, mut exhaustive) = (0u64, 0);
        for (name, inst, r) in &results {
            match r {
                Ok(rep) if rep.lanes == 0 => untested.push(format!("{name} ({inst})")),
                Ok(rep) => {
                    lanes += rep.lanes;
                    exhaustive += rep.exhaustive as usize;
                }
                Err(e) => failures.push(e.clone()),
            }
        }
        println!(
            "{} rules, {} instantiations ({} exhaustive), {} lanes compared",
            rules.rules.len(),
            results.len(),
            exhaustive,
            lanes
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(
            untested.is_empty(),
            "no test input satisfies the predicate of: {}",
            untested.join(", ")
        );
    }

    #[test]
    fn a_wrong_rule_is_caught_with_a_readable_counterexample() {
        // Forgets that the sum can overflow: wrong for large inputs.
        let text = "rule bad_average(x: T, y: T) where T unsigned:\n    (x + y) >> c0 => halving_add(x, y) if c0 == 1\n";
        let set = RuleSet::load(&Source::new("bad.rules", text), RuleKind::Lift).unwrap();
        let inst = &set.rules[0].insts[0];
        let err = test_inst(&set.rules[0], inst, &Budget::default()).unwrap_err();
        assert!(
            err.contains("rule `bad_average` (bad.rules:1) is wrong for T = u8"),
            "{err}"
        );
        assert!(err.contains("the left-hand side gives"), "{err}");
    }
}
