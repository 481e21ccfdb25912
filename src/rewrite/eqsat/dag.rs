//! Extraction aware of sharing: a class used twice in the extracted form is paid once.
//!
//! egg's extractor minimizes the *tree* cost, which counts a shared sub-expression once per
//! use; a form that computes one value and reads it twice then looks dearer than one that
//! computes two different values. This extractor chooses, per class, the node whose DAG
//! (the set of classes it needs, each at its chosen node's own cost) is cheapest, by
//! repeated passes until no choice changes (the greedy DAG heuristic; exact DAG extraction
//! is NP-hard), then improves the whole form by local search, one class at a time. The caller keeps whichever of its result and the tree extractor's has the
//! lower DAG cost, and greedy's form where that is lower still, so it is never worse than
//! either.

use std::collections::BTreeMap;
use std::rc::Rc;

use egg::{EGraph, Id, RecExpr};

use super::{Facts, LiftCost, Node};
use crate::rules::cost::Cost;
use crate::util::idhash::IdMap;

/// A cost with its tie-breaker: the lifting cost, then nodes outside greedy's form.
type Key = (Cost, u32);

/// The classes a choice needs, each with its chosen node's own cost, and their sum.
#[derive(Clone)]
struct Needs {
    classes: Rc<BTreeMap<Id, Key>>,
    total: Key,
}

/// Passes over the classes before extraction settles for the choices made so far (the
/// passes stop as soon as one changes nothing; a few suffice in practice).
const MAX_PASSES: usize = 32;

/// A cheap form of `root`'s class under DAG cost, or `None` when the choices cannot build
/// one without a cycle (the caller keeps the tree extractor's then).
pub(super) fn extract(
    graph: &EGraph<Node, Facts<'_>>,
    cost: &LiftCost<'_>,
    root: Id,
) -> Option<RecExpr<Node>> {
    let mut best: IdMap<Id, (usize, Needs)> = IdMap::default();
    // Classes in id order, so the passes (and ties) do not depend on hashing.
    let mut classes: Vec<&egg::EClass<Node, _>> = graph.classes().collect();
    classes.sort_by_key(|c| c.id);
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for class in &classes {
            for (k, node) in class.nodes.iter().enumerate() {
                let Some(needs) = node_needs(graph, cost, class.id, node, &best) else {
                    continue;
                };
                let better = best
                    .get(&class.id)
                    .is_none_or(|(_, old)| needs.total < old.total);
                if better {
                    best.insert(class.id, (k, needs));
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let root = graph.find(root);
    if !best.contains_key(&root) {
        return None;
    }
    let mut choice: IdMap<Id, usize> = best.iter().map(|(c, (k, _))| (*c, *k)).collect();
    improve(graph, cost, root, &mut choice);
    build(graph, &choice, root)
}

/// Local search over the whole form: each pass tries, for every class the form needs,
/// every other member whose operands have a choice, and keeps a change that lowers the
/// form's DAG cost. The per-class passes above judge a member by what it needs alone; a
/// member that reads a value the rest of the form needs anyway only wins here.
fn improve(
    graph: &EGraph<Node, Facts<'_>>,
    cost: &LiftCost<'_>,
    root: Id,
    choice: &mut IdMap<Id, usize>,
) {
    let mut walks = Walks::default();
    let Some(mut current) = form_cost(graph, cost, root, choice, &mut walks) else {
        return;
    };
    for _ in 0..MAX_PASSES {
        let mut improved = false;
        let mut needed: Vec<Id> = reachable(graph, root, choice, &mut walks)
            .map(<[Id]>::to_vec)
            .unwrap_or_default();
        needed.sort();
        for class in needed {
            for k in 0..graph[class].nodes.len() {
                let node = &graph[class].nodes[k];
                let ready = node
                    .children
                    .iter()
                    .all(|c| choice.contains_key(&graph.find(*c)));
                if k == choice[&class] || !ready {
                    continue;
                }
                let before = choice
                    .insert(class, k)
                    .expect("a needed class has a choice");
                match form_cost(graph, cost, root, choice, &mut walks) {
                    Some(c) if c < current => {
                        current = c;
                        improved = true;
                    }
                    _ => {
                        choice.insert(class, before);
                    }
                }
            }
        }
        if !improved {
            break;
        }
    }
}

/// Marks of classes in walks of a form, kept from walk to walk (local search walks the
/// whole form once per member it tries): a walk's marks are `2 * walk` for a class on the
/// current path and `2 * walk + 1` for one done, so starting a walk clears nothing.
#[derive(Default)]
struct Walks {
    marks: Vec<u32>,
    walk: u32,
    order: Vec<Id>,
    stack: Vec<(Id, bool)>,
}

impl Walks {
    /// The mark of `class`, growing the table to hold it.
    fn mark(&mut self, class: Id) -> &mut u32 {
        let i = usize::from(class);
        if i >= self.marks.len() {
            self.marks.resize(i + 1, 0);
        }
        &mut self.marks[i]
    }
}

/// The classes the form chosen by `choice` needs from `root`, operands first, or `None`
/// if the choice makes a cycle.
fn reachable<'w>(
    graph: &EGraph<Node, Facts<'_>>,
    root: Id,
    choice: &IdMap<Id, usize>,
    walks: &'w mut Walks,
) -> Option<&'w [Id]> {
    walks.walk += 1;
    if walks.walk >= u32::MAX / 2 {
        walks.marks.fill(0);
        walks.walk = 1;
    }
    let (on_path, done) = (2 * walks.walk, 2 * walks.walk + 1);
    walks.order.clear();
    walks.stack.clear();
    walks.stack.push((root, false));
    while let Some((class, expanded)) = walks.stack.pop() {
        if expanded {
            *walks.mark(class) = done;
            walks.order.push(class);
            continue;
        }
        match *walks.mark(class) {
            m if m == done => continue,
            m if m == on_path => return None,
            _ => {}
        }
        *walks.mark(class) = on_path;
        walks.stack.push((class, true));
        for c in &graph[class].nodes[*choice.get(&class)?].children {
            let c = graph.find(*c);
            match *walks.mark(c) {
                m if m == done => {}
                m if m == on_path => return None,
                _ => walks.stack.push((c, false)),
            }
        }
    }
    Some(&walks.order)
}

/// The DAG cost of the form `choice` gives `root`, or `None` if it has a cycle.
fn form_cost(
    graph: &EGraph<Node, Facts<'_>>,
    cost: &LiftCost<'_>,
    root: Id,
    choice: &IdMap<Id, usize>,
    walks: &mut Walks,
) -> Option<Key> {
    let classes = reachable(graph, root, choice, walks)?;
    Some(classes.iter().fold((Cost::default(), 0), |(a, n), c| {
        let (b, m) = cost.own(&graph[*c].nodes[choice[c]]);
        (a + b, n + m)
    }))
}

/// What choosing `node` for `class` needs, given the choices in `best`; `None` while an
/// operand has no choice yet, or where the node would need its own class (a cycle).
fn node_needs(
    graph: &EGraph<Node, Facts<'_>>,
    cost: &LiftCost<'_>,
    class: Id,
    node: &Node,
    best: &IdMap<Id, (usize, Needs)>,
) -> Option<Needs> {
    let mut children: Vec<&Needs> = Vec::with_capacity(node.children.len());
    for c in &node.children {
        let (_, needs) = best.get(&graph.find(*c))?;
        if needs.classes.contains_key(&class) {
            return None;
        }
        children.push(needs);
    }
    let own = cost.own(node);
    // Start from the largest operand's set: most nodes add a few classes to one big one.
    let largest = children
        .iter()
        .enumerate()
        .max_by_key(|(_, n)| n.classes.len())
        .map(|(i, _)| i);
    let mut classes: BTreeMap<Id, Key> = match largest {
        Some(i) => (*children[i].classes).clone(),
        None => BTreeMap::new(),
    };
    for (i, n) in children.iter().enumerate() {
        if Some(i) != largest {
            for (id, k) in n.classes.iter() {
                classes.entry(*id).or_insert(*k);
            }
        }
    }
    classes.insert(class, own);
    let total = classes
        .values()
        .fold((Cost::default(), 0), |(a, n), (b, m)| (a + *b, n + m));
    Some(Needs {
        classes: Rc::new(classes),
        total,
    })
}

/// The chosen form of `root`, each class built once (operands shared, not copied), or
/// `None` if the choices make a cycle.
fn build(
    graph: &EGraph<Node, Facts<'_>>,
    choice: &IdMap<Id, usize>,
    root: Id,
) -> Option<RecExpr<Node>> {
    let mut out = RecExpr::default();
    let mut built: IdMap<Id, Id> = IdMap::default();
    for &class in reachable(graph, root, choice, &mut Walks::default())? {
        let mut n = graph[class].nodes[choice[&class]].clone();
        for c in n.children.iter_mut() {
            *c = built[&graph.find(*c)];
        }
        built.insert(class, out.add(n));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::{Shapes, add_expr, to_expr};
    use super::*;
    use crate::bounds::Intervals;
    use crate::ir::Expr;

    fn parse(text: &str) -> Expr {
        crate::syntax::halide::parse_with_vars(
            text,
            &[("a", "u8x8"), ("b", "u8x8"), ("c", "u8x8"), ("d", "u8x8")],
        )
    }

    /// A class with two members, one of which reads a value the rest of the form needs
    /// anyway: the tree extractor takes the member that is cheaper alone, the DAG
    /// extractor the one that is cheaper once the shared value is paid for once.
    #[test]
    fn a_member_reading_a_shared_value_is_paid_once() {
        let shared = parse("int16(a) + int16(b)");
        let root_expr = parse("((int16(a) + int16(b)) * int16(3)) + (int16(a) + int16(b))");
        let other = parse("int16(c) + int16(d)");
        let mut bounds = Intervals::new();
        let mut graph = EGraph::new(Facts {
            shapes: Shapes::default(),
            bounds: &mut bounds,
        });
        let mut memo = IdMap::default();
        let root = add_expr(&mut graph, &root_expr, &IdMap::default(), &mut memo);
        let product = memo[&root_expr.arg(0).id()];
        let alone = add_expr(&mut graph, &other, &IdMap::default(), &mut IdMap::default());
        // Extraction only compares members: the two need not be equal for this test.
        graph.union(product, alone);
        graph.rebuild();
        let kept = crate::util::idhash::IdSet::default();
        let cost = LiftCost::new(&graph.analysis.shapes, &kept);
        let (_, tree) = egg::Extractor::new(&graph, &cost).find_best(root);
        let tree = to_expr(&graph.analysis.shapes, &tree);
        let dag = to_expr(
            &graph.analysis.shapes,
            &extract(&graph, &cost, root).expect("the root has a member"),
        );
        assert!(
            crate::ir::visit::any_node(&tree, |n| n == other.arg(0)),
            "{tree}"
        );
        assert_eq!(dag, root_expr);
        assert!(crate::rules::cost::dag_cost(&dag) < crate::rules::cost::dag_cost(&tree));
        assert!(crate::ir::visit::post_order(&dag).contains(&shared));
    }
}
