//! Scalar C: the canonical-bits expression of a one-lane value, and the statement a
//! scalar node of a chunk is written as.

use std::collections::HashMap;

use super::super::cform::c_ident;
use super::{FnWriter, lane_source, literal, sgn};
use crate::ir::{Expr, Op};
use crate::types::Elem;

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

impl FnWriter<'_> {
    /// Writes the scalar node `e` as the statement defining `v` (of C type `ct`), or returns
    /// the name it already has (a parameter).
    pub(super) fn scalar_node(&mut self, e: &Expr, v: String, ct: &str) -> String {
        let t = e.ty();
        let text = match e.op() {
            Op::Var(name) => return c_ident("p_", name),
            Op::Load(buf, _) => {
                format!("{}[{}]", c_ident("b_", buf), self.name(e.arg(0)))
            }
            Op::Instr(i) => self.instr_call(i, e),
            Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
                return self.reduce(e, &v, ct);
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
        v
    }
}
