//! The meaning of a kernel: its output computed with the reference interpreter.
//!
//! One output row (all points sharing the outer coordinates) is one evaluation of the body
//! widened to the row's width; every arithmetic step goes through `interp::eval`, so a
//! kernel means exactly what its IR means.

use std::collections::HashMap;

use super::{Kernel, Leaf, leaf};
use crate::interp::{Env, Value, eval};
use crate::ir::{Expr, Op};
use crate::types::{Elem, Type};

/// A dense buffer with its index ranges (dimension 0 fastest).
#[derive(Clone, Debug)]
pub struct Data {
    /// Element type.
    pub elem: Elem,
    /// Per dimension: first index and extent.
    pub dims: Vec<(i64, i64)>,
    /// The elements as exact integers.
    pub data: Vec<i128>,
}

impl Data {
    /// A buffer of zeros.
    pub fn new(elem: Elem, dims: Vec<(i64, i64)>) -> Data {
        let n = dims.iter().map(|d| d.1.max(0) as usize).product();
        Data {
            elem,
            dims,
            data: vec![0; n],
        }
    }

    /// The flat position of an index, if inside.
    pub fn offset(&self, idx: &[i64]) -> Option<usize> {
        let mut off = 0usize;
        let mut stride = 1usize;
        for (d, &(lo, ext)) in self.dims.iter().enumerate() {
            let i = idx[d] - lo;
            if i < 0 || i >= ext {
                return None;
            }
            off += i as usize * stride;
            stride *= ext as usize;
        }
        Some(off)
    }
}

/// Values for one run: parameters and output extents.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Parameter values by name.
    pub params: HashMap<String, i64>,
    /// Extent of each output dimension.
    pub extents: Vec<i64>,
}

impl Setup {
    /// Every parameter at its default, at the given output extents (what benchmarks use).
    pub fn defaults(k: &Kernel, extents: &[i64]) -> Setup {
        Setup {
            params: k
                .params
                .iter()
                .map(|p| (p.name.clone(), p.default))
                .collect(),
            extents: extents.to_vec(),
        }
    }

    /// The inclusive range of a loop variable.
    pub fn var_range(&self, k: &Kernel, v: &str) -> (i64, i64) {
        if let Some(d) = k.out_vars.iter().position(|x| x == v) {
            return (0, self.extents[d] - 1);
        }
        for r in &k.reductions {
            for d in &r.dom {
                if d.var == v {
                    return (d.lo, self.hi(&d.hi) - 1);
                }
            }
        }
        (0, 0)
    }

    /// The value of a domain bound.
    pub fn hi(&self, b: &super::Bound) -> i64 {
        match b {
            super::Bound::Const(c) => *c,
            super::Bound::Param(p) => self.params.get(p).copied().unwrap_or(0),
        }
    }
}

/// The index range each input must cover (first index and extent per dimension),
/// including what vector loads read beyond the elements used: a load with stride `s`
/// reads `s - 1` elements more, and one of stride 2 to 4 starts at a multiple of its
/// stride (`in(2x + 1)` reads from `2x`, so it can share a load with `in(2x)` and use
/// aligned loads).
pub fn footprint(k: &Kernel, s: &Setup) -> Vec<Vec<(i64, i64)>> {
    let v = k.vec_var().to_string();
    k.inputs
        .iter()
        .enumerate()
        .map(|(i, inp)| {
            let mut lo = vec![i64::MAX; inp.dims];
            let mut hi = vec![i64::MIN; inp.dims];
            for a in k.accesses.iter().filter(|a| a.input == i) {
                for (d, ix) in a.idx.iter().enumerate() {
                    let (mut l, mut h) = ix.range(&|x| s.var_range(k, x));
                    if d == 0 {
                        let stride = ix.coef(&v);
                        h += (stride - 1).max(0);
                        if (2..=4).contains(&stride) {
                            l -= ix.c.rem_euclid(stride);
                        }
                    }
                    lo[d] = lo[d].min(l);
                    hi[d] = hi[d].max(h);
                }
            }
            (0..inp.dims)
                .map(|d| {
                    if lo[d] > hi[d] {
                        (0, 1)
                    } else {
                        (lo[d], hi[d] - lo[d] + 1)
                    }
                })
                .collect()
        })
        .collect()
}

/// Why the reference could not compute the output.
#[derive(Debug)]
pub struct RefError(pub String);

struct Ctx<'a> {
    k: &'a Kernel,
    inputs: &'a [Data],
    setup: &'a Setup,
    width: u32,
    widened: HashMap<usize, Expr>,
}

impl Ctx<'_> {
    fn widened(&mut self, e: &Expr) -> Expr {
        if let Some(w) = self.widened.get(&e.id()) {
            return w.clone();
        }
        let width = self.width;
        let w = super::widen(e, width, &|n| match n.op() {
            Op::Var(name) => match leaf(name) {
                Leaf::Access(_) | Leaf::Reduction(_) => {
                    Some(Expr::var(name.clone(), n.ty().with_lanes(width)))
                }
                Leaf::Scalar => None,
            },
            _ => None,
        });
        self.widened.insert(e.id(), w.clone());
        w
    }

    /// Evaluates a one-lane expression over the row, with loop variables `vars`.
    fn eval(&mut self, e: &Expr, vars: &HashMap<String, i64>) -> Result<Value, RefError> {
        let w = self.widened(e);
        let mut env = Env::new();
        for p in &self.k.params {
            let v = self.setup.params.get(&p.name).copied().unwrap_or(p.default);
            env.set(
                p.name.as_str(),
                Value::from_ints(p.elem, &[v as i128]).scalar(),
            );
        }
        for (name, v) in vars {
            env.set(
                name.as_str(),
                Value::from_ints(Elem::I32, &[*v as i128]).scalar(),
            );
        }
        for (name, t) in crate::ir::visit::free_vars(e) {
            match leaf(&name) {
                Leaf::Access(a) => {
                    let vals = self.gather(a, vars)?;
                    env.set(name.clone(), Value::from_ints(t.elem, &vals));
                }
                Leaf::Reduction(r) => {
                    let v = self.reduce(r, vars)?;
                    env.set(name.clone(), v);
                }
                Leaf::Scalar => {}
            }
        }
        eval(&w, &env).map_err(|e| RefError(e.to_string()))
    }

    fn gather(&self, a: usize, vars: &HashMap<String, i64>) -> Result<Vec<i128>, RefError> {
        let acc = &self.k.accesses[a];
        let data = &self.inputs[acc.input];
        let v = self.k.vec_var();
        let mut out = Vec::with_capacity(self.width as usize);
        let mut idx = vec![0i64; acc.idx.len()];
        for lane in 0..self.width as i64 {
            for (d, ix) in acc.idx.iter().enumerate() {
                idx[d] = ix.eval(&|n| {
                    if n == v {
                        lane
                    } else {
                        vars.get(n).copied().unwrap_or(0)
                    }
                });
            }
            let off = data.offset(&idx).ok_or_else(|| {
                RefError(format!(
                    "`{}` read outside its footprint at {idx:?}",
                    self.k.inputs[acc.input].name
                ))
            })?;
            out.push(data.data[off]);
        }
        Ok(out)
    }

    fn reduce(&mut self, r: usize, vars: &HashMap<String, i64>) -> Result<Value, RefError> {
        let red = self.k.reductions[r].clone();
        let ty = red.body.ty().with_lanes(self.width);
        let init = red.kind.init(ty.elem);
        let mut acc = Value::from_ints(ty.elem, &vec![init; self.width as usize]);
        let bounds: Vec<(i64, i64)> = red
            .dom
            .iter()
            .map(|d| (d.lo, self.setup.hi(&d.hi)))
            .collect();
        if bounds.iter().any(|(lo, hi)| hi <= lo) {
            return Ok(acc);
        }
        let mut point: Vec<i64> = bounds.iter().map(|b| b.0).collect();
        let mut vars = vars.clone();
        loop {
            for (d, dim) in red.dom.iter().enumerate() {
                vars.insert(dim.var.clone(), point[d]);
            }
            // The body binds its own leaves; then one combining step.
            let body = self.eval(&red.body, &vars)?;
            let mut env = Env::new();
            env.set("@acc", acc.clone());
            env.set("@body", body);
            let combine = red
                .kind
                .combine(&Expr::var("@acc", ty), &Expr::var("@body", ty));
            acc = eval(&combine, &env).map_err(|e| RefError(e.to_string()))?;
            // Next point, innermost dimension fastest.
            let mut d = 0;
            loop {
                if d == point.len() {
                    return Ok(acc);
                }
                point[d] += 1;
                if point[d] < bounds[d].1 {
                    break;
                }
                point[d] = bounds[d].0;
                d += 1;
            }
        }
    }
}

/// Computes every output, in order; `inputs` must cover [`footprint`].
pub fn run(k: &Kernel, inputs: &[Data], setup: &Setup) -> Result<Vec<Data>, RefError> {
    let dims: Vec<(i64, i64)> = setup.extents.iter().map(|&e| (0, e)).collect();
    let mut outs = vec![Data::new(k.out_elem, dims); k.outputs()];
    let width = setup.extents[0];
    if width <= 0 || outs[0].data.is_empty() {
        return Ok(outs);
    }
    let mut cx = Ctx {
        k,
        inputs,
        setup,
        width: width as u32,
        widened: HashMap::new(),
    };
    let outer: Vec<i64> = setup.extents[1..].to_vec();
    let rows: i64 = outer.iter().product();
    for row in 0..rows {
        let mut vars = HashMap::new();
        let mut rem = row;
        for (d, &e) in outer.iter().enumerate() {
            vars.insert(k.out_vars[d + 1].clone(), rem % e);
            rem /= e;
        }
        let base = (row * width) as usize;
        for (out, body) in outs.iter_mut().zip(k.bodies()) {
            let v = cx.eval(body, &vars)?;
            out.data[base..base + width as usize].copy_from_slice(&v.to_ints());
        }
    }
    Ok(outs)
}

/// One-lane type helper for the evaluator.
trait ScalarValue {
    fn scalar(self) -> Value;
}

impl ScalarValue for Value {
    fn scalar(mut self) -> Value {
        self.ty = Type::scalar(self.ty.elem);
        self
    }
}
