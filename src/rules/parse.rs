//! Reading rule files into declarations (untyped); [`super::instantiate`] types them.
//!
//! ```text
//! ;; Prose after `;;` documents the rule that follows.
//! rule widening_add(x: T, y: T) where W.bits >= 2 * T.bits:
//!     W(x) + W(y) => W(widening_add(x, y))
//! ```
//! See `docs/rules.md` for the whole language.

use std::ops::Range;
use std::sync::Arc;

use crate::diag::{Diag, Source};
use crate::syntax::lexer::Tok;
use crate::syntax::parse::{Ast, Parser};

/// How a derived type variable is computed from another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TypeFn {
    /// Twice the width, same signedness.
    Widen,
    /// Half the width, same signedness.
    Narrow,
    /// Same width, signed.
    Signed,
    /// Same width, unsigned.
    Unsigned,
    /// The same type.
    Same,
}

/// A condition on type variables.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum TypePred {
    /// `T unsigned`
    Unsigned(String),
    /// `T signed`
    Signed(String),
    /// `same_signedness(T, V)`
    SameSignedness(String, String),
    /// A constant expression over type attributes, e.g. `T.bits <= 32`.
    Expr(Ast),
}

/// One rule as written.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RuleDecl {
    /// The rule's name (`file:line` when none is given).
    pub name: String,
    /// The file it is in.
    #[serde(with = "super::snapshot::source_ref")]
    pub src: Arc<Source>,
    /// 1-based line of the `rule` keyword.
    pub line: usize,
    /// Span of the whole rule.
    pub span: Range<usize>,
    /// The `;;` prose before it.
    pub doc: String,
    /// Pattern variables and their type names.
    pub params: Vec<(String, String, Range<usize>)>,
    /// Derived type variables: `U = widen(T)`.
    pub derived: Vec<(String, TypeFn, String, Range<usize>)>,
    /// Conditions on types.
    pub type_preds: Vec<(TypePred, Range<usize>)>,
    /// Priority (higher wins; default 0).
    pub priority: i32,
    /// Left-hand side.
    pub lhs: Ast,
    /// Right-hand side.
    pub rhs: Ast,
    /// Predicate after `if`.
    pub pred: Option<Ast>,
}

impl RuleDecl {
    /// `file:line` of the rule.
    pub fn location(&self) -> String {
        format!("{}:{}", self.src.name, self.line)
    }
}

pub use crate::types::{is_type_var, type_var_of};

/// Parses every rule in a file.
pub fn parse_file(src: &Arc<Source>) -> Result<Vec<RuleDecl>, Diag> {
    let toks = crate::syntax::template::expand_file(src)?;
    let mut p = Parser::new(src, &toks);
    let mut out = Vec::new();
    while !p.at_eof() {
        out.push(parse_rule(&mut p, src)?);
    }
    Ok(out)
}

/// The `;;` comment lines directly above `line` (1-based), without the markers.
/// The `;;` prose on the lines right above 1-based `line`, joined into one line (rule and
/// description files document their entries so).
pub fn doc_above(src: &Source, line: usize) -> String {
    let mut doc = Vec::new();
    let mut i = line.saturating_sub(1);
    while i > 0 {
        let l = src.line(i).unwrap_or("").trim();
        if let Some(rest) = l.strip_prefix(";;") {
            doc.push(rest.trim().to_string());
            i -= 1;
        } else {
            break;
        }
    }
    doc.reverse();
    doc.join(" ")
}

fn type_fn(name: &str) -> Option<TypeFn> {
    Some(match name {
        "widen" => TypeFn::Widen,
        "narrow" => TypeFn::Narrow,
        "signed" => TypeFn::Signed,
        "unsigned" => TypeFn::Unsigned,
        _ => return None,
    })
}

/// A type expression: a type variable, or `widen(...)`, `narrow(...)`, `signed(...)`,
/// `unsigned(...)` of one, nested as needed. Returns the name of a type variable holding it
/// (intermediate results get names like `widen(T)`) and the end of its span.
fn type_expr(
    p: &mut Parser,
    src: &Arc<Source>,
    derived: &mut Vec<(String, TypeFn, String, Range<usize>)>,
) -> Result<(String, usize), Diag> {
    let (f, fs) = p.ident()?;
    if is_type_var(&f) {
        return Ok((f, fs.end));
    }
    let tf = type_fn(&f).ok_or_else(|| {
        Diag::new(
            src,
            fs.clone(),
            format!("unknown type function `{f}`; use widen, narrow, signed or unsigned"),
        )
    })?;
    p.expect("(")?;
    let (inner, _) = type_expr(p, src, derived)?;
    let close = p.expect(")")?;
    let name = format!("{f}({inner})");
    if !derived.iter().any(|(n, ..)| *n == name) {
        derived.push((name.clone(), tf, inner, fs.start..close.end));
    }
    Ok((name, close.end))
}

/// Conditions after `where`: derived type variables, conditions on types, and a priority.
pub type WhereClause = (
    Vec<(String, TypeFn, String, Range<usize>)>,
    Vec<(TypePred, Range<usize>)>,
    i32,
);

/// Parses the comma-separated conditions after `where` (the keyword already consumed).
pub fn parse_where(p: &mut Parser, src: &Arc<Source>) -> Result<WhereClause, Diag> {
    let mut derived = Vec::new();
    let mut type_preds = Vec::new();
    let mut priority = 0;
    loop {
        let here = p.peek().span.start;
        // `priority N`
        if matches!(&p.peek().tok, Tok::Ident(k) if k == "priority") {
            p.bump();
            let neg = p.eat("-");
            let t = p.bump();
            match t.tok {
                Tok::Int(v) => priority = if neg { -(v as i32) } else { v as i32 },
                _ => return Err(p.error(&t, "expected a priority number")),
            }
        } else if let Tok::Ident(tv) = p.peek().tok.clone()
            && is_type_var(&tv)
            && matches!(p.peek2().tok, Tok::Punct("="))
        {
            // `U = widen(T)` or `U = T`
            p.bump();
            p.bump();
            let (arg, end) = type_expr(p, src, &mut derived)?;
            derived.push((tv, TypeFn::Same, arg, here..end));
        } else if let Tok::Ident(tv) = p.peek().tok.clone()
            && is_type_var(&tv)
            && matches!(&p.peek2().tok, Tok::Ident(k) if k == "unsigned" || k == "signed")
        {
            p.bump();
            let (k, ks) = p.ident()?;
            let pred = if k == "unsigned" {
                TypePred::Unsigned(tv)
            } else {
                TypePred::Signed(tv)
            };
            type_preds.push((pred, here..ks.end));
        } else if matches!(&p.peek().tok, Tok::Ident(k) if k == "same_signedness") {
            p.bump();
            p.expect("(")?;
            let (a, _) = p.ident()?;
            p.expect(",")?;
            let (b, _) = p.ident()?;
            let close = p.expect(")")?;
            type_preds.push((TypePred::SameSignedness(a, b), here..close.end));
        } else {
            let e = p.expr()?;
            let span = e.span.clone();
            type_preds.push((TypePred::Expr(e), span));
        }
        if !p.eat(",") {
            break;
        }
    }
    Ok((derived, type_preds, priority))
}

fn parse_rule(p: &mut Parser, src: &Arc<Source>) -> Result<RuleDecl, Diag> {
    let t = p.bump();
    if !matches!(&t.tok, Tok::Ident(k) if k == "rule") {
        return Err(p.error(&t, "expected `rule`"));
    }
    let start = t.span.start;
    let (line, _) = src.line_col(start);
    let mut name = format!("{}:{}", src.name, line);
    if let Tok::Ident(n) = &p.peek().tok {
        name = n.clone();
        p.bump();
    }
    p.expect("(")?;
    let mut params = Vec::new();
    if !p.eat(")") {
        loop {
            let (v, vs) = p.ident()?;
            p.expect(":")?;
            let (ty, ts) = p.ident()?;
            params.push((v, ty, vs.start..ts.end));
            if p.eat(")") {
                break;
            }
            p.expect(",")?;
        }
    }
    let (derived, type_preds, priority) = if p.eat_ident("where") {
        parse_where(p, src)?
    } else {
        (Vec::new(), Vec::new(), 0)
    };
    p.expect(":")?;
    let lhs = p.expr()?;
    p.expect("=>")?;
    let rhs = p.expr()?;
    let pred = if p.eat_ident("if") {
        Some(p.expr()?)
    } else {
        None
    };
    let end = pred.as_ref().map_or(rhs.span.end, |x| x.span.end);
    Ok(RuleDecl {
        name,
        src: src.clone(),
        line,
        span: start..end,
        doc: doc_above(src, line),
        params,
        derived,
        type_preds,
        priority,
        lhs,
        rhs,
        pred,
    })
}
