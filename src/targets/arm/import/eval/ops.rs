//! Operators on the evaluator's values: `~`, and the binary operators of Sail over
//! integers, booleans, enumeration constants and bit strings (known now or computed from
//! operand lanes), bitwise ones on whole registers a result lane at a time.

use std::rc::Rc;

use super::{
    Eval, R, Stop, Val, bin, const_bits, fail, fill_bits, fold, konst, mask, num_val, seg, word,
};
use crate::isa::import::bits::{Bits, Seg, Src};
use crate::isa::import::lanes::{BinOp, LaneExpr};
use crate::types::Elem;

impl Eval<'_> {
    pub(super) fn not(&self, a: Val) -> R<Val> {
        Ok(match a {
            Val::Bool(b) => Val::Bool(!b),
            Val::Num(c) => Val::Num(bin(BinOp::Eq, c, Rc::new(LaneExpr::Const(0)))),
            Val::Bits(b) => Val::Bits(self.chunked(&b, None, |p, _| {
                let len = p.width();
                let t = Elem::from_bits(len, false).ok_or("not of a piece of odd width")?;
                let x = self.bits_num(&p, Some(false))?;
                Ok(match konst(&x) {
                    Some(c) => LaneExpr::Const(!c & ((1i128 << len) - 1)),
                    None => LaneExpr::Not(t, x),
                })
            })?),
            v => return fail(format!("not of {v:?}")),
        })
    }

    /// A bitwise operation on bit strings, `chunk` bits at a time (a whole register is not
    /// one number).
    fn chunked(
        &self,
        a: &Bits,
        b: Option<&Bits>,
        f: impl Fn(Bits, Option<Bits>) -> Result<LaneExpr, String>,
    ) -> R<Bits> {
        let w = a.width();
        // Whole registers (64 or 128 bits) go by result lanes; elements go whole.
        let chunk = if w >= 64 { self.chunk.min(w) } else { w };
        let mut out = Bits::default();
        let mut at = 0;
        while at < w {
            let len = chunk.min(w - at);
            let pa = a.sub(at, len);
            let pb = b.map(|b| b.sub(at, len));
            let e = f(pa, pb).map_err(Stop::Fail)?;
            out.0.push(Seg {
                src: Src::Num(Rc::new(e)),
                lo: 0,
                len,
            });
            at += len;
        }
        Ok(out)
    }

    pub(super) fn binary(&self, op: &str, a: Val, b: Val) -> R<Val> {
        // Widths from the other side: `x == Zeros()`, `result + 1`.
        let (a, b) = match (&a, &b) {
            (Val::Fill(f), Val::Bits(y)) => (Val::Bits(fill_bits(*f, y.width())), b),
            (Val::Bits(x), Val::Fill(f)) => {
                let w = x.width();
                (a, Val::Bits(fill_bits(*f, w)))
            }
            _ => (a, b),
        };
        if op == "@" {
            let (hi, lo) = (self.bits(&a, None)?, self.bits(&b, None)?);
            let mut out = lo;
            out.0.extend(hi.0);
            return Ok(Val::Bits(out));
        }
        match (&a, &b) {
            (Val::Bool(x), Val::Bool(y)) => {
                return Ok(Val::Bool(match op {
                    "&" => *x && *y,
                    "|" => *x || *y,
                    "==" => x == y,
                    "!=" => x != y,
                    _ => return fail(format!("`{op}` of booleans")),
                }));
            }
            (Val::Enum(x), Val::Enum(y)) => {
                return Ok(Val::Bool(match op {
                    "==" => x == y,
                    "!=" => x != y,
                    _ => return fail(format!("`{op}` of enumeration constants")),
                }));
            }
            (Val::Int(x), Val::Int(y)) => return int_binary(op, *x, *y),
            _ => {}
        }
        let bits_width = match (&a, &b) {
            (Val::Bits(x), _) => Some(x.width()),
            (_, Val::Bits(y)) => Some(y.width()),
            _ => None,
        };
        let bop = match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "&" => BinOp::And,
            "|" => BinOp::Or,
            "^" if bits_width.is_some() => BinOp::Xor,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            _ => return fail(format!("`{op}` of values computed from data")),
        };
        let Some(w) = bits_width else {
            // Exact integers (and conditions, for `&` and `|`).
            let (x, y) = (self.num(&a, None)?, self.num(&b, None)?);
            return Ok(num_val(bin(bop, x, y)));
        };
        let (x, y) = (self.bits(&a, Some(w))?, self.bits(&b, Some(w))?);
        if let (Some(p), Some(q)) = (const_bits(&x), const_bits(&y))
            && let Some(v) = fold(bop, p, q)
        {
            return Ok(match bop {
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                    Val::Bool(v != 0)
                }
                _ => Val::Bits(word(v & mask(w), w)),
            });
        }
        match bop {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                // Modulo 2^w: the exact value, truncated wherever it is read.
                if w > 64 {
                    return fail(format!("{w}-bit arithmetic"));
                }
                let (p, q) = (
                    self.num(&Val::Bits(x), None)?,
                    self.num(&Val::Bits(y), None)?,
                );
                Ok(Val::Bits(seg(Src::Num(bin(bop, p, q)), w)))
            }
            BinOp::And | BinOp::Or | BinOp::Xor => {
                Ok(Val::Bits(self.chunked(&x, Some(&y), |p, q| {
                    let q = q.unwrap_or_default();
                    let (p, q) = (self.bits_num(&p, None)?, self.bits_num(&q, None)?);
                    Ok(LaneExpr::Bin(bop, p, q))
                })?))
            }
            _ => {
                if w > 64 {
                    return fail(format!("a comparison of {w}-bit values"));
                }
                let (p, q) = (
                    self.num(&Val::Bits(x), Some(false))?,
                    self.num(&Val::Bits(y), Some(false))?,
                );
                Ok(num_val(bin(bop, p, q)))
            }
        }
    }
}

fn int_binary(op: &str, x: i128, y: i128) -> R<Val> {
    let v = match op {
        "+" => x.checked_add(y),
        "-" => x.checked_sub(y),
        "*" => x.checked_mul(y),
        "/" if y != 0 => Some(x.div_euclid(y)),
        "%" if y != 0 => Some(x.rem_euclid(y)),
        "^" if (0..120).contains(&y) => x.checked_pow(y as u32),
        "==" => return Ok(Val::Bool(x == y)),
        "!=" => return Ok(Val::Bool(x != y)),
        "<" => return Ok(Val::Bool(x < y)),
        "<=" => return Ok(Val::Bool(x <= y)),
        ">" => return Ok(Val::Bool(x > y)),
        ">=" => return Ok(Val::Bool(x >= y)),
        _ => None,
    };
    match v {
        Some(v) => Ok(Val::Int(v)),
        None => fail(format!("`{x} {op} {y}`")),
    }
}
