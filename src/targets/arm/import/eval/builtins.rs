//! The Sail model's primitives (`aget_Elem`, `SatQ`, `shl_int`, ...) and the AArch64
//! helpers its vector files call but do not define (`V`, `X`, `LSL`, `BitCount`), each
//! written once over the evaluator's values.

use std::rc::Rc;

use super::{
    Eval, Fill, MAX_PLACE, R, Stop, Val, X_BASE, bin, const_bits, fail, fill_bits, konst, mask,
    num_val, seg,
};
use crate::isa::import::bits::{Bits, Src};
use crate::isa::import::lanes::{BinOp, CountOp, LaneExpr};
use crate::types::Elem;

impl Eval<'_> {
    /// The model's primitives and the AArch64 helpers its files do not define.
    pub(super) fn builtin(&mut self, f: &str, a: &[Val]) -> R<Option<Val>> {
        let arity = |n: usize| -> R<()> {
            if a.len() == n {
                Ok(())
            } else {
                fail(format!("`{f}` with {} arguments", a.len()))
            }
        };
        Ok(Some(match f {
            "V" | "aget_V" => {
                arity(1)?;
                Val::Bits(self.read_reg(self.place(&a[0])?)?)
            }
            "Vpart" | "aget_Vpart" => {
                arity(2)?;
                let r = self.read_reg(self.place(&a[0])?)?;
                match self.int(&a[1])? {
                    0 => Val::Bits(r),
                    _ => Val::Bits(r.sub(64, 64)),
                }
            }
            "aset_V" => {
                arity(2)?;
                self.write_reg(self.place(&a[0])?, 0, &a[1])?;
                Val::Unit
            }
            "X" | "aget_X" => {
                arity(1)?;
                Val::Bits(self.read_reg(X_BASE + self.place(&a[0])?)?)
            }
            "aget_Elem" | "Elem" => {
                arity(3)?;
                let (e, size) = (self.index(&a[1])?, self.int(&a[2])?);
                self.slice(&a[0], e.saturating_mul(size), size)?
            }
            "aset_Elem" => {
                arity(4)?;
                let (e, size) = (self.index(&a[1])?, self.place(&a[2])?);
                let cur = self.bits(&a[0], None)?;
                let v = self.bits(&a[3], Some(size))?;
                let at = self.place(&Val::Int(e.saturating_mul(i128::from(size))))?;
                Val::Bits(cur.write(at, v))
            }
            "slice" => {
                arity(3)?;
                let (lo, len) = (self.int(&a[1])?, self.int(&a[2])?);
                self.slice(&a[0], lo, len)?
            }
            "__GetSlice_int" => {
                arity(3)?;
                let (len, lo) = (self.int(&a[0])?, self.int(&a[2])?);
                self.slice(&a[1], lo, len)?
            }
            "__SetSlice_bits" => {
                arity(5)?;
                let (len, lo) = (self.place(&a[1])?, self.place(&a[3])?);
                let cur = self.bits(&a[2], None)?;
                let v = self.bits(&a[4], Some(len))?;
                Val::Bits(cur.write(lo, v))
            }
            "UInt" | "SInt" | "asl_Int" => {
                if a.is_empty() {
                    return fail(format!("`{f}` with no arguments"));
                }
                let signed = match f {
                    "UInt" => false,
                    "SInt" => true,
                    _ => {
                        arity(2)?;
                        match &a[1] {
                            Val::Bool(u) => !u,
                            _ => return fail("signedness decided by data"),
                        }
                    }
                };
                num_val(self.num(&a[0], Some(signed))?)
            }
            "ZeroExtend" | "SignExtend" => {
                arity(2)?;
                let n = self.place(&a[1])?;
                let b = self.bits(&a[0], None)?;
                if f == "ZeroExtend" || const_bits(&b).is_some() && b.width() == n {
                    Val::Bits(b.sub(0, n))
                } else {
                    let x = self.num(&Val::Bits(b), Some(true))?;
                    Val::Bits(seg(Src::Num(x), n))
                }
            }
            "Zeros" | "Ones" => {
                let fill = if f == "Zeros" {
                    Fill::Zeros
                } else {
                    Fill::Ones
                };
                match a {
                    [] => Val::Fill(fill),
                    [n] => Val::Bits(fill_bits(fill, self.place(n)?)),
                    _ => return fail(format!("`{f}` with {} arguments", a.len())),
                }
            }
            "replicate_bits" => {
                arity(2)?;
                let b = self.bits(&a[0], None)?;
                let n = self.place(&a[1])?;
                if u64::from(b.width()) * u64::from(n) > MAX_PLACE as u64 {
                    return fail("a replication wider than any register");
                }
                let mut out = Bits::default();
                for _ in 0..n {
                    out.0.extend(b.0.iter().cloned());
                }
                Val::Bits(out)
            }
            "shl_int" | "shr_int" => {
                arity(2)?;
                let k = self.int(&a[1])?;
                let op = if f == "shl_int" {
                    BinOp::Shl
                } else {
                    BinOp::Shr
                };
                num_val(bin(op, self.num(&a[0], None)?, Rc::new(LaneExpr::Const(k))))
            }
            "SatQ" | "SignedSatQ" | "UnsignedSatQ" => {
                let (x, n, unsigned) = match f {
                    "SatQ" => {
                        arity(3)?;
                        let Val::Bool(u) = a[2] else {
                            return fail("signedness decided by data");
                        };
                        (&a[0], &a[1], u)
                    }
                    _ => {
                        arity(2)?;
                        (&a[0], &a[1], f == "UnsignedSatQ")
                    }
                };
                let n = self.place(n)?;
                let t = Elem::from_bits(n, !unsigned).ok_or("a saturation of odd width");
                let t = t.map_err(|e| Stop::Fail(e.into()))?;
                let x = self.num(x, None)?;
                let v = Rc::new(LaneExpr::Saturate(t, x));
                // The flag only feeds FPSR.QC, which is not modelled.
                Val::Tuple(vec![Val::Bits(seg(Src::Num(v), n)), Val::Bool(false)])
            }
            "abs" => {
                arity(1)?;
                let x = self.num(&a[0], None)?;
                num_val(match konst(&x) {
                    Some(c) => Rc::new(LaneExpr::Const(
                        c.checked_abs()
                            .ok_or_else(|| Stop::Fail("`abs` overflows".into()))?,
                    )),
                    None => Rc::new(LaneExpr::Abs(x)),
                })
            }
            "min" | "max" => {
                arity(2)?;
                let op = if f == "min" { BinOp::Min } else { BinOp::Max };
                num_val(bin(op, self.num(&a[0], None)?, self.num(&a[1], None)?))
            }
            "negate" => {
                arity(1)?;
                num_val(bin(
                    BinOp::Sub,
                    Rc::new(LaneExpr::Const(0)),
                    self.num(&a[0], None)?,
                ))
            }
            "not" | "not_bool" => {
                arity(1)?;
                self.not(a[0].clone())?
            }
            "div" | "fdiv_int" | "mod" | "pow2" => {
                let x = self.int(
                    a.first()
                        .ok_or_else(|| Stop::Fail(format!("`{f}` of nothing")))?,
                )?;
                match (f, a.get(1)) {
                    ("pow2", _) => Val::Int(1i128 << x.clamp(0, 126)),
                    (_, Some(y)) => {
                        let y = self.int(y)?;
                        if y == 0 {
                            return fail("division by zero");
                        }
                        Val::Int(if f == "mod" {
                            x.rem_euclid(y)
                        } else {
                            x.div_euclid(y)
                        })
                    }
                    _ => return fail(format!("`{f}` with one argument")),
                }
            }
            "HighestSetBit" | "LowestSetBit" => {
                arity(1)?;
                let b = self.bits(&a[0], None)?;
                let v = const_bits(&b).ok_or_else(|| Stop::Fail("a set bit of data".into()))?;
                Val::Int(match (v, f) {
                    (0, _) => -1,
                    (v, "HighestSetBit") => 127 - v.leading_zeros() as i128,
                    (v, _) => v.trailing_zeros() as i128,
                })
            }
            "LSL" | "LSR" | "ROR" => {
                arity(2)?;
                let b = self.bits(&a[0], None)?;
                let w = b.width();
                let k = self.int(&a[1])?;
                if k < 0 {
                    return fail(format!("`{f}` by a negative amount"));
                }
                if k >= i128::from(w) && f != "ROR" {
                    // Every bit shifted out.
                    return Ok(Some(Val::Bits(seg(Src::Zero, w))));
                }
                let k = k.rem_euclid(i128::from(w.max(1))) as u32;
                let zeros = seg(Src::Zero, k);
                Val::Bits(match f {
                    "LSL" => zeros.write(k, b.sub(0, w - k)).sub(0, w),
                    "LSR" => b.sub(k, w - k).write(w - k, zeros).sub(0, w),
                    _ => b.sub(k, w - k).write(w - k, b.sub(0, k)).sub(0, w),
                })
            }
            "IsZero" | "IsOnes" => {
                arity(1)?;
                let b = self.bits(&a[0], None)?;
                let w = b.width();
                if w > 64 {
                    return fail(format!("`{f}` of {w} bits"));
                }
                let x = self.bits_num(&b, Some(false)).map_err(Stop::Fail)?;
                let want = if f == "IsZero" { 0 } else { mask(w) };
                num_val(bin(BinOp::Eq, x, Rc::new(LaneExpr::Const(want))))
            }
            "BitCount" | "CountLeadingZeroBits" | "CountLeadingSignBits" => {
                arity(1)?;
                let b = self.bits(&a[0], None)?;
                let w = b.width();
                let t = Elem::from_bits(w, false)
                    .ok_or_else(|| Stop::Fail(format!("`{f}` of {w} bits")))?;
                let x = self.bits_num(&b, Some(f == "CountLeadingSignBits"));
                let x = x.map_err(Stop::Fail)?;
                num_val(Rc::new(match f {
                    "BitCount" => LaneExpr::Count(CountOp::Ones, t, x),
                    "CountLeadingZeroBits" => LaneExpr::Count(CountOp::LeadingZeros, t, x),
                    // Arm's definition: the leading zeros of `x<N-1:1> EOR x<N-2:0>`, that
                    // is of `x ^ (x >> 1)` (arithmetic) less the sign bit itself.
                    _ => {
                        let half = bin(BinOp::Shr, x.clone(), Rc::new(LaneExpr::Const(1)));
                        let y = bin(BinOp::Xor, x, half);
                        let clz = Rc::new(LaneExpr::Count(CountOp::LeadingZeros, t, y));
                        LaneExpr::Bin(BinOp::Sub, clz, Rc::new(LaneExpr::Const(1)))
                    }
                }))
            }
            "length" | "__length" => {
                arity(1)?;
                Val::Int(i128::from(self.bits(&a[0], None)?.width()))
            }
            _ => return Ok(None),
        }))
    }

    /// An element index known now.
    fn index(&self, v: &Val) -> R<i128> {
        match v {
            Val::Num(_) => fail("an element chosen by data (a table lookup)"),
            v => self.int(v),
        }
    }
}
