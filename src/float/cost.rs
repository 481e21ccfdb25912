//! The target's cost model over the vector language, and the plans of leaf registers:
//! how a register whose lanes are all inputs and constants is made from loads, splats,
//! constants and shuffles (Diospyros' shuffle costs, from the target's float table).

use egg::{CostFunction, Id, Language};

use super::lang::{Leaf, VecLang};
use super::vectorize::{VGraph, leaf_of};
use crate::isa::float::{FloatIsa, FloatOp};
use crate::util::idhash::IdMap;

/// Where a leaf register's lanes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `lanes` elements of parameter `param` from element `start` (fewer than a register
    /// only when the parameter is shorter than one).
    Window { param: u16, start: u32, len: u32 },
    /// One input in every lane.
    Splat(u16, u32),
    /// Constants (don't-care lanes zero).
    Consts(Vec<u32>),
}

/// A leaf register: its sources, and for every lane the source and the lane in it it
/// takes (`None`: don't care).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeafPlan {
    /// Every lane don't-care.
    Nothing,
    /// Sources combined by shuffles.
    Shuffled {
        sources: Vec<Source>,
        picks: Vec<Option<(usize, usize)>>,
    },
    /// Each lane moved in from a scalar.
    Scalars(Vec<Leaf>),
}

/// The cheapest plan for the leaf lanes `lanes`, with its cost; `sizes` are the
/// parameters' element counts.
pub fn leaf_plan(isa: &FloatIsa, sizes: &[usize], lanes: &[Leaf]) -> (LeafPlan, u32) {
    let w = isa.lanes;
    if lanes.iter().all(|l| *l == Leaf::Any) {
        return (LeafPlan::Nothing, 0);
    }
    let used: Vec<(usize, Leaf)> = lanes
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, l)| *l != Leaf::Any)
        .collect();
    let scalars_cost = used.len() as u32 * isa.insert_cost;
    let mut sources: Vec<Source> = Vec::new();
    let mut picks: Vec<Option<(usize, usize)>> = vec![None; w];
    // Constants: one register of them.
    if used.iter().any(|(_, l)| matches!(l, Leaf::Const(_))) {
        let mut k = vec![0u32; w];
        for &(i, l) in &used {
            if let Leaf::Const(b) = l {
                k[i] = b;
                picks[i] = Some((0, i));
            }
        }
        sources.push(Source::Consts(k));
    }
    // Inputs: by parameter, covered by windows one register long.
    let mut inputs: Vec<(u16, u32, usize)> = used
        .iter()
        .filter_map(|&(i, l)| match l {
            Leaf::Input(p, e) => Some((p, e, i)),
            _ => None,
        })
        .collect();
    inputs.sort();
    let distinct: Vec<(u16, u32)> = {
        let mut d: Vec<_> = inputs.iter().map(|&(p, e, _)| (p, e)).collect();
        d.dedup();
        d
    };
    if distinct.len() == 1 && sources.is_empty() {
        let (p, e) = distinct[0];
        // Every lane of a splat holds the value: each lane takes its own.
        for &(_, _, i) in &inputs {
            picks[i] = Some((0, i));
        }
        let plan = LeafPlan::Shuffled {
            sources: vec![Source::Splat(p, e)],
            picks,
        };
        return (plan, isa.cost(FloatOp::Splat));
    }
    let mut windows: Vec<(u16, u32, u32)> = Vec::new();
    for &(p, e, _) in &inputs {
        let covered = windows
            .iter()
            .any(|&(wp, ws, wl)| wp == p && (ws..ws + wl).contains(&e));
        if !covered {
            let size = sizes[p as usize] as u32;
            let len = size.min(w as u32);
            let start = e.min(size - len);
            windows.push((p, start, len));
        }
    }
    for &(p, e, i) in &inputs {
        let (k, &(_, ws, _)) = windows
            .iter()
            .enumerate()
            .find(|(_, (wp, ws, wl))| *wp == p && (*ws..*ws + *wl).contains(&e))
            .expect("every input is covered");
        picks[i] = Some((sources.len() + k, (e - ws) as usize));
    }
    let mut cost = 0;
    for &(p, start, len) in &windows {
        sources.push(Source::Window {
            param: p,
            start,
            len,
        });
        // A window shorter than a register is copied into one first.
        cost += isa.cost(FloatOp::Load) * if (len as usize) < w { 2 } else { 1 };
    }
    if sources.len() > windows.len() {
        cost += isa.cost(FloatOp::Load);
    }
    let identity = picks
        .iter()
        .enumerate()
        .all(|(i, p)| p.is_none_or(|(s, l)| s == 0 && l == i));
    // Sources combine pairwise: each two-source shuffle is two permutes and a blend; one
    // source out of place is one permute.
    cost += match sources.len() {
        1 if identity => 0,
        1 => isa.permute_cost,
        n => (n as u32 - 1) * (2 * isa.permute_cost + isa.blend_cost),
    };
    if scalars_cost < cost {
        return (LeafPlan::Scalars(lanes.to_vec()), scalars_cost);
    }
    (LeafPlan::Shuffled { sources, picks }, cost)
}

/// The extraction cost: the target's costs of vector operations, blends and leaf plans;
/// scalar lanes cost their scalar operations and the moves into the register.
pub struct TargetCost<'a> {
    /// The e-graph (a `vec`'s cost depends on whether its lanes are leaves).
    pub egraph: &'a VGraph,
    /// The target's table.
    pub isa: &'static FloatIsa,
    /// The parameters' sizes.
    pub sizes: &'a [usize],
    /// The cost of each leaf register met, by its lanes: extraction prices a `vec` once
    /// per pass over the e-graph, and planning its loads and shuffles is most of that.
    leaf_costs: IdMap<Box<[Id]>, u64>,
    /// The leaf of every class that has one: asked for each lane of every `vec` priced, and
    /// a class of a `--fast-math` e-graph holds tens of reassociated nodes to look through.
    leaf_classes: IdMap<Id, Leaf>,
}

impl<'a> TargetCost<'a> {
    /// The cost model of `egraph` for the target `isa`, the parameters having `sizes`.
    pub fn new(egraph: &'a VGraph, isa: &'static FloatIsa, sizes: &'a [usize]) -> Self {
        let leaf_classes = egraph
            .classes()
            .filter_map(|c| Some((c.id, leaf_of(egraph, c.id)?)))
            .collect();
        TargetCost {
            egraph,
            isa,
            sizes,
            leaf_costs: IdMap::default(),
            leaf_classes,
        }
    }

    /// The leaves of a `vec`'s lanes, when every lane is a leaf.
    pub fn leaf_lanes(&self, lanes: &[Id]) -> Option<Vec<Leaf>> {
        lanes
            .iter()
            .map(|&l| self.leaf_classes.get(&self.egraph.find(l)).copied())
            .collect()
    }
}

impl CostFunction<VecLang> for TargetCost<'_> {
    type Cost = u64;

    fn cost<C>(&mut self, enode: &VecLang, mut costs: C) -> u64
    where
        C: FnMut(Id) -> u64,
    {
        let isa = self.isa;
        let op = |o: FloatOp| isa.cost(o) as u64;
        let own = match enode {
            VecLang::Leaf(Leaf::Input(..)) => 1,
            VecLang::Leaf(_) => 0,
            VecLang::Add(_) | VecLang::Sub(_) | VecLang::Mul(_) | VecLang::Neg(_) => {
                isa.scalar_cost as u64
            }
            // Scalar division and square root cost what one vector operation does.
            VecLang::Div(_) => op(FloatOp::Div),
            VecLang::Sqrt(_) => op(FloatOp::Sqrt),
            VecLang::Fma(_) => isa.scalar_cost as u64,
            VecLang::Vec(lanes) => {
                if let Some(&c) = self.leaf_costs.get(lanes) {
                    return c;
                }
                if let Some(leaves) = self.leaf_lanes(lanes) {
                    let c = leaf_plan(isa, self.sizes, &leaves).1 as u64;
                    self.leaf_costs.insert(lanes.clone(), c);
                    return c;
                }
                // Scalars computed one by one and moved into the register.
                let mut c = 0u64;
                for &l in lanes.iter() {
                    c = c
                        .saturating_add(costs(l))
                        .saturating_add(isa.insert_cost as u64);
                }
                return c;
            }
            VecLang::VAdd(_) => op(FloatOp::Add),
            VecLang::VSub(_) => op(FloatOp::Sub),
            VecLang::VMul(_) => op(FloatOp::Mul),
            VecLang::VDiv(_) => op(FloatOp::Div),
            VecLang::VNeg(_) => op(FloatOp::Neg),
            VecLang::VSqrt(_) => op(FloatOp::Sqrt),
            VecLang::VFma(_) => op(FloatOp::Fma),
            VecLang::Blend(_) => isa.blend_cost as u64,
        };
        enode.fold(own, |sum, id| sum.saturating_add(costs(id)))
    }
}
