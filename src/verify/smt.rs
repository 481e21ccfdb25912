//! SMT-LIB2 encoding of harrow IR in the theory of bit-vectors.
//!
//! A value of type `T x N` is `N` bit-vector terms of `T.bits` bits (a `bool` lane is one
//! bit). FPIR operations are encoded through their definitions (`crate::fpir`), which were
//! themselves checked against the direct evaluators, so one encoding of the primitive
//! operators covers everything. Each primitive follows `src/interp/lane.rs` exactly: Halide
//! division and modulus, shifts whose negative amounts reverse, over-wide shifts.

use std::collections::HashMap;

use easy_smt::{Context, SExpr};

use crate::ir::{Expr, Op};
use crate::types::Elem;

/// Supplies the terms of leaf variables: `(name, lane) -> term`.
pub type Leaves<'a> = dyn FnMut(&Context, &str, Elem, usize) -> Result<SExpr, String> + 'a;

/// Encodes expressions lane by lane, memoised per node.
pub struct Encoder<'c, 'l> {
    ctx: &'c Context,
    leaves: &'l mut Leaves<'l>,
    memo: HashMap<usize, (Expr, Vec<SExpr>)>,
    /// Terms known to be extensions of narrower ones: term to (narrow term, its width,
    /// extended by sign).
    narrow: HashMap<SExpr, (SExpr, u32, bool)>,
}

/// The bit-vector sort of `w` bits.
pub fn sort(ctx: &Context, w: u32) -> SExpr {
    ctx.bit_vec_sort(ctx.numeral(w))
}

/// A bit-vector constant of `w` bits from its (canonical, zero-extended) bit pattern.
pub fn konst(ctx: &Context, w: u32, bits: u128) -> SExpr {
    ctx.list(vec![
        ctx.atom("_"),
        ctx.atom(format!("bv{bits}")),
        ctx.numeral(w),
    ])
}

/// A bit-vector constant of `w` bits holding the two's complement of `v`.
pub fn konst_i(ctx: &Context, w: u32, v: i128) -> SExpr {
    if w <= 128 {
        let mask = if w == 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        };
        return konst(ctx, w, (v as u128) & mask);
    }
    // Wider than 128 bits: sign-extend an explicit 128-bit constant.
    let base = konst(ctx, 128, v as u128);
    app_idx(ctx, "sign_extend", &[w - 128], vec![base])
}

/// `(name args...)`
pub fn app(ctx: &Context, name: &str, args: Vec<SExpr>) -> SExpr {
    let mut v = vec![ctx.atom(name)];
    v.extend(args);
    ctx.list(v)
}

/// `((_ name i j) args...)`
pub fn app_idx(ctx: &Context, name: &str, idx: &[u32], args: Vec<SExpr>) -> SExpr {
    let mut head = vec![ctx.atom("_"), ctx.atom(name)];
    head.extend(idx.iter().map(|i| ctx.numeral(*i)));
    let mut v = vec![ctx.list(head)];
    v.extend(args);
    ctx.list(v)
}

/// Bits `hi..=lo` of `x`.
pub fn extract(ctx: &Context, hi: u32, lo: u32, x: SExpr) -> SExpr {
    app_idx(ctx, "extract", &[hi, lo], vec![x])
}

/// `x` widened from `from` to `to` bits, by sign when `signed`.
pub fn extend(ctx: &Context, x: SExpr, from: u32, to: u32, signed: bool) -> SExpr {
    if to == from {
        return x;
    }
    if to < from {
        return extract(ctx, to - 1, 0, x);
    }
    app_idx(
        ctx,
        if signed { "sign_extend" } else { "zero_extend" },
        &[to - from],
        vec![x],
    )
}

fn bit(ctx: &Context, b: bool) -> SExpr {
    konst(ctx, 1, b as u128)
}

fn ite(ctx: &Context, c: SExpr, a: SExpr, b: SExpr) -> SExpr {
    ctx.ite(c, a, b)
}

impl<'c, 'l> Encoder<'c, 'l> {
    /// The narrowest known form of a term, for leaves that are extensions.
    pub fn extension_of(&self, t: SExpr) -> Option<(SExpr, u32, bool)> {
        self.narrow.get(&t).copied()
    }

    /// An encoder whose leaves come from `leaves`.
    pub fn new(ctx: &'c Context, leaves: &'l mut Leaves<'l>) -> Self {
        Encoder {
            ctx,
            leaves,
            memo: HashMap::new(),
            narrow: HashMap::new(),
        }
    }

    /// Records that `term` (of `w` bits) is `inner` (of `iw` bits) extended by sign or zero.
    pub fn note_extension(&mut self, term: SExpr, inner: SExpr, iw: u32, signed: bool) {
        if iw < 128 {
            self.narrow.insert(term, self.narrowest(inner, iw, signed));
        }
    }

    /// The narrowest known form of a `w`-bit term.
    fn narrowest(&self, t: SExpr, w: u32, signed: bool) -> (SExpr, u32, bool) {
        match self.narrow.get(&t) {
            // An extension of an extension is one extension when the inner one did not set
            // the top bit differently (both by sign, or the inner by zero).
            Some(&(i, iw, s)) if s == signed || !s => (i, iw, s),
            _ => (t, w, signed),
        }
    }

    /// The recorded narrow form of a term, or the term itself at full width.
    fn form(&self, t: SExpr, w: u32) -> (SExpr, u32, bool) {
        self.narrow.get(&t).copied().unwrap_or((t, w, false))
    }

    /// A product in its exact width: `x * y` where both are extensions of narrow values
    /// whose widths sum to at most `w` is the extension of their exact product, so two
    /// spellings of the same product meet in one term.
    fn product(&mut self, x: SExpr, y: SExpr, w: u32) -> SExpr {
        let ctx = self.ctx;
        let (a, s, sa) = self.form(x, w);
        let (b, t, sb) = self.form(y, w);
        let p = s + t;
        if p >= w {
            return app(ctx, "bvmul", vec![x, y]);
        }
        let m = app(
            ctx,
            "bvmul",
            vec![extend(ctx, a, s, p, sa), extend(ctx, b, t, p, sb)],
        );
        let r = extend(ctx, m, p, w, sa || sb);
        self.note_extension(r, m, p, sa || sb);
        r
    }

    /// The lanes of `e`. FPIR operations and lets must already be expanded
    /// ([`prepare`]).
    pub fn lanes(&mut self, e: &Expr) -> Result<Vec<SExpr>, String> {
        if let Some((_, v)) = self.memo.get(&e.id()) {
            return Ok(v.clone());
        }
        let args = e
            .args()
            .iter()
            .map(|a| self.lanes(a))
            .collect::<Result<Vec<_>, _>>()?;
        let v = self.node(e, &args)?;
        self.memo.insert(e.id(), (e.clone(), v.clone()));
        Ok(v)
    }

    fn node(&mut self, e: &Expr, a: &[Vec<SExpr>]) -> Result<Vec<SExpr>, String> {
        let ctx = self.ctx;
        let ty = e.ty();
        let elem = ty.elem;
        let w = elem.bits();
        let n = ty.lanes as usize;
        let signed = elem.is_signed();
        let zip2 = |f: &dyn Fn(SExpr, SExpr) -> SExpr| -> Vec<SExpr> {
            a[0].iter().zip(&a[1]).map(|(x, y)| f(*x, *y)).collect()
        };
        let arg_elem = |i: usize| e.arg(i).ty().elem;
        Ok(match e.op() {
            Op::Const(bits) => {
                let k = konst(ctx, w, *bits);
                // Constants are extensions of their shortest form, so that products with them
                // normalise too.
                if elem != Elem::Bool {
                    let v = crate::interp::lane::to_i128(*bits, elem);
                    let neg = v < 0;
                    let need = if neg {
                        129 - (!v).leading_zeros()
                    } else {
                        (129 - v.leading_zeros()).max(2) - 1
                    };
                    let need = need.max(1);
                    if need < w {
                        let short = konst(ctx, need, (v as u128) & ((1u128 << need) - 1));
                        self.note_extension(k, short, need, neg);
                    }
                }
                vec![k]
            }
            Op::Var(name) => (0..n)
                .map(|l| (self.leaves)(ctx, name, elem, l))
                .collect::<Result<_, _>>()?,
            Op::Load(..) => return Err("loads cannot be encoded (rules have none)".into()),
            Op::Let(_) => return Err("expand lets before encoding".into()),
            Op::Ramp => (0..n)
                .map(|i| {
                    let step = app(ctx, "bvmul", vec![a[1][0], konst(ctx, w, i as u128)]);
                    app(ctx, "bvadd", vec![a[0][0], step])
                })
                .collect(),
            Op::Broadcast => (0..n).map(|i| a[0][i % a[0].len()]).collect(),
            Op::Cast => {
                let from = arg_elem(0);
                let mut out = Vec::new();
                for &x in &a[0] {
                    if elem == Elem::Bool {
                        out.push(ite(
                            ctx,
                            ctx.eq(x, konst(ctx, from.bits(), 0)),
                            bit(ctx, false),
                            bit(ctx, true),
                        ));
                    } else if w > from.bits() {
                        let r = extend(ctx, x, from.bits(), w, from.is_signed());
                        self.note_extension(r, x, from.bits(), from.is_signed());
                        out.push(r);
                    } else if w < from.bits() {
                        // Truncating an extension of something no wider gives it back.
                        let (inner, iw, s) = self.form(x, from.bits());
                        if iw <= w {
                            let r = extend(ctx, inner, iw, w, s);
                            if iw < w {
                                self.note_extension(r, inner, iw, s);
                            }
                            out.push(r);
                        } else {
                            out.push(extend(ctx, x, from.bits(), w, false));
                        }
                    } else {
                        out.push(x);
                    }
                }
                out
            }
            Op::Reinterpret => {
                let fw = arg_elem(0).bits();
                // Lane 0 holds the lowest bits, and `concat` puts its first operand high.
                let mut whole = a[0][0];
                for lane in &a[0][1..] {
                    whole = ctx.concat(*lane, whole);
                }
                let total = fw * a[0].len() as u32;
                let _ = total;
                (0..n as u32)
                    .map(|l| extract(ctx, (l + 1) * w - 1, l * w, whole))
                    .collect()
            }
            Op::Add => zip2(&|x, y| app(ctx, "bvadd", vec![x, y])),
            Op::Sub => zip2(&|x, y| app(ctx, "bvsub", vec![x, y])),
            Op::Mul => {
                let pairs: Vec<(SExpr, SExpr)> =
                    a[0].iter().copied().zip(a[1].iter().copied()).collect();
                pairs
                    .into_iter()
                    .map(|(x, y)| self.product(x, y, w))
                    .collect()
            }
            // Division and modulus by a positive power of two are a shift and a mask (floor
            // semantics, as Halide's); keeping them out of the divider keeps proofs fast.
            Op::Div | Op::Mod if pow2_divisor(e.arg(1)).is_some() => {
                let k = pow2_divisor(e.arg(1)).expect("checked");
                let is_div = matches!(e.op(), Op::Div);
                a[0].iter()
                    .map(|&x| {
                        if is_div {
                            app(
                                ctx,
                                if signed { "bvashr" } else { "bvlshr" },
                                vec![x, konst(ctx, w, k as u128)],
                            )
                        } else {
                            app(ctx, "bvand", vec![x, konst(ctx, w, (1u128 << k) - 1)])
                        }
                    })
                    .collect()
            }
            Op::Div => zip2(&|x, y| div(ctx, x, y, w, signed)),
            Op::Mod => zip2(&|x, y| rem(ctx, x, y, w, signed)),
            Op::Min => zip2(&|x, y| ite(ctx, lt(ctx, x, y, signed), x, y)),
            Op::Max => zip2(&|x, y| ite(ctx, lt(ctx, y, x, signed), x, y)),
            Op::And => zip2(&|x, y| app(ctx, "bvand", vec![x, y])),
            Op::Or => zip2(&|x, y| app(ctx, "bvor", vec![x, y])),
            Op::Xor => zip2(&|x, y| app(ctx, "bvxor", vec![x, y])),
            Op::Not => a[0].iter().map(|&x| app(ctx, "bvnot", vec![x])).collect(),
            Op::Shl | Op::Shr => {
                let amount_signed = arg_elem(1).is_signed();
                let left = matches!(e.op(), Op::Shl);
                zip2(&|x, y| shift(ctx, x, y, w, signed, amount_signed, left))
            }
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                let s = arg_elem(0).is_signed();
                let op = e.op().clone();
                zip2(&|x, y| {
                    let c = match op {
                        Op::Eq => ctx.eq(x, y),
                        Op::Ne => ctx.not(ctx.eq(x, y)),
                        Op::Lt => lt(ctx, x, y, s),
                        Op::Le => ctx.not(lt(ctx, y, x, s)),
                        Op::Gt => lt(ctx, y, x, s),
                        _ => ctx.not(lt(ctx, x, y, s)),
                    };
                    ite(ctx, c, bit(ctx, true), bit(ctx, false))
                })
            }
            Op::Select => (0..n)
                .map(|i| ite(ctx, ctx.eq(a[0][i], bit(ctx, true)), a[1][i], a[2][i]))
                .collect(),
            Op::Popcount => a[0]
                .iter()
                .map(|&x| {
                    let mut sum = konst(ctx, w, 0);
                    for b in 0..w {
                        sum = app(
                            ctx,
                            "bvadd",
                            vec![sum, extend(ctx, extract(ctx, b, b, x), 1, w, false)],
                        );
                    }
                    sum
                })
                .collect(),
            Op::CountLeadingZeros => a[0]
                .iter()
                .map(|&x| {
                    // The first set bit from the top decides; none set gives the width.
                    let mut r = konst(ctx, w, w as u128);
                    for b in 0..w {
                        let set = ctx.eq(extract(ctx, b, b, x), bit(ctx, true));
                        r = ite(ctx, set, konst(ctx, w, (w - 1 - b) as u128), r);
                    }
                    r
                })
                .collect(),
            Op::CountTrailingZeros => a[0]
                .iter()
                .map(|&x| {
                    let mut r = konst(ctx, w, w as u128);
                    for b in (0..w).rev() {
                        let set = ctx.eq(extract(ctx, b, b, x), bit(ctx, true));
                        r = ite(ctx, set, konst(ctx, w, b as u128), r);
                    }
                    r
                })
                .collect(),
            Op::Slice { start, stride } => (0..n)
                .map(|i| a[0][*start as usize + *stride as usize * i])
                .collect(),
            Op::Concat => a.iter().flat_map(|v| v.iter().copied()).collect(),
            Op::Interleave => {
                let k = a.len();
                (0..n).map(|i| a[i % k][i / k]).collect()
            }
            Op::Shuffle(idx) => {
                let all: Vec<SExpr> = a.iter().flat_map(|v| v.iter().copied()).collect();
                idx.iter().map(|&i| all[i as usize]).collect()
            }
            Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
                let k = a[0].len() / n;
                let op = e.op().clone();
                (0..n)
                    .map(|i| {
                        let g = &a[0][i * k..(i + 1) * k];
                        g[1..].iter().fold(g[0], |acc, &x| match op {
                            Op::ReduceAdd => app(ctx, "bvadd", vec![acc, x]),
                            Op::ReduceMin => ite(ctx, lt(ctx, x, acc, signed), x, acc),
                            _ => ite(ctx, lt(ctx, acc, x, signed), x, acc),
                        })
                    })
                    .collect()
            }
            op => return Err(format!("`{op}` must be expanded before encoding")),
        })
    }
}

/// `k` when `e` is a constant (or broadcast constant) equal to `2^k` with `k` below the
/// width (so positive in its type).
fn pow2_divisor(e: &Expr) -> Option<u32> {
    let v = e.as_const()?;
    let k = (v > 0 && v & (v - 1) == 0).then(|| v.trailing_zeros())?;
    (k < e.ty().elem.bits() - e.ty().elem.is_signed() as u32).then_some(k)
}

/// The value of a literal `(_ bvN w)`.
pub fn literal(ctx: &Context, e: SExpr) -> Option<u128> {
    let items = ctx.get_list(e)?;
    if items.len() != 3 || ctx.get_atom(items[0]) != Some("_") {
        return None;
    }
    ctx.get_atom(items[1])?.strip_prefix("bv")?.parse().ok()
}

/// `x < y` as a Bool.
pub fn lt(ctx: &Context, x: SExpr, y: SExpr, signed: bool) -> SExpr {
    app(ctx, if signed { "bvslt" } else { "bvult" }, vec![x, y])
}

/// Halide division: zero for a zero divisor; otherwise the quotient that leaves a
/// non-negative remainder (SMT-LIB's `bvsdiv` truncates, so adjust by one when the truncated
/// remainder is negative). `MIN / -1` wraps in both.
fn div(ctx: &Context, x: SExpr, y: SExpr, w: u32, signed: bool) -> SExpr {
    let zero = konst(ctx, w, 0);
    let one = konst(ctx, w, 1);
    let q = if signed {
        let q = app(ctx, "bvsdiv", vec![x, y]);
        let r = app(ctx, "bvsrem", vec![x, y]);
        let r_neg = lt(ctx, r, zero, true);
        let y_pos = lt(ctx, zero, y, true);
        let adjusted = ite(
            ctx,
            y_pos,
            app(ctx, "bvsub", vec![q, one]),
            app(ctx, "bvadd", vec![q, one]),
        );
        ite(ctx, r_neg, adjusted, q)
    } else {
        app(ctx, "bvudiv", vec![x, y])
    };
    ite(ctx, ctx.eq(y, zero), zero, q)
}

/// Halide modulus: in `0..|y|`, zero for a zero divisor.
fn rem(ctx: &Context, x: SExpr, y: SExpr, w: u32, signed: bool) -> SExpr {
    let zero = konst(ctx, w, 0);
    let r = if signed {
        let r = app(ctx, "bvsrem", vec![x, y]);
        let r_neg = lt(ctx, r, zero, true);
        let abs_y = ite(ctx, lt(ctx, y, zero, true), app(ctx, "bvneg", vec![y]), y);
        ite(ctx, r_neg, app(ctx, "bvadd", vec![r, abs_y]), r)
    } else {
        app(ctx, "bvurem", vec![x, y])
    };
    ite(ctx, ctx.eq(y, zero), zero, r)
}

/// Halide shifts. The amount has the value's width; a negative (signed) amount shifts the
/// other way by its magnitude, and `bvneg` of the most negative amount is itself, which as an
/// unsigned amount is at least the width, exactly like the exact semantics.
fn shift(
    ctx: &Context,
    x: SExpr,
    y: SExpr,
    w: u32,
    signed: bool,
    amount_signed: bool,
    left: bool,
) -> SExpr {
    let l = |amt: SExpr| app(ctx, "bvshl", vec![x, amt]);
    let r = |amt: SExpr| app(ctx, if signed { "bvashr" } else { "bvlshr" }, vec![x, amt]);
    let (fwd, back): (&dyn Fn(SExpr) -> SExpr, &dyn Fn(SExpr) -> SExpr) =
        if left { (&l, &r) } else { (&r, &l) };
    if !amount_signed {
        return fwd(y);
    }
    // A literal amount has a known direction: no case split for the solver (or for the
    // product abstraction, which looks for plain shifted operands).
    if let Some(v) = literal(ctx, y) {
        return if w < 128 && v >> (w - 1) & 1 == 1 {
            back(konst(ctx, w, (1u128 << w) - v))
        } else {
            fwd(y)
        };
    }
    let neg = lt(ctx, y, konst(ctx, w, 0), true);
    ite(ctx, neg, back(app(ctx, "bvneg", vec![y])), fwd(y))
}

/// Expands FPIR operations (into their definitions) and lets, so [`Encoder`] only sees
/// primitive operators.
pub fn prepare(e: &Expr) -> Expr {
    crate::fpir::expand_all(&crate::isa::expand(&crate::ir::visit::inline_lets(e)))
}
