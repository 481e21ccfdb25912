//! Importer for Rake's spec files (`../shared/corpus/*/*.sexp`).
//!
//! A spec declares buffers, symbolic scalars and vectors, value-range axioms, scalar
//! `var-lookup` bindings and vector `load` bindings, then gives `halide-expr`. The importer
//! turns the bindings the expression uses into `let`s around it, keeps the axioms as facts,
//! and types everything with the same elaborator as the Halide syntax. Rake's `integer?`
//! symbols are index arithmetic and become `i32`, Halide's index type.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::elab::{Decls, ElabOptions, Elaborator};
use super::parse::{Ast, AstKind, Binary, Unary};
use super::sexpr::{SExp, read_aligned, read_all};
use crate::diag::{Diag, Source};
use crate::ir::{Expr, Sym};
use crate::types::{Elem, Type};

/// A value range that holds for every element of a buffer (Rake's `values-range-from`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeFact {
    /// The buffer.
    pub buffer: Sym,
    /// Smallest value.
    pub lo: i128,
    /// Largest value.
    pub hi: i128,
}

/// An imported spec.
#[derive(Clone, Debug)]
pub struct RakeSpec {
    /// The expression, with the bindings it uses as `let`s.
    pub expr: Expr,
    /// Buffers and their element types.
    pub buffers: BTreeMap<Sym, Elem>,
    /// Scalar and vector unknowns and their types.
    pub vars: BTreeMap<Sym, Type>,
    /// Value ranges of buffers.
    pub facts: Vec<RangeFact>,
}

/// Imports a Rake spec.
pub fn import(src: &Arc<Source>) -> Result<RakeSpec, Diag> {
    let items = read_all(src)?;
    let mut decls = Decls::new();
    let mut facts = Vec::new();
    let mut bindings: Vec<(String, SExp)> = Vec::new();
    let mut body: Option<SExp> = None;
    for item in &items {
        let list = item.list().unwrap_or(&[]);
        let head = item.head().unwrap_or("");
        let name_at = |i: usize| -> Result<String, Diag> {
            list.get(i)
                .and_then(|x| x.atom())
                .map(str::to_string)
                .ok_or_else(|| Diag::new(src, item.span(), format!("`{head}` needs a name")))
        };
        match head {
            "define-symbolic-buffer" | "define-symbolic-var" | "define-symbolic" => {
                let name = name_at(1)?;
                let tname = name_at(2)?;
                let tspan = list[2].span();
                let elem = if tname == "integer?" {
                    Elem::I32
                } else {
                    Elem::parse(&tname, false).ok_or_else(|| {
                        Diag::new(
                            src,
                            tspan.clone(),
                            format!("unsupported Rake type `{tname}`"),
                        )
                    })?
                };
                if head == "define-symbolic-buffer" {
                    decls.buffers.insert(name, elem);
                } else {
                    decls.vars.insert(name, Type::scalar(elem));
                }
            }
            "define" => {
                let name = name_at(1)?;
                let Some(value) = list.get(2) else {
                    return Err(Diag::new(src, item.span(), "`define` needs a value"));
                };
                if name == "halide-expr" {
                    body = Some(value.clone());
                } else if name == "axioms" {
                    facts = read_axioms(src, value)?;
                } else if value.head() == Some("var-lookup") {
                    let v = value.list().and_then(|l| l.get(2)).ok_or_else(|| {
                        Diag::new(src, value.span(), "`var-lookup` needs a value")
                    })?;
                    bindings.push((name, v.clone()));
                } else {
                    bindings.push((name, value.clone()));
                }
            }
            _ => {
                return Err(Diag::new(
                    src,
                    item.span(),
                    format!(
                        "unsupported top-level form `{}`",
                        if head.is_empty() { "?" } else { head }
                    ),
                ));
            }
        }
    }
    let body = body.ok_or_else(|| Diag::new(src, 0..0, "the spec defines no `halide-expr`"))?;
    // Keep the bindings the expression needs, transitively, in definition order.
    let bound: HashMap<&str, usize> = bindings
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let mut needed = HashSet::new();
    let mut work: Vec<&SExp> = vec![&body];
    while let Some(e) = work.pop() {
        for a in atoms(e) {
            if let Some(&i) = bound.get(a.as_str())
                && needed.insert(i)
            {
                work.push(&bindings[i].1);
            }
        }
    }
    let mut ast = convert(src, &body)?;
    for (i, (name, value)) in bindings.iter().enumerate().rev() {
        if needed.contains(&i) {
            let v = convert(src, value)?;
            let span = v.span.clone();
            ast = Ast {
                kind: AstKind::Let {
                    name: name.clone(),
                    value: Box::new(v),
                    body: Box::new(ast),
                },
                span,
            };
        }
    }
    let expr = Elaborator::new(src, &decls, ElabOptions::default()).expr(&ast)?;
    let vars = crate::ir::visit::free_vars(&expr);
    let buffers = crate::ir::visit::buffers(&expr);
    Ok(RakeSpec {
        expr,
        buffers,
        vars,
        facts,
    })
}

fn atoms(e: &SExp) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match x {
            SExp::Atom(a, _) => out.push(a.clone()),
            SExp::List(v, _) => stack.extend(v.iter()),
            SExp::Int(..) => {}
        }
    }
    out
}

fn read_axioms(src: &Arc<Source>, e: &SExp) -> Result<Vec<RangeFact>, Diag> {
    if e.head() != Some("list") {
        return Err(Diag::new(src, e.span(), "expected `(list ...)` of axioms"));
    }
    let mut out = Vec::new();
    for ax in &e.list().expect("checked")[1..] {
        match ax.head() {
            Some("values-range-from") => {
                let l = ax.list().expect("has a head");
                if l.len() != 4 {
                    return Err(Diag::new(
                        src,
                        ax.span(),
                        "`values-range-from` takes a buffer and two bounds",
                    ));
                }
                let buffer = l[1]
                    .atom()
                    .ok_or_else(|| Diag::new(src, l[1].span(), "expected a buffer name"))?;
                out.push(RangeFact {
                    buffer: buffer.into(),
                    lo: bound_value(src, &l[2])?,
                    hi: bound_value(src, &l[3])?,
                });
            }
            other => {
                return Err(Diag::new(
                    src,
                    ax.span(),
                    format!("unsupported axiom `{}`", other.unwrap_or("?")),
                ));
            }
        }
    }
    Ok(out)
}

/// A bound: a constant, or a constant expression (some specs spell out the clamping that
/// produced the range), which is evaluated.
fn bound_value(src: &Arc<Source>, e: &SExp) -> Result<i128, Diag> {
    if let Ok(v) = const_value(src, e) {
        return Ok(v);
    }
    let ast = convert(src, e)?;
    let expr = Elaborator::new(src, &Decls::new(), ElabOptions::default()).expr(&ast)?;
    let v = crate::interp::eval(&expr, &crate::interp::Env::new())
        .map_err(|err| Diag::new(src, e.span(), format!("bound is not a constant: {err}")))?;
    if v.ty.lanes != 1 {
        return Err(Diag::new(src, e.span(), "a bound must be a scalar"));
    }
    Ok(v.int(0))
}

/// `(uint8_t (bv 255 8))` or a bare integer.
fn const_value(src: &Arc<Source>, e: &SExp) -> Result<i128, Diag> {
    match e {
        SExp::Int(v, _) => Ok(*v),
        _ => match e.list() {
            Some([SExp::Atom(_, _), bv]) if bv.head() == Some("bv") => match bv.list() {
                Some([_, SExp::Int(v, _), SExp::Int(_, _)]) => Ok(*v),
                _ => Err(Diag::new(src, bv.span(), "expected (bv VALUE WIDTH)")),
            },
            _ => Err(Diag::new(src, e.span(), "expected a constant")),
        },
    }
}

/// Rake operator names and the surface operators they become.
fn binary_of(op: &str) -> Option<Binary> {
    Some(match op {
        "add" => Binary::Add,
        "sub" => Binary::Sub,
        "mul" => Binary::Mul,
        "div" => Binary::Div,
        "mod" => Binary::Mod,
        "shl" => Binary::Shl,
        "shr" => Binary::Shr,
        "eq" => Binary::Eq,
        "ne" => Binary::Ne,
        "lt" => Binary::Lt,
        "le" => Binary::Le,
        "gt" => Binary::Gt,
        "ge" => Binary::Ge,
        "bwand" => Binary::BitAnd,
        "bwor" => Binary::BitOr,
        "bwxor" => Binary::BitXor,
        "and" => Binary::LogAnd,
        "or" => Binary::LogOr,
        _ => return None,
    })
}

fn convert(src: &Arc<Source>, e: &SExp) -> Result<Ast, Diag> {
    let span = e.span();
    let mk = |kind| Ast {
        kind,
        span: span.clone(),
    };
    match e {
        SExp::Int(v, _) => {
            if *v < 0 {
                Ok(mk(AstKind::Unary(
                    Unary::Neg,
                    Box::new(Ast {
                        kind: AstKind::Int(-v),
                        span: span.clone(),
                    }),
                )))
            } else {
                Ok(mk(AstKind::Int(*v)))
            }
        }
        SExp::Atom(a, _) => Ok(mk(AstKind::Name(a.clone()))),
        SExp::List(items, _) => {
            let head = items
                .first()
                .and_then(|h| h.atom())
                .ok_or_else(|| Diag::new(src, span.clone(), "expected `(operator ...)`"))?;
            let head_span = items[0].span();
            let rest = &items[1..];
            let args = || {
                rest.iter()
                    .map(|x| convert(src, x))
                    .collect::<Result<Vec<_>, _>>()
            };
            let call = |name: &str, args: Vec<Ast>| Ast {
                kind: AstKind::Call {
                    name: name.to_string(),
                    name_span: head_span.clone(),
                    angle: None,
                    args,
                },
                span: span.clone(),
            };
            let want = |n: usize| -> Result<(), Diag> {
                if rest.len() == n {
                    Ok(())
                } else {
                    Err(Diag::new(
                        src,
                        span.clone(),
                        format!("`{head}` takes {n} operands, found {}", rest.len()),
                    ))
                }
            };
            if let Some(op) = head
                .strip_prefix("vec-")
                .or_else(|| head.strip_prefix("sca-"))
            {
                if let Some(b) = binary_of(op) {
                    want(2)?;
                    let mut a = args()?;
                    let r = a.pop().expect("two");
                    let l = a.pop().expect("two");
                    return Ok(mk(AstKind::Binary(b, Box::new(l), Box::new(r))));
                }
                return match op {
                    "min" | "max" | "absd" => {
                        want(2)?;
                        Ok(call(op, args()?))
                    }
                    "if" => {
                        want(3)?;
                        Ok(call("select", args()?))
                    }
                    "bwnot" => {
                        want(1)?;
                        Ok(mk(AstKind::Unary(
                            Unary::BitNot,
                            Box::new(args()?.remove(0)),
                        )))
                    }
                    "not" => {
                        want(1)?;
                        Ok(mk(AstKind::Unary(Unary::Not, Box::new(args()?.remove(0)))))
                    }
                    "broadcast" => {
                        want(2)?;
                        let n = int_of(src, &rest[0])?;
                        Ok(call(&format!("x{n}"), vec![convert(src, &rest[1])?]))
                    }
                    "abs" | "clz" | "popcount" => {
                        want(1)?;
                        let name = match op {
                            "clz" => "count_leading_zeros",
                            o => o,
                        };
                        Ok(call(name, args()?))
                    }
                    _ => Err(Diag::new(
                        src,
                        head_span,
                        format!("unsupported Rake operator `{head}`"),
                    )),
                };
            }
            match head {
                "bv" => Err(Diag::new(
                    src,
                    span.clone(),
                    "a bit-vector constant needs a type: (uint8_t (bv 5 8))",
                )),
                "load" | "load-sca" => {
                    if rest.len() < 2 {
                        return Err(Diag::new(
                            src,
                            span.clone(),
                            format!("`{head}` takes a buffer and an index"),
                        ));
                    }
                    let buf = rest[0]
                        .atom()
                        .ok_or_else(|| Diag::new(src, rest[0].span(), "expected a buffer name"))?;
                    let index = convert(src, &rest[1])?;
                    let align = match rest.get(2) {
                        Some(a) => Some(read_aligned(src, a)?),
                        None => None,
                    };
                    Ok(mk(AstKind::Index {
                        name: buf.to_string(),
                        index: Box::new(index),
                        align,
                    }))
                }
                "ramp" => {
                    want(3)?;
                    Ok(call("ramp", args()?))
                }
                "let" => {
                    want(2)?;
                    let binds = rest[0].list().ok_or_else(|| {
                        Diag::new(src, rest[0].span(), "expected a list of bindings")
                    })?;
                    let mut body = convert(src, &rest[1])?;
                    for b in binds.iter().rev() {
                        match b.list() {
                            Some([SExp::Atom(n, _), v]) => {
                                body = Ast {
                                    kind: AstKind::Let {
                                        name: n.clone(),
                                        value: Box::new(convert(src, v)?),
                                        body: Box::new(body),
                                    },
                                    span: b.span(),
                                };
                            }
                            _ => return Err(Diag::new(src, b.span(), "expected [NAME VALUE]")),
                        }
                    }
                    Ok(body)
                }
                "slice_vectors" => {
                    want(4)?;
                    Ok(call("slice_vectors", args()?))
                }
                "concat_vectors" => Ok(call("concat_vectors", args()?)),
                "interleave" | "interleave_vectors" => Ok(call("interleave_vectors", args()?)),
                "vector_reduce" => {
                    want(3)?;
                    let op = rest[0]
                        .atom()
                        .map(|a| a.trim_start_matches('\''))
                        .unwrap_or("");
                    let name = match op {
                        "add" => "vector_reduce_add",
                        "min" => "vector_reduce_min",
                        "max" => "vector_reduce_max",
                        _ => {
                            return Err(Diag::new(
                                src,
                                rest[0].span(),
                                format!("unsupported reduction `{op}`"),
                            ));
                        }
                    };
                    Ok(call(
                        name,
                        vec![convert(src, &rest[2])?, convert(src, &rest[1])?],
                    ))
                }
                _ => {
                    // `(xN e)` broadcasts, `(uint16x128 e)` casts, `(int16_t (bv 5 16))` is a
                    // typed constant and `(int32x1 e)` a cast to a scalar.
                    if let Some(n) = head
                        .strip_prefix('x')
                        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                    {
                        want(1)?;
                        return Ok(call(&format!("x{n}"), args()?));
                    }
                    if let Some(t) = rake_type(head) {
                        want(1)?;
                        if rest[0].head() == Some("bv") {
                            let v = const_value(src, e)?;
                            let lit = if v < 0 {
                                Ast {
                                    kind: AstKind::Unary(
                                        Unary::Neg,
                                        Box::new(Ast {
                                            kind: AstKind::Int(-v),
                                            span: span.clone(),
                                        }),
                                    ),
                                    span: span.clone(),
                                }
                            } else {
                                Ast {
                                    kind: AstKind::Int(v),
                                    span: span.clone(),
                                }
                            };
                            return Ok(mk(AstKind::Typed {
                                ty: t,
                                ty_span: head_span,
                                e: Box::new(lit),
                            }));
                        }
                        return Ok(call(&t, args()?));
                    }
                    Err(Diag::new(
                        src,
                        head_span,
                        format!("unsupported Rake operator `{head}`"),
                    ))
                }
            }
        }
    }
}

fn int_of(src: &Arc<Source>, e: &SExp) -> Result<i128, Diag> {
    match e {
        SExp::Int(v, _) => Ok(*v),
        _ => Err(Diag::new(src, e.span(), "expected an integer")),
    }
}

/// `uint16x128` and `int32_t` name types; `int32x1` is the scalar `int32`.
fn rake_type(name: &str) -> Option<String> {
    let name = name
        .strip_suffix("x1")
        .filter(|n| Elem::parse(n, false).is_some())
        .unwrap_or(name);
    Type::parse(name, false).map(|t| t.halide_name())
}
