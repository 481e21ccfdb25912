//! Vector C: a vector node of a chunk as whole-vector operators clang understands, an
//! intrinsic call, or (for the operations `cform::lane_loop_reason` names) a loop over lanes.

use std::collections::HashMap;
use std::fmt::Write;

use super::super::cform::{
    c_ident, c_operator, folded_definition, lane_loop_reason, positive_divisor, saturating_builtin,
};
use super::{FnWriter, lane_source, sgn, unsigned};
use crate::ir::{Expr, Op};
use crate::types::Elem;

impl FnWriter<'_> {
    /// Writes the vector node `e` as the statements defining `v` (of C type `ct`).
    pub(super) fn vector_node(&mut self, e: &Expr, v: String, ct: &str) -> String {
        let t = e.ty();
        let n = t.lanes;
        match e.op() {
            Op::Load(..) => self.load(e, &v, ct),
            Op::Ramp => {
                let (b, s) = (self.name(e.arg(0)), self.name(e.arg(1)));
                self.line(&format!(
                    "{ct} {v}; for (int i = 0; i < {n}; i++) {v}[i] = (int32_t)((uint32_t){b} + (uint32_t){s} * (uint32_t)i);"
                ));
            }
            Op::Broadcast => self.broadcast(e, &v, ct),
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
            Op::Shl | Op::Shr if crate::lower::lanes::shift_amount(e).is_some() => {
                let k = crate::lower::lanes::shift_amount(e).expect("checked");
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
                // The mask as a comparison of the widened flags with zero: clang sign-extends
                // the flags' own mask once. Negated (`-convert(c)`), clang zero-extended the
                // flags and negated them for the mask, and rebuilt its complement from the
                // bytes by another comparison and sign extension (fuzz_8_129 of seed 8 on AVX2:
                // 0.78x clang -O3; 0.93x so).
                self.line(&format!(
                    "{ut} {v}m = ({ut})(__builtin_convertvector({c}, {ut}) != 0); {ct} {v} = ({ct})((({ut}){a} & {v}m) | (({ut}){b} & ~{v}m));"
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
                return self.reduce(e, &v, ct);
            }
            Op::Instr(i) => {
                let call = self.instr_call(i, e);
                if t.elem == Elem::Bool {
                    let m = self.target.c_type(t).unwrap_or_else(|| "uint64_t".into());
                    let flags = self.mask_as_flags(&format!("{v}k"), n, ct);
                    self.line(&format!("{m} {v}k = {call}; {ct} {v} = {flags};"));
                    self.masks.insert(v.clone(), m);
                } else {
                    let r = self.target.c_intrinsic_result(t, &call);
                    self.line(&format!("{ct} {v} = ({ct}){r};"));
                }
            }
            op if op.is_fpir() && lane_loop_reason(e).is_none() => {
                return self.fpir_vector(e, &v, ct);
            }
            Op::Div | Op::Mod if lane_loop_reason(e).is_none() => {
                self.div_by_constant(e, &v, ct);
            }
            Op::Shl | Op::Shr if lane_loop_reason(e).is_none() => {
                self.shift_by_vector(e, &v, ct);
            }
            _ => self.lane_loop(e, &v, ct),
        }
        v
    }

    /// A vector load: dense as one copy (or taken from its neighbours' registers), gathered
    /// lane by lane otherwise.
    fn load(&mut self, e: &Expr, v: &str, ct: &str) {
        let t = e.ty();
        let n = t.lanes;
        let Op::Load(buf, _) = e.op() else {
            unreachable!("a load")
        };
        let b = c_ident("b_", buf);
        let idx = e.arg(0);
        if crate::lower::lanes::is_dense(e) {
            let base = self.name(idx.arg(0));
            let bytes = t.total_bits().div_ceil(8);
            let src = format!("{b} + {base}");
            let load = self
                .target
                .c_dense_load(v, &src, bytes)
                .unwrap_or_else(|| format!("__builtin_memcpy(&{v}, {src}, {n} * sizeof({b}[0]));"));
            match self.from_neighbours.get(&e.id()).cloned() {
                Some(neighbour) => {
                    let text = self.load_from_neighbours(ct, v, &load, &neighbour, n);
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

    /// A splat of a scalar (or a repeat of a shorter vector).
    fn broadcast(&mut self, e: &Expr, v: &str, ct: &str) {
        let t = e.ty();
        let n = t.lanes;
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

    /// An operation with no whole-vector form in C (only those `lane_loop_reason` names),
    /// as a loop over lanes in natural C (clang may still vectorize the loop).
    fn lane_loop(&mut self, e: &Expr, v: &str, ct: &str) {
        let t = e.ty();
        let n = t.lanes;
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
            .map(|(k, a)| splat(a).unwrap_or_else(|| Expr::var(format!("#{k}"), a.ty().element())))
            .collect();
        let scalar = e
            .with_args(scalar_args.clone())
            .or_else(|_| Expr::build(e.op().clone(), Some(t.element()), scalar_args.clone()))
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
        let r = crate::lower::natural::natural_c(
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
    /// operators, corrected to Halide's flooring ones for negative dividends. A value wider
    /// than a register is divided a register at a time: clang multiplies by the reciprocal
    /// only at a legal vector type, and divided lane by lane a `u16x16` on Neon (fuzz_8_137,
    /// `(u16(a) * 8) / 9`, ran at 0.39x clang -O3 in executed instructions).
    fn div_by_constant(&mut self, e: &Expr, v: &str, ct: &str) {
        let t = e.ty();
        let a = self.name(e.arg(0));
        let Some(part) = self.register_parts(t, self.target.c_vector_registers()) else {
            self.div_by_constant_in(e, &a, v, ct);
            return;
        };
        let parts = t.lanes / part.lanes;
        let pct = self.ty(part);
        let names: Vec<String> = (0..parts)
            .map(|i| {
                let lanes = (i * part.lanes..(i + 1) * part.lanes)
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let (pa, pv) = (format!("{v}a{i}"), format!("{v}p{i}"));
                self.line(&format!(
                    "{pct} {pa} = __builtin_shufflevector({a}, {a}, {lanes});"
                ));
                self.div_by_constant_in(e, &pa, &pv, &pct);
                pv
            })
            .collect();
        self.concat_pairwise(names, part, v);
    }

    /// [`Self::div_by_constant`] of the vector named `a`, of `e`'s operand type, into `v`.
    fn div_by_constant_in(&mut self, e: &Expr, a: &str, v: &str, ct: &str) {
        let k = positive_divisor(e).expect("checked by lane_loop_reason");
        let t = e.ty();
        let et = t.elem.c_name();
        let kk = format!("(({ct})(({et}){k}))");
        let div = matches!(e.op(), Op::Div);
        // A dividend that is never negative truncates to the floor: no correction.
        let never_negative = crate::bounds::Intervals::new().interval(e.arg(0)).0 >= 0;
        if !t.elem.is_signed() || never_negative {
            let op = if div { "/" } else { "%" };
            self.line(&format!("{ct} {v} = {a} {op} {kk};"));
        } else if div && self.target.floors_by_remainder() {
            // The truncated quotient is one too large where the remainder is negative.
            self.line(&format!(
                "{ct} {v}r = {a} % {kk}; {ct} {v} = ({a} / {kk}) + ({ct})({v}r < 0);"
            ));
        } else if div {
            // floor(a / k) is (a + 1) / k - 1 for negative a, truncated; `n` is -1 there.
            // (With the remainder's sign instead, clang-19's Hexagon backend could not
            // select a quarter register of bytes, fuzz_8_192 of seed 8.)
            self.line(&format!(
                "{ct} {v}n = ({ct})({a} < 0); {ct} {v} = ({a} - {v}n) / {kk} + {v}n;"
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

    pub(super) fn reduce(&mut self, e: &Expr, v: &str, ct: &str) -> String {
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
}
