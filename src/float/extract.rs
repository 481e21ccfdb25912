//! Extraction of the vector program from the saturated e-graph, paying each shared value
//! once. egg's extractor minimizes the cost of the program as a tree, which counts a value
//! used by several lanes or registers once per use: on kernels whose values are widely
//! shared (QR's columns and norms) its choice is far from the cheapest program. Here its
//! choice is only the start: the cheaper of it and the all-scalar program is improved by
//! local search, switching one e-class at a time to another of its nodes while the cost of
//! the program as a DAG (what the emitted C computes, one variable per class) falls, within
//! a time budget.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use egg::{CostFunction, Extractor, Id, Language};

use super::cost::TargetCost;
use super::lang::VecLang;
use super::vectorize::VGraph;

/// The chosen node of every e-class the program uses.
#[derive(Clone, Debug, Default)]
pub struct Picks {
    node: HashMap<Id, VecLang>,
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
    let tree = Extractor::new(eg, TargetCost::new(eg, model.isa, model.sizes));
    let mut picks = Picks::default();
    for class in eg.classes() {
        picks
            .node
            .insert(class.id, tree.find_best_node(class.id).clone());
    }
    // The all-scalar program: every register from its lanes as written.
    let mut scalar = picks.clone();
    for class in eg.classes() {
        if let Some(v) = class.nodes.iter().find(|n| matches!(n, VecLang::Vec(_))) {
            scalar.node.insert(class.id, v.clone());
        }
    }
    let mut best = dag_cost(eg, model, &picks, roots).unwrap_or(u64::MAX);
    if let Some(c) = dag_cost(eg, model, &scalar, roots)
        && c < best
    {
        picks = scalar;
        best = c;
    }
    // Local search over the classes with a choice, those the program uses first.
    let mut improved = true;
    while improved && start.elapsed() < budget {
        improved = false;
        let used = reachable(eg, model, &picks, roots);
        for id in used {
            let alternatives: Vec<VecLang> = eg[id].nodes.clone();
            if alternatives.len() < 2 {
                continue;
            }
            for alt in alternatives {
                if start.elapsed() >= budget {
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

/// Whether a register node's lanes are read by its leaf plan rather than computed.
fn is_leaf_register(model: &TargetCost, node: &VecLang) -> bool {
    matches!(node, VecLang::Vec(l) if model.leaf_lanes(l).is_some())
}

/// The classes the picked program uses, from the roots down.
fn reachable(eg: &VGraph, model: &TargetCost, picks: &Picks, roots: &[Id]) -> Vec<Id> {
    let mut seen = HashSet::new();
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
    let mut state: HashMap<Id, u8> = HashMap::new();
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
