//! A parser for the operation pseudocode of Intel's intrinsics data.
//!
//! The language is line-oriented: `FOR j := 0 to 15 ... ENDFOR`, `IF c [THEN] ... ELSE IF
//! ... ELSE ... FI`, `CASE x OF v: stmt ... ESAC`, `DO WHILE c ... OD`, `DEFINE F(params) {
//! ... }`, `RETURN e`, and assignments `x := e`, `x[hi:lo] := e`, `x[bit] := e`. A line ending
//! in `\` continues on the next. Expressions have C-like operators plus the words `AND`,
//! `OR`, `XOR`, `NOT` (bitwise), bit slices `x[hi:lo]` and calls `F(args)`.

use std::rc::Rc;

/// An expression.
#[derive(Clone, Debug)]
pub enum PExpr {
    /// A number.
    Num(i128),
    /// A name.
    Name(String),
    /// `x[hi:lo]`, or `x[bit]` when `lo` is `None`.
    Slice(Rc<PExpr>, Rc<PExpr>, Option<Rc<PExpr>>),
    /// `F(args)`.
    Call(String, Vec<PExpr>),
    /// A binary operator, by its spelling (`+`, `AND`, `<<`, ...).
    Bin(String, Rc<PExpr>, Rc<PExpr>),
    /// A unary operator (`-`, `~`, `NOT`, `!`).
    Un(String, Rc<PExpr>),
    /// `c ? a : b`.
    Cond(Rc<PExpr>, Rc<PExpr>, Rc<PExpr>),
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `target := value`.
    Assign(PExpr, PExpr),
    /// `FOR var := from to to ... ENDFOR`.
    For(String, PExpr, PExpr, Vec<Stmt>),
    /// `IF c ... ELSE ... FI` (an `ELSE IF` chain nests in the else branch).
    If(PExpr, Vec<Stmt>, Vec<Stmt>),
    /// `CASE x OF v: stmt ... ESAC`.
    Case(PExpr, Vec<(PExpr, Vec<Stmt>)>),
    /// `DO WHILE c ... OD`.
    While(PExpr, Vec<Stmt>),
    /// `DEFINE name(params) { body }`.
    Define(String, Vec<PExpr>, Vec<Stmt>),
    /// `RETURN e`.
    Return(PExpr),
    /// A statement the importer does not model (`BREAK`, a bare call, ...), with its text.
    Other(String),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i128),
    Word(String),
    Sym(&'static str),
    Newline,
}

const SYMBOLS: &[&str] = &[
    ":=", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&",
    "|", "^", "~", "!", "(", ")", "[", "]", "{", "}", ",", ":", "?", ";", "=",
];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let text = text.replace("\\\n", " ").replace("\\\r\n", " ");
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c == '\n' {
            out.push(Tok::Newline);
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i] as char).is_ascii_alphanumeric() {
                i += 1;
            }
            let s = &text[start..i];
            let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                i128::from_str_radix(h, 16)
            } else {
                s.parse()
            }
            .map_err(|_| format!("bad number `{s}`"))?;
            out.push(Tok::Num(v));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len()
                && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
            {
                i += 1;
            }
            out.push(Tok::Word(text[start..i].to_string()));
        } else if let Some(s) = SYMBOLS.iter().find(|s| text[i..].starts_with(**s)) {
            out.push(Tok::Sym(s));
            i += s.len();
        } else {
            return Err(format!("unexpected character `{c}`"));
        }
    }
    out.push(Tok::Newline);
    Ok(out)
}

/// Parses a whole operation.
pub fn parse(text: &str) -> Result<Vec<Stmt>, String> {
    let toks = lex(text)?;
    let mut p = P {
        toks,
        pos: 0,
        depth: 0,
    };
    let body = p.block(&[])?;
    p.skip_newlines();
    if p.pos < p.toks.len() {
        return Err(format!("unexpected `{:?}`", p.toks[p.pos]));
    }
    Ok(body)
}

struct P {
    toks: Vec<Tok>,
    pos: usize,
    /// Nesting of statements and expressions being parsed.
    depth: usize,
}

/// The deepest nesting of statements and expressions accepted (Intel's texts nest a few
/// levels; the limit keeps a hostile input from overflowing the stack).
const MAX_DEPTH: usize = 100;

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn at_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }
    fn at_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(x)) if *x == s)
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        let ok = self.at_sym(s);
        if ok {
            self.pos += 1;
        }
        ok
    }
    fn eat_word(&mut self, w: &str) -> bool {
        let ok = self.at_word(w);
        if ok {
            self.pos += 1;
        }
        ok
    }
    fn expect_sym(&mut self, s: &str) -> Result<(), String> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(format!("expected `{s}`, found {:?}", self.peek()))
        }
    }
    fn expect_word(&mut self, w: &str) -> Result<(), String> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(format!("expected `{w}`, found {:?}", self.peek()))
        }
    }
    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Some(Tok::Newline)) || self.at_sym(";") {
            self.pos += 1;
        }
    }
    fn end_line(&mut self) -> Result<(), String> {
        if matches!(self.peek(), Some(Tok::Newline) | None) || self.at_sym(";") || self.at_sym("}")
        {
            self.skip_newlines();
            Ok(())
        } else {
            Err(format!(
                "expected the end of the line, found {:?}",
                self.peek()
            ))
        }
    }

    /// Statements up to (not including) one of the `end` words, `}` or the end.
    fn block(&mut self, end: &[&str]) -> Result<Vec<Stmt>, String> {
        let mut out = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek() {
                None => return Ok(out),
                Some(Tok::Sym("}")) => return Ok(out),
                Some(Tok::Word(w)) if end.contains(&w.as_str()) => return Ok(out),
                _ => out.push(self.stmt()?),
            }
        }
    }

    fn stmt(&mut self) -> Result<Stmt, String> {
        self.nest(|p| p.stmt_inner())
    }

    /// Runs `f` one level deeper, refusing inputs nested past [`MAX_DEPTH`].
    fn nest<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<T, String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} levels deep"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> Result<Stmt, String> {
        if self.eat_word("FOR") {
            let v = self.name("a loop variable")?;
            self.expect_sym(":=")?;
            let from = self.expr()?;
            if !self.eat_word("to") {
                self.expect_word("TO")?;
            }
            let to = self.expr()?;
            let body = self.block(&["ENDFOR"])?;
            self.expect_word("ENDFOR")?;
            self.end_line()?;
            return Ok(Stmt::For(v, from, to, body));
        }
        if self.eat_word("IF") {
            return self.if_rest();
        }
        if self.eat_word("CASE") {
            let x = self.expr()?;
            self.expect_word("OF")?;
            let mut arms = Vec::new();
            loop {
                self.skip_newlines();
                if self.eat_word("ESAC") {
                    break;
                }
                let v = self.expr()?;
                self.expect_sym(":")?;
                let s = self.stmt()?;
                arms.push((v, vec![s]));
            }
            self.end_line()?;
            return Ok(Stmt::Case(x, arms));
        }
        if self.at_word("DO") {
            self.pos += 1;
            self.expect_word("WHILE")?;
            let c = self.expr()?;
            let body = self.block(&["OD"])?;
            self.expect_word("OD")?;
            self.end_line()?;
            return Ok(Stmt::While(c, body));
        }
        if self.eat_word("DEFINE") {
            let name = self.name("a function name")?;
            self.expect_sym("(")?;
            let params = self.args()?;
            self.skip_newlines();
            self.expect_sym("{")?;
            let body = self.block(&[])?;
            self.expect_sym("}")?;
            self.skip_newlines();
            return Ok(Stmt::Define(name, params, body));
        }
        if self.eat_word("RETURN") {
            let e = self.expr()?;
            self.end_line()?;
            return Ok(Stmt::Return(e));
        }
        let start = self.pos;
        let target = self.expr()?;
        if self.eat_sym(":=") {
            let value = self.expr()?;
            self.end_line()?;
            return Ok(Stmt::Assign(target, value));
        }
        // Anything else is kept as text, so that evaluation can name it.
        while !matches!(self.peek(), Some(Tok::Newline) | None) {
            self.pos += 1;
        }
        let text: Vec<String> = self.toks[start..self.pos].iter().map(tok_text).collect();
        self.skip_newlines();
        Ok(Stmt::Other(text.join(" ")))
    }

    /// The word at the cursor, taken; `what` names what was expected otherwise.
    fn name(&mut self, what: &str) -> Result<String, String> {
        let Some(Tok::Word(w)) = self.peek().cloned() else {
            return Err(format!("expected {what}"));
        };
        self.pos += 1;
        Ok(w)
    }

    /// Comma-separated expressions up to and including `)` (the `(` is already read).
    fn args(&mut self) -> Result<Vec<PExpr>, String> {
        let mut args = Vec::new();
        if self.eat_sym(")") {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat_sym(")") {
                return Ok(args);
            }
            self.expect_sym(",")?;
        }
    }

    /// The rest of `IF`, through its `FI`.
    fn if_rest(&mut self) -> Result<Stmt, String> {
        let s = self.if_rest_shared()?;
        self.expect_word("FI")?;
        self.end_line()?;
        Ok(s)
    }

    /// The rest of an `ELSE IF`, which ends at the enclosing `FI` (not consumed).
    fn if_rest_shared(&mut self) -> Result<Stmt, String> {
        let c = self.expr()?;
        self.eat_word("THEN");
        let then = self.block(&["ELSE", "FI"])?;
        let mut els = Vec::new();
        if self.eat_word("ELSE") {
            if self.eat_word("IF") {
                // `ELSE IF` shares the outer `FI`.
                els.push(self.nest(|p| p.if_rest_shared())?);
            } else {
                els = self.block(&["FI"])?;
            }
        }
        Ok(Stmt::If(c, then, els))
    }

    fn expr(&mut self) -> Result<PExpr, String> {
        self.nest(|p| p.expr_inner())
    }

    fn expr_inner(&mut self) -> Result<PExpr, String> {
        let c = self.binary(0)?;
        if self.eat_sym("?") {
            let a = self.expr()?;
            self.expect_sym(":")?;
            let b = self.expr()?;
            return Ok(PExpr::Cond(Rc::new(c), Rc::new(a), Rc::new(b)));
        }
        Ok(c)
    }

    /// The binary operator at the cursor and its precedence level.
    fn bin_op(&self) -> Option<(String, usize)> {
        let (s, level) = match self.peek()? {
            Tok::Sym(s) => (
                s.to_string(),
                match *s {
                    "||" => 0,
                    "&&" => 1,
                    "|" => 2,
                    "^" => 3,
                    "&" => 4,
                    "==" | "!=" => 5,
                    "<" | ">" | "<=" | ">=" => 6,
                    "<<" | ">>" => 7,
                    "+" | "-" => 8,
                    "*" | "/" | "%" => 9,
                    _ => return None,
                },
            ),
            Tok::Word(w) => (
                w.clone(),
                match w.as_str() {
                    "OR" => 2,
                    "XOR" => 3,
                    "AND" => 4,
                    _ => return None,
                },
            ),
            _ => return None,
        };
        Some((s, level))
    }

    fn binary(&mut self, min: usize) -> Result<PExpr, String> {
        let mut lhs = self.unary()?;
        while let Some((op, level)) = self.bin_op() {
            if level < min {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            lhs = PExpr::Bin(op, Rc::new(lhs), Rc::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<PExpr, String> {
        for op in ["-", "~", "!"] {
            if self.eat_sym(op) {
                return Ok(PExpr::Un(op.into(), Rc::new(self.nest(|p| p.unary())?)));
            }
        }
        if self.eat_word("NOT") {
            return Ok(PExpr::Un("NOT".into(), Rc::new(self.nest(|p| p.unary())?)));
        }
        let mut e = self.primary()?;
        while self.eat_sym("[") {
            let hi = self.expr()?;
            let lo = if self.eat_sym(":") {
                Some(Rc::new(self.expr()?))
            } else {
                None
            };
            self.expect_sym("]")?;
            e = PExpr::Slice(Rc::new(e), Rc::new(hi), lo);
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<PExpr, String> {
        match self.peek().cloned() {
            Some(Tok::Num(v)) => {
                self.pos += 1;
                Ok(PExpr::Num(v))
            }
            Some(Tok::Word(w)) => {
                self.pos += 1;
                if self.eat_sym("(") {
                    return Ok(PExpr::Call(w, self.args()?));
                }
                Ok(PExpr::Name(w))
            }
            Some(Tok::Sym("(")) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect_sym(")")?;
                Ok(e)
            }
            t => Err(format!("expected an expression, found {t:?}")),
        }
    }
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Num(v) => v.to_string(),
        Tok::Word(w) => w.clone(),
        Tok::Sym(s) => s.to_string(),
        Tok::Newline => "\n".into(),
    }
}
