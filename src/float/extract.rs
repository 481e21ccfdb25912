//! Extraction of the vector program from the saturated e-graph, paying each shared value
//! once. egg's extractor (`tree_choice` makes its choice with less work) minimizes the
//! cost of the program as a tree, which counts a value used by several lanes or registers
//! once per use: on kernels whose values are widely shared (QR's columns and norms) its
//! choice is far from the cheapest program. Here its choice is only a start: it and the
//! all-scalar program are each improved by local search, switching one e-class at a time
//! to another of its nodes while the cost of the program as a DAG (what the emitted C
//! computes, one variable per class) falls, within a time budget; the cheaper is kept.

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

/// Extracts the program computing `roots` (canonical ids) from `eg` under `model`; the
/// local search tries at most `switches_per_class` switches per e-class from each start.
pub fn extract(
    eg: &VGraph,
    model: &mut TargetCost,
    roots: &[Id],
    switches_per_class: usize,
) -> (Picks, u64) {
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
    // Local search from both starts (they reach different local minima), each within a
    // budget of work rather than time, so that the result does not depend on the
    // machine; the cheaper result is kept.
    let budget = switches_per_class.saturating_mul(eg.number_of_classes());
    let mut best: Option<(Picks, u64)> = None;
    let starts = [tree, scalar];
    for picks in &starts {
        // A start whose picks form a cycle (no program) is not searched from.
        let Some(cost) = dag_cost(eg, model, picks, roots) else {
            continue;
        };
        let found = improve(eg, model, roots, picks.clone(), cost, budget);
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
/// cost falls, until nothing does or `budget` switches have been tried. Each switch is priced by what it changes
/// ([`Program::switch`]: the classes it makes used or unused), not by pricing the whole
/// program again; a switch that lowers the cost is confirmed by the whole program's price,
/// which also refuses a cycle.
fn improve(
    eg: &VGraph,
    model: &mut TargetCost,
    roots: &[Id],
    picks: Picks,
    best: u64,
    budget: usize,
) -> (Picks, u64) {
    let mut program = Program::new(eg, model, picks, roots, best);
    let mut tried = 0usize;
    let mut improved = true;
    while improved && tried < budget {
        improved = false;
        let used = reachable(eg, model, &program.picks, roots);
        for id in used {
            let alternatives: Vec<VecLang> = eg[id].nodes.clone();
            if alternatives.len() < 2 {
                continue;
            }
            for alt in alternatives {
                if tried >= budget {
                    break;
                }
                if &alt == program.picks.node(id) || program.uses(id) == 0 {
                    continue;
                }
                tried += 1;
                let before = program.cost;
                let undo = program.switch(eg, model, id, alt);
                let kept = program.cost < before
                    && dag_cost(eg, model, &program.picks, roots) == Some(program.cost);
                if kept {
                    improved = true;
                } else {
                    program.undo(undo, before);
                }
            }
        }
    }
    (program.picks, program.cost)
}

/// A picked program with the number of uses of every class (by the roots and by the
/// picked nodes of used classes) and its DAG cost, kept up to date as picks are switched.
struct Program {
    picks: Picks,
    uses: IdMap<Id, u32>,
    cost: u64,
}

/// What one switch changed, to be undone: the class and its old node, and every use
/// count as it was before.
struct Undo {
    class: Id,
    old: VecLang,
    counts: Vec<(Id, u32)>,
}

impl Program {
    fn new(eg: &VGraph, model: &TargetCost, picks: Picks, roots: &[Id], cost: u64) -> Self {
        let mut uses: IdMap<Id, u32> = IdMap::default();
        for &r in roots {
            *uses.entry(eg.find(r)).or_default() += 1;
        }
        for id in reachable(eg, model, &picks, roots) {
            for c in Self::children(eg, model, picks.node(id)) {
                *uses.entry(c).or_default() += 1;
            }
        }
        Program { picks, uses, cost }
    }

    /// How many times class `id` is used by the program.
    fn uses(&self, id: Id) -> u32 {
        self.uses.get(&id).copied().unwrap_or(0)
    }

    /// The classes a picked node computes from (none for a register read by its leaf plan).
    fn children(eg: &VGraph, model: &TargetCost, node: &VecLang) -> Vec<Id> {
        if is_leaf_register(model, node) {
            Vec::new()
        } else {
            node.children().iter().map(|&c| eg.find(c)).collect()
        }
    }

    /// Switches class `id` (used) to `alt`: the classes `alt` reaches that were unused are
    /// paid (and what they reach), then the classes only the old node reached are
    /// refunded (and what only they reached). Exact for an acyclic result; a switch that
    /// makes a cycle may leave its classes counted, and [`dag_cost`] refuses it.
    fn switch(&mut self, eg: &VGraph, model: &mut TargetCost, id: Id, alt: VecLang) -> Undo {
        let mut counts = Vec::new();
        let new_children = Self::children(eg, model, &alt);
        let old = self
            .picks
            .node
            .insert(id, alt)
            .expect("every class has a pick");
        let old_children = Self::children(eg, model, &old);
        let mut cost = self.cost + model.cost(self.picks.node(id), |_| 0);
        cost -= model.cost(&old, |_| 0);
        // Uses are added before any is removed, so a class both nodes use is never
        // refunded and paid again.
        let mut stack = new_children;
        while let Some(c) = stack.pop() {
            let n = self.uses.entry(c).or_default();
            counts.push((c, *n));
            *n += 1;
            if *n == 1 {
                let node = self.picks.node(c);
                cost += model.cost(node, |_| 0);
                stack.extend(Self::children(eg, model, node));
            }
        }
        let mut stack = old_children;
        while let Some(c) = stack.pop() {
            let n = self.uses.get_mut(&c).expect("a used class is counted");
            counts.push((c, *n));
            *n -= 1;
            if *n == 0 {
                let node = self.picks.node(c);
                cost -= model.cost(node, |_| 0);
                stack.extend(Self::children(eg, model, node));
            }
        }
        self.cost = cost;
        Undo {
            class: id,
            old,
            counts,
        }
    }

    /// Puts back what `switch` changed, and the cost `cost`.
    fn undo(&mut self, undo: Undo, cost: u64) {
        for (c, n) in undo.counts.into_iter().rev() {
            self.uses.insert(c, n);
        }
        self.picks.node.insert(undo.class, undo.old);
        self.cost = cost;
    }
}

/// The node of least cost as a tree in every class: egg's `Extractor`, which prices every
/// class in `classes()` order, pass after pass, until a pass changes nothing, and keeps in
/// a class the first node to reach its least cost. Here a pass prices only the classes
/// with a child that got cheaper since they were last priced (a class whose children did
/// not change would price the same), so the choice is egg's at a fraction of the work.
fn tree_choice(eg: &VGraph, model: &mut TargetCost) -> IdMap<Id, VecLang> {
    // Canonical ids index dense tables: the pricing below looks up every child of every
    // node priced, tens of thousands of times on a `--fast-math` e-graph.
    let order: Vec<Id> = eg.classes().map(|c| c.id).collect();
    let size = order
        .iter()
        .map(|&id| usize::from(id) + 1)
        .max()
        .unwrap_or(0);
    let mut position = vec![usize::MAX; size];
    for (i, &id) in order.iter().enumerate() {
        position[usize::from(id)] = i;
    }
    let mut dirty = vec![true; order.len()];
    // The least cost found for each class and the index of its node.
    let mut best: Vec<Option<(u64, usize)>> = vec![None; size];
    let priced = |best: &[Option<(u64, usize)>], c: Id| best[usize::from(eg.find(c))];
    let mut changed = true;
    while changed {
        changed = false;
        for (i, &id) in order.iter().enumerate() {
            if !std::mem::replace(&mut dirty[i], false) {
                continue;
            }
            let class = &eg[id];
            let mut cheapest: Option<(u64, usize)> = None;
            for (k, n) in class.nodes.iter().enumerate() {
                if !n.all(|c| priced(&best, c).is_some()) {
                    continue;
                }
                let c = model.cost(n, |c| priced(&best, c).expect("priced above").0);
                if cheapest.is_none_or(|(b, _)| c < b) {
                    cheapest = Some((c, k));
                }
            }
            let Some((c, k)) = cheapest else { continue };
            let slot = &mut best[usize::from(id)];
            if slot.is_some_and(|(old, _)| old <= c) {
                continue;
            }
            *slot = Some((c, k));
            changed = true;
            for p in class.parents() {
                dirty[position[usize::from(eg.find(p))]] = true;
            }
        }
    }
    order
        .iter()
        .filter_map(|&id| best[usize::from(id)].map(|(_, k)| (id, eg[id].nodes[k].clone())))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::float::vectorize::{Limits, saturate_scalars, saturate_vectors};
    use crate::float::{cfront, output_registers, symbolic};

    /// Every switch the local search can make is priced by [`Program::switch`] as pricing
    /// the whole program would ([`dag_cost`]), and undoing it restores the program: on
    /// the saturated `--fast-math` e-graph of a 3x3 matrix product, from both starts.
    #[test]
    fn a_switch_is_priced_as_the_whole_program() {
        let src = Source::new(
            "k.c",
            "void k(const float a[3][3], const float b[3][3], float c[3][3]) {\n\
             for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) {\n\
             c[i][j] = 0; for (int k = 0; k < 3; k++) c[i][j] += a[i][k] * b[k][j]; } }",
        );
        let file = cfront::parse(&src).expect("parses");
        let kernel = symbolic::evaluate(&file, None).expect("evaluates");
        let isa =
            crate::targets::x86::float::table(crate::targets::x86::Variant::Avx2).expect("builds");
        let mut eg = VGraph::default();
        let (chunks, _) = output_registers(&mut eg, &kernel, isa.lanes);
        let limits = Limits::default();
        let (mut eg, _) = saturate_scalars(eg, &limits);
        saturate_vectors(&mut eg, &limits);
        let roots: Vec<Id> = chunks.iter().map(|c| eg.find(c.root)).collect();
        let sizes: Vec<usize> = kernel.params.iter().map(|p| p.len()).collect();
        let mut model = TargetCost::new(&eg, isa, &sizes);
        let tree = Picks {
            node: tree_choice(&eg, &mut model),
        };
        let mut scalar = tree.clone();
        for class in eg.classes() {
            if let Some(v) = class.nodes.iter().find(|n| matches!(n, VecLang::Vec(_))) {
                scalar.node.insert(class.id, v.clone());
            }
        }
        let (mut switches, mut cycles) = (0, 0);
        for start in [tree, scalar] {
            let cost = dag_cost(&eg, &mut model, &start, &roots).expect("a program");
            let mut program = Program::new(&eg, &model, start, &roots, cost);
            for id in reachable(&eg, &model, &program.picks, &roots) {
                for alt in eg[id].nodes.clone() {
                    if &alt == program.picks.node(id) {
                        continue;
                    }
                    let undo = program.switch(&eg, &mut model, id, alt);
                    match dag_cost(&eg, &mut model, &program.picks, &roots) {
                        Some(c) => assert_eq!(c, program.cost, "class {id}"),
                        None => cycles += 1,
                    }
                    switches += 1;
                    program.undo(undo, cost);
                    let fresh = Program::new(&eg, &model, program.picks.clone(), &roots, cost);
                    let used = |p: &Program| -> Vec<(Id, u32)> {
                        let mut v: Vec<_> = p
                            .uses
                            .iter()
                            .filter(|e| *e.1 > 0)
                            .map(|(&i, &n)| (i, n))
                            .collect();
                        v.sort();
                        v
                    };
                    assert_eq!(used(&fresh), used(&program), "undo restores the uses");
                }
            }
        }
        assert!(switches > 100, "{switches} switches");
        eprintln!("{switches} switches priced, {cycles} made a cycle");
    }
}
