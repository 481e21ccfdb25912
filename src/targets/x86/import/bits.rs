//! Bit strings during symbolic evaluation: a value as segments of registers, computed
//! numbers and zeros, so that slicing and partial writes (`dst[i+15:i] := ...`) are exact.

use std::rc::Rc;

use crate::isa::import::lanes::LaneExpr;

/// Where the bits of a segment come from.
#[derive(Clone, Debug)]
pub(super) enum Src {
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
pub(super) struct Seg {
    pub(super) src: Src,
    pub(super) lo: u32,
    pub(super) len: u32,
}

/// A bit string, lowest segment first.
#[derive(Clone, Debug, Default)]
pub(super) struct Bits(pub(super) Vec<Seg>);

impl Bits {
    pub(super) fn width(&self) -> u32 {
        self.0.iter().map(|s| s.len).sum()
    }

    /// Bits `lo .. lo + len` (past the end reads zeros).
    pub(super) fn sub(&self, lo: u32, len: u32) -> Bits {
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
    pub(super) fn write(&self, lo: u32, v: Bits) -> Bits {
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
