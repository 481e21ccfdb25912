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

use std::collections::BTreeMap;

use super::{Affine, Kernel, Leaf, leaf};
use crate::ir::{Expr, Op, mk, mk_typed};
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

    /// [`Compiled::cost_on`] per lane: what widths, body forms and line buffers compare.
    pub fn cost_per_lane(&self, target: &dyn crate::isa::target::Target) -> f64 {
        self.cost_on(target) / f64::from(self.lanes)
    }

    /// [`Compiled::cost`] plus what spilling registers is estimated to add on `target`:
    /// the width choice compares this, so a wider vector that no longer fits the register
    /// file (many loop-invariant weights next to a wide accumulator) is not preferred.
    pub fn cost_on(&self, target: &dyn crate::isa::target::Target) -> f64 {
        let adjust = |l: &Lowered, in_body: bool| {
            let (hoisted, spills) = loop_invariance(&l.selected, in_body, target);
            (spills - hoisted) * f64::from(l.chunks())
        };
        self.cost()
            + self.outputs().map(|l| adjust(l, true)).sum::<f64>()
            + self.steps.iter().map(|s| adjust(s, false)).sum::<f64>()
    }
}

/// The registers the vector loop of `c` holds for the whole loop (loop-invariant vectors
/// read by its outputs) and the registers of its widest varying value per chunk: a row
/// loop that computes `k` chunks per iteration has about `invariant + 2 k widest` live
/// (clang interleaves the chunks to hide latencies).
pub fn loop_registers(c: &Compiled, register_bits: u32) -> (u32, u32) {
    let (mut invariant, mut widest) = (0, 0);
    for l in c.outputs() {
        let nodes = crate::ir::visit::post_order(&l.selected);
        let variant = varying_nodes(&nodes, true);
        let (i, w) = register_demand(&nodes, &variant, register_bits, false);
        invariant += i;
        widest = widest.max(w);
    }
    (invariant, widest)
}

/// Which of `nodes` (in post-order) vary in the loop: in the body's loop only the vector
/// position does; in a reduction step's loop every variable does.
fn varying_nodes(nodes: &[Expr], in_body: bool) -> IdMap<usize, bool> {
    let mut variant: IdMap<usize, bool> = IdMap::default();
    for n in nodes {
        let v = match n.op() {
            Op::Var(s) => !in_body || &**s == VEC_POS || &**s == prepare::CHUNK_VAR,
            _ => n.args().iter().any(|a| variant[&a.id()]),
        };
        variant.insert(n.id(), v);
    }
    variant
}

/// The loop-invariant part of a chunk: the cost of the nodes clang hoists out of the loop
/// (selection counts them per chunk, which makes a wider vector, whose chunks share them,
/// look cheaper than it is), and [`spill_cost`]. In the body's loop only the vector
/// position varies; a reduction step's loop also varies its reduction variables, so there
/// every variable counts as varying.
fn loop_invariance(
    chunk: &Expr,
    in_body: bool,
    target: &dyn crate::isa::target::Target,
) -> (f64, f64) {
    let register_bits = target.register_bits();
    let nodes = crate::ir::visit::post_order(chunk);
    let variant = varying_nodes(&nodes, in_body);
    // Constant sub-expressions (a weight splatted and widened) are free in the chunk's cost
    // already (`select::DagCosts`: clang folds them), so hoisting saves nothing on them.
    // Crediting them too made a variant with many constant nodes look cheaper than it is
    // (a 3x3 i16 stencil on AVX2 took 8 lanes with 9 widening loads, 0.90x clang -O3, over 16
    // lanes of paired `pmaddwd`, 1.40x).
    let mut constant: IdMap<usize, bool> = IdMap::default();
    let mut hoisted = 0.0;
    for n in &nodes {
        let is_constant = n.is_constant_over(|a| constant[&a.id()]);
        constant.insert(n.id(), is_constant);
        if !variant[&n.id()] && !is_constant {
            hoisted += crate::lower::select::generic_cost(n, register_bits);
        }
    }
    (hoisted, spill_cost(&nodes, &variant, target))
}

/// Estimated cycles spilling adds to one chunk: a store and a reload for every register
/// the chunk needs beyond the target's registers. The chunk needs one register (or several, for a
/// value wider than one) for each loop-invariant vector it reads (weights, splatted
/// parameters and constants, which clang hoists out of the loop) and a working set of
/// about twice its widest value (clang schedules loads early, so several live at once).
/// Measured on AVX2: a 13-tap byte product sum at 32 lanes (13 weights, two accumulator
/// registers) runs 0.64x clang -O3 with its spills and 0.83x at 16 lanes.
fn spill_cost(
    nodes: &[Expr],
    variant: &IdMap<usize, bool>,
    target: &dyn crate::isa::target::Target,
) -> f64 {
    /// Cycles per register beyond the file: a spill store and a reload, and the loads
    /// the scheduler can no longer hoist.
    const SPILL_CYCLES: f64 = 2.0;
    // Where the C computes a value a register at a time, a chunk wider than its loads is
    // register-sized parts side by side ([`register_demand`]).
    let by_parts = target.c_vector_registers() == 1;
    let (invariant, widest) = register_demand(nodes, variant, target.register_bits(), by_parts);
    let needed = invariant + 2 * widest + 1;
    f64::from(needed.saturating_sub(target.vector_registers())) * SPILL_CYCLES
}

/// The registers a chunk holds for the whole loop (the loop-invariant vectors it reads)
/// and the registers of its widest varying value. A load's ramp of indices counts at most
/// the lanes the chunk computes with (its widest value other than loads and ramps): the
/// spill estimate was measured with dense loads, whose ramps of 32-bit indices stand for
/// a working set at the chunk's width, while a strided load's window is several times
/// wider than what it delivers (a 96-byte load of every third byte would otherwise count
/// as 12 registers and keep byte triples from a full register).
///
/// With `ramps_at_chunk_width`, every ramp stands for the chunk's whole width, also where
/// the chunk is computed in register-sized parts whose loads each take a part of it: the
/// parts are computed side by side, each with its own working set. Counted at their own
/// width, a 13-tap product sum of u16 lanes on AVX2 (fuzz_8_27 of seed 8) looked as if it
/// spilled as much at 32 lanes (two parts) as at 16, took 32 and spilled: 0.87x clang -O3,
/// 1.0x at 16. Only there: where whole values span several registers in the C (RISC-V's
/// register groups), counted so it changed the width of 19 kernels of seeds 1, 5, 7 and 8,
/// 10 of them slower; the unrolling's estimate keeps their own width too.
fn register_demand(
    nodes: &[Expr],
    variant: &IdMap<usize, bool>,
    register_bits: u32,
    ramps_at_chunk_width: bool,
) -> (u32, u32) {
    let chunk_lanes = nodes
        .iter()
        .filter(|n| !matches!(n.op(), Op::Ramp | Op::Load(..)))
        .map(|n| n.ty().lanes)
        .max()
        .unwrap_or(u32::MAX);
    let regs = |e: &Expr| {
        let t = e.ty();
        let lanes = if matches!(e.op(), Op::Ramp) && ramps_at_chunk_width {
            chunk_lanes
        } else if matches!(e.op(), Op::Ramp) {
            t.lanes.min(chunk_lanes)
        } else {
            t.lanes
        };
        (u64::from(lanes) * u64::from(t.elem.bits())).div_ceil(u64::from(register_bits)) as u32
    };
    // Registers held per loop-invariant value, by the value that owns them.
    let mut invariant_used: BTreeMap<usize, u32> = BTreeMap::new();
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
                let held = invariant_used.entry(register_owner(a)).or_insert(0);
                *held = (*held).max(regs(a));
            }
        }
    }
    let invariant: u32 = invariant_used.values().sum();
    (invariant, widest)
}

/// Which registers hold `v`, as a key shared by the values that live in the same ones: a
/// splat of a scalar at any width, or a slice of one, is the widest splat of that scalar
/// (the narrower ones are its low half, or a shuffle clang folds to it), and the first
/// lanes of a value are its first register, or the low half of it (Arm's `d` and x86's
/// `xmm` registers are the low halves of `q` and `ymm`). Counted apart, a splat of a
/// weight and its low half, which widening multiplies of the low and of the high lanes
/// read (`umull` and `umull2`), looked like two registers per weight: a 14-tap byte
/// product sum at 16 lanes on Arm looked as if it spilled and took 8 lanes, 0.96x clang
/// -O3 instead of 1.29x.
fn register_owner(v: &Expr) -> usize {
    let mut v = v;
    loop {
        match *v.op() {
            Op::Broadcast if v.arg(0).ty().is_scalar() => return v.arg(0).id(),
            Op::Slice { start, stride }
                if matches!(v.arg(0).op(), Op::Broadcast) || (start == 0 && stride == 1) =>
            {
                v = v.arg(0)
            }
            _ => return v.id(),
        }
    }
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
/// (`lift::narrow_bounded_arithmetic`), that and bounded high products as shifted products
/// (`lift::narrow_bounded_arithmetic_and_high_products`) and, for an unsigned result over
/// sign extensions, computed signed (`lift::wrapping_in_signed`), each at its candidate
/// widths ([`candidate_lanes`]).
pub fn compile_best(k: &Kernel, backend: &Backend, width: Option<u32>) -> Compiled {
    compile_variants(k, backend, width, Widths::All)
}

/// [`compile_best`] for a kernel compiled alone (nothing else compiles beside it): the
/// kernel's own body at its wider widths starts beside every body's first width, so the
/// two longest selections of a long kernel run side by side (x86 depthwise_conv: its
/// 16- and 32-lane selections, 104 ms -> 77 ms on two cores). If the body turns out far
/// behind, those widths were compiled for nothing; beside other compiles (the parts of a
/// line-buffered plan) they only slow them down.
pub fn compile_best_alone(k: &Kernel, backend: &Backend, width: Option<u32>) -> Compiled {
    compile_variants(k, backend, width, Widths::AllStartingEarly)
}

/// Which candidate widths [`compile_variants`] compiles.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Widths {
    /// Each body's first only.
    First,
    /// Each body's first, then the other widths of those not far behind.
    All,
    /// As `All`, with the kernel's own body's other widths started beside the first ones.
    AllStartingEarly,
}

/// [`compile_best`] with each body at its first candidate width only: the code for
/// images too narrow or short for a line buffer, where a line-buffered plan is far ahead
/// (`line_buffer::choose`). The wider widths of a long body are most of a compile's time
/// (a 7x7 stencil inlined at four registers a value) and pay off only on wide rows.
pub fn compile_first_width(k: &Kernel, backend: &Backend, width: Option<u32>) -> Compiled {
    compile_variants(k, backend, width, Widths::First)
}

/// The body with bounded operations narrowed (the variant of [`compile_best`] that is
/// usually cheapest, and quickest to select: its sums are narrower), at its first
/// candidate width: the direct code of a kernel whose line-buffered plan is far ahead even
/// of the best direct code (`line_buffer::choose`), which serves only images too small for
/// the lines.
pub fn compile_narrowed(k: &Kernel, backend: &Backend, width: Option<u32>) -> Compiled {
    let narrowed = k
        .map_bodies(crate::lift::fold_trivial_identities)
        .map_bodies(narrowed_body);
    let lanes = candidate_lanes(&narrowed, backend.target.as_ref(), width)[0];
    compile(&narrowed, backend, lanes)
}

/// `b` with bounded operations narrowed, then wrapping truncations moved to its leaves.
fn narrowed_body(b: &Expr) -> Expr {
    crate::lift::narrow_truncated_arithmetic(&crate::lift::narrow_bounded_arithmetic(b))
}

/// The bodies [`compile_best`] compares, without repeats.
fn body_variants(k: &Kernel) -> Vec<Kernel> {
    let truncated = k.map_bodies(crate::lift::narrow_truncated_arithmetic);
    let bounded = k.map_bodies(narrowed_body);
    let high_products = k.map_bodies(|b| {
        crate::lift::narrow_truncated_arithmetic(
            &crate::lift::narrow_bounded_arithmetic_and_high_products(b),
        )
    });
    let signed = k
        .bodies()
        .any(|b| crate::lift::wrapping_in_signed(b).is_some())
        .then(|| k.map_bodies(|b| crate::lift::wrapping_in_signed(b).unwrap_or_else(|| b.clone())));
    let folded = k.map_bodies(crate::lift::fold_offset_constants);
    let same = |a: &Kernel, b: &Kernel| a.bodies().eq(b.bodies());
    let mut bodies: Vec<Kernel> = Vec::new();
    for v in [k.clone(), truncated, bounded, folded, high_products]
        .into_iter()
        .chain(signed)
    {
        if !bodies.iter().any(|w| same(w, &v)) {
            bodies.push(v);
        }
    }
    bodies
}

fn compile_variants(k: &Kernel, backend: &Backend, width: Option<u32>, widths: Widths) -> Compiled {
    use rayon::prelude::*;
    let target = backend.target.as_ref();
    // Every variant starts from the kernel with its trivial identities folded, as clang
    // folds them in the scalar baseline.
    let bodies = body_variants(&k.map_bodies(crate::lift::fold_trivial_identities));
    let per_lane = |c: &Compiled| c.cost_per_lane(target);
    // Each body at its first candidate width, side by side; then the bodies that lowered
    // to new code, and are not far behind, at their other widths (a narrower body gains
    // most from a wider vector, so a body behind at the first width may still win; the
    // largest reversal seen is a body 18% behind). Compiled alone, the kernel's own body,
    // almost always among those, starts its other widths beside the first ones (dropped if
    // it is far behind after all).
    let wider = widths != Widths::First;
    let own_wider = |bodies: &[Kernel]| -> Vec<(u32, Compiled)> {
        if widths != Widths::AllStartingEarly {
            return Vec::new();
        }
        let lanes = candidate_lanes(&bodies[0], target, width);
        lanes
            .into_par_iter()
            .skip(1)
            .map(|l| (l, compile(&bodies[0], backend, l)))
            .collect()
    };
    let (first, own_wider): (Vec<Compiled>, Vec<(u32, Compiled)>) = rayon::join(
        || {
            bodies
                .par_iter()
                .map(|v| compile(v, backend, candidate_lanes(v, target, width)[0]))
                .collect()
        },
        || own_wider(&bodies),
    );
    let floor = first.iter().map(per_lane).fold(f64::INFINITY, f64::min);
    let wider: Vec<(usize, u32)> = first
        .iter()
        .enumerate()
        .filter(|&(i, c)| {
            wider && per_lane(c) <= 1.5 * floor && !first[..i].iter().any(|d| d.same_code(c))
        })
        .flat_map(|(i, _)| {
            let lanes = candidate_lanes(&bodies[i], target, width);
            lanes.into_iter().skip(1).map(move |l| (i, l))
        })
        .collect();
    // Those started early are taken as they are; the others are compiled now.
    let mut done: std::collections::HashMap<(usize, u32), Compiled> =
        own_wider.into_iter().map(|(l, c)| ((0, l), c)).collect();
    let missing: Vec<(usize, u32)> = wider
        .iter()
        .filter(|k| !done.contains_key(k))
        .copied()
        .collect();
    done.extend(
        missing
            .into_par_iter()
            .map(|(i, lanes)| ((i, lanes), compile(&bodies[i], backend, lanes)))
            .collect::<Vec<_>>(),
    );
    let wider: Vec<Compiled> = wider
        .iter()
        .map(|k| done.remove(k).expect("compiled above"))
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

/// The variant of `c` at half its lanes, for rows narrower than `c`'s vector, on targets
/// whose kernels are built below the baseline's optimisation level (HVX, at -O1): there
/// the scalar fallback for such rows is slower than the baseline itself (conv_nn's
/// 32-channel rows under a 64-lane vector ran at 0.93x clang -O3; at 32 lanes, 3.3x).
/// Elsewhere the fallback is the baseline's own code at the baseline's level. A variant
/// has its own down to half the target's first width: a kernel chosen at twice that
/// width (a register of bytes on HVX) keeps the narrow code it had at the first width.
pub fn narrow_variant(k: &Kernel, backend: &Backend, c: &Compiled) -> Option<Compiled> {
    let target = backend.target.as_ref();
    if target.opt_level(crate::isa::target::Purpose::Kernel) == "-O3" {
        return None;
    }
    // The same search over bodies as any width (`--width` at half the lanes gives this
    // code), not just the kernel as written.
    let lanes = legal_lanes(k, c.lanes / 2);
    (lanes < c.lanes && 2 * lanes >= target_default_lanes(k, target))
        .then(|| compile_best(k, backend, Some(lanes)))
}
