//! C with the target's intrinsics from the extracted vector program: one variable per
//! e-class used (so a register shared by several outputs is computed once), loads and
//! shuffles from the leaf plans. A register of an array the kernel never reads is stored as
//! soon as it is computed; the stores into an array it reads come after every computation,
//! so the array is read as it was on entry, as the symbolic evaluation did.

use std::collections::HashMap;
use std::fmt::Write;

use egg::Id;

use super::cfront::Param;
use super::cost::{LeafPlan, Source, leaf_plan};
use super::extract::Picks;
use super::lang::{Leaf, VecLang};
use crate::isa::float::{FloatIsa, FloatOp};

/// One output register: `lanes` elements of parameter `param` from element `offset`
/// (`lanes` is a register, or the whole parameter when it is shorter than one).
#[derive(Clone, Debug)]
pub struct Chunk {
    /// The parameter written.
    pub param: usize,
    /// Its first element.
    pub offset: usize,
    /// Elements stored.
    pub lanes: usize,
    /// The class of its `vec`.
    pub root: Id,
}

/// A float constant as C reads it back to the same bits.
pub fn c_float(bits: u32) -> String {
    let v = f32::from_bits(bits);
    if v.is_nan() {
        "__builtin_nanf(\"\")".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "__builtin_inff()".into()
        } else {
            "(-__builtin_inff())".into()
        }
    } else {
        // Rust prints the shortest decimal that reads back to the same float; C's
        // conversion of a float literal is correctly rounded, so it gives the same bits.
        let s = format!("{v:?}");
        format!("{s}f")
    }
}

struct Emitter<'p> {
    isa: &'static FloatIsa,
    sizes: Vec<usize>,
    ext: &'p Picks,
    body: String,
    names: HashMap<Id, String>,
    temps: usize,
}

/// The kernel `name` as C: the parameters declared as the user wrote them (`decls`), the
/// registers of `chunks` computed and stored.
pub fn emit(
    isa: &'static FloatIsa,
    name: &str,
    params: &[Param],
    decls: &[String],
    ext: &Picks,
    chunks: &[Chunk],
) -> String {
    let mut e = Emitter {
        isa,
        sizes: params.iter().map(Param::len).collect(),
        ext,
        body: String::new(),
        names: HashMap::new(),
        temps: 0,
    };
    let mut out = String::new();
    out.push_str(isa.header);
    out.push_str("#include <string.h>\n\n");
    let _ = writeln!(out, "void {name}({}) {{", decls.join(", "));
    for (i, p) in params.iter().enumerate() {
        if p.dims.is_empty() {
            let _ = writeln!(out, "    const float p{i}[1] = {{{}}};", p.name);
        } else {
            let cst = if p.is_const { "const " } else { "" };
            let _ = writeln!(out, "    {cst}float *p{i} = ({cst}float *){};", p.name);
        }
    }
    // An array the program never reads is stored as each register is done, so the
    // register dies at once: kept to the end, a 16x16 product's 32 result registers
    // spilled. An array it reads is stored after everything, so it is read as it was on
    // entry.
    let read = params_read(ext, chunks);
    let mut deferred = String::new();
    for c in chunks {
        let v = e.vector(c.root);
        let store = store(isa, c, &v);
        if read.contains(&c.param) {
            deferred.push_str(&store);
        } else {
            e.body.push_str(&store);
        }
    }
    out.push_str(&e.body);
    out.push_str(&deferred);
    out.push_str("}\n");
    out
}

/// The C storing register `v` into the elements of chunk `c`.
fn store(isa: &FloatIsa, c: &Chunk, v: &str) -> String {
    let w = isa.lanes;
    if c.lanes == w {
        let p = format!("p{} + {}", c.param, c.offset);
        return format!("    {};\n", isa.c(FloatOp::Store, &[("p", &p), ("a", v)]));
    }
    format!(
        "    {{\n        float t[{w}];\n        {};\n        memcpy(p{} + {}, t, {} * sizeof(float));\n    }}\n",
        isa.c(FloatOp::Store, &[("p", "t"), ("a", v)]),
        c.param,
        c.offset,
        c.lanes
    )
}

/// The parameters the program under `chunks` reads (its input leaves).
fn params_read(ext: &Picks, chunks: &[Chunk]) -> std::collections::HashSet<usize> {
    let mut read = std::collections::HashSet::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Id> = chunks.iter().map(|c| c.root).collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        match ext.node(id) {
            VecLang::Leaf(Leaf::Input(p, _)) => {
                read.insert(*p as usize);
            }
            n => stack.extend(egg::Language::children(n).iter().copied()),
        }
    }
    read
}

impl Emitter<'_> {
    fn fresh(&mut self, prefix: &str) -> String {
        self.temps += 1;
        format!("{prefix}{}", self.temps)
    }

    fn define(&mut self, ty: &str, value: String) -> String {
        let v = self.fresh(if ty == "float" { "s" } else { "v" });
        let _ = writeln!(self.body, "    {ty} {v} = {value};");
        v
    }

    fn scalar_leaf(&self, l: Leaf) -> String {
        match l {
            Leaf::Input(p, i) => format!("p{p}[{i}]"),
            Leaf::Const(b) => c_float(b),
            Leaf::Any | Leaf::Mask(_) => "0.0f".into(),
        }
    }

    /// The C of a scalar class: an expression for leaves, a variable otherwise.
    fn scalar(&mut self, id: Id) -> String {
        if let Some(n) = self.names.get(&id) {
            return n.clone();
        }
        let node = self.ext.node(id).clone();
        let text = match &node {
            VecLang::Leaf(l) => return self.scalar_leaf(*l),
            VecLang::Add([a, b]) => format!("{} + {}", self.scalar(*a), self.scalar(*b)),
            VecLang::Sub([a, b]) => format!("{} - {}", self.scalar(*a), self.scalar(*b)),
            VecLang::Mul([a, b]) => format!("{} * {}", self.scalar(*a), self.scalar(*b)),
            VecLang::Div([a, b]) => format!("{} / {}", self.scalar(*a), self.scalar(*b)),
            VecLang::Neg([a]) => format!("-{}", self.scalar(*a)),
            VecLang::Sqrt([a]) => format!("__builtin_sqrtf({})", self.scalar(*a)),
            VecLang::Fma([a, b, c]) => format!(
                "__builtin_fmaf({}, {}, {})",
                self.scalar(*a),
                self.scalar(*b),
                self.scalar(*c)
            ),
            other => unreachable!("a vector node in a scalar class: {other:?}"),
        };
        let v = self.define("float", text);
        self.names.insert(id, v.clone());
        v
    }

    /// The variable of a vector class.
    fn vector(&mut self, id: Id) -> String {
        if let Some(n) = self.names.get(&id) {
            return n.clone();
        }
        let isa = self.isa;
        let node = self.ext.node(id).clone();
        let un = |e: &mut Self, op: FloatOp, a: Id| {
            let a = e.vector(a);
            isa.c(op, &[("a", &a)])
        };
        let text = match &node {
            VecLang::Vec(lanes) => self.vec_node(lanes),
            VecLang::VAdd([a, b]) => self.binary(FloatOp::Add, *a, *b),
            VecLang::VSub([a, b]) => self.binary(FloatOp::Sub, *a, *b),
            VecLang::VMul([a, b]) => self.binary(FloatOp::Mul, *a, *b),
            VecLang::VDiv([a, b]) => self.binary(FloatOp::Div, *a, *b),
            VecLang::VNeg([a]) => un(self, FloatOp::Neg, *a),
            VecLang::VSqrt([a]) => un(self, FloatOp::Sqrt, *a),
            VecLang::VFma([a, b, c]) => {
                let (a, b, c) = (self.vector(*a), self.vector(*b), self.vector(*c));
                isa.c(FloatOp::Fma, &[("a", &a), ("b", &b), ("c", &c)])
            }
            VecLang::Blend([m, a, b]) => {
                let mask = match self.ext.node(*m) {
                    VecLang::Leaf(Leaf::Mask(m)) => *m,
                    other => unreachable!("a blend mask is a leaf: {other:?}"),
                };
                let (a, b) = (self.vector(*a), self.vector(*b));
                let idx: Vec<String> = (0..isa.lanes)
                    .map(|i| if mask >> i & 1 == 1 { i } else { isa.lanes + i }.to_string())
                    .collect();
                format!("__builtin_shufflevector({a}, {b}, {})", idx.join(", "))
            }
            other => unreachable!("a scalar node in a vector class: {other:?}"),
        };
        let v = self.define(isa.vector_type, text);
        self.names.insert(id, v.clone());
        v
    }

    fn binary(&mut self, op: FloatOp, a: Id, b: Id) -> String {
        let (a, b) = (self.vector(a), self.vector(b));
        self.isa.c(op, &[("a", &a), ("b", &b)])
    }

    fn vec_node(&mut self, lanes: &[Id]) -> String {
        let isa = self.isa;
        let leaves: Option<Vec<Leaf>> = lanes
            .iter()
            .map(|&l| match self.ext.node(l) {
                VecLang::Leaf(x) => Some(*x),
                _ => None,
            })
            .collect();
        let Some(leaves) = leaves else {
            let parts: Vec<String> = lanes.iter().map(|&l| self.scalar(l)).collect();
            return isa.c(FloatOp::FromLanes, &[("lanes", &parts.join(", "))]);
        };
        match leaf_plan(isa, &self.sizes, &leaves).0 {
            LeafPlan::Nothing => isa.c(FloatOp::Splat, &[("x", "0.0f")]),
            LeafPlan::Scalars(ls) => {
                let parts: Vec<String> = ls.iter().map(|&l| self.scalar_leaf(l)).collect();
                isa.c(FloatOp::FromLanes, &[("lanes", &parts.join(", "))])
            }
            LeafPlan::Shuffled { sources, picks } => self.shuffled(&sources, &picks),
        }
    }

    fn source(&mut self, s: &Source) -> String {
        let isa = self.isa;
        let w = isa.lanes;
        let text = match s {
            Source::Window { param, start, len } if *len as usize == w => {
                isa.c(FloatOp::Load, &[("p", &format!("p{param} + {start}"))])
            }
            Source::Window { param, start, len } => {
                let t = self.fresh("t");
                let _ = writeln!(self.body, "    float {t}[{w}] = {{0}};");
                let _ = writeln!(
                    self.body,
                    "    memcpy({t}, p{param} + {start}, {len} * sizeof(float));"
                );
                isa.c(FloatOp::Load, &[("p", &t)])
            }
            Source::Splat(p, e) => isa.c(FloatOp::Splat, &[("x", &format!("p{p}[{e}]"))]),
            Source::Consts(k) => {
                let parts: Vec<String> = k.iter().map(|&b| c_float(b)).collect();
                isa.c(FloatOp::FromLanes, &[("lanes", &parts.join(", "))])
            }
        };
        self.define(isa.vector_type, text)
    }

    /// Sources combined left to right: each step keeps the lanes placed so far and takes
    /// the next source's.
    fn shuffled(&mut self, sources: &[Source], picks: &[Option<(usize, usize)>]) -> String {
        let w = self.isa.lanes;
        let vars: Vec<String> = sources.iter().map(|s| self.source(s)).collect();
        let idx = |f: &dyn Fn(usize, Option<(usize, usize)>) -> String| -> String {
            (0..w)
                .map(|i| f(i, picks[i]))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let identity = picks
            .iter()
            .enumerate()
            .all(|(i, p)| p.is_none_or(|(s, l)| s == 0 && l == i));
        if vars.len() == 1 && identity {
            return vars[0].clone();
        }
        let first = idx(&|_, p| match p {
            Some((0, l)) => l.to_string(),
            _ => "-1".into(),
        });
        let mut acc = format!("__builtin_shufflevector({0}, {0}, {first})", vars[0]);
        for (k, v) in vars.iter().enumerate().skip(1) {
            let a = self.define(self.isa.vector_type, acc);
            let ix = idx(&|i, p| match p {
                Some((s, l)) if s == k => (w + l).to_string(),
                Some((s, _)) if s < k => i.to_string(),
                _ => "-1".into(),
            });
            acc = format!("__builtin_shufflevector({a}, {v}, {ix})");
        }
        acc
    }
}
