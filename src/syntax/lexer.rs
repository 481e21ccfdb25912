//! Tokens of the Halide-like text syntax (expressions, expression files, kernels).

use std::ops::Range;
use std::sync::Arc;

use crate::diag::{Diag, Source};

/// Token kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// Identifier; may contain `.` and `$` after the first character (Halide names do).
    Ident(String),
    /// Non-negative integer literal.
    Int(i128),
    /// A floating-point literal, kept only to report it as unsupported.
    Float(String),
    /// Punctuation or operator.
    Punct(&'static str),
    /// A line break (only significant in line-oriented files).
    Newline,
    /// End of input.
    Eof,
}

/// A token and where it is.
#[derive(Clone, Debug)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Byte range in the source.
    pub span: Range<usize>,
}

const PUNCTS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "=>", "->", "(", ")", "[", "]", "{", "}", ",",
    "+", "-", "*", "/", "%", "<", ">", "!", "~", "&", "|", "^", "=", ":", ";", ".", "@", "?",
];

/// Splits `src` into tokens. `#` and `//` start comments that run to the end of the line,
/// except that `;;` (rule-file prose) is returned as a comment too.
pub fn lex(src: &Arc<Source>) -> Result<Vec<Token>, Diag> {
    let text = src.text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < text.len() {
        let c = text[i];
        if c == b'\n' {
            out.push(Token {
                tok: Tok::Newline,
                span: i..i + 1,
            });
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' || text[i..].starts_with(b"//") || text[i..].starts_with(b";;") {
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            let mut is_float = false;
            if text[i..].starts_with(b"0x") || text[i..].starts_with(b"0X") {
                i += 2;
                while i < text.len() && text[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let s = &src.text[start + 2..i];
                let v = i128::from_str_radix(s, 16).map_err(|_| {
                    Diag::new(
                        src,
                        start..i,
                        format!("bad hexadecimal literal `{}`", &src.text[start..i]),
                    )
                })?;
                out.push(Token {
                    tok: Tok::Int(v),
                    span: start..i,
                });
                continue;
            }
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            if i < text.len()
                && text[i] == b'.'
                && i + 1 < text.len()
                && text[i + 1].is_ascii_digit()
            {
                is_float = true;
                i += 1;
                while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'.') {
                    i += 1;
                }
            } else if i < text.len() && text[i] == b'f' && !is_ident_char(text.get(i + 1).copied())
            {
                is_float = true;
                i += 1;
            }
            let s = &src.text[start..i];
            if is_float {
                out.push(Token {
                    tok: Tok::Float(s.to_string()),
                    span: start..i,
                });
            } else {
                let v: i128 = s.parse().map_err(|_| {
                    Diag::new(src, start..i, format!("integer literal `{s}` is too large"))
                })?;
                out.push(Token {
                    tok: Tok::Int(v),
                    span: start..i,
                });
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            i += 1;
            while i < text.len() {
                let d = text[i];
                let dotted = d == b'.'
                    && i + 1 < text.len()
                    && (text[i + 1].is_ascii_alphanumeric() || text[i + 1] == b'_');
                if d.is_ascii_alphanumeric() || d == b'_' || d == b'$' || dotted {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Token {
                tok: Tok::Ident(src.text[start..i].to_string()),
                span: start..i,
            });
            continue;
        }
        if let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(p.as_bytes())) {
            out.push(Token {
                tok: Tok::Punct(p),
                span: i..i + p.len(),
            });
            i += p.len();
            continue;
        }
        let ch = src.text[i..].chars().next().unwrap_or('?');
        return Err(Diag::new(
            src,
            i..i + ch.len_utf8(),
            format!("unexpected character `{ch}`"),
        ));
    }
    out.push(Token {
        tok: Tok::Eof,
        span: text.len()..text.len(),
    });
    Ok(out)
}

fn is_ident_char(c: Option<u8>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
}
