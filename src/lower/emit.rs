//! C emission of a selected chunk expression.
//!
//! Every vector value is a clang extended vector (`hv_u8x32`, any lane count); register
//! values convert to and from them by a bit cast, which costs nothing. Instructions become
//! intrinsic calls; generic nodes become vector operators clang understands
//! (`+`, shifts by constants, `__builtin_elementwise_min`, `__builtin_convertvector`,
//! `__builtin_shufflevector`) or, for everything else, a loop over lanes in natural C
//! (`natural::natural_c`, FPIR operations by their definitions) that clang can often
//! vectorize again. Boolean lanes are `uint8_t` 0/1 vectors; AVX-512 mask registers convert
//! to and from them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use super::cform::{
    c_ident, c_operator, folded_definition, lane_loop_reason, positive_divisor, saturating_builtin,
};

use crate::ir::{Expr, Op, Sym};
use crate::isa::target::Target;
use crate::types::{Elem, Type};

/// The C helpers every generated file starts with.
pub const PRELUDE: &str = include_str!("prelude.h");

/// The C type of a value of type `t` (scalars: the lane type; vectors: `hv_<elem>x<lanes>`).
pub fn c_type(t: Type) -> String {
    if t.is_scalar() {
        return t.elem.c_name().to_string();
    }
    format!("hv_{}x{}", t.elem.name(), t.lanes)
}

fn typedef(t: Type) -> String {
    let name = c_type(t);
    format!(
        "#ifndef HV_T_{name}\n#define HV_T_{name}\ntypedef {} {name} __attribute__((ext_vector_type({})));\n#endif\n",
        t.elem.c_name(),
        t.lanes
    )
}

fn unsigned(t: Type) -> Type {
    if t.elem == Elem::Bool {
        t.with_elem(Elem::U8)
    } else {
        t.with_elem(t.elem.to_unsigned())
    }
}

/// A C literal of type `elem` with canonical bits `bits`.
fn literal(elem: Elem, bits: u128) -> String {
    match elem.bits() {
        128 => format!(
            "((hv_u128)0x{:x}ULL << 64 | (hv_u128)0x{:x}ULL)",
            (bits >> 64) as u64,
            bits as u64
        ),
        _ => format!("(({})0x{:x}ULL)", elem.c_name(), bits as u64),
    }
}

fn sgn(e: Elem) -> u8 {
    e.is_signed() as u8
}

/// The canonical-bits scalar C expression of `e` (a one-lane expression), with `leaf`
/// giving the C text (already canonical bits) of the nodes it knows.
pub fn scalar_c(e: &Expr, leaf: &dyn Fn(&Expr) -> Option<String>) -> String {
    if let Some(s) = leaf(e) {
        return s;
    }
    let t = e.ty().elem;
    let bits = t.bits();
    let a = |i: usize| scalar_c(e.arg(i), leaf);
    let ae = |i: usize| e.arg(i).ty().elem;
    match e.op() {
        Op::Const(b) => format!("((hv_u128){})", literal(t, *b)),
        Op::Add => format!("hv_wrap({} + {}, {bits})", a(0), a(1)),
        Op::Sub => format!("hv_wrap({} - {}, {bits})", a(0), a(1)),
        Op::Mul => format!("hv_wrap({} * {}, {bits})", a(0), a(1)),
        Op::Div => format!("hv_div({}, {}, {bits}, {})", a(0), a(1), sgn(t)),
        Op::Mod => format!("hv_mod({}, {}, {bits}, {})", a(0), a(1), sgn(t)),
        Op::Min => format!("hv_min({}, {}, {bits}, {})", a(0), a(1), sgn(t)),
        Op::Max => format!("hv_max({}, {}, {bits}, {})", a(0), a(1), sgn(t)),
        Op::And => format!("({} & {})", a(0), a(1)),
        Op::Or => format!("({} | {})", a(0), a(1)),
        Op::Xor => format!("({} ^ {})", a(0), a(1)),
        Op::Not if t == Elem::Bool => format!("({} ^ 1)", a(0)),
        Op::Not => format!("hv_wrap(~{}, {bits})", a(0)),
        Op::Shl | Op::Shr => format!(
            "hv_{}({}, {}, {bits}, {}, {}, {})",
            if matches!(e.op(), Op::Shl) {
                "shl"
            } else {
                "shr"
            },
            a(0),
            a(1),
            sgn(t),
            ae(1).bits(),
            sgn(ae(1))
        ),
        Op::Eq => format!("((hv_u128)({} == {}))", a(0), a(1)),
        Op::Ne => format!("((hv_u128)({} != {}))", a(0), a(1)),
        Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let (x, y) = match e.op() {
                Op::Lt | Op::Ge => (a(0), a(1)),
                _ => (a(1), a(0)),
            };
            let lt = format!("hv_lt({x}, {y}, {}, {})", ae(0).bits(), sgn(ae(0)));
            if matches!(e.op(), Op::Lt | Op::Gt) {
                format!("((hv_u128){lt})")
            } else {
                format!("((hv_u128)!{lt})")
            }
        }
        Op::Select => format!("({} ? {} : {})", a(0), a(1), a(2)),
        Op::Cast if t == Elem::Bool => format!("((hv_u128)({} != 0))", a(0)),
        Op::Cast => format!(
            "hv_cast({}, {}, {}, {bits})",
            a(0),
            ae(0).bits(),
            sgn(ae(0))
        ),
        Op::Reinterpret => a(0),
        Op::Popcount => format!("hv_popcount({})", a(0)),
        Op::CountLeadingZeros => format!("hv_clz({}, {bits})", a(0)),
        Op::CountTrailingZeros => format!("hv_ctz({}, {bits})", a(0)),
        op if op.is_fpir() => {
            let def = crate::fpir::definition(op, e.ty(), e.args());
            scalar_c(&def, leaf)
        }
        op => unreachable!("`{op}` has no scalar C form"),
    }
}

/// A function being written.
pub struct FnWriter<'t> {
    target: &'t dyn Target,
    body: String,
    names: HashMap<usize, (Expr, String)>,
    /// Vector typedefs the function needs.
    pub types: BTreeSet<Type>,
    next: usize,
    indent: String,
    /// Whether the scalar nodes being emitted compute a load's position.
    in_index: bool,
    /// Nodes already scanned for [`Self::value_uses`].
    scanned: HashSet<usize>,
    /// Nodes read by something other than a load's position.
    value_uses: HashSet<usize>,
    /// Deinterleaving loads emitted, by the dense load they replace.
    deinterleaved_loads: HashMap<usize, String>,
    /// Loads taken from neighbouring loads of their row, by load (`super::neighbours`).
    from_neighbours: HashMap<usize, super::neighbours::NeighbourLoad>,
    /// The variables carried from one chunk to the next: `(C type, previous, current)`.
    carried: Vec<(String, String, String)>,
    /// The widest splat of each scalar among the nodes scanned, by the scalar.
    widest_splat: HashMap<usize, Expr>,
}

impl<'t> FnWriter<'t> {
    /// A writer for `target`.
    pub fn new(target: &'t dyn Target) -> Self {
        FnWriter {
            target,
            body: String::new(),
            names: HashMap::new(),
            types: BTreeSet::new(),
            next: 0,
            indent: "    ".into(),
            in_index: false,
            scanned: HashSet::new(),
            value_uses: HashSet::new(),
            deinterleaved_loads: HashMap::new(),
            from_neighbours: HashMap::new(),
            carried: Vec::new(),
            widest_splat: HashMap::new(),
        }
    }

    /// Takes `loads` from neighbouring loads of a loop over consecutive chunks (where that
    /// is the previous chunk's, the first chunk, at chunk position 0, loads them): see
    /// [`super::neighbours`].
    pub fn take_from_neighbours(&mut self, loads: &[super::neighbours::NeighbourLoad]) {
        for n in loads {
            self.from_neighbours.insert(n.load.id(), n.clone());
        }
    }

    /// The variables the chunk loop carries: `(C type, previous, current)`; the loop
    /// declares each previous one before it and assigns it the current one at its end.
    pub fn carried(&self) -> &[(String, String, String)] {
        &self.carried
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("v{}", self.next)
    }

    fn ty(&mut self, t: Type) -> String {
        if !t.is_scalar() {
            self.types.insert(t);
        }
        c_type(t)
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.body, "{}{s}", self.indent);
    }

    /// Binds a scalar name to a node (chunk variable, parameters).
    pub fn bind(&mut self, e: &Expr, name: &str) {
        self.names.insert(e.id(), (e.clone(), name.to_string()));
    }

    /// The position a load reads at: its scalar index, or a dense load's base.
    fn load_position(e: &Expr) -> Option<&Expr> {
        if !matches!(e.op(), Op::Load(..)) {
            None
        } else if e.ty().is_scalar() {
            Some(e.arg(0))
        } else if super::lanes::is_dense(e) {
            Some(e.arg(0).arg(0))
        } else {
            None
        }
    }

    /// Records which nodes below `root` are read by something other than a load's
    /// position (those keep their own C type).
    fn scan_uses(&mut self, root: &Expr) {
        let mut stack = vec![(root.clone(), false)];
        let mut seen: HashSet<(usize, bool)> = HashSet::new();
        while let Some((e, index)) = stack.pop() {
            if !seen.insert((e.id(), index)) {
                continue;
            }
            self.scanned.insert(e.id());
            if !index {
                self.value_uses.insert(e.id());
            }
            if matches!(e.op(), Op::Broadcast) && e.arg(0).ty().is_scalar() {
                let widest = self.widest_splat.entry(e.arg(0).id()).or_insert(e.clone());
                if e.ty().lanes > widest.ty().lanes {
                    *widest = e.clone();
                }
            }
            match Self::load_position(&e) {
                Some(p) => stack.push((p.clone(), true)),
                None => stack.extend(e.args().iter().map(|a| (a.clone(), index))),
            }
        }
    }

    /// Emits `e` and what it needs below it; returns the C variable holding it.
    pub fn value(&mut self, e: &Expr) -> String {
        if let Some((_, v)) = self.names.get(&e.id()) {
            return v.clone();
        }
        if !self.scanned.contains(&e.id()) {
            self.scan_uses(e);
        }
        if e.ty().is_scalar()
            && let Op::Const(b) = e.op()
        {
            let lit = literal(e.ty().elem, *b);
            self.names.insert(e.id(), (e.clone(), lit.clone()));
            return lit;
        }
        if let Some(position) = Self::load_position(e) {
            // A dense load only needs the base of its index (and, when it is taken from
            // the previous chunk, the load it is taken from).
            let outer = std::mem::replace(&mut self.in_index, true);
            self.value(position);
            self.in_index = outer;
            if let Some(n) = self.from_neighbours.get(&e.id()).cloned() {
                self.value(&n.anchor);
                self.value(&n.before);
            }
        } else {
            for a in e.args() {
                self.value(a);
            }
        }
        let v = self.node(e);
        self.names.insert(e.id(), (e.clone(), v.clone()));
        v
    }

    fn name(&self, e: &Expr) -> String {
        self.names[&e.id()].1.clone()
    }

    /// For a strided slice of a dense load of exactly `stride` registers, the name of the
    /// target's deinterleaving load of it (emitted once per load; its parts are
    /// `NAME_k`), when the target has one.
    fn deinterleaved(&mut self, e: &Expr) -> Option<String> {
        let Op::Slice { start, stride } = *e.op() else {
            return None;
        };
        let load = e.arg(0);
        let t = e.ty();
        if !(2..=4).contains(&stride)
            || start >= stride
            || !matches!(load.op(), Op::Load(..))
            || !super::lanes::is_dense(load)
            || load.ty().lanes != stride * t.lanes
        {
            return None;
        }
        if let Some(name) = self.deinterleaved_loads.get(&load.id()) {
            return Some(name.clone());
        }
        let Op::Load(buf, _) = load.op() else {
            return None;
        };
        let name = format!("{}_ld{stride}", self.name(load));
        let src = format!("{} + {}", c_ident("b_", buf), self.name(load.arg(0).arg(0)));
        let text = self.target.c_deinterleaving_load(&name, &src, t, stride)?;
        self.line(&text);
        self.deinterleaved_loads.insert(load.id(), name.clone());
        Some(name)
    }

    /// The C of a load `v` taken from its neighbours (`load` loads it where the load
    /// before the anchor is the previous chunk's, in the loop's first chunk).
    fn load_from_neighbours(
        &mut self,
        ct: &str,
        v: &str,
        load: &str,
        neighbour: &super::neighbours::NeighbourLoad,
        lanes: u32,
    ) -> String {
        let current = self.name(&neighbour.anchor);
        let lanes_taken: Vec<String> = (lanes - neighbour.shift..2 * lanes - neighbour.shift)
            .map(|i| i.to_string())
            .collect();
        let before = self.name(&neighbour.before);
        if !neighbour.before_from_previous_chunk {
            return format!(
                "{ct} {v} = __builtin_shufflevector({before}, {current}, {});",
                lanes_taken.join(", ")
            );
        }
        let previous = format!("{before}_prev");
        if !self.carried.iter().any(|(_, p, _)| *p == previous) {
            self.carried
                .push((ct.to_string(), previous.clone(), before.clone()));
        }
        format!(
            "{ct} {v}; if ({} == 0) {{ {load} }} else {{ {v} = __builtin_shufflevector({previous}, {current}, {}); }}",
            super::prepare::CHUNK_VAR,
            lanes_taken.join(", ")
        )
    }

    /// The lane `i` of a vector (or the scalar) as canonical bits.
    fn canon(&mut self, e: &Expr, lane: &str) -> String {
        let u = self.ty(unsigned(e.ty()).element());
        let n = self.name(e);
        if e.ty().is_scalar() {
            format!("((hv_u128)({u}){n})")
        } else {
            format!("((hv_u128)({u}){n}[{lane}])")
        }
    }

    fn node(&mut self, e: &Expr) -> String {
        let t = e.ty();
        let ct = self.ty(t);
        let v = self.fresh();
        if t.is_scalar() {
            let text = match e.op() {
                Op::Var(name) => return c_ident("p_", name),
                Op::Load(buf, _) => {
                    format!("{}[{}]", c_ident("b_", buf), self.name(e.arg(0)))
                }
                Op::Instr(i) => self.instr_call(i, e),
                Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
                    return self.reduce(e, &v, &ct);
                }
                Op::Slice { start, .. } => format!("{}[{start}]", self.name(e.arg(0))),
                Op::Shuffle(idx) => {
                    let (k, j) = lane_source(e, idx[0] as usize);
                    format!("{}[{j}]", self.name(e.arg(k)))
                }
                Op::Concat | Op::Interleave => self.name(e.arg(0)),
                // Wrapping index arithmetic in native unsigned C: the canonical-bits helpers
                // are 128-bit calls, left unoptimised on Hexagon, and cost dozens of packets
                // per index in every chunk. Unsigned operands of at least 32 bits wrap with
                // no promotion to a signed `int` (whose overflow would be undefined).
                // A load's position in `ptrdiff_t`: it is an element of a buffer (the
                // footprint fits in memory), so it does not overflow, and in pointer-sized
                // signed arithmetic clang steps it with the pointer instead of recomputing
                // a wrapped 32-bit index and its sign extension per load.
                Op::Add | Op::Sub | Op::Mul
                    if self.in_index
                        && t.elem == Elem::I32
                        && e.arg(0).ty() == t
                        && !self.value_uses.contains(&e.id()) =>
                {
                    let op = match e.op() {
                        Op::Add => "+",
                        Op::Sub => "-",
                        _ => "*",
                    };
                    let (x, y) = (self.name(e.arg(0)), self.name(e.arg(1)));
                    self.line(&format!(
                        "ptrdiff_t {v} = (ptrdiff_t){x} {op} (ptrdiff_t){y};"
                    ));
                    return v;
                }
                Op::Add | Op::Sub | Op::Mul
                    if t.elem != Elem::Bool && t.elem.bits() <= 64 && e.arg(0).ty() == t =>
                {
                    let u = if t.elem.bits() <= 32 {
                        "uint32_t"
                    } else {
                        "uint64_t"
                    };
                    let op = match e.op() {
                        Op::Add => "+",
                        Op::Sub => "-",
                        _ => "*",
                    };
                    let (x, y) = (self.name(e.arg(0)), self.name(e.arg(1)));
                    format!("({ct})(({u}){x} {op} ({u}){y})")
                }
                // An integer conversion is C's own (clang's conversions to narrower signed
                // types wrap, as harrow's casts do); the helper would be a call per use.
                Op::Cast
                    if t.elem != Elem::Bool
                        && t.elem.bits() <= 64
                        && e.arg(0).ty().elem != Elem::Bool
                        && e.arg(0).ty().elem.bits() <= 64 =>
                {
                    format!("({ct}){}", self.name(e.arg(0)))
                }
                _ => {
                    let args: Vec<Expr> = e.args().to_vec();
                    let leaves: HashMap<usize, String> =
                        args.iter().map(|a| (a.id(), self.canon(a, "0"))).collect();
                    let s = scalar_c(e, &|x| leaves.get(&x.id()).cloned());
                    format!("({ct})({s})")
                }
            };
            self.line(&format!("{ct} {v} = {text};"));
            return v;
        }
        let n = t.lanes;
        match e.op() {
            Op::Load(buf, _) => {
                let b = c_ident("b_", buf);
                let idx = e.arg(0);
                if super::lanes::is_dense(e) {
                    let base = self.name(idx.arg(0));
                    let bytes = t.total_bits().div_ceil(8);
                    let src = format!("{b} + {base}");
                    let load = self
                        .target
                        .c_dense_load(&v, &src, bytes)
                        .unwrap_or_else(|| {
                            format!("__builtin_memcpy(&{v}, {src}, {n} * sizeof({b}[0]));")
                        });
                    match self.from_neighbours.get(&e.id()).cloned() {
                        Some(neighbour) => {
                            let text = self.load_from_neighbours(&ct, &v, &load, &neighbour, n);
                            self.line(&text);
                        }
                        None => self.line(&format!("{ct} {v}; {load}")),
                    }
                } else {
                    let iv = self.name(idx);
                    self.line(&format!(
                        "{ct} {v}; for (int i = 0; i < {n}; i++) {v}[i] = {b}[{iv}[i]];"
                    ));
                }
            }
            Op::Ramp => {
                let (b, s) = (self.name(e.arg(0)), self.name(e.arg(1)));
                self.line(&format!(
                    "{ct} {v}; for (int i = 0; i < {n}; i++) {v}[i] = (int32_t)((uint32_t){b} + (uint32_t){s} * (uint32_t)i);"
                ));
            }
            Op::Broadcast => {
                let a = self.name(e.arg(0));
                let la = e.arg(0).ty().lanes;
                let wider = self
                    .widest_splat
                    .get(&e.arg(0).id())
                    .filter(|w| w.ty().lanes == 2 * n)
                    .cloned();
                if la == 1
                    && t.elem != Elem::Bool
                    && let Some(w) = wider
                {
                    // The same scalar splat at twice the lanes is needed too (the high
                    // halves' `smlal2` beside the low halves' `smlal`): take its low half,
                    // which clang reads in place, instead of a second splat in a second
                    // register (fuzz_4_12 on Arm built 22 splats of 11 weights).
                    let wv = self.value(&w);
                    let lanes: Vec<String> = (0..n).map(|i| i.to_string()).collect();
                    self.line(&format!(
                        "{ct} {v} = __builtin_shufflevector({wv}, {wv}, {});",
                        lanes.join(", ")
                    ));
                } else if la == 1 && t.elem != Elem::Bool && t.elem.bits() <= 64 {
                    // A scalar cast to an ext_vector_type is a splat: one broadcast
                    // instruction (vsplat, vpbroadcast, dup) at any optimisation level,
                    // where a lane loop may stay a loop (clang -O1 for Hexagon).
                    self.line(&format!("{ct} {v} = ({ct})({a});"));
                } else if la == 1 {
                    self.line(&format!(
                        "{ct} {v}; for (int i = 0; i < {n}; i++) {v}[i] = {a};"
                    ));
                } else {
                    self.line(&format!(
                        "{ct} {v}; for (int i = 0; i < {n}; i++) {v}[i] = {a}[i % {la}];"
                    ));
                }
            }
            Op::Add | Op::Sub | Op::Mul if t.elem != Elem::Bool => {
                let ut = self.ty(unsigned(t));
                let op = c_operator(e.op()).expect("arithmetic");
                let (a, b) = (self.name(e.arg(0)), self.name(e.arg(1)));
                self.line(&format!("{ct} {v} = ({ct})(({ut}){a} {op} ({ut}){b});"));
            }
            Op::And | Op::Or | Op::Xor => {
                let op = c_operator(e.op()).expect("bitwise");
                let (a, b) = (self.name(e.arg(0)), self.name(e.arg(1)));
                self.line(&format!("{ct} {v} = {a} {op} {b};"));
            }
            Op::Shl | Op::Shr if super::lanes::shift_amount(e).is_some() => {
                let k = super::lanes::shift_amount(e).expect("checked");
                let a = self.name(e.arg(0));
                let ut = self.ty(unsigned(t));
                if matches!(e.op(), Op::Shl) {
                    self.line(&format!("{ct} {v} = ({ct})(({ut}){a} << {k});"));
                } else {
                    self.line(&format!("{ct} {v} = {a} >> {k};"));
                }
            }
            Op::Not => {
                let a = self.name(e.arg(0));
                if t.elem == Elem::Bool {
                    self.line(&format!("{ct} {v} = {a} ^ 1;"));
                } else {
                    self.line(&format!("{ct} {v} = ~{a};"));
                }
            }
            Op::Min | Op::Max if t.elem != Elem::Bool => {
                let f = if matches!(e.op(), Op::Min) {
                    "min"
                } else {
                    "max"
                };
                let (a, b) = (self.name(e.arg(0)), self.name(e.arg(1)));
                self.line(&format!("{ct} {v} = __builtin_elementwise_{f}({a}, {b});"));
            }
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge
                if e.arg(0).ty().elem != Elem::Bool =>
            {
                let op = c_operator(e.op()).expect("a comparison");
                let (a, b) = (self.name(e.arg(0)), self.name(e.arg(1)));
                self.line(&format!(
                    "{ct} {v} = __builtin_convertvector(({a} {op} {b}) & 1, {ct});"
                ));
            }
            Op::Select if !e.arg(0).ty().is_scalar() && t.elem != Elem::Bool => {
                let ut = self.ty(unsigned(t));
                let (c, a, b) = (
                    self.name(e.arg(0)),
                    self.name(e.arg(1)),
                    self.name(e.arg(2)),
                );
                self.line(&format!(
                    "{ut} {v}m = -__builtin_convertvector({c}, {ut}); {ct} {v} = ({ct})((({ut}){a} & {v}m) | (({ut}){b} & ~{v}m));"
                ));
            }
            Op::Select if e.arg(0).ty().is_scalar() => {
                let (c, a, b) = (
                    self.name(e.arg(0)),
                    self.name(e.arg(1)),
                    self.name(e.arg(2)),
                );
                self.line(&format!("{ct} {v} = {c} ? {a} : {b};"));
            }
            Op::Cast if t.elem != Elem::Bool && e.arg(0).ty().elem.bits() <= 64 => {
                let a = self.name(e.arg(0));
                self.line(&format!("{ct} {v} = __builtin_convertvector({a}, {ct});"));
            }
            Op::Reinterpret => {
                let a = self.name(e.arg(0));
                self.line(&format!(
                    "{ct} {v}; __builtin_memcpy(&{v}, &{a}, {});",
                    t.total_bits() / 8
                ));
            }
            Op::Slice { start, .. } if self.deinterleaved(e).is_some() => {
                let all = self.deinterleaved(e).expect("checked");
                self.line(&format!("{ct} {v} = ({ct}){all}_{start};"));
            }
            Op::Slice { .. } | Op::Concat | Op::Interleave | Op::Shuffle(_)
                if e.args().len() <= 2
                    && e.args()
                        .iter()
                        .all(|a| a.ty() == e.arg(0).ty() && !a.ty().is_scalar()) =>
            {
                // One clang shuffle: it picks good permutes for the target.
                let la = e.arg(0).ty().lanes as usize;
                let idx: Vec<String> = (0..n as usize)
                    .map(|i| {
                        let (k, j) = lane_source(e, i);
                        (k * la + j).to_string()
                    })
                    .collect();
                let a = self.name(e.arg(0));
                let b = self.name(e.arg(e.args().len() - 1));
                self.line(&format!(
                    "{ct} {v} = __builtin_shufflevector({a}, {b}, {});",
                    idx.join(", ")
                ));
            }
            Op::Slice { .. } | Op::Concat | Op::Interleave | Op::Shuffle(_) => {
                self.line(&format!("{ct} {v};"));
                let mut s = String::new();
                for i in 0..n as usize {
                    let (k, j) = lane_source(e, i);
                    let src = if e.arg(k).ty().is_scalar() {
                        self.name(e.arg(k))
                    } else {
                        format!("{}[{j}]", self.name(e.arg(k)))
                    };
                    let _ = write!(s, "{v}[{i}] = {src}; ");
                    if i % 8 == 7 {
                        self.line(s.trim_end());
                        s.clear();
                    }
                }
                if !s.is_empty() {
                    self.line(s.trim_end());
                }
            }
            Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
                return self.reduce(e, &v, &ct);
            }
            Op::Instr(i) => {
                let call = self.instr_call(i, e);
                if t.elem == Elem::Bool {
                    let m = self.target.c_type(t).unwrap_or_else(|| "uint64_t".into());
                    self.line(&format!(
                        "{m} {v}k = {call}; {ct} {v}; for (int i = 0; i < {n}; i++) {v}[i] = ({v}k >> i) & 1;"
                    ));
                } else {
                    let r = self.target.c_intrinsic_result(t, &call);
                    self.line(&format!("{ct} {v} = ({ct}){r};"));
                }
            }
            op if op.is_fpir() && lane_loop_reason(e).is_none() => {
                return self.fpir_vector(e, &v, &ct);
            }
            Op::Div | Op::Mod if lane_loop_reason(e).is_none() => {
                self.div_by_constant(e, &v, &ct);
            }
            Op::Shl | Op::Shr if lane_loop_reason(e).is_none() => {
                self.shift_by_vector(e, &v, &ct);
            }
            _ => {
                // Lane by lane in natural C: only the operations `lane_loop_reason` names
                // (clang may still vectorize the loop).
                let args: Vec<Expr> = e.args().to_vec();
                // Splatted constants stay constants, so that C sees shifts by literals.
                let splat = |a: &Expr| -> Option<Expr> {
                    match a.op() {
                        Op::Broadcast if a.arg(0).as_const().is_some() => Some(a.arg(0).clone()),
                        Op::Const(_) => Some(a.clone()),
                        _ => None,
                    }
                };
                let scalar_args: Vec<Expr> = args
                    .iter()
                    .enumerate()
                    .map(|(k, a)| {
                        splat(a).unwrap_or_else(|| Expr::var(format!("#{k}"), a.ty().element()))
                    })
                    .collect();
                let scalar = e
                    .with_args(scalar_args.clone())
                    .or_else(|_| {
                        Expr::build(e.op().clone(), Some(t.element()), scalar_args.clone())
                    })
                    .expect("every element-wise operator has a one-lane form");
                let mut leaves: HashMap<usize, String> = HashMap::new();
                for (sa, a) in scalar_args.iter().zip(&args) {
                    if !matches!(sa.op(), Op::Var(_)) {
                        continue;
                    }
                    let n = self.name(a);
                    let text = if a.ty().is_scalar() {
                        n
                    } else {
                        format!("{n}[i]")
                    };
                    leaves.insert(sa.id(), format!("(({}){text})", a.ty().elem.c_name()));
                }
                let mut stmts = String::new();
                let r = super::natural::natural_c(
                    &scalar,
                    &leaves,
                    &format!("{v}_"),
                    &mut HashMap::new(),
                    &mut stmts,
                );
                let et = t.elem.c_name();
                self.line(&format!(
                    "{ct} {v}; for (int i = 0; i < {n}; i++) {{ {stmts}{v}[i] = ({et})({r}); }}"
                ));
            }
        }
        v
    }

    /// An FPIR operation as whole-vector C: saturating adds by clang's builtins, the rest
    /// by its definition in primitive operators (each of which has a vector form).
    fn fpir_vector(&mut self, e: &Expr, v: &str, ct: &str) -> String {
        if let Some(f) = saturating_builtin(e) {
            let (a, b) = (self.name(e.arg(0)), self.name(e.arg(1)));
            self.line(&format!("{ct} {v} = __builtin_elementwise_{f}({a}, {b});"));
            return v.to_string();
        }
        self.value(&folded_definition(e))
    }

    /// Division or remainder by the same positive constant in every lane: C's truncating
    /// operators, corrected to Halide's flooring ones for negative dividends.
    fn div_by_constant(&mut self, e: &Expr, v: &str, ct: &str) {
        let k = positive_divisor(e).expect("checked by lane_loop_reason");
        let t = e.ty();
        let et = t.elem.c_name();
        let a = self.name(e.arg(0));
        let kk = format!("(({ct})(({et}){k}))");
        let div = matches!(e.op(), Op::Div);
        if !t.elem.is_signed() {
            let op = if div { "/" } else { "%" };
            self.line(&format!("{ct} {v} = {a} {op} {kk};"));
        } else if div {
            // The truncated quotient is one too large where the remainder is negative.
            self.line(&format!(
                "{ct} {v}r = {a} % {kk}; {ct} {v} = ({a} / {kk}) + ({ct})({v}r < 0);"
            ));
        } else {
            self.line(&format!(
                "{ct} {v}r = {a} % {kk}; {ct} {v} = {v}r + ({kk} & ({ct})({v}r < 0));"
            ));
        }
    }

    /// A shift by a vector of amounts with Halide's meaning (amounts of the width or more
    /// give 0 or the sign; negative amounts shift the other way), as whole-vector C: the
    /// amounts clamped to `[-w, w]`, then both directions masked and merged.
    fn shift_by_vector(&mut self, e: &Expr, v: &str, ct: &str) {
        let t = e.ty();
        let w = t.elem.bits();
        let bt = e.arg(1).ty();
        let ut = self.ty(unsigned(t));
        let st = self.ty(t.with_elem(t.elem.with_signed(true)));
        let bct = self.ty(bt);
        let (a, b) = (self.name(e.arg(0)), self.name(e.arg(1)));
        // The clamped amount as a signed lane of the shifted value's width.
        let clamp = if bt.elem.is_signed() {
            format!(
                "__builtin_elementwise_max(__builtin_elementwise_min({b}, ({bct})({w})), ({bct})(-{w}))"
            )
        } else {
            format!("__builtin_elementwise_min({b}, ({bct})({w}))")
        };
        self.line(&format!(
            "{st} {v}n = __builtin_convertvector({clamp}, {st});"
        ));
        let m1 = w - 1;
        // shr_by(a, n) and shl_by(a, n) for n in [0, w], in the unsigned type where a
        // shift left could overflow a signed lane.
        let right = |n: &str| {
            if t.elem.is_signed() {
                format!("({ct})({a} >> __builtin_elementwise_min({n}, ({st})({m1})))")
            } else {
                format!(
                    "({ct})(({a} >> ({ct})__builtin_elementwise_min({n}, ({st})({m1}))) & ({ct})({n} < ({st})({w})))"
                )
            }
        };
        let left = |n: &str| {
            format!(
                "({ct})((({ut}){a} << ({ut})__builtin_elementwise_min({n}, ({st})({m1}))) & ({ut})({n} < ({st})({w})))"
            )
        };
        type Shift<'a> = &'a dyn Fn(&str) -> String;
        let (fwd, back): (Shift, Shift) = if matches!(e.op(), Op::Shr) {
            (&right, &left)
        } else {
            (&left, &right)
        };
        if bt.elem.is_signed() {
            let pos = format!("__builtin_elementwise_max({v}n, ({st})0)");
            let neg = format!("__builtin_elementwise_max(-{v}n, ({st})0)");
            self.line(&format!(
                "{ct} {v} = ({ct})(({v}n < 0) ? {} : {});",
                back(&neg),
                fwd(&pos)
            ));
        } else {
            self.line(&format!("{ct} {v} = {};", fwd(&format!("{v}n"))));
        }
    }

    fn reduce(&mut self, e: &Expr, v: &str, ct: &str) -> String {
        let a = e.arg(0);
        let k = a.ty().lanes / e.ty().lanes;
        let n = e.ty().lanes;
        let el = e.ty().elem;
        let (bits, s) = (el.bits(), sgn(el));
        let f = match e.op() {
            Op::ReduceAdd => format!("hv_wrap(acc + x, {bits})"),
            Op::ReduceMin => format!("hv_min(acc, x, {bits}, {s})"),
            _ => format!("hv_max(acc, x, {bits}, {s})"),
        };
        let an = self.name(a);
        let u = unsigned(a.ty()).elem.c_name();
        let get = if a.ty().is_scalar() {
            format!("(hv_u128)({u}){an}")
        } else {
            format!("(hv_u128)({u}){an}[i * {k} + j]")
        };
        let (decl, set) = if n == 1 {
            (format!("{ct} {v};"), format!("{v} = ({ct})acc;"))
        } else {
            (
                format!("{ct} {v};"),
                format!("{v}[i] = ({})acc;", el.c_name()),
            )
        };
        self.line(&format!(
            "{decl} for (int i = 0; i < {n}; i++) {{ hv_u128 acc = {get0}; for (int j = 1; j < {k}; j++) {{ hv_u128 x = {get}; acc = {f}; }} {set} }}",
            get0 = get.replace("+ j]", "]"),
        ));
        v.to_string()
    }

    fn instr_call(&mut self, ins: &crate::isa::Instr, e: &Expr) -> String {
        let mut args = Vec::new();
        for (k, a) in e.args().iter().enumerate() {
            let p = ins.params[k];
            if ins.imm[k] {
                let val = a.as_const().expect("immediates are constants");
                args.push(format!("{val}"));
                continue;
            }
            let name = self.name(a);
            if p.is_scalar() {
                args.push(format!("({}){name}", p.elem.c_name()));
            } else if p.elem == Elem::Bool {
                let m = self.target.c_type(p).unwrap_or_else(|| "uint64_t".into());
                let mv = self.fresh();
                self.line(&format!(
                    "{m} {mv} = 0; for (int i = 0; i < {}; i++) {mv} |= ({m})({name}[i] & 1) << i;",
                    p.lanes
                ));
                args.push(mv);
            } else {
                let rt = self
                    .target
                    .c_type(p)
                    .expect("register operand types have C types");
                args.push(format!("({rt}){name}"));
            }
        }
        format!("{}({})", ins.intrinsic, args.join(", "))
    }

    /// The statements written so far.
    pub fn take_body(&mut self) -> String {
        std::mem::take(&mut self.body)
    }

    /// Sets the indentation of following statements.
    pub fn set_indent(&mut self, indent: &str) {
        self.indent = indent.to_string();
    }
}

/// For a lane-moving node, which operand and lane output lane `i` comes from.
pub fn lane_source(e: &Expr, i: usize) -> (usize, usize) {
    let lanes: Vec<usize> = e.args().iter().map(|a| a.ty().lanes as usize).collect();
    let flat = |mut j: usize| {
        for (k, &l) in lanes.iter().enumerate() {
            if j < l {
                return (k, j);
            }
            j -= l;
        }
        (lanes.len() - 1, 0)
    };
    match e.op() {
        Op::Slice { start, stride } => (0, *start as usize + i * *stride as usize),
        Op::Concat => flat(i),
        Op::Interleave => (i % lanes.len(), i / lanes.len()),
        Op::Shuffle(idx) => flat(idx[i] as usize),
        _ => (0, i),
    }
}

/// The typedefs for a set of vector types.
pub fn typedefs(types: &BTreeSet<Type>) -> String {
    types.iter().map(|t| typedef(*t)).collect()
}

/// Parameters of a generated function: buffers (by name) and scalar variables.
#[derive(Clone, Debug, Default)]
pub struct Params {
    /// Buffers read, with element types.
    pub buffers: BTreeMap<Sym, Elem>,
    /// Scalar parameters, with types.
    pub scalars: BTreeMap<Sym, Type>,
}

impl Params {
    /// The C parameter list after `out`.
    pub fn c_list(&self) -> String {
        let mut s = String::new();
        for (b, el) in &self.buffers {
            let _ = write!(s, ", const {} *restrict {}", el.c_name(), c_ident("b_", b));
        }
        for (v, t) in &self.scalars {
            let _ = write!(s, ", {} {}", t.elem.c_name(), c_ident("p_", v));
        }
        s
    }
}
