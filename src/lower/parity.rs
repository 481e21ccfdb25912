//! Selects on the parity of the lane as interleavings.
//!
//! `select(x % 2 == 0, a, b)` with a condition that alternates lane by lane (a constant,
//! because the lanes' indices are known) takes the even lanes of `a` and the odd lanes of
//! `b`: it is `interleave(even(a), odd(b))`. Halide's simd_op_check writes the interleaving
//! of two vectors this way (`select(x % 2 == 0, in(x / 2), in((x + 16) / 2))`). Taking the
//! even or odd lanes is pushed through lane-wise operations into ramps and load indices,
//! where `ramp(0, 2, n) / 2` becomes the dense `ramp(0, 1, n)`: the two loads are then plain
//! vector loads and the interleaving one shuffle.

use crate::ir::{Expr, Op, mk, mk_typed};
use crate::types::{Elem, Type};

/// `e` with every parity select turned into an interleaving (see the module docs).
pub fn interleave_parity_selects(e: &Expr) -> Expr {
    let r: Result<Expr, crate::ir::TypeError> = crate::ir::visit::rebuild(e, |n, args| {
        let rebuilt = n.with_args(args.clone())?;
        if !matches!(n.op(), Op::Select) || n.ty().is_scalar() {
            return Ok(rebuilt);
        }
        let Some(even_first) = alternation(&args[0]) else {
            return Ok(rebuilt);
        };
        let (on_even, on_odd) = if even_first {
            (&args[1], &args[2])
        } else {
            (&args[2], &args[1])
        };
        let halves = vec![parity(on_even, false), parity(on_odd, true)];
        Ok(Expr::build(Op::Interleave, None, halves).unwrap_or(rebuilt))
    });
    r.unwrap_or_else(|_| e.clone())
}

/// For a constant condition of at least 4 lanes that alternates: whether lane 0 is true.
fn alternation(c: &Expr) -> Option<bool> {
    let lanes = c.ty().lanes;
    if lanes < 4 || !lanes.is_multiple_of(2) {
        return None;
    }
    let v = crate::interp::eval_closed(c)?;
    let first = v.lanes[0] != 0;
    let alternates = v
        .lanes
        .iter()
        .enumerate()
        .all(|(i, &b)| (b != 0) == (first == i.is_multiple_of(2)));
    alternates.then_some(first)
}

/// The even (`odd == false`) or odd lanes of `e`, with the slice pushed into ramps, loads
/// and lane-wise operations.
fn parity(e: &Expr, odd: bool) -> Expr {
    let t = e.ty();
    let h = t.lanes / 2;
    let slice = || {
        mk_typed(
            Op::Slice {
                start: odd as u32,
                stride: 2,
            },
            t.with_lanes(h),
            vec![e.clone()],
        )
    };
    match e.op() {
        Op::Broadcast if e.arg(0).ty().is_scalar() => e.arg(0).broadcast(h),
        Op::Ramp => match e.arg(1).as_const() {
            Some(s) => {
                let base = if odd {
                    super::lanes::add_i32(e.arg(0), e.arg(1))
                } else {
                    e.arg(0).clone()
                };
                let stride = Expr::int(t.elem, 2 * s).unwrap_or_else(|_| e.arg(1).clone());
                mk_typed(Op::Ramp, t.with_lanes(h), vec![base, stride])
            }
            None => slice(),
        },
        Op::Load(buf, align) => {
            let idx = dense_index(&parity(e.arg(0), odd));
            mk_typed(Op::Load(buf.clone(), *align), t.with_lanes(h), vec![idx])
        }
        _ if super::lanes::lane_wise(e) => {
            super::lanes::rebuild_lanes(e, h, |a| parity(a, odd)).unwrap_or_else(slice)
        }
        _ => slice(),
    }
}

/// An index vector written as `ramp(base, stride)` when it is one: ramps and broadcasts
/// combined by `+`, and shifted right or divided by a constant that divides the stride
/// (then `(b + s*i) / c` is `b / c + (s / c) * i` exactly, rounding down in both).
fn dense_index(idx: &Expr) -> Expr {
    let Some((base, stride)) = ramp_form(idx) else {
        return idx.clone();
    };
    let stride = Expr::int(Elem::I32, stride as i128).expect("index strides fit in i32");
    mk_typed(
        Op::Ramp,
        Type::vec(Elem::I32, idx.ty().lanes),
        vec![base, stride],
    )
}

fn ramp_form(e: &Expr) -> Option<(Expr, i64)> {
    if e.ty().elem != Elem::I32 {
        return None;
    }
    if e.ty().is_scalar() {
        return Some((e.clone(), 0));
    }
    let by_const = |e: &Expr| -> Option<(Expr, i64)> {
        let k = e.arg(1).as_const().or_else(|| {
            matches!(e.arg(1).op(), Op::Broadcast).then(|| e.arg(1).arg(0).as_const())?
        })?;
        Some((e.arg(0).clone(), k as i64))
    };
    match e.op() {
        Op::Ramp => Some((e.arg(0).clone(), e.arg(1).as_const()? as i64)),
        Op::Broadcast if e.arg(0).ty().is_scalar() => Some((e.arg(0).clone(), 0)),
        Op::Add => {
            let (a, s) = ramp_form(e.arg(0))?;
            let (b, t) = ramp_form(e.arg(1))?;
            Some((super::lanes::add_i32(&a, &b), s + t))
        }
        Op::Shr => {
            let (x, k) = by_const(e)?;
            let (b, s) = ramp_form(&x)?;
            if !(0..31).contains(&k) || s % (1 << k) != 0 {
                return None;
            }
            Some((scalar_op(Op::Shr, &b, k), s >> k))
        }
        Op::Div => {
            let (x, c) = by_const(e)?;
            let (b, s) = ramp_form(&x)?;
            if c <= 0 || s % c != 0 {
                return None;
            }
            Some((scalar_op(Op::Div, &b, c), s / c))
        }
        _ => None,
    }
}

/// `b op k` for a scalar index `b`, folded when `b` is constant.
fn scalar_op(op: Op, b: &Expr, k: i64) -> Expr {
    let kc = Expr::int(Elem::I32, k as i128).expect("small constants fit in i32");
    let e = mk(op, vec![b.clone(), kc]);
    match crate::interp::eval(&e, &crate::interp::Env::new()) {
        Ok(v) if b.as_const().is_some() => Expr::bits(Elem::I32, v.lanes[0]),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::super::prepare::tests::entry;
    use super::*;

    #[test]
    fn a_parity_select_of_halved_loads_is_an_interleaving_of_dense_loads() {
        let e = entry(
            "select((x % 2) == 0, (uint8)in_u8(x/2), (uint8)in_u8((x + 16)/2))",
            32,
        );
        let r = interleave_parity_selects(&e);
        assert!(matches!(r.op(), Op::Interleave), "{r}");
        let text = r.to_string();
        assert!(
            text.contains("ramp(0, 1, 16)") && text.contains("ramp(8, 1, 16)"),
            "{text}"
        );
        // The same lanes as the select, on inputs the interpreter fills.
        let mut env = crate::interp::Env::new();
        env.set_buffer(
            "in_u8",
            crate::interp::Buffer::Random {
                elem: Elem::U8,
                seed: 7,
                range: None,
            },
        );
        let want = crate::interp::eval(&e, &env).unwrap();
        let got = crate::interp::eval(&r, &env).unwrap();
        assert_eq!(want.lanes, got.lanes);
    }

    #[test]
    fn other_selects_stay() {
        let e = entry(
            "select((x % 3) == 0, (uint8)in_u8(x), (uint8)in_u8(x + 1))",
            32,
        );
        let r = interleave_parity_selects(&e);
        assert!(matches!(r.op(), Op::Select), "{r}");
    }
}
