//! Listing the constant assignments under which a rule fires, by evaluation.
//!
//! When a rule's wildcards range over small domains, each admissible assignment is proved
//! on its own, with the constants in the terms (a division by a concrete divisor is easy for
//! the solver or for trying every input; by a symbolic one, hopeless). The list comes from
//! evaluating the predicate and computed constants exactly as the rewriter does, so the
//! proofs cover every binding under which the rule fires. The solver cannot list the
//! divisors a 256-bit predicate admits in useful time; evaluation lists 65,536 candidates in
//! milliseconds.

use std::collections::BTreeSet;

use super::cache::Assignment;
use super::obligation::{Obligation, Slot, WildDomain};
use crate::rules::cexpr::{self, CEnv};
use crate::rules::{Inst, Rule};
use crate::syntax::parse::{Ast, AstKind, Binary};

/// At most this many assignments (of all wildcards together) are evaluated.
const SCAN_LIMIT: i128 = 1 << 17;

/// At most this many listed assignments are proved case by case.
pub const CASE_LIMIT: usize = 8192;

/// The wildcards an expression mentions.
fn wild_ids(a: &Ast, out: &mut BTreeSet<u32>) {
    match &a.kind {
        AstKind::Name(n) => {
            if crate::syntax::elab::is_wildcard(n)
                && let Ok(id) = n[1..].parse()
            {
                out.insert(id);
            }
        }
        AstKind::Call { args, .. } | AstKind::List(args) => {
            args.iter().for_each(|x| wild_ids(x, out));
        }
        AstKind::Index { index, .. } => wild_ids(index, out),
        AstKind::Typed { e, .. } | AstKind::Unary(_, e) => wild_ids(e, out),
        AstKind::Binary(_, x, y) => {
            wild_ids(x, out);
            wild_ids(y, out);
        }
        AstKind::Let { value, body, .. } => {
            wild_ids(value, out);
            wild_ids(body, out);
        }
        AstKind::Int(_) | AstKind::Float(_) | AstKind::Bool(_) => {}
    }
}

/// The top-level `&&` operands of a predicate.
fn conjuncts<'a>(a: &'a Ast, out: &mut Vec<&'a Ast>) {
    match &a.kind {
        AstKind::Binary(Binary::LogAnd, x, y) => {
            conjuncts(x, out);
            conjuncts(y, out);
        }
        _ => out.push(a),
    }
}

/// Evaluates `ast` under `wild`; `Err(())` when it needs a bound of a rule variable (the
/// listing then gives up), else whether it holds.
fn holds(ast: &Ast, inst: &Inst, wild: &dyn Fn(u32) -> Option<i128>) -> Result<bool, ()> {
    let mut needs_bounds = false;
    let mut nb = |_: &str| {
        needs_bounds = true;
        None
    };
    let mut env = CEnv {
        scope: &inst.scope,
        wild,
        bounds: &mut nb,
    };
    let r = matches!(cexpr::eval(ast, &mut env), Ok(v) if v != 0);
    if needs_bounds { Err(()) } else { Ok(r) }
}

/// The assignments under which `rule` fires, or `None` when the wildcards' domains are too
/// large (after narrowing each by the predicate's conjuncts that mention it alone), when
/// there are more than [`CASE_LIMIT`], or when the predicate needs bounds.
pub fn list_natively(rule: &Rule, inst: &Inst, ob: &Obligation) -> Option<Vec<Assignment>> {
    let wilds: Vec<(u32, WildDomain)> = ob
        .consts
        .iter()
        .filter_map(|(_, _, s)| match s {
            Slot::Wild(id, d) => Some((*id, d.clone())),
            _ => None,
        })
        .collect();
    if wilds.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(p) = &rule.decl.pred {
        conjuncts(p, &mut parts);
    }
    let mentions: Vec<BTreeSet<u32>> = parts
        .iter()
        .map(|c| {
            let mut s = BTreeSet::new();
            wild_ids(c, &mut s);
            s
        })
        .collect();
    // Each wildcard's candidates: the values its own conjuncts admit. A value they reject
    // makes the whole predicate false, so nothing is lost.
    let mut candidates: Vec<Vec<i128>> = Vec::new();
    for (id, d) in &wilds {
        let own: Vec<&Ast> = parts
            .iter()
            .zip(&mentions)
            .filter(|(_, m)| m.len() == 1 && m.contains(id))
            .map(|(c, _)| *c)
            .collect();
        let size = d.hi.checked_sub(d.lo)?.checked_add(1)?;
        if size > SCAN_LIMIT {
            return None;
        }
        let mut vals = Vec::new();
        for v in d.lo..=d.hi {
            let wf = |k: u32| (k == *id).then_some(v);
            let mut ok = true;
            for c in &own {
                if !holds(c, inst, &wf).ok()? {
                    ok = false;
                    break;
                }
            }
            if ok {
                vals.push(v);
            }
        }
        candidates.push(vals);
    }
    let total = candidates
        .iter()
        .try_fold(1i128, |acc, c| acc.checked_mul(c.len() as i128))?;
    if total > SCAN_LIMIT {
        return None;
    }
    let mut found = Vec::new();
    for k in 0..total {
        let mut a = Assignment::new();
        let mut rest = k;
        for ((id, _), vals) in wilds.iter().zip(&candidates) {
            let n = vals.len() as i128;
            a.insert(*id, vals[(rest % n) as usize]);
            rest /= n;
        }
        let wf = |id: u32| a.get(&id).copied();
        let pred_ok = match &rule.decl.pred {
            None => true,
            Some(p) => holds(p, inst, &wf).ok()?,
        };
        let mut nb = |_: &str| None;
        let mut env = CEnv {
            scope: &inst.scope,
            wild: &wf,
            bounds: &mut nb,
        };
        let fits = ob.computed.iter().all(|(ast, elem)| {
            matches!(cexpr::eval(ast, &mut env),
                Ok(v) if elem.min_value() <= v && elem.max_value().is_none_or(|m| v <= m))
        });
        if pred_ok && fits {
            if found.len() >= CASE_LIMIT {
                return None;
            }
            found.push(a);
        }
    }
    Some(found)
}
