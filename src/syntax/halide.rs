//! Halide's printed IR syntax: parse to typed IR and print back.
//!
//! The printer writes what Halide's IR printer writes where the two agree (`(uint8x32)absd(a,
//! b)`, `uint16x32(x)`, `x32((uint8)1)`, `ramp(0, 1, 32)`, infix arithmetic in parentheses),
//! and it prints a constant bare exactly when [`super::elab`] would give the bare literal the
//! constant's type back. That makes print-then-parse the identity (a property test checks it).

use std::sync::Arc;

use super::elab::{Decls, ElabOptions, Elaborator, LitRole, literal_type};
use super::lexer::lex;
use super::parse::Parser;
use crate::diag::{Diag, Source};
use crate::interp::lane;
use crate::ir::{Expr, Op};
use crate::types::{Elem, Type};

/// Parses and type-checks one expression.
pub fn parse_expr(src: &Arc<Source>, decls: &Decls, opts: ElabOptions) -> Result<Expr, Diag> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, &toks);
    let ast = p.expr()?;
    if !p.at_eof() {
        let t = p.peek().clone();
        return Err(p.error(&t, "expected the end of the expression"));
    }
    Elaborator::new(src, decls, opts).expr(&ast)
}

/// Convenience: parse `text` (named `<expr>`) with the given declarations.
pub fn parse_str(text: &str, decls: &Decls) -> Result<Expr, Diag> {
    parse_expr(&Source::new("<expr>", text), decls, ElabOptions::default())
}

/// For tests: `text` parsed with variables of the given types (`("a", "u8x8")`); panics
/// with the diagnostic on error.
#[cfg(test)]
pub(crate) fn parse_with_vars(text: &str, vars: &[(&str, &str)]) -> Expr {
    let mut decls = Decls::new();
    for (name, ty) in vars {
        decls = decls.var(name, crate::types::Type::parse(ty, false).unwrap());
    }
    parse_str(text, &decls).unwrap_or_else(|d| panic!("{d}"))
}

impl std::fmt::Display for Expr {
    /// An expression prints in Halide's syntax.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print(self))
    }
}

/// Prints an expression in Halide syntax.
pub fn print(e: &Expr) -> String {
    let mut out = String::new();
    pr(e, Ctx::Default, &mut out);
    out
}

/// What decides the type of a bare literal in the position being printed.
#[derive(Clone, Copy)]
enum Ctx {
    /// Nothing: a bare literal is `i32`.
    Default,
    /// A literal here takes this role relative to a partner of this type.
    Role(LitRole, Type),
    /// Constants here always print with their type.
    Typed,
}

fn const_text(bits: u128, elem: Elem) -> String {
    if elem == Elem::Bool {
        return if bits != 0 { "true" } else { "false" }.into();
    }
    if elem == Elem::U128 {
        return bits.to_string();
    }
    lane::to_i128(bits, elem).to_string()
}

/// A float constant as it reads back to the same bits: `1.5f`, `-0.0f`, and an
/// infinity or NaN (which have no literal) as the reinterpretation of its bits.
fn float_literal(bits: u128) -> String {
    let x = crate::interp::float::from_lane(bits);
    if !x.is_finite() {
        return format!("(float32)reinterpret((uint32){bits})");
    }
    // `Display` never uses an exponent (the lexer reads none) and gives the shortest
    // digits that read back to the same float.
    let mut text = format!("{x}");
    if !text.contains('.') {
        text.push_str(".0");
    }
    text.push('f');
    text
}

/// True when a bare literal printed in `ctx` would be parsed back with type `ty`.
fn bare_ok(ctx: Ctx, ty: Type, value: i128) -> bool {
    let parsed = match ctx {
        Ctx::Typed => return false,
        Ctx::Default => Type::INDEX,
        Ctx::Role(role, partner) => literal_type(role, Some(partner), value),
    };
    parsed == ty
}

fn prefix(t: Type, out: &mut String) {
    if t != Type::INDEX {
        out.push('(');
        out.push_str(&t.halide_name());
        out.push(')');
    }
}

fn args_list(args: &[Expr], ctxs: &[Ctx], out: &mut String) {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        pr(a, ctxs.get(i).copied().unwrap_or(Ctx::Default), out);
    }
}

/// Contexts for the two operands of a same-type operator (or `widening_mul`, whose operands
/// may differ in signedness). The elaborator types a bare literal from its partner, or as
/// i32 when the partner is a bare literal too; so two constants print bare only when both
/// are i32, and otherwise both print typed.
fn peer_ctxs(a: &Expr, b: &Expr) -> [Ctx; 2] {
    let is_const = |x: &Expr| matches!(x.op(), Op::Const(_));
    match (is_const(a), is_const(b)) {
        (true, true) if a.ty() == Type::INDEX && b.ty() == Type::INDEX => {
            [Ctx::Default, Ctx::Default]
        }
        (true, true) => [Ctx::Typed, Ctx::Typed],
        _ => [
            Ctx::Role(LitRole::Peer, b.ty()),
            Ctx::Role(LitRole::Peer, a.ty()),
        ],
    }
}

fn pr(e: &Expr, ctx: Ctx, out: &mut String) {
    let t = e.ty();
    let a = e.args();
    match e.op() {
        Op::Const(bits) if t.elem.is_float() => out.push_str(&float_literal(*bits)),
        Op::Const(bits) => {
            let text = const_text(*bits, t.elem);
            if t.elem == Elem::Bool {
                out.push_str(&text);
                return;
            }
            let value = if t.elem == Elem::U128 {
                i128::MAX
            } else {
                lane::to_i128(*bits, t.elem)
            };
            if t.elem != Elem::U128 && bare_ok(ctx, t, value) {
                out.push_str(&text);
            } else {
                out.push('(');
                out.push_str(&t.halide_name());
                out.push(')');
                out.push_str(&text);
            }
        }
        Op::Var(name) => out.push_str(name),
        Op::Load(name, _) => {
            out.push('(');
            out.push_str(&t.halide_name());
            out.push(')');
            out.push_str(name);
            out.push('[');
            pr(&a[0], Ctx::Default, out);
            out.push(']');
        }
        Op::Ramp => {
            out.push_str("ramp(");
            let c = peer_ctxs(&a[0], &a[1]);
            args_list(a, &c, out);
            out.push_str(&format!(", {})", t.lanes));
        }
        Op::Broadcast => {
            out.push_str(&format!("x{}(", t.lanes / a[0].ty().lanes));
            pr(&a[0], Ctx::Default, out);
            out.push(')');
        }
        Op::Cast => {
            out.push_str(&t.halide_name());
            out.push('(');
            pr(&a[0], Ctx::Default, out);
            out.push(')');
        }
        Op::Reinterpret | Op::SaturatingCast => {
            prefix(t, out);
            out.push_str(e.op().name());
            out.push('(');
            pr(&a[0], Ctx::Default, out);
            out.push(')');
        }
        Op::And | Op::Or if t.elem == Elem::Bool => {
            let c = peer_ctxs(&a[0], &a[1]);
            out.push('(');
            pr(&a[0], c[0], out);
            out.push_str(if matches!(e.op(), Op::And) {
                " && "
            } else {
                " || "
            });
            pr(&a[1], c[1], out);
            out.push(')');
        }
        Op::Not if t.elem == Elem::Bool => {
            out.push('!');
            pr(&a[0], Ctx::Default, out);
        }
        Op::Min | Op::Max | Op::Select => {
            out.push_str(e.op().name());
            out.push('(');
            if matches!(e.op(), Op::Select) {
                let c = peer_ctxs(&a[1], &a[2]);
                args_list(a, &[Ctx::Default, c[0], c[1]], out);
            } else {
                let c = peer_ctxs(&a[0], &a[1]);
                args_list(a, &c, out);
            }
            out.push(')');
        }
        Op::Let(name) => {
            out.push_str("(let ");
            out.push_str(name);
            out.push_str(" = ");
            pr(&a[0], Ctx::Default, out);
            out.push_str(" in ");
            pr(&a[1], Ctx::Default, out);
            out.push(')');
        }
        Op::Slice { start, stride } => {
            out.push_str("slice_vectors(");
            pr(&a[0], Ctx::Default, out);
            out.push_str(&format!(", {start}, {stride}, {})", t.lanes));
        }
        Op::Concat | Op::Interleave => {
            out.push_str(e.op().name());
            out.push('(');
            args_list(a, &[], out);
            out.push(')');
        }
        Op::Shuffle(idx) => {
            out.push_str("shuffle([");
            out.push_str(
                &idx.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            out.push_str("], ");
            args_list(a, &[], out);
            out.push(')');
        }
        Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
            out.push('(');
            out.push_str(&t.halide_name());
            out.push(')');
            out.push_str(e.op().name());
            out.push('(');
            pr(&a[0], Ctx::Default, out);
            out.push(')');
        }
        op => {
            if let Some(sym) = op.infix() {
                let c = peer_ctxs(&a[0], &a[1]);
                out.push('(');
                pr(&a[0], c[0], out);
                out.push(' ');
                out.push_str(sym);
                out.push(' ');
                pr(&a[1], c[1], out);
                out.push(')');
                return;
            }
            // Every remaining operator prints as a call with a `(T)` prefix.
            let ctxs: Vec<Ctx> = match op {
                Op::Shl
                | Op::Shr
                | Op::RoundingShl
                | Op::RoundingShr
                | Op::WideningShl
                | Op::WideningShr => {
                    vec![Ctx::Default, Ctx::Role(LitRole::ShiftAmount, a[0].ty())]
                }
                Op::WidenRightAdd | Op::WidenRightSub | Op::WidenRightMul => {
                    // A constant wide operand always prints typed: whether the narrow one
                    // prints bare depends on it, so it cannot depend on the narrow one.
                    vec![Ctx::Typed, Ctx::Role(LitRole::WidenRight, a[0].ty())]
                }
                Op::MulShiftRight | Op::RoundingMulShiftRight => {
                    let c = peer_ctxs(&a[0], &a[1]);
                    vec![c[0], c[1], Ctx::Role(LitRole::MulShift, a[0].ty())]
                }
                _ if a.len() == 2 => peer_ctxs(&a[0], &a[1]).to_vec(),
                _ => vec![],
            };
            prefix(t, out);
            out.push_str(&op.display_name());
            out.push('(');
            args_list(a, &ctxs, out);
            out.push(')');
        }
    }
    let _ = ctx;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Elem;

    fn decls() -> Decls {
        Decls::new()
            .var("a", Type::vec(Elem::U8, 32))
            .var("b", Type::vec(Elem::U8, 32))
            .var("s", Type::scalar(Elem::U32))
            .var("c", Type::vec(Elem::U16, 32))
            .var("d", Type::vec(Elem::U16, 32))
    }

    fn roundtrip(text: &str) -> String {
        let e = parse_str(text, &decls()).unwrap_or_else(|d| panic!("{d}"));
        let printed = print(&e);
        let again = parse_str(&printed, &decls()).unwrap_or_else(|d| panic!("{printed}\n{d}"));
        assert_eq!(e, again, "{text} printed as {printed}");
        printed
    }

    #[test]
    fn issue_examples_round_trip() {
        assert_eq!(
            roundtrip("(uint8x32)saturating_cast((uint16x32)absd(c, d))"),
            "(uint8x32)saturating_cast((uint16x32)absd(c, d))"
        );
        // absd of u8 is u8, so the uint16 annotation is a widening cast.
        assert_eq!(
            roundtrip("(uint16x32)absd(a, b)"),
            "uint16x32((uint8x32)absd(a, b))"
        );
        assert_eq!(roundtrip("uint16(s)"), "uint16(s)");
        assert_eq!(roundtrip("(uint16)1"), "(uint16)1");
        assert_eq!(roundtrip("x32((uint8)1)"), "x32((uint8)1)");
        assert_eq!(
            roundtrip("a + b * x32((uint8)2)"),
            "(a + (b * x32((uint8)2)))"
        );
        assert_eq!(roundtrip("shift_right(s, 3)"), "(uint32)shift_right(s, 3)");
        assert_eq!(roundtrip("s >> 3"), "(uint32)shift_right(s, 3)");
        assert_eq!(roundtrip("s + 1"), "(s + 1)");
        assert_eq!(
            roundtrip("select(a < b, a, b) == min(a, b) && true"),
            "((select((a < b), a, b) == min(a, b)) && x32(true))"
        );
        assert_eq!(
            roundtrip("(let t = a + b in t * t)"),
            "(let t = (a + b) in (t * t))"
        );
        assert_eq!(
            roundtrip("(uint8x16)buf[ramp(0, 1, 16)]"),
            "(uint8x16)buf[ramp(0, 1, 16)]"
        );
        assert_eq!(
            roundtrip("concat_vectors(slice_vectors(a, 0, 2, 16), slice_vectors(a, 1, 2, 16))"),
            "concat_vectors(slice_vectors(a, 0, 2, 16), slice_vectors(a, 1, 2, 16))"
        );
        assert_eq!(
            roundtrip("(uint8x8)vector_reduce_add(a)"),
            "(uint8x8)vector_reduce_add(a)"
        );
        assert_eq!(roundtrip("shuffle([3, 0], a)"), "shuffle([3, 0], a)");
        assert_eq!(roundtrip("-s"), "(0 - s)");
        assert_eq!(roundtrip("(int8)-5"), "(int8)-5");
    }

    #[test]
    fn lane_variable_vectorizes() {
        let src = Source::new("<t>", "(uint8)absd((uint8)in_u8(x), (uint8)in_u8(x + 16))");
        let opts = ElabOptions {
            lane_var: Some(("x".into(), 16)),
            ..Default::default()
        };
        let e = parse_expr(&src, &Decls::new(), opts).unwrap();
        assert_eq!(
            print(&e),
            "(uint8x16)absd((uint8x16)in_u8[ramp(0, 1, 16)], (uint8x16)in_u8[ramp(16, 1, 16)])"
        );
    }

    #[test]
    fn type_errors_point_at_the_problem() {
        let err = parse_str("a + s", &decls()).unwrap_err();
        assert_eq!(err.location(), "<expr>:1:1");
        assert!(err.message.contains("u8x32 and u32"), "{}", err.message);
        let err = parse_str("absd(a, q)", &decls()).unwrap_err();
        assert_eq!(err.location(), "<expr>:1:9");
        assert!(err.render().contains("unknown variable `q`"));
        let err = parse_str("a + 300", &decls()).unwrap_err();
        assert_eq!(err.location(), "<expr>:1:5");
        let err = parse_str("frobnicate(a)", &decls()).unwrap_err();
        assert!(err.message.contains("unknown function `frobnicate`"));
        let err = parse_str("a + 1.5f", &decls()).unwrap_err();
        assert!(err.message.contains("floating-point"));
    }
}

#[cfg(test)]
mod float_tests {
    use super::*;
    use crate::types::Elem;

    fn parse_float(text: &str) -> Result<Expr, Diag> {
        let decls = Decls::new()
            .var("x", Type::vec(Elem::F32, 8))
            .var("y", Type::vec(Elem::F32, 8))
            .var("s", Type::scalar(Elem::F32));
        let opts = ElabOptions {
            allow_float: true,
            ..Default::default()
        };
        parse_expr(&Source::new("<t>", text), &decls, opts)
    }

    fn roundtrip(text: &str) -> String {
        let e = parse_float(text).unwrap_or_else(|d| panic!("{d}"));
        let printed = print(&e);
        let again = parse_float(&printed).unwrap_or_else(|d| panic!("{printed}\n{d}"));
        assert_eq!(e, again, "{text} printed as {printed}");
        printed
    }

    #[test]
    fn float_expressions_round_trip() {
        assert_eq!(roundtrip("x * y + x"), "((x * y) + x)");
        assert_eq!(roundtrip("fma(x, y, x)"), "(float32x8)fma(x, y, x)");
        assert_eq!(roundtrip("sqrt(s) / s"), "((float32)sqrt(s) / s)");
        assert_eq!(roundtrip("-s"), "(float32)fneg(s)");
        assert_eq!(roundtrip("s * -1.5f"), "(s * -1.5f)");
        assert_eq!(roundtrip("s + 2"), "(s + 2.0f)");
        assert_eq!(roundtrip("s + 0.1f"), "(s + 0.1f)");
        assert_eq!(roundtrip("s * 0.0000001f"), "(s * 0.0000001f)");
        assert_eq!(
            roundtrip("s * 3.0e38f"),
            "(s * 300000000000000000000000000000000000000.0f)"
        );
        assert_eq!(
            roundtrip("s + (float32)reinterpret((uint32)2139095040)"),
            "(s + (float32)reinterpret((uint32)2139095040))"
        );
        assert_eq!(roundtrip("-0.0f + s"), "(-0.0f + s)");
    }

    #[test]
    fn float_misuse_is_refused_at_its_place() {
        let e = parse_float("x & y").unwrap_err();
        assert!(e.message.contains("not defined on f32x8"), "{}", e.message);
        let e = parse_float("s + 16777217").unwrap_err();
        assert_eq!(e.location(), "<t>:1:5");
        let e = parse_float("(int32)s").unwrap_err();
        assert!(e.message.contains("floats and integers"), "{}", e.message);
        let e = parse_float("sqrt((int32)3)").unwrap_err();
        assert!(e.message.contains("float operands"), "{}", e.message);
        // Without `allow_float` (every command but `harrow eval`) floats are refused.
        let e = parse_expr(
            &Source::new("<t>", "(float32)3"),
            &Decls::new(),
            ElabOptions::default(),
        )
        .unwrap_err();
        assert!(e.message.contains("not supported here"), "{}", e.message);
    }
}
