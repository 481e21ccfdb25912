//! Deciding small queries by trying every input.
//!
//! A query over few input bits (one 16-bit lane of a rule with its constants pinned, say)
//! is decided faster and more surely by evaluating it on every assignment than by a SAT
//! solver, which needs seconds for a 16-bit division by a constant. Trying every assignment
//! is a proof when none satisfies the query, and an exact counterexample otherwise. Terms
//! are compiled once into a flat program (the query is a DAG) and run per assignment; only
//! the bit-vector operators the encoding emits are understood, anything else (or a value
//! wider than 128 bits) leaves the query to the solver.

use std::collections::HashMap;

use easy_smt::{Context, SExpr, SExprData};

/// At most this many input bits are tried exhaustively (about a million assignments).
pub const MAX_BITS: u32 = 20;

/// One step of a compiled query: an operation on earlier steps' values.
#[derive(Clone, Debug)]
enum Step {
    Input(usize),
    Lit(u128),
    Not(usize),
    And(Vec<usize>),
    Or(Vec<usize>),
    Implies(usize, usize),
    Eq(usize, usize),
    Distinct(usize, usize),
    Ite(usize, usize, usize),
    /// A bit-vector operation of `w`-bit operands.
    Bv(BvOp, u32, Vec<usize>),
    Extract(u32, u32, usize),
    /// Extension of a `from`-bit value by `by` bits.
    Extend {
        signed: bool,
        from: u32,
        by: u32,
        x: usize,
    },
    /// `hi` (of `lo_w + ...` bits) then `lo` (of `lo_w` bits).
    Concat(usize, usize, u32),
}

#[derive(Clone, Copy, Debug)]
enum BvOp {
    Not,
    Neg,
    And,
    Or,
    Xor,
    Add,
    Sub,
    Mul,
    Udiv,
    Urem,
    Sdiv,
    Srem,
    Smod,
    Shl,
    Lshr,
    Ashr,
    Ult,
    Ule,
    Ugt,
    Uge,
    Slt,
    Sle,
    Sgt,
    Sge,
}

/// A query compiled for repeated evaluation.
pub struct Program {
    steps: Vec<Step>,
    /// Width of each input, in the order of the declarations.
    inputs: Vec<u32>,
}

/// The bits of a `w`-bit value.
pub fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

fn sext(x: u128, w: u32) -> i128 {
    if w == 0 || w >= 128 {
        return x as i128;
    }
    let s = 128 - w;
    ((x << s) as i128) >> s
}

struct Compiler<'a> {
    ctx: &'a Context,
    inputs: HashMap<String, usize>,
    widths: Vec<u32>,
    steps: Vec<Step>,
    /// Step index and width (0 for a Boolean) of each compiled term.
    memo: HashMap<SExpr, (usize, u32)>,
}

impl Compiler<'_> {
    fn push(&mut self, s: Step, w: u32) -> (usize, u32) {
        self.steps.push(s);
        (self.steps.len() - 1, w)
    }

    fn term(&mut self, e: SExpr) -> Option<(usize, u32)> {
        if let Some(r) = self.memo.get(&e) {
            return Some(*r);
        }
        let r = self.compile(e)?;
        self.memo.insert(e, r);
        Some(r)
    }

    fn compile(&mut self, e: SExpr) -> Option<(usize, u32)> {
        let ctx = self.ctx;
        match ctx.get(e) {
            SExprData::Atom("true") => Some(self.push(Step::Lit(1), 0)),
            SExprData::Atom("false") => Some(self.push(Step::Lit(0), 0)),
            SExprData::Atom(a) => {
                let i = *self.inputs.get(a)?;
                let w = self.widths[i];
                Some(self.push(Step::Input(i), w))
            }
            SExprData::String(_) => None,
            SExprData::List(items) => {
                let items = items.to_vec();
                match ctx.get(items[0]) {
                    SExprData::Atom("_") => {
                        // `(_ bvN w)`
                        let digits = ctx.get_atom(items[1])?.strip_prefix("bv")?;
                        let w = ctx.get_u32(*items.get(2)?)?;
                        let v: u128 = digits.parse().ok()?;
                        (w <= 128).then(|| self.push(Step::Lit(v & mask(w)), w))
                    }
                    SExprData::Atom(op) => {
                        let op = op.to_string();
                        let args = items[1..]
                            .iter()
                            .map(|&a| self.term(a))
                            .collect::<Option<Vec<_>>>()?;
                        self.operator(&op, args)
                    }
                    SExprData::List(head) => {
                        let head = head.to_vec();
                        let name = ctx.get_atom(*head.get(1)?)?.to_string();
                        let idx: Vec<u32> =
                            head[2..].iter().filter_map(|n| ctx.get_u32(*n)).collect();
                        let (x, w) = self.term(*items.get(1)?)?;
                        match (name.as_str(), idx.as_slice()) {
                            ("extract", [hi, lo]) if hi >= lo && *hi < w => {
                                Some(self.push(Step::Extract(*hi, *lo, x), hi - lo + 1))
                            }
                            ("zero_extend" | "sign_extend", [k]) if w + k <= 128 => {
                                Some(self.push(
                                    Step::Extend {
                                        signed: name == "sign_extend",
                                        from: w,
                                        by: *k,
                                        x,
                                    },
                                    w + k,
                                ))
                            }
                            _ => None,
                        }
                    }
                    SExprData::String(_) => None,
                }
            }
        }
    }

    fn operator(&mut self, op: &str, args: Vec<(usize, u32)>) -> Option<(usize, u32)> {
        let ids: Vec<usize> = args.iter().map(|a| a.0).collect();
        let w = args.first().map_or(0, |a| a.1);
        let bv = |o: BvOp| Some((o, ids.clone()));
        let pred = matches!(
            op,
            "bvult" | "bvule" | "bvugt" | "bvuge" | "bvslt" | "bvsle" | "bvsgt" | "bvsge"
        );
        let found = match op {
            "not" if ids.len() == 1 => return Some(self.push(Step::Not(ids[0]), 0)),
            "and" => return Some(self.push(Step::And(ids), 0)),
            "or" => return Some(self.push(Step::Or(ids), 0)),
            "=>" if ids.len() == 2 => return Some(self.push(Step::Implies(ids[0], ids[1]), 0)),
            "=" if ids.len() == 2 => return Some(self.push(Step::Eq(ids[0], ids[1]), 0)),
            "distinct" if ids.len() == 2 => {
                return Some(self.push(Step::Distinct(ids[0], ids[1]), 0));
            }
            "ite" if ids.len() == 3 => {
                let w = args[1].1;
                return Some(self.push(Step::Ite(ids[0], ids[1], ids[2]), w));
            }
            "concat" if ids.len() == 2 => {
                let total = args[0].1 + args[1].1;
                return (total <= 128)
                    .then(|| self.push(Step::Concat(ids[0], ids[1], args[1].1), total));
            }
            "bvnot" => bv(BvOp::Not),
            "bvneg" => bv(BvOp::Neg),
            "bvand" => bv(BvOp::And),
            "bvor" => bv(BvOp::Or),
            "bvxor" => bv(BvOp::Xor),
            "bvadd" => bv(BvOp::Add),
            "bvsub" => bv(BvOp::Sub),
            "bvmul" => bv(BvOp::Mul),
            "bvudiv" => bv(BvOp::Udiv),
            "bvurem" => bv(BvOp::Urem),
            "bvsdiv" => bv(BvOp::Sdiv),
            "bvsrem" => bv(BvOp::Srem),
            "bvsmod" => bv(BvOp::Smod),
            "bvshl" => bv(BvOp::Shl),
            "bvlshr" => bv(BvOp::Lshr),
            "bvashr" => bv(BvOp::Ashr),
            "bvult" => bv(BvOp::Ult),
            "bvule" => bv(BvOp::Ule),
            "bvugt" => bv(BvOp::Ugt),
            "bvuge" => bv(BvOp::Uge),
            "bvslt" => bv(BvOp::Slt),
            "bvsle" => bv(BvOp::Sle),
            "bvsgt" => bv(BvOp::Sgt),
            "bvsge" => bv(BvOp::Sge),
            _ => None,
        };
        let (o, ids) = found?;
        let arity_ok = match o {
            BvOp::Not | BvOp::Neg => ids.len() == 1,
            BvOp::And | BvOp::Or | BvOp::Xor | BvOp::Add | BvOp::Mul => !ids.is_empty(),
            _ => ids.len() == 2,
        };
        if !arity_ok || w == 0 || w > 128 || args.iter().any(|a| a.1 != w) {
            return None;
        }
        Some(self.push(Step::Bv(o, w, ids), if pred { 0 } else { w }))
    }
}

/// Compiles `assertion` over the declared inputs `(name, width)`, or `None` when it uses
/// something not understood here or the inputs are too many bits to try.
pub fn compile(ctx: &Context, inputs: &[(String, u32)], assertion: SExpr) -> Option<Program> {
    let bits: u32 = inputs.iter().map(|i| i.1).sum();
    if bits > MAX_BITS {
        return None;
    }
    let mut c = Compiler {
        ctx,
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), i))
            .collect(),
        widths: inputs.iter().map(|i| i.1).collect(),
        steps: Vec::new(),
        memo: HashMap::new(),
    };
    let (_, w) = c.term(assertion)?;
    (w == 0).then_some(Program {
        steps: c.steps,
        inputs: c.widths,
    })
}

fn bv_op(o: BvOp, w: u32, a: &[u128]) -> u128 {
    let m = mask(w);
    let (x, y) = (a[0], a.get(1).copied().unwrap_or(0));
    let (sx, sy) = (sext(x, w), sext(y, w));
    let neg = |v: u128| v.wrapping_neg() & m;
    let b = |c: bool| c as u128;
    let udiv = |x: u128, y: u128| x.checked_div(y).unwrap_or(m);
    let urem = |x: u128, y: u128| x.checked_rem(y).unwrap_or(x);
    let msb = |v: u128| w > 0 && (v >> (w - 1)) & 1 == 1;
    match o {
        BvOp::Not => !x & m,
        BvOp::Neg => neg(x),
        BvOp::And => a.iter().fold(m, |s, v| s & v),
        BvOp::Or => a.iter().fold(0, |s, v| s | v),
        BvOp::Xor => a.iter().fold(0, |s, v| s ^ v),
        BvOp::Add => a.iter().fold(0u128, |s, v| s.wrapping_add(*v)) & m,
        BvOp::Sub => x.wrapping_sub(y) & m,
        BvOp::Mul => a.iter().fold(1u128, |s, v| s.wrapping_mul(*v)) & m,
        BvOp::Udiv => udiv(x, y),
        BvOp::Urem => urem(x, y),
        // SMT-LIB defines the signed forms through the unsigned ones on magnitudes.
        BvOp::Sdiv => {
            let (ax, ay) = (
                if msb(x) { neg(x) } else { x },
                if msb(y) { neg(y) } else { y },
            );
            let q = udiv(ax, ay);
            if msb(x) != msb(y) { neg(q) } else { q }
        }
        BvOp::Srem => {
            let (ax, ay) = (
                if msb(x) { neg(x) } else { x },
                if msb(y) { neg(y) } else { y },
            );
            let r = urem(ax, ay);
            if msb(x) { neg(r) } else { r }
        }
        BvOp::Smod => {
            let (ax, ay) = (
                if msb(x) { neg(x) } else { x },
                if msb(y) { neg(y) } else { y },
            );
            let u = urem(ax, ay);
            if u == 0 {
                u
            } else {
                match (msb(x), msb(y)) {
                    (false, false) => u,
                    (true, false) => neg(u).wrapping_add(y) & m,
                    (false, true) => u.wrapping_add(y) & m,
                    (true, true) => neg(u),
                }
            }
        }
        BvOp::Shl => {
            if y >= w as u128 {
                0
            } else {
                (x << y) & m
            }
        }
        BvOp::Lshr => {
            if y >= w as u128 {
                0
            } else {
                x >> y
            }
        }
        BvOp::Ashr => {
            let s = if y >= w as u128 { w - 1 } else { y as u32 };
            (sx >> s) as u128 & m
        }
        BvOp::Ult => b(x < y),
        BvOp::Ule => b(x <= y),
        BvOp::Ugt => b(x > y),
        BvOp::Uge => b(x >= y),
        BvOp::Slt => b(sx < sy),
        BvOp::Sle => b(sx <= sy),
        BvOp::Sgt => b(sx > sy),
        BvOp::Sge => b(sx >= sy),
    }
}

impl Program {
    /// The query's truth value for one assignment of the inputs.
    pub fn eval(&self, inputs: &[u128], vals: &mut Vec<u128>) -> bool {
        vals.clear();
        let mut args: Vec<u128> = Vec::new();
        for s in &self.steps {
            let v = match s {
                Step::Input(i) => inputs[*i],
                Step::Lit(v) => *v,
                Step::Not(a) => (vals[*a] == 0) as u128,
                Step::And(xs) => xs.iter().all(|&i| vals[i] != 0) as u128,
                Step::Or(xs) => xs.iter().any(|&i| vals[i] != 0) as u128,
                Step::Implies(a, b) => (vals[*a] == 0 || vals[*b] != 0) as u128,
                Step::Eq(a, b) => (vals[*a] == vals[*b]) as u128,
                Step::Distinct(a, b) => (vals[*a] != vals[*b]) as u128,
                Step::Ite(c, a, b) => {
                    if vals[*c] != 0 {
                        vals[*a]
                    } else {
                        vals[*b]
                    }
                }
                Step::Bv(o, w, xs) => {
                    args.clear();
                    args.extend(xs.iter().map(|&i| vals[i]));
                    bv_op(*o, *w, &args)
                }
                Step::Extract(hi, lo, x) => (vals[*x] >> lo) & mask(hi - lo + 1),
                Step::Extend {
                    signed,
                    from,
                    by,
                    x,
                } => {
                    if *signed {
                        sext(vals[*x], *from) as u128 & mask(from + by)
                    } else {
                        vals[*x]
                    }
                }
                Step::Concat(hi, lo, lo_w) => (vals[*hi] << lo_w) | vals[*lo],
            };
            vals.push(v);
        }
        vals.last().is_some_and(|v| *v != 0)
    }

    /// Tries every assignment: `None` when none satisfies the query (it is unsatisfiable),
    /// else a satisfying one.
    pub fn search(&self) -> Option<Vec<u128>> {
        let bits: u32 = self.inputs.iter().sum();
        let mut vals = Vec::with_capacity(self.steps.len());
        let mut inputs = vec![0u128; self.inputs.len()];
        for k in 0..(1u64 << bits) {
            let mut rest = k as u128;
            for (slot, w) in inputs.iter_mut().zip(&self.inputs) {
                *slot = rest & mask(*w);
                rest >>= w;
            }
            if self.eval(&inputs, &mut vals) {
                return Some(inputs);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use easy_smt::ContextBuilder;

    /// Reads an s-expression (atoms and lists only).
    fn read(ctx: &Context, text: &str) -> SExpr {
        let spaced = text.replace('(', " ( ").replace(')', " ) ");
        let mut stack: Vec<Vec<SExpr>> = vec![vec![]];
        for tok in spaced.split_whitespace() {
            match tok {
                "(" => stack.push(vec![]),
                ")" => {
                    let l = stack.pop().unwrap();
                    stack.last_mut().unwrap().push(ctx.list(l));
                }
                a => stack.last_mut().unwrap().push(ctx.atom(a)),
            }
        }
        stack[0][0]
    }

    fn decide(text: &str, inputs: &[(&str, u32)]) -> Option<Option<Vec<u128>>> {
        let ctx = ContextBuilder::new().build().unwrap();
        let e = read(&ctx, text);
        let inputs: Vec<(String, u32)> = inputs.iter().map(|(n, w)| (n.to_string(), *w)).collect();
        compile(&ctx, &inputs, e).map(|p| p.search())
    }

    #[test]
    fn division_by_a_constant_is_decided() {
        // x / 3 == (x * 43691) >> 17 holds for every 16-bit x; with 43690 it does not.
        let q = |m: u32| {
            format!(
                "(not (= ((_ zero_extend 16) (bvudiv x (_ bv3 16))) \
                 (bvlshr (bvmul ((_ zero_extend 16) x) (_ bv{m} 32)) (_ bv17 32))))"
            )
        };
        assert_eq!(decide(&q(43691), &[("x", 16)]), Some(None));
        let cex = decide(&q(43690), &[("x", 16)]).unwrap().unwrap();
        assert_ne!(cex[0] / 3, (cex[0] * 43690) >> 17);
    }

    #[test]
    fn signed_operators_follow_smt_lib() {
        // bvsdiv rounds toward zero, bvsrem takes the dividend's sign, bvsmod the divisor's;
        // division by zero gives all ones (udiv) or the dividend (urem).
        let ok = |t: &str| decide(t, &[("x", 8)]).expect("compiles").is_none();
        assert!(ok(
            "(and (= x (_ bv0 8)) (not (= (bvsdiv (_ bv249 8) (_ bv2 8)) (_ bv253 8))))"
        ));
        assert!(ok(
            "(and (= x (_ bv0 8)) (not (= (bvsrem (_ bv249 8) (_ bv2 8)) (_ bv255 8))))"
        ));
        assert!(ok(
            "(and (= x (_ bv0 8)) (not (= (bvsmod (_ bv249 8) (_ bv2 8)) (_ bv1 8))))"
        ));
        assert!(ok("(not (= (bvudiv x (_ bv0 8)) (_ bv255 8)))"));
        assert!(ok("(not (= (bvurem x (_ bv0 8)) x))"));
        assert!(ok(
            "(not (= (bvashr x (_ bv9 8)) (ite (bvslt x (_ bv0 8)) (_ bv255 8) (_ bv0 8))))"
        ));
        assert!(ok(
            "(not (= ((_ sign_extend 8) x) (concat (ite (bvslt x (_ bv0 8)) (_ bv255 8) (_ bv0 8)) x)))"
        ));
    }

    #[test]
    fn unknown_operators_and_wide_inputs_are_left_to_the_solver() {
        assert!(decide("(bvfoo x x)", &[("x", 8)]).is_none());
        assert!(decide("(= x x)", &[("x", 32)]).is_none());
    }
}
