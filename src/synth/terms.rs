//! Terms as synthesis searches them: a corpus expression's loads or leaves made
//! variables named in order of first use, rebuilt at another lane count or element width,
//! and its shape (the text up to renaming of constants) for deduplication.

use std::collections::{HashMap, HashSet};

use crate::ir::{Expr, Op};
use crate::types::Type;

/// The terms of `sources` (name, expression): every sub-expression of each lifted source
/// that `term_of` makes a term of, named `<prefix><source>_<k>` (`k` counting the source's
/// kept terms), kept when it has variables, all of them vectors, and deduplicated up to
/// renaming of variables and constants.
pub fn sub_expression_terms(
    sources: &[(String, Expr)],
    prefix: &str,
    term_of: &dyn Fn(&Expr) -> Option<Expr>,
) -> Vec<super::Term> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for (source, e) in sources {
        let lifted = crate::lift::lift(&crate::ir::visit::inline_lets(e));
        let mut k = 0;
        for sub in crate::ir::visit::post_order(&lifted) {
            let Some(expr) = term_of(&sub) else {
                continue;
            };
            let term = super::Term::new(rule_name(&format!("{prefix}{source}_{k}")), &expr);
            let free = crate::ir::visit::free_vars(&term.expr);
            if free.is_empty()
                || free.values().any(|t| t.is_scalar())
                || !seen.insert(shape(&term.expr))
            {
                continue;
            }
            k += 1;
            out.push(term);
        }
    }
    out
}

/// `text` as part of a rule name: letters and digits kept, anything else `_`.
pub fn rule_name(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Operations of `e`: its nodes other than variables, constants and broadcasts.
pub fn operations(e: &Expr) -> Vec<Expr> {
    crate::ir::visit::post_order(e)
        .into_iter()
        .filter(|n| !matches!(n.op(), Op::Var(_) | Op::Const(_) | Op::Broadcast))
        .collect()
}

/// `e` (over variables, constants and broadcasts of constants) at `lanes` lanes: at one
/// lane a broadcast is its scalar.
pub fn at_lanes(e: &Expr, lanes: u32) -> Option<Expr> {
    retyped(e, lanes, 0)
}

/// `e` at `lanes` lanes with every element width scaled by `2^shift` (signedness kept):
/// `None` where a width leaves 8 to 64 bits, a constant does not fit its new type, or an
/// operation does not carry to another lane count.
pub fn retyped(e: &Expr, lanes: u32, shift: i32) -> Option<Expr> {
    let elem = |t: Type| -> Result<crate::types::Elem, ()> {
        if shift == 0 {
            return Ok(t.elem);
        }
        let bits = if shift > 0 {
            t.elem.bits().checked_shl(shift.unsigned_abs())
        } else {
            t.elem.bits().checked_shr(shift.unsigned_abs())
        };
        bits.filter(|b| (8..=64).contains(b))
            .and_then(|b| crate::types::Elem::from_bits(b, t.elem.is_signed()))
            .ok_or(())
    };
    let relane = |t: Type| -> Result<Type, ()> {
        let el = elem(t)?;
        Ok(if lanes == 1 {
            Type::scalar(el)
        } else {
            Type::vec(el, lanes)
        })
    };
    crate::ir::visit::rebuild(e, |n, args| -> Result<Expr, ()> {
        match n.op() {
            Op::Var(name) => Ok(Expr::var(name.clone(), relane(n.ty())?)),
            Op::Const(bits) => {
                let v = crate::interp::lane::to_i128(*bits, n.ty().elem);
                Expr::int(elem(n.ty())?, v).map_err(|_| ())
            }
            Op::Broadcast if lanes == 1 => args.into_iter().next().ok_or(()),
            // Operations that change the lane count (reductions, slices, shuffles) do not
            // carry to another one.
            Op::Load(..)
            | Op::Ramp
            | Op::Slice { .. }
            | Op::Concat
            | Op::Interleave
            | Op::Shuffle(_)
            | Op::ReduceAdd
            | Op::ReduceMin
            | Op::ReduceMax
            | Op::Let(_)
            | Op::Instr(_) => Err(()),
            op => {
                let ty = match crate::ir::explicit_type(n) {
                    Some(t) => Some(relane(t)?),
                    None => None,
                };
                // A one-lane source's constants become splats at several lanes.
                let args = args
                    .into_iter()
                    .map(|a| {
                        if lanes > 1 && a.ty().is_scalar() {
                            let t = Type::vec(a.ty().elem, lanes);
                            Expr::build(Op::Broadcast, Some(t), vec![a]).map_err(|_| ())
                        } else {
                            Ok(a)
                        }
                    })
                    .collect::<Result<Vec<_>, ()>>()?;
                Expr::build(op.clone(), ty, args).map_err(|_| ())
            }
        }
    })
    .ok()
}

/// `e` with its variables named `a`, `b`, ... in order of first use (kernel bodies name
/// theirs `@a0`, parameters by their own names); `None` past eight variables.
pub fn renamed(e: &Expr) -> Option<Expr> {
    const NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let mut names: HashMap<crate::ir::Sym, &str> = HashMap::new();
    crate::ir::visit::rebuild(e, |n, args| -> Result<Expr, ()> {
        match n.op() {
            Op::Var(v) => {
                let next = names.len();
                let name = *names
                    .entry(v.clone())
                    .or_insert(NAMES.get(next).copied().unwrap_or(""));
                if name.is_empty() {
                    return Err(());
                }
                Ok(Expr::var(name, n.ty()))
            }
            _ if args.is_empty() => Ok(n.clone()),
            _ => n.with_args(args).map_err(|_| ()),
        }
    })
    .ok()
}

/// `e` with each distinct load, and each broadcast of a scalar variable, a vector
/// variable, named in order of first use; `None` when anything else reads the index
/// variables (a term must be over its variables).
pub fn over_variables(e: &Expr) -> Option<Expr> {
    const NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let mut loads: HashMap<String, Expr> = HashMap::new();
    let rebuilt = crate::ir::visit::rebuild(e, |n, args| -> Result<Expr, ()> {
        // A scalar unknown broadcast is a vector whose lanes happen to agree: searched as
        // any vector, its rule applies to the splat as well.
        let splat_of_var = matches!(n.op(), Op::Broadcast)
            && matches!(n.arg(0).op(), Op::Var(v) if !NAMES.contains(&&**v));
        if matches!(n.op(), Op::Load(..)) || splat_of_var {
            // The same load written twice is one variable.
            let key = n.to_string();
            let next = loads.len();
            let v = loads
                .entry(key)
                .or_insert_with(|| Expr::var(NAMES.get(next).copied().unwrap_or("z"), n.ty()))
                .clone();
            return Ok(v);
        }
        if args.is_empty() {
            return Ok(n.clone());
        }
        n.with_args(args).map_err(|_| ())
    })
    .ok()?;
    if loads.len() > NAMES.len() || !crate::ir::visit::buffers(&rebuilt).is_empty() {
        return None;
    }
    // Only the loads' variables are left free (`x` and `y` were inside the loads).
    let free = crate::ir::visit::free_vars(&rebuilt);
    if free.keys().any(|n| !NAMES.contains(&&**n)) {
        return None;
    }
    Some(rebuilt)
}

/// The text of `e` with every number replaced: terms equal up to their constants have one
/// shape (their variables are already named in order of first use).
pub fn shape(e: &Expr) -> String {
    let mut out = String::new();
    // Whether the digits being read are a number (not part of `x16` or `uint8`).
    let mut number = false;
    let mut prev = ' ';
    for c in e.to_string().chars() {
        if c.is_ascii_digit() {
            if !(number || prev.is_ascii_alphanumeric() || prev == '_') {
                number = true;
                out.push('#');
            }
            if !number {
                out.push(c);
            }
        } else {
            number = false;
            out.push(c);
        }
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Elem;

    #[test]
    fn a_term_carries_to_other_widths_while_its_constants_fit() {
        let a = Expr::var("a", Type::scalar(Elem::U8));
        let e = Expr::build(Op::Add, None, vec![a, Expr::int(Elem::U8, 200).unwrap()]).unwrap();
        let wide = retyped(&e, 1, 1).unwrap();
        assert_eq!(wide.ty(), Type::scalar(Elem::U16));
        let vector = retyped(&e, 8, 2).unwrap();
        assert_eq!(vector.ty(), Type::vec(Elem::U32, 8));
        // No 4-bit type, and no 128-bit one.
        assert!(retyped(&e, 1, -1).is_none());
        assert!(retyped(&wide, 1, 3).is_none());
        // 200 does not fit a signed byte.
        let s = Expr::build(
            Op::Add,
            None,
            vec![
                Expr::var("b", Type::scalar(Elem::I16)),
                Expr::int(Elem::I16, 200).unwrap(),
            ],
        )
        .unwrap();
        assert!(retyped(&s, 1, -1).is_none());
        assert!(retyped(&s, 1, 1).is_some());
    }
}
