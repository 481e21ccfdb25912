//! Parser for Halide's printed expression syntax into an untyped surface tree ([`Ast`]).
//! Typing happens afterwards in [`super::elab`], which reports errors at these spans.

use std::ops::Range;
use std::sync::Arc;

use super::lexer::{Tok, Token};
use crate::diag::{Diag, Source};

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Unary {
    /// `-e`
    Neg,
    /// `!e`
    Not,
    /// `~e`
    BitNot,
}

/// Binary infix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
}

impl Binary {
    /// How the operator is written.
    pub fn symbol(self) -> &'static str {
        match self {
            Binary::Add => "+",
            Binary::Sub => "-",
            Binary::Mul => "*",
            Binary::Div => "/",
            Binary::Mod => "%",
            Binary::Shl => "<<",
            Binary::Shr => ">>",
            Binary::Lt => "<",
            Binary::Le => "<=",
            Binary::Gt => ">",
            Binary::Ge => ">=",
            Binary::Eq => "==",
            Binary::Ne => "!=",
            Binary::BitAnd => "&",
            Binary::BitOr => "|",
            Binary::BitXor => "^",
            Binary::LogAnd => "&&",
            Binary::LogOr => "||",
        }
    }
}

/// A surface expression.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum AstKind {
    /// An integer literal whose type comes from context.
    Int(i128),
    /// A floating-point literal (reported as unsupported).
    Float(String),
    /// `true` / `false`.
    Bool(bool),
    /// A variable or bare name.
    Name(String),
    /// `name(args)`, optionally `name<T>(args)`.
    Call {
        name: String,
        name_span: Range<usize>,
        angle: Option<(String, Range<usize>)>,
        args: Vec<Ast>,
    },
    /// `name[index]`, with alignment facts when an importer knows them.
    Index {
        name: String,
        index: Box<Ast>,
        align: Option<(i64, i64)>,
    },
    /// `(T)e`: a typed constant, a call's type annotation, or a cast.
    Typed {
        ty: String,
        ty_span: Range<usize>,
        e: Box<Ast>,
    },
    /// A prefix operator.
    Unary(Unary, Box<Ast>),
    /// An infix operator.
    Binary(Binary, Box<Ast>, Box<Ast>),
    /// `let name = value in body`
    Let {
        name: String,
        value: Box<Ast>,
        body: Box<Ast>,
    },
    /// `[a, b, ...]` (shuffle indices).
    List(Vec<Ast>),
}

/// A surface expression with its span.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Ast {
    /// The expression.
    pub kind: AstKind,
    /// Where it is.
    pub span: Range<usize>,
}

/// A cursor over tokens.
pub struct Parser<'a> {
    /// The source, for diagnostics.
    pub src: &'a Arc<Source>,
    toks: &'a [Token],
    pos: usize,
    /// When set, newlines are skipped everywhere; otherwise only inside brackets and after
    /// an infix operator (so line-oriented files can continue an expression).
    skip_newlines: bool,
    /// Open `(` and `[` not yet closed.
    brackets: usize,
    depth: usize,
}

/// Nesting deeper than this is reported instead of risking the stack.
const MAX_DEPTH: usize = 2000;

impl<'a> Parser<'a> {
    /// A parser over `toks`, which must end with `Eof`.
    pub fn new(src: &'a Arc<Source>, toks: &'a [Token]) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            skip_newlines: true,
            brackets: 0,
            depth: 0,
        }
    }

    /// Makes newlines significant (for line-oriented files); they are still skipped inside
    /// brackets.
    pub fn set_skip_newlines(&mut self, skip: bool) {
        self.skip_newlines = skip;
    }

    fn skip_nl(&mut self) {
        while (self.skip_newlines || self.brackets > 0)
            && matches!(self.toks[self.pos].tok, Tok::Newline)
        {
            self.pos += 1;
        }
    }

    fn skip_nl_always(&mut self) {
        while matches!(self.toks[self.pos].tok, Tok::Newline) {
            self.pos += 1;
        }
    }

    /// The next token (newlines skipped when they are insignificant).
    pub fn peek(&mut self) -> &Token {
        self.skip_nl();
        &self.toks[self.pos]
    }

    /// The token after the next one, ignoring newline significance.
    pub fn peek2(&mut self) -> &Token {
        self.skip_nl();
        let mut j = self.pos + 1;
        while j < self.toks.len() - 1 && matches!(self.toks[j].tok, Tok::Newline) {
            j += 1;
        }
        &self.toks[j.min(self.toks.len() - 1)]
    }

    /// Consumes and returns the next token, tracking bracket nesting.
    pub fn bump(&mut self) -> Token {
        self.skip_nl();
        let t = self.toks[self.pos].clone();
        if !matches!(t.tok, Tok::Eof) {
            self.pos += 1;
        }
        match t.tok {
            Tok::Punct("(") | Tok::Punct("[") => self.brackets += 1,
            Tok::Punct(")") | Tok::Punct("]") => self.brackets = self.brackets.saturating_sub(1),
            _ => {}
        }
        t
    }

    /// True (and consumes it) if the next token is the punctuation `p`.
    pub fn eat(&mut self, p: &str) -> bool {
        if matches!(&self.peek().tok, Tok::Punct(q) if *q == p) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// True (and consumes it) if the next token is the identifier `kw`.
    pub fn eat_ident(&mut self, kw: &str) -> bool {
        if matches!(&self.peek().tok, Tok::Ident(s) if s == kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consumes the punctuation `p` or reports what was found instead.
    pub fn expect(&mut self, p: &str) -> Result<Range<usize>, Diag> {
        let t = self.bump();
        match &t.tok {
            Tok::Punct(q) if *q == p => Ok(t.span),
            _ => Err(self.error(&t, &format!("expected `{p}`"))),
        }
    }

    /// Consumes an identifier.
    pub fn ident(&mut self) -> Result<(String, Range<usize>), Diag> {
        let t = self.bump();
        match t.tok {
            Tok::Ident(s) => Ok((s, t.span)),
            _ => Err(self.error(&t, "expected a name")),
        }
    }

    /// A diagnostic at token `t` describing what it is.
    pub fn error(&self, t: &Token, what: &str) -> Diag {
        let found = match &t.tok {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Float(s) => format!("`{s}`"),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Newline => "end of line".into(),
            Tok::Eof => "end of input".into(),
        };
        Diag::new(self.src, t.span.clone(), format!("{what}, found {found}"))
    }

    /// True at end of input.
    pub fn at_eof(&mut self) -> bool {
        matches!(self.peek().tok, Tok::Eof)
    }

    /// Parses one expression.
    pub fn expr(&mut self) -> Result<Ast, Diag> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let t = self.peek().clone();
            return Err(self.error(&t, "expression nests too deeply"));
        }
        let r = self.binary(0);
        self.depth -= 1;
        r
    }

    fn binary(&mut self, min_prec: u8) -> Result<Ast, Diag> {
        let depth = self.depth;
        let r = self.binary_chain(min_prec);
        self.depth = depth;
        r
    }

    /// A chain `a op b op c ...`: each operator deepens the (left-leaning) tree by one
    /// level, and counts toward [`MAX_DEPTH`] like a parenthesis, so that no later phase
    /// recurses deeper than the limit (a sum of 200,000 terms used to overflow the stack).
    fn binary_chain(&mut self, min_prec: u8) -> Result<Ast, Diag> {
        let mut lhs = self.unary()?;
        while let Tok::Punct(p) = self.peek().tok
            && let Some((op, prec)) = binary_op(p)
            && prec >= min_prec
        {
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                let t = self.peek().clone();
                return Err(self.error(
                    &t,
                    &format!("expression nests too deeply (more than {MAX_DEPTH} levels of operators and parentheses)"),
                ));
            }
            self.bump();
            // An expression continues on the next line after an infix operator.
            self.skip_nl_always();
            let rhs = self.binary(prec + 1)?;
            let span = lhs.span.start..rhs.span.end;
            lhs = Ast {
                kind: AstKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Ast, Diag> {
        let t = self.peek().clone();
        let op = match &t.tok {
            Tok::Punct("-") => Some(Unary::Neg),
            Tok::Punct("!") => Some(Unary::Not),
            Tok::Punct("~") => Some(Unary::BitNot),
            _ => None,
        };
        if let Some(op) = op {
            // Each prefix operator is a level too (`- - - ... a`).
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(self.error(&t, "expression nests too deeply"));
            }
            self.bump();
            let e = self.unary();
            self.depth -= 1;
            let e = e?;
            let span = t.span.start..e.span.end;
            return Ok(Ast {
                kind: AstKind::Unary(op, Box::new(e)),
                span,
            });
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Ast, Diag> {
        let t = self.bump();
        let start = t.span.start;
        match t.tok {
            Tok::Int(v) => Ok(Ast {
                kind: AstKind::Int(v),
                span: t.span,
            }),
            Tok::Float(s) => Ok(Ast {
                kind: AstKind::Float(s),
                span: t.span,
            }),
            Tok::Punct("[") => {
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        let item = self.expr()?;
                        if self.eat(".") {
                            // `lo..hi`: the integers from `lo` up to, not including, `hi`.
                            self.expect(".")?;
                            let hi = self.expr()?;
                            let (AstKind::Int(a), AstKind::Int(b)) = (&item.kind, &hi.kind) else {
                                return Err(Diag::new(
                                    self.src,
                                    item.span.start..hi.span.end,
                                    "a range in a list needs integer bounds: `0..8`",
                                ));
                            };
                            if b < a || b - a > 4096 {
                                return Err(Diag::new(
                                    self.src,
                                    item.span.start..hi.span.end,
                                    "a range in a list must be ascending and at most 4096 long",
                                ));
                            }
                            for v in *a..*b {
                                items.push(Ast {
                                    kind: AstKind::Int(v),
                                    span: item.span.start..hi.span.end,
                                });
                            }
                        } else {
                            items.push(item);
                        }
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                let end = self.toks[self.pos - 1].span.end;
                Ok(Ast {
                    kind: AstKind::List(items),
                    span: start..end,
                })
            }
            Tok::Punct("(") => {
                // `(T)e` when the parenthesised thing is a single type name followed by an
                // operand; otherwise a grouping.
                if let Tok::Ident(name) = self.peek().tok.clone()
                    && looks_like_type(&name)
                    && matches!(self.peek2().tok, Tok::Punct(")"))
                {
                    let ty_tok = self.bump();
                    self.expect(")")?;
                    let e = self.unary()?;
                    let span = start..e.span.end;
                    return Ok(Ast {
                        kind: AstKind::Typed {
                            ty: name,
                            ty_span: ty_tok.span,
                            e: Box::new(e),
                        },
                        span,
                    });
                }
                let mut inner = self.expr()?;
                let close = self.expect(")")?;
                inner.span = start..close.end;
                Ok(inner)
            }
            Tok::Ident(name) => self.after_ident(name, t.span),
            _ => Err(self.error(&t, "expected an expression")),
        }
    }

    fn after_ident(&mut self, name: String, span: Range<usize>) -> Result<Ast, Diag> {
        let start = span.start;
        match name.as_str() {
            "true" => {
                return Ok(Ast {
                    kind: AstKind::Bool(true),
                    span,
                });
            }
            "false" => {
                return Ok(Ast {
                    kind: AstKind::Bool(false),
                    span,
                });
            }
            "let" => {
                let (var, _) = self.ident()?;
                self.expect("=")?;
                let value = self.expr()?;
                if !self.eat_ident("in") {
                    let t = self.peek().clone();
                    return Err(self.error(&t, "expected `in` after the let value"));
                }
                let body = self.expr()?;
                let end = body.span.end;
                return Ok(Ast {
                    kind: AstKind::Let {
                        name: var,
                        value: Box::new(value),
                        body: Box::new(body),
                    },
                    span: start..end,
                });
            }
            _ => {}
        }
        // `name<T>(...)`: only for calls that take a type, so `a < b` still parses.
        let mut angle = None;
        if TYPE_TAKING.contains(&name.as_str()) && matches!(self.peek().tok, Tok::Punct("<")) {
            self.bump();
            let (ty, ty_span) = self.ident()?;
            self.expect(">")?;
            angle = Some((ty, ty_span));
        }
        if self.eat("(") {
            let mut args = Vec::new();
            if !self.eat(")") {
                loop {
                    args.push(self.expr()?);
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            let end = self.toks[self.pos - 1].span.end;
            return Ok(Ast {
                kind: AstKind::Call {
                    name,
                    name_span: span,
                    angle,
                    args,
                },
                span: start..end,
            });
        }
        if let Some((_, s)) = angle {
            return Err(Diag::new(
                self.src,
                s,
                "a type argument must be followed by `(`",
            ));
        }
        if self.eat("[") {
            let index = self.expr()?;
            let close = self.expect("]")?;
            return Ok(Ast {
                kind: AstKind::Index {
                    name,
                    index: Box::new(index),
                    align: None,
                },
                span: start..close.end,
            });
        }
        Ok(Ast {
            kind: AstKind::Name(name),
            span,
        })
    }
}

/// Calls that accept `name<T>(...)`.
const TYPE_TAKING: &[&str] = &["saturating_cast", "reinterpret", "cast"];

/// Heuristic used only to tell `(T)e` from a parenthesised variable: type names.
pub fn looks_like_type(name: &str) -> bool {
    crate::types::Type::parse(name, false).is_some()
        || name.starts_with("float")
        || name.starts_with("f32")
        || name.starts_with("f64")
        || name == "bool"
}

fn binary_op(p: &str) -> Option<(Binary, u8)> {
    // C precedence, loosest first.
    Some(match p {
        "||" => (Binary::LogOr, 1),
        "&&" => (Binary::LogAnd, 2),
        "|" => (Binary::BitOr, 3),
        "^" => (Binary::BitXor, 4),
        "&" => (Binary::BitAnd, 5),
        "==" => (Binary::Eq, 6),
        "!=" => (Binary::Ne, 6),
        "<" => (Binary::Lt, 7),
        "<=" => (Binary::Le, 7),
        ">" => (Binary::Gt, 7),
        ">=" => (Binary::Ge, 7),
        "<<" => (Binary::Shl, 8),
        ">>" => (Binary::Shr, 8),
        "+" => (Binary::Add, 9),
        "-" => (Binary::Sub, 9),
        "*" => (Binary::Mul, 10),
        "/" => (Binary::Div, 10),
        "%" => (Binary::Mod, 10),
        _ => return None,
    })
}
