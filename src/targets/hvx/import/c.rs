//! The C that QEMU's HVX semantics become once their macros are expanded: a parser for the
//! subset they use (statements, expressions, casts to fixed-width integer types, member and
//! index access on registers, GNU statement expressions).
//!
//! Everything else (pointers, strings, function definitions) is an error naming the token, so
//! an instruction using it is listed as skipped with that reason rather than misread.

use std::rc::Rc;

/// Deepest nesting the parser follows (QEMU's expanded macros nest a few dozen levels).
const MAX_DEPTH: usize = 200;

/// A C integer type of the subset: width and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CType {
    /// Width in bits: 8, 16, 32 or 64.
    pub bits: u32,
    /// Signed.
    pub signed: bool,
}

impl CType {
    /// `int`.
    pub const INT: CType = CType {
        bits: 32,
        signed: true,
    };
}

/// The declared type of a local: an integer or a vector register temporary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclType {
    /// An integer of this type.
    Int(CType),
    /// A vector register (`MMVector`, 128 bytes) or a pair (256 bytes).
    Vector(u32),
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    LogAnd,
    LogOr,
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    LogNot,
}

/// An expression.
#[derive(Clone, Debug)]
pub enum CExpr {
    /// An integer literal with its C type.
    Num(i128, CType),
    /// A name.
    Ident(Rc<str>),
    /// `e.field`.
    Member(Rc<CExpr>, Rc<str>),
    /// `e[i]`.
    Index(Rc<CExpr>, Rc<CExpr>),
    /// `f(args)`.
    Call(Rc<str>, Vec<CExpr>),
    /// `sizeof(...)`: not modelled, kept to be refused with a reason.
    Sizeof,
    /// `op e`.
    Unary(UnaryOp, Rc<CExpr>),
    /// `a op b`.
    Binary(BinaryOp, Rc<CExpr>, Rc<CExpr>),
    /// `a = b`, or `a op= b`.
    Assign(Option<BinaryOp>, Rc<CExpr>, Rc<CExpr>),
    /// `c ? a : b`.
    Cond(Rc<CExpr>, Rc<CExpr>, Rc<CExpr>),
    /// `(T)e`.
    Cast(CType, Rc<CExpr>),
    /// `++e`/`--e` (`post` false) or `e++`/`e--` (`post` true) by `delta`.
    Step {
        target: Rc<CExpr>,
        delta: i32,
        post: bool,
    },
    /// `({ statements })`: the value of the last expression statement.
    StmtExpr(Rc<[CStmt]>),
    /// `a, b`.
    Comma(Rc<CExpr>, Rc<CExpr>),
}

/// A statement.
#[derive(Clone, Debug)]
pub enum CStmt {
    /// `T a = e, b;`
    Decl(DeclType, Vec<(Rc<str>, Option<CExpr>)>),
    /// `e;`
    Expr(CExpr),
    /// `{ ... }`
    Block(Vec<CStmt>),
    /// `if (c) s else s`
    If(CExpr, Rc<CStmt>, Option<Rc<CStmt>>),
    /// `for (init; cond; step) body`
    For(Option<Rc<CStmt>>, Option<CExpr>, Option<CExpr>, Rc<CStmt>),
    /// `while (c) body`
    While(CExpr, Rc<CStmt>),
    /// `do body while (c);`
    DoWhile(Rc<CStmt>, CExpr),
    /// `;`
    Empty,
}

/// A token.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num(i128, CType),
    Str,
    Punct(&'static str),
}

const PUNCTS: &[&str] = &[
    "<<=", ">>=", "...", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "&=", "|=", "^=", "->", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~",
    "&", "|", "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}", "#",
];

/// The type of an integer literal: the first of `int`, `unsigned int` (hexadecimal only),
/// `long`, `unsigned long` that holds it, as C says, after its suffix.
fn literal_type(v: i128, hex: bool, suffix: &str) -> Result<CType, String> {
    let s = suffix.to_ascii_lowercase();
    let unsigned = s.contains('u');
    let long = s.contains('l');
    let fits = |t: CType| {
        let (lo, hi) = c_range(t);
        lo <= v && v <= hi
    };
    let mut order: Vec<CType> = Vec::new();
    for bits in [32u32, 64] {
        if bits == 32 && long {
            continue;
        }
        if !unsigned {
            order.push(CType { bits, signed: true });
        }
        if unsigned || hex {
            order.push(CType {
                bits,
                signed: false,
            });
        }
    }
    order
        .into_iter()
        .find(|t| fits(*t))
        .ok_or_else(|| format!("the literal {v} does not fit in 64 bits"))
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(text[s..i].to_string()));
        } else if c.is_ascii_digit() {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[s..i];
            let digits_end = word
                .char_indices()
                .find(|&(k, ch)| {
                    let hex = word.starts_with("0x") || word.starts_with("0X");
                    !(ch.is_ascii_digit() || (hex && (k == 1 || ch.is_ascii_hexdigit())))
                })
                .map(|(k, _)| k)
                .unwrap_or(word.len());
            let (digits, suffix) = word.split_at(digits_end);
            if !suffix.chars().all(|ch| matches!(ch, 'u' | 'U' | 'l' | 'L')) {
                return Err(format!("the number `{word}`"));
            }
            let hex = digits.starts_with("0x") || digits.starts_with("0X");
            let octal = !hex && digits.len() > 1 && digits.starts_with('0');
            let v = if hex {
                i128::from_str_radix(&digits[2..], 16)
            } else if digits.len() > 1 && digits.starts_with('0') {
                i128::from_str_radix(&digits[1..], 8)
            } else {
                digits.parse::<i128>()
            }
            .map_err(|_| format!("the number `{word}`"))?;
            // Octal literals are typed as hexadecimal ones are.
            out.push(Tok::Num(v, literal_type(v, hex || octal, suffix)?));
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Tok::Str);
        } else {
            let p = PUNCTS
                .iter()
                .find(|p| text[i..].starts_with(**p))
                .ok_or_else(|| format!("the character `{}`", c as char))?;
            out.push(Tok::Punct(p));
            i += p.len();
        }
    }
    Ok(out)
}

/// Integer type names of the subset: C's own and QEMU's typedefs.
fn named_type(name: &str) -> Option<CType> {
    let t = |bits, signed| Some(CType { bits, signed });
    match name {
        "int8_t" | "size1s_t" => t(8, true),
        "uint8_t" | "size1u_t" => t(8, false),
        "int16_t" | "size2s_t" => t(16, true),
        "uint16_t" | "size2u_t" => t(16, false),
        "int32_t" | "size4s_t" => t(32, true),
        "uint32_t" | "size4u_t" | "target_ulong" => t(32, false),
        "int64_t" | "size8s_t" => t(64, true),
        "uint64_t" | "size8u_t" => t(64, false),
        _ => None,
    }
}

/// The values of `t`.
pub fn c_range(t: CType) -> (i128, i128) {
    let t = CType {
        bits: t.bits.clamp(1, 64),
        ..t
    };
    if t.signed {
        (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
    } else {
        (0, (1i128 << t.bits) - 1)
    }
}

const TYPE_WORDS: &[&str] = &[
    "int", "unsigned", "signed", "short", "long", "char", "const", "volatile",
];

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

/// Parses a statement (a QEMU semantics block).
pub fn parse_stmt(text: &str) -> Result<CStmt, String> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        depth: 0,
    };
    let mut body = Vec::new();
    while p.pos < p.toks.len() {
        body.push(p.stmt()?);
    }
    Ok(CStmt::Block(body))
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expected `{p}`, found {}", self.here()))
        }
    }

    fn here(&self) -> String {
        match self.peek() {
            None => "the end".into(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Num(v, _)) => format!("`{v}`"),
            Some(Tok::Str) => "a string".into(),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    /// Whether a type name starts here.
    fn at_type(&self) -> bool {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                TYPE_WORDS.contains(&s.as_str())
                    || named_type(s).is_some()
                    || matches!(
                        s.as_str(),
                        "MMVector" | "mmvector_t" | "MMVectorPair" | "mmvector_pair_t"
                    )
            }
            _ => false,
        }
    }

    fn decl_type(&mut self) -> Result<DeclType, String> {
        let mut words = Vec::new();
        while let Some(Tok::Ident(s)) = self.peek() {
            if TYPE_WORDS.contains(&s.as_str())
                || (words.is_empty()
                    && (named_type(s).is_some()
                        || matches!(
                            s.as_str(),
                            "MMVector" | "mmvector_t" | "MMVectorPair" | "mmvector_pair_t"
                        )))
            {
                words.push(s.clone());
                self.pos += 1;
            } else {
                break;
            }
        }
        words.retain(|w| w != "const" && w != "volatile");
        if let [w] = words.as_slice() {
            match w.as_str() {
                "MMVector" | "mmvector_t" => return Ok(DeclType::Vector(128)),
                "MMVectorPair" | "mmvector_pair_t" => return Ok(DeclType::Vector(256)),
                _ => {}
            }
            if let Some(t) = named_type(w) {
                return Ok(DeclType::Int(t));
            }
        }
        let unsigned = words.iter().any(|w| w == "unsigned");
        let longs = words.iter().filter(|w| *w == "long").count();
        let bits = if words.iter().any(|w| w == "char") {
            8
        } else if words.iter().any(|w| w == "short") {
            16
        } else if longs > 0 {
            64
        } else if !words.is_empty() {
            32
        } else {
            return Err(format!("expected a type, found {}", self.here()));
        };
        Ok(DeclType::Int(CType {
            bits,
            signed: !unsigned,
        }))
    }

    fn stmt(&mut self) -> Result<CStmt, String> {
        self.enter()?;
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> Result<CStmt, String> {
        if self.eat(";") {
            return Ok(CStmt::Empty);
        }
        if self.eat("{") {
            let mut body = Vec::new();
            while !self.eat("}") {
                if self.peek().is_none() {
                    return Err("an unclosed `{`".into());
                }
                body.push(self.stmt()?);
            }
            return Ok(CStmt::Block(body));
        }
        if self.at_type() {
            let d = self.decl()?;
            self.expect(";")?;
            return Ok(d);
        }
        if let Some(Tok::Ident(k)) = self.peek().cloned() {
            match k.as_str() {
                "if" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    let then = Rc::new(self.stmt()?);
                    let els = if matches!(self.peek(), Some(Tok::Ident(s)) if s == "else") {
                        self.pos += 1;
                        Some(Rc::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(CStmt::If(c, then, els));
                }
                "for" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let init = if self.eat(";") {
                        None
                    } else if self.at_type() {
                        let d = self.decl()?;
                        self.expect(";")?;
                        Some(Rc::new(d))
                    } else {
                        let e = self.expr()?;
                        self.expect(";")?;
                        Some(Rc::new(CStmt::Expr(e)))
                    };
                    let cond = if self.is(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    let step = if self.is(")") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(")")?;
                    let body = Rc::new(self.stmt()?);
                    return Ok(CStmt::For(init, cond, step, body));
                }
                "while" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    let body = Rc::new(self.stmt()?);
                    return Ok(CStmt::While(c, body));
                }
                "do" => {
                    self.pos += 1;
                    let body = Rc::new(self.stmt()?);
                    if !matches!(self.peek(), Some(Tok::Ident(s)) if s == "while") {
                        return Err(format!("expected `while`, found {}", self.here()));
                    }
                    self.pos += 1;
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    self.expect(";")?;
                    return Ok(CStmt::DoWhile(body, c));
                }
                "return" | "goto" | "switch" | "case" | "break" | "continue" => {
                    return Err(format!("the statement `{k}`"));
                }
                _ => {}
            }
        }
        let e = self.expr()?;
        // QEMU's macros sometimes leave a statement without its `;` before a `}`.
        if !self.is("}") {
            self.expect(";")?;
        }
        Ok(CStmt::Expr(e))
    }

    fn decl(&mut self) -> Result<CStmt, String> {
        let t = self.decl_type()?;
        let mut names = Vec::new();
        loop {
            let name = match self.peek() {
                Some(Tok::Ident(s)) => Rc::from(s.as_str()),
                _ => return Err(format!("expected a name, found {}", self.here())),
            };
            self.pos += 1;
            if self.is("[") {
                return Err("a local array".into());
            }
            let init = if self.eat("=") {
                if self.is("{") {
                    return Err("an aggregate initializer".into());
                }
                Some(self.assign()?)
            } else {
                None
            };
            names.push((name, init));
            if !self.eat(",") {
                break;
            }
        }
        Ok(CStmt::Decl(t, names))
    }

    fn expr(&mut self) -> Result<CExpr, String> {
        let mut e = self.assign()?;
        let mut chained = 0;
        while self.eat(",") {
            chained += 1;
            if self.depth + chained > MAX_DEPTH {
                return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
            }
            let r = self.assign()?;
            e = CExpr::Comma(Rc::new(e), Rc::new(r));
        }
        Ok(e)
    }

    fn assign(&mut self) -> Result<CExpr, String> {
        self.enter()?;
        let r = self.assign_inner();
        self.depth -= 1;
        r
    }

    fn assign_inner(&mut self) -> Result<CExpr, String> {
        let lhs = self.cond()?;
        const OPS: &[(&str, Option<BinaryOp>)] = &[
            ("=", None),
            ("+=", Some(BinaryOp::Add)),
            ("-=", Some(BinaryOp::Sub)),
            ("*=", Some(BinaryOp::Mul)),
            ("/=", Some(BinaryOp::Div)),
            ("%=", Some(BinaryOp::Rem)),
            ("<<=", Some(BinaryOp::Shl)),
            (">>=", Some(BinaryOp::Shr)),
            ("&=", Some(BinaryOp::And)),
            ("|=", Some(BinaryOp::Or)),
            ("^=", Some(BinaryOp::Xor)),
        ];
        for (p, op) in OPS {
            if self.eat(p) {
                let rhs = self.assign()?;
                return Ok(CExpr::Assign(*op, Rc::new(lhs), Rc::new(rhs)));
            }
        }
        Ok(lhs)
    }

    fn cond(&mut self) -> Result<CExpr, String> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.assign()?;
            return Ok(CExpr::Cond(Rc::new(c), Rc::new(a), Rc::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, min_prec: u8) -> Result<CExpr, String> {
        const LEVELS: &[&[(&str, BinaryOp)]] = &[
            &[("||", BinaryOp::LogOr)],
            &[("&&", BinaryOp::LogAnd)],
            &[("|", BinaryOp::Or)],
            &[("^", BinaryOp::Xor)],
            &[("&", BinaryOp::And)],
            &[("==", BinaryOp::Eq), ("!=", BinaryOp::Ne)],
            &[
                ("<=", BinaryOp::Le),
                (">=", BinaryOp::Ge),
                ("<", BinaryOp::Lt),
                (">", BinaryOp::Gt),
            ],
            &[("<<", BinaryOp::Shl), (">>", BinaryOp::Shr)],
            &[("+", BinaryOp::Add), ("-", BinaryOp::Sub)],
            &[
                ("*", BinaryOp::Mul),
                ("/", BinaryOp::Div),
                ("%", BinaryOp::Rem),
            ],
        ];
        if min_prec as usize >= LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(min_prec + 1)?;
        let mut chained = 0;
        'outer: loop {
            for (p, op) in LEVELS[min_prec as usize] {
                // `&&` is not two `&`, nor `<=` a `<`: tokens are whole.
                if self.eat(p) {
                    // A chain nests to the left as deep as it is long.
                    chained += 1;
                    if self.depth + chained > MAX_DEPTH {
                        return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
                    }
                    let rhs = self.binary(min_prec + 1)?;
                    lhs = CExpr::Binary(*op, Rc::new(lhs), Rc::new(rhs));
                    continue 'outer;
                }
            }
            return Ok(lhs);
        }
    }

    fn unary(&mut self) -> Result<CExpr, String> {
        self.enter()?;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<CExpr, String> {
        for (p, op) in [
            ("-", UnaryOp::Neg),
            ("+", UnaryOp::Plus),
            ("~", UnaryOp::Not),
            ("!", UnaryOp::LogNot),
        ] {
            if self.eat(p) {
                let e = self.unary()?;
                return Ok(CExpr::Unary(op, Rc::new(e)));
            }
        }
        for (p, d) in [("++", 1), ("--", -1)] {
            if self.eat(p) {
                let e = self.unary()?;
                return Ok(CExpr::Step {
                    target: Rc::new(e),
                    delta: d,
                    post: false,
                });
            }
        }
        if self.is("*") || self.is("&") {
            return Err(format!("a pointer operation {}", self.here()));
        }
        // A cast: `(` type `)`.
        if self.is("(")
            && let Some(Tok::Ident(s)) = self.peek_at(1)
            && (TYPE_WORDS.contains(&s.as_str()) || named_type(s).is_some())
        {
            self.pos += 1;
            let t = self.decl_type()?;
            if self.is("*") {
                return Err("a pointer cast".into());
            }
            self.expect(")")?;
            let DeclType::Int(t) = t else {
                return Err("a cast to a vector".into());
            };
            let e = self.unary()?;
            return Ok(CExpr::Cast(t, Rc::new(e)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<CExpr, String> {
        let mut e = self.primary()?;
        let mut chained = 0;
        loop {
            chained += 1;
            if self.depth + chained > MAX_DEPTH {
                return Err(format!("nesting deeper than {MAX_DEPTH} levels"));
            }
            if self.eat(".") {
                match self.peek().cloned() {
                    Some(Tok::Ident(f)) => {
                        self.pos += 1;
                        e = CExpr::Member(Rc::new(e), Rc::from(f.as_str()));
                    }
                    _ => return Err(format!("expected a field, found {}", self.here())),
                }
            } else if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = CExpr::Index(Rc::new(e), Rc::new(i));
            } else if self.is("->") {
                return Err("a pointer member `->`".into());
            } else if self.eat("++") {
                e = CExpr::Step {
                    target: Rc::new(e),
                    delta: 1,
                    post: true,
                };
            } else if self.eat("--") {
                e = CExpr::Step {
                    target: Rc::new(e),
                    delta: -1,
                    post: true,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<CExpr, String> {
        match self.peek().cloned() {
            Some(Tok::Num(v, t)) => {
                self.pos += 1;
                Ok(CExpr::Num(v, t))
            }
            Some(Tok::Ident(name)) => {
                self.pos += 1;
                if name == "sizeof" {
                    // Skip its operand; the evaluator refuses it.
                    self.expect("(")?;
                    let mut open = 1;
                    while open > 0 {
                        match self.peek() {
                            None => return Err("an unclosed `sizeof(`".into()),
                            Some(Tok::Punct("(")) => open += 1,
                            Some(Tok::Punct(")")) => open -= 1,
                            _ => {}
                        }
                        self.pos += 1;
                    }
                    return Ok(CExpr::Sizeof);
                }
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.assign()?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    return Ok(CExpr::Call(Rc::from(name.as_str()), args));
                }
                Ok(CExpr::Ident(Rc::from(name.as_str())))
            }
            Some(Tok::Punct("(")) => {
                self.pos += 1;
                if self.eat("{") {
                    let mut body = Vec::new();
                    while !self.eat("}") {
                        if self.peek().is_none() {
                            return Err("an unclosed `({`".into());
                        }
                        body.push(self.stmt()?);
                    }
                    self.expect(")")?;
                    return Ok(CExpr::StmtExpr(body.into()));
                }
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            _ => Err(format!("unexpected {}", self.here())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_take_the_type_c_gives_them() {
        let t = |s: &str| match lex(s).unwrap()[0] {
            Tok::Num(_, t) => t,
            _ => panic!(),
        };
        assert_eq!(t("1"), CType::INT);
        assert_eq!(
            t("0xffffffff"),
            CType {
                bits: 32,
                signed: false
            }
        );
        assert_eq!(
            t("4294967295"),
            CType {
                bits: 64,
                signed: true
            }
        );
        assert_eq!(
            t("1LL"),
            CType {
                bits: 64,
                signed: true
            }
        );
        // Octal literals are typed as hexadecimal ones.
        assert_eq!(
            t("037777777777"),
            CType {
                bits: 32,
                signed: false
            }
        );
        assert_eq!(
            t("0x0ffULL"),
            CType {
                bits: 64,
                signed: false
            }
        );
    }

    #[test]
    fn statements_and_statement_expressions_parse() {
        let s = parse_stmt(
            "{ int i; for (i = 0; i < 8; i++) { VdV.h[i] = ({ int t = VuV.h[i]; t < 0 ? -t : t; }); } }",
        )
        .unwrap();
        assert!(matches!(s, CStmt::Block(_)));
        assert!(parse_stmt("{ x->y = 1; }").unwrap_err().contains("->"));
        let deep = format!("{}1{}", "(".repeat(500), ")".repeat(500));
        assert!(
            parse_stmt(&format!("x = {deep};"))
                .unwrap_err()
                .contains("nesting")
        );
        // Chains nest to the left as deep as they are long.
        let chain = vec!["1"; 5000].join(" + ");
        assert!(
            parse_stmt(&format!("x = {chain};"))
                .unwrap_err()
                .contains("nesting")
        );
        let members = ".h".repeat(5000);
        assert!(
            parse_stmt(&format!("x = VuV{members};"))
                .unwrap_err()
                .contains("nesting")
        );
    }
}
