//! Rewrite rules as data: the rule language, its instantiation over element types, and the
//! checks made when rules load.
//!
//! A rule is written once, polymorphic over type variables; loading enumerates every
//! assignment of element types that satisfies its `where` clause and elaborates both sides
//! for each with the ordinary expression elaborator (so rules and expressions share one set
//! of typing rules). Each surviving assignment is an [`Inst`]; engines match instantiations.
//!
//! Checks at load: every right-hand-side variable and wildcard is bound on the left; both
//! sides have the same type in every instantiation; no two rules have the same left-hand
//! side at the same priority (unless their predicates differ); and for lifting rules the
//! right-hand side is strictly cheaper under [`cost`] and duplicates no variable.

pub mod cexpr;
pub mod check;
pub mod cost;
pub mod parse;
pub mod pattern;
pub mod snapshot;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::diag::{Diag, Source};
use crate::ir::{Expr, OpKey};
use crate::syntax::elab::{Decls, ElabOptions, Elaborator, RuleScope};
use crate::syntax::parse::{Ast, AstKind};
use crate::types::{Elem, Type, USER_INT_ELEMS};
pub use parse::{RuleDecl, TypeFn, TypePred};
pub use pattern::{Binds, Pat, PatKind};

/// What a rule set is for; it decides which checks apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RuleKind {
    /// Integer IR to FPIR: every rule must lower the cost.
    Lift,
    /// FPIR to target instructions (cost is the target's business).
    Lower,
    /// Equalities for equality saturation (`rules/algebra.rules`): neither side need be
    /// cheaper, since saturation only adds forms and extraction chooses by cost.
    Algebra,
}

/// One type instantiation of a rule.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Inst {
    /// Type variables and the element types they stand for.
    pub scope: RuleScope,
    /// Element type of each rule variable.
    pub vars: Vec<Elem>,
    /// Left-hand side.
    pub lhs: Pat,
    /// Right-hand side.
    pub rhs: Pat,
}

impl Inst {
    /// A short description such as `T = u8, U = u16`.
    pub fn describe(&self) -> String {
        let m: BTreeMap<_, _> = self.scope.types.iter().collect();
        if m.is_empty() {
            return "(no type variables)".into();
        }
        m.iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A loaded rule: the declaration and all its instantiations.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Rule {
    /// As written.
    pub decl: RuleDecl,
    /// Names of the rule variables, by index.
    pub vars: Vec<String>,
    /// Every type instantiation that satisfies the rule's constraints.
    pub insts: Vec<Inst>,
}

/// A left-hand side's root operator, element type and lane count (`None`: any).
type RootKey = (OpKey, Elem, Option<u32>);

/// A set of rules indexed by the root operator, element type and (where fixed) lane count
/// of their left-hand sides.
#[derive(Clone, Debug, Default)]
pub struct RuleSet {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// Target rule sets allow equal left-hand sides: the target's costs choose.
    pub kind: Option<RuleKind>,
    /// Instantiations by root operator and element type, in file order, for left-hand
    /// sides of any lane count (`None`) or of the given one: most target rules fix their
    /// lanes, and a node is only offered those of its own.
    index: crate::util::idhash::IdMap<RootKey, Vec<(usize, usize)>>,
}

impl RuleSet {
    /// Parses, instantiates and checks a rule file.
    pub fn load(src: &Arc<Source>, kind: RuleKind) -> Result<RuleSet, Diag> {
        Self::load_with(src, kind, None)
    }

    /// Parses, instantiates and checks a rule file whose rules may call the given target
    /// instructions by their intrinsic names.
    pub fn load_with(
        src: &Arc<Source>,
        kind: RuleKind,
        instrs: Option<&Arc<crate::ir::instr::InstrTable>>,
    ) -> Result<RuleSet, Diag> {
        let decls = parse::parse_file(src)?;
        let mut set = RuleSet {
            kind: Some(kind),
            ..Default::default()
        };
        // Rules instantiate independently (on every core); the results and the first error
        // are taken in file order.
        let each: Vec<Result<Rule, Diag>> = {
            use rayon::prelude::*;
            decls
                .into_par_iter()
                .map(|d| instantiate(d, kind, instrs))
                .collect()
        };
        for rule in each {
            set.rules.push(rule?);
        }
        set.check_overlaps()?;
        set.reindex();
        Ok(set)
    }

    /// A set of already instantiated rules (the rules derived from instruction semantics).
    pub fn from_rules(rules: Vec<Rule>, kind: RuleKind) -> RuleSet {
        let mut set = RuleSet {
            rules,
            kind: Some(kind),
            ..Default::default()
        };
        set.reindex();
        set
    }

    /// Adds the rules of another set (e.g. `--rules FILE`), checking overlaps again.
    pub fn extend(&mut self, other: RuleSet) -> Result<(), Diag> {
        self.rules.extend(other.rules);
        self.check_overlaps()?;
        self.reindex();
        Ok(())
    }

    fn reindex(&mut self) {
        let roots = || {
            self.rules.iter().enumerate().flat_map(|(ri, r)| {
                r.insts
                    .iter()
                    .enumerate()
                    .filter_map(move |(ii, inst)| match &inst.lhs.kind {
                        PatKind::Op(op, _) => {
                            Some(((op.key(), inst.lhs.elem), inst.lhs.lanes, (ri, ii)))
                        }
                        _ => None,
                    })
            })
        };
        // The lane counts fixed under each root, then each bucket in file order.
        let mut fixed: crate::util::idhash::IdMap<(OpKey, Elem), BTreeSet<u32>> =
            Default::default();
        for (root, lanes, _) in roots() {
            if let Some(l) = lanes {
                fixed.entry(root).or_default().insert(l);
            }
        }
        let mut index: crate::util::idhash::IdMap<_, Vec<(usize, usize)>> = Default::default();
        for ((op, elem), lanes, at) in roots() {
            match lanes {
                Some(l) => index.entry((op, elem, Some(l))).or_default().push(at),
                None => {
                    index.entry((op, elem, None)).or_default().push(at);
                    for &l in fixed.get(&(op, elem)).into_iter().flatten() {
                        index.entry((op, elem, Some(l))).or_default().push(at);
                    }
                }
            }
        }
        self.index = index;
    }

    /// Instantiations whose left-hand side has `e`'s root operator and element type, and
    /// its lane count where the left-hand side fixes one, in file order.
    pub fn candidates(&self, e: &Expr) -> &[(usize, usize)] {
        let (op, elem) = (e.op().key(), e.ty().elem);
        self.index
            .get(&(op, elem, Some(e.ty().lanes)))
            .or_else(|| self.index.get(&(op, elem, None)))
            .map_or(&[], |v| v.as_slice())
    }

    /// Total number of instantiations.
    pub fn instantiation_count(&self) -> usize {
        self.rules.iter().map(|r| r.insts.len()).sum()
    }

    fn check_overlaps(&self) -> Result<(), Diag> {
        if matches!(self.kind, Some(RuleKind::Lower | RuleKind::Algebra)) {
            return Ok(());
        }
        let mut seen: HashMap<(String, i32), (usize, Option<String>)> = HashMap::new();
        for (ri, r) in self.rules.iter().enumerate() {
            let pred_text = r.decl.pred.as_ref().map(|p| ast_text(&r.decl.src, p));
            let mut mine = BTreeSet::new();
            for inst in &r.insts {
                let key = (inst.lhs.canonical(), r.decl.priority);
                if !mine.insert(key.0.clone()) {
                    continue;
                }
                if let Some((other, other_pred)) = seen.get(&key) {
                    let o = &self.rules[*other];
                    let distinct_preds =
                        pred_text.is_some() && other_pred.is_some() && &pred_text != other_pred;
                    if !distinct_preds {
                        return Err(Diag::new(&r.decl.src, r.decl.span.clone(), format!(
                            "rule `{}` has the same left-hand side as rule `{}` ({}) at the same priority, for {}",
                            r.decl.name, o.decl.name, o.decl.location(), inst.describe()
                        ))
                        .note("give one a different priority, or predicates that tell them apart"));
                    }
                } else {
                    seen.insert(key, (ri, pred_text.clone()));
                }
            }
        }
        Ok(())
    }
}

/// The source text of an AST node.
pub fn ast_text(src: &Source, ast: &Ast) -> String {
    src.text
        .get(ast.span.clone())
        .unwrap_or("?")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Type variables mentioned anywhere in a rule.
pub fn type_vars(d: &RuleDecl) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, t, _) in &d.params {
        if let Some(v) = parse::type_var_of(t) {
            out.insert(v.to_string());
        }
    }
    for (v, _, a, _) in &d.derived {
        out.insert(v.clone());
        out.insert(a.clone());
    }
    for (p, _) in &d.type_preds {
        match p {
            TypePred::Unsigned(t) | TypePred::Signed(t) => {
                out.insert(t.clone());
            }
            TypePred::SameSignedness(a, b) => {
                out.insert(a.clone());
                out.insert(b.clone());
            }
            TypePred::Expr(e) => collect_ast_types(e, &mut out),
        }
    }
    collect_ast_types(&d.lhs, &mut out);
    collect_ast_types(&d.rhs, &mut out);
    if let Some(p) = &d.pred {
        collect_ast_types(p, &mut out);
    }
    out
}

fn collect_ast_types(a: &Ast, out: &mut BTreeSet<String>) {
    match &a.kind {
        AstKind::Name(n) => {
            if let Some((t, _)) = n.rsplit_once('.')
                && parse::is_type_var(t)
            {
                out.insert(t.to_string());
            }
        }
        AstKind::Call {
            name, angle, args, ..
        } => {
            if let Some(v) = parse::type_var_of(name) {
                out.insert(v.to_string());
            }
            if let Some((t, _)) = angle
                && let Some(v) = parse::type_var_of(t)
            {
                out.insert(v.to_string());
            }
            for x in args {
                collect_ast_types(x, out);
            }
        }
        AstKind::Typed { ty, e, .. } => {
            if let Some(v) = parse::type_var_of(ty) {
                out.insert(v.to_string());
            }
            collect_ast_types(e, out);
        }
        AstKind::Unary(_, e) => collect_ast_types(e, out),
        AstKind::Binary(_, x, y) => {
            collect_ast_types(x, out);
            collect_ast_types(y, out);
        }
        AstKind::Index { index, .. } => collect_ast_types(index, out),
        AstKind::Let { value, body, .. } => {
            collect_ast_types(value, out);
            collect_ast_types(body, out);
        }
        AstKind::List(v) => v.iter().for_each(|x| collect_ast_types(x, out)),
        AstKind::Int(_) | AstKind::Float(_) | AstKind::Bool(_) => {}
    }
}

fn apply_type_fn(f: TypeFn, e: Elem) -> Option<Elem> {
    let r = match f {
        TypeFn::Widen => e.widen()?,
        TypeFn::Narrow => e.narrow()?,
        TypeFn::Signed => e.with_signed(true),
        TypeFn::Unsigned => e.with_signed(false),
        TypeFn::Same => e,
    };
    (r.is_int() && !r.is_internal()).then_some(r)
}

/// Every assignment of element types to the rule's free type variables that satisfies its
/// constraints, with derived variables filled in.
pub fn type_assignments(d: &RuleDecl) -> Result<Vec<HashMap<String, Elem>>, Diag> {
    let all = type_vars(d);
    let derived: BTreeSet<&String> = d.derived.iter().map(|(v, ..)| v).collect();
    let free: Vec<&String> = all.iter().filter(|v| !derived.contains(v)).collect();
    for (v, _, a, span) in &d.derived {
        if !all.contains(a) {
            return Err(Diag::new(
                &d.src,
                span.clone(),
                format!("`{v}` is defined from unknown type variable `{a}`"),
            ));
        }
    }
    let mut out = Vec::new();
    let n = free.len();
    let total = USER_INT_ELEMS.len().pow(n as u32);
    'assign: for k in 0..total {
        let mut m: HashMap<String, Elem> = HashMap::new();
        let mut idx = k;
        for v in &free {
            m.insert((*v).clone(), USER_INT_ELEMS[idx % USER_INT_ELEMS.len()]);
            idx /= USER_INT_ELEMS.len();
        }
        // Derived variables may depend on each other; resolve until nothing changes.
        let mut pending: Vec<&(String, TypeFn, String, std::ops::Range<usize>)> =
            d.derived.iter().collect();
        while !pending.is_empty() {
            let before = pending.len();
            let mut rest = Vec::new();
            for dv in pending {
                match m.get(&dv.2) {
                    Some(&base) => match apply_type_fn(dv.1, base) {
                        Some(r) => {
                            m.insert(dv.0.clone(), r);
                        }
                        None => continue 'assign,
                    },
                    None => rest.push(dv),
                }
            }
            if rest.len() == before {
                let (v, _, a, span) = rest[0];
                return Err(Diag::new(
                    &d.src,
                    span.clone(),
                    format!("`{v}` and `{a}` are defined from each other"),
                ));
            }
            pending = rest;
        }
        let scope = RuleScope {
            types: m.clone(),
            ..Default::default()
        };
        for (p, span) in &d.type_preds {
            let ok = match p {
                TypePred::Unsigned(t) => m.get(t).is_some_and(|e| !e.is_signed()),
                TypePred::Signed(t) => m.get(t).is_some_and(|e| e.is_signed()),
                TypePred::SameSignedness(a, b) => match (m.get(a), m.get(b)) {
                    (Some(x), Some(y)) => x.is_signed() == y.is_signed(),
                    _ => false,
                },
                TypePred::Expr(e) => {
                    let wild = |_: u32| None;
                    let mut bounds = |_: &str| None;
                    let mut env = cexpr::CEnv {
                        scope: &scope,
                        wild: &wild,
                        bounds: &mut bounds,
                    };
                    match cexpr::eval(e, &mut env) {
                        Ok(v) => v != 0,
                        Err(err) => {
                            return Err(Diag::new(
                                &d.src,
                                span.clone(),
                                format!("cannot evaluate this type condition: {}", err.0),
                            ));
                        }
                    }
                }
            };
            if !ok {
                continue 'assign;
            }
        }
        out.push(m);
    }
    Ok(out)
}

/// One elaborated rule side: the expression, its constant expressions (`$k`), and how many
/// written casts turned out to be no-ops.
type Elaborated = (Expr, Vec<(Ast, Elem)>, usize);

/// Elaborates one side of a rule for one instantiation.
fn elaborate_side(
    d: &RuleDecl,
    side: &Ast,
    scope: &RuleScope,
    vars: &[(String, Type)],
    instrs: Option<&Arc<crate::ir::instr::InstrTable>>,
) -> Result<Option<Elaborated>, Diag> {
    let mut decls = Decls::new();
    for (v, t) in vars {
        decls.vars.insert(v.clone(), *t);
    }
    let opts = ElabOptions {
        lane_var: None,
        allow_internal: false,
        allow_float: false,
        rule: Some(scope.clone()),
        instrs: instrs.cloned(),
    };
    let mut el = Elaborator::new(&d.src, &decls, opts);
    match el.expr(side) {
        Ok(e) => Ok(Some((e, el.consts, el.noop_casts))),
        // The instantiation would need a 128-bit type: it does not exist.
        Err(_) if el.needs_internal => Ok(None),
        Err(d) => Err(d),
    }
}

fn with_inst(diag: Diag, inst: &str) -> Diag {
    diag.note(format!("in the instantiation {inst}"))
}

/// Instantiates and checks one rule.
pub fn instantiate(
    d: RuleDecl,
    kind: RuleKind,
    instrs: Option<&Arc<crate::ir::instr::InstrTable>>,
) -> Result<Rule, Diag> {
    let src = d.src.clone();
    let var_names: Vec<String> = d.params.iter().map(|(v, ..)| v.clone()).collect();
    for (i, (v, _, span)) in d.params.iter().enumerate() {
        if var_names[..i].contains(v) {
            return Err(Diag::new(
                &src,
                span.clone(),
                format!("rule variable `{v}` is declared twice"),
            ));
        }
        if crate::syntax::elab::is_wildcard(v) {
            return Err(Diag::new(
                &src,
                span.clone(),
                format!("`{v}` is a constant wildcard name; pick another variable name"),
            ));
        }
    }
    for (_, t, span) in &d.params {
        let vector = parse::type_var_of(t).is_some() || Type::parse(t, false).is_some();
        if !parse::is_type_var(t) && Elem::parse(t, false).is_none() && !vector {
            return Err(Diag::new(
                &src,
                span.clone(),
                format!(
                    "unknown type `{t}`; use a type variable like `T`, an element type like `u8`, or a vector type like `Tx16` or `u8x32`"
                ),
            ));
        }
        if kind != RuleKind::Lower && !parse::is_type_var(t) && Elem::parse(t, false).is_none() {
            return Err(Diag::new(
                &src,
                span.clone(),
                "lifting rules hold at every lane count; give their variables element types",
            ));
        }
    }
    let assignments = type_assignments(&d)?;
    if assignments.is_empty() {
        return Err(Diag::new(
            &src,
            d.span.clone(),
            format!(
                "rule `{}` has no type instantiation that satisfies its constraints",
                d.name
            ),
        ));
    }
    let text_of = |a: &Ast| ast_text(&src, a);
    let var_index = |n: &str| var_names.iter().position(|v| v == n);
    let mut insts = Vec::new();
    for m in assignments {
        let scope = RuleScope {
            types: m.clone(),
            ..Default::default()
        };
        let vars: Vec<(String, Type)> = d
            .params
            .iter()
            .map(|(v, t, _)| (v.clone(), var_type(t, &m).expect("checked above")))
            .collect();
        let desc = Inst {
            scope: scope.clone(),
            vars: vec![],
            lhs: dummy(),
            rhs: dummy(),
        }
        .describe();
        let Some((le, lconsts, lnoop)) =
            elaborate_side(&d, &d.lhs, &scope, &vars, instrs).map_err(|x| with_inst(x, &desc))?
        else {
            continue;
        };
        if lnoop > 0 {
            // A cast written on the left that changes nothing here: the rule is about a
            // real conversion, so this instantiation is not one of its cases.
            continue;
        }
        let Some((re, rconsts, _)) =
            elaborate_side(&d, &d.rhs, &scope, &vars, instrs).map_err(|x| with_inst(x, &desc))?
        else {
            return Err(with_inst(
                Diag::new(
                    &src,
                    d.rhs.span.clone(),
                    "the right-hand side needs a 128-bit type here",
                ),
                &desc,
            ));
        };
        // Rules over vector-typed variables hold at that width only, and so do those whose
        // left-hand side has a vector type of its own (a broadcast of a scalar register to a
        // fixed width); the others (lowering rules in plain IR included) hold at every lane
        // count.
        let exact = kind == RuleKind::Lower
            && (vars.iter().any(|(_, t)| !t.is_scalar()) || !le.ty().is_scalar());
        let lhs = pattern::from_expr(&le, &var_index, &lconsts, &text_of, exact)
            .map_err(|m| with_inst(Diag::new(&src, d.lhs.span.clone(), m), &desc))?;
        let rhs = pattern::from_expr(&re, &var_index, &rconsts, &text_of, exact)
            .map_err(|m| with_inst(Diag::new(&src, d.rhs.span.clone(), m), &desc))?;
        if !matches!(lhs.kind, PatKind::Op(..)) {
            return Err(Diag::new(
                &src,
                d.lhs.span.clone(),
                "the left-hand side must be an operation, not a variable or constant",
            ));
        }
        if lhs.ops().iter().any(|p| matches!(p.kind, PatKind::Op(_, ref a) if a.iter().any(|x| matches!(x.kind, PatKind::Computed(_)))))
            || matches!(lhs.kind, PatKind::Computed(_))
        {
            return Err(with_inst(
                Diag::new(&src, d.lhs.span.clone(), "the left-hand side may only use plain constants and wildcards such as `c0`"),
                &desc,
            ));
        }
        if lhs.elem != rhs.elem {
            return Err(with_inst(
                Diag::new(
                    &src,
                    d.rhs.span.clone(),
                    format!(
                        "the right-hand side is {} but the left-hand side is {}",
                        rhs.elem, lhs.elem
                    ),
                ),
                &desc,
            ));
        }
        let lcount = lhs.var_counts(var_names.len());
        let rcount = rhs.var_counts(var_names.len());
        for (i, v) in var_names.iter().enumerate() {
            if rcount[i] > 0 && lcount[i] == 0 {
                return Err(Diag::new(
                    &src,
                    d.rhs.span.clone(),
                    format!("`{v}` is used on the right-hand side but not bound on the left"),
                ));
            }
            if lcount[i] == 0 {
                return Err(Diag::new(
                    &src,
                    d.params[i].2.clone(),
                    format!("rule variable `{v}` is never used on the left-hand side"),
                ));
            }
            if kind == RuleKind::Lift && rcount[i] > lcount[i] {
                return Err(Diag::new(
                    &src,
                    d.rhs.span.clone(),
                    format!(
                        "`{v}` occurs more often on the right than on the left; a lifting rule may not duplicate work"
                    ),
                ));
            }
        }
        let lwild = lhs.wildcards();
        let scope_has = |n: &str| scope.attr(n).is_some();
        let wild_ok = |w: u32| lwild.contains(&w);
        let var_ok = |n: &str| var_names.iter().any(|v| v == n);
        let check_ast = |a: &Ast, predicate: bool| -> Result<(), Diag> {
            cexpr::validate(a, &scope_has, &wild_ok, &var_ok, predicate)
                .map_err(|(s, m)| Diag::new(&src, s, m))
        };
        for (a, _) in &rconsts {
            check_ast(a, false)?;
        }
        if let Some(p) = &d.pred {
            check_ast(p, true)?;
        }
        if kind == RuleKind::Lift {
            let (lc, rc) = (cost::pattern_cost(&lhs), cost::pattern_cost(&rhs));
            if rc >= lc {
                return Err(with_inst(
                    Diag::new(&src, d.span.clone(), format!(
                        "lifting rule `{}` does not lower the cost: left-hand side {lc}, right-hand side {rc}",
                        d.name
                    ))
                    .note("every lifting rule must be strictly cheaper (bits, then rank) so that lifting terminates"),
                    &desc,
                ));
            }
        }
        insts.push(Inst {
            scope,
            vars: vars.iter().map(|(_, t)| t.elem).collect(),
            lhs,
            rhs,
        });
    }
    if insts.is_empty() {
        return Err(Diag::new(
            &src,
            d.span.clone(),
            format!(
                "rule `{}` has no instantiation in which every cast on its left-hand side converts something",
                d.name
            ),
        ));
    }
    Ok(Rule {
        decl: d,
        vars: var_names,
        insts,
    })
}

/// The type of a rule variable declared as `T`, `Tx16`, `u8` or `u8x32`.
fn var_type(t: &str, m: &HashMap<String, Elem>) -> Option<Type> {
    if let Some(e) = m.get(t) {
        return Some(Type::scalar(*e));
    }
    if let Some(v) = parse::type_var_of(t)
        && let Some(e) = m.get(v)
    {
        let lanes: u32 = t[v.len() + 1..].parse().ok()?;
        return Some(Type::vec(*e, lanes));
    }
    Elem::parse(t, false)
        .map(Type::scalar)
        .or_else(|| Type::parse(t, false))
}

fn dummy() -> Pat {
    Pat {
        kind: PatKind::Lit(0),
        elem: Elem::U8,
        lanes: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Op, mk};

    /// A node is offered the rules written at any lane count and those written at its own,
    /// in file order, and never those written at another lane count.
    #[test]
    fn candidates_are_the_rules_at_any_lanes_and_at_the_nodes_own() {
        let text = "\
rule at_sixteen(a: u8x16, b: u8x16):
    a + b => b + a
rule at_any(a: T, b: T) where T unsigned, T.bits <= 8:
    a + b => b + a
rule at_eight(a: u8x8, b: u8x8):
    a + b => b + a
";
        let src = Source::new("test.rules", text);
        let rules = RuleSet::load(&src, RuleKind::Lower).unwrap_or_else(|d| panic!("{d}"));
        let offered = |lanes: u32| {
            let t = Type::vec(Elem::U8, lanes);
            let e = mk(Op::Add, vec![Expr::var("a", t), Expr::var("b", t)]);
            let mut names: Vec<&str> = rules
                .candidates(&e)
                .iter()
                .map(|&(ri, _)| rules.rules[ri].decl.name.as_str())
                .collect();
            names.dedup();
            names
        };
        assert_eq!(offered(16), ["at_sixteen", "at_any"]);
        assert_eq!(offered(8), ["at_any", "at_eight"]);
        assert_eq!(offered(32), ["at_any"]);
    }
}
