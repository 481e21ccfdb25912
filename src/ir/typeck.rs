//! Type inference for one IR node from its operator, operand types and (where the operator
//! needs it) an explicit result type. Every node constructor goes through [`infer`], so an
//! ill-typed [`super::Expr`] cannot exist.

use super::op::Op;
use crate::types::{Elem, Type};

/// Infers the result type of `op` applied to operands of types `args`.
///
/// `given` is the result type the caller states; it is required for operators whose type is
/// not implied by their operands (casts, constants, variables, broadcasts, slices, ...), and
/// checked against the inferred type for every other operator when present.
pub fn infer(op: &Op, given: Option<Type>, args: &[Type]) -> Result<Type, String> {
    if let Some(n) = op.info().arity {
        if args.len() != n {
            return Err(format!(
                "`{}` takes {} operand{}, found {}",
                op.name(),
                n,
                if n == 1 { "" } else { "s" },
                args.len()
            ));
        }
    } else if args.is_empty() {
        return Err(format!("`{}` needs at least one operand", op.name()));
    }
    let need = |what: &str| -> Result<Type, String> {
        given.ok_or_else(|| format!("`{}` needs an explicit {what}", op.name()))
    };
    let inferred = match op {
        Op::Const(bits) => {
            let t = need("type")?;
            if !t.is_scalar() {
                return Err("constants are scalars; broadcast them to make vectors".into());
            }
            if bits & !t.elem.mask() != 0 {
                return Err(format!("constant bit pattern {bits:#x} does not fit {t}"));
            }
            t
        }
        Op::Var(_) => need("type")?,
        Op::Load(..) => {
            let t = need("element type")?;
            if t.elem.is_float() {
                return Err(format!(
                    "loads of {t} are not in harrow IR; buffers hold integers"
                ));
            }
            let idx = args[0];
            if idx.elem != Elem::I32 {
                return Err(format!("a load index must be i32, found {idx}"));
            }
            if t.lanes != idx.lanes {
                return Err(format!(
                    "a load of {t} needs {} index lanes, found {}",
                    t.lanes, idx.lanes
                ));
            }
            t
        }
        Op::Ramp => {
            let t = need("lane count")?;
            let (b, s) = (args[0], args[1]);
            if !b.is_scalar() || !s.is_scalar() {
                return Err("ramp base and stride must be scalars".into());
            }
            if b != s || !b.elem.is_int() {
                return Err(format!(
                    "ramp base and stride must have the same integer type, found {b} and {s}"
                ));
            }
            if t.elem != b.elem {
                return Err(format!("ramp of {} cannot have type {t}", b.elem));
            }
            t
        }
        Op::Broadcast => {
            let t = need("lane count")?;
            let a = args[0];
            if t.elem != a.elem || t.lanes % a.lanes != 0 {
                return Err(format!("cannot broadcast {a} to {t}"));
            }
            t
        }
        Op::Cast => {
            let t = need("type")?;
            if t.elem.is_float() || args[0].elem.is_float() {
                return Err(format!(
                    "conversions between floats and integers are not in harrow IR ({} to {t})",
                    args[0]
                ));
            }
            if t.lanes != args[0].lanes {
                return Err(format!(
                    "a cast keeps the lane count: {} cannot become {t}",
                    args[0]
                ));
            }
            t
        }
        Op::Reinterpret => {
            let t = need("type")?;
            if t.total_bits() != args[0].total_bits() || t.elem == Elem::Bool {
                return Err(format!(
                    "reinterpret needs the same total width: {} ({} bits) vs {t} ({} bits)",
                    args[0],
                    args[0].total_bits(),
                    t.total_bits()
                ));
            }
            if args[0].elem == Elem::Bool {
                return Err("cannot reinterpret bool lanes; cast them instead".into());
            }
            t
        }
        // IEEE arithmetic on floats: the four operations the float vectorizer needs.
        Op::Add | Op::Sub | Op::Mul | Op::Div if args[0].elem.is_float() => {
            same(op, args[0], args[1])?;
            args[0]
        }
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod | Op::Min | Op::Max => {
            same_int(op, args[0], args[1])?
        }
        Op::And | Op::Or | Op::Xor => {
            same(op, args[0], args[1])?;
            not_float(op, args[0])?
        }
        Op::Not => not_float(op, args[0])?,
        Op::FNeg | Op::Sqrt => float(op, args[0])?,
        Op::Fma => {
            same(op, args[0], args[1])?;
            same(op, args[0], args[2])?;
            float(op, args[0])?
        }
        Op::Shl | Op::Shr | Op::RoundingShl | Op::RoundingShr => {
            shift_amount(op, args[0], args[1])?
        }
        Op::Eq | Op::Ne => {
            same(op, args[0], args[1])?;
            not_float(op, args[0])?.with_elem(Elem::Bool)
        }
        Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            same_int(op, args[0], args[1])?;
            args[0].with_elem(Elem::Bool)
        }
        Op::Select => {
            let (c, a, b) = (args[0], args[1], args[2]);
            if c.elem != Elem::Bool {
                return Err(format!("select condition must be bool, found {c}"));
            }
            same(op, a, b)?;
            if c.lanes != a.lanes {
                return Err(format!(
                    "select condition has {} lanes but the values have {}",
                    c.lanes, a.lanes
                ));
            }
            a
        }
        Op::Let(_) => args[1],
        Op::WideningAdd => widen(op, same_int(op, args[0], args[1])?)?,
        Op::WideningSub => {
            let t = widen(op, same_int(op, args[0], args[1])?)?;
            t.with_elem(t.elem.with_signed(true))
        }
        Op::WideningMul => {
            let (a, b) = (args[0], args[1]);
            int(op, a)?;
            int(op, b)?;
            if a.lanes != b.lanes || a.elem.bits() != b.elem.bits() {
                return Err(format!(
                    "`widening_mul` needs operands of the same width and lanes, found {a} and {b}"
                ));
            }
            let signed = a.elem.is_signed() || b.elem.is_signed();
            let w = widen(op, a)?;
            w.with_elem(w.elem.with_signed(signed))
        }
        Op::WideningShl | Op::WideningShr => widen(op, shift_amount(op, args[0], args[1])?)?,
        Op::WidenRightAdd | Op::WidenRightSub | Op::WidenRightMul => {
            let (a, b) = (args[0], args[1]);
            int(op, a)?;
            int(op, b)?;
            if a.lanes != b.lanes || a.elem.bits() != 2 * b.elem.bits() {
                return Err(format!(
                    "`{}` needs its first operand twice as wide as the second, found {a} and {b}",
                    op.name()
                ));
            }
            a
        }
        Op::SaturatingAdd
        | Op::SaturatingSub
        | Op::HalvingAdd
        | Op::HalvingSub
        | Op::RoundingHalvingAdd => same_int(op, args[0], args[1])?,
        Op::SaturatingCast => {
            let t = need("target type")?;
            int(op, args[0])?;
            if !t.elem.is_int() || t.lanes != args[0].lanes {
                return Err(format!("cannot saturating_cast {} to {t}", args[0]));
            }
            t
        }
        Op::MulShiftRight | Op::RoundingMulShiftRight => {
            let t = same_int(op, args[0], args[1])?;
            let q = args[2];
            if q.elem.is_signed() || !q.elem.is_int() {
                return Err(format!(
                    "the shift of `{}` must be unsigned, found {q}",
                    op.name()
                ));
            }
            if q.lanes != t.lanes || q.elem.bits() != t.elem.bits() {
                return Err(format!(
                    "the shift of `{}` must have the operands' width and lanes ({}), found {q}",
                    op.name(),
                    t.with_elem(t.elem.to_unsigned())
                ));
            }
            t
        }
        Op::Absd => {
            let t = same_int(op, args[0], args[1])?;
            t.with_elem(t.elem.to_unsigned())
        }
        Op::Abs => {
            let t = int(op, args[0])?;
            t.with_elem(t.elem.to_unsigned())
        }
        Op::Popcount | Op::CountLeadingZeros | Op::CountTrailingZeros => int(op, args[0])?,
        Op::Slice { start, stride } => {
            let t = need("lane count")?;
            let a = args[0];
            if t.elem != a.elem {
                return Err(format!("a slice of {a} cannot have type {t}"));
            }
            if *stride == 0 {
                return Err("slice stride must be at least 1".into());
            }
            let last = *start as u64 + *stride as u64 * (t.lanes as u64 - 1);
            if last >= a.lanes as u64 {
                return Err(format!(
                    "slice reads lane {last} of a {}-lane vector",
                    a.lanes
                ));
            }
            t
        }
        Op::Concat => {
            let elem = args[0].elem;
            let mut lanes = 0u64;
            for a in args {
                if a.elem != elem {
                    return Err(format!(
                        "concat_vectors needs one element type, found {} and {}",
                        args[0], a
                    ));
                }
                lanes += a.lanes as u64;
            }
            Type::vec(elem, lanes_u32(lanes)?)
        }
        Op::Interleave => {
            for a in args {
                same(op, args[0], *a)?;
            }
            Type::vec(
                args[0].elem,
                lanes_u32(args[0].lanes as u64 * args.len() as u64)?,
            )
        }
        Op::Shuffle(idx) => {
            let elem = args[0].elem;
            let mut total = 0u64;
            for a in args {
                if a.elem != elem {
                    return Err(format!(
                        "shuffle needs one element type, found {} and {}",
                        args[0], a
                    ));
                }
                total += a.lanes as u64;
            }
            if idx.is_empty() {
                return Err("shuffle needs at least one index".into());
            }
            if let Some(bad) = idx.iter().find(|&&i| i as u64 >= total) {
                return Err(format!(
                    "shuffle index {bad} is out of range for {total} input lanes"
                ));
            }
            Type::vec(elem, lanes_u32(idx.len() as u64)?)
        }
        Op::Instr(ins) => {
            if args.len() != ins.params.len() {
                return Err(format!(
                    "`{}` takes {} operands, found {}",
                    ins.intrinsic,
                    ins.params.len(),
                    args.len()
                ));
            }
            for (i, (a, p)) in args.iter().zip(&ins.params).enumerate() {
                if a != p {
                    return Err(format!(
                        "operand {} of `{}` must be {p}, found {a}",
                        i + 1,
                        ins.intrinsic
                    ));
                }
            }
            ins.result
        }
        Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
            let t = need("result type")?;
            let a = int(op, args[0])?;
            if t.elem != a.elem || a.lanes % t.lanes != 0 {
                return Err(format!("cannot reduce {a} to {t}"));
            }
            t
        }
    };
    if let Some(g) = given
        && g != inferred
    {
        return Err(format!("`{}` produces {inferred} here, not {g}", op.name()));
    }
    Ok(inferred)
}

fn lanes_u32(l: u64) -> Result<u32, String> {
    u32::try_from(l).map_err(|_| format!("{l} lanes is too many"))
}

fn int(op: &Op, t: Type) -> Result<Type, String> {
    if t.elem.is_int() {
        Ok(t)
    } else {
        Err(format!("`{}` needs integer operands, found {t}", op.name()))
    }
}

fn float(op: &Op, t: Type) -> Result<Type, String> {
    if t.elem.is_float() {
        Ok(t)
    } else {
        Err(format!("`{}` needs float operands, found {t}", op.name()))
    }
}

/// Bitwise operations and equality are integer operations: a float is reinterpreted first.
fn not_float(op: &Op, t: Type) -> Result<Type, String> {
    if t.elem.is_float() {
        Err(format!(
            "`{}` is not defined on {t}; reinterpret the float as an integer first",
            op.name()
        ))
    } else {
        Ok(t)
    }
}

fn same(op: &Op, a: Type, b: Type) -> Result<Type, String> {
    if a == b {
        Ok(a)
    } else {
        Err(format!(
            "`{}` needs operands of one type, found {a} and {b}",
            op.name()
        ))
    }
}

fn same_int(op: &Op, a: Type, b: Type) -> Result<Type, String> {
    int(op, same(op, a, b)?)
}

fn widen(op: &Op, t: Type) -> Result<Type, String> {
    match t.elem.widen() {
        Some(w) => Ok(t.with_elem(w)),
        None => Err(format!("`{}` cannot widen {t}", op.name())),
    }
}

/// Shift amounts have the shifted value's width and lanes; their signedness is free
/// (a signed negative amount reverses the direction).
fn shift_amount(op: &Op, a: Type, b: Type) -> Result<Type, String> {
    int(op, a)?;
    int(op, b)?;
    if a.lanes != b.lanes || a.elem.bits() != b.elem.bits() {
        return Err(format!(
            "the shift amount of `{}` must have the shifted value's width and lanes, found {a} and {b}",
            op.name()
        ));
    }
    Ok(a)
}
