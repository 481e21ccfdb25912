//! Equality saturation over rule sets, on the `egg` e-graph.
//!
//! The greedy engine commits to one rewrite per node, so a rewrite that looks best where it
//! applies can block a cheaper form further up, and forms that are only equal (not cheaper,
//! like `x << 2` and `x * 4`, or a sum in another order) are never tried. Here every rule
//! only *adds* its right-hand side to the class of what it matched, until nothing new
//! appears or a limit is reached; the cheapest member of the root's class under the lifting
//! cost model is then extracted. The greedy result is added to the e-graph before
//! saturation, so the result never costs more than greedy's, whatever the limits cut.
//!
//! Rules are harrow's own (`rules::Inst` patterns), matched by a small e-matcher over the
//! classes rather than translated into egg patterns: a pattern's element types, constant
//! wildcards and commutative operators are checked exactly as [`Pat::matches`] checks them
//! on trees. Bounds-predicated rules ask the class's interval, the intersection of what the
//! caller's [`Bounds`] says of every member the class has had.

use std::collections::HashMap;

use crate::util::idhash::{IdMap, IdSet};
use std::time::{Duration, Instant};

mod dag;

use egg::{Analysis, CostFunction, DidMerge, EGraph, Extractor, Id, Language};

use super::{Engine, Greedy, TraceEvent, build_rhs, predicate_holds};
use crate::bounds::{Bounds, Interval, type_range};
use crate::ir::{Expr, Op};
use crate::rules::cost::{Cost, dag_cost, node_cost};
use crate::rules::pattern::const_value;
use crate::rules::{Binds, Inst, Pat, PatKind, Rule, RuleSet};
use crate::types::Type;

/// How far saturation may go before it stops and extracts the best form found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// E-nodes in the graph.
    pub nodes: usize,
    /// Rounds of matching every rule and applying every match.
    pub iterations: usize,
    /// Wall time of the whole run (`Duration::MAX`, the default, for none).
    pub time: Duration,
}

impl Limits {
    /// Parses `--eqsat-limit`: comma-separated `nodes=N`, `iterations=N` and `ms=N` (each
    /// optional, the rest default; `ms=0` means no time limit, so the result cannot depend
    /// on the machine's speed).
    pub fn parse(text: &str) -> Result<Limits, String> {
        let mut limits = Limits::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!("`{part}`: expected KEY=N with KEY one of nodes, iterations, ms")
            })?;
            let n: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: `{value}` is not a non-negative whole number"))?;
            match key.trim() {
                "nodes" => limits.nodes = n as usize,
                "iterations" => limits.iterations = n as usize,
                "ms" => {
                    limits.time = if n == 0 {
                        Duration::MAX
                    } else {
                        Duration::from_millis(n)
                    }
                }
                other => {
                    return Err(format!(
                        "`{other}` is not a limit; expected nodes, iterations or ms"
                    ));
                }
            }
        }
        Ok(limits)
    }
}

impl Default for Limits {
    /// Chosen on the Rake corpus (`tests/lift_corpus.rs` prints the figures): past these, few
    /// expressions get cheaper; the slowest spec takes about 100 ms. No time limit: with one
    /// (40 ms was tried) the extracted form of the largest stencils changed from run to run.
    fn default() -> Self {
        Limits {
            nodes: 4_000,
            iterations: 6,
            time: Duration::MAX,
        }
    }
}

/// What one run did, for `--explain`-style reports and the tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Rounds run.
    pub iterations: usize,
    /// E-nodes at the end.
    pub nodes: usize,
    /// E-classes at the end.
    pub classes: usize,
    /// Why it stopped: `saturated`, `node limit`, `iteration limit` or `time limit`.
    pub stop: &'static str,
    /// DAG cost (each distinct node once) of the greedy engine's result.
    pub greedy: Cost,
    /// DAG cost of the extracted result (never above `greedy`).
    pub extracted: Cost,
    /// Which extraction gave the result.
    pub extraction: Extraction,
}

/// Which extraction gave an equality-saturation result (`--explain` says).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Extraction {
    /// egg's tree extractor (a shared sub-expression paid once per use): the fallback,
    /// kept on ties.
    #[default]
    Tree,
    /// The DAG-aware extractor (`dag.rs`): cheaper once sharing is paid once.
    Dag,
    /// Greedy's own form, where neither extraction found a cheaper DAG.
    Greedy,
}

/// The equality-saturation engine: the rules of `rules` (each used left to right; a rule set
/// of equalities lists each direction it wants) plus `equalities`, with `limits`.
pub struct EqSat<'r> {
    rules: &'r RuleSet,
    equalities: Option<&'r RuleSet>,
    limits: Limits,
}

impl<'r> EqSat<'r> {
    /// An engine over `rules` (typically the lifting rules) and optional `equalities`
    /// (`rules/algebra.rules`), with the default limits.
    pub fn new(rules: &'r RuleSet, equalities: Option<&'r RuleSet>) -> Self {
        EqSat {
            rules,
            equalities,
            limits: Limits::default(),
        }
    }

    /// The same engine with other limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Rewrites `e` and says how the run went.
    pub fn run_with_report(&self, e: &Expr, bounds: &mut dyn Bounds) -> (Expr, Report) {
        let start = Instant::now();
        let greedy = Greedy::new(self.rules).run(e, bounds, None);
        let mut graph = EGraph::new(Facts {
            shapes: Shapes::default(),
            bounds,
        });
        let root = add_expr(&mut graph, e, &IdMap::default(), &mut IdMap::default());
        let mut greedy_nodes = IdMap::default();
        let greedy_class = add_expr(&mut graph, &greedy, &IdMap::default(), &mut greedy_nodes);
        graph.union(root, greedy_class);
        graph.rebuild();
        let rules: Vec<&Rule> = self
            .rules
            .rules
            .iter()
            .chain(self.equalities.iter().flat_map(|s| s.rules.iter()))
            .collect();
        let mut report = Report {
            stop: "saturated",
            ..Report::default()
        };
        for _ in 0..self.limits.iterations {
            report.iterations += 1;
            let matches = search(&graph, &rules, self.rules.rules.len());
            let before = (graph.total_number_of_nodes(), graph.number_of_classes());
            let mut cut = None;
            for m in matches {
                if graph.total_number_of_nodes() >= self.limits.nodes {
                    cut = Some("node limit");
                } else if start.elapsed() >= self.limits.time {
                    cut = Some("time limit");
                }
                if cut.is_some() {
                    break;
                }
                apply(&mut graph, rules[m.rule], &rules[m.rule].insts[m.inst], &m);
            }
            graph.rebuild();
            if let Some(why) = cut {
                report.stop = why;
                break;
            }
            let after = (graph.total_number_of_nodes(), graph.number_of_classes());
            if after == before {
                break;
            }
            if graph.total_number_of_nodes() >= self.limits.nodes {
                report.stop = "node limit";
                break;
            }
            if start.elapsed() >= self.limits.time {
                report.stop = "time limit";
                break;
            }
            if report.iterations == self.limits.iterations {
                report.stop = "iteration limit";
            }
        }
        let root = graph.find(root);
        let kept = greedy_node_set(&graph, &greedy, &greedy_nodes);
        let lift_cost = LiftCost::new(&graph.analysis.shapes, &kept);
        let (_, tree) = Extractor::new(&graph, &lift_cost).find_best(root);
        let tree = to_expr(&graph.analysis.shapes, &tree);
        let dag =
            dag::extract(&graph, &lift_cost, root).map(|t| to_expr(&graph.analysis.shapes, &t));
        // The form of least DAG cost among the DAG extractor's, the tree extractor's and
        // greedy's (in that order of preference on ties after the tree's, which is what
        // saturation gave before extraction knew of sharing).
        let mut result = (tree, Extraction::Tree);
        let mut cost = dag_cost(&result.0);
        for (form, how) in dag
            .map(|d| (d, Extraction::Dag))
            .into_iter()
            .chain([(greedy.clone(), Extraction::Greedy)])
        {
            let c = dag_cost(&form);
            if c < cost {
                (result, cost) = ((form, how), c);
            }
        }
        report.nodes = graph.total_number_of_nodes();
        report.classes = graph.number_of_classes();
        report.greedy = dag_cost(&greedy);
        report.extracted = cost;
        report.extraction = result.1;
        (result.0, report)
    }
}

impl Engine for EqSat<'_> {
    fn run(&self, e: &Expr, bounds: &mut dyn Bounds, _trace: Option<&mut Vec<TraceEvent>>) -> Expr {
        self.run_with_report(e, bounds).0
    }
}

/// One e-node: an operator at fixed operand and result types (its shape), over e-classes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Node {
    shape: u32,
    children: Vec<Id>,
}

impl Language for Node {
    type Discriminant = u32;

    fn discriminant(&self) -> u32 {
        self.shape
    }

    fn matches(&self, other: &Self) -> bool {
        self.shape == other.shape && self.children.len() == other.children.len()
    }

    fn children(&self) -> &[Id] {
        &self.children
    }

    fn children_mut(&mut self) -> &mut [Id] {
        &mut self.children
    }
}

/// The shapes of the nodes seen: an operator with its result and operand types, kept as
/// one IR node of that shape (leaves are themselves; others are rebuilt over new operands).
#[derive(Default)]
struct Shapes {
    index: HashMap<ShapeKey, u32>,
    exemplars: Vec<Expr>,
}

/// What identifies a shape: the operator, the result type and the operand types.
type ShapeKey = (Op, Type, Vec<Type>);

impl Shapes {
    fn key(e: &Expr) -> ShapeKey {
        (
            e.op().clone(),
            e.ty(),
            e.args().iter().map(|a| a.ty()).collect(),
        )
    }

    fn intern(&mut self, e: &Expr) -> u32 {
        let next = self.exemplars.len() as u32;
        *self.index.entry(Self::key(e)).or_insert_with(|| {
            self.exemplars.push(e.clone());
            next
        })
    }

    fn exemplar(&self, shape: u32) -> &Expr {
        &self.exemplars[shape as usize]
    }

    /// The node of `shape` over `args`.
    fn build(&self, shape: u32, args: Vec<Expr>) -> Expr {
        self.exemplar(shape)
            .with_args(args)
            .expect("operands of a shape's own types keep the node well typed")
    }

    /// The lifting cost of one node of `shape` (operands not included).
    fn cost(&self, shape: u32) -> Cost {
        node_cost(self.exemplar(shape))
    }
}

/// What is known of one e-class.
#[derive(Debug)]
struct ClassData {
    /// A member as an IR tree without cycles: the cheapest under the lifting cost of those
    /// seen, a constant where the class has one (constant wildcards read it).
    rep: Expr,
    /// The lifting cost of `rep`.
    cost: Cost,
    /// Bounds on every lane: the intersection over the members seen.
    interval: Interval,
}

/// The e-class analysis: shapes, and the caller's bounds for the intervals.
struct Facts<'b> {
    shapes: Shapes,
    bounds: &'b mut dyn Bounds,
}

impl Analysis<Node> for Facts<'_> {
    type Data = ClassData;

    fn make(graph: &mut EGraph<Node, Self>, node: &Node, _id: Id) -> ClassData {
        let args: Vec<Expr> = node
            .children
            .iter()
            .map(|c| graph[*c].data.rep.clone())
            .collect();
        let cost = node
            .children
            .iter()
            .fold(graph.analysis.shapes.cost(node.shape), |a, c| {
                a + graph[*c].data.cost
            });
        let rep = graph.analysis.shapes.build(node.shape, args);
        let interval = graph.analysis.bounds.range(&rep);
        ClassData {
            rep,
            cost,
            interval,
        }
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        let interval = (
            a.interval.0.max(b.interval.0),
            a.interval.1.min(b.interval.1),
        );
        let narrowed_a = interval != a.interval;
        let narrowed_b = interval != b.interval;
        a.interval = interval;
        let constant = |d: &ClassData| d.rep.as_const_bits().is_some();
        let take_b = match (constant(a), constant(&b)) {
            (false, true) => true,
            (true, false) => false,
            _ => b.cost < a.cost,
        };
        if take_b {
            a.rep = b.rep;
            a.cost = b.cost;
        }
        DidMerge(narrowed_a || take_b, narrowed_b || !take_b)
    }
}

/// Adds `e` to the graph; sub-expressions in `known` are those classes already.
fn add_expr(
    graph: &mut EGraph<Node, Facts<'_>>,
    e: &Expr,
    known: &IdMap<usize, Id>,
    memo: &mut IdMap<usize, Id>,
) -> Id {
    if let Some(id) = known.get(&e.id()).or_else(|| memo.get(&e.id())) {
        return *id;
    }
    let children = e
        .args()
        .iter()
        .map(|a| add_expr(graph, a, known, memo))
        .collect();
    let shape = graph.analysis.shapes.intern(e);
    let id = graph.add(Node { shape, children });
    memo.insert(e.id(), id);
    id
}

/// A rule instantiation matched at a class, with what its variables and wildcards bound.
struct Match {
    rule: usize,
    inst: usize,
    class: Id,
    vars: Vec<Option<Id>>,
    wilds: Vec<(u32, i128)>,
}

/// Bindings during e-matching.
#[derive(Clone)]
struct EBinds {
    vars: Vec<Option<Id>>,
    wilds: Vec<(u32, i128)>,
}

/// Every match of every rule instantiation in the graph, in rule order then class order
/// (so runs are deterministic). The equalities (rules from `first_equality` on) apply to
/// vectors only: regrouping scalar index arithmetic gains the vector code nothing and would
/// hide the constant offsets that lowering reads off load indices.
fn search(graph: &EGraph<Node, Facts<'_>>, rules: &[&Rule], first_equality: usize) -> Vec<Match> {
    let mut classes: Vec<Id> = graph.classes().map(|c| c.id).collect();
    classes.sort_unstable();
    // The root operators present, so instantiations whose root cannot match are skipped.
    let mut roots: IdMap<(crate::ir::OpKey, crate::types::Elem), Vec<Id>> = IdMap::default();
    for &c in &classes {
        for n in graph[c].iter() {
            let e = graph.analysis.shapes.exemplar(n.shape);
            let list = roots.entry((e.op().key(), e.ty().elem)).or_default();
            if list.last() != Some(&c) {
                list.push(c);
            }
        }
    }
    let mut out = Vec::new();
    for (ri, rule) in rules.iter().enumerate() {
        for (ii, inst) in rule.insts.iter().enumerate() {
            let PatKind::Op(op, _) = &inst.lhs.kind else {
                continue;
            };
            let Some(candidates) = roots.get(&(op.key(), inst.lhs.elem)) else {
                continue;
            };
            for &class in candidates {
                if ri >= first_equality && graph[class].data.rep.ty().is_scalar() {
                    continue;
                }
                let start = EBinds {
                    vars: vec![None; rule.vars.len()],
                    wilds: Vec::new(),
                };
                let mut found = Vec::new();
                match_goals(graph, &[(&inst.lhs, class)], start, &mut found);
                for b in found {
                    out.push(Match {
                        rule: ri,
                        inst: ii,
                        class,
                        vars: b.vars,
                        wilds: b.wilds,
                    });
                }
            }
        }
    }
    out
}

/// Whether a class of type `ty` fits `p`'s type: its element type (constants match by
/// value) and its lanes where `p` fixes them.
fn class_type_fits(p: &Pat, ty: crate::types::Type) -> bool {
    let constant = matches!(p.kind, PatKind::Wild(_) | PatKind::Lit(_));
    (constant || ty.elem == p.elem) && p.lanes.is_none_or(|l| l == ty.lanes)
}

/// Whether `p` may match in `class`: its type fits, and an operator pattern's operator is
/// among the class's members with its arity. A necessary condition, checked without
/// copying bindings.
fn may_match(graph: &EGraph<Node, Facts<'_>>, p: &Pat, class: Id) -> bool {
    let class = graph.find(class);
    if !class_type_fits(p, graph[class].data.rep.ty()) {
        return false;
    }
    match &p.kind {
        PatKind::Op(op, args) => graph[class].iter().any(|n| {
            n.children.len() == args.len() && graph.analysis.shapes.exemplar(n.shape).op() == op
        }),
        _ => true,
    }
}

/// Matches each pattern against its class, in order, extending `b`; every complete set of
/// bindings goes to `out`.
fn match_goals(
    graph: &EGraph<Node, Facts<'_>>,
    goals: &[(&Pat, Id)],
    mut b: EBinds,
    out: &mut Vec<EBinds>,
) {
    let Some(((p, class), rest)) = goals.split_first() else {
        out.push(b);
        return;
    };
    let class = graph.find(*class);
    let data = &graph[class].data;
    if !class_type_fits(p, data.rep.ty()) {
        return;
    }
    match &p.kind {
        PatKind::Var(i) => {
            match b.vars[*i] {
                Some(bound) if graph.find(bound) != class => return,
                Some(_) => {}
                None => b.vars[*i] = Some(class),
            }
            match_goals(graph, rest, b, out);
        }
        PatKind::Wild(id) => {
            let Some(v) = const_value(&data.rep, p.elem) else {
                return;
            };
            match b.wilds.iter().find(|(w, _)| w == id) {
                Some((_, prev)) if *prev != v => return,
                Some(_) => {}
                None => b.wilds.push((*id, v)),
            }
            match_goals(graph, rest, b, out);
        }
        PatKind::Lit(v) => {
            if const_value(&data.rep, p.elem) == Some(*v) {
                match_goals(graph, rest, b, out);
            }
        }
        PatKind::Computed(_) => {}
        PatKind::Op(op, args) => {
            for n in graph[class].iter() {
                let e = graph.analysis.shapes.exemplar(n.shape);
                if e.op() != op || n.children.len() != args.len() {
                    continue;
                }
                let orders: &[[usize; 2]] = if op.is_commutative() && args.len() == 2 {
                    &[[0, 1], [1, 0]]
                } else {
                    &[[0, 1]]
                };
                for order in orders {
                    let child = |k: usize| n.children[if args.len() == 2 { order[k] } else { k }];
                    // Ruled out before anything is copied: most members fail here.
                    if !args
                        .iter()
                        .enumerate()
                        .all(|(k, a)| may_match(graph, a, child(k)))
                    {
                        continue;
                    }
                    let mut next: Vec<(&Pat, Id)> = args
                        .iter()
                        .enumerate()
                        .map(|(k, a)| {
                            let child = if args.len() == 2 { order[k] } else { k };
                            (a, n.children[child])
                        })
                        .collect();
                    next.extend_from_slice(rest);
                    match_goals(graph, &next, b.clone(), out);
                }
            }
        }
    }
}

/// The intervals of the classes a match bound, by their representatives' node ids.
struct ClassBounds(HashMap<usize, Interval>);

impl Bounds for ClassBounds {
    fn range(&mut self, e: &Expr) -> (i128, i128) {
        self.0
            .get(&e.id())
            .copied()
            .unwrap_or_else(|| type_range(e.ty().elem))
    }
}

/// Applies one match: when the predicate holds and the right-hand side builds, adds it and
/// merges it into the matched class.
fn apply(graph: &mut EGraph<Node, Facts<'_>>, rule: &Rule, inst: &Inst, m: &Match) {
    let mut binds = Binds::new(rule.vars.len());
    let mut known = IdMap::default();
    let mut intervals = HashMap::new();
    for (slot, class) in binds.vars.iter_mut().zip(&m.vars) {
        if let Some(c) = class {
            let c = graph.find(*c);
            let data = &graph[c].data;
            known.insert(data.rep.id(), c);
            intervals.insert(data.rep.id(), data.interval);
            *slot = Some(data.rep.clone());
        }
    }
    binds.wilds = m.wilds.clone();
    if !predicate_holds(rule, inst, &binds, &mut ClassBounds(intervals)) {
        return;
    }
    let lanes = graph[m.class].data.rep.ty().lanes;
    let Some(rhs) = build_rhs(inst, &binds, lanes) else {
        return;
    };
    let new = add_expr(graph, &rhs, &known, &mut IdMap::default());
    graph.union(m.class, new);
}

/// The greedy result's nodes as they stand in the graph now (canonical operands).
fn greedy_node_set(
    graph: &EGraph<Node, Facts<'_>>,
    greedy: &Expr,
    classes: &IdMap<usize, Id>,
) -> IdSet<Node> {
    crate::ir::visit::post_order(greedy)
        .iter()
        .map(|n| Node {
            shape: graph.analysis.shapes.index[&Shapes::key(n)],
            children: n
                .args()
                .iter()
                .map(|a| graph.find(classes[&a.id()]))
                .collect(),
        })
        .collect()
}

/// The lifting cost model as an extraction cost; among forms of equal cost, the one with
/// fewest nodes outside the greedy result (so equal forms do not churn the output).
struct LiftCost<'a> {
    /// The lifting cost of one node of each shape, by shape.
    shape_costs: Vec<Cost>,
    kept: &'a IdSet<Node>,
}

impl<'a> LiftCost<'a> {
    /// The cost model over `shapes` (each shape's cost computed once: extraction asks for
    /// it per node and per form tried), preferring the nodes in `kept`.
    fn new(shapes: &Shapes, kept: &'a IdSet<Node>) -> Self {
        let shape_costs = (0..shapes.exemplars.len() as u32)
            .map(|s| shapes.cost(s))
            .collect();
        LiftCost { shape_costs, kept }
    }

    /// The cost of `node` alone (its operands not counted).
    fn own(&self, node: &Node) -> (Cost, u32) {
        (
            self.shape_costs[node.shape as usize],
            u32::from(!self.kept.contains(node)),
        )
    }
}

impl CostFunction<Node> for &LiftCost<'_> {
    type Cost = (Cost, u32);

    fn cost<C>(&mut self, node: &Node, mut costs: C) -> (Cost, u32)
    where
        C: FnMut(Id) -> (Cost, u32),
    {
        let own = self.own(node);
        node.children.iter().fold(own, |(a, n), c| {
            let (b, m) = costs(*c);
            (a + b, n + m)
        })
    }
}

/// The IR of an extracted term.
fn to_expr(shapes: &Shapes, term: &egg::RecExpr<Node>) -> Expr {
    let mut built: Vec<Expr> = Vec::with_capacity(term.len());
    for n in term.iter() {
        let args = n
            .children
            .iter()
            .map(|c| built[usize::from(*c)].clone())
            .collect();
        built.push(shapes.build(n.shape, args));
    }
    built.pop().expect("an extracted term has a root")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Intervals;
    use crate::interp::{eval, random_env};
    use crate::ir::visit::any_node;

    fn parse(text: &str) -> Expr {
        crate::lift::fold_scalar_constants(&crate::syntax::halide::parse_with_vars(
            text,
            &[("a", "u8x16"), ("b", "u8x16")],
        ))
    }

    fn engine() -> EqSat<'static> {
        let rules = crate::lift::builtin_rules().unwrap_or_else(|d| panic!("{d}"));
        let algebra = crate::lift::algebra_rules().unwrap_or_else(|d| panic!("{d}"));
        EqSat::new(rules, Some(algebra))
    }

    fn same_values(a: &Expr, b: &Expr) {
        for seed in 0..8 {
            let env = random_env(a, seed, &[]);
            assert_eq!(eval(a, &env), eval(b, &env), "seed {seed}: {a} vs {b}");
        }
    }

    #[test]
    fn equal_forms_let_a_cheaper_one_appear() {
        // Greedy lifts each product to a widening multiply and stops; saturation combines
        // the like terms into `a * 8`, a widening shift.
        let e = parse("i16(a) * 3 + i16(a) * 5");
        let (out, report) = engine().run_with_report(&e, &mut Intervals::new());
        assert!(report.extracted < report.greedy, "{report:?}: {out}");
        assert!(
            any_node(&out, |n| matches!(n.op(), Op::WideningShl)),
            "{out}"
        );
        assert!(
            !any_node(&out, |n| matches!(n.op(), Op::WideningMul)),
            "{out}"
        );
        same_values(&e, &out);
    }

    #[test]
    fn bounds_predicates_read_the_class_interval() {
        // `min_redundant` needs an upper bound of the sum (510) to drop the clamp.
        let e = parse("min(u16(a) + u16(b), u16(600))");
        let (out, _) = engine().run_with_report(&e, &mut Intervals::new());
        assert!(!any_node(&out, |n| matches!(n.op(), Op::Min)), "{out}");
        same_values(&e, &out);
    }

    #[test]
    fn limits_stop_saturation_and_the_greedy_form_remains() {
        let e = parse("i16(a) * 3 + i16(a) * 5");
        let tight = Limits {
            nodes: 1,
            iterations: 4,
            time: Duration::from_secs(1),
        };
        let (out, report) = engine()
            .with_limits(tight)
            .run_with_report(&e, &mut Intervals::new());
        assert_eq!(report.stop, "node limit", "{report:?}");
        assert_eq!(report.extracted, report.greedy, "{report:?}");
        let greedy = Greedy::new(engine().rules).run(&e, &mut Intervals::new(), None);
        assert_eq!(out, greedy);
    }

    #[test]
    fn limits_parse_with_clear_errors() {
        let l = Limits::parse("nodes=10, ms=0").unwrap();
        assert_eq!((l.nodes, l.time), (10, Duration::MAX));
        assert_eq!(l.iterations, Limits::default().iterations);
        assert!(Limits::parse("nodes").unwrap_err().contains("KEY=N"));
        assert!(
            Limits::parse("depth=3")
                .unwrap_err()
                .contains("not a limit")
        );
        assert!(
            Limits::parse("nodes=-1")
                .unwrap_err()
                .contains("whole number")
        );
    }

    #[test]
    fn runs_are_deterministic() {
        let e = parse("(u16(a) + u16(b)) * 2 + u16(a) * 2 + u16(b) * 6");
        let first = engine().run_with_report(&e, &mut Intervals::new());
        for _ in 0..3 {
            assert_eq!(engine().run_with_report(&e, &mut Intervals::new()), first);
        }
        same_values(&e, &first.0);
    }
}
