//! The symbolic check of an exact vectorization: every output lane of the extracted
//! program, read back through its vector operations, blends and leaf plans, must be the
//! kernel's own expression for that element once exact identities are removed.
//!
//! Without `--fast-math` every rewrite keeps what a lane computes, up to the identities the
//! `lift` rule pads with (`x + -0`, `x - +0`, `x * 1`, `x / 1`, `fma(x, 1, -0)`). Both sides
//! are rebuilt in one hash-consed DAG that drops those identities as nodes are made, so two
//! lanes agree exactly when they get the same node: a check by construction, not by
//! sampling, of the extraction and of the leaf plans (the emitted C's shuffle indices are
//! checked by running it).

use std::collections::HashMap;

use egg::Id;

use super::cost::{LeafPlan, Source, leaf_plan};
use super::dag::{BinOp, Dag, Node, NodeId, UnOp};
use super::emit::Chunk;
use super::extract::Picks;
use super::lang::{Leaf, VecLang};
use super::symbolic::Evaluated;
use crate::isa::float::FloatIsa;

/// A DAG builder that drops the exact identities as it makes nodes.
struct Normal {
    dag: Dag,
}

impl Normal {
    fn is(&self, id: NodeId, v: f32) -> bool {
        self.dag
            .as_const(id)
            .is_some_and(|c| c.to_bits() == v.to_bits())
    }

    fn add(&mut self, n: Node) -> NodeId {
        match n {
            Node::Bin(BinOp::Add, x, k) if self.is(k, -0.0) => x,
            Node::Bin(BinOp::Sub, x, k) if self.is(k, 0.0) => x,
            Node::Bin(BinOp::Mul | BinOp::Div, x, k) if self.is(k, 1.0) => x,
            Node::Fma(x, k, z) if self.is(k, 1.0) && self.is(z, -0.0) => x,
            n => self.dag.add(n),
        }
    }

    /// Node `id` of `from`, rebuilt here.
    fn copy(&mut self, from: &Dag, id: NodeId, memo: &mut HashMap<NodeId, NodeId>) -> NodeId {
        if let Some(&n) = memo.get(&id) {
            return n;
        }
        let n = match from.node(id) {
            Node::Un(op, a) => {
                let a = self.copy(from, a, memo);
                self.add(Node::Un(op, a))
            }
            Node::Bin(op, a, b) => {
                let (a, b) = (self.copy(from, a, memo), self.copy(from, b, memo));
                self.add(Node::Bin(op, a, b))
            }
            Node::Fma(a, b, c) => {
                let (a, b, c) = (
                    self.copy(from, a, memo),
                    self.copy(from, b, memo),
                    self.copy(from, c, memo),
                );
                self.add(Node::Fma(a, b, c))
            }
            leaf => self.add(leaf),
        };
        memo.insert(id, n);
        n
    }
}

struct Reader<'a> {
    picks: &'a Picks,
    isa: &'static FloatIsa,
    sizes: Vec<usize>,
    norm: Normal,
    lanes: HashMap<(Id, usize), Option<NodeId>>,
    scalars: HashMap<Id, NodeId>,
}

impl Reader<'_> {
    fn leaf(&mut self, l: Leaf) -> Option<NodeId> {
        match l {
            Leaf::Input(param, index) => Some(self.norm.add(Node::Input { param, index })),
            Leaf::Const(b) => Some(self.norm.add(Node::Const(b))),
            Leaf::Any | Leaf::Mask(_) => None,
        }
    }

    fn scalar(&mut self, id: Id) -> Option<NodeId> {
        if let Some(&n) = self.scalars.get(&id) {
            return Some(n);
        }
        let n = match self.picks.node(id).clone() {
            VecLang::Leaf(l) => self.leaf(l)?,
            VecLang::Add([a, b]) => self.bin(BinOp::Add, a, b)?,
            VecLang::Sub([a, b]) => self.bin(BinOp::Sub, a, b)?,
            VecLang::Mul([a, b]) => self.bin(BinOp::Mul, a, b)?,
            VecLang::Div([a, b]) => self.bin(BinOp::Div, a, b)?,
            VecLang::Neg([a]) => {
                let a = self.scalar(a)?;
                self.norm.add(Node::Un(UnOp::Neg, a))
            }
            VecLang::Sqrt([a]) => {
                let a = self.scalar(a)?;
                self.norm.add(Node::Un(UnOp::Sqrt, a))
            }
            VecLang::Fma([a, b, c]) => {
                let (a, b, c) = (self.scalar(a)?, self.scalar(b)?, self.scalar(c)?);
                self.norm.add(Node::Fma(a, b, c))
            }
            _ => return None,
        };
        self.scalars.insert(id, n);
        Some(n)
    }

    fn bin(&mut self, op: BinOp, a: Id, b: Id) -> Option<NodeId> {
        let (a, b) = (self.scalar(a)?, self.scalar(b)?);
        Some(self.norm.add(Node::Bin(op, a, b)))
    }

    /// Lane `i` of vector class `id` (`None`: don't care).
    fn lane(&mut self, id: Id, i: usize) -> Option<NodeId> {
        if let Some(&n) = self.lanes.get(&(id, i)) {
            return n;
        }
        let v = |r: &mut Self, op: fn(NodeId, NodeId) -> Node, a: Id, b: Id| {
            let (x, y) = (r.lane(a, i)?, r.lane(b, i)?);
            Some(r.norm.add(op(x, y)))
        };
        let n = match self.picks.node(id).clone() {
            VecLang::Vec(lanes) => self.register_lane(&lanes, i),
            VecLang::VAdd([a, b]) => v(self, |x, y| Node::Bin(BinOp::Add, x, y), a, b),
            VecLang::VSub([a, b]) => v(self, |x, y| Node::Bin(BinOp::Sub, x, y), a, b),
            VecLang::VMul([a, b]) => v(self, |x, y| Node::Bin(BinOp::Mul, x, y), a, b),
            VecLang::VDiv([a, b]) => v(self, |x, y| Node::Bin(BinOp::Div, x, y), a, b),
            VecLang::VNeg([a]) => self
                .lane(a, i)
                .map(|x| self.norm.add(Node::Un(UnOp::Neg, x))),
            VecLang::VSqrt([a]) => self
                .lane(a, i)
                .map(|x| self.norm.add(Node::Un(UnOp::Sqrt, x))),
            VecLang::VFma([a, b, c]) => match (self.lane(a, i), self.lane(b, i), self.lane(c, i)) {
                (Some(x), Some(y), Some(z)) => Some(self.norm.add(Node::Fma(x, y, z))),
                _ => None,
            },
            VecLang::Blend([m, a, b]) => match self.picks.node(m) {
                VecLang::Leaf(Leaf::Mask(mask)) if mask >> i & 1 == 1 => self.lane(a, i),
                VecLang::Leaf(Leaf::Mask(_)) => self.lane(b, i),
                _ => None,
            },
            _ => None,
        };
        self.lanes.insert((id, i), n);
        n
    }

    /// Lane `i` of a `vec`: through its leaf plan when every lane is a leaf, as the
    /// emitter builds it; otherwise the lane's scalar.
    fn register_lane(&mut self, lanes: &[Id], i: usize) -> Option<NodeId> {
        let leaves: Option<Vec<Leaf>> = lanes
            .iter()
            .map(|&l| match self.picks.node(l) {
                VecLang::Leaf(x) => Some(*x),
                _ => None,
            })
            .collect();
        let Some(leaves) = leaves else {
            return self.scalar(lanes[i]);
        };
        match leaf_plan(self.isa, &self.sizes, &leaves).0 {
            LeafPlan::Nothing => None,
            LeafPlan::Scalars(ls) => self.leaf(ls[i]),
            LeafPlan::Shuffled { sources, picks } => {
                let (s, l) = picks[i]?;
                match &sources[s] {
                    Source::Window { param, start, len } => {
                        if l >= *len as usize {
                            return Some(self.norm.add(Node::Const(0)));
                        }
                        self.leaf(Leaf::Input(*param, start + l as u32))
                    }
                    Source::Splat(p, e) => self.leaf(Leaf::Input(*p, *e)),
                    Source::Consts(k) => self.leaf(Leaf::Const(k[l])),
                }
            }
        }
    }
}

/// Checks every stored lane of `chunks` against `k` (see the module documentation);
/// returns the number of lanes checked, or the first that differs.
pub fn check(
    k: &Evaluated,
    isa: &'static FloatIsa,
    picks: &Picks,
    chunks: &[Chunk],
) -> Result<usize, String> {
    let mut r = Reader {
        picks,
        isa,
        sizes: k.params.iter().map(|p| p.len()).collect(),
        norm: Normal {
            dag: Dag::default(),
        },
        lanes: HashMap::new(),
        scalars: HashMap::new(),
    };
    let mut memo = HashMap::new();
    let mut checked = 0;
    for c in chunks {
        for i in 0..c.lanes {
            let e = c.offset + i;
            let want = if k.written[c.param][e] {
                r.norm.copy(&k.dag, k.finals[c.param][e], &mut memo)
            } else {
                r.norm.add(Node::Input {
                    param: c.param as u16,
                    index: e as u32,
                })
            };
            if r.lane(c.root, i) != Some(want) {
                return Err(format!(
                    "lane {i} of the register stored at element {e} of `{}` does not compute the kernel's expression",
                    k.params[c.param].name
                ));
            }
            checked += 1;
        }
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::float::{cfront, symbolic, vectorize};

    /// The kernel `o[i] = a[i] + b[i]` over 8 lanes, and the class of its output register
    /// with the lane-wise operation `op` of the input registers picked for it.
    fn program(op: fn([Id; 2]) -> VecLang) -> (Evaluated, Picks, Vec<Chunk>) {
        let src = Source::new(
            "k.c",
            "void k(const float a[8], const float b[8], float o[8]) {\n\
             for (int i = 0; i < 8; i++) o[i] = a[i] + b[i]; }",
        );
        let file = cfront::parse(&src).expect("parses");
        let k = symbolic::evaluate(&file, None).expect("evaluates");
        let mut eg = vectorize::VGraph::default();
        let leaves = |eg: &mut vectorize::VGraph, p: u16| -> Vec<Id> {
            (0..8)
                .map(|i| eg.add(VecLang::Leaf(Leaf::Input(p, i))))
                .collect()
        };
        let (a, b) = (leaves(&mut eg, 0), leaves(&mut eg, 1));
        let sums: Vec<Id> = (0..8).map(|i| eg.add(VecLang::Add([a[i], b[i]]))).collect();
        let root = eg.add(VecLang::Vec(sums.clone().into_boxed_slice()));
        let va = eg.add(VecLang::Vec(a.clone().into_boxed_slice()));
        let vb = eg.add(VecLang::Vec(b.clone().into_boxed_slice()));
        let mut picks = Picks::default();
        for (&s, i) in sums.iter().zip(0..) {
            picks.set(s, VecLang::Add([a[i], b[i]]));
        }
        for &l in a.iter().chain(&b) {
            picks.set(l, eg[l].nodes[0].clone());
        }
        picks.set(va, VecLang::Vec(a.into_boxed_slice()));
        picks.set(vb, VecLang::Vec(b.into_boxed_slice()));
        picks.set(root, op([va, vb]));
        let chunk = Chunk {
            param: 2,
            offset: 0,
            lanes: 8,
            root,
        };
        (k, picks, vec![chunk])
    }

    #[test]
    fn the_right_program_passes_and_a_wrong_one_is_caught() {
        let isa =
            crate::targets::x86::float::table(crate::targets::x86::Variant::Avx2).expect("builds");
        let (k, picks, chunks) = program(VecLang::VAdd);
        assert_eq!(check(&k, isa, &picks, &chunks), Ok(8));
        let (k, picks, chunks) = program(VecLang::VSub);
        let e = check(&k, isa, &picks, &chunks).unwrap_err();
        assert!(e.contains("lane 0") && e.contains("`o`"), "{e}");
    }
}
