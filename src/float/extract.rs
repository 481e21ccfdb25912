//! Extraction of the vector program from the saturated e-graph, paying each shared value
//! once. egg's extractor (`tree_choice` makes its choice with less work) minimizes the
//! cost of the program as a tree, which counts a value used by several lanes or registers
//! once per use: on kernels whose values are widely shared (QR's columns and norms) its
//! choice is far from the cheapest program. Here its choice is only a start: it and the
//! all-scalar program are each improved by local search, switching one e-class at a time
//! to another of its nodes while the cost of the program as a DAG (what the emitted C
//! computes, one variable per class) falls, within a time budget; the cheaper is kept.

use std::time::{Duration, Instant};

use egg::{CostFunction, Id, Language};

use super::cost::TargetCost;
use super::lang::VecLang;
use super::vectorize::VGraph;
use crate::util::idhash::{IdMap, IdSet};

/// The chosen node of every e-class the program uses.
#[derive(Clone, Debug, Default)]
pub struct Picks {
    node: IdMap<Id, VecLang>,
}

impl Picks {
    /// Chooses `node` for class `id`.
    pub fn set(&mut self, id: Id, node: VecLang) {
        self.node.insert(id, node);
    }

    /// The chosen node of class `id`.
    pub fn node(&self, id: Id) -> &VecLang {
        &self.node[&id]
    }
}

/// Extracts the program computing `roots` (canonical ids) from `eg` under `model`.
pub fn extract(
    eg: &VGraph,
    model: &mut TargetCost,
    roots: &[Id],
    budget: Duration,
) -> (Picks, u64) {
    let start = Instant::now();
    let tree = Picks {
        node: tree_choice(eg, model),
    };
    // The all-scalar program: every register from its lanes as written.
    let mut scalar = tree.clone();
    for class in eg.classes() {
        if let Some(v) = class.nodes.iter().find(|n| matches!(n, VecLang::Vec(_))) {
            scalar.node.insert(class.id, v.clone());
        }
    }
    // Local search from both starts (they reach different local minima), each in half
    // the time left; the cheaper result is kept.
    let mut best: Option<(Picks, u64)> = None;
    let starts = [tree, scalar];
    for (k, picks) in starts.iter().enumerate() {
        // A start whose picks form a cycle (no program) is not searched from.
        let Some(cost) = dag_cost(eg, model, picks, roots) else {
            continue;
        };
        let left = budget.saturating_sub(start.elapsed());
        let deadline = Instant::now() + left / (2 - k as u32);
        let found = improve(eg, model, roots, picks.clone(), cost, deadline);
        if best.as_ref().is_none_or(|(_, c)| found.1 < *c) {
            best = Some(found);
        }
    }
    best.unwrap_or_else(|| {
        let [tree, _] = starts;
        (tree, u64::MAX)
    })
}

/// Local search from `picks` (of DAG cost `best`) over the classes with a choice, those
/// the program uses first: one class at a time switched to another of its nodes while the
/// cost falls, until nothing does or `deadline`.
fn improve(
    eg: &VGraph,
    model: &mut TargetCost,
    roots: &[Id],
    mut picks: Picks,
    mut best: u64,
    deadline: Instant,
) -> (Picks, u64) {
    let mut improved = true;
    while improved && Instant::now() < deadline {
        improved = false;
        let used = reachable(eg, model, &picks, roots);
        for id in used {
            let alternatives: Vec<VecLang> = eg[id].nodes.clone();
            if alternatives.len() < 2 {
                continue;
            }
            for alt in alternatives {
                if Instant::now() >= deadline {
                    break;
                }
                if &alt == picks.node(id) {
                    continue;
                }
                let old = picks.node.insert(id, alt).expect("every class has a pick");
                match dag_cost(eg, model, &picks, roots) {
                    Some(c) if c < best => {
                        best = c;
                        improved = true;
                    }
                    _ => {
                        picks.node.insert(id, old);
                    }
                }
            }
        }
    }
    (picks, best)
}

/// The node of least cost as a tree in every class: egg's `Extractor`, which prices every
/// class in `classes()` order, pass after pass, until a pass changes nothing, and keeps in
/// a class the first node to reach its least cost. Here a pass prices only the classes
/// with a child that got cheaper since they were last priced (a class whose children did
/// not change would price the same), so the choice is egg's at a fraction of the work.
fn tree_choice(eg: &VGraph, model: &mut TargetCost) -> IdMap<Id, VecLang> {
    let order: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let position: IdMap<Id, usize> = order.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let mut dirty = vec![true; order.len()];
    let mut best: IdMap<Id, (u64, VecLang)> = IdMap::default();
    let mut changed = true;
    while changed {
        changed = false;
        for (i, &id) in order.iter().enumerate() {
            if !std::mem::replace(&mut dirty[i], false) {
                continue;
            }
            let class = &eg[id];
            let mut cheapest: Option<(u64, &VecLang)> = None;
            for n in &class.nodes {
                if !n.all(|c| best.contains_key(&eg.find(c))) {
                    continue;
                }
                let c = model.cost(n, |c| best[&eg.find(c)].0);
                if cheapest.is_none_or(|(b, _)| c < b) {
                    cheapest = Some((c, n));
                }
            }
            let Some((c, node)) = cheapest else { continue };
            if best.get(&id).is_some_and(|&(old, _)| old <= c) {
                continue;
            }
            best.insert(id, (c, node.clone()));
            changed = true;
            for p in class.parents() {
                dirty[position[&eg.find(p)]] = true;
            }
        }
    }
    best.into_iter().map(|(id, (_, n))| (id, n)).collect()
}

/// Whether a register node's lanes are read by its leaf plan rather than computed.
fn is_leaf_register(model: &TargetCost, node: &VecLang) -> bool {
    matches!(node, VecLang::Vec(l) if model.leaf_lanes(l).is_some())
}

/// The classes the picked program uses, from the roots down.
fn reachable(eg: &VGraph, model: &TargetCost, picks: &Picks, roots: &[Id]) -> Vec<Id> {
    let mut seen = IdSet::default();
    let mut order = Vec::new();
    let mut stack: Vec<Id> = roots.iter().map(|&r| eg.find(r)).collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        order.push(id);
        let node = picks.node(id);
        if !is_leaf_register(model, node) {
            stack.extend(node.children().iter().map(|&c| eg.find(c)));
        }
    }
    order
}

/// The cost of the picked program with each class paid once; `None` when the picks form a
/// cycle (a class computed from itself).
pub fn dag_cost(eg: &VGraph, model: &mut TargetCost, picks: &Picks, roots: &[Id]) -> Option<u64> {
    // 0: unvisited, 1: on the path, 2: done.
    let mut state: IdMap<Id, u8> = IdMap::default();
    let mut total = 0u64;
    let mut stack: Vec<(Id, bool)> = roots.iter().map(|&r| (eg.find(r), false)).collect();
    while let Some((id, exiting)) = stack.pop() {
        if exiting {
            state.insert(id, 2);
            continue;
        }
        match state.get(&id) {
            Some(2) => continue,
            Some(1) => return None,
            _ => {}
        }
        state.insert(id, 1);
        stack.push((id, true));
        let node = picks.node(id);
        total = total.saturating_add(model.cost(node, |_| 0));
        if !is_leaf_register(model, node) {
            for &c in node.children() {
                let c = eg.find(c);
                match state.get(&c) {
                    Some(1) => return None,
                    Some(2) => {}
                    _ => stack.push((c, false)),
                }
            }
        }
    }
    Some(total)
}
