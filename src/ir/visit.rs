//! Traversals over the expression DAG: post-order listing, bottom-up rebuilding with
//! sharing preserved, free variables, buffers, substitution and let-inlining.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{Expr, Op, Sym, TypeError};
use crate::types::{Elem, Type};

/// Every distinct node reachable from `root`, children before parents.
pub fn post_order(root: &Expr) -> Vec<Expr> {
    post_order_unknown(root, |_| false)
}

/// The nodes of the DAG in post-order, without the nodes `known` accepts and the nodes
/// reachable only through them: what a memo over nodes has not seen yet, in an order in
/// which each node comes after its operands.
pub fn post_order_unknown(root: &Expr, known: impl Fn(&Expr) -> bool) -> Vec<Expr> {
    let mut out = Vec::new();
    // Memos ask about nodes they mostly know already: nothing to allocate for those.
    if known(root) {
        return out;
    }
    let mut seen = crate::util::idhash::IdSet::default();
    // Explicit stack: expressions from the corpus nest deeply enough to matter. It borrows
    // the nodes (every one is reachable from `root`), so walking costs no reference counts.
    let mut stack: Vec<(&Expr, bool)> = vec![(root, false)];
    while let Some((e, expanded)) = stack.pop() {
        if expanded {
            out.push(e.clone());
            continue;
        }
        if known(e) || !seen.insert(e.id()) {
            continue;
        }
        stack.push((e, true));
        for a in e.args().iter().rev() {
            if !seen.contains(&a.id()) {
                stack.push((a, false));
            }
        }
    }
    out
}

/// Rebuilds the DAG bottom-up: `f` receives each original node and its already-rebuilt
/// operands and returns the replacement. Each distinct node is visited once.
pub fn rebuild<E>(
    root: &Expr,
    mut f: impl FnMut(&Expr, Vec<Expr>) -> Result<Expr, E>,
) -> Result<Expr, E> {
    let mut memo: HashMap<usize, Expr> = HashMap::new();
    for e in post_order(root) {
        let args: Vec<Expr> = e.args().iter().map(|a| memo[&a.id()].clone()).collect();
        let new = f(&e, args)?;
        memo.insert(e.id(), new);
    }
    Ok(memo.remove(&root.id()).expect("root was visited"))
}

/// Variables used but not bound by an enclosing `let`, with their types, sorted by name.
pub fn free_vars(root: &Expr) -> BTreeMap<Sym, Type> {
    let mut out = BTreeMap::new();
    let mut seen = HashSet::new();
    free_vars_rec(root, &mut Vec::new(), &mut out, &mut seen);
    out
}

fn free_vars_rec(
    e: &Expr,
    bound: &mut Vec<Sym>,
    out: &mut BTreeMap<Sym, Type>,
    seen: &mut HashSet<(usize, usize)>,
) {
    // The same node under the same binding depth gives the same answer; with lets the
    // bound set can differ by depth only, which is what the key records.
    if !seen.insert((e.id(), bound.len())) {
        return;
    }
    match e.op() {
        Op::Var(name) => {
            if !bound.contains(name) {
                out.insert(name.clone(), e.ty());
            }
        }
        Op::Let(name) => {
            free_vars_rec(e.arg(0), bound, out, seen);
            bound.push(name.clone());
            free_vars_rec(e.arg(1), bound, out, seen);
            bound.pop();
        }
        _ => {
            for a in e.args() {
                free_vars_rec(a, bound, out, seen);
            }
        }
    }
}

/// Buffers loaded from, with their element types, sorted by name.
pub fn buffers(root: &Expr) -> BTreeMap<Sym, Elem> {
    let mut out = BTreeMap::new();
    for e in post_order(root) {
        if let Op::Load(name, _) = e.op() {
            out.insert(name.clone(), e.ty().elem);
        }
    }
    out
}

/// Replaces the nodes of `root` whose id `map` holds (anywhere they occur) by the given
/// expressions, rebuilding what is above them.
pub fn replace_nodes(root: &Expr, map: &HashMap<usize, Expr>) -> Result<Expr, TypeError> {
    rebuild(root, |n, args| match map.get(&n.id()) {
        Some(v) => Ok(v.clone()),
        None => n.with_args(args),
    })
}

/// Replaces free occurrences of variables by expressions of the same type.
pub fn substitute(root: &Expr, map: &HashMap<Sym, Expr>) -> Result<Expr, TypeError> {
    if map.is_empty() {
        return Ok(root.clone());
    }
    let mut memo = HashMap::new();
    subst_rec(root, map, &mut memo)
}

fn subst_rec(
    e: &Expr,
    map: &HashMap<Sym, Expr>,
    memo: &mut HashMap<usize, Expr>,
) -> Result<Expr, TypeError> {
    if let Some(r) = memo.get(&e.id()) {
        return Ok(r.clone());
    }
    let r = match e.op() {
        Op::Var(name) => match map.get(name) {
            Some(v) if v.ty() == e.ty() => v.clone(),
            Some(v) => {
                return Err(TypeError(format!(
                    "cannot substitute {} for `{name}` of type {}",
                    v.ty(),
                    e.ty()
                )));
            }
            None => e.clone(),
        },
        Op::Let(name) if map.contains_key(name) => {
            // The binding shadows the substitution inside the body.
            let value = subst_rec(e.arg(0), map, memo)?;
            let mut inner = map.clone();
            inner.remove(name);
            let body = substitute(e.arg(1), &inner)?;
            e.with_args(vec![value, body])?
        }
        _ => {
            let args = e
                .args()
                .iter()
                .map(|a| subst_rec(a, map, memo))
                .collect::<Result<Vec<_>, _>>()?;
            e.with_args(args)?
        }
    };
    memo.insert(e.id(), r.clone());
    Ok(r)
}

/// Replaces every `let` by its value substituted into the body. Sharing is kept by the
/// hash-consing, so this does not blow up the DAG.
pub fn inline_lets(root: &Expr) -> Expr {
    let mut memo = HashMap::new();
    inline_rec(root, &mut memo)
}

fn inline_rec(e: &Expr, memo: &mut HashMap<usize, Expr>) -> Expr {
    if let Some(r) = memo.get(&e.id()) {
        return r.clone();
    }
    let r = match e.op() {
        Op::Let(name) => {
            let value = inline_rec(e.arg(0), memo);
            let body = inline_rec(e.arg(1), memo);
            let mut m = HashMap::new();
            m.insert(name.clone(), value);
            substitute(&body, &m).expect("a let value has its variable's type")
        }
        _ => {
            let args = e.args().iter().map(|a| inline_rec(a, memo)).collect();
            e.with_args(args)
                .expect("rebuilding with same-typed operands")
        }
    };
    memo.insert(e.id(), r.clone());
    r
}

/// True if any node in the DAG satisfies `pred` (which should not have side effects:
/// the search stops at the first node that does, in no particular order).
pub fn any_node(root: &Expr, pred: impl FnMut(&Expr) -> bool) -> bool {
    any_node_above(root, &crate::util::idhash::IdSet::default(), pred)
}

/// Whether `pred` holds for a node of `root`'s DAG, not counting the nodes in `stop` and
/// what lies below them (a definition over its operands: what they compute is theirs).
pub fn any_node_above(
    root: &Expr,
    stop: &crate::util::idhash::IdSet<usize>,
    mut pred: impl FnMut(&Expr) -> bool,
) -> bool {
    let mut seen = stop.clone();
    let mut stack = vec![root.clone()];
    while let Some(e) = stack.pop() {
        if !seen.insert(e.id()) {
            continue;
        }
        if pred(&e) {
            return true;
        }
        stack.extend(e.args().iter().rev().cloned());
    }
    false
}
