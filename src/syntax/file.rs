//! Expression files (`.hl`): declarations and one Halide-syntax expression per line.
//!
//! ```text
//! # comments start with `#` or `//`
//! input a: u8x32, b: u8x32      # vector or scalar inputs
//! input img: u8[]               # a buffer of u8
//! (uint8x32)saturating_cast((uint16x32)absd(a, b))
//! u8(min(u16(a) + u16(b),
//!        x32((uint16)255)))     # an expression continues while brackets are open
//! ```
//!
//! A declaration applies to the lines after it. Types are written `u8x32` or `uint8x32`.

use std::ops::Range;
use std::sync::Arc;

use super::elab::{Decls, ElabOptions, Elaborator};
use super::lexer::{Tok, lex};
use super::parse::Parser;
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::types::Type;

/// One expression of a file.
#[derive(Clone, Debug)]
pub struct Item {
    /// The typed expression.
    pub expr: Expr,
    /// Where it is.
    pub span: Range<usize>,
}

/// Parses a declaration `NAME: TYPE` or `NAME: ELEM[]` into `decls`.
pub fn parse_decl(p: &mut Parser, decls: &mut Decls) -> Result<(), Diag> {
    let (name, _) = p.ident()?;
    p.expect(":")?;
    let (ty, span) = p.ident()?;
    if p.eat("[") {
        p.expect("]")?;
        let elem = crate::types::Elem::parse(&ty, false)
            .filter(|e| e.is_int())
            .ok_or_else(|| {
                Diag::new(p.src, span.clone(), format!("unknown element type `{ty}`"))
            })?;
        decls.buffers.insert(name, elem);
    } else {
        let t = Type::parse(&ty, false)
            .ok_or_else(|| Diag::new(p.src, span.clone(), format!("unknown type `{ty}`")))?;
        decls.vars.insert(name, t);
    }
    Ok(())
}

/// Parses an expression file with `decls` as the initial declarations.
pub fn parse(src: &Arc<Source>, mut decls: Decls) -> Result<(Vec<Item>, Decls), Diag> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, &toks);
    p.set_skip_newlines(false);
    let mut items = Vec::new();
    loop {
        let t = p.peek().clone();
        match &t.tok {
            Tok::Eof => break,
            Tok::Newline => {
                p.bump();
                continue;
            }
            Tok::Ident(kw) if kw == "input" && matches!(p.peek2().tok, Tok::Ident(_)) => {
                p.bump();
                loop {
                    parse_decl(&mut p, &mut decls)?;
                    if !p.eat(",") {
                        break;
                    }
                }
            }
            _ => {
                let ast = p.expr()?;
                let e = Elaborator::new(src, &decls, ElabOptions::default()).expr(&ast)?;
                items.push(Item {
                    expr: e,
                    span: ast.span.clone(),
                });
            }
        }
        let t = p.peek().clone();
        if !matches!(t.tok, Tok::Newline | Tok::Eof) {
            return Err(p.error(&t, "expected the end of the line"));
        }
    }
    Ok((items, decls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_and_multiline_expressions() {
        let text = "# demo\ninput a: u8x4, b: u8x4\nabsd(a, b)\nmin(a,\n    b) +\n  a\n";
        let (items, _) = parse(&Source::new("d.hl", text), Decls::new()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(
            crate::syntax::halide::print(&items[1].expr),
            "(min(a, b) + a)"
        );
    }

    #[test]
    fn errors_name_the_line() {
        let text = "input a: u8x4\na + a a\n";
        let err = parse(&Source::new("d.hl", text), Decls::new()).unwrap_err();
        assert_eq!(err.location(), "d.hl:2:7");
    }
}
