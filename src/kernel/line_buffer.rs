//! Line buffers: a kernel whose body repeats one sub-expression at several row or column
//! offsets (a separable stencil's row sums, `row(x, y - 2) + 4 * row(x, y - 1) + ...`)
//! computes that sub-expression once per line into a small ring of lines, and the output
//! from the lines, instead of once per use. This is Halide's sliding window
//! (`compute_at` with `store_root` and a folded buffer), chosen here by the cost model.
//!
//! The kernel is split into two ordinary kernels, each compiled like any other:
//! - the *producer* computes the repeated sub-expression `D(x, y)` (normalized so that its
//!   smallest row and column offsets are zero);
//! - the *consumer* is the original body with each use `D(x + dx, y + dy)` replaced by a
//!   read of a one-row input holding line `y + dy`.
//!
//! `line_buffer.c` (a template) drives them: per strip of columns and per output row, it
//! computes the lines the row needs that are not in the ring yet, then calls the consumer
//! on that row with a pointer to each line. The split is used only where the estimated
//! cost per output element is lower than the kernel's own.

use std::collections::HashMap;
use std::fmt::Write;

use super::codegen::{self, Compiled};
use super::{Access, Affine, Input, Kernel, Leaf, leaf, scalar};
use crate::ir::{Expr, Op, Sym};
use crate::lower::Backend;
use crate::lower::cform::c_ident;
use crate::types::{Elem, Type};

/// The driver's fixed C (`line_buffer.c`, a template).
const TEMPLATE: &str = include_str!("line_buffer.c");

/// The per-call choice between the lines and the kernel's own code (a template).
const CHOICE_TEMPLATE: &str = include_str!("line_buffer_choice.c");

/// The most stack a ring of lines may take, in bytes: a strip is as wide as fits (it
/// stays in a first-level data cache of 32 KiB and on any thread's stack).
const RING_BYTES: i64 = 32 * 1024;

/// Estimated cycles of a call of the producer or the consumer (arguments, prologue,
/// epilogue and the row's own setup), paid once per line and per output row of a strip.
/// It matters where a vector's work is small: on HVX (128 lanes), gaussian3x3's lines,
/// estimated 30% cheaper without the calls, took 45% more packets at 256 columns.
const CALL_COST: f64 = 15.0;

/// How much cheaper than the kernel's own code a line buffer must be estimated to be: the
/// estimate leaves out the line's store and its reloads through the cache.
const MARGIN: f64 = 0.95;

/// How far ahead of the direct code at its first width a line buffer must be for the
/// direct code's other widths to be left untried. The most a wider vector has been seen
/// to gain over the first width is about a fifth.
const FAR_AHEAD: f64 = 0.5;

/// A kernel split at a repeated sub-expression.
#[derive(Clone, Debug)]
pub struct LineBuffer {
    /// Computes one line: the repeated sub-expression at offset zero.
    pub producer: Kernel,
    /// Computes the output from the lines (inputs `first_line..`, one per line offset).
    pub consumer: Kernel,
    /// Index in the consumer's inputs of the first line.
    pub first_line: usize,
    /// Row offset of the first line an output row reads.
    pub y_lo: i64,
    /// Lines an output row reads (the ring's size).
    pub rows: i64,
    /// Column offset of the leftmost line element an output reads.
    pub x_lo: i64,
    /// Columns a line needs beyond the output's (rightmost minus leftmost offset).
    pub x_span: i64,
    /// How many places of the body read the sub-expression.
    pub uses: usize,
    /// The sub-expression as the producer computes it.
    pub line: Expr,
}

/// The constant offsets `(dx, dy)` of an access `in(x + dx, y + dy)`, when the kernel is
/// a two-dimensional stencil in that form.
fn offsets(k: &Kernel, a: &Access) -> Option<(i64, i64)> {
    let unit = |ix: &Affine, v: &str| ix.terms.len() == 1 && ix.coef(v) == 1;
    (k.inputs[a.input].dims == 2
        && a.idx.len() == 2
        && unit(&a.idx[0], &k.out_vars[0])
        && unit(&a.idx[1], &k.out_vars[1]))
    .then_some((a.idx[0].c, a.idx[1].c))
}

/// Whether the kernel is a two-dimensional stencil the driver can run: one output, every
/// read is `in(x + dx, y + dy)`, no reduction stays a loop, and the output variables are only
/// indices (the consumer runs one row at a time with its own origin).
fn eligible(k: &Kernel) -> bool {
    k.out_vars.len() == 2
        && k.more_outputs.is_empty()
        && k.reductions.is_empty()
        && k.accesses.iter().all(|a| offsets(k, a).is_some())
        && crate::ir::visit::free_vars(&k.body)
            .keys()
            .all(|v| !k.out_vars.iter().any(|o| o.as_str() == &**v))
}

/// One place the body reads the repeated sub-expression, and its offset.
struct Use {
    node: Expr,
    dx: i64,
    dy: i64,
}

/// `e` with its reads shifted so that its smallest offsets are zero, as a key shared by
/// every shifted copy of it (reads become variables `@l<input>_<dx>_<dy>`), and the shift.
fn normalized(k: &Kernel, e: &Expr) -> Option<(Expr, i64, i64, usize)> {
    let reads: Vec<(Sym, usize, (i64, i64))> = crate::ir::visit::free_vars(e)
        .into_keys()
        .filter_map(|name| match leaf(&name) {
            Leaf::Access(a) => Some((name, a, offsets(k, &k.accesses[a])?)),
            _ => None,
        })
        .collect();
    let mx = reads.iter().map(|r| r.2.0).min()?;
    let my = reads.iter().map(|r| r.2.1).min()?;
    let map: HashMap<Sym, Expr> = reads
        .iter()
        .map(|(name, a, (dx, dy))| {
            let input = k.accesses[*a].input;
            let ty = Type::scalar(k.inputs[input].elem);
            let v = format!("@l{input}_{}_{}", dx - mx, dy - my);
            (name.clone(), Expr::var(v.as_str(), ty))
        })
        .collect();
    let key = crate::ir::visit::substitute(e, &map).ok()?;
    Some((key, mx, my, reads.len()))
}

/// The line buffers worth trying for `k`: the sub-expression repeated at the most offsets
/// (weighted by its size) among those with at least two reads and two operations, read
/// at two or more offsets, with lines of its own type first, then of a narrower one its
/// values fit. `None` when the kernel has none or is not a stencil.
pub fn plan(k: &Kernel) -> Option<Vec<LineBuffer>> {
    if !eligible(k) {
        return None;
    }
    let mut groups: Vec<(Expr, usize, Vec<Use>)> = Vec::new();
    let mut index: HashMap<Expr, usize> = HashMap::new();
    for n in crate::ir::visit::post_order(&k.body) {
        if matches!(n.op(), Op::Var(_) | Op::Const(_)) {
            continue;
        }
        let Some((key, dx, dy, reads)) = normalized(k, &n) else {
            continue;
        };
        let size = crate::ir::visit::post_order(&n)
            .iter()
            .filter(|m| !matches!(m.op(), Op::Var(_) | Op::Const(_)))
            .count();
        if reads < 2 || size < 2 {
            continue;
        }
        let g = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, size, Vec::new()));
            groups.len() - 1
        });
        groups[g].2.push(Use { node: n, dx, dy });
    }
    let elem = |e: &Expr| e.ty().elem;
    let (line, _, uses) = groups
        .into_iter()
        .filter(|(key, _, uses)| uses.len() >= 2 && key.ty().is_scalar() && elem(key) != Elem::Bool)
        .filter(|(key, _, _)| !elem(key).is_internal())
        // The first of the best, in body order, so the choice is deterministic.
        .fold(None, |best: Option<(Expr, usize, Vec<Use>)>, g| {
            let score = |g: &(Expr, usize, Vec<Use>)| (g.2.len() - 1) * g.1;
            match best {
                Some(b) if score(&b) >= score(&g) => Some(b),
                _ => Some(g),
            }
        })?;
    // Stored as computed, and in the narrowest type its values fit (gaussian7x7's i32 row
    // sums are at most 16320: u16 lines are half the loads, but on AVX2 their widening
    // costs more than it saves); the cost model chooses.
    let wide = line.ty().elem;
    let narrow = narrowest_holding(crate::bounds::Intervals::new().interval(&line))
        .filter(|e| e.bits() < wide.bits());
    Some(
        std::iter::once(wide)
            .chain(narrow)
            .map(|stored| split(k, &line, &uses, stored))
            .collect(),
    )
}

/// The narrowest integer type holding every value of `range`.
fn narrowest_holding(range: crate::bounds::Interval) -> Option<Elem> {
    crate::types::USER_INT_ELEMS.into_iter().find(|e| {
        let (lo, hi) = crate::bounds::type_range(*e);
        lo <= range.0 && range.1 <= hi
    })
}

/// Splits `k` at the sub-expression `line` read at `uses`, with lines of type `stored`
/// (the line's own, or a narrower one holding all its values).
fn split(k: &Kernel, line: &Expr, uses: &[Use], stored: Elem) -> LineBuffer {
    let x_lo = uses.iter().map(|u| u.dx).min().expect("two uses");
    let x_hi = uses.iter().map(|u| u.dx).max().expect("two uses");
    let y_lo = uses.iter().map(|u| u.dy).min().expect("two uses");
    let y_hi = uses.iter().map(|u| u.dy).max().expect("two uses");
    let (x, y) = (&k.out_vars[0], &k.out_vars[1]);
    let at = |v: &str, c: i64| Affine::var(v).add_scaled(&Affine::constant(c), 1);
    let wide = line.ty();
    let line = if stored == wide.elem {
        line.clone()
    } else {
        crate::ir::mk_typed(Op::Cast, Type::scalar(stored), vec![line.clone()])
    };

    // The producer: `line` with its reads as accesses at their normalized offsets (its
    // parameters stay: the producer has the kernel's).
    let mut accesses: Vec<Access> = Vec::new();
    let mut map: HashMap<Sym, Expr> = HashMap::new();
    for (name, ty) in crate::ir::visit::free_vars(&line) {
        let Some(rest) = name.strip_prefix("@l") else {
            continue;
        };
        let parts: Vec<i64> = rest
            .split('_')
            .map(|p| p.parse().expect("normalized read names"))
            .collect();
        accesses.push(Access {
            input: parts[0] as usize,
            idx: vec![at(x, parts[1]), at(y, parts[2])],
        });
        let var = format!("@a{}", accesses.len() - 1);
        map.insert(name, Expr::var(var.as_str(), ty));
    }
    let producer = Kernel {
        name: format!("{}_line", k.name),
        out_name: format!("{}_line", k.out_name),
        out_elem: line.ty().elem,
        body: crate::ir::visit::substitute(&line, &map).expect("renaming keeps types"),
        accesses,
        ..k.clone()
    };

    // The consumer: each use a read of its line at its column offset.
    let first_line = k.inputs.len();
    let rows = y_hi - y_lo + 1;
    let mut inputs = k.inputs.clone();
    for j in 0..rows {
        let mut name = format!("hv_line{j}");
        while k.inputs.iter().any(|i| i.name == name) {
            name.push('_');
        }
        inputs.push(Input {
            name,
            elem: line.ty().elem,
            dims: 1,
        });
    }
    let mut accesses = k.accesses.clone();
    let mut replace: HashMap<usize, Expr> = HashMap::new();
    for u in uses {
        accesses.push(Access {
            input: first_line + (u.dy - y_lo) as usize,
            idx: vec![at(x, u.dx - x_lo)],
        });
        let var = Expr::var(format!("@a{}", accesses.len() - 1).as_str(), line.ty());
        let read = if stored == wide.elem {
            var
        } else {
            crate::ir::mk_typed(Op::Cast, wide, vec![var])
        };
        replace.insert(u.node.id(), read);
    }
    let body = crate::ir::visit::replace_nodes(&k.body, &replace)
        .expect("replacing a node by a variable of its type keeps types");
    let consumer = Kernel {
        inputs,
        accesses,
        body,
        ..k.clone()
    };
    LineBuffer {
        producer,
        consumer,
        first_line,
        y_lo,
        rows,
        x_lo,
        x_span: x_hi - x_lo,
        uses: uses.len(),
        line,
    }
}

impl LineBuffer {
    /// The strip width: as many output columns as keep the ring within `RING_BYTES`,
    /// a multiple of 64, at least 64.
    pub fn strip(&self) -> i64 {
        let bytes = i64::from(self.producer.out_elem.bits() / 8).max(1);
        let per_row = RING_BYTES / self.rows / bytes - self.x_span;
        (per_row / 64 * 64).max(64)
    }
}

/// A line buffer with its two kernels compiled.
pub struct Staged {
    /// The split.
    pub lb: LineBuffer,
    /// The producer, compiled.
    pub producer: Compiled,
    /// The consumer, compiled.
    pub consumer: Compiled,
}

impl Staged {
    /// Estimated cycles per line element.
    pub fn line_cost(&self, target: &dyn crate::isa::target::Target) -> f64 {
        self.producer.cost_per_lane(target)
    }

    /// Estimated cycles per output element of the consumer.
    pub fn rows_cost(&self, target: &dyn crate::isa::target::Target) -> f64 {
        self.consumer.cost_per_lane(target)
    }

    /// Estimated cycles per output element in the steady state (a line element per
    /// output, the consumer's work; no calls, no first lines).
    pub fn per_element(&self, target: &dyn crate::isa::target::Target) -> f64 {
        self.line_cost(target) + self.rows_cost(target)
    }
}

/// How a kernel is computed: directly, or through a line buffer.
pub enum Plan {
    /// The body as one vector loop.
    Direct(Compiled),
    /// A producer and a consumer around a ring of lines, and the body as one vector loop
    /// for calls where the lines would not pay (narrow or short images: see
    /// [`driver`]).
    Lines(Box<Staged>, Compiled),
}

impl Plan {
    /// Lanes per output vector.
    pub fn lanes(&self) -> u32 {
        match self {
            Plan::Direct(c) => c.lanes,
            Plan::Lines(s, _) => s.consumer.lanes,
        }
    }
}

/// `k` compiled directly, and through its line buffer where it has one whose steady state
/// is estimated cheaper per output element.
pub fn choose(k: &Kernel, backend: &Backend, width: Option<u32>) -> Plan {
    use rayon::prelude::*;
    let Some(lbs) = plan(k) else {
        return Plan::Direct(codegen::compile_best_alone(k, backend, width));
    };
    let (narrowed, staged) = rayon::join(
        || codegen::compile_narrowed(k, backend, width),
        || {
            lbs.into_par_iter()
                .map(|lb| {
                    let (producer, consumer) = rayon::join(
                        || codegen::compile_best(&lb.producer, backend, None),
                        || codegen::compile_best(&lb.consumer, backend, width),
                    );
                    Staged {
                        lb,
                        producer,
                        consumer,
                    }
                })
                .collect::<Vec<Staged>>()
        },
    );
    let target = backend.target.as_ref();
    // The first cheapest, so the choice does not depend on scheduling.
    let staged = staged
        .into_iter()
        .reduce(|best, s| {
            if s.per_element(target) < best.per_element(target) {
                s
            } else {
                best
            }
        })
        .expect("a plan has a line buffer");
    // Far behind the lines, the direct code serves only images too small for them: its
    // narrowed body at its first width is enough there (the other bodies and widths are
    // most of the compile time of a long stencil: a 7x7 one inlined as written selects
    // 49-tap sums at four registers a value). Not far behind, the direct code at its
    // first width competes; its other widths only where the lines are not far ahead.
    let far_ahead = |direct: &Compiled| {
        staged.per_element(target) < FAR_AHEAD * MARGIN * direct.cost_per_lane(target)
    };
    let direct = if far_ahead(&narrowed) {
        narrowed
    } else {
        let first = codegen::compile_first_width(k, backend, width);
        if far_ahead(&first) {
            first
        } else {
            codegen::compile_best(k, backend, width)
        }
    };
    if staged.per_element(target) < MARGIN * direct.cost_per_lane(target) {
        Plan::Lines(Box::new(staged), direct)
    } else {
        Plan::Direct(direct)
    }
}

/// The call of `f` (a function with `k`'s signature) with the given output pointer, row
/// origin (`y`, a C expression) and first column (`x0`) for every input, `lines` passed
/// for the inputs from `first_line` on, and extents `e0` by 1.
fn call(
    k: &Kernel,
    f: &str,
    out: &str,
    y: &str,
    x0: &str,
    lines: Option<(usize, &dyn Fn(usize) -> String)>,
    e0: &str,
) -> String {
    let mut args = vec![out.to_string(), "0".to_string()];
    for (i, inp) in k.inputs.iter().enumerate() {
        match lines {
            Some((first, line)) if i >= first => args.push(line(i - first)),
            _ => {
                let s1 = scalar::stride(&inp.name, 1);
                args.push(format!(
                    "{} + (ptrdiff_t)({y}) * {s1} + ({x0})",
                    scalar::base_ptr(&inp.name)
                ));
                args.push(s1);
            }
        }
    }
    args.extend(k.params.iter().map(|p| c_ident("p_", &p.name)));
    args.push(e0.to_string());
    args.push("1".to_string());
    format!("{f}({})", args.join(", "))
}

/// The coefficients `[a, b, c, d]` of the per-call choice: per output element of a strip
/// `w` wide and `h` tall the lines add `a / w + b / h + c / (w h)` estimated cycles to
/// their steady state (a line's extra columns and the two calls per row; the lines a strip
/// computes before its first output row), which saves `d` on the kernel's own code (with
/// `MARGIN`). The lines are used where `a h + b w + c < d w h`.
pub fn choice(s: &Staged, direct_cost: f64, target: &dyn crate::isa::target::Target) -> [f64; 4] {
    let (line, span, rows) = (s.line_cost(target), s.lb.x_span as f64, s.lb.rows as f64);
    [
        line * span + 2.0 * CALL_COST,
        line * (rows - 1.0),
        (rows - 1.0) * (line * span + CALL_COST),
        MARGIN * direct_cost - s.per_element(target),
    ]
}

/// The line-buffered form of `k` (`fname_lines`, which calls `producer` and `consumer`,
/// functions with the producer's and the consumer's signatures, around the ring of lines)
/// and `k`'s function `fname`, which calls it, or `direct` (with `k`'s signature) where the
/// lines would not pay ([`choice`]). The ring's big stack frame is set up only where
/// it is used.
pub fn driver(
    k: &Kernel,
    s: &Staged,
    direct_cost: f64,
    target: &dyn crate::isa::target::Target,
    [producer, consumer, direct]: [&str; 3],
    fname: &str,
) -> String {
    let lines = format!("{fname}_lines");
    let lb = &s.lb;
    let [a, b, c, d] = choice(s, direct_cost, target);
    let float = |v: f64| format!("{v:.6e}f");
    // Below `x / d` an extent cannot pay for the term `x / extent` alone.
    let lower =
        |x: f64, d: f64| format!("{}", (x / d).floor().clamp(0.0, f64::from(i32::MAX)) as i64);
    let defs = [
        ("HV_LB_T", lb.producer.out_elem.c_name().to_string()),
        ("HV_LB_ROWS", lb.rows.to_string()),
        ("HV_LB_YLO", format!("({})", lb.y_lo)),
        ("HV_LB_XLO", format!("({})", lb.x_lo)),
        ("HV_LB_XSPAN", lb.x_span.to_string()),
        ("HV_LB_STRIP", lb.strip().to_string()),
        ("HV_LB_A", float(a)),
        ("HV_LB_B", float(b)),
        ("HV_LB_C", float(c)),
        ("HV_LB_D", float(d)),
        ("HV_LB_MIN_W", lower(a, d)),
        ("HV_LB_MIN_H", lower(b, d)),
        (
            "HV_LB_LINES()",
            format!("{lines}({})", scalar::call_args(k)),
        ),
        (
            "HV_LB_DIRECT()",
            format!("{direct}({})", scalar::call_args(k)),
        ),
        (
            "HV_LB_PRODUCE(L_, YY_, XS_, N_)",
            call(&lb.producer, producer, "(L_)", "YY_", "XS_", None, "(N_)"),
        ),
        (
            "HV_LB_CONSUME(Y_, XS_, N_)",
            call(
                &lb.consumer,
                consumer,
                "out + (ptrdiff_t)(Y_) * out_s1 + (XS_)",
                "Y_",
                "XS_",
                Some((lb.first_line, &|j| format!("HV_LB_LINE(Y_, {j})"))),
                "(N_)",
            ),
        ),
    ];
    let mut out = String::new();
    for (name, text) in &defs {
        let _ = writeln!(out, "#define {name} {text}");
    }
    let _ = writeln!(
        out,
        "static __attribute__((noinline)) {} {{",
        scalar::signature(k, &lines)
    );
    out.push_str(TEMPLATE);
    out.push_str("}\n");
    let _ = writeln!(out, "{} {{", scalar::signature(k, fname));
    out.push_str(CHOICE_TEMPLATE);
    out.push_str("}\n");
    for (name, _) in &defs {
        let bare = name.split('(').next().expect("a name");
        let _ = writeln!(out, "#undef {bare}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(text: &str) -> Kernel {
        super::super::parse(&crate::diag::Source::new("t.hk", text))
            .unwrap_or_else(|d| panic!("{}", d.render()))
    }

    const GAUSSIAN5: &str = "kernel g\ninput in: u8[2]\n\
        def row(x, y) = u16(in(x - 2, y)) + 4 * u16(in(x - 1, y)) + 6 * u16(in(x, y)) + 4 * u16(in(x + 1, y)) + u16(in(x + 2, y))\n\
        output out(x, y): u8 = u8((row(x, y - 2) + 4 * row(x, y - 1) + 6 * row(x, y) + 4 * row(x, y + 1) + row(x, y + 2)) >> 8)\n";

    #[test]
    fn a_separable_stencil_splits_at_its_row_sums() {
        let lbs = plan(&kernel(GAUSSIAN5)).expect("row sums repeat at five rows");
        // u16 row sums up to 4080 fit no narrower type.
        assert_eq!(lbs.len(), 1);
        let lb = &lbs[0];
        assert_eq!((lb.rows, lb.y_lo, lb.uses), (5, -2, 5));
        assert_eq!((lb.x_lo, lb.x_span), (-2, 0));
        assert_eq!(lb.producer.out_elem, Elem::U16);
        // The producer reads one row at five columns from offset zero; the consumer reads
        // each of the five lines once, at column zero, and the input no more.
        let reads: Vec<Vec<i64>> = lb
            .producer
            .accesses
            .iter()
            .map(|a| a.idx.iter().map(|i| i.c).collect())
            .collect();
        assert_eq!(reads, [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]);
        let used = crate::ir::visit::free_vars(&lb.consumer.body);
        let inputs: Vec<usize> = used
            .keys()
            .filter_map(|v| match leaf(v) {
                Leaf::Access(a) => Some(lb.consumer.accesses[a].input),
                _ => None,
            })
            .collect();
        assert_eq!(inputs, [1, 2, 3, 4, 5]);
        assert_eq!(lb.first_line, 1);
        assert!(lb.strip() >= 64 && lb.strip() % 64 == 0);
        assert!(lb.strip() * 5 * 2 <= RING_BYTES);
    }

    #[test]
    fn wide_lines_are_also_tried_in_the_narrowest_type_holding_them() {
        let k = kernel(
            "kernel w\ninput in: u8[2]\n\
             def row(x, y) = i32(in(x, y)) + 3 * i32(in(x + 1, y))\n\
             output out(x, y): i32 = row(x, y) - row(x, y + 1)\n",
        );
        let lbs = plan(&k).expect("the row repeats at two rows");
        let stored: Vec<Elem> = lbs.iter().map(|l| l.producer.out_elem).collect();
        assert_eq!(stored, [Elem::I32, Elem::U16], "0..1020 fits u16");
        // The consumer widens the narrow line back where it reads it.
        let casts = crate::ir::visit::post_order(&lbs[1].consumer.body)
            .iter()
            .filter(|n| matches!(n.op(), Op::Cast) && n.arg(0).ty().elem == Elem::U16)
            .count();
        assert_eq!(casts, 2);
    }

    #[test]
    fn kernels_without_a_repeated_stencil_part_have_no_line_buffer() {
        for text in [
            // Nothing repeats at another offset.
            "kernel a\ninput a: u8[2]\ninput b: u8[2]\noutput out(x, y): u8 = a(x, y) + b(x, y)\n",
            // The output row is used as a value: the consumer runs with its own origin.
            "kernel b\ninput in: u8[2]\noutput out(x, y): u16 = u16(in(x, y) + in(x + 1, y)) + u16(in(x, y + 1) + in(x + 1, y + 1)) + u16(y)\n",
            // A one-dimensional kernel.
            "kernel c\ninput in: u8[1]\noutput out(x): u16 = u16(in(x) + in(x + 1)) + u16(in(x + 1) + in(x + 2))\n",
        ] {
            let k = kernel(text);
            assert!(plan(&k).is_none(), "{}", k.name);
        }
    }

    #[test]
    fn a_part_repeated_along_the_row_needs_one_line_and_extra_columns() {
        let k = kernel(
            "kernel h\ninput in: u8[2]\n\
             def v(x, y) = u16(in(x, y - 1)) + 2 * u16(in(x, y)) + u16(in(x, y + 1))\n\
             output out(x, y): u16 = v(x - 1, y) + v(x + 3, y)\n",
        );
        let lbs = plan(&k).expect("the column sums repeat at two columns");
        // Column sums in 0..1020 fit no type narrower than their u16.
        let stored: Vec<Elem> = lbs.iter().map(|l| l.producer.out_elem).collect();
        assert_eq!(stored, [Elem::U16]);
        let lb = &lbs[0];
        assert_eq!((lb.rows, lb.y_lo, lb.x_lo, lb.x_span), (1, -1, -1, 4));
        let cols: Vec<i64> = lb.consumer.accesses[k.accesses.len()..]
            .iter()
            .map(|a| a.idx[0].c)
            .collect();
        assert_eq!(cols, [0, 4]);
    }
}
