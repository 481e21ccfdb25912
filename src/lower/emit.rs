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

mod scalar;
mod vector;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use super::cform::c_ident;
pub use scalar::scalar_c;

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
    /// Mask registers (`NAMEk`) of the flags instructions returned, by the flags' name.
    masks: HashMap<String, String>,
    /// Lane counts of the bit vectors (`hv_bitsxN`) the function converts masks through.
    pub bit_vectors: BTreeSet<u32>,
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
            masks: HashMap::new(),
            bit_vectors: BTreeSet::new(),
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

    /// The part type when `t` spans two or more (a power of two) parts of `registers` of
    /// the target's registers each and splits into them evenly; `None` otherwise.
    fn register_parts(&self, t: Type, registers: u32) -> Option<Type> {
        let bits = u64::from(self.target.register_bits()) * u64::from(registers);
        let parts = t.total_bits().div_ceil(bits) as u32;
        (parts >= 2 && parts.is_power_of_two() && t.lanes.is_multiple_of(parts))
            .then(|| t.with_lanes(t.lanes / parts))
    }

    /// Declares `whole` as the concatenation of the vectors `names`, each of type `part`
    /// (a power of two of them), pairwise: a shuffle takes two vectors of one type.
    fn concat_pairwise(&mut self, mut names: Vec<String>, part: Type, whole: &str) {
        let mut lanes = part.lanes;
        while names.len() > 1 {
            let wct = self.ty(part.with_lanes(2 * lanes));
            let all = (0..2 * lanes)
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let last = names.len() == 2;
            names = names
                .chunks(2)
                .map(|pair| {
                    let w = if last {
                        whole.to_string()
                    } else {
                        format!("{}c", pair[0])
                    };
                    self.line(&format!(
                        "{wct} {w} = __builtin_shufflevector({}, {}, {all});",
                        pair[0], pair[1]
                    ));
                    w
                })
                .collect();
            lanes *= 2;
        }
    }

    /// For a strided slice of a dense load of exactly `stride` times its lanes, the name of
    /// the target's deinterleaving load of it (emitted once per load; its parts are
    /// `NAME_k`), when the target has one. A slice of several registers the target cannot
    /// load whole is deinterleaved a register at a time and its parts concatenated: on
    /// Neon, every third dword of 24 (fuzz_8_62) was gathered lane by lane, 0.58x clang
    /// -O3, where clang's own loop loads them with `ld3`.
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
        if let Some(text) = self.target.c_deinterleaving_load(&name, &src, t, stride) {
            self.line(&text);
        } else {
            let part = self.register_parts(t, 1)?;
            let parts = t.lanes / part.lanes;
            let texts = (0..parts)
                .map(|r| {
                    let at = format!("{src} + {}", r * part.lanes * stride);
                    self.target
                        .c_deinterleaving_load(&format!("{name}r{r}"), &at, part, stride)
                })
                .collect::<Option<Vec<String>>>()?;
            for text in texts {
                self.line(&text);
            }
            for k in 0..stride {
                let names = (0..parts).map(|r| format!("{name}r{r}_{k}")).collect();
                self.concat_pairwise(names, part, &format!("{name}_{k}"));
            }
        }
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
            self.scalar_node(e, v, &ct)
        } else {
            self.vector_node(e, v, &ct)
        }
    }

    /// The `n` flags `name` (0/1 bytes) as the bits of an integer, by a conversion to a bit
    /// vector clang selects as one instruction (AVX-512's `vpmovb2m`), not a loop over lanes.
    fn flags_as_mask(&mut self, name: &str, n: u32) -> String {
        let w = mask_bits(n);
        self.bit_vectors.insert(w);
        let flags = self.ty(Type::vec(Elem::Bool, n));
        let padded = if w == n {
            name.to_string()
        } else {
            // The lanes past `n` are zero, as a loop over the `n` lanes leaves them.
            let idx: Vec<String> = (0..w).map(|i| i.min(n).to_string()).collect();
            let wt = self.ty(Type::vec(Elem::Bool, w));
            format!(
                "({wt})__builtin_shufflevector({name}, ({flags})(0), {})",
                idx.join(", ")
            )
        };
        format!(
            "__builtin_bit_cast(uint{w}_t, __builtin_convertvector({padded}, {}))",
            bit_vector(w)
        )
    }

    /// The flags in the low `n` bits of the integer `mask` as 0/1 bytes of C type `ct`, by
    /// a conversion from a bit vector clang selects as one instruction (AVX-512's `vpmovm2b`
    /// or a masked move), not a loop over lanes (fuzz_8_5 of seed 8 at 0.11x clang -O3).
    fn mask_as_flags(&mut self, mask: &str, n: u32, ct: &str) -> String {
        let w = mask_bits(n);
        self.bit_vectors.insert(w);
        let bits = format!("__builtin_bit_cast({}, (uint{w}_t){mask})", bit_vector(w));
        let lanes = if w == n {
            bits
        } else {
            let idx: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            format!(
                "__builtin_shufflevector({bits}, {bits}, {})",
                idx.join(", ")
            )
        };
        format!("__builtin_convertvector({lanes}, {ct})")
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
                // Flags an instruction returned in a mask register of this type are passed
                // as that mask: clang does not see through the round trip by lanes (AVX-512's
                // `vpcmpeqw` into `vpmovm2w` became some thirty scalar instructions a vector,
                // fuzz_8_43 of seed 8 at 0.42x clang -O3).
                if self.masks.get(&name) == Some(&m) {
                    args.push(format!("{name}k"));
                    continue;
                }
                let mv = self.fresh();
                let mask = self.flags_as_mask(&name, p.lanes);
                self.line(&format!("{m} {mv} = ({m}){mask};"));
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

/// The typedefs for a set of vector types and of bit vectors of the given lane counts.
pub fn typedefs(types: &BTreeSet<Type>, bit_vectors: &BTreeSet<u32>) -> String {
    let mut s: String = types.iter().map(|t| typedef(*t)).collect();
    for n in bit_vectors {
        let name = bit_vector(*n);
        let _ = write!(
            s,
            "#ifndef HV_T_{name}\n#define HV_T_{name}\ntypedef _Bool {name} __attribute__((ext_vector_type({n})));\n#endif\n"
        );
    }
    s
}

/// The C type of a vector of `n` one-bit booleans, which clang stores as the bits of an
/// integer: the layout of a mask register.
fn bit_vector(n: u32) -> String {
    format!("hv_bitsx{n}")
}

/// The lanes of a mask register holding `n` flags: at least 8, a power of two.
fn mask_bits(n: u32) -> u32 {
    n.max(8).next_power_of_two()
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
