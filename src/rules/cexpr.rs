//! Constant expressions and predicates of rules, evaluated in exact integer arithmetic.
//!
//! They may use integer literals, constant wildcards (`c0`), type attributes (`T.bits`,
//! `T.max`, `T.min`), `+ - * / % << >> & | ^ ~`, comparisons (chains such as
//! `0 < c0 < T.bits` mean what they do in mathematics), `&& || !`, and the functions
//! `log2`, `is_pow2`, `abs`, `min`, `max`, `upper_bound(x)`, `lower_bound(x)`. Arithmetic never
//! wraps; an overflow, a division by zero or `log2` of a non-positive value makes the whole
//! predicate false (and a computed constant unavailable), so a rule simply does not fire.

use crate::syntax::elab::{RuleScope, is_wildcard};
use crate::syntax::parse::{Ast, AstKind, Binary, Unary};

/// Everything a constant expression can refer to.
pub struct CEnv<'a> {
    /// Type variables of the instantiation.
    pub scope: &'a RuleScope,
    /// Wildcard values.
    pub wild: &'a dyn Fn(u32) -> Option<i128>,
    /// Bounds of a pattern variable's binding: `(lower, upper)`.
    pub bounds: &'a mut dyn FnMut(&str) -> Option<(i128, i128)>,
}

/// Why a constant expression has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoValue(pub String);

fn nv<T>(msg: impl Into<String>) -> Result<T, NoValue> {
    Err(NoValue(msg.into()))
}

fn is_cmp(b: Binary) -> bool {
    matches!(
        b,
        Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge | Binary::Eq | Binary::Ne
    )
}

fn compare(b: Binary, x: i128, y: i128) -> bool {
    match b {
        Binary::Lt => x < y,
        Binary::Le => x <= y,
        Binary::Gt => x > y,
        Binary::Ge => x >= y,
        Binary::Eq => x == y,
        _ => x != y,
    }
}

/// Evaluates `ast`; truth values are 1 and 0.
pub fn eval(ast: &Ast, env: &mut CEnv) -> Result<i128, NoValue> {
    match &ast.kind {
        AstKind::Int(v) => Ok(*v),
        AstKind::Bool(b) => Ok(*b as i128),
        AstKind::Name(n) => {
            if is_wildcard(n) {
                let id: u32 = n[1..]
                    .parse()
                    .map_err(|_| NoValue(format!("bad wildcard {n}")))?;
                return (env.wild)(id).ok_or_else(|| NoValue(format!("{n} is not bound")));
            }
            env.scope
                .attr(n)
                .ok_or_else(|| NoValue(format!("`{n}` is not a constant")))
        }
        AstKind::Unary(op, e) => {
            let v = eval(e, env)?;
            match op {
                Unary::Neg => v.checked_neg().ok_or_else(|| NoValue("overflow".into())),
                Unary::Not => Ok((v == 0) as i128),
                Unary::BitNot => Ok(!v),
            }
        }
        AstKind::Binary(op, a, b) => {
            if is_cmp(*op) {
                // `a < b < c` parses as `(a < b) < c`; read it as `a < b && b < c`.
                if let AstKind::Binary(inner, x, y) = &a.kind
                    && is_cmp(*inner)
                {
                    let first = eval_cmp_chain(*inner, x, y, env)?;
                    if !first {
                        return Ok(0);
                    }
                    let yv = eval(y, env)?;
                    let bv = eval(b, env)?;
                    return Ok(compare(*op, yv, bv) as i128);
                }
                let x = eval(a, env)?;
                let y = eval(b, env)?;
                return Ok(compare(*op, x, y) as i128);
            }
            match op {
                Binary::LogAnd => {
                    if eval(a, env)? == 0 {
                        return Ok(0);
                    }
                    Ok((eval(b, env)? != 0) as i128)
                }
                Binary::LogOr => {
                    if eval(a, env)? != 0 {
                        return Ok(1);
                    }
                    Ok((eval(b, env)? != 0) as i128)
                }
                _ => {
                    let x = eval(a, env)?;
                    let y = eval(b, env)?;
                    let r = match op {
                        Binary::Add => x.checked_add(y),
                        Binary::Sub => x.checked_sub(y),
                        Binary::Mul => x.checked_mul(y),
                        Binary::Div => x.checked_div_euclid(y),
                        Binary::Mod => x.checked_rem_euclid(y),
                        Binary::Shl => {
                            if !(0..=126).contains(&y) {
                                None
                            } else {
                                x.checked_mul(1i128 << y)
                            }
                        }
                        Binary::Shr => {
                            if y < 0 {
                                None
                            } else {
                                Some(x >> y.min(127))
                            }
                        }
                        Binary::BitAnd => Some(x & y),
                        Binary::BitOr => Some(x | y),
                        Binary::BitXor => Some(x ^ y),
                        _ => unreachable!("handled above"),
                    };
                    r.ok_or_else(|| NoValue(format!("`{}` has no exact value here", op.symbol())))
                }
            }
        }
        AstKind::Call { name, args, .. } => {
            let one = |env: &mut CEnv| -> Result<i128, NoValue> {
                if args.len() != 1 {
                    return nv(format!("`{name}` takes one argument"));
                }
                eval(&args[0], env)
            };
            match name.as_str() {
                "log2" => {
                    let v = one(env)?;
                    if v <= 0 {
                        return nv("log2 of a non-positive value");
                    }
                    Ok(127 - v.leading_zeros() as i128)
                }
                "is_pow2" => {
                    let v = one(env)?;
                    Ok((v > 0 && v & (v - 1) == 0) as i128)
                }
                "abs" => one(env)?
                    .checked_abs()
                    .ok_or_else(|| NoValue("overflow".into())),
                "min" | "max" => {
                    if args.len() != 2 {
                        return nv(format!("`{name}` takes two arguments"));
                    }
                    let x = eval(&args[0], env)?;
                    let y = eval(&args[1], env)?;
                    Ok(if name == "min" { x.min(y) } else { x.max(y) })
                }
                "upper_bound" | "lower_bound" => {
                    let var = match args.as_slice() {
                        [
                            Ast {
                                kind: AstKind::Name(v),
                                ..
                            },
                        ] => v,
                        _ => return nv(format!("`{name}` takes a rule variable")),
                    };
                    let (lo, hi) = (env.bounds)(var)
                        .ok_or_else(|| NoValue(format!("`{var}` is not bound")))?;
                    Ok(if name == "upper_bound" { hi } else { lo })
                }
                _ => nv(format!("unknown function `{name}`")),
            }
        }
        _ => nv("not a constant expression"),
    }
}

fn eval_cmp_chain(op: Binary, a: &Ast, b: &Ast, env: &mut CEnv) -> Result<bool, NoValue> {
    if let AstKind::Binary(inner, x, y) = &a.kind
        && is_cmp(*inner)
    {
        if !eval_cmp_chain(*inner, x, y, env)? {
            return Ok(false);
        }
        return Ok(compare(op, eval(y, env)?, eval(b, env)?));
    }
    Ok(compare(op, eval(a, env)?, eval(b, env)?))
}

/// Checks that a constant expression or predicate only refers to what it may: wildcards
/// bound on the left-hand side, type attributes of the rule, and (in predicates) rule
/// variables inside `upper_bound`/`lower_bound`. Returns the offending span and message.
pub fn validate(
    ast: &Ast,
    scope_has: &dyn Fn(&str) -> bool,
    wild_ok: &dyn Fn(u32) -> bool,
    var_ok: &dyn Fn(&str) -> bool,
    predicate: bool,
) -> Result<(), (std::ops::Range<usize>, String)> {
    let err = |m: String| Err((ast.span.clone(), m));
    match &ast.kind {
        AstKind::Int(_) | AstKind::Bool(_) => Ok(()),
        AstKind::Name(n) => {
            if is_wildcard(n) {
                let id: u32 = n[1..].parse().unwrap_or(u32::MAX);
                if wild_ok(id) {
                    Ok(())
                } else {
                    err(format!("constant `{n}` is not bound on the left-hand side"))
                }
            } else if scope_has(n) {
                Ok(())
            } else if var_ok(n) {
                err(format!(
                    "rule variable `{n}` can only appear in a predicate inside upper_bound() or lower_bound()"
                ))
            } else {
                err(format!("unknown name `{n}` in a constant expression"))
            }
        }
        AstKind::Unary(_, e) => validate(e, scope_has, wild_ok, var_ok, predicate),
        AstKind::Binary(_, a, b) => {
            validate(a, scope_has, wild_ok, var_ok, predicate)?;
            validate(b, scope_has, wild_ok, var_ok, predicate)
        }
        AstKind::Call { name, args, .. } => match name.as_str() {
            "upper_bound" | "lower_bound" => {
                if !predicate {
                    return err(format!("`{name}` can only be used in a predicate"));
                }
                match args.as_slice() {
                    [
                        Ast {
                            kind: AstKind::Name(v),
                            ..
                        },
                    ] if var_ok(v) => Ok(()),
                    _ => err(format!("`{name}` takes one rule variable")),
                }
            }
            "log2" | "is_pow2" | "abs" | "min" | "max" => {
                for a in args {
                    validate(a, scope_has, wild_ok, var_ok, predicate)?;
                }
                Ok(())
            }
            _ => err(format!(
                "unknown function `{name}` in a constant expression"
            )),
        },
        _ => err("not allowed in a constant expression".to_string()),
    }
}
