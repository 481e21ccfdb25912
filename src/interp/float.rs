//! IEEE-754 single semantics of `f32` lanes: the one definition of float arithmetic in
//! harrow, used by the interpreter and by the float vectorizer's scalar DAG
//! (`crate::float::dag`) alike.
//!
//! A lane holds the float's bit pattern in its low 32 bits. Rust's `f32` operations are
//! IEEE-754 binary32 operations rounded to nearest even; `sqrt` is correctly rounded and
//! `mul_add` is the fused multiply-add (one rounding), which is what C's `float`
//! arithmetic, `sqrtf` and `fmaf` mean on every harrow target (FLT_EVAL_METHOD 0). A NaN's
//! payload is not part of the meaning: results are compared with [`same_result`].

/// The float a lane holds.
pub fn from_lane(bits: u128) -> f32 {
    f32::from_bits(bits as u32)
}

/// The lane holding `x`.
pub fn to_lane(x: f32) -> u128 {
    x.to_bits() as u128
}

/// The four rounded binary operations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Binary {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (IEEE: infinities and NaN for a zero divisor, unlike integer division).
    Div,
}

/// `a op b` rounded to nearest even.
pub fn binary(op: Binary, a: f32, b: f32) -> f32 {
    match op {
        Binary::Add => a + b,
        Binary::Sub => a - b,
        Binary::Mul => a * b,
        Binary::Div => a / b,
    }
}

/// The sign flipped (exact, also of zeros, infinities and NaN).
pub fn neg(a: f32) -> f32 {
    -a
}

/// The correctly rounded square root (NaN below zero, `-0` of `-0`).
pub fn sqrt(a: f32) -> f32 {
    a.sqrt()
}

/// `a * b + c` rounded once.
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// Whether two results are the same: equal bits, or both NaN (a NaN's payload is not part
/// of C's meaning, and the targets propagate payloads differently).
pub fn same_result(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The float's shortest text that reads back to the same bits (`1.5`, `-0.0`, `inf`,
/// `nan`), as the printers and `harrow eval` write lanes.
pub fn text(x: f32) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_rounds_once_and_the_separate_operations_twice() {
        // x = 1 + 2^-12: x * x - 1 is exactly 2^-11 + 2^-24, a float; the rounded product
        // loses its 2^-24 term (a tie, to even).
        let x = 1.0 + 2f32.powi(-12);
        let exact = 2f32.powi(-11) + 2f32.powi(-24);
        assert_eq!(fma(x, x, -1.0), exact);
        let twice = binary(Binary::Add, binary(Binary::Mul, x, x), -1.0);
        assert_eq!(twice, 2f32.powi(-11));
        assert_ne!(twice, exact);
    }

    #[test]
    fn ieee_corner_cases() {
        assert_eq!(binary(Binary::Div, 1.0, 0.0), f32::INFINITY);
        assert!(binary(Binary::Div, 0.0, 0.0).is_nan());
        assert_eq!(neg(0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sqrt(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!(sqrt(-1.0).is_nan());
        // Round to nearest even: 2^24 + 1 is not a float; the tie goes to the even 2^24.
        assert_eq!(binary(Binary::Add, 16_777_216.0, 1.0), 16_777_216.0);
        assert!(same_result(f32::NAN, -f32::NAN));
        assert!(!same_result(0.0, -0.0));
        assert_eq!(text(-0.0), "-0.0");
        assert_eq!(text(0.1), "0.1");
        assert_eq!(text(f32::NEG_INFINITY), "-inf");
    }
}
