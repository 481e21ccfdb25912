//! Symbolic evaluation of Intel pseudocode into one [`LaneExpr`] per result lane.
//!
//! Loops and conditions on loop variables are run; a condition on data becomes a lane-wise
//! select. A value is an integer known now (loop variables, constants), a bit string (a slice
//! of an operand, a temporary assembled from pieces) or an exact integer computed from input
//! lanes. A slice of an operand read as a number is that operand's lane, signed or unsigned
//! as Intel's data declares the operand's elements (`etype="SI16"`); the pseudocode leaves
//! signedness implicit, and the hardware check catches where this reading is wrong.

use std::collections::HashMap;
use std::rc::Rc;

use super::pseudo::{PExpr, Stmt};
use crate::isa::import::bits::{self, Bits, Seg, Src};
use crate::isa::import::lanes::{BinOp, LaneExpr};
use crate::types::Elem;

/// Bits above any register (`dst[MAX:256] := 0`).
const MAX_BIT: i128 = 511;
/// Loop iterations allowed in one evaluation (a guard against runaway `WHILE`s).
const MAX_STEPS: usize = 1 << 12;

/// A value during evaluation.
#[derive(Clone, Debug)]
pub(super) enum Val {
    Int(i128),
    /// The immediate operand (known, but a number in lane arithmetic: the semantics name it).
    Imm(i128),
    Bits(Bits),
    Num(Rc<LaneExpr>),
}

/// An operand as evaluation sees it.
#[derive(Clone, Debug)]
pub struct OperandInfo {
    /// Its name in the pseudocode.
    pub name: String,
    /// Register width in bits.
    pub bits: u32,
    /// Its declared element type (signedness and width of a slice read as a number).
    pub elem: Elem,
}

/// Control flow out of a statement.
pub(super) enum Flow {
    Next,
    Return(Val),
}

pub(super) struct Eval<'a> {
    pub(super) operands: &'a [OperandInfo],
    /// The operands' element types, as [`bits::bits_num`] takes them.
    elems: Vec<Elem>,
    /// Bits per chunk of a bitwise operation on whole registers (the result lane width).
    pub(super) chunk: u32,
    /// Bits of the immediate operand.
    pub(super) imm_bits: u32,
    /// Set when the immediate's value decided control flow, an index or a constant.
    pub(super) imm_concrete: std::cell::Cell<bool>,
    pub(super) funcs: HashMap<String, (Vec<PExpr>, Vec<Stmt>)>,
    pub(super) steps: usize,
    /// Calls of `DEFINE`d functions under way.
    pub(super) calls: usize,
}

pub(super) type Env = HashMap<String, Val>;

/// The immediate operand of one evaluation: its name, value and width in bits.
#[derive(Clone, Copy, Debug)]
pub struct ImmValue<'a> {
    /// Its name in the pseudocode.
    pub name: &'a str,
    /// The value evaluated with.
    pub value: i128,
    /// Its width in bits.
    pub bits: u32,
}

/// What one evaluation gives: the result lanes, and whether the immediate's value decided
/// anything (so other values may give other semantics).
pub struct Evaluated {
    /// One number per result lane.
    pub lanes: Vec<Rc<LaneExpr>>,
    /// The immediate's value decided control flow, an index or a constant.
    pub imm_concrete: bool,
}

impl<'a> Eval<'a> {
    fn new(operands: &'a [OperandInfo], imm: Option<ImmValue>, chunk: u32) -> Self {
        Eval {
            operands,
            elems: operands.iter().map(|o| o.elem).collect(),
            chunk,
            imm_bits: imm.map_or(8, |i| i.bits),
            imm_concrete: std::cell::Cell::new(false),
            funcs: HashMap::new(),
            steps: 0,
            calls: 0,
        }
    }
}

/// Runs `body`; returns the bits of the result variable `result`.
fn run(ev: &mut Eval, body: &[Stmt], result: &str, imm: Option<ImmValue>) -> Result<Bits, String> {
    let mut env = ev.base_env();
    if let Some(i) = imm {
        env.insert(i.name.to_string(), Val::Imm(i.value));
    }
    if let Flow::Return(_) = ev.block(body, &mut env)? {
        return Err("RETURN outside a function".into());
    }
    match env.remove(result) {
        Some(Val::Bits(b)) => Ok(b),
        Some(Val::Num(e)) => Ok(Bits(vec![Seg {
            src: Src::Num(e),
            lo: 0,
            len: 64,
        }])),
        _ => Err(format!("the operation never writes `{result}`")),
    }
}

/// The result lanes of `body`: the variable `result` cut into `lanes` lanes of `bits` bits,
/// each read as a number (zero bits above a computed value extend it).
pub fn result_lanes(
    body: &[Stmt],
    operands: &[OperandInfo],
    result: &str,
    imm: Option<ImmValue>,
    lanes: u32,
    bits: u32,
) -> Result<Evaluated, String> {
    let mut ev = Eval::new(operands, imm, bits.max(8));
    let dst = run(&mut ev, body, result, imm)?;
    let w = bits;
    // Bits above everything the pseudocode writes are zero (Intel's text leaves some out,
    // `vpmovqb` writing 32 of 128 bits; the hardware zeroes the rest of the register).
    let mut dst = dst;
    while dst.0.last().is_some_and(|s| matches!(s.src, Src::Undef)) {
        let s = dst.0.pop().unwrap_or_else(|| unreachable!());
        dst.0.push(Seg {
            src: Src::Zero,
            lo: 0,
            len: s.len,
        });
    }
    let lanes = (0..lanes)
        .map(|k| {
            let piece = dst.sub(k * w, w);
            ev.bits_num(&piece, None)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Evaluated {
        lanes,
        imm_concrete: ev.imm_concrete.get(),
    })
}

pub(super) fn int_of(v: &Val) -> Result<i128, String> {
    match v {
        Val::Int(i) | Val::Imm(i) => Ok(*i),
        Val::Num(e) => match &**e {
            LaneExpr::Const(c) => Ok(*c),
            _ => Err("a bit index or loop bound depends on data".into()),
        },
        Val::Bits(_) => Err("a bit index or loop bound depends on data".into()),
    }
}

/// `a.word` and friends: the variable and the lane width the accessor names.
fn accessor(name: &str) -> Option<(&str, u32)> {
    let (base, acc) = name.rsplit_once('.')?;
    let w = match acc {
        "byte" => 8,
        "word" => 16,
        "dword" => 32,
        "qword" => 64,
        _ => return None,
    };
    Some((base, w))
}

pub(super) fn sized(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?
        .parse()
        .ok()
        .filter(|b| [8, 16, 32, 64].contains(b))
}

impl Eval<'_> {
    /// `v` as an integer known now; an immediate read this way makes the semantics depend
    /// on its value (noted in `imm_concrete`).
    pub(super) fn int(&self, v: &Val) -> Result<i128, String> {
        if let Val::Imm(_) = v {
            self.imm_concrete.set(true);
        }
        int_of(v)
    }

    /// `e` evaluated, as an integer known now (see [`Eval::int`]).
    pub(super) fn int_expr(&mut self, e: &PExpr, env: &Env) -> Result<i128, String> {
        let v = self.expr(e, env)?;
        self.int(&v)
    }

    /// `v` if it is known now (an integer, or an immediate, noted as for [`Eval::int`]).
    fn known(&self, v: &Val) -> Option<i128> {
        match v {
            Val::Int(i) => Some(*i),
            Val::Imm(i) => {
                self.imm_concrete.set(true);
                Some(*i)
            }
            _ => None,
        }
    }

    pub(super) fn base_env(&self) -> Env {
        self.operands
            .iter()
            .enumerate()
            .map(|(k, o)| {
                (
                    o.name.clone(),
                    Val::Bits(Bits(vec![Seg {
                        src: Src::Reg(k),
                        lo: 0,
                        len: o.bits,
                    }])),
                )
            })
            .collect()
    }

    pub(super) fn block(&mut self, body: &[Stmt], env: &mut Env) -> Result<Flow, String> {
        for s in body {
            if let Flow::Return(v) = self.stmt(s, env)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Next)
    }

    fn tick(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err("the operation runs too long".into());
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, env: &mut Env) -> Result<Flow, String> {
        match s {
            Stmt::Assign(target, value) => {
                let v = self.expr(value, env)?;
                self.assign(target, v, env)?;
            }
            Stmt::For(var, from, to, body) => {
                let from = self.int_expr(from, env)?;
                let to = self.int_expr(to, env)?;
                let mut j = from;
                while j <= to {
                    self.tick()?;
                    env.insert(var.clone(), Val::Int(j));
                    if let Flow::Return(v) = self.block(body, env)? {
                        return Ok(Flow::Return(v));
                    }
                    j += 1;
                }
            }
            Stmt::If(c, then, els) => {
                let c = self.expr(c, env)?;
                match self.known(&c) {
                    Some(v) => return self.block(if v != 0 { then } else { els }, env),
                    None => {
                        let cond = self.num(&c, None)?;
                        if let LaneExpr::Const(v) = &*cond {
                            return self.block(if *v != 0 { then } else { els }, env);
                        }
                        let mut te = env.clone();
                        let mut ee = env.clone();
                        let a = self.block(then, &mut te)?;
                        let b = self.block(els, &mut ee)?;
                        if matches!(a, Flow::Return(_)) || matches!(b, Flow::Return(_)) {
                            return Err("RETURN under a condition on data".into());
                        }
                        *env = self.merge(&cond, te, ee)?;
                    }
                }
            }
            Stmt::Case(x, arms) => {
                let x = self
                    .int_expr(x, env)
                    .map_err(|_| "CASE on data".to_string())?;
                for (v, body) in arms {
                    if self.int_expr(v, env)? == x {
                        return self.block(body, env);
                    }
                }
            }
            Stmt::While(c, body) => loop {
                self.tick()?;
                let c = self
                    .int_expr(c, env)
                    .map_err(|_| "WHILE on data".to_string())?;
                if c == 0 {
                    break;
                }
                if let Flow::Return(v) = self.block(body, env)? {
                    return Ok(Flow::Return(v));
                }
            },
            Stmt::Define(name, params, body) => {
                self.funcs
                    .insert(name.clone(), (params.clone(), body.clone()));
            }
            Stmt::Return(e) => return Ok(Flow::Return(self.expr(e, env)?)),
            Stmt::Other(text) => return Err(format!("unsupported statement `{text}`")),
        }
        Ok(Flow::Next)
    }

    /// The environment after `IF cond` with `then` and `els` run in copies.
    fn merge(&self, cond: &Rc<LaneExpr>, then: Env, mut els: Env) -> Result<Env, String> {
        let mut out = Env::new();
        for (name, tv) in then {
            let Some(ev) = els.remove(&name) else {
                out.insert(name, tv);
                continue;
            };
            let merged = match (&tv, &ev) {
                (Val::Int(a), Val::Int(b)) | (Val::Imm(a), Val::Imm(b)) if a == b => tv,
                (Val::Num(a), Val::Num(b)) if Rc::ptr_eq(a, b) => tv,
                (Val::Bits(a), Val::Bits(b)) => Val::Bits(self.merge_bits(cond, a, b)?),
                _ => {
                    let a = self.num(&tv, None)?;
                    let b = self.num(&ev, None)?;
                    Val::Num(Rc::new(LaneExpr::Select(cond.clone(), a, b)))
                }
            };
            out.insert(name, merged);
        }
        out.extend(els);
        Ok(out)
    }

    fn merge_bits(&self, cond: &Rc<LaneExpr>, a: &Bits, b: &Bits) -> Result<Bits, String> {
        bits::merge_bits(cond, a, b, &self.elems)
    }

    fn assign(&mut self, target: &PExpr, v: Val, env: &mut Env) -> Result<(), String> {
        // `x.dword := v` and `x.dword[j] := v` write bit ranges of `x`.
        let lane_target = |n: &str, j: i128| -> Option<PExpr> {
            let (base, w) = accessor(n)?;
            let w = w as i128;
            Some(PExpr::Slice(
                Rc::new(PExpr::Name(base.to_string())),
                Rc::new(PExpr::Num(j * w + w - 1)),
                Some(Rc::new(PExpr::Num(j * w))),
            ))
        };
        if let PExpr::Name(n) = target
            && let Some(t) = lane_target(n, 0)
        {
            return self.assign(&t, v, env);
        }
        if let PExpr::Slice(x, idx, None) = target
            && let PExpr::Name(n) = &**x
            && accessor(n).is_some()
        {
            let j = self.int_expr(idx, env)?;
            let t = lane_target(n, j).ok_or("bad accessor")?;
            return self.assign(&t, v, env);
        }
        match target {
            PExpr::Name(n) => {
                env.insert(n.clone(), v);
                Ok(())
            }
            PExpr::Slice(base, hi, lo) => {
                let PExpr::Name(n) = &**base else {
                    return Err("assignment to a nested slice".into());
                };
                let hi = self.int_expr(hi, env)?;
                let lo = match lo {
                    Some(lo) => self.int_expr(lo, env)?,
                    None => hi,
                };
                if lo > MAX_BIT {
                    return Ok(());
                }
                if lo < 0 || hi < lo {
                    return Err(format!("bad bit range [{hi}:{lo}]"));
                }
                let hi = hi.min(MAX_BIT);
                let len = (hi - lo + 1) as u32;
                let piece = self.to_bits(&v, len)?;
                let cur = match env.remove(n) {
                    None => Bits::default(),
                    Some(Val::Bits(b)) => b,
                    Some(other) => self.to_bits(&other, 64)?,
                };
                env.insert(n.clone(), Val::Bits(cur.write(lo as u32, piece)));
                Ok(())
            }
            _ => Err("assignment to something that is not a variable".into()),
        }
    }

    /// `v` as exactly `len` bits (truncated or zero-extended; an integer's two's complement).
    pub(super) fn to_bits(&self, v: &Val, len: u32) -> Result<Bits, String> {
        Ok(match v {
            Val::Bits(b) => b.sub(0, len),
            Val::Int(0) => Bits(vec![Seg {
                src: Src::Zero,
                lo: 0,
                len,
            }]),
            Val::Imm(v) => Bits(vec![Seg {
                src: Src::Num(Rc::new(LaneExpr::Imm(*v))),
                lo: 0,
                len,
            }]),
            Val::Int(c) => Bits(vec![Seg {
                src: Src::Num(Rc::new(LaneExpr::Const(*c))),
                lo: 0,
                len,
            }]),
            Val::Num(e) => Bits(vec![Seg {
                src: Src::Num(e.clone()),
                lo: 0,
                len,
            }]),
        })
    }

    /// `v` as an exact integer; a bit string is read signed or unsigned as `signed` says,
    /// or as its source declares.
    pub(super) fn num(&self, v: &Val, signed: Option<bool>) -> Result<Rc<LaneExpr>, String> {
        match v {
            Val::Int(c) => Ok(Rc::new(LaneExpr::Const(*c))),
            Val::Imm(v) => Ok(Rc::new(LaneExpr::Imm(*v))),
            Val::Num(e) => Ok(e.clone()),
            Val::Bits(b) => self.bits_num(b, signed),
        }
    }

    pub(super) fn bits_num(&self, b: &Bits, signed: Option<bool>) -> Result<Rc<LaneExpr>, String> {
        bits::bits_num(b, signed, &self.elems).map_err(|mut e| {
            // The shared reader numbers operands; Intel's text names them.
            for (k, o) in self.operands.iter().enumerate().rev() {
                e = e.replace(&format!("operand {k} "), &format!("`{}` ", o.name));
            }
            e
        })
    }

    pub(super) fn expr(&mut self, e: &PExpr, env: &Env) -> Result<Val, String> {
        match e {
            PExpr::Num(v) => Ok(Val::Int(*v)),
            PExpr::Name(n) if accessor(n).is_some() => {
                let (base, w) = accessor(n).unwrap_or_default();
                let v = self.expr(&PExpr::Name(base.to_string()), env)?;
                Ok(match v {
                    Val::Bits(b) => Val::Bits(b.sub(0, w)),
                    other => other,
                })
            }
            PExpr::Name(n) => match env.get(n) {
                Some(v) => Ok(v.clone()),
                None if n == "MAX" => Ok(Val::Int(MAX_BIT)),
                None => Err(format!("unknown name `{n}`")),
            },
            PExpr::Slice(x, idx, None) if matches!(&**x, PExpr::Name(n) if accessor(n).is_some()) =>
            {
                let PExpr::Name(n) = &**x else { unreachable!() };
                let (base, w) = accessor(n).unwrap_or_default();
                let j = self.int_expr(idx, env)?;
                let lo = PExpr::Num(j * w as i128);
                let hi = PExpr::Num(j * w as i128 + w as i128 - 1);
                let e = PExpr::Slice(
                    Rc::new(PExpr::Name(base.to_string())),
                    Rc::new(hi),
                    Some(Rc::new(lo)),
                );
                self.expr(&e, env)
            }
            PExpr::Slice(x, hi, lo) => {
                let x = self.expr(x, env)?;
                let hi = self.int_expr(hi, env)?;
                let lo = match lo {
                    Some(lo) => self.int_expr(lo, env)?,
                    None => hi,
                };
                if lo < 0 || hi < lo || hi > MAX_BIT {
                    return Err(format!("bad bit range [{hi}:{lo}]"));
                }
                let (lo, len) = (lo as u32, (hi - lo + 1) as u32);
                Ok(match x {
                    // The whole immediate stays one; a field of it is a number now.
                    Val::Imm(v) if lo == 0 && len >= self.imm_bits => Val::Imm(v),
                    Val::Imm(v) => {
                        self.imm_concrete.set(true);
                        Val::Int((v >> lo) & ((1i128 << len.min(126)) - 1))
                    }
                    Val::Int(v) => Val::Int((v >> lo) & ((1i128 << len.min(126)) - 1)),
                    Val::Bits(b) => Val::Bits(b.sub(lo, len)),
                    Val::Num(n) => Val::Bits(Bits(vec![Seg {
                        src: Src::Num(n),
                        lo,
                        len,
                    }])),
                })
            }
            PExpr::Call(f, args) => self.call(f, args, env),
            PExpr::Un(op, a) => {
                let a = self.expr(a, env)?;
                if let Some(v) = self.known(&a) {
                    return Ok(Val::Int(match op.as_str() {
                        "-" => -v,
                        "!" => (v == 0) as i128,
                        _ => !v,
                    }));
                }
                if let Val::Bits(b) = &a
                    && b.width() > 64
                    && (op == "~" || op == "NOT")
                    && b.width() % self.chunk == 0
                {
                    let c = self.chunk;
                    let t = Elem::from_bits(c, false).ok_or("bad chunk")?;
                    let mut out = Vec::new();
                    for k in 0..b.width() / c {
                        let x = self.bits_num(&b.sub(k * c, c), Some(false))?;
                        out.push(Seg {
                            src: Src::Num(Rc::new(LaneExpr::Not(t, x))),
                            lo: 0,
                            len: c,
                        });
                    }
                    return Ok(Val::Bits(Bits(out)));
                }
                let n = self.num(&a, None)?;
                Ok(Val::Num(Rc::new(match op.as_str() {
                    "-" => LaneExpr::Neg(n),
                    "!" => LaneExpr::Bin(BinOp::Eq, n, Rc::new(LaneExpr::Const(0))),
                    _ => {
                        let width = match &a {
                            Val::Bits(b) => b.width(),
                            _ => return Err("bitwise NOT of a computed value".into()),
                        };
                        let t =
                            Elem::from_bits(width, false).ok_or("bitwise NOT of an odd width")?;
                        LaneExpr::Not(t, self.num(&a, Some(false))?)
                    }
                })))
            }
            PExpr::Bin(op, a, b) => {
                let a = self.expr(a, env)?;
                let b = self.expr(b, env)?;
                self.binary(op, a, b)
            }
            PExpr::Cond(c, a, b) => {
                let c = self.expr(c, env)?;
                if let Some(v) = self.known(&c) {
                    return self.expr(if v != 0 { a } else { b }, env);
                }
                let c = self.num(&c, None)?;
                let a = self.expr(a, env)?;
                let b = self.expr(b, env)?;
                Ok(Val::Num(Rc::new(LaneExpr::Select(
                    c,
                    self.num(&a, None)?,
                    self.num(&b, None)?,
                ))))
            }
        }
    }

    fn binary(&mut self, op: &str, a: Val, b: Val) -> Result<Val, String> {
        let concrete =
            matches!(a, Val::Int(_) | Val::Imm(_)) && matches!(b, Val::Int(_) | Val::Imm(_));
        if concrete && let (Some(x), Some(y)) = (self.known(&a), self.known(&b)) {
            let v = match op {
                "+" => x.checked_add(y),
                "-" => x.checked_sub(y),
                "*" => x.checked_mul(y),
                "/" => x.checked_div(y),
                "%" => x.checked_rem(y),
                "<<" => (0..120).contains(&y).then(|| x << y),
                ">>" => (0..127).contains(&y).then(|| x >> y),
                "&" | "AND" => Some(x & y),
                "|" | "OR" => Some(x | y),
                "^" | "XOR" => Some(x ^ y),
                "==" => Some((x == y) as i128),
                "!=" => Some((x != y) as i128),
                "<" => Some((x < y) as i128),
                "<=" => Some((x <= y) as i128),
                ">" => Some((x > y) as i128),
                ">=" => Some((x >= y) as i128),
                "&&" => Some((x != 0 && y != 0) as i128),
                "||" => Some((x != 0 || y != 0) as i128),
                _ => None,
            };
            return v
                .map(Val::Int)
                .ok_or_else(|| format!("cannot evaluate `{x} {op} {y}`"));
        }
        if let (Val::Bits(p), Val::Bits(q)) = (&a, &b)
            && p.width() > 64
            && p.width() == q.width()
            && matches!(op, "&" | "AND" | "|" | "OR" | "^" | "XOR")
        {
            return self.chunked(op, p, q);
        }
        let x = self.num(&a, None)?;
        let y = self.num(&b, None)?;
        if op == "%"
            && let LaneExpr::Const(m) = *y
            && m > 0
            && m & (m - 1) == 0
            && x.range().is_some_and(|r| r.0 >= 0)
        {
            // A remainder by a power of two of a value that is never negative: its low bits.
            return Ok(Val::Num(Rc::new(LaneExpr::Bin(
                BinOp::And,
                x,
                Rc::new(LaneExpr::Const(m - 1)),
            ))));
        }
        let nz =
            |e: Rc<LaneExpr>| Rc::new(LaneExpr::Bin(BinOp::Ne, e, Rc::new(LaneExpr::Const(0))));
        let (bop, x, y) = match op {
            "+" => (BinOp::Add, x, y),
            "-" => (BinOp::Sub, x, y),
            "*" => (BinOp::Mul, x, y),
            "&" | "AND" => (BinOp::And, x, y),
            "|" | "OR" => (BinOp::Or, x, y),
            "^" | "XOR" => (BinOp::Xor, x, y),
            "<<" => (BinOp::Shl, x, y),
            ">>" => (BinOp::Shr, x, y),
            "==" => (BinOp::Eq, x, y),
            "!=" => (BinOp::Ne, x, y),
            "<" => (BinOp::Lt, x, y),
            "<=" => (BinOp::Le, x, y),
            ">" => (BinOp::Gt, x, y),
            ">=" => (BinOp::Ge, x, y),
            "&&" => (BinOp::And, nz(x), nz(y)),
            "||" => (BinOp::Or, nz(x), nz(y)),
            _ => return Err(format!("operator `{op}` on data")),
        };
        Ok(Val::Num(Rc::new(LaneExpr::Bin(bop, x, y))))
    }
}
