//! Plain scalar C for a kernel: the "LLVM alone" baseline and the vector code's fallback
//! for rows narrower than one vector.
//!
//! It is the C a careful programmer writes: one statement per operation in the natural
//! type, wrapping arithmetic through unsigned types (signed overflow is undefined in C),
//! FPIR operations spelled out by their definitions (`crate::fpir`). Only operations C has
//! no safe spelling for (variable shift amounts, division by a non-constant) call the exact
//! helpers of `prelude.h`.

use std::collections::HashMap;
use std::fmt::Write;

use super::{Bound, Kernel, Leaf, leaf};
use crate::ir::{Expr, Op};
use crate::lower::cform::c_ident;
use crate::lower::natural::{literal, op_text, wide_unsigned};

/// The C name of a loop variable (output or domain variable).
pub fn loop_var(k: &Kernel, v: &str) -> String {
    if k.out_vars.iter().any(|x| x == v) {
        c_ident("v_", v)
    } else {
        c_ident("p_", v)
    }
}

/// The C name of an input's base pointer.
pub fn base_ptr(name: &str) -> String {
    c_ident("in_", name)
}

/// The C name of an input's stride in dimension `d` (elements).
pub fn stride(name: &str, d: usize) -> String {
    format!("{}_s{d}", c_ident("st_", name))
}

/// The C names of the outputs' pointers, in order: `out` for the first, `out_NAME` for
/// the others. Output `p`'s stride in dimension `d` is `p_sd`.
pub fn out_ptrs(k: &Kernel) -> Vec<String> {
    std::iter::once("out".to_string())
        .chain(k.more_outputs.iter().map(|(n, _)| c_ident("out_", n)))
        .collect()
}

/// The C parameter list shared by the vector and scalar functions.
pub fn signature(k: &Kernel, fname: &str) -> String {
    let mut s = format!("void {fname}(");
    for (i, p) in out_ptrs(k).iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(s, "{sep}{} *restrict {p}", k.out_elem.c_name());
        for d in 1..k.out_vars.len() {
            let _ = write!(s, ", int32_t {p}_s{d}");
        }
    }
    for inp in &k.inputs {
        let _ = write!(
            s,
            ", const {} *restrict {}",
            inp.elem.c_name(),
            base_ptr(&inp.name)
        );
        for d in 1..inp.dims {
            let _ = write!(s, ", int32_t {}", stride(&inp.name, d));
        }
    }
    for p in &k.params {
        let _ = write!(s, ", {} {}", p.elem.c_name(), c_ident("p_", &p.name));
    }
    for d in 0..k.out_vars.len() {
        let _ = write!(s, ", int32_t e{d}");
    }
    s.push(')');
    s
}

/// The arguments of a call passing on the parameters of [`signature`], in order.
pub fn call_args(k: &Kernel) -> String {
    let mut args = Vec::new();
    for p in out_ptrs(k) {
        args.push(p.clone());
        args.extend((1..k.out_vars.len()).map(|d| format!("{p}_s{d}")));
    }
    for inp in &k.inputs {
        args.push(base_ptr(&inp.name));
        args.extend((1..inp.dims).map(|d| stride(&inp.name, d)));
    }
    args.extend(k.params.iter().map(|p| c_ident("p_", &p.name)));
    args.extend((0..k.out_vars.len()).map(|d| format!("e{d}")));
    args.join(", ")
}

/// The C text of a domain bound.
pub fn bound(b: &Bound) -> String {
    match b {
        Bound::Const(c) => c.to_string(),
        Bound::Param(p) => format!("(int32_t){}", c_ident("p_", p)),
    }
}

/// Writes statements computing one-lane expressions.
pub struct Writer<'k> {
    k: &'k Kernel,
    /// The statements.
    pub out: String,
    /// The C name of each node emitted, by node identity, innermost scope last. Each entry
    /// holds its node: an identity is an address, and a node built here and dropped (an
    /// FPIR operation's definition) would leave its address to a later, different node,
    /// which would then be read from the dropped node's variable.
    scopes: Vec<HashMap<usize, (Expr, String)>>,
    next: usize,
    indent: usize,
}

impl<'k> Writer<'k> {
    /// A writer for `k` starting at indentation `indent` (spaces).
    pub fn new(k: &'k Kernel, indent: usize) -> Self {
        Writer {
            k,
            out: String::new(),
            scopes: vec![HashMap::new()],
            next: 0,
            indent,
        }
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.out, "{:w$}{s}", "", w = self.indent);
    }

    fn lookup(&self, id: usize) -> Option<String> {
        self.scopes
            .iter()
            .rev()
            .find_map(|m| m.get(&id).map(|(_, name)| name.clone()))
    }

    /// The C text of the buffer element read by access `a`.
    fn access(&self, a: usize) -> String {
        let acc = &self.k.accesses[a];
        let name = &self.k.inputs[acc.input].name;
        let mut idx = acc.idx[0].c_text(&|v| loop_var(self.k, v));
        for (d, ix) in acc.idx.iter().enumerate().skip(1) {
            let _ = write!(
                idx,
                " + {} * {}",
                ix.c_text(&|v| loop_var(self.k, v)),
                stride(name, d)
            );
        }
        format!("{}[{idx}]", base_ptr(name))
    }

    /// Emits `e` and returns the C variable or literal holding it.
    pub fn value(&mut self, e: &Expr) -> String {
        if let Some(n) = self.lookup(e.id()) {
            return n;
        }
        let t = e.ty().elem;
        let ct = t.c_name();
        if let Op::Var(name) = e.op() {
            let s = match leaf(name) {
                Leaf::Access(a) => self.access(a),
                Leaf::Reduction(r) => self.reduction(r),
                Leaf::Scalar => {
                    if self.k.param(name).is_some() {
                        c_ident("p_", name)
                    } else {
                        loop_var(self.k, name)
                    }
                }
            };
            self.scopes
                .last_mut()
                .expect("a scope")
                .insert(e.id(), (e.clone(), s.clone()));
            return s;
        }
        if let Some(v) = e.as_const() {
            return literal(t, v);
        }
        if e.op().is_fpir() {
            let def = crate::fpir::definition(e.op(), e.ty(), e.args());
            let v = self.value(&def);
            self.scopes
                .last_mut()
                .expect("a scope")
                .insert(e.id(), (e.clone(), v.clone()));
            return v;
        }
        let args: Vec<String> = e.args().iter().map(|a| self.value(a)).collect();
        let text = op_text(e, &args);
        self.next += 1;
        let v = format!("t{}", self.next);
        self.line(&format!("{ct} {v} = {text};"));
        self.scopes
            .last_mut()
            .expect("a scope")
            .insert(e.id(), (e.clone(), v.clone()));
        v
    }

    /// Emits the loop of reduction `r` and returns its accumulator.
    fn reduction(&mut self, r: usize) -> String {
        let red = self.k.reductions[r].clone();
        let t = red.body.ty().elem;
        let ct = t.c_name();
        self.next += 1;
        let acc = format!("r{}", self.next);
        self.line(&format!("{ct} {acc} = {};", literal(t, red.kind.init(t))));
        for d in red.dom.iter().rev() {
            let v = loop_var(self.k, &d.var);
            self.line(&format!(
                "for (int32_t {v} = {}; {v} < {}; {v}++) {{",
                d.lo,
                bound(&d.hi)
            ));
            self.indent += 4;
        }
        self.scopes.push(HashMap::new());
        let b = self.value(&red.body);
        let step = match red.kind {
            super::ReduceKind::Sum => {
                format!("({ct})(({w}){acc} + ({w}){b})", w = wide_unsigned(t))
            }
            super::ReduceKind::Min => format!("({b} < {acc} ? {b} : {acc})"),
            super::ReduceKind::Max => format!("({b} > {acc} ? {b} : {acc})"),
        };
        self.line(&format!("{acc} = {step};"));
        self.scopes.pop();
        for _ in &red.dom {
            self.indent -= 4;
            self.line("}");
        }
        acc
    }
}

/// The scalar C function of a kernel (typedef-free; needs `prelude.h` for rare helpers).
pub fn function(k: &Kernel, fname: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} {{", signature(k, fname));
    let n = k.out_vars.len();
    let mut indent = 4;
    for d in (0..n).rev() {
        let v = loop_var(k, &k.out_vars[d]);
        let _ = writeln!(
            s,
            "{:indent$}for (int32_t {v} = 0; {v} < e{d}; {v}++) {{",
            ""
        );
        indent += 4;
    }
    let mut w = Writer::new(k, indent);
    let results: Vec<String> = k.bodies().map(|b| w.value(b)).collect();
    s.push_str(&w.out);
    for (p, r) in out_ptrs(k).iter().zip(results) {
        let _ = writeln!(s, "{:indent$}{p}[{}] = {r};", "", out_index(k, p));
    }
    for _ in 0..n {
        indent -= 4;
        let _ = writeln!(s, "{:indent$}}}", "");
    }
    s.push_str("}\n");
    s
}

/// The flat index of the current point in the output whose pointer is `p`.
pub fn out_index(k: &Kernel, p: &str) -> String {
    let mut s = loop_var(k, &k.out_vars[0]);
    for d in 1..k.out_vars.len() {
        let _ = write!(s, " + {} * {p}_s{d}", loop_var(k, &k.out_vars[d]));
    }
    s
}
