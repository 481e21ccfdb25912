//! The instruction description language (`isa/<target>/*.isa`, documented in `docs/isa.md`).
//!
//! ```text
//! ;; Wrapping add of bytes, at each register width.
//! for (P, L, F) in (_mm, 16, sse2), (_mm256, 32, avx2), (_mm512, 64, avx512bw):
//!     instr vpaddb {P}_add_epi8(a: Tx{L}, b: Tx{L}) -> Tx{L} where T.bits == 8
//!         features {F} cost 1 0.33 = a + b
//! end
//! ```
//!
//! An entry gives the assembly mnemonic, the C intrinsic, typed operands (`imm(LO..HI)` for
//! immediates), the result type, optional type conditions (as in rules), the CPU features it
//! needs, its latency and reciprocal throughput, and its semantics in harrow IR. Entries are
//! instantiated over their type variables like rules. `for` blocks repeat their entries for
//! each tuple of values, substituting `{NAME}` (and `{NAME*2}`, `{NAME/2}`, `{NAME+1}`,
//! `{NAME-1}`) at the token level; a substituted token glued to a neighbouring name or
//! number joins it (`{P}_add_epi8`, `Tx{L}`). Diagnostics point at the template.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;

use super::instr::{Instr, InstrCost, param_name};
use crate::diag::{Diag, Source};
use crate::ir::{Expr, Op, Sym};
use crate::rules::parse::{RuleDecl, TypeFn, TypePred, parse_where, type_var_of};
use crate::rules::{Inst, Pat, PatKind, Rule};
use crate::syntax::elab::{Decls, ElabOptions, Elaborator, RuleScope};
use crate::syntax::lexer::{Tok, Token, lex};
use crate::syntax::parse::{Ast, Parser};
use crate::types::{Elem, Type};

/// How an operand is declared.
#[derive(Clone, Debug)]
pub enum ParamKind {
    /// A register operand of the named type (`Tx16`, `u8x32`).
    Reg(String),
    /// An immediate in the inclusive range.
    Imm(i128, i128),
}

/// One instruction entry as written.
#[derive(Clone, Debug)]
pub struct InstrDecl {
    /// Assembly mnemonic.
    pub mnemonic: String,
    /// C intrinsic.
    pub intrinsic: String,
    /// Operands.
    pub params: Vec<(String, ParamKind, Range<usize>)>,
    /// Result type name.
    pub result: (String, Range<usize>),
    /// Derived type variables.
    pub derived: Vec<(String, TypeFn, String, Range<usize>)>,
    /// Conditions on types.
    pub type_preds: Vec<(TypePred, Range<usize>)>,
    /// CPU features.
    pub features: Vec<String>,
    /// Cost.
    pub cost: InstrCost,
    /// Semantics.
    pub semantics: Ast,
    /// The `;;` prose above it.
    pub doc: String,
    /// Where it is.
    pub span: Range<usize>,
}

// ---- templating ----

fn template_value(
    toks: &[Token],
    i: usize,
    env: &HashMap<String, Tok>,
    src: &Arc<Source>,
) -> Result<(Tok, usize), Diag> {
    // toks[i] is `{`; returns the value and the index after `}`.
    let open = &toks[i];
    let err = |span: Range<usize>, m: &str| Diag::new(src, span, m.to_string());
    let Some(Token {
        tok: Tok::Ident(name),
        span,
    }) = toks.get(i + 1)
    else {
        return Err(err(open.span.clone(), "expected `{NAME}`"));
    };
    let value = env.get(name).cloned().ok_or_else(|| {
        err(
            span.clone(),
            &format!("`{name}` is not a template parameter here"),
        )
    })?;
    let mut j = i + 2;
    let mut value = value;
    if let Some(Token {
        tok: Tok::Punct(op @ ("*" | "/" | "+" | "-")),
        ..
    }) = toks.get(j)
    {
        let Some(Token {
            tok: Tok::Int(k), ..
        }) = toks.get(j + 1)
        else {
            return Err(err(toks[j].span.clone(), "expected a number"));
        };
        let Tok::Int(v) = value else {
            return Err(err(span.clone(), &format!("`{name}` is not a number")));
        };
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
fn expand(
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
                let (v, next) = template_value(toks, i, env, src)?;
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
fn glue(toks: Vec<Token>) -> Vec<Token> {
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

fn number(p: &mut Parser) -> Result<f32, Diag> {
    let t = p.bump();
    match &t.tok {
        Tok::Int(v) => Ok(*v as f32),
        Tok::Float(s) => s
            .trim_end_matches('f')
            .parse()
            .map_err(|_| p.error(&t, "expected a number")),
        _ => Err(p.error(&t, "expected a number")),
    }
}

fn int(p: &mut Parser) -> Result<i128, Diag> {
    let neg = p.eat("-");
    let t = p.bump();
    match t.tok {
        Tok::Int(v) => Ok(if neg { -v } else { v }),
        _ => Err(p.error(&t, "expected an integer")),
    }
}

/// Parses all entries of a description file (after expanding templates).
pub fn parse_file(src: &Arc<Source>) -> Result<Vec<InstrDecl>, Diag> {
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
    let mut p = Parser::new(src, &toks);
    let mut out = Vec::new();
    while !p.at_eof() {
        let t = p.bump();
        if !matches!(&t.tok, Tok::Ident(k) if k == "instr") {
            return Err(p.error(&t, "expected `instr`"));
        }
        let start = t.span.start;
        let (line, _) = src.line_col(start);
        let (mnemonic, _) = p.ident()?;
        let (intrinsic, _) = p.ident()?;
        p.expect("(")?;
        let mut params = Vec::new();
        if !p.eat(")") {
            loop {
                let (name, ns) = p.ident()?;
                p.expect(":")?;
                let (ty, ts) = p.ident()?;
                let kind = if ty == "imm" {
                    p.expect("(")?;
                    let lo = int(&mut p)?;
                    p.expect(".")?;
                    p.expect(".")?;
                    let hi = int(&mut p)?;
                    p.expect(")")?;
                    ParamKind::Imm(lo, hi)
                } else {
                    ParamKind::Reg(ty)
                };
                params.push((name, kind, ns.start..ts.end));
                if p.eat(")") {
                    break;
                }
                p.expect(",")?;
            }
        }
        p.expect("->")?;
        let result = p.ident()?;
        let (derived, type_preds, _) = if p.eat_ident("where") {
            parse_where(&mut p, src)?
        } else {
            (Vec::new(), Vec::new(), 0)
        };
        let mut features = Vec::new();
        if p.eat_ident("features") {
            while let Tok::Ident(f) = &p.peek().tok {
                if f == "cost" {
                    break;
                }
                features.push(f.clone());
                p.bump();
            }
        }
        if !p.eat_ident("cost") {
            let t = p.peek().clone();
            return Err(p.error(&t, "expected `cost LATENCY THROUGHPUT`"));
        }
        let latency = number(&mut p)?;
        let throughput = number(&mut p)?;
        p.expect("=")?;
        let semantics = p.expr()?;
        let end = semantics.span.end;
        out.push(InstrDecl {
            mnemonic,
            intrinsic,
            params,
            result,
            derived,
            type_preds,
            features,
            cost: InstrCost {
                latency,
                throughput,
            },
            semantics,
            doc: doc_above(src, line),
            span: start..end,
        });
    }
    Ok(out)
}

fn doc_above(src: &Source, line: usize) -> String {
    let lines: Vec<&str> = src.text.lines().collect();
    let mut doc = Vec::new();
    let mut i = line.saturating_sub(1);
    while i > 0 {
        let l = lines[i - 1].trim();
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

/// A synthetic rule declaration that carries an entry's types for instantiation.
fn as_rule_decl(d: &InstrDecl, src: &Arc<Source>) -> RuleDecl {
    let (line, _) = src.line_col(d.span.start);
    RuleDecl {
        name: d.intrinsic.clone(),
        src: src.clone(),
        line,
        span: d.span.clone(),
        doc: d.doc.clone(),
        params: d
            .params
            .iter()
            .map(|(n, k, s)| {
                let t = match k {
                    ParamKind::Reg(t) => t.clone(),
                    ParamKind::Imm(..) => "i32".into(),
                };
                (n.clone(), t, s.clone())
            })
            .chain(std::iter::once((
                "$result".to_string(),
                d.result.0.clone(),
                d.result.1.clone(),
            )))
            .collect(),
        derived: d.derived.clone(),
        type_preds: d.type_preds.clone(),
        priority: 0,
        lhs: d.semantics.clone(),
        rhs: d.semantics.clone(),
        pred: None,
    }
}

fn resolve_type(
    name: &str,
    scope: &RuleScope,
    src: &Arc<Source>,
    span: &Range<usize>,
) -> Result<Type, Diag> {
    if let Some(v) = type_var_of(name) {
        let e = scope.types[v];
        if v == name {
            return Ok(Type::scalar(e));
        }
        let lanes: u32 = name[v.len() + 1..]
            .parse()
            .map_err(|_| Diag::new(src, span.clone(), format!("bad type `{name}`")))?;
        return Ok(Type::vec(e, lanes));
    }
    Type::parse(name, false)
        .ok_or_else(|| Diag::new(src, span.clone(), format!("unknown type `{name}`")))
}

/// An instantiated instruction and the rule derived from its semantics.
pub struct Instantiated {
    /// The instruction.
    pub instr: Arc<Instr>,
    /// `semantics => instruction`, or `None` when the semantics make no useful pattern.
    pub rule: Option<Rule>,
}

/// Instantiates every entry of a description file for `target`.
pub fn instantiate_file(src: &Arc<Source>, target: &str) -> Result<Vec<Instantiated>, Diag> {
    let decls = parse_file(src)?;
    let mut out = Vec::new();
    for d in &decls {
        let rd = as_rule_decl(d, src);
        let assignments = crate::rules::type_assignments(&rd)?;
        if assignments.is_empty() {
            return Err(Diag::new(
                src,
                d.span.clone(),
                format!(
                    "`{}` has no type instantiation that satisfies its conditions",
                    d.intrinsic
                ),
            ));
        }
        for m in assignments {
            let imm_names: BTreeSet<String> = d
                .params
                .iter()
                .filter(|(_, k, _)| matches!(k, ParamKind::Imm(..)))
                .map(|(n, ..)| n.clone())
                .collect();
            let scope = RuleScope {
                types: m.clone(),
                consts: imm_names.clone(),
            };
            let desc = {
                let mm: std::collections::BTreeMap<_, _> = m.iter().collect();
                mm.iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let with = |x: Diag| {
                if desc.is_empty() {
                    x
                } else {
                    x.note(format!("in the instantiation {desc}"))
                }
            };
            let mut decls = Decls::new();
            let mut params = Vec::new();
            let mut imm = Vec::new();
            let mut imm_range = Vec::new();
            for (n, k, s) in &d.params {
                match k {
                    ParamKind::Reg(t) => {
                        let ty = resolve_type(t, &scope, src, s).map_err(with)?;
                        decls.vars.insert(n.clone(), ty);
                        params.push(ty);
                        imm.push(false);
                        imm_range.push(None);
                    }
                    ParamKind::Imm(lo, hi) => {
                        params.push(Type::INDEX);
                        imm.push(true);
                        imm_range.push(Some((*lo, *hi)));
                    }
                }
            }
            let result = resolve_type(&d.result.0, &scope, src, &d.result.1).map_err(with)?;
            let opts = ElabOptions {
                rule: Some(scope.clone()),
                ..Default::default()
            };
            let mut el = Elaborator::new(src, &decls, opts);
            let sem = el.expr(&d.semantics).map_err(with)?;
            if sem.ty() != result {
                return Err(with(Diag::new(
                    src,
                    d.semantics.span.clone(),
                    format!(
                        "the semantics of `{}` compute {}, but the declared result is {result}",
                        d.intrinsic,
                        sem.ty()
                    ),
                )));
            }
            // Operands become `#i`; each use of an immediate becomes a conversion of `#i`.
            let mut map: HashMap<Sym, Expr> = HashMap::new();
            for (i, (n, k, _)) in d.params.iter().enumerate() {
                if let ParamKind::Reg(_) = k {
                    map.insert(
                        n.as_str().into(),
                        Expr::var(param_name(i).as_str(), params[i]),
                    );
                }
            }
            for (k, (ast, elem)) in el.consts.iter().enumerate() {
                let name = match &ast.kind {
                    crate::syntax::parse::AstKind::Name(n) => n.clone(),
                    _ => {
                        return Err(Diag::new(
                            src,
                            ast.span.clone(),
                            "an immediate may only be used by itself here",
                        ));
                    }
                };
                let i = d
                    .params
                    .iter()
                    .position(|(n, ..)| *n == name)
                    .ok_or_else(|| {
                        Diag::new(
                            src,
                            ast.span.clone(),
                            format!("`{name}` is not an immediate of this instruction"),
                        )
                    })?;
                let v = Expr::var(param_name(i).as_str(), Type::INDEX).cast(*elem);
                map.insert(format!("${k}").as_str().into(), v);
            }
            let semantics = crate::ir::visit::substitute(&sem, &map)
                .map_err(|e| Diag::new(src, d.semantics.span.clone(), e.0))?;
            let key = format!(
                "{target}:{}({})",
                d.intrinsic,
                params
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let (line, _) = src.line_col(d.span.start);
            let instr = Arc::new(Instr {
                target: target.to_string(),
                mnemonic: d.mnemonic.clone(),
                intrinsic: d.intrinsic.clone(),
                params: params.clone(),
                imm: imm.clone(),
                imm_range: imm_range.clone(),
                result,
                semantics: semantics.clone(),
                features: d.features.clone(),
                cost: d.cost,
                location: format!("{}:{line}", src.name),
                key,
            });
            let rule = derived_rule(&instr, d, src, &scope);
            out.push(Instantiated { instr, rule });
        }
    }
    Ok(out)
}

/// The rule `semantics => instruction` for one instantiated instruction: register operands
/// are rule variables, immediates are wildcards constrained to their range.
fn derived_rule(
    ins: &Arc<Instr>,
    d: &InstrDecl,
    src: &Arc<Source>,
    scope: &RuleScope,
) -> Option<Rule> {
    let reg_index: Vec<Option<usize>> = {
        let mut k = 0;
        ins.imm
            .iter()
            .map(|&is_imm| {
                if is_imm {
                    None
                } else {
                    k += 1;
                    Some(k - 1)
                }
            })
            .collect()
    };
    let lhs = sem_pattern(&ins.semantics, &reg_index)?;
    if !matches!(lhs.kind, PatKind::Op(..)) {
        return None;
    }
    let args: Vec<Pat> = ins
        .params
        .iter()
        .enumerate()
        .map(|(i, t)| match reg_index[i] {
            Some(r) => Pat {
                kind: PatKind::Var(r),
                elem: t.elem,
                lanes: Some(t.lanes),
            },
            None => Pat {
                kind: PatKind::Wild(i as u32),
                elem: t.elem,
                lanes: Some(1),
            },
        })
        .collect();
    let rhs = Pat {
        kind: PatKind::Op(Op::Instr(ins.clone()), args),
        elem: ins.result.elem,
        lanes: Some(ins.result.lanes),
    };
    // Every register operand must occur in the pattern, or the instruction would need a
    // value nobody supplied.
    let counts = lhs.var_counts(reg_index.iter().flatten().count());
    if counts.contains(&0) {
        return None;
    }
    let pred = {
        let conds: Vec<String> = ins
            .imm_range
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.map(|(lo, hi)| format!("{lo} <= c{i} && c{i} <= {hi}")))
            .collect();
        if conds.is_empty() {
            None
        } else {
            let psrc = Source::new(
                format!("{} (immediate ranges)", ins.location),
                conds.join(" && "),
            );
            let toks = lex(&psrc).ok()?;
            let mut p = Parser::new(&psrc, &toks);
            Some(p.expr().ok()?)
        }
    };
    let mut decl = as_rule_decl(d, src);
    decl.name = format!("{} ({})", ins.mnemonic, ins.intrinsic);
    decl.params = d
        .params
        .iter()
        .filter(|(_, k, _)| matches!(k, ParamKind::Reg(_)))
        .map(|(n, k, s)| {
            (
                n.clone(),
                if let ParamKind::Reg(t) = k {
                    t.clone()
                } else {
                    String::new()
                },
                s.clone(),
            )
        })
        .collect();
    decl.pred = pred;
    let vars: Vec<String> = decl.params.iter().map(|(n, ..)| n.clone()).collect();
    let var_elems: Vec<Elem> = ins
        .params
        .iter()
        .zip(&ins.imm)
        .filter(|(_, i)| !**i)
        .map(|(t, _)| t.elem)
        .collect();
    Some(Rule {
        decl,
        vars,
        insts: vec![Inst {
            scope: scope.clone(),
            vars: var_elems,
            lhs,
            rhs,
        }],
    })
}

/// The pattern of instruction semantics: operands are variables, immediates wildcards.
fn sem_pattern(e: &Expr, reg_index: &[Option<usize>]) -> Option<Pat> {
    let lanes = Some(e.ty().lanes);
    let elem = e.ty().elem;
    let imm_of = |x: &Expr| -> Option<u32> {
        let inner = if matches!(x.op(), Op::Cast) {
            x.arg(0)
        } else {
            x
        };
        match inner.op() {
            Op::Var(n) => {
                let i: usize = n.strip_prefix('#')?.parse().ok()?;
                reg_index
                    .get(i)
                    .copied()
                    .flatten()
                    .is_none()
                    .then_some(i as u32)
            }
            _ => None,
        }
    };
    let kind = match e.op() {
        Op::Var(n) => {
            let i: usize = n.strip_prefix('#')?.parse().ok()?;
            match reg_index.get(i).copied().flatten() {
                Some(r) => PatKind::Var(r),
                None => PatKind::Wild(i as u32),
            }
        }
        Op::Const(_) => PatKind::Lit(e.as_const()?),
        Op::Broadcast if e.arg(0).ty().lanes == 1 && e.arg(0).as_const().is_some() => {
            PatKind::Lit(e.as_const()?)
        }
        Op::Broadcast if e.arg(0).ty().lanes == 1 && imm_of(e.arg(0)).is_some() => {
            PatKind::Wild(imm_of(e.arg(0))?)
        }
        Op::Cast if imm_of(e).is_some() => PatKind::Wild(imm_of(e)?),
        op => PatKind::Op(
            op.clone(),
            e.args()
                .iter()
                .map(|a| sem_pattern(a, reg_index))
                .collect::<Option<Vec<_>>>()?,
        ),
    };
    Some(Pat { kind, elem, lanes })
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
        let raw = lex(&src).unwrap();
        let raw: Vec<Token> = raw
            .into_iter()
            .filter(|t| !matches!(t.tok, Tok::Newline))
            .collect();
        let mut out = Vec::new();
        expand(&raw[..raw.len() - 1], &HashMap::new(), &src, &mut out).unwrap();
        let g = glue(out);
        let words: Vec<String> = g.iter().map(|t| format!("{:?}", t.tok)).collect();
        println!("{}", words.join(" "));
        assert!(
            words.iter().any(|w| w.contains("_mm_add_epi8")),
            "{words:?}"
        );
        assert!(words.iter().any(|w| w.contains("\"Tx16\"")), "{words:?}");
        assert!(words.iter().any(|w| w.contains("\"Tx8\"")), "{words:?}");
    }
}
