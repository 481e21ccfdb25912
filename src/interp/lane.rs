//! Exact arithmetic on single lanes.
//!
//! A lane is held as its bit pattern zero-extended to `u128` ("canonical bits": nothing set
//! above the element width). Every function here takes and returns canonical bits; the
//! element type says how to read them.

use crate::types::Elem;

pub use crate::types::{from_i128, to_i128};

/// Clamps an exact integer into `elem`'s range.
pub fn saturate(v: i128, elem: Elem) -> u128 {
    let lo = elem.min_value();
    let v = v.max(lo);
    let v = match elem.max_value() {
        Some(hi) => v.min(hi),
        None => v,
    };
    from_i128(v, elem)
}

/// Clamps an exact unsigned 128-bit value into `elem`'s range.
pub fn saturate_u128(v: u128, elem: Elem) -> u128 {
    match elem.max_value() {
        Some(hi) if v > hi as u128 => hi as u128,
        _ => v & elem.mask(),
    }
}

/// Wrapping conversion between element types: sign- or zero-extend by the source type,
/// then truncate. Converting to `bool` tests for non-zero (Halide's cast to bool).
pub fn cast(bits: u128, from: Elem, to: Elem) -> u128 {
    if to == Elem::Bool {
        return (bits != 0) as u128;
    }
    let extended = if from.is_signed() {
        to_i128(bits, from) as u128
    } else {
        bits
    };
    extended & to.mask()
}

/// The shift amount held in `bits` of type `elem`, as an exact value clamped to ±2^100
/// (every amount that large behaves like any larger one).
pub fn shift_amount(bits: u128, elem: Elem) -> i128 {
    const CAP: i128 = 1 << 100;
    if elem.is_signed() {
        to_i128(bits, elem).clamp(-CAP, CAP)
    } else if bits > CAP as u128 {
        CAP
    } else {
        bits as i128
    }
}

/// `a << n` for `n >= 0`: multiplication by 2^n, wrapping; amounts of the width or more
/// give 0 (the value's every bit has been shifted out).
pub fn shl_by(a: u128, n: i128, elem: Elem) -> u128 {
    debug_assert!(n >= 0);
    if n >= elem.bits() as i128 {
        0
    } else {
        (a << n) & elem.mask()
    }
}

/// `a >> n` for `n >= 0`: floor division by 2^n. Amounts of the width or more give 0, or
/// -1 for negative signed values (every bit is a copy of the sign).
pub fn shr_by(a: u128, n: i128, elem: Elem) -> u128 {
    debug_assert!(n >= 0);
    if elem.is_signed() {
        let v = to_i128(a, elem);
        let n = n.min(127) as u32;
        from_i128(v >> n, elem)
    } else if n >= elem.bits() as i128 {
        0
    } else {
        a >> n
    }
}

/// Halide's shift left: a negative amount shifts right instead.
pub fn shl(a: u128, n: i128, elem: Elem) -> u128 {
    if n >= 0 {
        shl_by(a, n, elem)
    } else {
        shr_by(a, -n, elem)
    }
}

/// Halide's shift right: a negative amount shifts left instead.
pub fn shr(a: u128, n: i128, elem: Elem) -> u128 {
    if n >= 0 {
        shr_by(a, n, elem)
    } else {
        shl_by(a, -n, elem)
    }
}

/// Signed-aware comparison of two lanes of the same type.
pub fn cmp(a: u128, b: u128, elem: Elem) -> std::cmp::Ordering {
    if elem.is_signed() {
        to_i128(a, elem).cmp(&to_i128(b, elem))
    } else {
        a.cmp(&b)
    }
}

/// Halide division: the quotient for which the remainder is non-negative (so it rounds
/// toward negative infinity for positive divisors); division by zero gives zero.
pub fn div(a: u128, b: u128, elem: Elem) -> u128 {
    if b == 0 {
        // Halide defines x / 0 == 0 so that division never traps.
        return 0;
    }
    if elem.is_signed() {
        let (x, y) = (to_i128(a, elem), to_i128(b, elem));
        // Euclidean division; wrapping covers MIN / -1, which wraps as in Halide.
        from_i128(x.wrapping_div_euclid(y), elem)
    } else {
        a / b
    }
}

/// Halide modulus: always in `0..|b|`; modulus by zero gives zero.
pub fn rem(a: u128, b: u128, elem: Elem) -> u128 {
    if b == 0 {
        // Halide defines x % 0 == 0, the partner of x / 0 == 0.
        return 0;
    }
    if elem.is_signed() {
        let (x, y) = (to_i128(a, elem), to_i128(b, elem));
        from_i128(x.wrapping_rem_euclid(y), elem)
    } else {
        a % b
    }
}

/// Number of set bits.
pub fn popcount(a: u128) -> u128 {
    a.count_ones() as u128
}

/// Leading zero bits within the element width (the width itself for zero).
pub fn clz(a: u128, elem: Elem) -> u128 {
    (a.leading_zeros() - (128 - elem.bits())) as u128
}

/// Trailing zero bits (the element width for zero).
pub fn ctz(a: u128, elem: Elem) -> u128 {
    if a == 0 {
        elem.bits() as u128
    } else {
        a.trailing_zeros() as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halide_division_rounds_to_a_non_negative_remainder() {
        let e = Elem::I8;
        let c = |v: i128| from_i128(v, e);
        assert_eq!(to_i128(div(c(-7), c(2), e), e), -4);
        assert_eq!(to_i128(rem(c(-7), c(2), e), e), 1);
        assert_eq!(to_i128(div(c(-7), c(-2), e), e), 4);
        assert_eq!(to_i128(rem(c(-7), c(-2), e), e), 1);
        assert_eq!(to_i128(div(c(7), c(0), e), e), 0);
        assert_eq!(to_i128(rem(c(7), c(0), e), e), 0);
        assert_eq!(to_i128(div(c(-128), c(-1), e), e), -128);
    }

    #[test]
    fn shifts_reverse_on_negative_and_saturate_when_over_wide() {
        let e = Elem::I8;
        let m = from_i128(-64, e);
        assert_eq!(to_i128(shr(m, 3, e), e), -8);
        assert_eq!(to_i128(shl(m, -3, e), e), -8);
        assert_eq!(to_i128(shr(m, 100, e), e), -1);
        assert_eq!(shl(m, 8, e), 0);
        assert_eq!(shr(200, 8, Elem::U8), 0);
        assert_eq!(shl(3, 9, Elem::U8), 0);
        assert_eq!(shift_amount(0xff, Elem::I8), -1);
        assert_eq!(shift_amount(0xff, Elem::U8), 255);
    }

    #[test]
    fn casts_extend_by_source_type() {
        assert_eq!(cast(0x80, Elem::I8, Elem::I16), 0xff80);
        assert_eq!(cast(0x80, Elem::U8, Elem::I16), 0x0080);
        assert_eq!(cast(0x1234, Elem::U16, Elem::U8), 0x34);
        assert_eq!(cast(0x100, Elem::U16, Elem::Bool), 1);
    }

    #[test]
    fn bit_counts() {
        assert_eq!(clz(1, Elem::U16), 15);
        assert_eq!(clz(0, Elem::U8), 8);
        assert_eq!(ctz(0, Elem::U32), 32);
        assert_eq!(popcount(0xff), 8);
    }
}
