//! Direct evaluators of the FPIR operations, one lane at a time, in exact integer arithmetic.
//!
//! These are written independently of the compositional definitions in [`crate::fpir`]
//! (which follow Pitchfork's Table 1) so that the test comparing the two means something.
//! Operands are at most 64 bits wide, so every exact intermediate fits in `i128`, except the
//! product of two `u64`s, which is handled in `u128`.

use super::lane::{self, from_i128, saturate, saturate_u128, to_i128};
use crate::ir::Op;
use crate::types::Elem;

/// Floor division by 2^n for n >= 0, exact for every `i128` (an arithmetic shift by 127
/// already leaves only copies of the sign bit).
fn floor_shr(v: i128, n: i128) -> i128 {
    v >> n.min(127)
}

/// `floor((v + 2^(n-1)) / 2^n)`: round to nearest, ties up. For n <= 0, a wrapping left shift
/// of the original lane (Halide's implemented meaning: a negative rounding right shift is a
/// plain left shift).
fn round_shr_exact(a: u128, elem: Elem, n: i128) -> u128 {
    if n <= 0 {
        return lane::shl_by(a, -n, elem);
    }
    let v = to_i128(a, elem);
    if n >= 100 {
        // |v| < 2^64 < 2^(n-1), so v + 2^(n-1) lies in (0, 2^n): the result is 0.
        return 0;
    }
    let r = (v + (1i128 << (n - 1))) >> n;
    from_i128(r, elem)
}

/// Evaluates one lane of an FPIR operation. `args` are the operand lanes with their element
/// types; `out` is the result element type (the node's type).
pub fn eval_lane(op: &Op, out: Elem, args: &[(u128, Elem)]) -> u128 {
    let v = |i: usize| to_i128(args[i].0, args[i].1);
    match op {
        Op::WideningAdd => from_i128(v(0) + v(1), out),
        Op::WideningSub => from_i128(v(0) - v(1), out),
        Op::WideningMul => {
            let (a, b) = (args[0], args[1]);
            if !a.1.is_signed() && !b.1.is_signed() {
                // Unsigned: the product of two u64 needs all 128 bits.
                (a.0.wrapping_mul(b.0)) & out.mask()
            } else {
                // At least one side signed: |product| < 2^127 for 64-bit operands.
                from_i128(v(0) * v(1), out)
            }
        }
        Op::WideningShl | Op::WideningShr => {
            let wide = lane::cast(args[0].0, args[0].1, out);
            let n = lane::shift_amount(args[1].0, args[1].1);
            if matches!(op, Op::WideningShl) {
                lane::shl(wide, n, out)
            } else {
                lane::shr(wide, n, out)
            }
        }
        Op::WidenRightAdd | Op::WidenRightSub | Op::WidenRightMul => {
            let a = v(0);
            let b = v(1);
            let r = match op {
                Op::WidenRightAdd => a.wrapping_add(b),
                Op::WidenRightSub => a.wrapping_sub(b),
                _ => a.wrapping_mul(b),
            };
            from_i128(r, out)
        }
        Op::RoundingShr => {
            let n = lane::shift_amount(args[1].0, args[1].1);
            round_shr_exact(args[0].0, args[0].1, n)
        }
        Op::RoundingShl => {
            let n = lane::shift_amount(args[1].0, args[1].1);
            if n >= 0 {
                lane::shl_by(args[0].0, n, out)
            } else {
                round_shr_exact(args[0].0, args[0].1, -n)
            }
        }
        Op::SaturatingAdd => saturate(v(0) + v(1), out),
        Op::SaturatingSub => saturate(v(0) - v(1), out),
        Op::SaturatingCast => saturate(v(0), out),
        Op::HalvingAdd => from_i128((v(0) + v(1)).div_euclid(2), out),
        Op::RoundingHalvingAdd => from_i128((v(0) + v(1) + 1).div_euclid(2), out),
        // The exact half-difference may not fit (0 - 255 for u8); it wraps, as Halide's does.
        Op::HalvingSub => from_i128((v(0) - v(1)).div_euclid(2), out),
        Op::MulShiftRight | Op::RoundingMulShiftRight => {
            let rounding = matches!(op, Op::RoundingMulShiftRight);
            let q = lane::shift_amount(args[2].0, args[2].1);
            let elem = args[0].1;
            if !elem.is_signed() {
                let p = args[0].0.wrapping_mul(args[1].0);
                let mut r = if q >= 128 { 0 } else { p >> q };
                if rounding && q >= 1 && q - 1 < 128 {
                    r += (p >> (q - 1)) & 1;
                }
                saturate_u128(r, out)
            } else {
                let p = v(0) * v(1);
                let r = if rounding {
                    if q == 0 {
                        p
                    } else {
                        // Rounding term taken from the bit below the cut, so nothing overflows.
                        floor_shr(p, q) + (floor_shr(p, q - 1) & 1)
                    }
                } else {
                    floor_shr(p, q)
                };
                saturate(r, out)
            }
        }
        Op::Absd => from_i128((v(0) - v(1)).abs(), out),
        Op::Abs => from_i128(v(0).abs(), out),
        _ => unreachable!("eval_lane called on non-FPIR operator {op}"),
    }
}
