//! Finding vector code by equality saturation: the kernel's outputs, packed into
//! registers as `vec` nodes of scalar classes, are rewritten into lane-wise vector
//! operations, blends and leaf vectors until nothing new appears or a limit is reached; the
//! target's cost model (`cost.rs`) then extracts the cheapest form of every register.
//!
//! The rewrites are Diospyros' vector rules, stated once for any register width:
//!
//! * `lift`: a `vec` whose lanes are operations of one kind is that kind's lane-wise
//!   operation on the `vec`s of their operands. Lanes of another kind are padded with the
//!   operation's exact identity (`x + -0`, `x * 1`, see [`Kind::identity_operands`]); lanes
//!   nobody reads stay don't-care. Tried for the most common kinds of a register only, which
//!   keeps the e-graph linear in the kernel for the regular kernels and bounded otherwise.
//! * `split`: a `vec` with lanes of several kinds is a `blend` of one `vec` per kind, the
//!   other lanes don't-care; this is how a kind without an identity (`sqrt`, negation)
//!   shares a register with others.
//!
//! Nothing else is assumed: without `--fast-math` no rewrite changes what a lane computes,
//! so the vector code is exact lane for lane. With it, `fast_math_rules` also holds
//! commutativity, reassociation of sums and products, and the fusion of `a * b + c` into
//! one rounding, the reassociation Diospyros relies on.

use std::time::{Duration, Instant};

use egg::{EGraph, Id, Rewrite, Runner, rewrite};

use super::dag::{BinOp, Dag, Node, NodeId, UnOp};
use super::lang::{Kind, Leaf, VecLang};
use crate::util::idhash::IdSet;

/// The e-graph of a kernel's vectorization.
pub type VGraph = EGraph<VecLang, ()>;

/// Limits of the search.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// E-nodes after which no rewrite is applied.
    pub nodes: usize,
    /// Rounds of rewriting.
    pub rounds: usize,
    /// Wall time of saturation: a safety net only. The node and round limits bound the
    /// search, so that the program found does not depend on the machine's speed or load;
    /// the time limit stops a search those would let run away (and then the report says
    /// a limit stopped it).
    pub time: Duration,
    /// Switches the local search after extraction (`extract.rs`) tries per e-class, from
    /// each start: a budget of work, not of time, so that the program extracted does not
    /// depend on the machine's speed.
    pub switches_per_class: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            nodes: 200_000,
            rounds: 64,
            time: Duration::from_secs(10),
            switches_per_class: 2,
        }
    }
}

/// What the search did, for `--explain` and the compile-time report.
#[derive(Clone, Debug, Default)]
pub struct SearchStats {
    /// E-nodes at the end.
    pub nodes: usize,
    /// E-classes at the end.
    pub classes: usize,
    /// Rounds run.
    pub rounds: usize,
    /// Whether a limit stopped the search before it saturated.
    pub limited: bool,
    /// Output lanes proved equal to the kernel's expressions by the symbolic check (exact
    /// mode; 0 with `--fast-math`).
    pub symbolic_lanes: usize,
    /// Milliseconds spent parsing and evaluating, building the e-graph (and the
    /// fast-math rewrites), saturating, extracting and emitting.
    pub phase_ms: [f64; 5],
}

/// Adds the scalar DAG nodes under `roots` to `eg`, returning the class of every DAG node
/// added (indexed by node id).
pub fn add_dag(eg: &mut VGraph, dag: &Dag, roots: &[NodeId]) -> Vec<Option<Id>> {
    let mut ids: Vec<Option<Id>> = vec![None; dag.len()];
    let mut stack: Vec<(NodeId, bool)> = roots.iter().map(|&r| (r, false)).collect();
    while let Some((n, ready)) = stack.pop() {
        if ids[n as usize].is_some() {
            continue;
        }
        let node = dag.node(n);
        let kids: Vec<NodeId> = match node {
            Node::Const(_) | Node::Input { .. } => vec![],
            Node::Un(_, a) => vec![a],
            Node::Bin(_, a, b) => vec![a, b],
            Node::Fma(a, b, c) => vec![a, b, c],
        };
        if !ready && kids.iter().any(|k| ids[*k as usize].is_none()) {
            stack.push((n, true));
            stack.extend(kids.iter().map(|&k| (k, false)));
            continue;
        }
        let c = |k: NodeId| ids[k as usize].expect("operands are added first");
        let e = match node {
            Node::Const(b) => VecLang::Leaf(Leaf::Const(b)),
            Node::Input { param, index } => VecLang::Leaf(Leaf::Input(param, index)),
            Node::Un(UnOp::Neg, a) => VecLang::Neg([c(a)]),
            Node::Un(UnOp::Sqrt, a) => VecLang::Sqrt([c(a)]),
            Node::Bin(op, a, b) => {
                let ch = [c(a), c(b)];
                match op {
                    BinOp::Add => VecLang::Add(ch),
                    BinOp::Sub => VecLang::Sub(ch),
                    BinOp::Mul => VecLang::Mul(ch),
                    BinOp::Div => VecLang::Div(ch),
                }
            }
            Node::Fma(a, b, d) => VecLang::Fma([c(a), c(b), c(d)]),
        };
        ids[n as usize] = Some(eg.add(e));
    }
    ids
}

/// The leaf of a class, if it has one (leaves are never equal to operations).
pub fn leaf_of(eg: &VGraph, id: Id) -> Option<Leaf> {
    eg[id].nodes.iter().find_map(|n| match n {
        VecLang::Leaf(l) => Some(*l),
        _ => None,
    })
}

/// The rewrites `--fast-math` allows on scalar classes.
pub fn fast_math_rules() -> Vec<Rewrite<VecLang, ()>> {
    vec![
        rewrite!("add-comm"; "(+ ?a ?b)" => "(+ ?b ?a)"),
        rewrite!("mul-comm"; "(* ?a ?b)" => "(* ?b ?a)"),
        rewrite!("add-assoc"; "(+ (+ ?a ?b) ?c)" => "(+ ?a (+ ?b ?c))"),
        rewrite!("add-assoc-rev"; "(+ ?a (+ ?b ?c))" => "(+ (+ ?a ?b) ?c)"),
        rewrite!("mul-assoc"; "(* (* ?a ?b) ?c)" => "(* ?a (* ?b ?c))"),
        rewrite!("fuse"; "(+ (* ?a ?b) ?c)" => "(fma ?a ?b ?c)"),
        rewrite!("fuse-comm"; "(+ ?c (* ?a ?b))" => "(fma ?a ?b ?c)"),
        rewrite!("sub-neg"; "(- ?a ?b)" => "(+ ?a (neg ?b))"),
    ]
}

/// Runs the fast-math rewrites on the scalar classes, within `limits`; says whether the
/// time limit (the safety net) stopped them.
pub fn saturate_scalars(eg: VGraph, limits: &Limits) -> (VGraph, bool) {
    // Reassociation grows the e-graph exponentially; a few times the kernel's own size
    // holds the fusions and the commuted forms the lifting needs. Four times, not more:
    // on the suite, eight times cost twice the compile time and extracted programs as
    // dear or dearer (mat_mul_4x4_4x4: 65 against 33), the extraction being greedy.
    let nodes = (limits.nodes / 4).min(4 * eg.total_size());
    // Every rule at every match: egg's default scheduler bans a rule that matches more
    // than a thousand times, which on a large kernel (mat_mul_16x16_16x16: 8,192
    // products) banned fusion itself, so nothing was fused. The node limit bounds the
    // growth instead.
    let r = Runner::default()
        .with_scheduler(egg::SimpleScheduler)
        .with_egraph(eg)
        .with_node_limit(nodes)
        .with_iter_limit(4)
        .with_time_limit(limits.time / 4)
        .run(&fast_math_rules());
    let timed_out = matches!(r.stop_reason, Some(egg::StopReason::TimeLimit(_)));
    (r.egraph, timed_out)
}

/// One lane of a `vec` as the rewrites see it.
#[derive(Clone, Debug)]
enum Lane {
    Any,
    Leaf,
    /// The operations of the lane's class, by kind, with their operands.
    Ops(Vec<(Kind, Vec<Id>)>),
}

fn lane(eg: &VGraph, id: Id) -> Lane {
    let mut ops = Vec::new();
    for n in &eg[id].nodes {
        match n {
            VecLang::Leaf(Leaf::Any) => return Lane::Any,
            VecLang::Leaf(_) => return Lane::Leaf,
            n => {
                if let Some((k, ch)) = Kind::of(n) {
                    ops.push((k, ch.to_vec()));
                }
            }
        }
    }
    Lane::Ops(ops)
}

/// Rewrites every `vec` until saturation or `limits`: the `lift` and `split` rules.
pub fn saturate_vectors(eg: &mut VGraph, limits: &Limits) -> SearchStats {
    let start = Instant::now();
    let any = eg.add(VecLang::Leaf(Leaf::Any));
    // The lanes of every `vec` already rewritten (looked up by slice, without a copy).
    let mut done: IdSet<Box<[Id]>> = IdSet::default();
    let mut stats = SearchStats::default();
    loop {
        let vecs: Vec<(Id, Box<[Id]>)> = eg
            .classes()
            .flat_map(|c| {
                c.nodes.iter().filter_map(move |n| match n {
                    VecLang::Vec(l) => Some((c.id, l.clone())),
                    _ => None,
                })
            })
            .filter(|(_, l)| !done.contains(&**l))
            .collect();
        if vecs.is_empty() {
            break;
        }
        if stats.rounds >= limits.rounds
            || eg.total_size() >= limits.nodes
            || start.elapsed() >= limits.time
        {
            stats.limited = true;
            break;
        }
        stats.rounds += 1;
        for (class, lanes) in vecs {
            done.insert(lanes.clone());
            let ls: Vec<Lane> = lanes.iter().map(|&l| lane(eg, l)).collect();
            let mut new = lift(eg, &lanes, &ls, any);
            new.extend(split(eg, &lanes, &ls, any));
            for new in new {
                eg.union(class, new);
            }
            if eg.total_size() >= limits.nodes || start.elapsed() >= limits.time {
                stats.limited = true;
                break;
            }
        }
        eg.rebuild();
    }
    stats.nodes = eg.total_number_of_nodes();
    stats.classes = eg.number_of_classes();
    stats
}

/// The `lift` rule on one `vec` of lane classes `ids`: the lane-wise operations it equals.
fn lift(eg: &mut VGraph, ids: &[Id], lanes: &[Lane], any: Id) -> Vec<Id> {
    let mut count = [0usize; 7];
    for l in lanes {
        if let Lane::Ops(ops) = l {
            // Each kind once per lane.
            let mut seen = [false; 7];
            for (k, _) in ops {
                if !std::mem::replace(&mut seen[*k as usize], true) {
                    count[*k as usize] += 1;
                }
            }
        }
    }
    let most = count.iter().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    for kind in Kind::ALL {
        let n = count[kind as usize];
        // The most common kinds, and any kind at least half as common.
        if n == 0 || 2 * n < most {
            continue;
        }
        if let Some(operands) = lift_operands(eg, ids, lanes, kind, any) {
            let children: Vec<Id> = operands
                .into_iter()
                .map(|l| eg.add(VecLang::Vec(l.into_boxed_slice())))
                .collect();
            out.push(eg.add(kind.vector(&children)));
        }
    }
    out
}

/// The lanes of each operand register of `kind`'s lane-wise operation on the `vec` of
/// `ids`, or `None` when some lane can be neither that operation nor padded to it.
fn lift_operands(
    eg: &mut VGraph,
    ids: &[Id],
    lanes: &[Lane],
    kind: Kind,
    any: Id,
) -> Option<Vec<Vec<Id>>> {
    let mut operands: Vec<Vec<Id>> = vec![Vec::with_capacity(ids.len()); kind.arity()];
    for (&id, l) in ids.iter().zip(lanes) {
        // With commutativity a lane has several operations of the kind; it takes its
        // first, and the commuted forms are reached by lifting the operand registers,
        // whose lanes hold them too.
        let own = match l {
            Lane::Any => Some(vec![any; kind.arity()]),
            Lane::Ops(ops) => ops.iter().find(|(k, _)| *k == kind).map(|(_, c)| c.clone()),
            Lane::Leaf => None,
        };
        let lane_operands = match own {
            Some(c) => c,
            None => {
                let mut c = vec![id];
                for v in kind.identity_operands()? {
                    c.push(eg.add(VecLang::Leaf(Leaf::Const(v.to_bits()))));
                }
                c
            }
        };
        for (j, c) in lane_operands.into_iter().enumerate() {
            operands[j].push(c);
        }
    }
    Some(operands)
}

/// The `split` rule on one `vec`: with lanes of several kinds, a blend of the lanes of
/// each kind with the others.
fn split(eg: &mut VGraph, ids: &[Id], lanes: &[Lane], any: Id) -> Vec<Id> {
    // A lane's kind for this rule: its first operation's, or "leaf".
    let kind_of = |l: &Lane| match l {
        Lane::Any => None,
        Lane::Leaf => Some(None),
        Lane::Ops(ops) => Some(ops.first().map(|(k, _)| *k)),
    };
    let kinds: Vec<Option<Option<Kind>>> = lanes.iter().map(kind_of).collect();
    let mut distinct: Vec<Option<Kind>> = kinds.iter().flatten().copied().collect();
    distinct.sort();
    distinct.dedup();
    if distinct.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for k in distinct {
        let mut mask = 0u64;
        let mut mine = Vec::with_capacity(ids.len());
        let mut rest = Vec::with_capacity(ids.len());
        for (i, (&id, lk)) in ids.iter().zip(&kinds).enumerate() {
            if *lk == Some(k) {
                mask |= 1 << i;
                mine.push(id);
                rest.push(any);
            } else {
                mine.push(any);
                rest.push(id);
            }
        }
        let m = eg.add(VecLang::Leaf(Leaf::Mask(mask)));
        let a = eg.add(VecLang::Vec(mine.into_boxed_slice()));
        let b = eg.add(VecLang::Vec(rest.into_boxed_slice()));
        out.push(eg.add(VecLang::Blend([m, a, b])));
    }
    out
}
