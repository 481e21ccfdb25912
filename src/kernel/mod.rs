//! Kernels: small image and tensor algorithms (`.hk` files, `docs/kernels.md`).
//!
//! A kernel reads typed buffers of one to three dimensions and scalar parameters and
//! defines one or more outputs by a pure expression per output point. [`parse`] reads the
//! file, inlines definitions, unrolls reductions over small constant domains and elaborates
//! each body to harrow IR with one *access* variable per distinct buffer read; reductions over
//! a parameter extent stay loops ([`Reduction`]). From that one description:
//! - [`codegen`] vectorizes the body for a target (lowered by `crate::lower`) and
//!   [`vector_c`] writes its C,
//! - [`scalar`] writes the plain scalar C baseline (no intrinsics, no vector types),
//! - [`line_buffer`] splits a stencil whose part repeats at several offsets into a line
//!   kernel and a rows kernel, [`c_file`] writes the C files,
//! - [`reference`] computes the outputs with the reference interpreter,
//! - [`harness`] runs and times them (`harrow run`, `harrow bench`).

pub mod c_file;
pub mod codegen;
pub mod count;
pub mod fuzz;
pub mod halide;
pub mod harness;
mod inline;
pub mod line_buffer;
pub mod parse;
pub mod reference;
pub mod scalar;
pub mod vector_c;

use std::collections::BTreeMap;
use std::fmt;

use crate::ir::{Expr, Op};
use crate::types::Elem;

pub use parse::parse;

/// An affine index `c + sum(coef * var)` over loop variables (output variables and the
/// variables of reductions that stay loops).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Affine {
    /// The constant term.
    pub c: i64,
    /// Variable coefficients (never zero).
    pub terms: BTreeMap<String, i64>,
}

impl Affine {
    /// The constant `c`.
    pub fn constant(c: i64) -> Affine {
        Affine {
            c,
            terms: BTreeMap::new(),
        }
    }

    /// The variable `v`.
    pub fn var(v: &str) -> Affine {
        let mut terms = BTreeMap::new();
        terms.insert(v.to_string(), 1);
        Affine { c: 0, terms }
    }

    /// `self + k * other`.
    pub fn add_scaled(&self, other: &Affine, k: i64) -> Affine {
        let mut out = self.clone();
        out.c += k * other.c;
        for (v, c) in &other.terms {
            let e = out.terms.entry(v.clone()).or_insert(0);
            *e += k * c;
            if *e == 0 {
                out.terms.remove(v);
            }
        }
        out
    }

    /// `k * self`.
    pub fn scale(&self, k: i64) -> Affine {
        Affine::constant(0).add_scaled(self, k)
    }

    /// The coefficient of `v`.
    pub fn coef(&self, v: &str) -> i64 {
        self.terms.get(v).copied().unwrap_or(0)
    }

    /// The index without the term in `v`.
    pub fn without(&self, v: &str) -> Affine {
        let mut out = self.clone();
        out.terms.remove(v);
        out
    }

    /// The value for variable values `env` (missing variables count as 0).
    pub fn eval(&self, env: &dyn Fn(&str) -> i64) -> i64 {
        self.c + self.terms.iter().map(|(v, k)| k * env(v)).sum::<i64>()
    }

    /// The range of values for variables ranging over `range(v) = (lo, hi)` inclusive.
    pub fn range(&self, range: &dyn Fn(&str) -> (i64, i64)) -> (i64, i64) {
        let (mut lo, mut hi) = (self.c, self.c);
        for (v, &k) in &self.terms {
            let (a, b) = range(v);
            let (x, y) = (k * a, k * b);
            lo += x.min(y);
            hi += x.max(y);
        }
        (lo, hi)
    }

    /// C text with each variable `v` written as `name(v)`.
    pub fn c_text(&self, name: &dyn Fn(&str) -> String) -> String {
        let mut s = String::new();
        for (v, k) in &self.terms {
            if !s.is_empty() {
                s.push_str(" + ");
            }
            if *k == 1 {
                s.push_str(&name(v));
            } else {
                s.push_str(&format!("{k} * {}", name(v)));
            }
        }
        if s.is_empty() {
            return self.c.to_string();
        }
        if self.c != 0 {
            s.push_str(&format!(" + {}", self.c));
        }
        format!("({s})")
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.c_text(&|v| v.to_string()))
    }
}

/// An input buffer.
#[derive(Clone, Debug)]
pub struct Input {
    /// Its name.
    pub name: String,
    /// Element type.
    pub elem: Elem,
    /// Number of dimensions (1 to 3); dimension 0 is dense.
    pub dims: usize,
}

/// A scalar parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its type.
    pub elem: Elem,
    /// The value benchmarks use.
    pub default: i64,
    /// The values tests draw from (inclusive).
    pub range: (i64, i64),
    /// Whether it is the extent of a reduction.
    pub is_extent: bool,
}

/// One distinct buffer read: `buffer(idx0, idx1, ...)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Index into [`Kernel::inputs`].
    pub input: usize,
    /// One affine index per dimension.
    pub idx: Vec<Affine>,
}

/// The upper end of a reduction domain dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// A constant.
    Const(i64),
    /// A parameter's value.
    Param(String),
}

/// One dimension of a reduction domain: `var` in `lo..hi`.
#[derive(Clone, Debug)]
pub struct DomainDim {
    /// The variable (`r.x`, or `k` for a one-dimensional domain).
    pub var: String,
    /// First value.
    pub lo: i64,
    /// One past the last value.
    pub hi: Bound,
}

/// How a reduction combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    /// `sum`: wrapping addition.
    Sum,
    /// `minimum`.
    Min,
    /// `maximum`.
    Max,
}

impl ReduceKind {
    /// The surface name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Min => "minimum",
            ReduceKind::Max => "maximum",
        }
    }

    /// The starting value of the accumulator.
    pub fn init(self, elem: Elem) -> i128 {
        match self {
            ReduceKind::Sum => 0,
            ReduceKind::Min => elem.max_value().unwrap_or(1),
            ReduceKind::Max => elem.min_value(),
        }
    }

    /// `acc (op) x`.
    pub fn combine(self, acc: &Expr, x: &Expr) -> Expr {
        let op = match self {
            ReduceKind::Sum => Op::Add,
            ReduceKind::Min => Op::Min,
            ReduceKind::Max => Op::Max,
        };
        crate::ir::mk(op, vec![acc.clone(), x.clone()])
    }
}

/// A reduction that stays a loop (its domain has a parameter extent or is large).
#[derive(Clone, Debug)]
pub struct Reduction {
    /// How it combines.
    pub kind: ReduceKind,
    /// The domain, innermost dimension first.
    pub dom: Vec<DomainDim>,
    /// The one-lane body, in terms of access variables, parameters, domain variables and
    /// inner reductions.
    pub body: Expr,
}

/// A parsed, elaborated kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Input buffers.
    pub inputs: Vec<Input>,
    /// Scalar parameters.
    pub params: Vec<Param>,
    /// The output's name.
    pub out_name: String,
    /// The output's element type.
    pub out_elem: Elem,
    /// The output's variables, innermost (vectorized) first.
    pub out_vars: Vec<String>,
    /// The one-lane body: IR over access variables `@aK`, reduction variables `@rK` and
    /// parameters.
    pub body: Expr,
    /// Further outputs, each a name and a one-lane body like [`Kernel::body`], with the
    /// first output's variables and element type: they are computed in the same loops
    /// (an RGB conversion writing three planes reads each input once per point).
    pub more_outputs: Vec<(String, Expr)>,
    /// Access `K` is the variable `@aK`.
    pub accesses: Vec<Access>,
    /// Reduction `K` is the variable `@rK`; a reduction only refers to earlier ones.
    pub reductions: Vec<Reduction>,
    /// Output extents for benchmarks (`bench` line; default 1920x1080 images).
    pub bench_extents: Vec<i64>,
}

/// Which kind of leaf a variable name is.
pub enum Leaf {
    /// Access `K`.
    Access(usize),
    /// Reduction `K`.
    Reduction(usize),
    /// A parameter or a domain variable.
    Scalar,
}

/// Classifies a variable name of a kernel body.
pub fn leaf(name: &str) -> Leaf {
    if let Some(k) = name.strip_prefix("@a").and_then(|s| s.parse().ok()) {
        return Leaf::Access(k);
    }
    if let Some(k) = name.strip_prefix("@r").and_then(|s| s.parse().ok()) {
        return Leaf::Reduction(k);
    }
    Leaf::Scalar
}

impl Kernel {
    /// The vectorized (innermost) output variable.
    pub fn vec_var(&self) -> &str {
        &self.out_vars[0]
    }

    /// The widest element type in the body and the reductions, in bits.
    pub fn widest_bits(&self) -> u32 {
        let mut w = self.out_elem.bits();
        let mut see = |e: &Expr| {
            for n in crate::ir::visit::post_order(e) {
                if !n.ty().elem.is_internal() && n.ty().elem != Elem::Bool {
                    w = w.max(n.ty().elem.bits());
                }
            }
        };
        for b in self.bodies() {
            see(b);
        }
        for r in &self.reductions {
            see(&r.body);
        }
        w
    }

    /// Every output's body, the first output's first.
    pub fn bodies(&self) -> impl Iterator<Item = &Expr> {
        std::iter::once(&self.body).chain(self.more_outputs.iter().map(|(_, b)| b))
    }

    /// The number of outputs.
    pub fn outputs(&self) -> usize {
        1 + self.more_outputs.len()
    }

    /// The kernel with every output's body transformed by `f`.
    pub fn map_bodies(&self, f: impl Fn(&Expr) -> Expr) -> Kernel {
        Kernel {
            body: f(&self.body),
            more_outputs: self
                .more_outputs
                .iter()
                .map(|(n, b)| (n.clone(), f(b)))
                .collect(),
            ..self.clone()
        }
    }

    /// The parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// Rebuilds a one-lane expression at `lanes` lanes: `leaf` replaces the leaves it knows,
/// other variables and constants are broadcast.
pub fn widen(e: &Expr, lanes: u32, leaf: &dyn Fn(&Expr) -> Option<Expr>) -> Expr {
    let r: Result<Expr, crate::ir::TypeError> = crate::ir::visit::rebuild(e, |n, args| {
        if let Some(x) = leaf(n) {
            return Ok(x);
        }
        match n.op() {
            Op::Const(_) | Op::Var(_) => Ok(n.broadcast(lanes)),
            _ => {
                let ty = crate::ir::explicit_type(n).map(|t| t.with_lanes(lanes));
                Expr::build(n.op().clone(), ty, args)
            }
        }
    });
    r.expect("widening an element-wise expression keeps it well typed")
}
