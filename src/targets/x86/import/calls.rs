//! Calls in Intel pseudocode: the built-in functions (saturations, extensions, `ABS`,
//! `MIN`, `MAX`, ...), functions the operation `DEFINE`s, and bitwise operations on whole
//! registers, computed in chunks.

use std::rc::Rc;

use super::eval::{Env, Eval, Flow, Val, int_of, sized};
use super::pseudo::PExpr;
use crate::isa::import::bits::{Bits, Seg, Src};
use crate::isa::import::lanes::{BinOp, LaneExpr};
use crate::types::Elem;

/// The deepest nesting of calls to `DEFINE`d functions (Intel's call one level deep; a
/// function calling itself must not overflow the stack).
const MAX_CALL_DEPTH: usize = 16;

impl Eval<'_> {
    /// A bitwise operation on bit strings wider than a number: computed in chunks of
    /// `self.chunk` bits.
    pub(super) fn chunked(&mut self, op: &str, p: &Bits, q: &Bits) -> Result<Val, String> {
        let w = p.width();
        let c = self.chunk;
        if !w.is_multiple_of(c) {
            return Err(format!("a bitwise operation on {w} bits"));
        }
        let mut out = Vec::new();
        for k in 0..w / c {
            let x = self.bits_num(&p.sub(k * c, c), Some(false))?;
            let y = self.bits_num(&q.sub(k * c, c), Some(false))?;
            let bop = match op {
                "&" | "AND" => BinOp::And,
                "|" | "OR" => BinOp::Or,
                _ => BinOp::Xor,
            };
            out.push(Seg {
                src: Src::Num(Rc::new(LaneExpr::Bin(bop, x, y))),
                lo: 0,
                len: c,
            });
        }
        Ok(Val::Bits(Bits(out)))
    }

    pub(super) fn call(&mut self, f: &str, args: &[PExpr], env: &Env) -> Result<Val, String> {
        // `SignExtend16(a[i+15:i] >> count)`: the wrapper says how the shifted lane is read
        // (an arithmetic or a logical shift), whatever Intel declares for the operand.
        for (prefix, signed) in [("SignExtend", true), ("ZeroExtend", false)] {
            if sized(f, prefix).is_some()
                && let [PExpr::Bin(op, x, y)] = args
                && (op == ">>" || op == "<<")
            {
                let x = self.expr(x, env)?;
                let y = self.expr(y, env)?;
                if let Val::Bits(_) = x {
                    let xn = self.num(&x, Some(signed))?;
                    let yn = self.num(&y, None)?;
                    let bop = if op == ">>" { BinOp::Shr } else { BinOp::Shl };
                    let shifted = Val::Num(Rc::new(LaneExpr::Bin(bop, xn, yn)));
                    let bits = sized(f, prefix).unwrap_or(64);
                    let t = Elem::from_bits(bits, signed).ok_or("bad width")?;
                    return Ok(Val::Num(Rc::new(LaneExpr::Wrap(
                        t,
                        self.num(&shifted, None)?,
                    ))));
                }
            }
        }
        let vals: Vec<Val> = args
            .iter()
            .map(|a| self.expr(a, env))
            .collect::<Result<_, _>>()?;
        let one = |vals: &[Val]| -> Result<Val, String> {
            match vals {
                [v] => Ok(v.clone()),
                _ => Err(format!("`{f}` takes one argument")),
            }
        };
        if let Some(bits) = sized(f, "SaturateU") {
            let n = self.num(&one(&vals)?, None)?;
            return Ok(Val::Num(Rc::new(LaneExpr::Saturate(
                Elem::from_bits(bits, false).unwrap(),
                n,
            ))));
        }
        if let Some(bits) = sized(f, "Saturate") {
            let n = self.num(&one(&vals)?, None)?;
            return Ok(Val::Num(Rc::new(LaneExpr::Saturate(
                Elem::from_bits(bits, true).unwrap(),
                n,
            ))));
        }
        if let Some(bits) = sized(f, "Truncate") {
            let n = self.num(&one(&vals)?, None)?;
            let neg = n.range().is_some_and(|r| r.0 < 0);
            return Ok(Val::Num(Rc::new(LaneExpr::Wrap(
                Elem::from_bits(bits, neg).unwrap(),
                n,
            ))));
        }
        for (prefix, signed) in [("SignExtend", true), ("ZeroExtend", false)] {
            if let Some(bits) = sized(f, prefix) {
                let v = one(&vals)?;
                let n = self.num(&v, Some(signed))?;
                let t = Elem::from_bits(bits, signed).unwrap();
                let fits = n
                    .range()
                    .is_some_and(|r| t.min_value() <= r.0 && Some(r.1) <= t.max_value());
                if fits {
                    return Ok(Val::Num(n));
                }
                if !signed && !matches!(v, Val::Bits(_)) {
                    return Err(format!("`{f}` of a computed value that may be negative"));
                }
                return Ok(Val::Num(Rc::new(LaneExpr::Wrap(t, n))));
            }
        }
        match (f, vals.as_slice()) {
            ("Signed", [v]) => return Ok(Val::Num(self.num(v, Some(true))?)),
            ("Unsigned", [v]) => return Ok(Val::Num(self.num(v, Some(false))?)),
            ("ABS", [v]) => return Ok(Val::Num(Rc::new(LaneExpr::Abs(self.num(v, None)?)))),
            ("MIN" | "MAX", [a, b]) => {
                let (x, y) = (self.num(a, None)?, self.num(b, None)?);
                let op = if f == "MIN" { BinOp::Min } else { BinOp::Max };
                return Ok(Val::Num(Rc::new(LaneExpr::Bin(op, x, y))));
            }
            _ => {}
        }
        let Some((params, body)) = self.funcs.get(f).cloned() else {
            return Err(format!("unsupported function `{f}`"));
        };
        if params.len() != vals.len() {
            return Err(format!("`{f}` called with {} arguments", vals.len()));
        }
        let mut local = self.base_env();
        for (p, v) in params.iter().zip(vals) {
            match p {
                PExpr::Name(n) => {
                    local.insert(n.clone(), v);
                }
                PExpr::Slice(base, hi, lo) => {
                    let PExpr::Name(n) = &**base else {
                        return Err(format!("bad parameter of `{f}`"));
                    };
                    let hi = self.int_expr(hi, &local)?;
                    let lo = lo.as_ref().map(|l| self.expr(l, &local)).transpose()?;
                    let lo = lo.as_ref().map(int_of).transpose()?.unwrap_or(hi);
                    let len = (hi - lo + 1).clamp(1, 512) as u32;
                    local.insert(n.clone(), Val::Bits(self.to_bits(&v, len)?));
                }
                _ => return Err(format!("bad parameter of `{f}`")),
            }
        }
        if self.calls >= MAX_CALL_DEPTH {
            return Err(format!(
                "calls nest more than {MAX_CALL_DEPTH} deep (`{f}`)"
            ));
        }
        self.calls += 1;
        let flow = self.block(&body, &mut local);
        self.calls -= 1;
        match flow? {
            Flow::Return(v) => Ok(v),
            Flow::Next => Err(format!("`{f}` returns nothing")),
        }
    }
}
