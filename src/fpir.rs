//! Each FPIR operation defined as a composition of primitive integer operations, following
//! Pitchfork's Table 1 and Halide 21's lowering of its intrinsics.
//!
//! [`definition`] is the "semantics by expansion" of FPIR: it is what the lifting rules must
//! agree with, what a target without an instruction can fall back to, and (against the
//! direct evaluators in [`crate::interp::fpir`]) a check that we wrote both right. Only the
//! 64-bit definitions need the internal 128-bit types.

use crate::ir::{Expr, Op, mk, mk_typed};
use crate::types::{Elem, Type};

fn konst(t: Type, v: i128) -> Expr {
    Expr::splat(t, v).expect("constant fits by construction")
}

fn bin(op: Op, a: &Expr, b: &Expr) -> Expr {
    mk(op, vec![a.clone(), b.clone()])
}

fn select(c: &Expr, a: &Expr, b: &Expr) -> Expr {
    mk(Op::Select, vec![c.clone(), a.clone(), b.clone()])
}

/// `saturating_cast<to>(e)` as clamps and a wrapping cast. Only the bounds that `e`'s type
/// can actually exceed are clamped, so every constant is representable in `e`'s type.
pub fn saturating_cast_def(to: Elem, e: &Expr) -> Expr {
    let s = e.ty().elem;
    let mut v = e.clone();
    let to_max = to.max_value().expect("targets are at most 64 bits");
    let exceeds_max = match s.max_value() {
        None => true,
        Some(m) => m > to_max,
    };
    if exceeds_max {
        v = bin(Op::Min, &v, &konst(e.ty(), to_max));
    }
    if s.min_value() < to.min_value() {
        v = bin(Op::Max, &v, &konst(e.ty(), to.min_value()));
    }
    v.cast(to)
}

/// `rounding_shift_right(a, b)` as primitives: shift, then add back the most significant
/// dropped bit when the shift really went right. Exact for every amount (see DESIGN in
/// `docs/semantics.md`): the sum never overflows because the shifted value is at most half
/// the range.
pub fn rounding_shr_def(a: &Expr, b: &Expr) -> Expr {
    let ta = a.ty();
    let tb = b.ty();
    let went_right = bin(Op::Gt, b, &konst(tb, 0));
    let one_if = select(&went_right, &konst(ta, 1), &konst(ta, 0));
    let below = bin(Op::Shr, a, &bin(Op::Sub, b, &konst(tb, 1)));
    bin(Op::Add, &bin(Op::Shr, a, b), &bin(Op::And, &one_if, &below))
}

/// `rounding_shift_left(a, b)`: the mirror image; rounds only when the shift goes right.
pub fn rounding_shl_def(a: &Expr, b: &Expr) -> Expr {
    let ta = a.ty();
    let tb = b.ty();
    let went_right = if tb.elem.is_signed() {
        bin(Op::Lt, b, &konst(tb, 0))
    } else {
        // An unsigned amount never shifts right.
        konst(tb.with_elem(Elem::Bool), 0)
    };
    let one_if = select(&went_right, &konst(ta, 1), &konst(ta, 0));
    let below = bin(Op::Shl, a, &bin(Op::Add, b, &konst(tb, 1)));
    bin(Op::Add, &bin(Op::Shl, a, b), &bin(Op::And, &one_if, &below))
}

/// The definition of FPIR operation `op` with result type `out` applied to `args`, using
/// only non-FPIR operators. Panics if `op` is not an FPIR operation or the operands are
/// ill-typed for it (callers build `op(args)` first, which checks).
pub fn definition(op: &Op, out: Type, args: &[Expr]) -> Expr {
    let a = &args[0];
    let t = a.ty();
    let widened = |e: &Expr, elem: Elem| e.cast(elem);
    match op {
        Op::WideningAdd => bin(Op::Add, &widened(a, out.elem), &widened(&args[1], out.elem)),
        Op::WideningSub => bin(Op::Sub, &widened(a, out.elem), &widened(&args[1], out.elem)),
        Op::WideningMul => bin(Op::Mul, &widened(a, out.elem), &widened(&args[1], out.elem)),
        Op::WideningShl | Op::WideningShr => {
            let b = &args[1];
            let bw = Elem::from_bits(out.elem.bits(), b.ty().elem.is_signed()).expect("widened");
            let prim = if matches!(op, Op::WideningShl) {
                Op::Shl
            } else {
                Op::Shr
            };
            bin(prim, &widened(a, out.elem), &widened(b, bw))
        }
        Op::WidenRightAdd => bin(Op::Add, a, &widened(&args[1], t.elem)),
        Op::WidenRightSub => bin(Op::Sub, a, &widened(&args[1], t.elem)),
        Op::WidenRightMul => bin(Op::Mul, a, &widened(&args[1], t.elem)),
        Op::RoundingShr => rounding_shr_def(a, &args[1]),
        Op::RoundingShl => rounding_shl_def(a, &args[1]),
        Op::SaturatingAdd => {
            let w = t.elem.widen().expect("operands are at most 64 bits");
            let sum = bin(Op::Add, &widened(a, w), &widened(&args[1], w));
            saturating_cast_def(t.elem, &sum)
        }
        Op::SaturatingSub => {
            let w = t
                .elem
                .widen()
                .expect("operands are at most 64 bits")
                .with_signed(true);
            let diff = bin(Op::Sub, &widened(a, w), &widened(&args[1], w));
            saturating_cast_def(t.elem, &diff)
        }
        Op::SaturatingCast => saturating_cast_def(out.elem, a),
        Op::HalvingAdd | Op::RoundingHalvingAdd => {
            let w = t.elem.widen().expect("operands are at most 64 bits");
            let wt = t.with_elem(w);
            let mut sum = bin(Op::Add, &widened(a, w), &widened(&args[1], w));
            if matches!(op, Op::RoundingHalvingAdd) {
                sum = bin(Op::Add, &sum, &konst(wt, 1));
            }
            bin(Op::Div, &sum, &konst(wt, 2)).cast(t.elem)
        }
        Op::HalvingSub => {
            // Widening keeps the signedness here (Table 1), so unsigned differences wrap in
            // the wide type and the final narrowing wraps again, as Halide's does.
            let w = t.elem.widen().expect("operands are at most 64 bits");
            let wt = t.with_elem(w);
            let diff = bin(Op::Sub, &widened(a, w), &widened(&args[1], w));
            bin(Op::Div, &diff, &konst(wt, 2)).cast(t.elem)
        }
        Op::MulShiftRight | Op::RoundingMulShiftRight => {
            let w = t.elem.widen().expect("operands are at most 64 bits");
            let prod = bin(Op::Mul, &widened(a, w), &widened(&args[1], w));
            let q = widened(&args[2], w.to_unsigned());
            let shifted = if matches!(op, Op::RoundingMulShiftRight) {
                rounding_shr_def(&prod, &q)
            } else {
                bin(Op::Shr, &prod, &q)
            };
            saturating_cast_def(t.elem, &shifted)
        }
        // The larger minus the smaller, wrapping: the exact difference lies in
        // 0 .. 2^bits - 1, so its low bits are the unsigned result. Three operations every
        // target has (a comparison and a select would be four, and x86 has no unsigned
        // comparison).
        Op::Absd => {
            let b = &args[1];
            bin(Op::Sub, &bin(Op::Max, a, b), &bin(Op::Min, a, b)).cast(out.elem)
        }
        Op::Abs => {
            let zero = konst(t, 0);
            let gt = bin(Op::Gt, a, &zero);
            select(&gt, a, &bin(Op::Sub, &zero, a)).cast(out.elem)
        }
        _ => panic!("`{op}` is not an FPIR operation"),
    }
}

/// Expands every FPIR operation in `e` into its definition (recursively), leaving only
/// Halide's integer operators and shuffles.
pub fn expand_all(e: &Expr) -> Expr {
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, std::convert::Infallible> {
        if node.op().is_fpir() {
            Ok(definition(node.op(), node.ty(), &args))
        } else {
            Ok(node
                .with_args(args)
                .expect("rebuilding with same-typed operands"))
        }
    })
    .unwrap_or_else(|never| match never {})
}

/// The same operation with the given type as a typed node, for tests and tools that build
/// FPIR calls programmatically.
pub fn call(op: Op, out: Option<Type>, args: Vec<Expr>) -> Expr {
    match out {
        Some(t) => mk_typed(op, t, args),
        None => mk(op, args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{Env, Value, eval};
    use crate::types::USER_INT_ELEMS;
    use crate::util::rng::{SplitMix64, edge_cases};

    /// Lanes per evaluation: small enough that vectors stay out of mmap territory.
    const CHUNK: usize = 1 << 12;

    /// Evaluates `op` directly and through its definition on the given operand lanes and
    /// panics with a reproducible report at the first disagreement.
    fn agree(op: &Op, out: Option<Type>, elems: &[Elem], lanes: &[Vec<u128>]) {
        let n = lanes[0].len() as u32;
        let vars: Vec<Expr> = elems
            .iter()
            .enumerate()
            .map(|(i, e)| Expr::var(format!("a{i}"), Type::vec(*e, n)))
            .collect();
        let direct = Expr::build(op.clone(), out.map(|t| t.with_lanes(n)), vars.clone())
            .unwrap_or_else(|e| panic!("{op} on {elems:?}: {e}"));
        let def = definition(op, direct.ty(), &vars);
        assert!(
            !crate::ir::visit::any_node(&def, |x| x.op().is_fpir()),
            "definition of {op} uses FPIR"
        );
        let mut env = Env::new();
        for (i, (e, l)) in elems.iter().zip(lanes).enumerate() {
            env.set(
                format!("a{i}"),
                Value {
                    ty: Type::vec(*e, n),
                    lanes: l.clone(),
                },
            );
        }
        let x = eval(&direct, &env).expect("direct evaluation");
        let y = eval(&def, &env).expect("definition evaluation");
        if x != y {
            let i = (0..n as usize)
                .find(|&i| x.lanes[i] != y.lanes[i])
                .expect("some lane differs");
            let ins: Vec<String> = elems
                .iter()
                .zip(lanes)
                .map(|(e, l)| format!("{}:{e}", crate::interp::lane::to_i128(l[i], *e)))
                .collect();
            panic!(
                "{op} -> {}: direct {} but definition {} on inputs ({})",
                direct.ty().elem,
                x.int(i),
                y.int(i),
                ins.join(", ")
            );
        }
    }

    /// Every combination of operand values, in chunks, for small operand widths.
    fn exhaustive(op: &Op, out: Option<Type>, elems: &[Elem]) {
        let sizes: Vec<u128> = elems.iter().map(|e| 1u128 << e.bits()).collect();
        let total: u128 = sizes.iter().product();
        let mut start = 0u128;
        while start < total {
            let len = (total - start).min(CHUNK as u128) as usize;
            let mut cols: Vec<Vec<u128>> = vec![Vec::with_capacity(len); elems.len()];
            for k in 0..len as u128 {
                let mut idx = start + k;
                for (c, s) in cols.iter_mut().zip(&sizes) {
                    c.push(idx % s);
                    idx /= s;
                }
            }
            agree(op, out, elems, &cols);
            start += len as u128;
        }
    }

    /// All combinations of edge cases, then random lanes (a quarter of them edge cases)
    /// up to `count` inputs.
    fn random(op: &Op, out: Option<Type>, elems: &[Elem], count: usize, seed: u64) {
        let mut rng = SplitMix64::new(seed);
        let mut cols: Vec<Vec<u128>> = vec![Vec::new(); elems.len()];
        let edges: Vec<Vec<u128>> = elems.iter().map(|e| edge_cases(*e)).collect();
        let combos: usize = edges.iter().map(|e| e.len()).product();
        for k in 0..combos {
            let mut idx = k;
            for (c, e) in cols.iter_mut().zip(&edges) {
                c.push(e[idx % e.len()]);
                idx /= e.len();
            }
        }
        let mut done = 0;
        while done < count {
            while cols[0].len() < CHUNK {
                for (c, e) in cols.iter_mut().zip(elems) {
                    c.push(rng.lane(*e));
                }
            }
            agree(op, out, elems, &cols);
            done += cols[0].len();
            for c in cols.iter_mut() {
                c.clear();
            }
        }
    }

    const SAME_TYPE_BINARY: [Op; 8] = [
        Op::WideningAdd,
        Op::WideningSub,
        Op::SaturatingAdd,
        Op::SaturatingSub,
        Op::HalvingAdd,
        Op::HalvingSub,
        Op::RoundingHalvingAdd,
        Op::Absd,
    ];
    const SHIFTS: [Op; 4] = [
        Op::WideningShl,
        Op::WideningShr,
        Op::RoundingShl,
        Op::RoundingShr,
    ];
    const WIDEN_RIGHT: [Op; 3] = [Op::WidenRightAdd, Op::WidenRightSub, Op::WidenRightMul];

    fn both(bits: u32) -> [Elem; 2] {
        [
            Elem::from_bits(bits, false).unwrap(),
            Elem::from_bits(bits, true).unwrap(),
        ]
    }

    /// Calls `f(op, out, operand types)` for every FPIR operation at operand width `bits`.
    fn each_case(bits: u32, mut f: impl FnMut(&Op, Option<Type>, &[Elem])) {
        for t in both(bits) {
            for op in &SAME_TYPE_BINARY {
                f(op, None, &[t, t]);
            }
            f(&Op::Abs, None, &[t]);
            for u in both(bits) {
                f(&Op::WideningMul, None, &[t, u]);
                for op in &SHIFTS {
                    f(op, None, &[t, u]);
                }
            }
            f(&Op::MulShiftRight, None, &[t, t, t.to_unsigned()]);
            f(&Op::RoundingMulShiftRight, None, &[t, t, t.to_unsigned()]);
            for to in USER_INT_ELEMS {
                f(&Op::SaturatingCast, Some(Type::scalar(to)), &[t]);
            }
            if bits <= 32 {
                for w in both(bits * 2) {
                    for op in &WIDEN_RIGHT {
                        f(op, None, &[w, t]);
                    }
                }
            }
        }
    }

    #[test]
    fn fpir_definitions_match_exhaustively_at_8_bits() {
        each_case(8, |op, out, elems| {
            let total_bits: u32 = elems.iter().map(|e| e.bits()).sum();
            assert!(total_bits <= 24);
            exhaustive(op, out, elems);
        });
        // Every 16-bit source saturating to every narrower-or-equal type, exhaustively.
        for t in both(16) {
            for to in USER_INT_ELEMS {
                exhaustive(&Op::SaturatingCast, Some(Type::scalar(to)), &[t]);
            }
        }
    }

    #[test]
    fn fpir_definitions_match_on_random_and_edge_inputs_at_16_32_64_bits() {
        let mut seed = 1;
        for bits in [16, 32, 64] {
            each_case(bits, |op, out, elems| {
                seed += 1;
                random(op, out, elems, 1_000_000, seed);
            });
        }
    }

    #[test]
    fn a_wrong_definition_would_be_caught() {
        // The harness must be able to fail: compare halving_add with rounding_halving_add's
        // definition and expect a disagreement report.
        let t = Type::vec(Elem::U8, 2);
        let a = Expr::var("a", t);
        let b = Expr::var("b", t);
        let direct = mk(Op::HalvingAdd, vec![a.clone(), b.clone()]);
        let wrong = definition(&Op::RoundingHalvingAdd, t, &[a, b]);
        let mut env = Env::new();
        env.set("a", Value::from_ints(Elem::U8, &[1, 2]))
            .set("b", Value::from_ints(Elem::U8, &[2, 2]));
        assert_ne!(eval(&direct, &env).unwrap(), eval(&wrong, &env).unwrap());
    }
}
