//! The C text of a compiled kernel ([`super::codegen::Compiled`]): the loops over the
//! outer output dimensions, the row pointers, and each row's vector loop (several vectors
//! per iteration where the chunks are independent, then single chunks, then a shifted
//! last one; rows narrower than a vector take the scalar code or the narrow variant), with
//! the lowered expressions written by `crate::lower::emit::FnWriter`.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::codegen::{Compiled, VEC_POS};
use super::{Affine, Kernel, scalar};
use crate::ir::{Expr, Op};
use crate::lower::cform::c_ident;
use crate::lower::emit::FnWriter;
use crate::lower::{Lowered, prepare};
use crate::types::{Elem, Type};

/// Estimated cycles of body an unrolled row loop iteration should hold at least, so that
/// its overhead ([`super::codegen::LOOP_OVERHEAD`]) is a small part of it.
const UNROLLED_WORK: f64 = 40.0;

/// Estimated cycles of body below which a row loop iteration still holds two vectors: the
/// loop's counter, compare, branch and pointer updates are several percent of a body this
/// short (a 16-tap product sum of 55 cycles ran 0.965x clang -O3 on Arm in executed
/// instructions at one vector per iteration, 1.01x at two), while more vectors of it per
/// iteration outgrow the register file (four of a strided 16-bit body: spilled, 0.78x).
/// Only bodies of at most two registers of their widest type are paired so.
const PAIRED_WORK: f64 = 128.0;

/// At most this many vector loads in a body paired by [`PAIRED_WORK`].
const MOST_PAIRED_LOADS: usize = 16;

/// Up to this many row pointers a counted row loop of one chunk an iteration counts its
/// iterations (clang steps each pointer); past it, it steps one offset every row's load
/// takes as its index. Measured on Arm over generated kernels of one chunk an iteration,
/// in executed instructions: rows 3 to 7, the offset cost up to 2% more; 8 rows, equal;
/// 10 to 16 rows, the count cost up to 4.5% more.
const MOST_STEPPED_ROWS: usize = 8;

/// At most this many vectors per unrolled loop iteration.
const MAX_UNROLL: u32 = 8;

/// At most this many lanes per unrolled loop iteration, so that the default `harrow run`
/// rows (`cli::kernel::default_run_size`, over 256 wide) run the unrolled loop, the loop of
/// single chunks and the shifted last chunk.
pub const MAX_UNROLLED_LANES: u32 = 128;

/// At most this many registers of the widest type per unrolled loop iteration (clang
/// computes the chunks one after another, so this bounds code size, not register use).
const MAX_UNROLLED_REGISTERS: u32 = 16;

/// The registers the windows of `c`'s strided loads (loads of more lanes than its vector,
/// and loads a strided slice reads) take, all of them: they are live together where clang
/// issues them early. 0 without such loads.
fn strided_window_registers(c: &Compiled, register_bits: u32) -> u32 {
    let mut seen = std::collections::HashSet::new();
    // A window is a load wider than the vector, or one that a strided slice reads (a
    // vector's lanes of every third dword are four windows of twelve: Arm's fuzz_1_46 of
    // seed 1 held sixteen of them, 48 registers, at four chunks an iteration).
    let strided_windows: std::collections::HashSet<usize> = c
        .outputs()
        .flat_map(|l| crate::ir::visit::post_order(&l.selected))
        .filter(|e| matches!(e.op(), Op::Slice { stride, .. } if *stride >= 2))
        .filter(|e| matches!(e.arg(0).op(), Op::Load(..)))
        .map(|e| e.arg(0).id())
        .collect();
    let bits: u64 = c
        .outputs()
        .flat_map(|l| crate::ir::visit::post_order(&l.selected))
        .filter(|e| {
            matches!(e.op(), Op::Load(..))
                && (e.ty().lanes > c.lanes || strided_windows.contains(&e.id()))
        })
        .filter(|e| seen.insert(e.id()))
        .map(|e| e.ty().total_bits())
        .sum();
    u32::try_from(bits.div_ceil(u64::from(register_bits))).unwrap_or(u32::MAX)
}

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

/// For a compiled kernel that only moves data, the scalar expressions a plain loop
/// computes its outputs by so that clang sees the copy or fill: the kernel's own bodies
/// where they are written as one, else the constants a fill reduced to. A copy the
/// kernel's operations reduce to (`u8((rounding_shift_right(x / 8, 6) * y) | x)` of an
/// `i8` is `u8(x)`) stays vector code: written as the kernel, the plain loop computes what
/// clang does not fold (15.6x slower than the vector copy).
fn plain_moves(k: &Kernel, c: &Compiled) -> Option<Vec<Expr>> {
    if k.bodies().all(written_as_move) {
        return Some(k.bodies().cloned().collect());
    }
    c.outputs()
        .map(|l| match l.selected.op() {
            Op::Broadcast if l.selected.arg(0).as_const().is_some() => {
                Some(l.selected.arg(0).clone())
            }
            _ => None,
        })
        .collect()
}

/// Whether a kernel body is written as a copy or fill: a load, a constant or a parameter,
/// through reinterpretations and casts that keep its bits: same-width ones, and
/// extensions truncated back to the width they started from (`u16(u32(a))` of an `i16`,
/// which clang's baseline copies with one `memcpy`; as vector loops, three calls, 0.76x
/// clang -O3 on Arm in executed instructions).
fn written_as_move(e: &Expr) -> bool {
    // The casts and reinterpretations down to the first other node, and that node.
    let mut inner = e;
    let mut narrowest = e.ty().elem.bits();
    while matches!(inner.op(), Op::Cast | Op::Reinterpret) {
        inner = inner.arg(0);
        narrowest = narrowest.min(inner.ty().elem.bits());
    }
    let keeps_bits = narrowest == e.ty().elem.bits() && inner.ty().elem.bits() == narrowest;
    keeps_bits
        && e.ty().lanes == inner.ty().lanes
        && matches!(inner.op(), Op::Load(..) | Op::Const(_) | Op::Var(_))
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
    /// Lane counts of the bit vectors the chunks convert masks through.
    bit_vectors: BTreeSet<u32>,
    out: String,
}

impl<'a> Emitter<'a> {
    fn line(&mut self, indent: usize, s: &str) {
        let _ = writeln!(self.out, "{:indent$}{s}", "");
    }

    fn row_decl(&mut self, indent: usize, r: usize, pin: bool) {
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
        if pin && !outer.is_empty() {
            self.line(indent, &format!("HV_PIN(b_hv_row{r});"));
        }
    }

    /// The numbers `K` of the buffers `PREFIX<K>` a lowered expression reads.
    fn numbered(l: &Lowered, prefix: &str) -> BTreeSet<usize> {
        l.params
            .buffers
            .keys()
            .filter_map(|b| b.strip_prefix(prefix).and_then(|s| s.parse().ok()))
            .collect()
    }

    /// Rows read directly (not through inner reductions) by a lowered expression.
    fn rows_of(l: &Lowered) -> BTreeSet<usize> {
        Self::numbered(l, "hv_row")
    }

    /// Loop reductions whose accumulators a lowered expression reads.
    fn reductions_of(l: &Lowered) -> BTreeSet<usize> {
        Self::numbered(l, "hv_r")
    }

    /// Emits the chunk loop of `l` over its `n` lanes, storing each chunk to `dest`.
    fn chunks(&mut self, indent: usize, l: &Lowered, dest: &str) {
        self.chunks_over(indent, &[(l, dest.to_string())], l.prepared.lanes, false);
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
    fn output_chunks(&mut self, indent: usize, pos: &str, n: u32, unrolled: bool) {
        let parts = self.outputs_at(pos);
        let chunk = parts[0].0.prepared.chunk_lanes;
        if parts.iter().all(|(l, _)| l.prepared.chunk_lanes == chunk) {
            self.chunks_over(indent, &parts, n, unrolled);
        } else {
            for part in parts {
                self.chunks_over(indent, std::slice::from_ref(&part), n, unrolled);
            }
        }
    }

    /// Emits one chunk loop over `n` lanes computing every `(expression, destination)`
    /// of `parts` (with equal chunks; a chunked body's chunks are independent, so `n` may
    /// be any multiple of the chunk: several vectors, or one chunk); `unrolled` asks clang
    /// to unroll the loop fully.
    fn chunks_over(&mut self, indent: usize, parts: &[(&Lowered, String)], n: u32, unrolled: bool) {
        let lanes = parts[0].0.prepared.chunk_lanes;
        let mut w = FnWriter::new(self.target);
        w.bind(&prepare::chunk_var(), prepare::CHUNK_VAR);
        w.set_indent(&" ".repeat(indent + 4));
        // Several chunks one after another: some loads along a row come from the previous
        // chunk (`crate::lower::neighbours`).
        if n > lanes && self.target.derives_neighbour_loads() {
            let roots: Vec<_> = parts.iter().map(|(l, _)| l.selected.clone()).collect();
            w.take_from_neighbours(&crate::lower::neighbours::neighbour_loads(&roots, lanes));
        }
        let results: Vec<String> = parts.iter().map(|(l, _)| w.value(&l.selected)).collect();
        let body = w.take_body();
        self.types.extend(w.types.iter().copied());
        self.bit_vectors.extend(w.bit_vectors.iter().copied());
        let x = prepare::CHUNK_VAR;
        for (ct, previous, _) in w.carried() {
            self.line(indent, &format!("{ct} {previous} = ({ct})(0);"));
        }
        // Several chunks an iteration: clang may leave the loop over them rolled, with its
        // own counter and branch, which is what the unrolling was to save: a two-trip loop
        // around a long body (a 16-tap product sum ran 0.87x clang -O3 on Arm in executed
        // instructions), or eight chunks of a short one (fuzz_8_98 of seed 8 on Arm, 0.81x;
        // 1.13x so). Unrolled, they are the straight-line code of one iteration.
        if unrolled && n > lanes {
            self.line(indent, "_Pragma(\"clang loop unroll(full)\")");
        }
        self.line(
            indent,
            &format!("for (int32_t {x} = 0; {x} < {n}; {x} += {lanes}) {{"),
        );
        self.out.push_str(&body);
        for (_, previous, current) in w.carried() {
            self.line(indent + 4, &format!("{previous} = {current};"));
        }
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
        // A strided load's window is wider than the lanes it delivers, and clang issues the
        // unrolled chunks' loads early, whole windows live at once (`ld4` keeps all four
        // registers): eight chunks of every fourth dword narrowed to half-words held 64
        // registers of windows and spilled them (Arm's fuzz_5_142 of seed 5, 0.88x clang
        // -O3). The windows of an iteration's chunks must fit the register file. (Counted
        // per lane as the widest value, they cut the unrolling of 31 other kernels of
        // seeds 1, 5 and 7 that did not spill, up to 12% more instructions.)
        let window_registers = strided_window_registers(c, self.target.register_bits());
        // Where loop-invariant weights hold most of the register file, two chunks per
        // iteration, interleaved by clang, no longer fit beside them (13 hoisted weights
        // on AVX2: spilled, 0.80x clang -O3; one chunk per iteration, 1.0x). Otherwise
        // clang computes further chunks one after another as registers run short.
        let registers = self.target.vector_registers();
        let (invariant, working) = super::codegen::loop_registers(c, self.target.register_bits());
        let fits = 2 * invariant <= registers || invariant + 2 * 2 * working <= registers;
        // A pair of vectors of a short body, each at most two registers of its widest
        // type (wider ones spilled when paired: a 16-lane body of 32-bit values, 0.96x).
        // Nor with many loads: clang issues a pair's loads early, and a 31-tap stencil's
        // ran out of registers (0.95x, from 1.06x unpaired).
        let paired_bits = 4 * self.target.register_bits();
        let loads = c
            .outputs()
            .flat_map(|l| crate::ir::visit::post_order(&l.selected))
            .filter(|e| matches!(e.op(), Op::Load(..)) && !e.ty().is_scalar())
            .count();
        let pairs = self.target.pairs_short_bodies()
            && 2 * n * widest <= paired_bits
            && loads <= MOST_PAIRED_LOADS;
        let mut unroll = 1;
        while unroll < MAX_UNROLL
            && 2 * unroll * n <= MAX_UNROLLED_LANES
            && (per_vector * f64::from(unroll) < UNROLLED_WORK
                || (unroll == 1 && per_vector < PAIRED_WORK && pairs))
            && 2 * unroll * n * widest <= MAX_UNROLLED_REGISTERS * self.target.register_bits()
            && 2 * unroll * window_registers <= registers
            && fits
        {
            unroll *= 2;
        }
        let step = n * unroll;
        let unrolled = unroll >= 2;
        if self.target.counted_row_loops() {
            self.counted_row_loop(indent, pos, step, chunk, unrolled);
        } else {
            self.line(
                indent,
                &format!("for (; {pos} <= e0 - {step}; {pos} += {step}) {{"),
            );
            self.output_chunks(indent + 4, pos, step, unrolled);
            self.line(indent, "}");
        }
        if step > chunk {
            self.line(
                indent,
                &format!("for (; {pos} <= e0 - {chunk}; {pos} += {chunk}) {{"),
            );
            self.output_chunks(indent + 4, pos, chunk, false);
            self.line(indent, "}");
        }
        self.line(indent, &format!("if ({pos} < e0) {{"));
        self.line(indent + 4, &format!("{pos} = e0 - {chunk};"));
        self.output_chunks(indent + 4, pos, chunk, false);
        self.line(indent, "}");
    }

    /// Emits the unrolled row loop of `unrolled_row` with its end computed before it and
    /// the position set after it, so that nothing but a count or an offset and the
    /// pointers lives across iterations (`Target::counted_row_loops`).
    fn counted_row_loop(
        &mut self,
        indent: usize,
        pos: &str,
        step: u32,
        chunk: u32,
        unrolled: bool,
    ) {
        // (the end, the loop's head, the position in an iteration, the position after)
        let (end, head, at, after) = if step > chunk || self.row_pointers() <= MOST_STEPPED_ROWS {
            // Counted down, clang steps each row's pointer (several chunks an iteration
            // reached by immediate offsets).
            (
                format!("const int32_t hv_steps = e0 / {step};"),
                "for (int32_t hv_step = 0; hv_step < hv_steps; hv_step++) {".to_string(),
                format!("{pos} = hv_step * {step};"),
                format!("{pos} = hv_steps * {step};"),
            )
        } else {
            // One chunk an iteration over more rows than clang steps pointers for: a
            // pointer-sized offset stepping by the lanes, which every row's load takes as
            // its index. From a count clang derived each element size's offset anew (a
            // shift for the byte loads, another for the 16-bit store: 71 instructions an
            // iteration of a 13-row product where clang -O3's own loop takes 69).
            (
                format!("const ptrdiff_t hv_end = (ptrdiff_t)(e0 / {step}) * {step};"),
                format!("for (ptrdiff_t hv_off = 0; hv_off < hv_end; hv_off += {step}) {{"),
                format!("{pos} = (int32_t)hv_off;"),
                format!("{pos} = (int32_t)hv_end;"),
            )
        };
        self.line(indent, "{");
        self.line(indent + 4, &end);
        self.line(indent + 4, &head);
        self.line(indent + 8, &at);
        self.output_chunks(indent + 8, pos, step, unrolled);
        self.line(indent + 4, "}");
        self.line(indent + 4, &after);
        self.line(indent, "}");
    }

    /// Emits one row as plain scalar C (rows narrower than a vector).
    fn scalar_row(&mut self, ind: usize) {
        let bodies: Vec<Expr> = self.k.bodies().cloned().collect();
        self.scalar_row_of(ind, &bodies);
    }

    /// Emits one row as plain scalar C computing each output by the scalar expression of
    /// `values` (the kernel's bodies, or what a copy or fill reduced to).
    fn scalar_row_of(&mut self, ind: usize, values: &[Expr]) {
        let k = self.k;
        let v0 = scalar::loop_var(k, k.vec_var());
        self.line(
            ind,
            &format!("for (int32_t {v0} = 0; {v0} < e0; {v0}++) {{"),
        );
        let mut w = scalar::Writer::new(k, ind + 4);
        let results: Vec<String> = values.iter().map(|b| w.value(b)).collect();
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

    /// The rows whose pointers depend only on output variables (declared once per row).
    fn row_level_rows(&self) -> Vec<usize> {
        (0..self.c.rows.len())
            .filter(|&r| !uses_domain_var(self.k, &self.c.rows[r].1))
            .collect()
    }

    /// How many row pointers a row declares (the rows of `row_level_rows` off the first).
    fn row_pointers(&self) -> usize {
        self.row_level_rows()
            .into_iter()
            .filter(|&r| !self.c.rows[r].1.is_empty())
            .count()
    }

    /// Emits one row: the row pointers that depend only on output variables, then the
    /// vectors (or, for a copy or a fill, the plain loop).
    fn row(&mut self, ind: usize) {
        // Pinned once per row, outside every loop along it; a pointer set in a reduction's
        // loop stays visible (pinned there, it kept clang from stepping it: matmul_i16 on
        // Arm 6.0x -> 4.8x clang -O3).
        let row_level = self.row_level_rows();
        let pin = self.row_pointers() <= self.target.pinned_row_pointers();
        for r in row_level {
            self.row_decl(ind, r, pin);
        }
        let plain = if moves_data_only(self.c)
            && self.target.opt_level(crate::isa::target::Purpose::Kernel) == "-O3"
        {
            plain_moves(self.k, self.c)
        } else {
            None
        };
        match plain {
            // A copy or a fill: clang recognises the plain loop as one `memcpy` or `memset`
            // call, exactly as it does in the baseline. Vector code would not beat the C
            // library, and clang turns its loops into several calls (one per loop).
            Some(values) => self.scalar_row_of(ind, &values),
            None => self.vector_row(ind),
        }
    }

    /// Emits the body computing and storing one vector at position `pos`.
    fn vector_body(&mut self, indent: usize, pos: &str) {
        for r in Self::reductions_of(&self.c.body) {
            self.reduction(indent, r);
        }
        let n = self.c.body.prepared.lanes;
        self.output_chunks(indent, pos, n, false);
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
                self.row_decl(ind, row, false);
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
/// parameters (a [`super::codegen::narrow_variant`]), a call of it instead: the row width is the same for
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
        bit_vectors: BTreeSet::new(),
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
    (
        crate::lower::emit::typedefs(&em.types, &em.bit_vectors),
        em.out,
    )
}
