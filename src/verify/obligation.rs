//! Proof obligations of rules: "for all inputs and constants satisfying the predicate, both
//! sides agree in every lane", negated for the solver.
//!
//! Rule variables are per-lane bit-vectors. Constant wildcards and computed constants are
//! exact integers, held in 256-bit vectors where no single step of the rule's constant
//! arithmetic can overflow; every step that the evaluator (`rules::cexpr`) would reject (an
//! `i128` overflow, a division by zero, `log2` of a non-positive value) makes the predicate
//! false here too, so the proof covers exactly the cases in which the engine fires.
//! `upper_bound(x)` and `lower_bound(x)` become fresh values bounding every lane of `x`.

use std::collections::BTreeMap;

use easy_smt::{Context, SExpr};

use super::smt::{Encoder, app, extend, extract, konst, konst_i, lt, prepare, sort};
use crate::ir::Expr;
use crate::rules::check::build_side;
use crate::rules::{Inst, Rule};
use crate::syntax::elab::is_wildcard;
use crate::syntax::parse::{Ast, AstKind, Binary, Unary};
use crate::types::Elem;

/// Width of exact constant arithmetic.
const W: u32 = 256;
/// Width of declared bounds: enough for every 64-bit value.
const CW: u32 = 128;

/// The values a constant wildcard can take: those of every type it is used at. It is
/// declared at the narrowest of those widths and read as signed when the range includes
/// negative values; each use is an extension of it, so both sides of a rule see the same
/// term wherever they use the same constant.
#[derive(Clone, Debug)]
pub struct WildDomain {
    /// Declared width.
    pub width: u32,
    /// Read as a signed value.
    pub signed: bool,
    /// Smallest value.
    pub lo: i128,
    /// Largest value.
    pub hi: i128,
}

impl WildDomain {
    fn of(elems: &[Elem]) -> WildDomain {
        let lo = elems.iter().map(|e| e.min_value()).max().unwrap_or(0);
        let hi = elems
            .iter()
            .map(|e| e.max_value().unwrap_or(i128::MAX))
            .min()
            .unwrap_or(0);
        let signed = lo < 0;
        // The fewest bits that hold every value of the range.
        let width = if signed {
            let need = |v: i128| {
                if v < 0 {
                    129 - (!v).leading_zeros()
                } else {
                    129 - v.leading_zeros()
                }
            };
            need(lo).max(need(hi))
        } else {
            (128 - hi.leading_zeros()).max(1)
        };
        WildDomain {
            width,
            signed,
            lo,
            hi,
        }
    }

    /// The exact value of a model's bit pattern.
    pub fn value(&self, bits: u128) -> i128 {
        let e = Elem::from_bits(self.width, self.signed).unwrap_or(Elem::I128);
        crate::interp::lane::to_i128(bits & e.mask(), e)
    }
}

/// Something a counterexample gives a value to.
#[derive(Clone, Debug)]
pub enum Slot {
    /// Lane `lane` of rule variable `var`.
    Var { var: usize, lane: usize, elem: Elem },
    /// Constant wildcard `c<id>` and its domain.
    Wild(u32, WildDomain),
    /// The assumed upper or lower bound of a rule variable.
    Bound { var: String, upper: bool },
    /// Lane `lane` of an abstracted product.
    Product { index: usize, lane: usize },
}

/// A proof obligation ready for a solver.
pub struct Obligation {
    /// Declared constants: name, width, and what they stand for.
    pub consts: Vec<(String, u32, Slot)>,
    /// Everything assumed: wildcard domains, defined and fitting computed constants, the
    /// predicate, bounds.
    pub assumptions: SExpr,
    /// The assertion whose unsatisfiability proves the rule: assumptions and some lane
    /// differing.
    pub assertion: SExpr,
    /// Left-hand side over the test inputs (`v<i>`, `c<id>:<elem>`, `k<j>`).
    pub lhs: Expr,
    /// Right-hand side over the same inputs.
    pub rhs: Expr,
    /// Computed constants of the right-hand side.
    pub computed: Vec<(Ast, Elem)>,
    /// Lanes of the check (of lane-generic parts).
    pub lanes: u32,
    /// Lanes of each rule variable.
    pub var_lanes: Vec<u32>,
    /// Output lanes whose two terms differ syntactically; zero proves the rule outright.
    pub open_lanes: usize,
    /// The two sides' terms of each such lane.
    pub pairs: Vec<(SExpr, SExpr)>,
    /// The assumptions, one by one (their conjunction is `assumptions`).
    pub conjuncts: Vec<SExpr>,
    /// How many products were abstracted to values within their interval.
    pub abstracted: usize,
}

struct CEnc<'a> {
    ctx: &'a Context,
    inst: &'a Inst,
    rule: &'a Rule,
    /// Wildcard id to its declared constant and domain.
    wilds: &'a BTreeMap<u32, (SExpr, WildDomain)>,
    /// Bounds of rule variables, created on first use.
    bounds: BTreeMap<String, (SExpr, SExpr)>,
}

impl CEnc<'_> {
    fn k(&self, v: i128) -> SExpr {
        konst_i(self.ctx, W, v)
    }
    fn t(&self) -> SExpr {
        self.ctx.true_()
    }
    /// True when an exact value is within `i128` (the evaluator's checked arithmetic).
    fn fits_i128(&self, v: SExpr) -> SExpr {
        let ctx = self.ctx;
        ctx.and(
            ctx.not(lt(ctx, v, self.k(i128::MIN), true)),
            ctx.not(lt(ctx, self.k(i128::MAX), v, true)),
        )
    }
    fn bool_val(&self, c: SExpr) -> SExpr {
        self.ctx.ite(c, self.k(1), self.k(0))
    }
    fn nonzero(&self, v: SExpr) -> SExpr {
        self.ctx.not(self.ctx.eq(v, self.k(0)))
    }

    /// (value, defined) of a constant expression.
    fn enc(&mut self, a: &Ast) -> Result<(SExpr, SExpr), String> {
        let ctx = self.ctx;
        Ok(match &a.kind {
            AstKind::Int(v) => (self.k(*v), self.t()),
            AstKind::Bool(b) => (self.k(*b as i128), self.t()),
            AstKind::Name(n) => {
                if is_wildcard(n) {
                    let id: u32 = n[1..].parse().map_err(|_| format!("bad wildcard {n}"))?;
                    let (c, d) = self
                        .wilds
                        .get(&id)
                        .ok_or_else(|| format!("{n} is not bound"))?;
                    (extend(ctx, *c, d.width, W, d.signed), self.t())
                } else {
                    let v = self
                        .inst
                        .scope
                        .attr(n)
                        .ok_or_else(|| format!("`{n}` is not a constant"))?;
                    (self.k(v), self.t())
                }
            }
            AstKind::Unary(op, e) => {
                let (v, d) = self.enc(e)?;
                match op {
                    Unary::Neg => {
                        let r = app(ctx, "bvneg", vec![v]);
                        (r, ctx.and(d, self.fits_i128(r)))
                    }
                    Unary::Not => (self.bool_val(ctx.eq(v, self.k(0))), d),
                    Unary::BitNot => (app(ctx, "bvnot", vec![v]), d),
                }
            }
            AstKind::Binary(op, x, y) => {
                if is_cmp(*op) {
                    if let AstKind::Binary(inner, p, q) = &x.kind
                        && is_cmp(*inner)
                    {
                        // a < b < c: the first comparison, then b against c.
                        let (first, d1) = self.enc_cmp_chain(*inner, p, q)?;
                        let (qv, dq) = self.enc(q)?;
                        let (yv, dy) = self.enc(y)?;
                        let second = cmp(ctx, *op, qv, yv);
                        let value = ctx.and(first, second);
                        let def = ctx.and(d1, ctx.or(ctx.not(first), ctx.and(dq, dy)));
                        return Ok((self.bool_val(value), def));
                    }
                    let (xv, dx) = self.enc(x)?;
                    let (yv, dy) = self.enc(y)?;
                    return Ok((self.bool_val(cmp(ctx, *op, xv, yv)), ctx.and(dx, dy)));
                }
                match op {
                    Binary::LogAnd | Binary::LogOr => {
                        let (xv, dx) = self.enc(x)?;
                        let (yv, dy) = self.enc(y)?;
                        let xt = self.nonzero(xv);
                        let yt = self.nonzero(yv);
                        if *op == Binary::LogAnd {
                            // The right side only matters (and must be defined) when the left holds.
                            (
                                self.bool_val(ctx.and(xt, yt)),
                                ctx.and(dx, ctx.or(ctx.not(xt), dy)),
                            )
                        } else {
                            (self.bool_val(ctx.or(xt, yt)), ctx.and(dx, ctx.or(xt, dy)))
                        }
                    }
                    _ => {
                        let (xv, dx) = self.enc(x)?;
                        let (yv, dy) = self.enc(y)?;
                        let d = ctx.and(dx, dy);
                        let zero = self.k(0);
                        match op {
                            Binary::Add | Binary::Sub | Binary::Mul => {
                                let name = match op {
                                    Binary::Add => "bvadd",
                                    Binary::Sub => "bvsub",
                                    _ => "bvmul",
                                };
                                let r = app(ctx, name, vec![xv, yv]);
                                (r, ctx.and(d, self.fits_i128(r)))
                            }
                            Binary::Div | Binary::Mod if matches!(y.kind, AstKind::Int(k) if k > 0 && k & (k - 1) == 0) =>
                            {
                                // By a literal power of two: a shift or a mask, exact and cheap.
                                let AstKind::Int(k) = y.kind else {
                                    unreachable!()
                                };
                                let sh = self.k(k.trailing_zeros() as i128);
                                let value = if *op == Binary::Div {
                                    app(ctx, "bvashr", vec![xv, sh])
                                } else {
                                    app(ctx, "bvand", vec![xv, self.k(k - 1)])
                                };
                                (value, d)
                            }
                            Binary::Div | Binary::Mod => {
                                let q = app(ctx, "bvsdiv", vec![xv, yv]);
                                let r = app(ctx, "bvsrem", vec![xv, yv]);
                                let r_neg = lt(ctx, r, zero, true);
                                let y_pos = lt(ctx, zero, yv, true);
                                let one = self.k(1);
                                let value = if *op == Binary::Div {
                                    let adj = ctx.ite(
                                        y_pos,
                                        app(ctx, "bvsub", vec![q, one]),
                                        app(ctx, "bvadd", vec![q, one]),
                                    );
                                    ctx.ite(r_neg, adj, q)
                                } else {
                                    let abs_y = ctx.ite(
                                        lt(ctx, yv, zero, true),
                                        app(ctx, "bvneg", vec![yv]),
                                        yv,
                                    );
                                    ctx.ite(r_neg, app(ctx, "bvadd", vec![r, abs_y]), r)
                                };
                                let def =
                                    ctx.and(d, ctx.and(self.nonzero(yv), self.fits_i128(value)));
                                (value, def)
                            }
                            Binary::Shl => {
                                let in_range = ctx.and(
                                    ctx.not(lt(ctx, yv, zero, true)),
                                    ctx.not(lt(ctx, self.k(126), yv, true)),
                                );
                                let r = app(ctx, "bvshl", vec![xv, yv]);
                                (r, ctx.and(d, ctx.and(in_range, self.fits_i128(r))))
                            }
                            Binary::Shr => {
                                let r = app(ctx, "bvashr", vec![xv, yv]);
                                (r, ctx.and(d, ctx.not(lt(ctx, yv, zero, true))))
                            }
                            Binary::BitAnd => (app(ctx, "bvand", vec![xv, yv]), d),
                            Binary::BitOr => (app(ctx, "bvor", vec![xv, yv]), d),
                            Binary::BitXor => (app(ctx, "bvxor", vec![xv, yv]), d),
                            _ => {
                                return Err(format!(
                                    "`{}` is not allowed in a constant expression",
                                    op.symbol()
                                ));
                            }
                        }
                    }
                }
            }
            AstKind::Call { name, args, .. } => match (name.as_str(), args.as_slice()) {
                ("log2", [x]) => {
                    let (v, d) = self.enc(x)?;
                    // floor(log2 v) for 0 < v < 2^127: the highest set bit.
                    let mut r = self.k(0);
                    for b in 0..127u32 {
                        let set = ctx.eq(extract(ctx, b, b, v), konst(ctx, 1, 1));
                        r = ctx.ite(set, self.k(b as i128), r);
                    }
                    (r, ctx.and(d, lt(ctx, self.k(0), v, true)))
                }
                ("is_pow2", [x]) => {
                    let (v, d) = self.enc(x)?;
                    let pos = lt(ctx, self.k(0), v, true);
                    let single = ctx.eq(
                        app(ctx, "bvand", vec![v, app(ctx, "bvsub", vec![v, self.k(1)])]),
                        self.k(0),
                    );
                    (self.bool_val(ctx.and(pos, single)), d)
                }
                ("abs", [x]) => {
                    let (v, d) = self.enc(x)?;
                    let r = ctx.ite(lt(ctx, v, self.k(0), true), app(ctx, "bvneg", vec![v]), v);
                    (r, ctx.and(d, self.fits_i128(r)))
                }
                ("min" | "max", [x, y]) => {
                    let (xv, dx) = self.enc(x)?;
                    let (yv, dy) = self.enc(y)?;
                    let x_less = lt(ctx, xv, yv, true);
                    let r = if name == "min" {
                        ctx.ite(x_less, xv, yv)
                    } else {
                        ctx.ite(x_less, yv, xv)
                    };
                    (r, ctx.and(dx, dy))
                }
                (
                    "upper_bound" | "lower_bound",
                    [
                        Ast {
                            kind: AstKind::Name(v),
                            ..
                        },
                    ],
                ) => {
                    let (lo, hi) = self.bound_of(v)?;
                    let c = if name == "upper_bound" { hi } else { lo };
                    (extend(ctx, c, CW, W, true), self.t())
                }
                _ => return Err(format!("cannot encode `{name}`")),
            },
            _ => return Err("not a constant expression".into()),
        })
    }

    fn enc_cmp_chain(&mut self, op: Binary, a: &Ast, b: &Ast) -> Result<(SExpr, SExpr), String> {
        let ctx = self.ctx;
        if let AstKind::Binary(inner, x, y) = &a.kind
            && is_cmp(*inner)
        {
            let (first, d1) = self.enc_cmp_chain(*inner, x, y)?;
            let (yv, dy) = self.enc(y)?;
            let (bv, db) = self.enc(b)?;
            let value = ctx.and(first, cmp(ctx, op, yv, bv));
            return Ok((value, ctx.and(d1, ctx.or(ctx.not(first), ctx.and(dy, db)))));
        }
        let (av, da) = self.enc(a)?;
        let (bv, db) = self.enc(b)?;
        Ok((cmp(ctx, op, av, bv), ctx.and(da, db)))
    }

    fn bound_of(&mut self, var: &str) -> Result<(SExpr, SExpr), String> {
        if let Some(b) = self.bounds.get(var) {
            return Ok(*b);
        }
        if !self.rule.vars.iter().any(|v| v == var) {
            return Err(format!("`{var}` is not a rule variable"));
        }
        let lo = self.ctx.atom(format!("lb_{var}"));
        let hi = self.ctx.atom(format!("ub_{var}"));
        self.bounds.insert(var.to_string(), (lo, hi));
        Ok((lo, hi))
    }
}

fn is_cmp(b: Binary) -> bool {
    matches!(
        b,
        Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge | Binary::Eq | Binary::Ne
    )
}

fn cmp(ctx: &Context, op: Binary, x: SExpr, y: SExpr) -> SExpr {
    match op {
        Binary::Lt => lt(ctx, x, y, true),
        Binary::Le => ctx.not(lt(ctx, y, x, true)),
        Binary::Gt => lt(ctx, y, x, true),
        Binary::Ge => ctx.not(lt(ctx, x, y, true)),
        Binary::Eq => ctx.eq(x, y),
        _ => ctx.not(ctx.eq(x, y)),
    }
}

/// `v` (exact, `W` bits) is a value of `elem`.
fn fits(ctx: &Context, v: SExpr, elem: Elem) -> SExpr {
    let lo = konst_i(ctx, W, elem.min_value());
    let hi = konst_i(ctx, W, elem.max_value().unwrap_or(i128::MAX));
    ctx.and(ctx.not(lt(ctx, v, lo, true)), ctx.not(lt(ctx, hi, v, true)))
}

/// Builds the obligation of one instantiation at `lanes` lanes in `ctx`. With `fixed`,
/// the wildcards are pinned to those values (one case of an enumerated domain).
///
/// With `abstract_products`, every product of non-constant operands that both sides share is
/// replaced by a fresh value constrained to the product's interval: a proof of that
/// over-approximation proves the rule, and spares the solver the multiplier circuits when the
/// rule only depends on the product's range (a counterexample to it proves nothing).
pub fn build(
    ctx: &Context,
    rule: &Rule,
    inst: &Inst,
    lanes: u32,
    fixed: Option<&BTreeMap<u32, i128>>,
    abstract_products: bool,
) -> Result<Obligation, String> {
    let mut slots = crate::rules::check::Slots::default();
    let lhs = build_side(&inst.lhs, lanes, &mut slots)?;
    let rhs = build_side(&inst.rhs, lanes, &mut slots)?;
    let computed = slots.computed.clone();
    // Inputs take the lane count of their use: a lowering rule's fixed vector types, or
    // `lanes` for lane-generic rules.
    let mut free = crate::ir::visit::free_vars(&lhs);
    free.extend(crate::ir::visit::free_vars(&rhs));
    let lanes_of = |name: &str| free.get(name).map_or(lanes, |t| t.lanes);
    let var_lanes: Vec<u32> = (0..inst.vars.len())
        .map(|i| lanes_of(&format!("v{i}")))
        .collect();

    let mut consts: Vec<(String, u32, Slot)> = Vec::new();
    for (i, e) in inst.vars.iter().enumerate() {
        for l in 0..var_lanes[i] as usize {
            consts.push((
                format!("v{i}_{l}"),
                e.bits(),
                Slot::Var {
                    var: i,
                    lane: l,
                    elem: *e,
                },
            ));
        }
    }
    let mut wilds_used: BTreeMap<u32, Vec<Elem>> = BTreeMap::new();
    collect_wilds(&inst.lhs, &mut wilds_used);
    collect_wilds(&inst.rhs, &mut wilds_used);
    let mut wilds = BTreeMap::new();
    let mut assumptions: Vec<SExpr> = Vec::new();
    for (id, elems) in &wilds_used {
        let name = format!("c{id}");
        let dom = WildDomain::of(elems);
        let atom = ctx.atom(&name);
        let exact = extend(ctx, atom, dom.width, W, dom.signed);
        // The declared width already bounds the value; the range narrows it further only
        // when the types disagree on more than width (u16 and i8 give [0, 127]).
        assumptions.push(ctx.not(lt(ctx, exact, konst_i(ctx, W, dom.lo), true)));
        assumptions.push(ctx.not(lt(ctx, konst_i(ctx, W, dom.hi), exact, true)));
        if let Some(v) = fixed.and_then(|f| f.get(id)) {
            assumptions.push(ctx.eq(exact, konst_i(ctx, W, *v)));
        }
        consts.push((name, dom.width, Slot::Wild(*id, dom.clone())));
        wilds.insert(*id, (atom, dom));
    }
    let mut cenc = CEnc {
        ctx,
        inst,
        rule,
        wilds: &wilds,
        bounds: BTreeMap::new(),
    };
    // Computed constants are defined and fit their type, or the rule would not fire.
    let mut computed_terms = Vec::new();
    for (ast, elem) in &computed {
        let (v, d) = cenc.enc(ast)?;
        assumptions.push(d);
        assumptions.push(fits(ctx, v, *elem));
        computed_terms.push(extract(ctx, elem.bits() - 1, 0, v));
    }
    if let Some(p) = &rule.decl.pred {
        let (v, d) = cenc.enc(p)?;
        assumptions.push(d);
        assumptions.push(ctx.not(ctx.eq(v, konst_i(ctx, W, 0))));
    }
    let bounds = cenc.bounds.clone();

    // With every constant pinned, put the values themselves into the expressions: the
    // encoding then sees constant divisors, shifts and products.
    let (mut lhs_p, mut rhs_p) = (lhs.clone(), rhs.clone());
    if let Some(f) = fixed
        && wilds_used.keys().all(|k| f.contains_key(k))
    {
        let mut map = std::collections::HashMap::new();
        for (id, elems) in &wilds_used {
            for e in elems {
                let name = format!("c{id}:{e}");
                let n = lanes_of(&name);
                let v = Expr::splat(crate::types::Type::vec(*e, n), f[id]).map_err(|e| e.0)?;
                map.insert(crate::ir::Sym::from(name.as_str()), v);
            }
        }
        for (j, (ast, elem)) in computed.iter().enumerate() {
            let wf = |id: u32| f.get(&id).copied();
            let mut nb = |_: &str| None;
            let mut env = crate::rules::cexpr::CEnv {
                scope: &inst.scope,
                wild: &wf,
                bounds: &mut nb,
            };
            if let Ok(v) = crate::rules::cexpr::eval(ast, &mut env)
                && let Ok(c) = Expr::splat(
                    crate::types::Type::vec(*elem, lanes_of(&format!("k{j}"))),
                    v,
                )
            {
                map.insert(crate::ir::Sym::from(format!("k{j}").as_str()), c);
            }
        }
        lhs_p = crate::ir::visit::substitute(&lhs_p, &map).map_err(|e| e.0)?;
        rhs_p = crate::ir::visit::substitute(&rhs_p, &map).map_err(|e| e.0)?;
    }
    let lhs_p = prepare(&lhs_p);
    let rhs_p = prepare(&rhs_p);
    let (lhs_p, rhs_p, products) = if abstract_products {
        abstract_shared_products(&lhs_p, &rhs_p)
    } else {
        (lhs_p, rhs_p, vec![])
    };
    let wild_terms = wilds.clone();
    let mut leaves =
        move |ctx: &Context, name: &str, elem: Elem, lane: usize| -> Result<SExpr, String> {
            if let Some(rest) = name.strip_prefix('v') {
                let i: usize = rest.parse().map_err(|_| format!("unknown input {name}"))?;
                Ok(ctx.atom(format!("v{i}_{lane}")))
            } else if let Some(rest) = name.strip_prefix('c') {
                let id: u32 = rest
                    .split(':')
                    .next()
                    .unwrap_or("")
                    .parse()
                    .map_err(|_| format!("unknown input {name}"))?;
                let (c, d) = wild_terms
                    .get(&id)
                    .ok_or_else(|| format!("unknown wildcard {name}"))?;
                Ok(extend(ctx, *c, d.width, elem.bits(), d.signed))
            } else if let Some(rest) = name.strip_prefix('k') {
                let j: usize = rest.parse().map_err(|_| format!("unknown input {name}"))?;
                computed_terms
                    .get(j)
                    .copied()
                    .ok_or_else(|| format!("unknown constant {name}"))
            } else if let Some(rest) = name.strip_prefix('m') {
                let k: usize = rest.parse().map_err(|_| format!("unknown input {name}"))?;
                Ok(ctx.atom(format!("m{k}_{lane}")))
            } else {
                Err(format!("unknown input {name}"))
            }
        };
    let mut enc = Encoder::new(ctx, &mut leaves);
    // Wildcard uses are extensions of the declared constant.
    for (id, elems) in &wilds_used {
        let (atom, d) = &wilds[id];
        for e in elems {
            if e.bits() > d.width {
                let t = extend(ctx, *atom, d.width, e.bits(), d.signed);
                enc.note_extension(t, *atom, d.width, d.signed);
            }
        }
    }
    let l = enc.lanes(&lhs_p)?;
    let r = enc.lanes(&rhs_p)?;

    // Bounds: every lane of the variable lies within them, and they lie within its type.
    for (var, (lo, hi)) in &bounds {
        let i = rule.vars.iter().position(|v| v == var).expect("checked");
        let e = inst.vars[i];
        consts.push((
            format!("lb_{var}"),
            CW,
            Slot::Bound {
                var: var.clone(),
                upper: false,
            },
        ));
        consts.push((
            format!("ub_{var}"),
            CW,
            Slot::Bound {
                var: var.clone(),
                upper: true,
            },
        ));
        let (lo_w, hi_w) = (extend(ctx, *lo, CW, W, true), extend(ctx, *hi, CW, W, true));
        assumptions.push(fits(ctx, lo_w, e));
        assumptions.push(fits(ctx, hi_w, e));
        for lane in 0..var_lanes[i] as usize {
            let x = extend(
                ctx,
                ctx.atom(format!("v{i}_{lane}")),
                e.bits(),
                W,
                e.is_signed(),
            );
            assumptions.push(ctx.not(lt(ctx, x, lo_w, true)));
            assumptions.push(ctx.not(lt(ctx, hi_w, x, true)));
        }
    }

    // Abstracted products lie within their intervals.
    for (k, (node, (lo, hi))) in products.iter().enumerate() {
        let e = node.ty().elem;
        for lane in 0..node.ty().lanes as usize {
            let name = format!("m{k}_{lane}");
            consts.push((name.clone(), e.bits(), Slot::Product { index: k, lane }));
            let x = extend(ctx, ctx.atom(&name), e.bits(), W, e.is_signed());
            assumptions.push(ctx.not(lt(ctx, x, konst_i(ctx, W, *lo), true)));
            assumptions.push(ctx.not(lt(ctx, konst_i(ctx, W, *hi), x, true)));
        }
    }

    // Terms are hash-consed, so lanes both sides compute by the same term agree; the
    // solver only sees the others (none, often, for rules derived from semantics).
    let pairs: Vec<(SExpr, SExpr)> = l
        .iter()
        .zip(&r)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    let open_lanes = pairs.len();
    let conjuncts = assumptions.clone();
    let differ = l
        .iter()
        .zip(&r)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| ctx.not(ctx.eq(*a, *b)))
        .reduce(|a, b| ctx.or(a, b))
        .unwrap_or(ctx.false_());
    let assumed = assumptions
        .into_iter()
        .reduce(|a, b| ctx.and(a, b))
        .unwrap_or(ctx.true_());
    let assertion = ctx.and(assumed, differ);
    let _ = sort;
    Ok(Obligation {
        consts,
        assumptions: assumed,
        assertion,
        lhs,
        rhs,
        computed,
        lanes,
        var_lanes,
        open_lanes,
        pairs,
        conjuncts,
        abstracted: products.len(),
    })
}

/// Replaces products of non-constant operands that occur on both sides by variables
/// `m<k>`; returns the rewritten sides and each product with its interval.
fn abstract_shared_products(
    lhs: &Expr,
    rhs: &Expr,
) -> (Expr, Expr, Vec<(Expr, crate::bounds::Interval)>) {
    use crate::ir::Op;
    let in_rhs: std::collections::HashSet<usize> = crate::ir::visit::post_order(rhs)
        .iter()
        .map(|e| e.id())
        .collect();
    let mut products: Vec<(Expr, crate::bounds::Interval)> = Vec::new();
    let mut iv = crate::bounds::Intervals::new();
    for e in crate::ir::visit::post_order(lhs) {
        if matches!(e.op(), Op::Mul)
            && in_rhs.contains(&e.id())
            && e.arg(0).as_const().is_none()
            && e.arg(1).as_const().is_none()
            && !products
                .iter()
                .any(|(p, _)| crate::ir::visit::any_node(p, |n| n == &e))
        {
            let range = iv.interval(&e);
            products.push((e, range));
        }
    }
    if products.is_empty() {
        return (lhs.clone(), rhs.clone(), products);
    }
    let replace = |root: &Expr| -> Expr {
        crate::ir::visit::rebuild(root, |node, args| -> Result<Expr, crate::ir::TypeError> {
            if let Some(k) = products.iter().position(|(p, _)| p == node) {
                return Ok(Expr::var(format!("m{k}").as_str(), node.ty()));
            }
            node.with_args(args)
        })
        .expect("same types")
    };
    (replace(lhs), replace(rhs), products)
}

fn collect_wilds(p: &crate::rules::Pat, out: &mut BTreeMap<u32, Vec<Elem>>) {
    use crate::rules::PatKind;
    match &p.kind {
        PatKind::Wild(id) => {
            let v = out.entry(*id).or_default();
            if !v.contains(&p.elem) {
                v.push(p.elem);
            }
        }
        PatKind::Op(_, args) => args.iter().for_each(|a| collect_wilds(a, out)),
        _ => {}
    }
}
