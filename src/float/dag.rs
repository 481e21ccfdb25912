//! The scalar meaning of a float kernel: one expression DAG over IEEE-754 single values,
//! hash-consed, with its interpreter.
//!
//! Symbolic evaluation of the C (`symbolic.rs`) builds one node per distinct computation;
//! every output element is a node. Its evaluator is the reference the vector code is
//! compared with; each operation is the reference interpreter's own
//! (`crate::interp::float`), and `to_ir` writes any node as a harrow IR expression over
//! `f32`, which the interpreter evaluates to the same bits (tested).

use std::collections::HashMap;

use crate::ir::{Expr, Op, mk};
use crate::types::Elem;

/// Index of a node in a [`Dag`].
pub type NodeId = u32;

use crate::interp::float as ieee;
/// A binary IEEE operation: the interpreter's.
pub use crate::interp::float::Binary as BinOp;
/// Whether two results are the same (NaNs are, whatever their payloads).
pub use crate::interp::float::same_result;

/// A unary IEEE operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum UnOp {
    /// Sign flip (exact, also of NaN and zero).
    Neg,
    /// Correctly rounded square root.
    Sqrt,
}

/// One node of the scalar DAG.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    /// A constant, by its bits.
    Const(u32),
    /// Element `index` (row-major, flattened) of parameter `param` as it is on entry.
    Input { param: u16, index: u32 },
    /// A unary operation.
    Un(UnOp, NodeId),
    /// A binary operation, each operand rounded once.
    Bin(BinOp, NodeId, NodeId),
    /// `a * b + c` rounded once (C's `fmaf`).
    Fma(NodeId, NodeId, NodeId),
}

/// A hash-consed DAG of scalar float nodes.
#[derive(Default, Debug, Clone)]
pub struct Dag {
    nodes: Vec<Node>,
    ids: HashMap<Node, NodeId>,
    /// Length of the longest chain of operations ending at each node.
    depths: Vec<u32>,
}

impl Dag {
    /// The node with id `id`.
    pub fn node(&self, id: NodeId) -> Node {
        self.nodes[id as usize]
    }

    /// Number of distinct nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when no node has been made.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The id of `node`, made once. Operations on constants are folded, with the same IEEE
    /// rounding the program would apply at run time.
    pub fn add(&mut self, node: Node) -> NodeId {
        let folded = match node {
            Node::Un(..) | Node::Bin(..) | Node::Fma(..) => {
                self.fold(node).map(|v| Node::Const(v.to_bits()))
            }
            _ => None,
        };
        let node = folded.unwrap_or(node);
        if let Some(&id) = self.ids.get(&node) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        let d = |k: NodeId| self.depths[k as usize];
        let depth = match node {
            Node::Const(_) | Node::Input { .. } => 0,
            Node::Un(_, a) => d(a) + 1,
            Node::Bin(_, a, b) => d(a).max(d(b)) + 1,
            Node::Fma(a, b, c) => d(a).max(d(b)).max(d(c)) + 1,
        };
        self.depths.push(depth);
        self.nodes.push(node);
        self.ids.insert(node, id);
        id
    }

    /// The longest chain of operations ending at `id`.
    pub fn depth(&self, id: NodeId) -> u32 {
        self.depths[id as usize]
    }

    /// A constant node.
    pub fn constant(&mut self, v: f32) -> NodeId {
        self.add(Node::Const(v.to_bits()))
    }

    /// The constant value of `id`, if it is a constant.
    pub fn as_const(&self, id: NodeId) -> Option<f32> {
        match self.node(id) {
            Node::Const(b) => Some(f32::from_bits(b)),
            _ => None,
        }
    }

    fn fold(&self, node: Node) -> Option<f32> {
        let c = |id| self.as_const(id);
        Some(match node {
            Node::Un(op, a) => un(op, c(a)?),
            Node::Bin(op, a, b) => bin(op, c(a)?, c(b)?),
            Node::Fma(a, b, d) => ieee::fma(c(a)?, c(b)?, c(d)?),
            _ => return None,
        })
    }

    /// The value of every node for the parameter contents `params` (flattened, by
    /// parameter index).
    pub fn eval(&self, params: &[Vec<f32>]) -> Vec<f32> {
        let mut v: Vec<f32> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            // Operands always precede their users: ids are handed out bottom up.
            let x = match *n {
                Node::Const(b) => f32::from_bits(b),
                Node::Input { param, index } => params[param as usize][index as usize],
                Node::Un(op, a) => un(op, v[a as usize]),
                Node::Bin(op, a, b) => bin(op, v[a as usize], v[b as usize]),
                Node::Fma(a, b, c) => ieee::fma(v[a as usize], v[b as usize], v[c as usize]),
            };
            v.push(x);
        }
        v
    }

    /// The value of every node computed in double precision from the same (float)
    /// inputs: an estimate of the real-number result, against which `--fast-math` error
    /// is judged.
    pub fn eval_f64(&self, params: &[Vec<f32>]) -> Vec<f64> {
        let mut v: Vec<f64> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let x = match *n {
                Node::Const(b) => f32::from_bits(b) as f64,
                Node::Input { param, index } => params[param as usize][index as usize] as f64,
                Node::Un(UnOp::Neg, a) => -v[a as usize],
                Node::Un(UnOp::Sqrt, a) => v[a as usize].sqrt(),
                Node::Bin(op, a, b) => {
                    let (x, y) = (v[a as usize], v[b as usize]);
                    match op {
                        BinOp::Add => x + y,
                        BinOp::Sub => x - y,
                        BinOp::Mul => x * y,
                        BinOp::Div => x / y,
                    }
                }
                Node::Fma(a, b, c) => v[a as usize].mul_add(v[b as usize], v[c as usize]),
            };
            v.push(x);
        }
        v
    }

    /// The nodes `roots` as harrow IR expressions over scalar `f32`, each input written by
    /// `input(param, index)`; shared nodes are shared expressions (the IR is hash-consed).
    pub fn to_ir(&self, roots: &[NodeId], input: &dyn Fn(u16, u32) -> Expr) -> Vec<Expr> {
        let Some(&last) = roots.iter().max() else {
            return Vec::new();
        };
        let mut done: Vec<Expr> = Vec::with_capacity(last as usize + 1);
        // Operands precede their users, so one pass up to the last root builds every
        // operand before its user.
        for k in 0..=last {
            let x = |n: NodeId| done[n as usize].clone();
            let e = match self.node(k) {
                Node::Const(b) => Expr::bits(Elem::F32, b as u128),
                Node::Input { param, index } => input(param, index),
                Node::Un(UnOp::Neg, a) => mk(Op::FNeg, vec![x(a)]),
                Node::Un(UnOp::Sqrt, a) => mk(Op::Sqrt, vec![x(a)]),
                Node::Bin(op, a, b) => {
                    let op = match op {
                        BinOp::Add => Op::Add,
                        BinOp::Sub => Op::Sub,
                        BinOp::Mul => Op::Mul,
                        BinOp::Div => Op::Div,
                    };
                    mk(op, vec![x(a), x(b)])
                }
                Node::Fma(a, b, c) => mk(Op::Fma, vec![x(a), x(b), x(c)]),
            };
            done.push(e);
        }
        roots.iter().map(|&r| done[r as usize].clone()).collect()
    }

    /// Number of arithmetic operations under `roots` (shared nodes counted once).
    pub fn operation_count(&self, roots: impl IntoIterator<Item = NodeId>) -> usize {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = roots.into_iter().collect();
        let mut ops = 0;
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id as usize], true) {
                continue;
            }
            match self.node(id) {
                Node::Const(_) | Node::Input { .. } => {}
                Node::Un(_, a) => {
                    ops += 1;
                    stack.push(a);
                }
                Node::Bin(_, a, b) => {
                    ops += 1;
                    stack.extend([a, b]);
                }
                Node::Fma(a, b, c) => {
                    ops += 1;
                    stack.extend([a, b, c]);
                }
            }
        }
        ops
    }
}

/// A unary operation's IEEE single result.
pub fn un(op: UnOp, a: f32) -> f32 {
    match op {
        UnOp::Neg => ieee::neg(a),
        UnOp::Sqrt => ieee::sqrt(a),
    }
}

/// A binary operation's IEEE single result (rounded to nearest even).
pub fn bin(op: BinOp, a: f32, b: f32) -> f32 {
    ieee::binary(op, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_shared_and_constants_fold() {
        let mut d = Dag::default();
        let a = d.add(Node::Input { param: 0, index: 1 });
        let two = d.constant(2.0);
        let m1 = d.add(Node::Bin(BinOp::Mul, a, two));
        let m2 = d.add(Node::Bin(BinOp::Mul, a, two));
        assert_eq!(m1, m2);
        let three = d.constant(3.0);
        let six = d.add(Node::Bin(BinOp::Mul, two, three));
        assert_eq!(d.as_const(six), Some(6.0));
        let v = d.eval(&[vec![0.0, 1.5]]);
        assert_eq!(v[m1 as usize], 3.0);
    }

    #[test]
    fn fma_rounds_once_and_mul_add_twice() {
        // x = 1 + 2^-12: x * x - 1 is exactly 2^-11 + 2^-24, which only the fused form
        // keeps (the rounded product loses the 2^-24 term).
        let mut d = Dag::default();
        let x = d.add(Node::Input { param: 0, index: 0 });
        let m1 = d.constant(-1.0);
        let fused = d.add(Node::Fma(x, x, m1));
        let sq = d.add(Node::Bin(BinOp::Mul, x, x));
        let unfused = d.add(Node::Bin(BinOp::Add, sq, m1));
        let v = d.eval(&[vec![1.0 + 2f32.powi(-12)]]);
        assert_eq!(v[fused as usize], 2f32.powi(-11) + 2f32.powi(-24));
        assert_eq!(v[unfused as usize], 2f32.powi(-11));
        assert!(same_result(f32::NAN, -f32::NAN));
        assert!(!same_result(0.0, -0.0));
    }
}
