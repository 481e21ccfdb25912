//! Token-level templates shared by description files and rule files.
//!
//! ```text
//! for (P, L) in (_mm, 16), (_mm256, 32):
//!     instr vpaddb {P}_add_epi8(a: Tx{L}, b: Tx{L}) -> Tx{L} ... = a + b
//! end
//! ```
//!
//! A `for` block repeats its body for each tuple of values, substituting `{NAME}` (and
//! `{NAME*K}`, `{NAME/K}`, `{NAME+K}`, `{NAME-K}`, where `K` is a number or another numeric
//! parameter, applied left to right when chained: `{B/W-1}`). A substituted token glued to a neighbouring name or number joins it
//! (`{P}_add_epi8` becomes `_mm256_add_epi8`, `Tx{L}` becomes `Tx32`). The value `_`
//! stands for nothing, for names that differ by an optional piece (`vadd{Q}_u8` with `Q`
//! one of `_` and `q` gives `vadd_u8` and `vaddq_u8`). Blocks nest.
//! Diagnostics point at the template text.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use crate::diag::{Diag, Source};
use crate::syntax::lexer::{Tok, Token, lex};

/// Lexes a file and expands its templates; newlines are dropped, the end token kept.
pub fn expand_file(src: &Arc<Source>) -> Result<Vec<Token>, Diag> {
    let raw = lex(src)?;
    let raw: Vec<Token> = raw
        .into_iter()
        .filter(|t| !matches!(t.tok, Tok::Newline))
        .collect();
    let mut expanded = Vec::new();
    let body = &raw[..raw.len() - 1];
    expand(body, &HashMap::new(), src, &mut expanded)?;
    let mut toks = glue(expanded);
    toks.push(raw.last().cloned().expect("Eof"));
    Ok(toks)
}

fn template_value(
    toks: &[Token],
    i: usize,
    env: &HashMap<String, Tok>,
    src: &Arc<Source>,
) -> Result<(Tok, usize), Diag> {
    // toks[i] is `{`; returns the value and the index after `}`.
    let open = &toks[i];
    let err = |span: Range<usize>, m: &str| Diag::new(src, span, m.to_string());
    // The first operand is a parameter or a number (`{1024/W}`).
    let (name, span, value) = match toks.get(i + 1) {
        Some(Token {
            tok: Tok::Ident(name),
            span,
        }) => {
            let value = env.get(name).cloned().ok_or_else(|| {
                err(
                    span.clone(),
                    &format!("`{name}` is not a template parameter here"),
                )
            })?;
            (name.clone(), span, value)
        }
        Some(Token {
            tok: Tok::Int(k),
            span,
        }) => (k.to_string(), span, Tok::Int(*k)),
        _ => return Err(err(open.span.clone(), "expected `{NAME}`")),
    };
    let mut j = i + 2;
    let mut value = value;
    // Operators apply left to right: `{B/W-1}` is `(B / W) - 1`.
    while let Some(Token {
        tok: Tok::Punct(op @ ("*" | "/" | "+" | "-")),
        ..
    }) = toks.get(j)
    {
        let k = match toks.get(j + 1).map(|t| &t.tok) {
            Some(Tok::Int(k)) => *k,
            Some(Tok::Ident(n)) => match env.get(n) {
                Some(Tok::Int(k)) => *k,
                _ => {
                    return Err(err(
                        toks[j + 1].span.clone(),
                        &format!("`{n}` is not a numeric template parameter here"),
                    ));
                }
            },
            _ => return Err(err(toks[j].span.clone(), "expected a number")),
        };
        let Tok::Int(v) = value else {
            return Err(err(span.clone(), &format!("`{name}` is not a number")));
        };
        if *op == "/" && k == 0 {
            return Err(err(
                toks[j + 1].span.clone(),
                "division by zero in a template",
            ));
        }
        value = Tok::Int(match *op {
            "*" => v * k,
            "/" => v / k,
            "+" => v + k,
            _ => v - k,
        });
        j += 2;
    }
    match toks.get(j) {
        Some(Token {
            tok: Tok::Punct("}"),
            ..
        }) => Ok((value, j + 1)),
        Some(t) => Err(err(t.span.clone(), "expected `}`")),
        None => Err(err(open.span.clone(), "unclosed `{`")),
    }
}

/// Expands `for` blocks and substitutes `{NAME}` placeholders.
pub(crate) fn expand(
    toks: &[Token],
    env: &HashMap<String, Tok>,
    src: &Arc<Source>,
    out: &mut Vec<Token>,
) -> Result<(), Diag> {
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        match &t.tok {
            Tok::Ident(k) if k == "for" => {
                // for (A, B) in (x, 1), (y, 2): ... end
                let mut j = i + 1;
                let expect = |j: usize, p: &str| -> Result<(), Diag> {
                    match toks.get(j) {
                        Some(Token {
                            tok: Tok::Punct(q), ..
                        }) if *q == p => Ok(()),
                        Some(t) => Err(Diag::new(src, t.span.clone(), format!("expected `{p}`"))),
                        None => Err(Diag::new(src, t.span.clone(), format!("expected `{p}`"))),
                    }
                };
                expect(j, "(")?;
                j += 1;
                let mut names = Vec::new();
                loop {
                    match toks.get(j) {
                        Some(Token {
                            tok: Tok::Ident(n), ..
                        }) => names.push(n.clone()),
                        _ => {
                            return Err(Diag::new(
                                src,
                                toks[j.min(toks.len() - 1)].span.clone(),
                                "expected a parameter name",
                            ));
                        }
                    }
                    j += 1;
                    if matches!(
                        toks.get(j),
                        Some(Token {
                            tok: Tok::Punct(")"),
                            ..
                        })
                    ) {
                        j += 1;
                        break;
                    }
                    expect(j, ",")?;
                    j += 1;
                }
                if !matches!(toks.get(j), Some(Token { tok: Tok::Ident(k), .. }) if k == "in") {
                    return Err(Diag::new(
                        src,
                        toks[j.min(toks.len() - 1)].span.clone(),
                        "expected `in`",
                    ));
                }
                j += 1;
                let mut tuples: Vec<Vec<Tok>> = Vec::new();
                loop {
                    expect(j, "(")?;
                    let tuple_start = toks[j].span.clone();
                    j += 1;
                    let mut vals = Vec::new();
                    loop {
                        match toks.get(j).map(|t| &t.tok) {
                            Some(Tok::Ident(_) | Tok::Int(_) | Tok::Float(_)) => {
                                vals.push(toks[j].tok.clone())
                            }
                            Some(Tok::Punct("-")) => {
                                if let Some(Token {
                                    tok: Tok::Int(v), ..
                                }) = toks.get(j + 1)
                                {
                                    vals.push(Tok::Int(-v));
                                    j += 1;
                                }
                            }
                            _ => {
                                return Err(Diag::new(
                                    src,
                                    toks[j.min(toks.len() - 1)].span.clone(),
                                    "expected a name or a number",
                                ));
                            }
                        }
                        j += 1;
                        if matches!(
                            toks.get(j),
                            Some(Token {
                                tok: Tok::Punct(")"),
                                ..
                            })
                        ) {
                            j += 1;
                            break;
                        }
                        expect(j, ",")?;
                        j += 1;
                    }
                    if vals.len() != names.len() {
                        return Err(Diag::new(
                            src,
                            tuple_start,
                            format!("expected {} values", names.len()),
                        ));
                    }
                    tuples.push(vals);
                    if matches!(
                        toks.get(j),
                        Some(Token {
                            tok: Tok::Punct(","),
                            ..
                        })
                    ) {
                        j += 1;
                        continue;
                    }
                    break;
                }
                expect(j, ":")?;
                j += 1;
                // The body runs to the matching `end`.
                let body_start = j;
                let mut depth = 1;
                while j < toks.len() {
                    match &toks[j].tok {
                        Tok::Ident(k) if k == "for" => depth += 1,
                        Tok::Ident(k) if k == "end" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if depth != 0 {
                    return Err(Diag::new(
                        src,
                        t.span.clone(),
                        "this `for` has no matching `end`",
                    ));
                }
                for vals in tuples {
                    let mut inner = env.clone();
                    for (n, v) in names.iter().zip(vals) {
                        inner.insert(n.clone(), v);
                    }
                    expand(&toks[body_start..j], &inner, src, out)?;
                }
                i = j + 1;
            }
            Tok::Punct("{") => {
                let (mut v, next) = template_value(toks, i, env, src)?;
                if v == Tok::Ident("_".into()) {
                    // Nothing: an empty name that `glue` absorbs into its neighbours.
                    v = Tok::Ident(String::new());
                }
                let span = t.span.start..toks[next - 1].span.end;
                out.push(Token { tok: v, span });
                i = next;
            }
            _ => {
                out.push(t.clone());
                i += 1;
            }
        }
    }
    Ok(())
}

/// Joins adjacent name and number tokens into one name (`_mm256` + `_add_epi8`).
pub(crate) fn glue(toks: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for t in toks {
        let word = |tok: &Tok| match tok {
            Tok::Ident(s) => Some(s.clone()),
            Tok::Int(v) => Some(v.to_string()),
            _ => None,
        };
        if let Some(last) = out.last_mut()
            && last.span.end == t.span.start
            && let (Some(a), Some(b)) = (word(&last.tok), word(&t.tok))
            && matches!(last.tok, Tok::Ident(_))
        {
            last.tok = Tok::Ident(format!("{a}{b}"));
            last.span = last.span.start..t.span.end;
            continue;
        }
        if let Some(last) = out.last_mut()
            && last.span.end == t.span.start
            && matches!(last.tok, Tok::Int(_))
            && matches!(t.tok, Tok::Ident(_))
        {
            let (Some(a), Some(b)) = (word(&last.tok), word(&t.tok)) else {
                unreachable!()
            };
            last.tok = Tok::Ident(format!("{a}{b}"));
            last.span = last.span.start..t.span.end;
            continue;
        }
        out.push(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_and_glue() {
        let src = Source::new(
            "t.isa",
            "for (P, L) in (_mm, 16):\n instr vpaddb {P}_add_epi8(a: Tx{L}, b: Tx{L/2}) -> Tx{L} where T.bits == 8 cost 1 0.5 = a\nend\n",
        );
        let g = expand_file(&src).unwrap();
        let words: Vec<String> = g.iter().map(|t| format!("{:?}", t.tok)).collect();
        println!("{}", words.join(" "));
        assert!(
            words.iter().any(|w| w.contains("_mm_add_epi8")),
            "{words:?}"
        );
        assert!(words.iter().any(|w| w.contains("\"Tx16\"")), "{words:?}");
        assert!(words.iter().any(|w| w.contains("\"Tx8\"")), "{words:?}");
    }
    #[test]
    fn nested_blocks_and_name_operands() {
        let src = Source::new(
            "t.isa",
            "for (R) in (128), (256):\n for (B) in (8), (16):\n x{R/B}\n end\nend\n",
        );
        let g = expand_file(&src).unwrap();
        let words: Vec<String> = g.iter().map(|t| format!("{:?}", t.tok)).collect();
        assert_eq!(words.len(), 5, "{words:?}");
        assert!(
            words[0].contains("x16") && words[3].contains("x16"),
            "{words:?}"
        );
        assert!(
            words[1].contains("x8") && words[2].contains("x32"),
            "{words:?}"
        );
    }

    #[test]
    fn underscore_value_is_nothing() {
        let src = Source::new("t.isa", "for (Q) in (_), (q):\n vadd{Q}_u8\nend\n");
        let g = expand_file(&src).unwrap();
        let words: Vec<String> = g.iter().map(|t| format!("{:?}", t.tok)).collect();
        assert_eq!(words.len(), 3, "{words:?}");
        assert!(words[0].contains("\"vadd_u8\""), "{words:?}");
        assert!(words[1].contains("\"vaddq_u8\""), "{words:?}");
    }

    #[test]
    fn unknown_parameter_is_an_error() {
        let src = Source::new("t.isa", "for (A) in (1):\n {B}\nend\n");
        let err = expand_file(&src).unwrap_err();
        assert!(
            err.to_string().contains("not a template parameter"),
            "{err}"
        );
    }
}
