//! S-expressions: a generic reader (used by the Rake importer and rule files) and the
//! S-expression form of harrow IR.
//!
//! IR form, one node per list, operands after the head:
//! `(add a b)`, `(widening_add a b)`, `(u8 5)` (typed constant), `(cast u16x32 e)`,
//! `(reinterpret u16x16 e)`, `(saturating_cast u8x32 e)`, `(broadcast 32 e)` (32 copies),
//! `(ramp base stride lanes)`, `(load u8 buf index)`, `(let name value body)`,
//! `(select c a b)`, comparisons `(lt a b)`, `(slice start stride lanes e)`, `(concat a b)`,
//! `(interleave a b)`, `(shuffle (3 0 1) a b)`, `(reduce_add u32x4 e)`. Bare integers take
//! their type from context exactly as in the Halide syntax; variables are declared.

use std::ops::Range;
use std::sync::Arc;

use super::elab::{Decls, ElabOptions, Elaborator};
use super::parse::{Ast, AstKind, Binary};
use crate::diag::{Diag, Source};
use crate::interp::lane;
use crate::ir::{Expr, Op};

/// A read S-expression.
#[derive(Clone, Debug)]
pub enum SExp {
    /// A symbol (anything that is not a number or a list), e.g. `add`, `'add`, `u8x32`.
    Atom(String, Range<usize>),
    /// An integer.
    Int(i128, Range<usize>),
    /// A parenthesised or bracketed list.
    List(Vec<SExp>, Range<usize>),
}

impl SExp {
    /// Where it is.
    pub fn span(&self) -> Range<usize> {
        match self {
            SExp::Atom(_, s) | SExp::Int(_, s) | SExp::List(_, s) => s.clone(),
        }
    }

    /// The symbol, if this is one.
    pub fn atom(&self) -> Option<&str> {
        match self {
            SExp::Atom(a, _) => Some(a),
            _ => None,
        }
    }

    /// The items, if this is a list.
    pub fn list(&self) -> Option<&[SExp]> {
        match self {
            SExp::List(v, _) => Some(v),
            _ => None,
        }
    }

    /// The head symbol of a list.
    pub fn head(&self) -> Option<&str> {
        self.list().and_then(|v| v.first()).and_then(|h| h.atom())
    }
}

/// Reads every top-level S-expression of `src`. `;` starts a comment to the end of the line.
pub fn read_all(src: &Arc<Source>) -> Result<Vec<SExp>, Diag> {
    let text = src.text.as_bytes();
    let mut i = 0;
    let mut stack: Vec<(Vec<SExp>, usize, u8)> = Vec::new();
    let mut top = Vec::new();
    while i < text.len() {
        let c = text[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b';' {
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
        } else if c == b'(' || c == b'[' {
            stack.push((Vec::new(), i, c));
            i += 1;
        } else if c == b')' || c == b']' {
            let Some((items, start, open)) = stack.pop() else {
                return Err(Diag::new(src, i..i + 1, "unbalanced closing parenthesis"));
            };
            let want = if open == b'(' { b')' } else { b']' };
            if c != want {
                return Err(Diag::new(
                    src,
                    i..i + 1,
                    format!("`{}` closed by `{}`", open as char, c as char),
                ));
            }
            let e = SExp::List(items, start..i + 1);
            match stack.last_mut() {
                Some((parent, _, _)) => parent.push(e),
                None => top.push(e),
            }
            i += 1;
        } else {
            let start = i;
            while i < text.len() && !text[i].is_ascii_whitespace() && !b"()[];".contains(&text[i]) {
                i += 1;
            }
            let word = &src.text[start..i];
            let atom = match parse_int(word) {
                Some(v) => SExp::Int(v, start..i),
                None => SExp::Atom(word.to_string(), start..i),
            };
            match stack.last_mut() {
                Some((parent, _, _)) => parent.push(atom),
                None => top.push(atom),
            }
        }
    }
    if let Some((_, start, _)) = stack.pop() {
        return Err(Diag::new(
            src,
            start..start + 1,
            "this parenthesis is never closed",
        ));
    }
    Ok(top)
}

fn parse_int(w: &str) -> Option<i128> {
    let digits = w.strip_prefix('-').unwrap_or(w);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    w.parse().ok()
}

/// Converts the IR S-expression form into the surface tree that the Halide elaborator
/// types, so both syntaxes share one set of typing rules.
pub fn to_ast(src: &Arc<Source>, e: &SExp) -> Result<Ast, Diag> {
    let span = e.span();
    let mk = |kind| Ast {
        kind,
        span: span.clone(),
    };
    match e {
        SExp::Int(v, _) => {
            if *v < 0 {
                Ok(mk(AstKind::Unary(
                    super::parse::Unary::Neg,
                    Box::new(Ast {
                        kind: AstKind::Int(-v),
                        span: span.clone(),
                    }),
                )))
            } else {
                Ok(mk(AstKind::Int(*v)))
            }
        }
        SExp::Atom(a, _) => Ok(match a.as_str() {
            "true" => mk(AstKind::Bool(true)),
            "false" => mk(AstKind::Bool(false)),
            _ => mk(AstKind::Name(a.clone())),
        }),
        SExp::List(items, _) => {
            let Some(head) = items.first().and_then(|h| h.atom()) else {
                return Err(Diag::new(
                    src,
                    span.clone(),
                    "expected `(operator operands...)`",
                ));
            };
            let head_span = items[0].span();
            let rest = &items[1..];
            let sub = |i: usize| -> Result<Ast, Diag> {
                rest.get(i)
                    .ok_or_else(|| {
                        Diag::new(
                            src,
                            span.clone(),
                            format!("`{head}` is missing operand {}", i + 1),
                        )
                    })
                    .and_then(|x| to_ast(src, x))
            };
            let want = |n: usize| -> Result<(), Diag> {
                if rest.len() != n {
                    Err(Diag::new(
                        src,
                        span.clone(),
                        format!(
                            "`{head}` takes {n} operand{}, found {}",
                            if n == 1 { "" } else { "s" },
                            rest.len()
                        ),
                    ))
                } else {
                    Ok(())
                }
            };
            let atom_at = |i: usize, what: &str| -> Result<(String, Range<usize>), Diag> {
                match rest.get(i) {
                    Some(SExp::Atom(a, s)) => Ok((a.clone(), s.clone())),
                    Some(x) => Err(Diag::new(src, x.span(), format!("expected {what}"))),
                    None => Err(Diag::new(
                        src,
                        span.clone(),
                        format!("`{head}` is missing {what}"),
                    )),
                }
            };
            let int_ast = |i: usize| -> Result<Ast, Diag> {
                match rest.get(i) {
                    Some(SExp::Int(v, s)) => Ok(Ast {
                        kind: AstKind::Int(*v),
                        span: s.clone(),
                    }),
                    Some(x) => Err(Diag::new(src, x.span(), "expected an integer")),
                    None => Err(Diag::new(
                        src,
                        span.clone(),
                        format!("`{head}` is missing an integer"),
                    )),
                }
            };
            let binary = |op: Binary| -> Result<Ast, Diag> {
                want(2)?;
                Ok(mk(AstKind::Binary(
                    op,
                    Box::new(sub(0)?),
                    Box::new(sub(1)?),
                )))
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
            let typed = |ty: (String, Range<usize>), e: Ast| Ast {
                kind: AstKind::Typed {
                    ty: ty.0,
                    ty_span: ty.1,
                    e: Box::new(e),
                },
                span: span.clone(),
            };
            match head {
                "add" => binary(Binary::Add),
                "sub" => binary(Binary::Sub),
                "mul" => binary(Binary::Mul),
                "div" => binary(Binary::Div),
                "mod" => binary(Binary::Mod),
                "eq" => binary(Binary::Eq),
                "ne" => binary(Binary::Ne),
                "lt" => binary(Binary::Lt),
                "le" => binary(Binary::Le),
                "gt" => binary(Binary::Gt),
                "ge" => binary(Binary::Ge),
                "and" => Ok(call(
                    "bitwise_and",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "or" => Ok(call(
                    "bitwise_or",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "xor" => Ok(call(
                    "bitwise_xor",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "not" => Ok(call(
                    "bitwise_not",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "shl" => Ok(call(
                    "shift_left",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "shr" => Ok(call(
                    "shift_right",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "cast" => {
                    want(2)?;
                    let (t, ts) = atom_at(0, "a type")?;
                    Ok(Ast {
                        kind: AstKind::Call {
                            name: t,
                            name_span: ts,
                            angle: None,
                            args: vec![sub(1)?],
                        },
                        span: span.clone(),
                    })
                }
                "reinterpret" | "saturating_cast" | "reduce_add" | "reduce_min" | "reduce_max" => {
                    want(2)?;
                    let ty = atom_at(0, "a type")?;
                    let name = match head {
                        "reduce_add" => "vector_reduce_add",
                        "reduce_min" => "vector_reduce_min",
                        "reduce_max" => "vector_reduce_max",
                        h => h,
                    };
                    Ok(typed(ty, call(name, vec![sub(1)?])))
                }
                "broadcast" => {
                    want(2)?;
                    let n = match &rest[0] {
                        SExp::Int(n, _) if *n > 0 => *n,
                        x => {
                            return Err(Diag::new(src, x.span(), "expected a positive copy count"));
                        }
                    };
                    Ok(call(&format!("x{n}"), vec![sub(1)?]))
                }
                "ramp" => {
                    want(3)?;
                    Ok(call("ramp", vec![sub(0)?, sub(1)?, int_ast(2)?]))
                }
                "load" => {
                    // (load T buf index) or (load T buf index (aligned modulus remainder))
                    if rest.len() != 3 && rest.len() != 4 {
                        return Err(Diag::new(
                            src,
                            span.clone(),
                            "`load` takes an element type, a buffer, an index and optionally (aligned m r)",
                        ));
                    }
                    let ty = atom_at(0, "an element type")?;
                    let (buf, _) = atom_at(1, "a buffer name")?;
                    let index = sub(2)?;
                    let align = match rest.get(3) {
                        None => None,
                        Some(a) => Some(read_aligned(src, a)?),
                    };
                    Ok(typed(
                        ty,
                        Ast {
                            kind: AstKind::Index {
                                name: buf,
                                index: Box::new(index),
                                align,
                            },
                            span: span.clone(),
                        },
                    ))
                }
                "let" => {
                    want(3)?;
                    let (name, _) = atom_at(0, "a variable name")?;
                    Ok(mk(AstKind::Let {
                        name,
                        value: Box::new(sub(1)?),
                        body: Box::new(sub(2)?),
                    }))
                }
                "slice" => {
                    want(4)?;
                    Ok(call(
                        "slice_vectors",
                        vec![sub(3)?, int_ast(0)?, int_ast(1)?, int_ast(2)?],
                    ))
                }
                "concat" => Ok(call(
                    "concat_vectors",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "interleave" => Ok(call(
                    "interleave_vectors",
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
                "shuffle" => {
                    let idx = match rest.first() {
                        Some(SExp::List(v, s)) => Ast {
                            kind: AstKind::List(
                                v.iter().map(|x| to_ast(src, x)).collect::<Result<_, _>>()?,
                            ),
                            span: s.clone(),
                        },
                        _ => {
                            return Err(Diag::new(
                                src,
                                span.clone(),
                                "`shuffle` takes a list of indices first: (shuffle (0 2) a)",
                            ));
                        }
                    };
                    let mut args = vec![idx];
                    for x in &rest[1..] {
                        args.push(to_ast(src, x)?);
                    }
                    Ok(call("shuffle", args))
                }
                _ if super::parse::looks_like_type(head) => {
                    // `(u8 5)` is a typed constant; `(u8 e)` of an expression is a cast.
                    want(1)?;
                    match &rest[0] {
                        SExp::Int(..) => Ok(typed((head.to_string(), head_span.clone()), sub(0)?)),
                        _ => Ok(call(head, vec![sub(0)?])),
                    }
                }
                _ => Ok(call(
                    head,
                    rest.iter()
                        .map(|x| to_ast(src, x))
                        .collect::<Result<_, _>>()?,
                )),
            }
        }
    }
}

/// Reads `(aligned modulus remainder)`.
pub fn read_aligned(src: &Arc<Source>, a: &SExp) -> Result<(i64, i64), Diag> {
    match a.list() {
        Some([SExp::Atom(h, _), SExp::Int(m, _), SExp::Int(r, _)]) if h == "aligned" => {
            let m = i64::try_from(*m)
                .map_err(|_| Diag::new(src, a.span(), "alignment is too large"))?;
            let r = i64::try_from(*r)
                .map_err(|_| Diag::new(src, a.span(), "alignment is too large"))?;
            Ok((m, r))
        }
        _ => Err(Diag::new(
            src,
            a.span(),
            "expected (aligned MODULUS REMAINDER)",
        )),
    }
}

/// Parses one IR S-expression with declared variable and buffer types.
pub fn parse(src: &Arc<Source>, decls: &Decls) -> Result<Expr, Diag> {
    let items = read_all(src)?;
    if items.len() != 1 {
        let span = items.get(1).map_or(0..src.text.len(), |x| x.span());
        return Err(Diag::new(
            src,
            span,
            format!("expected one expression, found {}", items.len()),
        ));
    }
    let ast = to_ast(src, &items[0])?;
    Elaborator::new(src, decls, ElabOptions::default()).expr(&ast)
}

impl std::fmt::Debug for Expr {
    /// An expression debugs as its S-expression.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print(self))
    }
}

/// Prints an expression in the S-expression form (constants always typed).
pub fn print(e: &Expr) -> String {
    let mut out = String::new();
    pr(e, &mut out);
    out
}

fn pr(e: &Expr, out: &mut String) {
    let t = e.ty();
    let args = e.args();
    let list = |out: &mut String, head: &str, args: &[Expr]| {
        out.push('(');
        out.push_str(head);
        for a in args {
            out.push(' ');
            pr(a, out);
        }
        out.push(')');
    };
    match e.op() {
        Op::Const(bits) => {
            if t.elem == crate::types::Elem::Bool {
                out.push_str(if *bits != 0 { "true" } else { "false" });
            } else if t.elem.is_float() {
                let x = crate::interp::float::from_lane(*bits);
                out.push_str(&format!("({t} {})", crate::interp::float::text(x)));
            } else {
                let v = if t.elem == crate::types::Elem::U128 {
                    bits.to_string()
                } else {
                    lane::to_i128(*bits, t.elem).to_string()
                };
                out.push_str(&format!("({t} {v})"));
            }
        }
        Op::Var(n) => out.push_str(n),
        Op::Load(buf, align) => {
            out.push_str(&format!("(load {} {buf} ", t.elem));
            pr(&args[0], out);
            if let Some(a) = align {
                out.push_str(&format!(" (aligned {} {})", a.modulus, a.remainder));
            }
            out.push(')');
        }
        Op::Ramp => {
            out.push_str("(ramp ");
            pr(&args[0], out);
            out.push(' ');
            pr(&args[1], out);
            out.push_str(&format!(" {})", t.lanes));
        }
        Op::Broadcast => list(
            out,
            &format!("broadcast {}", t.lanes / args[0].ty().lanes),
            args,
        ),
        Op::Cast => list(out, &format!("cast {t}"), args),
        Op::Reinterpret => list(out, &format!("reinterpret {t}"), args),
        Op::SaturatingCast => list(out, &format!("saturating_cast {t}"), args),
        Op::ReduceAdd => list(out, &format!("reduce_add {t}"), args),
        Op::ReduceMin => list(out, &format!("reduce_min {t}"), args),
        Op::ReduceMax => list(out, &format!("reduce_max {t}"), args),
        Op::Let(n) => list(out, &format!("let {n}"), args),
        Op::Slice { start, stride } => {
            list(out, &format!("slice {start} {stride} {}", t.lanes), args)
        }
        Op::Concat => list(out, "concat", args),
        Op::Interleave => list(out, "interleave", args),
        Op::Shuffle(idx) => {
            let i: Vec<String> = idx.iter().map(|x| x.to_string()).collect();
            list(out, &format!("shuffle ({})", i.join(" ")), args)
        }
        Op::And => list(out, "and", args),
        Op::Or => list(out, "or", args),
        Op::Xor => list(out, "xor", args),
        Op::Not => list(out, "not", args),
        Op::Shl => list(out, "shl", args),
        Op::Shr => list(out, "shr", args),
        op => list(out, &op.display_name(), args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Elem, Type};

    #[test]
    fn sexpr_round_trip() {
        let decls = Decls::new()
            .var("a", Type::vec(Elem::U8, 8))
            .var("b", Type::vec(Elem::U8, 8));
        for text in [
            "(add a (broadcast 8 (u8 3)))",
            "(saturating_cast u8x8 (widening_add a b))",
            "(shr (cast u16x8 a) (broadcast 8 (u16 1)))",
            "(select (lt a b) a b)",
            "(slice 1 2 4 (concat a b))",
            "(shuffle (15 0) a b)",
            "(load u8 buf (ramp (i32 0) (i32 1) 8))",
            "(let t (add a b) (mul t t))",
        ] {
            let src = Source::new("<t>", text);
            let e = parse(&src, &decls).unwrap_or_else(|d| panic!("{d}"));
            let p = print(&e);
            let again = parse(&Source::new("<p>", p.as_str()), &decls)
                .unwrap_or_else(|d| panic!("{p}: {d}"));
            assert_eq!(e, again, "{text} -> {p}");
        }
    }

    #[test]
    fn reader_reports_unbalanced() {
        let src = Source::new("f.sexp", "(add a\n  (b c)");
        let err = read_all(&src).unwrap_err();
        assert_eq!(err.location(), "f.sexp:1:1");
    }
}
