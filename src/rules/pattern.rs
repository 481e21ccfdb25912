//! Patterns: one instantiation of a rule side, matched against and built into expressions.
//!
//! A rule side is elaborated at one lane with concrete element types; the pattern keeps the
//! operators and element types and drops the lane count, so it matches vectors of any width
//! (lane-preserving operators only) and builds its right-hand side at the width it matched.

use std::sync::Arc;

use crate::interp::lane;
use crate::ir::{Expr, Op};
use crate::syntax::parse::{Ast, AstKind};
use crate::types::{Elem, Type};

/// What a pattern node is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PatKind {
    /// Pattern variable number `i` (matches any expression of the node's element type).
    Var(usize),
    /// Constant wildcard `c<N>`: matches a constant (or a broadcast of one).
    Wild(u32),
    /// A specific constant value.
    Lit(i128),
    /// Right-hand sides only: a constant computed from wildcards when the rule fires.
    Computed(Arc<AstKey>),
    /// An operator applied to sub-patterns.
    Op(Op, Vec<Pat>),
}

/// A pattern node: its kind and element type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Pat {
    /// What it is.
    pub kind: PatKind,
    /// Element type of the value it stands for.
    pub elem: Elem,
    /// Exact lane count, for patterns at a fixed register width (target rules); `None`
    /// matches any width (lifting rules are lane-polymorphic).
    pub lanes: Option<u32>,
}

/// A constant expression with a printable identity (so patterns can be compared).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AstKey {
    /// The expression.
    pub ast: Ast,
    /// Its source text, which identifies it.
    pub text: String,
}

impl PartialEq for AstKey {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}
impl Eq for AstKey {}
impl std::hash::Hash for AstKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.text.hash(h)
    }
}

/// Values bound while matching.
#[derive(Clone, Debug, Default)]
pub struct Binds {
    /// Pattern variables, by index.
    pub vars: Vec<Option<Expr>>,
    /// Constant wildcards: number and exact value.
    pub wilds: Vec<(u32, i128)>,
}

impl Binds {
    /// Empty bindings for `n` variables.
    pub fn new(n: usize) -> Binds {
        Binds {
            vars: vec![None; n],
            wilds: Vec::new(),
        }
    }

    /// The value of wildcard `c<id>`.
    pub fn wild(&self, id: u32) -> Option<i128> {
        self.wilds.iter().find(|(i, _)| *i == id).map(|(_, v)| *v)
    }
}

/// The exact value of a constant (or broadcast constant) with `elem`'s width. Either
/// signedness matches when the value (read by the constant's own type) is representable in
/// `elem`: where the type system lets a constant's signedness vary (shift amounts), only its
/// value matters.
pub(crate) fn const_value(e: &Expr, elem: Elem) -> Option<i128> {
    let actual = e.ty().elem;
    if actual.bits() != elem.bits() || elem == Elem::Bool || actual == Elem::Bool {
        return None;
    }
    let bits = e.as_const_bits()?;
    let v = lane::to_i128(bits, actual);
    // The rule was checked for values of its own type; another signedness only matches when
    // the value is one of those.
    let fits = v >= elem.min_value() && elem.max_value().is_none_or(|m| v <= m);
    fits.then_some(v)
}

impl Pat {
    /// Matches `e` against this pattern, extending `b`. On failure `b` may hold partial
    /// bindings; callers that backtrack take a copy first.
    pub fn matches(&self, e: &Expr, b: &mut Binds) -> bool {
        self.matches_in(e, b, true)
    }

    /// Whether `e` has this pattern's shape: operators, types and literals, ignoring that a
    /// variable or wildcard used twice must bind equal values. Allocates nothing, so
    /// selection can rule out the many candidate rules that do not match (most of those
    /// tried) before binding anything; whatever matches has the shape.
    pub fn has_shape(&self, e: &Expr) -> bool {
        self.has_shape_in(e, true)
    }

    /// Whether `e`'s type is this pattern's: its element type (constants match by value,
    /// `const_value`) and its lanes where the pattern fixes them.
    fn type_fits(&self, e: &Expr) -> bool {
        let constant = matches!(self.kind, PatKind::Wild(_) | PatKind::Lit(_));
        (constant || e.ty().elem == self.elem) && self.lanes.is_none_or(|l| l == e.ty().lanes)
    }

    fn has_shape_in(&self, e: &Expr, splat_parts: bool) -> bool {
        if !self.type_fits(e) {
            return false;
        }
        match &self.kind {
            PatKind::Var(_) => true,
            PatKind::Wild(_) => const_value(e, self.elem).is_some(),
            PatKind::Lit(v) => const_value(e, self.elem) == Some(*v),
            PatKind::Computed(_) => false,
            PatKind::Op(op, args) => {
                if splat_parts && let Some(whole) = slice_of_splat(op, args, e) {
                    return args[0].has_shape(&whole);
                }
                if let Some(inner) = cast_of_splat(op, e) {
                    return args[0].has_shape_in(&inner, splat_parts);
                }
                let splat_parts = !matches!(op, Op::Interleave | Op::Concat | Op::Shuffle(_));
                if e.op() != op || e.args().len() != args.len() {
                    return false;
                }
                let in_order = args
                    .iter()
                    .zip(e.args())
                    .all(|(p, x)| p.has_shape_in(x, splat_parts));
                in_order
                    || (op.is_commutative()
                        && args.len() == 2
                        && args[0].has_shape_in(e.arg(1), splat_parts)
                        && args[1].has_shape_in(e.arg(0), splat_parts))
            }
        }
    }

    /// [`Pat::matches`]; `splat_parts` says whether a high part of a wider register may
    /// match a splat (`slice_of_splat`): not under a data-movement operator, whose
    /// generic form clang writes better for splats (an interleave of two byte splats is
    /// one word splat).
    fn matches_in(&self, e: &Expr, b: &mut Binds, splat_parts: bool) -> bool {
        if !self.type_fits(e) {
            return false;
        }
        match &self.kind {
            PatKind::Var(i) => match &b.vars[*i] {
                Some(bound) => bound == e,
                None => {
                    b.vars[*i] = Some(e.clone());
                    true
                }
            },
            PatKind::Wild(id) => {
                let Some(v) = const_value(e, self.elem) else {
                    return false;
                };
                match b.wild(*id) {
                    Some(prev) => prev == v,
                    None => {
                        b.wilds.push((*id, v));
                        true
                    }
                }
            }
            PatKind::Lit(v) => const_value(e, self.elem) == Some(*v),
            PatKind::Computed(_) => false,
            PatKind::Op(op, args) => {
                if splat_parts && let Some(whole) = slice_of_splat(op, args, e) {
                    return args[0].matches(&whole, b);
                }
                if let Some(inner) = cast_of_splat(op, e) {
                    return args[0].matches_in(&inner, b, splat_parts);
                }
                let splat_parts = !matches!(op, Op::Interleave | Op::Concat | Op::Shuffle(_));
                if e.op() != op || e.args().len() != args.len() {
                    return false;
                }
                if op.is_commutative() && args.len() == 2 {
                    let saved = b.clone();
                    if args[0].matches_in(e.arg(0), b, splat_parts)
                        && args[1].matches_in(e.arg(1), b, splat_parts)
                    {
                        return true;
                    }
                    *b = saved;
                    return args[0].matches_in(e.arg(1), b, splat_parts)
                        && args[1].matches_in(e.arg(0), b, splat_parts);
                }
                args.iter()
                    .zip(e.args())
                    .all(|(p, x)| p.matches_in(x, b, splat_parts))
            }
        }
    }

    /// Builds the expression this pattern describes at `lanes` lanes. `computed` evaluates a
    /// computed constant; `None` from it (or a constant that does not fit its type) means the
    /// rule does not apply.
    pub fn build(
        &self,
        lanes: u32,
        b: &Binds,
        computed: &mut dyn FnMut(&Ast) -> Option<i128>,
    ) -> Option<Expr> {
        let lanes = self.lanes.unwrap_or(lanes);
        let ty = Type::vec(self.elem, lanes);
        match &self.kind {
            PatKind::Var(i) => b.vars[*i].clone(),
            PatKind::Wild(id) => Expr::splat(ty, b.wild(*id)?).ok(),
            PatKind::Lit(v) => Expr::splat(ty, *v).ok(),
            PatKind::Computed(k) => Expr::splat(ty, computed(&k.ast)?).ok(),
            PatKind::Op(op, args) => {
                let built = args
                    .iter()
                    .map(|a| a.build(lanes, b, computed))
                    .collect::<Option<Vec<_>>>()?;
                let explicit = needs_type(op).then_some(ty);
                Expr::build(op.clone(), explicit, built).ok()
            }
        }
    }

    /// Every operator node, parents before children.
    pub fn ops(&self) -> Vec<&Pat> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            if let PatKind::Op(_, args) = &p.kind {
                out.push(p);
                stack.extend(args.iter());
            }
        }
        out
    }

    /// How many times each variable occurs, indexed by variable number.
    pub fn var_counts(&self, n: usize) -> Vec<usize> {
        let mut counts = vec![0; n];
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match &p.kind {
                PatKind::Var(i) => counts[*i] += 1,
                PatKind::Op(_, args) => stack.extend(args.iter()),
                _ => {}
            }
        }
        counts
    }

    /// Wildcards used, sorted and deduplicated.
    pub fn wildcards(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match &p.kind {
                PatKind::Wild(i) => out.push(*i),
                PatKind::Op(_, args) => stack.extend(args.iter()),
                _ => {}
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// A canonical text with variables numbered by first occurrence, so two left-hand
    /// sides that differ only in variable names print the same.
    pub fn canonical(&self) -> String {
        let mut order: Vec<usize> = Vec::new();
        let mut out = String::new();
        self.canon(&mut order, &mut out);
        out
    }

    fn canon(&self, order: &mut Vec<usize>, out: &mut String) {
        if let Some(l) = self.lanes {
            out.push_str(&format!("#{l}"));
        }
        match &self.kind {
            PatKind::Var(i) => {
                let k = match order.iter().position(|x| x == i) {
                    Some(k) => k,
                    None => {
                        order.push(*i);
                        order.len() - 1
                    }
                };
                out.push_str(&format!("v{k}:{}", self.elem));
            }
            PatKind::Wild(i) => out.push_str(&format!("c{i}:{}", self.elem)),
            PatKind::Lit(v) => out.push_str(&format!("{v}:{}", self.elem)),
            PatKind::Computed(k) => out.push_str(&format!("{{{}}}:{}", k.text, self.elem)),
            PatKind::Op(op, args) => {
                out.push_str(&format!("({op}:{}", self.elem));
                if let Op::Slice { start, stride } = op {
                    out.push_str(&format!("@{start},{stride}"));
                }
                for a in args {
                    out.push(' ');
                    a.canon(order, out);
                }
                out.push(')');
            }
        }
    }
}

/// A slice of a splat is the splat at the slice's width, so a pattern that takes a high
/// part of a wider register (Arm's `smlal2` reads the high half of its operands) matches
/// a splat of that part's width: the operand is the splat at the wider width the pattern
/// gives (clang materializes it once, outside the loop). `None` unless `e` is a splat of
/// a scalar and the pattern a dense slice past lane 0 of a fixed-width operand.
fn slice_of_splat(op: &Op, args: &[Pat], e: &Expr) -> Option<Expr> {
    // Only parts above the first: a low part already matches as the register itself.
    if !matches!(op, Op::Slice { start, stride: 1 } if *start > 0)
        || !matches!(e.op(), Op::Broadcast)
    {
        return None;
    }
    let scalar = e.arg(0);
    let lanes = args.first()?.lanes?;
    (scalar.ty().is_scalar() && lanes > e.ty().lanes).then(|| scalar.broadcast(lanes))
}

/// A cast of a splat is the splat of the cast scalar, so a pattern `W(x)` matches
/// `broadcast(W(s))` with `x` the splat of `s` at the same lanes: elaboration casts a scalar
/// before broadcasting it (`i16(a) - i16(b)` with a scalar `b` is
/// `i16(a) - broadcast(i16(b))`), and without this that operand would never read as a
/// widening (`widening_sub(a, b)`, Arm's `ssubl` of a register and a `dup`). `None` unless
/// the pattern is a cast and `e` a splat of a cast scalar.
fn cast_of_splat(op: &Op, e: &Expr) -> Option<Expr> {
    if !matches!(op, Op::Cast) || !matches!(e.op(), Op::Broadcast) {
        return None;
    }
    let scalar = e.arg(0);
    (scalar.ty().is_scalar() && matches!(scalar.op(), Op::Cast))
        .then(|| scalar.arg(0).broadcast(e.ty().lanes))
}

/// True for operators whose result type must be given when building.
fn needs_type(op: &Op) -> bool {
    // Reuse the IR's own list by asking about a representative node shape.
    matches!(
        op,
        Op::Cast
            | Op::Reinterpret
            | Op::SaturatingCast
            | Op::Broadcast
            | Op::Ramp
            | Op::Slice { .. }
            | Op::ReduceAdd
            | Op::ReduceMin
            | Op::ReduceMax
    )
}

/// Converts one elaborated rule side (at one lane) into a pattern.
/// `var_index` maps pattern-variable names; `consts` are the elaborator's constant
/// expressions (`$k` variables).
pub fn from_expr(
    e: &Expr,
    var_index: &dyn Fn(&str) -> Option<usize>,
    consts: &[(Ast, Elem)],
    text_of: &dyn Fn(&Ast) -> String,
    keep_lanes: bool,
) -> Result<Pat, String> {
    let elem = e.ty().elem;
    let lanes = keep_lanes.then_some(e.ty().lanes);
    // A broadcast constant is a constant pattern at the broadcast's width.
    if matches!(e.op(), Op::Broadcast) {
        let inner = e.arg(0);
        let is_const_slot = matches!(inner.op(), Op::Const(_))
            || matches!(inner.op(), Op::Var(n) if n.starts_with('$'));
        if inner.ty().lanes == 1 && is_const_slot {
            let mut p = from_expr(inner, var_index, consts, text_of, keep_lanes)?;
            p.lanes = lanes;
            return Ok(p);
        }
    }
    let kind = match e.op() {
        Op::Var(name) => {
            if let Some(k) = name.strip_prefix('$') {
                let k: usize = k
                    .parse()
                    .map_err(|_| format!("bad constant reference `{name}`"))?;
                let (ast, _) = &consts[k];
                match &ast.kind {
                    AstKind::Name(n) if crate::syntax::elab::is_wildcard(n) => {
                        PatKind::Wild(n[1..].parse().map_err(|_| format!("bad wildcard `{n}`"))?)
                    }
                    _ => PatKind::Computed(Arc::new(AstKey {
                        ast: ast.clone(),
                        text: text_of(ast),
                    })),
                }
            } else {
                PatKind::Var(
                    var_index(name).ok_or_else(|| format!("`{name}` is not a rule variable"))?,
                )
            }
        }
        Op::Const(bits) => PatKind::Lit(lane::to_i128(*bits, elem)),
        Op::Load(..) => return Err("loads cannot appear in rules".into()),
        Op::Let(_) => return Err("`let` cannot appear in rules".into()),
        op => {
            let args = e
                .args()
                .iter()
                .map(|a| from_expr(a, var_index, consts, text_of, keep_lanes))
                .collect::<Result<Vec<_>, _>>()?;
            PatKind::Op(op.clone(), args)
        }
    };
    Ok(Pat { kind, elem, lanes })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `has_shape` is the cheap filter selection runs before `matches`: it must hold
    /// wherever a match does, and it must rule out candidates (else it filters nothing).
    /// Checked over the left-hand side of every builtin lifting rule, built as an
    /// expression, against every rule indexed under its root.
    #[test]
    fn every_match_has_the_shape_and_the_shape_rules_out_candidates() {
        let rules = crate::lift::builtin_rules().unwrap_or_else(|d| panic!("{d}"));
        let mut exprs = Vec::new();
        for rule in &rules.rules {
            for inst in &rule.insts {
                let mut b = Binds::new(inst.vars.len());
                for (i, elem) in inst.vars.iter().enumerate() {
                    b.vars[i] = Some(Expr::var(format!("v{i}").as_str(), Type::vec(*elem, 8)));
                }
                b.wilds = inst.lhs.wildcards().into_iter().map(|w| (w, 1)).collect();
                if let Some(e) = inst.lhs.build(8, &b, &mut |_| Some(1)) {
                    exprs.push(e);
                }
            }
        }
        let (mut matched, mut ruled_out) = (0, 0);
        for e in &exprs {
            for &(ri, ii) in rules.candidates(e) {
                let inst = &rules.rules[ri].insts[ii];
                let m = inst.lhs.matches(e, &mut Binds::new(inst.vars.len()));
                let shaped = inst.lhs.has_shape(e);
                assert!(
                    shaped || !m,
                    "{} matches {e} without its shape",
                    rules.rules[ri].decl.name
                );
                matched += usize::from(m);
                ruled_out += usize::from(!shaped);
            }
        }
        assert!(
            matched >= exprs.len() / 2,
            "{matched} matches of {}",
            exprs.len()
        );
        assert!(ruled_out > 0, "the shape ruled out no candidate");
        println!(
            "{} expressions, {matched} matches, {ruled_out} ruled out",
            exprs.len()
        );
    }
}
