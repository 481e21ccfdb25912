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

use crate::diag::{Diag, Source};
use crate::ir::instr::{Instr, InstrCost, param_name};
use crate::ir::{Expr, Op, Sym};
use crate::rules::parse::{RuleDecl, TypeFn, TypePred, parse_where, type_var_of};
use crate::rules::{Inst, Pat, PatKind, Rule};
use crate::syntax::elab::{Decls, ElabOptions, Elaborator, RuleScope};
use crate::syntax::lexer::{Tok, lex};
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
    let toks = crate::syntax::template::expand_file(src)?;
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
        let load_throughput = if p.eat_ident("load") {
            Some(number(&mut p)?)
        } else {
            None
        };
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
                load_throughput,
            },
            semantics,
            doc: crate::rules::parse::doc_above(src, line),
            span: start..end,
        });
    }
    Ok(out)
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
    floats: bool,
) -> Result<Type, Diag> {
    if floats && let Some(t) = Type::parse_float(name) {
        return Ok(t);
    }
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
    /// Where the entry is written.
    pub span: Range<usize>,
}

/// Instantiates every entry of a description file for `target`.
pub fn instantiate_file(src: &Arc<Source>, target: &str) -> Result<Vec<Instantiated>, Diag> {
    instantiate_with(src, target, Entries::Integer)
}

/// Instantiates an imported description file (`src/targets/<family>/imported/`) for
/// selection: each semantics is lifted first. An importer writes what the vendor's
/// pseudocode computes, step by step (`int16(uint8(abs(int16(a) - int16(b))))` for
/// `vabdl_high_s8`), and selection matches lifted expressions (`int16(absd(a, b))`), so a
/// rule derived from the text as written would never match. Lifting is exact (every
/// lifting rule is proved), so the instruction means the same.
pub fn instantiate_imported_file(
    src: &Arc<Source>,
    target: &str,
) -> Result<Vec<Instantiated>, Diag> {
    instantiate_with(src, target, Entries::ImportedLifted)
}

/// What a description file holds, which decides how its entries are instantiated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entries {
    /// Integer descriptions, semantics as written.
    Integer,
    /// Imported integer descriptions, semantics lifted.
    ImportedLifted,
    /// Float descriptions: float types allowed, no derived rule.
    Float,
}

/// Instantiates every entry of a float description file (`src/targets/<family>/float.isa`,
/// read by the float vectorizer only): operand and result types may be `f32` (`f32x8`),
/// the semantics may use float arithmetic, and no selection rule is derived (the integer
/// selector never meets a float).
pub fn instantiate_float_file(src: &Arc<Source>, target: &str) -> Result<Vec<Instantiated>, Diag> {
    instantiate_with(src, target, Entries::Float)
}

fn instantiate_with(
    src: &Arc<Source>,
    target: &str,
    entries: Entries,
) -> Result<Vec<Instantiated>, Diag> {
    use rayon::prelude::*;
    let decls = parse_file(src)?;
    // Entries instantiate independently (on every core: this is most of a target's load
    // time); the results and the first error are taken in file order.
    let each: Vec<Result<Vec<Instantiated>, Diag>> = decls
        .par_iter()
        .map(|d| instantiate_decl(d, src, target, entries))
        .collect();
    let mut out = Vec::new();
    for r in each {
        out.extend(r?);
    }
    Ok(out)
}

/// Every type instantiation of one entry.
fn instantiate_decl(
    d: &InstrDecl,
    src: &Arc<Source>,
    target: &str,
    entries: Entries,
) -> Result<Vec<Instantiated>, Diag> {
    let floats = entries == Entries::Float;
    let mut out = Vec::new();
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
                    let ty = resolve_type(t, &scope, src, s, floats).map_err(with)?;
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
        let result = resolve_type(&d.result.0, &scope, src, &d.result.1, floats).map_err(with)?;
        let opts = ElabOptions {
            rule: Some(scope.clone()),
            allow_float: floats,
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
        let mut semantics = crate::ir::visit::substitute(&sem, &map)
            .map_err(|e| Diag::new(src, d.semantics.span.clone(), e.0))?;
        if entries == Entries::ImportedLifted {
            semantics = crate::lift::lift(&semantics);
        }
        // Instructions described once per immediate value differ only in the range.
        let key = format!(
            "{target}:{}({})",
            d.intrinsic,
            params
                .iter()
                .zip(&imm_range)
                .map(|(t, r)| match r {
                    Some((lo, hi)) if lo == hi => format!("{lo}"),
                    // A free immediate differs from a register of the same type.
                    Some((lo, hi)) => format!("imm({lo}..{hi})"),
                    None => t.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        ) + &format!("->{result}");
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
        let rule = if floats {
            None
        } else {
            derived_rule(&instr, d, src, &scope)
        };
        out.push(Instantiated {
            instr,
            rule,
            span: d.span.clone(),
        });
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
            // An immediate fixed to one value is that value; a free one is a wildcard the
            // left-hand side must bind.
            None => Pat {
                kind: match ins.imm_range[i] {
                    Some((lo, hi)) if lo == hi => PatKind::Lit(lo),
                    _ => PatKind::Wild(i as u32),
                },
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
    let bound_wilds = lhs.wildcards();
    for (i, r) in ins.imm_range.iter().enumerate() {
        if matches!(r, Some((lo, hi)) if lo != hi) && !bound_wilds.contains(&(i as u32)) {
            return None;
        }
    }
    let pred = {
        let conds: Vec<String> = ins
            .imm_range
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                // A one-value immediate the semantics name is a wildcard of the left-hand
                // side too: it matches that value only (the right-hand side is the value).
                Some((lo, hi)) if lo != hi || bound_wilds.contains(&(i as u32)) => {
                    Some(format!("{lo} <= c{i} && c{i} <= {hi}"))
                }
                _ => None,
            })
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

    fn load(text: &str) -> Result<Vec<Instantiated>, Diag> {
        instantiate_file(&Source::new("t.isa", text), "x86")
    }

    #[test]
    fn fixed_immediates_become_literals_in_derived_rules() {
        let its = load(
            "instr vextracti128 _mm256_extracti128_si256(a: u8x32, k: imm(1..1)) -> u8x16 features avx2 cost 3 1 = slice_vectors(a, 16, 1, 16)\n",
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(its.len(), 1);
        let r = its[0].rule.as_ref().expect("a derived rule");
        let PatKind::Op(_, args) = &r.insts[0].rhs.kind else {
            panic!("{:?}", r.insts[0].rhs)
        };
        assert_eq!(args[1].kind, PatKind::Lit(1));
        assert!(r.decl.pred.is_none());
    }

    #[test]
    fn free_immediates_are_range_checked_wildcards() {
        let its = load(
            "instr vpsllw _mm_slli_epi16(a: u16x8, k: imm(0..255)) -> u16x8 features sse2 cost 1 0.5 = a << k\n",
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let r = its[0].rule.as_ref().expect("a derived rule");
        assert!(r.decl.pred.is_some());
        assert_eq!(r.insts[0].lhs.wildcards(), vec![1]);
    }

    #[test]
    fn wrong_result_type_is_reported_at_the_semantics() {
        let err = load(
            "instr vpaddb _mm_add_epi8(a: u8x16, b: u8x16) -> u16x16 features sse2 cost 1 0.25 = a + b\n",
        )
        .err()
        .expect("an error");
        assert_eq!(err.location(), "t.isa:1:85");
        assert!(err.to_string().contains("declared result"), "{err}");
    }

    #[test]
    fn a_load_throughput_is_optional() {
        let its = load(
            "instr vpmovzxbw _mm256_cvtepu8_epi16(a: u8x16) -> u16x16 features avx2 cost 4 1 load 0.25 = u16(a)\ninstr vpaddb _mm_add_epi8(a: u8x16, b: u8x16) -> u8x16 features sse2 cost 1 0.25 = a + b\n",
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(its[0].instr.cost.load_throughput, Some(0.25));
        assert_eq!(its[0].instr.cost.throughput, 1.0);
        assert_eq!(its[1].instr.cost.load_throughput, None);
        let err = load(
            "instr vpmovzxbw _mm256_cvtepu8_epi16(a: u8x16) -> u16x16 features avx2 cost 4 1 load = u16(a)\n",
        )
        .err()
        .expect("an error");
        assert!(err.to_string().contains("expected a number"), "{err}");
    }

    #[test]
    fn entries_keep_file_order_and_the_first_error_is_reported() {
        // Entries instantiate in parallel; order and errors must not depend on it.
        let good = "instr vpaddb _mm_add_epi8(a: u8x16, b: u8x16) -> u8x16 features sse2 cost 1 0.25 = a + b\n";
        let bad = "instr vpaddw _mm_add_epi16(a: u16x8, b: u16x8) -> u8x16 features sse2 cost 1 0.25 = a + b\n";
        let names = ["vpaddb", "vpaddw", "vpaddd", "vpaddq"];
        let text: String = names
            .iter()
            .map(|m| {
                good.replace("vpaddb", m)
                    .replace("_mm_add_epi8", &format!("_mm_{m}"))
            })
            .collect();
        let its = load(&text).unwrap_or_else(|d| panic!("{d}"));
        let got: Vec<&str> = its.iter().map(|i| i.instr.mnemonic.as_str()).collect();
        assert_eq!(got, names);
        for _ in 0..20 {
            let text = format!("{good}{bad}{good}{bad}");
            let err = load(&text).err().expect("an error");
            assert!(err.location().starts_with("t.isa:2:"), "{err}");
        }
    }

    #[test]
    fn duplicate_descriptions_are_rejected() {
        let text = "instr vpaddb _mm_add_epi8(a: u8x16, b: u8x16) -> u8x16 features sse2 cost 1 0.25 = a + b\ninstr vpaddb _mm_add_epi8(a: u8x16, b: u8x16) -> u8x16 features sse2 cost 1 0.25 = a + b\n";
        let Err(err) = super::super::Isa::load("x86", &[Source::new("t.isa", text)]) else {
            panic!("expected an error")
        };
        assert!(err.to_string().contains("described twice"), "{err}");
        assert_eq!(err.location(), "t.isa:2:1");
    }
}
