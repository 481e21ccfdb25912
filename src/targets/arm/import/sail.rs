//! A reader for the part of the Sail language that the Arm model's Advanced SIMD files use:
//! `function` definitions (execute, decode and helper functions) and the `decode64`
//! clauses that pick a decode function by the bits of an encoding.
//!
//! Sail is an expression language; blocks, `let`, `foreach`, `match` and `if` are all
//! expressions. Types are read only where evaluation needs them: a variable declared
//! `bits(E)` gets that width (Sail infers the width of `V(n)`, `Zeros()` and `undefined`
//! from it). Every other type is skipped. The file is cut into top-level items at lines
//! that start in the first column, so one item the reader does not follow costs that item
//! only (the instructions that use it are listed as unsupported).

use std::collections::HashMap;
use std::rc::Rc;

/// A token.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// A type variable, `'N`, without its quote.
    TyVar(String),
    Int(i128),
    /// A bit-vector literal: value and width.
    Bits(u128, u32),
    Str(String),
    Punct(&'static str),
}

const PUNCTS: &[&str] = &[
    "==", "!=", "<=", ">=", "=>", "->", "..", "(", ")", "{", "}", "[", "]", ",", ";", ":", "=",
    "<", ">", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", ".",
];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(b.len(), |k| i + k);
        } else if text[i..].starts_with("/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
        } else if c == b'"' {
            let end = text[i + 1..].find('"').ok_or("unterminated string")? + i + 1;
            out.push(Tok::Str(text[i + 1..end].to_string()));
            i = end + 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = text[start..i].replace('_', "");
            if let Some(bin) = word.strip_prefix("0b") {
                if bin.len() > 127 {
                    return Err(format!("`{word}` is wider than 127 bits"));
                }
                let v = u128::from_str_radix(bin, 2).map_err(|e| format!("`{word}`: {e}"))?;
                out.push(Tok::Bits(v, bin.len() as u32));
            } else if let Some(hex) = word.strip_prefix("0x") {
                if hex.len() > 31 {
                    return Err(format!("`{word}` is wider than 124 bits"));
                }
                let v = u128::from_str_radix(hex, 16).map_err(|e| format!("`{word}`: {e}"))?;
                out.push(Tok::Bits(v, 4 * hex.len() as u32));
            } else if i < b.len() && b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                return Err("a real number".into());
            } else {
                out.push(Tok::Int(
                    word.parse().map_err(|e| format!("`{word}`: {e}"))?,
                ));
            }
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'#') {
                i += 1;
            }
            let word = &text[start..i];
            out.push(match word.strip_prefix('\'') {
                Some(v) => Tok::TyVar(v.to_string()),
                None => Tok::Ident(word.to_string()),
            });
        } else {
            let p = PUNCTS
                .iter()
                .find(|p| text[i..].starts_with(**p))
                .ok_or_else(|| format!("unexpected character `{}`", c as char))?;
            out.push(Tok::Punct(p));
            i += p.len();
        }
    }
    Ok(out)
}

/// An expression.
#[derive(Clone, Debug)]
pub enum Ex {
    Int(i128),
    /// A bit-vector literal: value and width.
    Bits(u128, u32),
    Bool(bool),
    Str(String),
    /// A variable or an enumeration constant (a type variable `'x` names the variable `x`).
    Var(String),
    /// `undefined`, of the type it is ascribed, if any.
    Undefined(Option<Ty>),
    Call(String, Vec<Ex>),
    Bin(&'static str, Rc<Ex>, Rc<Ex>),
    /// `~(x)`: logical or bitwise not.
    Not(Rc<Ex>),
    /// `-x`.
    Neg(Rc<Ex>),
    /// `x[hi .. lo]`.
    Slice(Rc<Ex>, Rc<Ex>, Rc<Ex>),
    /// `x[i]`: one bit, as a bit.
    Index(Rc<Ex>, Rc<Ex>),
    /// `[a, b]`: a bit vector of the bits listed, first the highest.
    VecLit(Vec<Ex>),
    Tuple(Vec<Ex>),
    If(Rc<Ex>, Rc<Ex>, Option<Rc<Ex>>),
    Block(Rc<Vec<St>>),
    Match(Rc<Ex>, Rc<Vec<(Pat, Ex)>>),
    /// `foreach (v from a to b by s in inc|dec) body`.
    Foreach {
        var: String,
        from: Rc<Ex>,
        to: Rc<Ex>,
        step: Rc<Ex>,
        down: bool,
        body: Rc<Ex>,
    },
    While(Rc<Ex>, Rc<Ex>),
    Return(Rc<Ex>),
    Throw(Rc<Ex>),
    /// `assert(...)`: checks the model states about itself, not evaluated.
    Assert,
    /// `e : T`.
    Typed(Rc<Ex>, Ty),
}

/// A type, as far as evaluation needs one.
#[derive(Clone, Debug)]
pub enum Ty {
    /// `bits(E)`.
    Bits(Rc<Ex>),
    Other,
}

/// A statement of a block.
#[derive(Clone, Debug)]
pub enum St {
    /// `let p = e` (a name or a tuple of names).
    Let(Vec<String>, Option<Ty>, Ex),
    /// `x : T = e`: declares a mutable variable.
    Decl(String, Ty, Ex),
    /// `lhs = e`.
    Assign(Ex, Ex),
    Expr(Ex),
}

/// A pattern of `match` (and of a `decode64` clause).
#[derive(Clone, Debug)]
pub enum Pat {
    Wild,
    /// Bit fields from the highest: width, and the value if fixed.
    Bits(Vec<(u32, Option<u128>)>),
    /// An enumeration constant.
    Name(String),
    Int(i128),
}

/// A function definition.
#[derive(Clone, Debug)]
pub struct Func {
    pub params: Vec<String>,
    pub body: Ex,
}

/// A `decode64` clause: the encoding pattern (32 bits) and the body that reads its fields
/// from `op_code` and calls a decode function.
#[derive(Clone, Debug)]
pub struct Clause {
    pub pattern: Vec<(u32, Option<u128>)>,
    pub body: Ex,
}

impl Clause {
    /// Whether `word` has this clause's fixed bits.
    pub fn matches(&self, word: u32) -> bool {
        let mut at = 32u32;
        for (w, v) in &self.pattern {
            at -= w;
            if let Some(v) = v {
                let mask = (1u64 << w) - 1;
                if (u64::from(word) >> at) & mask != *v as u64 {
                    return false;
                }
            }
        }
        true
    }
}

/// What the reader made of the model's files.
#[derive(Default, Debug)]
pub struct Model {
    pub funcs: HashMap<String, Rc<Func>>,
    /// `decode64` clauses in the order of the file (the first that matches decodes).
    pub clauses: Vec<Clause>,
    /// Items the reader could not follow: name and why.
    pub unread: HashMap<String, String>,
}

/// Reads the top-level items of `text` into `model`.
pub fn read_into(model: &mut Model, text: &str) {
    for item in items(text) {
        let Some(rest) = item.strip_prefix("function ") else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name == "clause" {
            match lex(rest).and_then(|t| Parser { t, at: 0 }.clause()) {
                Ok(Some(c)) => model.clauses.push(c),
                Ok(None) => {}
                Err(e) => {
                    model
                        .unread
                        .insert(format!("clause {}", model.clauses.len()), e);
                }
            }
            continue;
        }
        match lex(rest).and_then(|t| Parser { t, at: 0 }.function()) {
            Ok(f) => {
                model.funcs.insert(name, Rc::new(f));
            }
            Err(e) => {
                model.unread.insert(name, e);
            }
        }
    }
}

/// The top-level items of a file: each starts at a line whose first character is not
/// blank and not a closing brace.
fn items(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let starts = line
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace() && c != '}' && c != ')');
        if starts || out.is_empty() {
            out.push(String::new());
        }
        let cur = out.last_mut().unwrap_or_else(|| unreachable!());
        cur.push_str(line);
        cur.push('\n');
    }
    out
}

struct Parser {
    t: Vec<Tok>,
    at: usize,
}

/// Binary operators by precedence, loosest first.
const LEVELS: &[&[&str]] = &[
    &["|"],
    &["&"],
    &["==", "!=", "<", "<=", ">", ">="],
    &["@"],
    &["+", "-"],
    &["*", "/", "%"],
    &["^"],
];

/// Names that end a skipped type at depth 0.
fn ends_type(t: &Tok) -> bool {
    matches!(t, Tok::Punct("=" | ";" | ")" | "," | "}" | "=>"))
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.at)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.t.get(self.at + k)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(q)) if q == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) || self.is_word(p) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expected `{p}`, found {:?}", self.peek()))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.peek().cloned() {
            Some(Tok::Ident(s) | Tok::TyVar(s)) => {
                self.at += 1;
                Ok(s)
            }
            t => Err(format!("expected a name, found {t:?}")),
        }
    }

    /// `name (p, q) = body`.
    fn function(&mut self) -> Result<Func, String> {
        self.ident()?;
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.eat(")") {
            params.push(self.ident()?);
            if self.eat(":") {
                self.ty()?;
            }
            self.eat(",");
        }
        if self.eat("->") {
            self.ty()?;
        }
        self.expect("=")?;
        let body = self.expr()?;
        Ok(Func { params, body })
    }

    /// `clause decode64 ((pattern as op_code) if SEE < N) = body`; `None` for clauses of
    /// other functions.
    fn clause(&mut self) -> Result<Option<Clause>, String> {
        self.expect("clause")?;
        if self.ident()? != "decode64" {
            return Ok(None);
        }
        self.expect("(")?;
        self.expect("(")?;
        let pattern = self.bit_pattern()?;
        self.expect("as")?;
        self.ident()?;
        self.expect(")")?;
        if self.eat("if") {
            while !self.is(")") {
                self.at += 1;
                if self.peek().is_none() {
                    return Err("unterminated guard".into());
                }
            }
        }
        self.expect(")")?;
        self.expect("=")?;
        let body = self.expr()?;
        if pattern.iter().map(|p| p.0).sum::<u32>() != 32 {
            return Err("a decode pattern that is not 32 bits".into());
        }
        Ok(Some(Clause { pattern, body }))
    }

    /// `0b01 @ _ : bits(3) @ [bitone] @ ...`.
    fn bit_pattern(&mut self) -> Result<Vec<(u32, Option<u128>)>, String> {
        let mut out = Vec::new();
        loop {
            match self.peek().cloned() {
                Some(Tok::Bits(v, w)) => {
                    self.at += 1;
                    out.push((w, Some(v)));
                }
                Some(Tok::Ident(s)) if s == "_" => {
                    self.at += 1;
                    self.expect(":")?;
                    self.expect("bits")?;
                    self.expect("(")?;
                    let Some(Tok::Int(w @ 1..=64)) = self.peek().cloned() else {
                        return Err("a field width that is not a number of 1 to 64".into());
                    };
                    self.at += 1;
                    self.expect(")")?;
                    out.push((w as u32, None));
                }
                Some(Tok::Punct("[")) => {
                    self.at += 1;
                    let bit = self.ident()?;
                    self.expect("]")?;
                    out.push((1, Some(u128::from(bit == "bitone"))));
                }
                t => return Err(format!("a pattern piece {t:?}")),
            }
            if !self.eat("@") {
                return Ok(out);
            }
        }
    }

    /// A type: `bits(E)` is kept, anything else skipped to where it ends.
    fn ty(&mut self) -> Result<Ty, String> {
        if self.is_word("bits") && matches!(self.peek_at(1), Some(Tok::Punct("("))) {
            self.at += 2;
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(Ty::Bits(Rc::new(e)));
        }
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            if depth == 0 && ends_type(t) {
                break;
            }
            match t {
                Tok::Punct("(" | "{" | "[") => depth += 1,
                Tok::Punct(")" | "}" | "]") => depth -= 1,
                _ => {}
            }
            self.at += 1;
        }
        Ok(Ty::Other)
    }

    fn block(&mut self) -> Result<Ex, String> {
        let mut sts = Vec::new();
        while !self.eat("}") {
            sts.push(self.statement()?);
            if !self.eat(";") {
                self.expect("}")?;
                break;
            }
        }
        Ok(Ex::Block(Rc::new(sts)))
    }

    fn statement(&mut self) -> Result<St, String> {
        if self.eat("let") {
            let names = if self.eat("(") {
                let mut v = Vec::new();
                while !self.eat(")") {
                    v.push(self.ident()?);
                    self.eat(",");
                }
                v
            } else {
                vec![self.ident()?]
            };
            let ty = if self.eat(":") {
                Some(self.ty()?)
            } else {
                None
            };
            self.expect("=")?;
            return Ok(St::Let(names, ty, self.expr()?));
        }
        if let (Some(Tok::Ident(n)), Some(Tok::Punct(":"))) = (self.peek(), self.peek_at(1)) {
            let n = n.clone();
            self.at += 2;
            let ty = self.ty()?;
            self.expect("=")?;
            return Ok(St::Decl(n, ty, self.expr()?));
        }
        let e = self.expr()?;
        if self.eat("=") {
            return Ok(St::Assign(e, self.expr()?));
        }
        Ok(St::Expr(e))
    }

    fn expr(&mut self) -> Result<Ex, String> {
        let e = self.binary(0)?;
        if self.is(":") {
            self.at += 1;
            let ty = self.ty()?;
            return Ok(match e {
                Ex::Undefined(_) => Ex::Undefined(Some(ty)),
                e => Ex::Typed(Rc::new(e), ty),
            });
        }
        Ok(e)
    }

    fn binary(&mut self, level: usize) -> Result<Ex, String> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct(p)) if LEVELS[level].contains(p) => *p,
                _ => return Ok(lhs),
            };
            self.at += 1;
            let rhs = self.binary(level + 1)?;
            lhs = Ex::Bin(op, Rc::new(lhs), Rc::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Ex, String> {
        if self.eat("~") {
            return Ok(Ex::Not(Rc::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Ex::Neg(Rc::new(self.unary()?)));
        }
        let mut e = self.primary()?;
        while self.is("[") {
            self.at += 1;
            let hi = self.expr()?;
            e = if self.eat("..") {
                let lo = self.expr()?;
                Ex::Slice(Rc::new(e), Rc::new(hi), Rc::new(lo))
            } else {
                Ex::Index(Rc::new(e), Rc::new(hi))
            };
            self.expect("]")?;
        }
        Ok(e)
    }

    fn args(&mut self) -> Result<Vec<Ex>, String> {
        let mut v = Vec::new();
        while !self.eat(")") {
            v.push(self.expr()?);
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        Ok(v)
    }

    fn primary(&mut self) -> Result<Ex, String> {
        let t = self.peek().cloned().ok_or("unexpected end")?;
        self.at += 1;
        Ok(match t {
            Tok::Int(i) => Ex::Int(i),
            Tok::Bits(v, w) => Ex::Bits(v, w),
            Tok::Str(s) => Ex::Str(s),
            Tok::TyVar(v) => Ex::Var(v),
            Tok::Punct("(") => {
                let mut v = self.args()?;
                if v.len() == 1 {
                    v.remove(0)
                } else {
                    Ex::Tuple(v)
                }
            }
            Tok::Punct("{") => self.block()?,
            Tok::Punct("[") => {
                let mut v = Vec::new();
                while !self.eat("]") {
                    v.push(self.expr()?);
                    self.eat(",");
                }
                Ex::VecLit(v)
            }
            Tok::Ident(w) => match w.as_str() {
                "true" => Ex::Bool(true),
                "false" => Ex::Bool(false),
                "undefined" => Ex::Undefined(None),
                "if" => {
                    let c = self.expr()?;
                    self.expect("then")?;
                    let a = self.expr()?;
                    let b = if self.eat("else") {
                        Some(Rc::new(self.expr()?))
                    } else {
                        None
                    };
                    Ex::If(Rc::new(c), Rc::new(a), b)
                }
                "foreach" => self.foreach()?,
                "while" => {
                    let c = self.expr()?;
                    self.expect("do")?;
                    Ex::While(Rc::new(c), Rc::new(self.expr()?))
                }
                "match" => self.match_expr()?,
                "return" => Ex::Return(Rc::new(self.primary()?)),
                "throw" => Ex::Throw(Rc::new(self.primary()?)),
                "assert" => {
                    self.expect("(")?;
                    let mut depth = 1;
                    while depth > 0 {
                        match self.peek().ok_or("unterminated assert")? {
                            Tok::Punct("(") => depth += 1,
                            Tok::Punct(")") => depth -= 1,
                            _ => {}
                        }
                        self.at += 1;
                    }
                    Ex::Assert
                }
                _ if self.is("(") => {
                    self.at += 1;
                    Ex::Call(w, self.args()?)
                }
                _ => Ex::Var(w),
            },
            t => return Err(format!("unexpected {t:?}")),
        })
    }

    fn foreach(&mut self) -> Result<Ex, String> {
        self.expect("(")?;
        let var = self.ident()?;
        self.expect("from")?;
        let from = self.expr()?;
        self.expect("to")?;
        let to = self.expr()?;
        let step = if self.eat("by") {
            self.expr()?
        } else {
            Ex::Int(1)
        };
        let down = if self.eat("in") {
            self.ident()? == "dec"
        } else {
            false
        };
        self.expect(")")?;
        let body = self.expr()?;
        Ok(Ex::Foreach {
            var,
            from: Rc::new(from),
            to: Rc::new(to),
            step: Rc::new(step),
            down,
            body: Rc::new(body),
        })
    }

    fn match_expr(&mut self) -> Result<Ex, String> {
        let scrutinee = self.expr()?;
        self.expect("{")?;
        let mut arms = Vec::new();
        while !self.eat("}") {
            let pat = self.pattern()?;
            self.expect("=>")?;
            let e = self.expr()?;
            arms.push((pat, e));
            self.eat(",");
        }
        Ok(Ex::Match(Rc::new(scrutinee), Rc::new(arms)))
    }

    fn pattern(&mut self) -> Result<Pat, String> {
        match self.peek().cloned() {
            Some(Tok::Ident(s))
                if s == "_" && !matches!(self.peek_at(1), Some(Tok::Punct(":"))) =>
            {
                self.at += 1;
                Ok(Pat::Wild)
            }
            Some(Tok::Int(i)) => {
                self.at += 1;
                Ok(Pat::Int(i))
            }
            Some(Tok::Ident(s)) if s != "_" => {
                self.at += 1;
                Ok(Pat::Name(s))
            }
            _ => Ok(Pat::Bits(self.bit_pattern()?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
val f : forall 'd. int('d) -> unit

function f (d, esize, sub_op) = {
    let operand1 : bits('esize) = V(d);
    result : bits('esize) = undefined : bits('esize);
    foreach (e from 0 to (esize - 1) by 1 in inc) {
        if sub_op then {
            result = aset_Elem(result, e, 8, aget_Elem(operand1, e, 8) - 0b01)
        } else {
            result = [operand1[3]] @ slice(result, 0, 7)
        }
    };
    match esize @ 0x1 {
      [bitzero] @ _ : bits(4) => { V(d) = result },
      _ => throw(Error_Undefined())
    }
}

function clause decode64 ((0b0 @ _ : bits(1) @ 0b001110 @ _ : bits(24) as op_code) if SEE < 3) = {
    SEE = 3;
    Rd : bits(5) = op_code[4 .. 0];
    f(UInt(Rd), 8, true)
}
";

    #[test]
    fn reads_functions_and_clauses() {
        let mut m = Model::default();
        read_into(&mut m, SAMPLE);
        assert!(m.unread.is_empty(), "{:?}", m.unread);
        let f = &m.funcs["f"];
        assert_eq!(f.params, ["d", "esize", "sub_op"]);
        let Ex::Block(sts) = &f.body else {
            panic!("{:?}", f.body)
        };
        assert_eq!(sts.len(), 4);
        assert!(
            matches!(&sts[1], St::Decl(n, Ty::Bits(_), Ex::Undefined(Some(_))) if n == "result")
        );
        assert_eq!(m.clauses.len(), 1);
        let c = &m.clauses[0];
        assert!(c.matches(0x0e22_0c20));
        assert!(!c.matches(0x8e22_0c20));
        assert!(!c.matches(0x0f22_0c20));
    }

    #[test]
    fn an_unreadable_item_is_listed_not_fatal() {
        let mut m = Model::default();
        read_into(&mut m, "function g (x) = { x ? 1 }\nfunction h (y) = y\n");
        assert!(m.unread.contains_key("g"));
        assert!(m.funcs.contains_key("h"));
    }
}
