//! Vectorized C for a kernel on a target.
//!
//! The innermost output dimension is split into vectors of `N` lanes. For one vector, the
//! body becomes an `N`-lane IR expression whose buffer reads are loads from *row pointers*
//! (a buffer advanced by its outer indices), so `crate::lower` lifts it, cuts it into
//! register-sized chunks and selects instructions exactly as for any other expression.
//! Reductions that stay loops keep an `N`-lane accumulator in a local array (clang keeps
//! it in registers); each loop step is lowered the same way.
//!
//! Tails: when a row is at least `N` wide, the last vector is shifted left to end at the
//! row's end (it recomputes a few outputs, which is harmless because outputs are pure).
//! Narrower rows use the scalar code. Loads never go past what [`super::reference::footprint`]
//! reports, so callers pad inputs to that footprint (the boundary convention of
//! `docs/kernels.md`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::{Affine, Kernel, Leaf, leaf, scalar};
use crate::ir::{Expr, Op, mk, mk_typed};
use crate::lower::cform::c_ident;
use crate::lower::emit::FnWriter;
use crate::lower::{Backend, Lowered, prepare};
use crate::types::{Elem, Type};
use crate::util::idhash::IdMap;

/// The IR name of the vector's first output position in its row.
pub const VEC_POS: &str = "hv_x";

/// A kernel compiled for a target.
pub struct Compiled {
    /// Lanes per vector.
    pub lanes: u32,
    /// The final expression, lowered.
    pub body: Lowered,
    /// The further outputs' expressions, lowered.
    pub more: Vec<Lowered>,
    /// Each loop reduction's step, lowered.
    pub steps: Vec<Lowered>,
    /// Row pointers: input and outer indices.
    pub rows: Vec<(usize, Vec<Affine>)>,
}

/// Estimated cycles a loop iteration spends besides its body: the counter, the compare
/// and branch, the pointer updates and, for a reduction step, the accumulator's trip
/// through memory. Paid once per vector (and per step), it is what makes a wider vector
/// cheaper per element when the body costs the same per lane.
pub const LOOP_OVERHEAD: f64 = 2.0;

impl Compiled {
    /// Whether `other` selected the same code for its body and loop steps.
    fn same_code(&self, other: &Compiled) -> bool {
        let parts = |c: &Compiled| -> Vec<Expr> {
            c.outputs()
                .chain(&c.steps)
                .map(|l| l.selected.clone())
                .collect()
        };
        self.more.len() == other.more.len() && parts(self) == parts(other)
    }

    /// Every output's lowered expression, the first output's first.
    pub fn outputs(&self) -> impl Iterator<Item = &Lowered> {
        std::iter::once(&self.body).chain(&self.more)
    }

    /// Estimated cost (cycles) of one vector of output, loop steps counted once, each
    /// loop's own overhead included.
    pub fn cost(&self) -> f64 {
        self.body.cost()
            + self.more.iter().map(Lowered::cost).sum::<f64>()
            + LOOP_OVERHEAD
            + self
                .steps
                .iter()
                .map(|s| s.cost() + LOOP_OVERHEAD)
                .sum::<f64>()
    }

    /// [`Compiled::cost`] plus what spilling registers is estimated to add on `target`:
    /// the width choice compares this, so a wider vector that no longer fits the register
    /// file (many loop-invariant weights next to a wide accumulator) is not preferred.
    pub fn cost_on(&self, target: &dyn crate::isa::target::Target) -> f64 {
        let adjust = |l: &Lowered, in_body: bool| {
            let (hoisted, spills) = loop_invariance(
                &l.selected,
                in_body,
                target.register_bits(),
                target.vector_registers(),
            );
            (spills - hoisted) * f64::from(l.chunks())
        };
        self.cost()
            + self.outputs().map(|l| adjust(l, true)).sum::<f64>()
            + self.steps.iter().map(|s| adjust(s, false)).sum::<f64>()
    }
}

/// The loop-invariant part of a chunk: the cost of the nodes clang hoists out of the loop
/// (selection counts them per chunk, which makes a wider vector, whose chunks share them,
/// look cheaper than it is), and [`spill_cost`]. In the body's loop only the vector
/// position varies; a reduction step's loop also varies its reduction variables, so there
/// every variable counts as varying.
fn loop_invariance(chunk: &Expr, in_body: bool, register_bits: u32, registers: u32) -> (f64, f64) {
    let nodes = crate::ir::visit::post_order(chunk);
    let mut variant: IdMap<usize, bool> = IdMap::default();
    let mut hoisted = 0.0;
    for n in &nodes {
        let v = match n.op() {
            Op::Var(s) => !in_body || &**s == VEC_POS || &**s == prepare::CHUNK_VAR,
            _ => n.args().iter().any(|a| variant[&a.id()]),
        };
        variant.insert(n.id(), v);
        if !v && !matches!(n.op(), Op::Const(_)) {
            hoisted += crate::lower::select::generic_cost(n, register_bits);
        }
    }
    (
        hoisted,
        spill_cost(&nodes, &variant, register_bits, registers),
    )
}

/// Estimated cycles spilling adds to one chunk: a store and a reload for every register
/// the chunk needs beyond `registers`. The chunk needs one register (or several, for a
/// value wider than one) for each loop-invariant vector it reads (weights, splatted
/// parameters and constants, which clang hoists out of the loop) and a working set of
/// about twice its widest value (clang schedules loads early, so several live at once).
/// Measured on AVX2: a 13-tap byte product sum at 32 lanes (13 weights, two accumulator
/// registers) runs 0.64x clang -O3 with its spills and 0.83x at 16 lanes.
fn spill_cost(
    nodes: &[Expr],
    variant: &IdMap<usize, bool>,
    register_bits: u32,
    registers: u32,
) -> f64 {
    /// Cycles per register beyond the file: a spill store and a reload, and the loads
    /// the scheduler can no longer hoist.
    const SPILL_CYCLES: f64 = 2.0;
    let regs = |e: &Expr| e.ty().total_bits().div_ceil(u64::from(register_bits)) as u32;
    let mut invariant_used = BTreeSet::new();
    let mut widest = 0;
    for n in nodes {
        if !variant[&n.id()] {
            continue;
        }
        if !n.ty().is_scalar() {
            widest = widest.max(regs(n));
        }
        for a in n.args() {
            if !variant[&a.id()] && !a.ty().is_scalar() && !matches!(a.op(), Op::Const(_)) {
                invariant_used.insert((a.id(), regs(a)));
            }
        }
    }
    let invariant: u32 = invariant_used.iter().map(|(_, r)| r).sum();
    let needed = invariant + 2 * widest + 1;
    f64::from(needed.saturating_sub(registers)) * SPILL_CYCLES
}

/// Estimated cycles of body an unrolled row loop iteration should hold at least, so that
/// its overhead ([`LOOP_OVERHEAD`]) is a small part of it.
const UNROLLED_WORK: f64 = 40.0;

/// At most this many vectors per unrolled loop iteration.
const MAX_UNROLL: u32 = 8;

/// At most this many lanes per unrolled loop iteration, so that the default `harrow run`
/// rows (`cli::kernel::default_run_size`, over 256 wide) run the unrolled loop, the loop of
/// single chunks and the shifted last chunk.
pub const MAX_UNROLLED_LANES: u32 = 128;

/// At most this many registers of the widest type per unrolled loop iteration (clang
/// computes the chunks one after another, so this bounds code size, not register use).
const MAX_UNROLLED_REGISTERS: u32 = 16;

/// The chunk lanes of a body whose chunks are independent and fill its vector (no loop
/// reductions, no lane-moving nodes): its rows can be cut at any multiple of a chunk.
fn independent_chunks(c: &Compiled) -> Option<u32> {
    let p = &c.body.prepared;
    let chunk = p.chunk_lanes;
    // Several outputs are cut alike: the same chunks, computed together.
    let alike = c
        .more
        .iter()
        .all(|l| l.prepared.chunked && l.prepared.chunk_lanes == chunk);
    (c.steps.is_empty() && p.chunked && alike && chunk > 0 && c.lanes.is_multiple_of(chunk))
        .then_some(chunk)
}

/// Whether a compiled kernel only moves data: each output lane is an input lane of the
/// same width (a dense load, maybe reinterpreted) or one value for every lane.
fn moves_data_only(c: &Compiled) -> bool {
    c.steps.is_empty()
        && c.outputs()
            .flat_map(|l| crate::ir::visit::post_order(&l.selected))
            .all(|e| {
                e.ty().is_scalar()
                    || match e.op() {
                        Op::Load(..) => crate::lower::lanes::is_dense(&e),
                        Op::Broadcast => e.arg(0).ty().is_scalar(),
                        Op::Const(_) | Op::Reinterpret | Op::Ramp => true,
                        Op::Cast => e.arg(0).ty().elem.bits() == e.ty().elem.bits(),
                        _ => false,
                    }
            })
}

/// The default vector width: one register of the widest type the kernel computes with.
pub fn default_lanes(k: &Kernel, register_bits: u32) -> u32 {
    legal_lanes(k, (register_bits / k.widest_bits()).max(1))
}

/// The default vector width for a target. Targets whose widening instructions produce
/// register pairs (`Target::chunk_by_narrowest`, HVX) let each value span up to a pair:
/// a register of half the widest type, so that narrow loads fill whole registers.
pub fn target_default_lanes(k: &Kernel, target: &dyn crate::isa::target::Target) -> u32 {
    if target.chunk_by_narrowest() {
        let bits = (k.widest_bits() / 2).max(8);
        legal_lanes(k, (target.register_bits() / bits).max(1))
    } else {
        default_lanes(k, target.register_bits())
    }
}

/// The vector width actually used for a requested one: a power of two, and at least 128
/// bits of output, because selection works on chunks of at least that much and a chunk
/// wider than the vector would read past the input footprint.
pub fn legal_lanes(k: &Kernel, requested: u32) -> u32 {
    requested
        .max(128 / k.out_elem.bits())
        .max(1)
        .next_power_of_two()
}

fn i32c(v: i64) -> Expr {
    Expr::int(Elem::I32, v as i128).expect("index constants fit in i32")
}

/// The IR of a scalar affine index over domain variables (output variables never appear:
/// they are folded into row pointers or are the vector position).
fn affine_ir(a: &Affine) -> Expr {
    let mut e = i32c(a.c);
    for (v, &c) in &a.terms {
        let mut t = Expr::var(v.as_str(), Type::INDEX);
        if c != 1 {
            t = mk(Op::Mul, vec![t, i32c(c)]);
        }
        e = if e.as_const() == Some(0) {
            t
        } else {
            mk(Op::Add, vec![t, e])
        };
    }
    e
}

struct Builder<'k> {
    k: &'k Kernel,
    lanes: u32,
    rows: Vec<(usize, Vec<Affine>)>,
}

impl Builder<'_> {
    fn row(&mut self, input: usize, outer: Vec<Affine>) -> usize {
        let key = (input, outer);
        match self.rows.iter().position(|r| *r == key) {
            Some(i) => i,
            None => {
                self.rows.push(key);
                self.rows.len() - 1
            }
        }
    }

    /// The `N`-lane expression of a one-lane kernel expression.
    fn vector(&mut self, e: &Expr) -> Expr {
        let v = self.k.vec_var().to_string();
        let n = self.lanes;
        let mut loads: BTreeMap<String, Expr> = BTreeMap::new();
        for (name, _) in crate::ir::visit::free_vars(e) {
            let load = match leaf(&name) {
                Leaf::Access(a) => {
                    let acc = &self.k.accesses[a];
                    let elem = self.k.inputs[acc.input].elem;
                    // Domain variables stay in the row pointer too: such rows are declared
                    // inside the loops that bind them.
                    let outer: Vec<Affine> = acc.idx[1..].to_vec();
                    let row = self.row(acc.input, outer);
                    let stride = acc.idx[0].coef(&v);
                    let rest = affine_ir(&acc.idx[0].without(&v));
                    let pos = Expr::var(VEC_POS, Type::INDEX);
                    let base = if stride == 0 {
                        rest
                    } else {
                        let p = if stride == 1 {
                            pos
                        } else {
                            mk(Op::Mul, vec![pos, i32c(stride)])
                        };
                        if rest.as_const() == Some(0) {
                            p
                        } else {
                            mk(Op::Add, vec![p, rest])
                        }
                    };
                    let buf = format!("hv_row{row}");
                    if stride == 0 {
                        mk_typed(
                            Op::Load(buf.as_str().into(), None),
                            Type::scalar(elem),
                            vec![base],
                        )
                        .broadcast(n)
                    } else {
                        let idx =
                            mk_typed(Op::Ramp, Type::vec(Elem::I32, n), vec![base, i32c(stride)]);
                        mk_typed(
                            Op::Load(buf.as_str().into(), None),
                            Type::vec(elem, n),
                            vec![idx],
                        )
                    }
                }
                Leaf::Reduction(r) => {
                    let t = self.k.reductions[r].body.ty().elem;
                    let idx = mk_typed(Op::Ramp, Type::vec(Elem::I32, n), vec![i32c(0), i32c(1)]);
                    mk_typed(
                        Op::Load(format!("hv_r{r}").as_str().into(), None),
                        Type::vec(t, n),
                        vec![idx],
                    )
                }
                Leaf::Scalar => continue,
            };
            loads.insert(name.to_string(), load);
        }
        super::widen(e, n, &|x| match x.op() {
            Op::Var(name) => loads.get(&**name).cloned(),
            _ => None,
        })
    }
}

/// Lowers a kernel for `backend` at `width` lanes, or, without one, picks the cheapest per
/// output element among the body as written, with wrapping truncations moved to its
/// leaves (`lift::narrow_truncated_arithmetic`), with bounded operations narrowed
/// (`lift::narrow_bounded_arithmetic`) and, for an unsigned result over sign extensions,
/// computed signed (`lift::wrapping_in_signed`), each at its candidate widths
/// ([`candidate_lanes`]).
pub fn compile_best(k: &Kernel, backend: &Backend, width: Option<u32>) -> Compiled {
    use rayon::prelude::*;
    let target = backend.target.as_ref();
    let truncated = k.map_bodies(crate::lift::narrow_truncated_arithmetic);
    let bounded = k.map_bodies(|b| {
        crate::lift::narrow_truncated_arithmetic(&crate::lift::narrow_bounded_arithmetic(b))
    });
    let signed = k
        .bodies()
        .any(|b| crate::lift::wrapping_in_signed(b).is_some())
        .then(|| k.map_bodies(|b| crate::lift::wrapping_in_signed(b).unwrap_or_else(|| b.clone())));
    let folded = k.map_bodies(crate::lift::fold_offset_constants);
    let same = |a: &Kernel, b: &Kernel| a.bodies().eq(b.bodies());
    let mut bodies: Vec<Kernel> = Vec::new();
    for v in [k.clone(), truncated, bounded, folded]
        .into_iter()
        .chain(signed)
    {
        if !bodies.iter().any(|w| same(w, &v)) {
            bodies.push(v);
        }
    }
    let per_lane = |c: &Compiled| c.cost_on(target) / f64::from(c.lanes);
    // Each body at its first candidate width, side by side; then the bodies that lowered
    // to new code, and are not far behind, at their other widths (a narrower body gains
    // most from a wider vector, so a body behind at the first width may still win; the
    // largest reversal seen is a body 18% behind).
    let first: Vec<Compiled> = bodies
        .par_iter()
        .map(|v| compile(v, backend, candidate_lanes(v, target, width)[0]))
        .collect();
    let floor = first.iter().map(per_lane).fold(f64::INFINITY, f64::min);
    let wider: Vec<(usize, u32)> = first
        .iter()
        .enumerate()
        .filter(|&(i, c)| per_lane(c) <= 1.5 * floor && !first[..i].iter().any(|d| d.same_code(c)))
        .flat_map(|(i, _)| {
            let lanes = candidate_lanes(&bodies[i], target, width);
            lanes.into_iter().skip(1).map(move |l| (i, l))
        })
        .collect();
    let wider: Vec<Compiled> = wider
        .par_iter()
        .map(|&(i, lanes)| compile(&bodies[i], backend, lanes))
        .collect();
    // The first cheapest, in the order above, so the choice does not depend on scheduling.
    first
        .into_iter()
        .chain(wider)
        .reduce(|best, c| {
            if per_lane(&c) < per_lane(&best) {
                c
            } else {
                best
            }
        })
        .expect("at least one variant is compiled")
}

/// The vector widths worth trying for `k`: the requested one, else the target's default
/// first, then wider ones where a narrower type leaves registers partly filled: the width
/// whose output fills a register (a narrowing kernel: the wider values span several
/// registers and narrow with full-width packs) and the widths whose narrowest input or
/// value fills one (byte arithmetic in a kernel of wider output; strided byte loads: one
/// wide load deinterleaved, `ld3` on Arm, instead of a short load and a shuffle per few
/// lanes). At most four registers of the widest type.
fn candidate_lanes(
    k: &Kernel,
    target: &dyn crate::isa::target::Target,
    width: Option<u32>,
) -> Vec<u32> {
    if let Some(w) = width {
        return vec![legal_lanes(k, w)];
    }
    let default = target_default_lanes(k, target);
    let mut lanes = vec![default];
    if target.chunk_by_narrowest() {
        return lanes;
    }
    let register = target.register_bits();
    let narrowest_input = k.inputs.iter().map(|i| i.elem.bits()).min();
    let narrowest_value = k
        .bodies()
        .flat_map(crate::ir::visit::post_order)
        .map(|n| n.ty().elem)
        .filter(|e| *e != Elem::Bool && !e.is_internal())
        .map(|e| e.bits())
        .min();
    let fills = [Some(k.out_elem.bits()), narrowest_input, narrowest_value];
    for bits in fills.into_iter().flatten() {
        let fill = legal_lanes(k, (register / bits.max(1)).max(1));
        if fill > default && fill <= 4 * default && !lanes.contains(&fill) {
            lanes.push(fill);
        }
    }
    lanes.sort_unstable();
    lanes
}

/// Lowers a kernel for `backend` with `lanes` per vector.
pub fn compile(k: &Kernel, backend: &Backend, lanes: u32) -> Compiled {
    let lanes = legal_lanes(k, lanes);
    let mut b = Builder {
        k,
        lanes,
        rows: Vec::new(),
    };
    let steps = k
        .reductions
        .iter()
        .enumerate()
        .map(|(r, red)| {
            let t = red.body.ty();
            let acc = Expr::var(format!("@r{r}").as_str(), t);
            let step = b.vector(&red.kind.combine(&acc, &red.body));
            crate::lower::lower(&step, backend)
        })
        .collect();
    let body = b.vector(&k.body);
    let body = crate::lower::lower(&body, backend);
    let more = k
        .more_outputs
        .iter()
        .map(|(_, e)| {
            let v = b.vector(e);
            crate::lower::lower(&v, backend)
        })
        .collect();
    Compiled {
        lanes,
        body,
        more,
        steps,
        rows: b.rows,
    }
}

fn uses_domain_var(k: &Kernel, outer: &[Affine]) -> bool {
    outer
        .iter()
        .any(|a| a.terms.keys().any(|v| !k.out_vars.contains(v)))
}

/// Writes the C of a compiled kernel.
struct Emitter<'a> {
    k: &'a Kernel,
    c: &'a Compiled,
    /// The call of the narrow variant that replaces the scalar fallback, if any.
    narrow_call: Option<String>,
    target: &'a dyn crate::isa::target::Target,
    types: BTreeSet<Type>,
    out: String,
}

impl<'a> Emitter<'a> {
    fn line(&mut self, indent: usize, s: &str) {
        let _ = writeln!(self.out, "{:indent$}{s}", "");
    }

    fn row_decl(&mut self, indent: usize, r: usize) {
        let (input, outer) = &self.c.rows[r];
        let inp = &self.k.inputs[*input];
        let mut off = String::new();
        for (d, ix) in outer.iter().enumerate() {
            let _ = write!(
                off,
                " + (ptrdiff_t){} * {}",
                ix.c_text(&|v| scalar::loop_var(self.k, v)),
                scalar::stride(&inp.name, d + 1)
            );
        }
        self.line(
            indent,
            &format!(
                "const {} *b_hv_row{r} = {}{off};",
                inp.elem.c_name(),
                scalar::base_ptr(&inp.name)
            ),
        );
    }

    /// Rows read directly (not through inner reductions) by a lowered expression.
    fn rows_of(l: &Lowered) -> BTreeSet<usize> {
        l.params
            .buffers
            .keys()
            .filter_map(|b| b.strip_prefix("hv_row").and_then(|s| s.parse().ok()))
            .collect()
    }

    fn reductions_of(l: &Lowered) -> BTreeSet<usize> {
        l.params
            .buffers
            .keys()
            .filter_map(|b| b.strip_prefix("hv_r").and_then(|s| s.parse().ok()))
            .collect()
    }

    /// Emits the chunk loop of `l` over its `n` lanes, storing each chunk to `dest`.
    fn chunks(&mut self, indent: usize, l: &Lowered, dest: &str) {
        self.chunks_over(indent, &[(l, dest.to_string())], l.prepared.lanes);
    }

    /// Each output's lowered expression and where its vector at `pos` is stored.
    fn outputs_at(&self, pos: &str) -> Vec<(&'a Lowered, String)> {
        let c: &'a Compiled = self.c;
        c.outputs()
            .zip(scalar::out_ptrs(self.k))
            .map(|(l, p)| (l, format!("hv_{p} + {pos}")))
            .collect()
    }

    /// Emits the chunk loops of every output at `pos` over `n` lanes: one loop computing
    /// them all where their chunks are alike (their shared loads written once), else one
    /// loop each.
    fn output_chunks(&mut self, indent: usize, pos: &str, n: u32) {
        let parts = self.outputs_at(pos);
        let chunk = parts[0].0.prepared.chunk_lanes;
        if parts.iter().all(|(l, _)| l.prepared.chunk_lanes == chunk) {
            self.chunks_over(indent, &parts, n);
        } else {
            for part in parts {
                self.chunks_over(indent, std::slice::from_ref(&part), n);
            }
        }
    }

    /// Emits one chunk loop over `n` lanes computing every `(expression, destination)`
    /// of `parts` (with equal chunks; a chunked body's chunks are independent, so `n` may
    /// be any multiple of the chunk: several vectors, or one chunk).
    fn chunks_over(&mut self, indent: usize, parts: &[(&Lowered, String)], n: u32) {
        let lanes = parts[0].0.prepared.chunk_lanes;
        let mut w = FnWriter::new(self.target);
        w.bind(&prepare::chunk_var(), prepare::CHUNK_VAR);
        w.set_indent(&" ".repeat(indent + 4));
        let results: Vec<String> = parts.iter().map(|(l, _)| w.value(&l.selected)).collect();
        let body = w.take_body();
        self.types.extend(w.types.iter().copied());
        let x = prepare::CHUNK_VAR;
        self.line(
            indent,
            &format!("for (int32_t {x} = 0; {x} < {n}; {x} += {lanes}) {{"),
        );
        self.out.push_str(&body);
        for ((l, dest), r) in parts.iter().zip(results) {
            let et = l.out_elem().c_name();
            if n.is_multiple_of(lanes) {
                self.line(
                    indent + 4,
                    &format!("__builtin_memcpy({dest} + {x}, &{r}, {lanes} * sizeof({et}));"),
                );
            } else {
                self.line(
                    indent + 4,
                    &format!(
                        "{{ int32_t n_ = {n} - {x}; if (n_ > {lanes}) n_ = {lanes}; __builtin_memcpy({dest} + {x}, &{r}, (size_t)n_ * sizeof({et})); }}"
                    ),
                );
            }
        }
        self.line(indent, "}");
    }

    /// Emits a row of a body of independent `chunk`-lane chunks: several vectors per
    /// iteration (enough work to hide the loop's own overhead, as clang's interleaving
    /// does), then single chunks, then one chunk shifted left to end at the row's end. Rows
    /// as narrow as one chunk stay vector code.
    fn unrolled_row(&mut self, indent: usize, pos: &str, chunk: u32) {
        let c: &Compiled = self.c;
        let n = c.lanes;
        let per_vector: f64 = c.outputs().map(Lowered::cost).sum();
        // The widest lanes the selected code computes with (narrowing may have removed
        // the kernel's widest type).
        let widest = c
            .outputs()
            .flat_map(|l| crate::ir::visit::post_order(&l.selected))
            .map(|e| e.ty())
            .filter(|t| !t.is_scalar() && t.elem != Elem::Bool && !t.elem.is_internal())
            .map(|t| t.elem.bits())
            .max()
            .unwrap_or(8);
        let mut unroll = 1;
        while unroll < MAX_UNROLL
            && 2 * unroll * n <= MAX_UNROLLED_LANES
            && per_vector * f64::from(unroll) < UNROLLED_WORK
            && 2 * unroll * n * widest <= MAX_UNROLLED_REGISTERS * self.target.register_bits()
        {
            unroll *= 2;
        }
        let step = n * unroll;
        self.line(
            indent,
            &format!("for (; {pos} <= e0 - {step}; {pos} += {step}) {{"),
        );
        self.output_chunks(indent + 4, pos, step);
        self.line(indent, "}");
        if step > chunk {
            self.line(
                indent,
                &format!("for (; {pos} <= e0 - {chunk}; {pos} += {chunk}) {{"),
            );
            self.output_chunks(indent + 4, pos, chunk);
            self.line(indent, "}");
        }
        self.line(indent, &format!("if ({pos} < e0) {{"));
        self.line(indent + 4, &format!("{pos} = e0 - {chunk};"));
        self.output_chunks(indent + 4, pos, chunk);
        self.line(indent, "}");
    }

    /// Emits one row as plain scalar C (rows narrower than a vector, copies and fills).
    fn scalar_row(&mut self, ind: usize) {
        let k = self.k;
        let v0 = scalar::loop_var(k, k.vec_var());
        self.line(
            ind,
            &format!("for (int32_t {v0} = 0; {v0} < e0; {v0}++) {{"),
        );
        let mut w = scalar::Writer::new(k, ind + 4);
        let results: Vec<String> = k.bodies().map(|b| w.value(b)).collect();
        self.out.push_str(&w.out);
        for (p, r) in scalar::out_ptrs(k).iter().zip(results) {
            self.line(ind + 4, &format!("hv_{p}[{v0}] = {r};"));
        }
        self.line(ind, "}");
    }

    /// Emits one row as vectors, with the scalar code (or the narrow variant's call) for
    /// rows narrower than a vector.
    fn vector_row(&mut self, ind: usize) {
        let n = self.c.lanes;
        let pos = c_ident("p_", VEC_POS);
        let vector_min = match independent_chunks(self.c) {
            Some(chunk) if self.target.opt_level(crate::isa::target::Purpose::Kernel) == "-O3" => {
                chunk
            }
            _ => n,
        };
        self.line(ind, &format!("if (e0 >= {vector_min}) {{"));
        if self.target.opt_level(crate::isa::target::Purpose::Kernel) == "-O3" {
            self.line(ind + 4, &format!("int32_t {pos} = 0;"));
            if let Some(chunk) = independent_chunks(self.c) {
                self.unrolled_row(ind + 4, &pos, chunk);
            } else {
                // Whole vectors in a counted loop (no per-iteration clamp, so clang can unroll
                // and pipeline it), then one last vector shifted left to end at the row's end.
                self.line(
                    ind + 4,
                    &format!("for (; {pos} <= e0 - {n}; {pos} += {n}) {{"),
                );
                let start = self.out.len();
                self.vector_body(ind + 8, &pos);
                let body = self.out[start..].to_string();
                self.line(ind + 4, "}");
                self.line(ind + 4, &format!("if ({pos} < e0) {{"));
                self.line(ind + 8, &format!("{pos} = e0 - {n};"));
                self.out.push_str(&body);
                self.line(ind + 4, "}");
            }
        } else {
            // Below -O3 clang unrolls nothing, and one loop with the clamp inside is fewer
            // instructions per vector than two copies of the body (HVX kernels, built at -O1).
            self.line(
                ind + 4,
                &format!("for (int32_t {pos} = 0;; {pos} += {n}) {{"),
            );
            self.line(ind + 8, &format!("if ({pos} > e0 - {n}) {pos} = e0 - {n};"));
            self.vector_body(ind + 8, &pos);
            self.line(ind + 8, &format!("if ({pos} == e0 - {n}) break;"));
            self.line(ind + 4, "}");
        }
        self.line(ind, "} else {");
        match self.narrow_call.clone() {
            Some(call) => {
                self.line(ind + 4, &call);
                self.line(ind + 4, "return;");
            }
            None => self.scalar_row(ind + 4),
        }
        self.line(ind, "}");
    }

    /// Emits one row: the row pointers that depend only on output variables, then the
    /// vectors (or, for a copy or a fill, the plain loop).
    fn row(&mut self, ind: usize) {
        for r in 0..self.c.rows.len() {
            if !uses_domain_var(self.k, &self.c.rows[r].1) {
                self.row_decl(ind, r);
            }
        }
        if moves_data_only(self.c)
            && self.target.opt_level(crate::isa::target::Purpose::Kernel) == "-O3"
        {
            // A copy or a fill: clang recognises the plain loop as one `memcpy` or `memset`
            // call, exactly as it does in the baseline. Vector code would not beat the C
            // library, and clang turns its loops into several calls (one per loop).
            self.scalar_row(ind);
        } else {
            self.vector_row(ind);
        }
    }

    /// Emits the body computing and storing one vector at position `pos`.
    fn vector_body(&mut self, indent: usize, pos: &str) {
        for r in Self::reductions_of(&self.c.body) {
            self.reduction(indent, r);
        }
        let n = self.c.body.prepared.lanes;
        self.output_chunks(indent, pos, n);
    }

    /// Emits reduction `r` (its inner reductions first, inside its loop).
    fn reduction(&mut self, indent: usize, r: usize) {
        let red = &self.k.reductions[r];
        let step = &self.c.steps[r];
        let t = red.body.ty().elem;
        let n = self.c.lanes;
        self.line(
            indent,
            &format!(
                "{} b_hv_r{r}[{n}]; for (int i = 0; i < {n}; i++) b_hv_r{r}[i] = ({})({});",
                t.c_name(),
                t.c_name(),
                red.kind.init(t)
            ),
        );
        let mut ind = indent;
        for d in red.dom.iter().rev() {
            let v = scalar::loop_var(self.k, &d.var);
            self.line(
                ind,
                &format!(
                    "for (int32_t {v} = {}; {v} < {}; {v}++) {{",
                    d.lo,
                    scalar::bound(&d.hi)
                ),
            );
            ind += 4;
        }
        for row in Self::rows_of(step) {
            if uses_domain_var(self.k, &self.c.rows[row].1) {
                self.row_decl(ind, row);
            }
        }
        for inner in Self::reductions_of(step) {
            if inner != r {
                self.reduction(ind, inner);
            }
        }
        self.chunks(ind, step, &format!("b_hv_r{r}"));
        for _ in &red.dom {
            ind -= 4;
            self.line(ind, "}");
        }
    }
}

/// The variant of `c` at half its lanes, for rows narrower than `c`'s vector, on targets
/// whose kernels are built below the baseline's optimisation level (HVX, at -O1): there
/// the scalar fallback for such rows is slower than the baseline itself (conv_nn's
/// 32-channel rows under a 64-lane vector ran at 0.93x clang -O3; at 32 lanes, 3.3x).
/// Elsewhere the fallback is the baseline's own code at the baseline's level.
pub fn narrow_variant(k: &Kernel, backend: &Backend, c: &Compiled) -> Option<Compiled> {
    let target = backend.target.as_ref();
    if target.opt_level(crate::isa::target::Purpose::Kernel) == "-O3" {
        return None;
    }
    // The same search over bodies as any width (`--width` at half the lanes gives this
    // code), not just the kernel as written.
    let lanes = legal_lanes(k, c.lanes / 2);
    (lanes < c.lanes).then(|| compile_best(k, backend, Some(lanes)))
}

/// The outer output variables the kernel uses as values (not only in indices).
fn outer_vars_used(k: &Kernel) -> Vec<String> {
    let mut used = BTreeSet::new();
    for e in k.bodies().chain(k.reductions.iter().map(|r| &r.body)) {
        for (name, _) in crate::ir::visit::free_vars(e) {
            if let Some(v) = k.out_vars[1..].iter().find(|v| v.as_str() == &*name) {
                used.insert(v.clone());
            }
        }
    }
    used.into_iter().collect()
}

/// The vector C function of a compiled kernel, named `fname`, with the scalar fallback
/// for rows narrower than a vector, or, when `narrow` names a function with the same
/// parameters (a [`narrow_variant`]), a call of it instead: the row width is the same for
/// every row of a call, so the first row hands the whole call over. A call in place of
/// the fallback leaves the wide code as it was (inlined, the narrow code changed its
/// register allocation; as a dispatcher in front, it cost every call five packets).
/// Returns the typedefs and the function separately (typedefs go first in the file).
pub fn function(
    k: &Kernel,
    c: &Compiled,
    narrow: Option<&str>,
    target: &dyn crate::isa::target::Target,
    fname: &str,
) -> (String, String) {
    let mut em = Emitter {
        k,
        c,
        narrow_call: narrow.map(|n| format!("{n}({});", scalar::call_args(k))),
        target,
        types: BTreeSet::new(),
        out: String::new(),
    };
    em.line(0, &format!("{} {{", scalar::signature(k, fname)));
    let dims = k.out_vars.len();
    let mut ind = 4;
    for d in (1..dims).rev() {
        let v = scalar::loop_var(k, &k.out_vars[d]);
        em.line(ind, &format!("for (int32_t {v} = 0; {v} < e{d}; {v}++) {{"));
        ind += 4;
    }
    for p in scalar::out_ptrs(k) {
        let mut off = String::new();
        for d in 1..dims {
            let _ = write!(
                off,
                " + (ptrdiff_t){} * {p}_s{d}",
                scalar::loop_var(k, &k.out_vars[d])
            );
        }
        em.line(ind, &format!("{} *hv_{p} = {p}{off};", k.out_elem.c_name()));
    }
    // Outer output variables used as values: lowered code reads scalars by their
    // parameter names.
    for v in outer_vars_used(k) {
        em.line(
            ind,
            &format!(
                "const int32_t {} = {};",
                c_ident("p_", &v),
                scalar::loop_var(k, &v)
            ),
        );
    }
    em.row(ind);
    for _ in 1..dims {
        ind -= 4;
        em.line(ind, "}");
    }
    em.line(0, "}");
    (crate::lower::emit::typedefs(&em.types), em.out)
}
