//! Splitting an obligation into one query per output lane, up to renaming.
//!
//! "Some lane differs" is unsatisfiable exactly when each lane's "this lane differs" is, so a
//! wide obligation (a lowering rule over 64 or 128 lanes) splits into one query per lane.
//! Each lane query keeps only the assumptions about the constants it mentions (dropping an
//! assumption proves a stronger statement, so a proof stays a proof) and renames its
//! constants in order of first appearance; lanes that compute the same thing on different
//! inputs (every lane of a lane-wise rule, or the even and the odd lanes of a deinterleaving
//! one) then give the same query text, and each distinct text is proved once.

use std::collections::{BTreeMap, HashMap, HashSet};

use easy_smt::{Context, SExpr, SExprData};

use super::obligation::Obligation;

/// One distinct lane query.
pub struct LaneQuery {
    /// Renamed declarations: new name, width, original name.
    pub consts: Vec<(String, u32, String)>,
    /// The assertion over the renamed constants.
    pub assertion: SExpr,
    /// Its text (declarations and assertion): the hash key of the query.
    pub text: String,
}

/// The declared constants an expression mentions, in order of first appearance.
fn atoms_in(ctx: &Context, e: SExpr, declared: &HashSet<&str>, out: &mut Vec<String>) {
    let mut seen: HashSet<SExpr> = HashSet::new();
    let mut found: HashSet<String> = HashSet::new();
    let mut stack = vec![e];
    // Depth-first, left to right, visiting each shared node once.
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        match ctx.get(x) {
            SExprData::Atom(a) => {
                if declared.contains(a) && found.insert(a.to_string()) {
                    out.push(a.to_string());
                }
            }
            SExprData::List(items) => {
                for &i in items.iter().rev() {
                    stack.push(i);
                }
            }
            SExprData::String(_) => {}
        }
    }
}

/// `e` with atoms renamed by `map`.
fn rename(
    ctx: &Context,
    e: SExpr,
    map: &HashMap<String, String>,
    memo: &mut HashMap<SExpr, SExpr>,
) -> SExpr {
    if let Some(r) = memo.get(&e) {
        return *r;
    }
    let r = match ctx.get(e) {
        SExprData::Atom(a) => match map.get(a) {
            Some(n) => ctx.atom(n.as_str()),
            None => e,
        },
        SExprData::List(items) => {
            let items: Vec<SExpr> = items.to_vec();
            let new: Vec<SExpr> = items.iter().map(|&i| rename(ctx, i, map, memo)).collect();
            if new == items { e } else { ctx.list(new) }
        }
        SExprData::String(_) => e,
    };
    memo.insert(e, r);
    r
}

/// The distinct lane queries of an obligation, or `None` when it has no open lane. A single
/// open lane is still worth a query of its own: it drops the assumptions about constants it
/// no longer mentions (a pinned wildcard, say).
pub fn lane_queries(ctx: &Context, ob: &Obligation) -> Option<Vec<LaneQuery>> {
    if ob.pairs.is_empty() {
        return None;
    }
    let widths: BTreeMap<&str, u32> = ob.consts.iter().map(|(n, w, _)| (n.as_str(), *w)).collect();
    let declared: HashSet<&str> = widths.keys().copied().collect();
    // The constants each assumption mentions.
    let conj_atoms: Vec<(SExpr, HashSet<String>)> = ob
        .conjuncts
        .iter()
        .map(|&c| {
            let mut v = Vec::new();
            atoms_in(ctx, c, &declared, &mut v);
            (c, v.into_iter().collect())
        })
        .collect();
    let mut out: Vec<LaneQuery> = Vec::new();
    let mut texts: HashSet<String> = HashSet::new();
    for &(l, r) in &ob.pairs {
        let differ = ctx.not(ctx.eq(l, r));
        let mut mine = Vec::new();
        atoms_in(ctx, differ, &declared, &mut mine);
        let mut have: HashSet<String> = mine.iter().cloned().collect();
        // Assumptions whose constants this lane mentions; bounds and wildcards they bring
        // in may carry further assumptions (a bound lies within its type), so close over
        // them.
        let mut chosen: Vec<SExpr> = Vec::new();
        let mut taken = vec![false; conj_atoms.len()];
        loop {
            let mut grew = false;
            for (k, (c, atoms)) in conj_atoms.iter().enumerate() {
                if taken[k] || atoms.is_empty() {
                    continue;
                }
                // Per-lane facts about other lanes' inputs stay out; facts about shared
                // constants (wildcards, bounds) come in once the lane uses one of them.
                if atoms.iter().all(|a| have.contains(a) || !is_lane_input(a))
                    && atoms.iter().any(|a| have.contains(a))
                {
                    taken[k] = true;
                    chosen.push(*c);
                    for a in atoms {
                        if have.insert(a.clone()) {
                            grew = true;
                        }
                    }
                }
            }
            if !grew {
                break;
            }
        }
        let assumed = chosen.into_iter().reduce(|a, b| ctx.and(a, b));
        let body = match assumed {
            Some(a) => ctx.and(a, differ),
            None => differ,
        };
        let mut order = Vec::new();
        atoms_in(ctx, body, &declared, &mut order);
        let map: HashMap<String, String> = order
            .iter()
            .enumerate()
            .map(|(i, a)| (a.clone(), format!("x{i}")))
            .collect();
        let assertion = rename(ctx, body, &map, &mut HashMap::new());
        let consts: Vec<(String, u32, String)> = order
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("x{i}"), widths[a.as_str()], a.clone()))
            .collect();
        let mut text = String::new();
        for (n, w, _) in &consts {
            text.push_str(&format!("(declare-const {n} (_ BitVec {w}))\n"));
        }
        text.push_str(&format!("(assert {})\n", ctx.display(assertion)));
        if texts.insert(text.clone()) {
            out.push(LaneQuery {
                consts,
                assertion,
                text,
            });
        }
    }
    Some(out)
}

/// Inputs that exist once per lane (`v<i>_<lane>`, `m<k>_<lane>`), as opposed to constants
/// shared by every lane (wildcards, bounds).
fn is_lane_input(name: &str) -> bool {
    (name.starts_with('v') || name.starts_with('m')) && name.contains('_')
}
