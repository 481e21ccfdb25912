//! Bit strings during symbolic evaluation: a value as segments of registers, computed
//! numbers and zeros, so that slicing and partial writes (`dst[i+15:i] := ...`) are exact.
//! Every importer whose pseudocode slices registers (Intel's, Arm's Sail) evaluates into
//! these, and reads a bit string as a number of its lanes with [`bits_num`].

use std::rc::Rc;

use crate::isa::import::lanes::{BinOp, LaneExpr};
use crate::types::Elem;

/// Where the bits of a segment come from.
#[derive(Clone, Debug)]
pub enum Src {
    /// Operand `k`'s register.
    Reg(usize),
    /// The two's complement bits of an exact integer.
    Num(Rc<LaneExpr>),
    /// Zeros.
    Zero,
    /// Never written.
    Undef,
}

/// `len` bits of `src` from bit `lo`.
#[derive(Clone, Debug)]
pub struct Seg {
    pub src: Src,
    pub lo: u32,
    pub len: u32,
}

/// A bit string, lowest segment first.
#[derive(Clone, Debug, Default)]
pub struct Bits(pub Vec<Seg>);

impl Bits {
    /// Its width in bits.
    pub fn width(&self) -> u32 {
        self.0.iter().map(|s| s.len).sum()
    }

    /// Bits `lo .. lo + len` (past the end reads zeros).
    pub fn sub(&self, lo: u32, len: u32) -> Bits {
        let mut out = Vec::new();
        let mut at = 0;
        let end = lo + len;
        for s in &self.0 {
            let (s_lo, s_hi) = (at, at + s.len);
            at = s_hi;
            let (a, b) = (s_lo.max(lo), s_hi.min(end));
            if a < b {
                out.push(Seg {
                    src: s.src.clone(),
                    lo: s.lo + (a - s_lo),
                    len: b - a,
                });
            }
        }
        let have: u32 = out.iter().map(|s| s.len).sum();
        if have < len {
            out.push(Seg {
                src: Src::Zero,
                lo: 0,
                len: len - have,
            });
        }
        Bits(out)
    }

    /// These bits with `lo .. lo + v.width()` replaced by `v`.
    pub fn write(&self, lo: u32, v: Bits) -> Bits {
        let w = v.width();
        let cur = self.width();
        let mut out = Vec::new();
        if lo > 0 {
            let below = if cur >= lo {
                self.sub(0, lo)
            } else {
                let mut b = self.clone();
                b.0.push(Seg {
                    src: Src::Undef,
                    lo: 0,
                    len: lo - cur,
                });
                b
            };
            out.extend(below.0);
        }
        out.extend(v.0);
        if cur > lo + w {
            out.extend(self.sub(lo + w, cur - lo - w).0);
        }
        Bits(out)
    }
}

/// `cond ? a : b`, bit by bit: segments the two share stay as they are, the others become
/// selects of their numbers. `elems` are the operands' element types.
pub fn merge_bits(cond: &Rc<LaneExpr>, a: &Bits, b: &Bits, elems: &[Elem]) -> Result<Bits, String> {
    // Cut both at every segment boundary of either.
    let mut cuts = std::collections::BTreeSet::new();
    for bits in [a, b] {
        let mut at = 0;
        for s in &bits.0 {
            cuts.insert(at);
            at += s.len;
            cuts.insert(at);
        }
    }
    let cuts: Vec<u32> = cuts.into_iter().collect();
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        let (lo, len) = (w[0], w[1] - w[0]);
        let (x, y) = (a.sub(lo, len), b.sub(lo, len));
        let same = match (&x.0[0].src, &y.0[0].src) {
            (Src::Reg(i), Src::Reg(j)) => i == j && x.0[0].lo == y.0[0].lo,
            (Src::Zero, Src::Zero) | (Src::Undef, Src::Undef) => true,
            (Src::Num(p), Src::Num(q)) => Rc::ptr_eq(p, q) && x.0[0].lo == y.0[0].lo,
            _ => false,
        };
        if same {
            out.extend(x.0);
            continue;
        }
        if matches!(x.0[0].src, Src::Undef) || matches!(y.0[0].src, Src::Undef) {
            // Written on one path only: the other path leaves it unspecified.
            out.extend(if matches!(x.0[0].src, Src::Undef) {
                y.0
            } else {
                x.0
            });
            continue;
        }
        let (p, q) = (bits_num(&x, None, elems)?, bits_num(&y, None, elems)?);
        out.push(Seg {
            src: Src::Num(Rc::new(LaneExpr::Select(cond.clone(), p, q))),
            lo: 0,
            len,
        });
    }
    Ok(Bits(out))
}

/// The bits `b` as an exact integer: a lane of an operand (read signed or unsigned as
/// `signed` says, or as the operand's element type `elems[k]` declares), a computed number
/// reduced to the width, or a zero-extended piece.
pub fn bits_num(b: &Bits, signed: Option<bool>, elems: &[Elem]) -> Result<Rc<LaneExpr>, String> {
    let segs = &b.0;
    let Some(first) = segs.first() else {
        return Err("an empty bit string used as a number".into());
    };
    // Zeros above the first segment: zero extension.
    if segs.len() > 1 {
        if segs[1..].iter().all(|s| matches!(s.src, Src::Zero)) {
            let n = bits_num(&Bits(vec![first.clone()]), Some(false), elems)?;
            return Ok(n);
        }
        return Err("a value assembled from pieces used as a number".into());
    }
    let Seg { src, lo, len } = first;
    let (lo, len) = (*lo, *len);
    match src {
        Src::Zero => Ok(Rc::new(LaneExpr::Const(0))),
        Src::Undef => Err("reads bits that were never written".into()),
        Src::Num(e)
            if lo == 0 && len < 64 && e.range().is_some_and(|r| r.0 >= 0 && r.1 < 1 << len) =>
        {
            Ok(e.clone())
        }
        Src::Num(e) => {
            let shifted = if lo == 0 {
                e.clone()
            } else {
                Rc::new(LaneExpr::Bin(
                    BinOp::Shr,
                    e.clone(),
                    Rc::new(LaneExpr::Const(lo as i128)),
                ))
            };
            let natural = e.range().map(|r| r.0 < 0).unwrap_or(false);
            let s = signed.unwrap_or(natural);
            match Elem::from_bits(len, s) {
                Some(t) => {
                    let fits = shifted
                        .range()
                        .is_some_and(|r| t.min_value() <= r.0 && Some(r.1) <= t.max_value());
                    Ok(if fits {
                        shifted
                    } else {
                        Rc::new(LaneExpr::Wrap(t, shifted))
                    })
                }
                None if len < 64 => {
                    let mask = (1i128 << len) - 1;
                    Ok(Rc::new(LaneExpr::Bin(
                        BinOp::And,
                        shifted,
                        Rc::new(LaneExpr::Const(mask)),
                    )))
                }
                None => Err(format!("a {len}-bit value used as a number")),
            }
        }
        Src::Reg(k) if elems[*k] == Elem::Bool => {
            if len != 1 {
                return Err(format!("{len} bits of a mask used as a number"));
            }
            Ok(Rc::new(LaneExpr::Input {
                operand: *k,
                lane: lo,
                elem: Elem::Bool,
            }))
        }
        Src::Reg(k) => {
            let elem = elems[*k];
            let s = signed.unwrap_or(elem.is_signed());
            if let Some(t) = Elem::from_bits(len, s)
                && lo % len == 0
            {
                return Ok(Rc::new(LaneExpr::Input {
                    operand: *k,
                    lane: lo / len,
                    elem: t,
                }));
            }
            if len > 64 {
                return Err(format!("a {len}-bit slice of operand {k} used as a number"));
            }
            // A field inside one lane: the lane shifted and masked.
            let w = [elem.bits(), 8, 16, 32, 64]
                .into_iter()
                .find(|w| lo / w == (lo + len - 1) / w)
                .ok_or("a bit field across lanes")?;
            let lane = Rc::new(LaneExpr::Input {
                operand: *k,
                lane: lo / w,
                elem: Elem::from_bits(w, false).ok_or("bad width")?,
            });
            let shifted = if lo % w == 0 {
                lane
            } else {
                Rc::new(LaneExpr::Bin(
                    BinOp::Shr,
                    lane,
                    Rc::new(LaneExpr::Const((lo % w) as i128)),
                ))
            };
            Ok(Rc::new(LaneExpr::Bin(
                BinOp::And,
                shifted,
                Rc::new(LaneExpr::Const((1i128 << len) - 1)),
            )))
        }
    }
}
