//! Lifting integer IR to FPIR (Pitchfork section 3.2) with the built-in rules in
//! `rules/lift.rules`, plus any rule files given at run time.

mod decided_selects;
mod known_zeros;

use std::sync::{Arc, LazyLock};

use crate::bounds::{Bounds, Intervals};
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::rewrite::eqsat::EqSat;
use crate::rewrite::{Engine, Greedy, TraceEvent};
use crate::rules::{RuleKind, RuleSet};

/// The text of the built-in lifting rules, embedded in the binary.
pub const BUILTIN_LIFT_RULES: &str = include_str!("../rules/lift.rules");

/// Built once per process, and read from the tables cache when an earlier process of this
/// build of harrow wrote it there (`rules::snapshot`).
static BUILTIN: LazyLock<Result<RuleSet, Diag>> = LazyLock::new(|| {
    let tables = crate::rules::snapshot::cached("lift", || {
        let set = build_builtin_rules()?;
        Ok(crate::rules::snapshot::Tables {
            rule_sets: vec![set],
            instrs: Vec::new(),
        })
    })?;
    tables
        .rule_sets
        .into_iter()
        .next()
        .filter(|s| s.kind == Some(RuleKind::Lift))
        .map_or_else(build_builtin_rules, Ok)
});

/// The built-in lifting rules, parsed, instantiated and checked.
pub fn build_builtin_rules() -> Result<RuleSet, Diag> {
    RuleSet::load(
        &Source::new("rules/lift.rules", BUILTIN_LIFT_RULES),
        RuleKind::Lift,
    )
}

/// The text of the built-in equalities for equality saturation, embedded in the binary.
pub const BUILTIN_ALGEBRA_RULES: &str = include_str!("../rules/algebra.rules");

static ALGEBRA: LazyLock<Result<RuleSet, Diag>> = LazyLock::new(build_algebra_rules);

/// The built-in equalities (`rules/algebra.rules`), parsed, instantiated and checked.
pub fn build_algebra_rules() -> Result<RuleSet, Diag> {
    RuleSet::load(
        &Source::new("rules/algebra.rules", BUILTIN_ALGEBRA_RULES),
        RuleKind::Algebra,
    )
}

/// The built-in equalities, built once per process.
pub fn algebra_rules() -> Result<&'static RuleSet, Diag> {
    ALGEBRA.as_ref().map_err(|e| e.clone())
}

/// Which rewriting engine lifts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineKind {
    /// The greedy bottom-up rewriter (`rewrite::Greedy`): fast, commits to each rewrite.
    #[default]
    Greedy,
    /// Equality saturation (`rewrite::eqsat::EqSat`) over the lifting rules and the
    /// equalities of `rules/algebra.rules`, never costlier than greedy.
    Eqsat,
}

impl EngineKind {
    /// The names `--engine` takes.
    pub const NAMES: [&'static str; 2] = ["greedy", "eqsat"];

    /// The engine of a name `--engine` takes.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "greedy" => Some(EngineKind::Greedy),
            "eqsat" => Some(EngineKind::Eqsat),
            _ => None,
        }
    }
}

/// The engine [`lower::lower`](crate::lower::lower) also lifts with: chosen once per
/// process by the command line's `--engine` (0 greedy, 1 eqsat).
static ENGINE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets the engine lowering lifts with from now on (the command line's `--engine`).
pub fn set_engine(engine: EngineKind) {
    ENGINE.store(engine as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The engine lowering lifts with.
pub fn engine() -> EngineKind {
    match ENGINE.load(std::sync::atomic::Ordering::Relaxed) {
        1 => EngineKind::Eqsat,
        _ => EngineKind::Greedy,
    }
}

/// The limits equality saturation runs with: chosen once per process by `--eqsat-limit`.
static EQSAT_LIMITS: std::sync::RwLock<Option<crate::rewrite::eqsat::Limits>> =
    std::sync::RwLock::new(None);

/// Sets the limits of equality saturation from now on (the command line's `--eqsat-limit`).
pub fn set_eqsat_limits(limits: crate::rewrite::eqsat::Limits) {
    *EQSAT_LIMITS.write().unwrap_or_else(|e| e.into_inner()) = Some(limits);
}

/// The limits of equality saturation: `--eqsat-limit`, else the defaults.
pub fn eqsat_limits() -> crate::rewrite::eqsat::Limits {
    EQSAT_LIMITS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_default()
}

/// Lifts `e` with the built-in rules and interval bounds by equality saturation, and says
/// which extraction gave the result.
pub fn lift_eqsat(e: &Expr) -> (Expr, crate::rewrite::eqsat::Extraction) {
    let rules = builtin_rules().expect("the built-in lifting rules load");
    let (out, report) = saturation(rules).run_with_report(&ready_to_lift(e), &mut Intervals::new());
    (out, report.extraction)
}

/// The built-in lifting rules. An error here is a bug in the shipped rule file; tests keep
/// it from happening.
pub fn builtin_rules() -> Result<&'static RuleSet, Diag> {
    BUILTIN.as_ref().map_err(|e| e.clone())
}

/// The built-in rules plus the rules of the given files.
pub fn rules_with(extra: &[Arc<Source>]) -> Result<RuleSet, Diag> {
    let mut set = builtin_rules()?.clone();
    for src in extra {
        set.extend(RuleSet::load(src, RuleKind::Lift)?)?;
    }
    Ok(set)
}

/// Lifts `e` (after inlining its `let`s and dropping casts that change nothing) with
/// `rules`.
pub fn lift_with(
    e: &Expr,
    rules: &RuleSet,
    bounds: &mut dyn Bounds,
    trace: Option<&mut Vec<TraceEvent>>,
) -> Expr {
    lift_with_engine(e, rules, EngineKind::Greedy, bounds, trace)
}

/// [`lift_with`] by the chosen engine. Equality saturation adds the built-in equalities to
/// `rules` and records no trace.
pub fn lift_with_engine(
    e: &Expr,
    rules: &RuleSet,
    engine: EngineKind,
    bounds: &mut dyn Bounds,
    trace: Option<&mut Vec<TraceEvent>>,
) -> Expr {
    let e = ready_to_lift(e);
    match engine {
        EngineKind::Greedy => Greedy::new(rules).run(&e, bounds, trace),
        EngineKind::Eqsat => saturation(rules).run(&e, bounds, trace),
    }
}

/// The equality-saturation engine over `rules` and the built-in equalities, with the
/// process's limits (`--eqsat-limit`).
fn saturation(rules: &RuleSet) -> EqSat<'_> {
    let algebra = algebra_rules().expect("the built-in equalities load");
    EqSat::new(rules, Some(algebra)).with_limits(eqsat_limits())
}

/// `e` with its `let`s inlined, casts that change nothing dropped and scalar constants
/// folded: what either engine lifts.
fn ready_to_lift(e: &Expr) -> Expr {
    fold_scalar_constants(&drop_noop_casts(&crate::ir::visit::inline_lets(e)))
}

/// Evaluates scalar operations on constants (`shift_left((int64)1, (uint64)31)`, which
/// simd_op_check writes for 2^31), so that rules see the constant their wildcards match.
pub fn fold_scalar_constants(e: &Expr) -> Expr {
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        if rebuilt.ty().is_scalar()
            && let Some(folded) = crate::rewrite::fold_constant_node(&rebuilt)
        {
            return Ok(folded);
        }
        Ok(rebuilt)
    })
    .unwrap_or_else(|_| e.clone())
}

/// Folds the identities clang applies to the scalar baseline and selection cannot see
/// through: the built-in lifting rules whose right-hand side is one of their operands or a
/// constant ([`identity_rules`]: `select(c, a, a)`, `min(a, a)`, `a - a`, `a + 0`,
/// `saturating_add(a, 0)`, `a * 1`, `a >> 0`), applied bottom up so that an identity a
/// folded operand exposes folds too. Generated and macro-expanded kernels write them
/// (`saturating_add(q, d - d)` left a widening, a subtraction and a saturating add per lane
/// that clang removed: 0.93x clang -O3), and they must go before the narrowing passes, which
/// the dead wide operand would otherwise stop. The rules are the proved ones, so this pass
/// adds no semantics of its own.
///
/// Selects whose condition decides the branch are folded too (`decided_selects`): that
/// pass replaces values by what the condition makes them equal and compares the folded
/// branches, so it too only removes what the semantics make redundant. So are truncations
/// that keep only bits known to be zero (`known_zeros`, its counts checked against the
/// interpreter on random expressions).
pub fn fold_trivial_identities(e: &Expr) -> Expr {
    let identities =
        |e: &Expr| Greedy::new(identity_rules()).run(e, &mut crate::bounds::TypeBounds, None);
    let folded = identities(e);
    let zeroed = known_zeros::fold_truncated_zero_bits(&folded);
    let folded = if zeroed == folded {
        folded
    } else {
        identities(&zeroed)
    };
    let decided = decided_selects::fold_decided_selects(&folded, &identities);
    if decided == folded {
        folded
    } else {
        identities(&decided)
    }
}

/// The built-in lifting rules whose right-hand side is a leaf (a rule variable or a
/// constant) in every instantiation: each removes an operation outright, so applying them
/// can only make an expression smaller, and with a type's own bounds it needs no analysis.
pub fn identity_rules() -> &'static RuleSet {
    static IDENTITIES: LazyLock<RuleSet> = LazyLock::new(|| {
        let rules = builtin_rules().expect("the built-in lifting rules load");
        let leaf = |p: &crate::rules::Pat| !matches!(p.kind, crate::rules::PatKind::Op(..));
        let identities = rules
            .rules
            .iter()
            .filter(|r| !r.insts.is_empty() && r.insts.iter().all(|i| leaf(&i.rhs)))
            .cloned()
            .collect();
        RuleSet::from_rules(identities, RuleKind::Lift)
    });
    &IDENTITIES
}

/// Removes casts to the type their operand already has (a user may write `u16(x)` of a
/// `u16`; rules never match such a cast, because in a rule it would be no cast at all).
pub fn drop_noop_casts(e: &Expr) -> Expr {
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        if matches!(node.op(), crate::ir::Op::Cast) && args[0].ty() == node.ty() {
            return Ok(args[0].clone());
        }
        node.with_args(args)
    })
    .expect("rebuilding with same-typed operands")
}

/// Lifts `e` with the built-in rules and interval bounds.
pub fn lift(e: &Expr) -> Expr {
    let rules = builtin_rules().expect("the built-in lifting rules load");
    lift_with(e, rules, &mut Intervals::new(), None)
}

/// Sums whose terms share a constant multiplier, factored: `a*6 + b + c*6` becomes
/// `(a + c)*6 + b` (wrapping addition and multiplication distribute exactly). A symmetric
/// 7-tap filter then needs three multiplies instead of five. Only sums with some
/// multiplier used twice change; callers compare both forms by cost (`lower::lower`).
pub fn factor_common_multipliers(e: &Expr) -> Expr {
    use crate::ir::Op;
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        if !matches!(rebuilt.op(), Op::Add) || rebuilt.ty().elem == crate::types::Elem::Bool {
            return Ok(rebuilt);
        }
        let mut terms = Vec::new();
        flatten_sum(&rebuilt, &mut terms);
        // Terms by multiplier, in order of first appearance.
        let mut groups: Vec<(Option<Expr>, Vec<Expr>)> = Vec::new();
        for t in terms {
            let (k, x) = constant_multiple(&t);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, xs)) => xs.push(x),
                None => groups.push((k, vec![x])),
            }
        }
        if !groups.iter().any(|(k, xs)| k.is_some() && xs.len() > 1) {
            return Ok(rebuilt);
        }
        let mut sum: Option<Expr> = None;
        for (k, xs) in groups {
            let inner = xs
                .into_iter()
                .reduce(|a, b| crate::ir::mk(Op::Add, vec![a, b]))
                .expect("every group has a term");
            let term = match k {
                Some(k) => crate::ir::mk(Op::Mul, vec![inner, k]),
                None => inner,
            };
            sum = Some(match sum {
                None => term,
                Some(s) => crate::ir::mk(Op::Add, vec![s, term]),
            });
        }
        Ok(sum.expect("a sum has terms"))
    })
    .unwrap_or_else(|_| e.clone())
}

/// Wrapping truncations pushed towards the leaves: `i16(i32(a) + i32(b) * 3)` with `a`, `b`
/// of 8 bits becomes `i16(a) + i16(b) * 3`. The low bits of a sum, difference, product,
/// bitwise operation or left shift depend only on the low bits of its operands, so the
/// narrow form is exact; computing in the narrow type fits twice the lanes in a register
/// (clang's minimal-bitwidth analysis does the same for the scalar baseline). The result
/// can be worse (two narrowings instead of one), so callers compare both forms by cost
/// (`kernel::codegen::compile_best`).
pub fn narrow_truncated_arithmetic(e: &Expr) -> Expr {
    use crate::ir::Op;
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        if matches!(rebuilt.op(), Op::Cast) && is_wrapping_narrowing(rebuilt.arg(0), &rebuilt) {
            return Ok(truncated(rebuilt.arg(0), rebuilt.ty().elem));
        }
        Ok(rebuilt)
    })
    .unwrap_or_else(|_| e.clone())
}

/// An unsigned wrapping computation over sign-extended values, computed in the signed type
/// of the same width and reinterpreted: `u16(a) + u16(b)` with `a`, `b` of type `i8`
/// becomes `u16(i16(a) + i16(b))`. Wrapping operations give the same bits in either
/// signedness, and the signed form meets the signed widening instructions (`saddl`,
/// `saddw`, `vpmovsx`). `None` when `e` reads no sign extension to its own type, or one
/// from less than half its width. Callers keep it only when it is cheaper.
pub fn wrapping_in_signed(e: &Expr) -> Option<Expr> {
    use crate::ir::Op;
    let elem = e.ty().elem;
    if !is_plain_int(elem) || elem.is_signed() {
        return None;
    }
    // Only extensions from half the width: those are what the signed widening
    // instructions take (an i8 summed into u32 computed signed was twice as slow on Arm,
    // extended in quarter-register chunks).
    let sign_extension = |n: &Expr| {
        matches!(n.op(), Op::Cast)
            && n.ty().elem == elem
            && is_plain_int(n.arg(0).ty().elem)
            && n.arg(0).ty().elem.is_signed()
            && n.arg(0).ty().elem.bits() < elem.bits()
    };
    let half = |n: &Expr| 2 * n.arg(0).ty().elem.bits() == elem.bits();
    let extends = crate::ir::visit::any_node(e, sign_extension)
        && !crate::ir::visit::any_node(e, |n| sign_extension(n) && !half(n));
    extends.then(|| truncated(e, elem.with_signed(true)).cast(elem))
}

/// Operations whose values interval bounds show fit a narrower type, computed in it:
/// `i32(da) * 6` with `da` in `[-255, 255]` becomes `i32(i16(da) * 6)`, and a clamp or
/// saturating narrow of that extension then works on the narrow value. Divisions and
/// bitwise operations too: `u32(x) / 7` of u16 lanes is a 16-bit division, as clang makes
/// it from the known bits (fuzz_3_32 on arm-neon, 0.78x -> 1.43x clang -O3). The narrow
/// operation gives the exact value because its operands and result all fit (no wrap, no
/// saturation, no rounding overflow). A value bounded to one number becomes that constant.
/// Like [`narrow_truncated_arithmetic`], callers keep
/// this form only when it is cheaper.
pub fn narrow_bounded_arithmetic(e: &Expr) -> Expr {
    narrow_bounded(e, false)
}

/// [`narrow_bounded_arithmetic`], with high products the bounds keep within their type
/// computed as the product shifted ([`bounded_high_product`]). A separate form, since
/// which is cheaper depends on what else reads the operands: Arm's `sqdmulh` of a square
/// shares the operand's widening with its neighbours, where `smull` and a shift are two
/// instructions (and HVX has no 32-bit product but a widening one of half words).
pub fn narrow_bounded_arithmetic_and_high_products(e: &Expr) -> Expr {
    narrow_bounded(e, true)
}

fn narrow_bounded(e: &Expr, high_products: bool) -> Expr {
    use crate::ir::Op;
    let mut bounds = Intervals::new();
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        let elem = rebuilt.ty().elem;
        if !is_plain_int(elem) {
            return Ok(rebuilt);
        }
        // A value the bounds pin to one number is that number (`(da >> 10) >> 10` of a
        // value in [-255, 255] is 0 or -1, rounded away by a later shift).
        if !matches!(rebuilt.op(), Op::Const(_) | Op::Broadcast) {
            let (lo, hi) = bounds.interval(&rebuilt);
            if lo == hi {
                return Expr::splat(rebuilt.ty(), lo);
            }
        }
        if let Op::SaturatingCast = rebuilt.op() {
            // A saturating narrow of a lossless extension narrows the original value.
            let x = rebuilt.arg(0);
            if let Some(inner) = lossless_extension_of(x) {
                return Ok(if inner.ty().elem == elem {
                    inner.clone()
                } else {
                    crate::ir::mk_typed(Op::SaturatingCast, rebuilt.ty(), vec![inner.clone()])
                });
            }
            return Ok(rebuilt);
        }
        if high_products && let Some(shifted) = bounded_high_product(&rebuilt, &mut bounds) {
            return shifted;
        }
        let values: &[usize] = match rebuilt.op() {
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Min
            | Op::Max
            | Op::SaturatingAdd
            | Op::SaturatingSub
            | Op::Div
            | Op::And
            | Op::Or
            | Op::Xor => &[0, 1],
            Op::Select => &[1, 2],
            // Shifts by a constant: only the shifted value changes type.
            Op::Shr | Op::RoundingShr if rebuilt.arg(1).as_const().is_some() => &[0],
            _ => return Ok(rebuilt),
        };
        let mut ranges = vec![bounds.interval(&rebuilt)];
        ranges.extend(values.iter().map(|&i| bounds.interval(rebuilt.arg(i))));
        let Some(narrow) = narrowest_holding(elem, &ranges) else {
            return Ok(rebuilt);
        };
        let mut new_args = rebuilt.args().to_vec();
        for &i in values {
            new_args[i] = truncated(&new_args[i], narrow);
        }
        if values.len() == 1 {
            let amount = rebuilt.arg(1).as_const().unwrap_or(0);
            if !(0..i128::from(narrow.bits())).contains(&amount) {
                return Ok(rebuilt);
            }
            new_args[1] = Expr::splat(rebuilt.ty().with_elem(narrow), amount)?;
        }
        let narrowed = crate::ir::Expr::build(rebuilt.op().clone(), None, new_args)?;
        Ok(narrowed.cast(elem))
    })
    .unwrap_or_else(|_| e.clone())
}

/// `mul_shift_right(a, b, c)` whose product the bounds keep within its type, as the product
/// shifted: `(a * b) >> c`, exact since the product neither wraps nor needs the saturation,
/// and the shift rounds down as the high part does. A product of two extensions from half
/// the width is then a widening multiply (`smull`), where the high part's instruction
/// (`sqdmulh`) needs both operands extended first (fuzz_5_130, an i16 by a negated byte
/// shifted by 31: 0.84x clang -O3 on Arm, 0.98x as the shifted product). `None` otherwise.
fn bounded_high_product(
    e: &Expr,
    bounds: &mut Intervals,
) -> Option<Result<Expr, crate::ir::TypeError>> {
    use crate::ir::Op;
    if !matches!(e.op(), Op::MulShiftRight) {
        return None;
    }
    let elem = e.ty().elem;
    let shift = e.arg(2).as_const()?;
    if !(0..i128::from(elem.bits())).contains(&shift) {
        return None;
    }
    let ((a_lo, a_hi), (b_lo, b_hi)) = (bounds.interval(e.arg(0)), bounds.interval(e.arg(1)));
    let (lo, hi) = crate::bounds::type_range(elem);
    let corners = [a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi];
    if !corners.iter().all(|c| (lo..=hi).contains(c)) {
        return None;
    }
    let shifted = || {
        let product = Expr::build(Op::Mul, None, vec![e.arg(0).clone(), e.arg(1).clone()])?;
        let amount = Expr::splat(e.ty(), shift)?;
        Expr::build(Op::Shr, None, vec![product, amount])
    };
    Some(shifted())
}

/// Constant offsets moved out of products by constants and gathered into one constant per
/// sum, in wrapping arithmetic: `298 * (y - 16) + 409 * (v - 128) + 128` becomes
/// `298 * y + 409 * v - 56992`, one addition of a constant where there were three
/// (clang does the same to the scalar baseline; through instructions it cannot); and
/// chains of products and left shifts by constants gathered into one product:
/// `(x << 4) * 9` is `x * 144`, which a widening multiply-add (`pmaddwd`) computes
/// from 16-bit `x` where the shift and the 32-bit multiply took two instructions
/// (0.67x clang -O3 before, which folds it too). Exact: wrapping sums and products are a
/// ring, and a left shift by `c` below the width is a product by `2^c`. Callers keep it
/// only when it is cheaper.
pub fn fold_offset_constants(e: &Expr) -> Expr {
    use crate::ir::Op;
    // `x + k`, `k + x` or `x - k` as `(x, k)` with the constant's value.
    let offset = |x: &Expr| -> Option<(Expr, i128)> {
        let (a, b) = (x.args().first()?, x.args().get(1)?);
        match (x.op(), a.as_const(), b.as_const()) {
            (Op::Add, None, Some(k)) => Some((a.clone(), k)),
            (Op::Add, Some(k), None) => Some((b.clone(), k)),
            (Op::Sub, None, Some(k)) => Some((a.clone(), -k)),
            _ => None,
        }
    };
    crate::ir::visit::rebuild(e, |node, args| -> Result<Expr, crate::ir::TypeError> {
        let rebuilt = node.with_args(args)?;
        let t = rebuilt.ty();
        if !is_plain_int(t.elem) || rebuilt.args().len() != 2 {
            return Ok(rebuilt);
        }
        let plus = |x: Expr, k: i128| -> Result<Expr, crate::ir::TypeError> {
            let k = crate::types::to_i128(crate::types::from_i128(k, t.elem), t.elem);
            if k == 0 {
                return Ok(x);
            }
            Expr::build(Op::Add, None, vec![x, Expr::splat(t, k)?])
        };
        let (a, b) = (rebuilt.arg(0).clone(), rebuilt.arg(1).clone());
        if let Some((x, k)) = scaled_by_constant(&rebuilt)
            && let Some((y, k2)) = scaled_by_constant(&x)
        {
            // (y * k2) * k = y * (k2 * k), shifts read as products by powers of two.
            let k =
                crate::types::to_i128(crate::types::from_i128(k2.wrapping_mul(k), t.elem), t.elem);
            return Expr::build(Op::Mul, None, vec![y, Expr::splat(t, k)?]);
        }
        match rebuilt.op() {
            // (x + k) * c = x * c + k * c
            Op::Mul => {
                let (inner, c) = match (a.as_const(), b.as_const()) {
                    (None, Some(c)) => (&a, c),
                    (Some(c), None) => (&b, c),
                    _ => return Ok(rebuilt),
                };
                match offset(inner) {
                    Some((x, k)) => plus(
                        Expr::build(Op::Mul, None, vec![x, Expr::splat(t, c)?])?,
                        k.wrapping_mul(c),
                    ),
                    None => Ok(rebuilt),
                }
            }
            // (x + k1) + (y + k2) = (x + y) + (k1 + k2), and the same with differences.
            Op::Add | Op::Sub if b.as_const().is_none() => {
                let sign: i128 = if matches!(rebuilt.op(), Op::Add) {
                    1
                } else {
                    -1
                };
                let (x, k1) = offset(&a).unwrap_or((a.clone(), 0));
                let (y, k2) = offset(&b).unwrap_or((b.clone(), 0));
                if k1 == 0 && k2 == 0 {
                    return Ok(rebuilt);
                }
                plus(
                    Expr::build(rebuilt.op().clone(), None, vec![x, y])?,
                    k1.wrapping_add(sign.wrapping_mul(k2)),
                )
            }
            // (x + k1) + k2 = x + (k1 + k2)
            Op::Add | Op::Sub => match (offset(&a), b.as_const()) {
                (Some((x, k1)), Some(k2)) => {
                    let k2 = if matches!(rebuilt.op(), Op::Add) {
                        k2
                    } else {
                        -k2
                    };
                    plus(x, k1.wrapping_add(k2))
                }
                _ => Ok(rebuilt),
            },
            _ => Ok(rebuilt),
        }
    })
    .unwrap_or_else(|_| e.clone())
}

/// `e` as `(x, k)` where it is `x * k`, `k * x` or `x << c` (`k = 2^c`, `c` below the
/// width) for a constant `k`, in wrapping plain-integer arithmetic.
fn scaled_by_constant(e: &Expr) -> Option<(Expr, i128)> {
    use crate::ir::Op;
    let t = e.ty();
    if !is_plain_int(t.elem) || e.args().len() != 2 {
        return None;
    }
    let (a, b) = (e.arg(0), e.arg(1));
    match (e.op(), a.as_const(), b.as_const()) {
        (Op::Mul, None, Some(k)) => Some((a.clone(), k)),
        (Op::Mul, Some(k), None) => Some((b.clone(), k)),
        (Op::Shl, None, Some(c)) if (0..i128::from(t.elem.bits())).contains(&c) => {
            Some((a.clone(), 1i128 << c))
        }
        _ => None,
    }
}

/// A plain integer element (not bool, not an internal wide type).
fn is_plain_int(e: crate::types::Elem) -> bool {
    !e.is_internal() && e != crate::types::Elem::Bool
}

/// `x` when `e` is a cast of `x` to a type at least as wide that keeps every value.
fn lossless_extension_of(e: &Expr) -> Option<&Expr> {
    if !matches!(e.op(), crate::ir::Op::Cast) {
        return None;
    }
    let (from, to) = (e.arg(0).ty().elem, e.ty().elem);
    let keeps = is_plain_int(from)
        && is_plain_int(to)
        && (to.bits() > from.bits() && (to.is_signed() || !from.is_signed())
            || to.bits() == from.bits() && to == from);
    keeps.then(|| e.arg(0))
}

/// The narrowest plain integer type narrower than `elem` holding every interval, trying
/// `elem`'s own signedness first at each width.
fn narrowest_holding(
    elem: crate::types::Elem,
    ranges: &[crate::bounds::Interval],
) -> Option<crate::types::Elem> {
    let mut candidates: Vec<crate::types::Elem> = crate::types::USER_INT_ELEMS
        .iter()
        .copied()
        .filter(|c| c.bits() < elem.bits())
        .collect();
    candidates.sort_by_key(|c| (c.bits(), c.is_signed() != elem.is_signed()));
    candidates.into_iter().find(|&c| {
        let (lo, hi) = crate::bounds::type_range(c);
        ranges.iter().all(|&(a, b)| lo <= a && b <= hi)
    })
}

/// Whether `cast` (of `from`) keeps fewer bits of a plain integer than `from` has.
fn is_wrapping_narrowing(from: &Expr, cast: &Expr) -> bool {
    let (f, t) = (from.ty().elem, cast.ty().elem);
    is_plain_int(f) && is_plain_int(t) && t.bits() < f.bits()
}

/// An expression equal to the wrapping cast of `x` to `elem` (at most as wide as `x`'s
/// element), with the cast moved below every operation whose low bits need only low bits.
fn truncated(x: &Expr, elem: crate::types::Elem) -> Expr {
    use crate::ir::Op;
    let ty = x.ty().with_elem(elem);
    let build = |op: Op, args: Vec<Expr>| crate::ir::Expr::build(op, None, args).ok();
    let narrow = match x.op() {
        _ if x.ty().elem == elem => Some(x.clone()),
        Op::Const(b) => Some(Expr::bits(elem, *b)),
        Op::Broadcast => Some(truncated(x.arg(0), elem).broadcast(x.ty().lanes)),
        Op::Add | Op::Sub | Op::Mul | Op::And | Op::Or | Op::Xor => build(
            x.op().clone(),
            vec![truncated(x.arg(0), elem), truncated(x.arg(1), elem)],
        ),
        Op::Not => build(Op::Not, vec![truncated(x.arg(0), elem)]),
        Op::Select => build(
            Op::Select,
            vec![
                x.arg(0).clone(),
                truncated(x.arg(1), elem),
                truncated(x.arg(2), elem),
            ],
        ),
        // A shift by a constant below the narrow width: the kept bits come from kept bits.
        Op::Shl => match x.arg(1).as_const() {
            Some(c) if (0..i128::from(elem.bits())).contains(&c) => Expr::splat(ty, c)
                .ok()
                .and_then(|amount| build(Op::Shl, vec![truncated(x.arg(0), elem), amount])),
            _ => None,
        },
        // The low `k` bits of a right shift by `c <= k`, or of a halving add or subtract
        // (`c = 1`), come from the low `k + c` bits of the operands: computed in twice the
        // narrow width from operands truncated to it, when the operands are wider still.
        Op::Shr | Op::HalvingAdd | Op::HalvingSub | Op::RoundingHalvingAdd => {
            let c = match x.op() {
                Op::Shr => x.arg(1).as_const(),
                _ => Some(1),
            };
            let from = x.arg(0).ty().elem;
            let twice = crate::types::Elem::from_bits(2 * elem.bits(), from.is_signed());
            match (c, twice) {
                (Some(c), Some(w))
                    if (1..=i128::from(elem.bits())).contains(&c)
                        && is_plain_int(from)
                        && from.bits() > w.bits() =>
                {
                    let args = if matches!(x.op(), Op::Shr) {
                        Expr::splat(x.ty().with_elem(w), c)
                            .ok()
                            .map(|amount| vec![truncated(x.arg(0), w), amount])
                    } else {
                        Some(vec![truncated(x.arg(0), w), truncated(x.arg(1), w)])
                    };
                    args.and_then(|a| build(x.op().clone(), a))
                        .map(|wide| wide.cast(elem))
                }
                _ => None,
            }
        }
        // Extending and then dropping the extension is one cast (or none).
        Op::Cast
            if x.arg(0).ty().elem != crate::types::Elem::Bool
                && !x.arg(0).ty().elem.is_internal() =>
        {
            if x.arg(0).ty().elem.bits() >= elem.bits() {
                Some(truncated(x.arg(0), elem))
            } else {
                Some(x.arg(0).cast(elem))
            }
        }
        _ => None,
    };
    narrow
        .filter(|n| n.ty() == ty)
        .unwrap_or_else(|| x.cast(elem))
}

/// The terms of a tree of additions.
fn flatten_sum(e: &Expr, out: &mut Vec<Expr>) {
    if matches!(e.op(), crate::ir::Op::Add) {
        flatten_sum(e.arg(0), out);
        flatten_sum(e.arg(1), out);
    } else {
        out.push(e.clone());
    }
}

/// `(k, x)` for a term `x * k` or `k * x` with a constant `k` other than 1 (splatted or
/// scalar), else `(None, term)`.
fn constant_multiple(t: &Expr) -> (Option<Expr>, Expr) {
    use crate::ir::Op;
    if matches!(t.op(), Op::Mul) {
        let konst = |x: &Expr| {
            crate::interp::eval_closed(x).is_some_and(|v| {
                let first = v.int(0);
                first != 1 && v.to_ints().iter().all(|&l| l == first)
            })
        };
        if konst(t.arg(1)) {
            return (Some(t.arg(1).clone()), t.arg(0).clone());
        }
        if konst(t.arg(0)) {
            return (Some(t.arg(0).clone()), t.arg(1).clone());
        }
    }
    (None, t.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Type;

    #[test]
    fn a_constant_written_as_a_shift_is_folded_before_lifting() {
        let decls = crate::syntax::elab::Decls::new()
            .var("a", Type::parse("i32x32", false).unwrap())
            .var("b", Type::parse("i32x32", false).unwrap());
        let e = crate::syntax::halide::parse_str(
            "saturating_cast((int64(a)*int64(b))/(int64)shift_left((int64)1, (uint64)31))",
            &decls,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let lifted = lift(&e).to_string();
        assert!(lifted.contains("mul_shift_right(a, b"), "{lifted}");
    }

    #[test]
    fn a_widened_scalar_reads_as_the_widening_of_its_splat() {
        // Elaboration casts the scalar `b` before broadcasting it; the widening-subtraction
        // rule's `W(y)` still matches it (`rules::pattern::cast_of_splat`).
        let decls = crate::syntax::elab::Decls::new()
            .var("a", Type::parse("i8x16", false).unwrap())
            .var("b", Type::parse("i8", false).unwrap());
        let e = crate::syntax::halide::parse_str("i16(a) - i16(b)", &decls)
            .unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(
            lift(&e).to_string(),
            "(int16x16)widening_sub(a, x16(b))",
            "from {e}"
        );
        // A cast of something else is left alone: a broadcast of a variable is no cast.
        let e = crate::syntax::halide::parse_str("i16(a) - x16(i16(b) + i16(b))", &decls)
            .unwrap_or_else(|d| panic!("{d}"));
        assert!(
            !lift(&e).to_string().contains("widening_sub"),
            "{}",
            lift(&e)
        );
    }

    /// Evaluates `a` and `b` on random lanes of the named variables and on each type's
    /// extremes, asserting they agree.
    fn assert_same_values(a: &Expr, b: &Expr, vars: &[(&str, Type)]) {
        let mut rng = crate::util::rng::SplitMix64::new(11);
        for round in 0..200 {
            let mut env = crate::interp::Env::new();
            for &(v, t) in vars {
                let lanes = (0..t.lanes)
                    .map(|_| match round {
                        0 => t.elem.min_value() as u128 & t.elem.mask(),
                        1 => t.elem.max_value().unwrap_or(0) as u128,
                        _ => rng.lane(t.elem),
                    })
                    .collect();
                env.set(v, crate::interp::Value { ty: t, lanes });
            }
            assert_eq!(
                crate::interp::eval(a, &env).unwrap(),
                crate::interp::eval(b, &env).unwrap(),
                "{a}\nversus\n{b}"
            );
        }
    }

    /// `text` over `vars`, with its wrapping truncations moved to the leaves, keeps no 32-bit
    /// operation and computes the same values.
    fn assert_narrowed_below_32_bits_exactly(text: &str, vars: &[(&str, &str)]) {
        let e = crate::syntax::halide::parse_with_vars(text, vars);
        let n = narrow_truncated_arithmetic(&e);
        assert!(
            !crate::ir::visit::any_node(&n, |x| x.ty().elem.bits() == 32),
            "no 32-bit operation is left: {n}"
        );
        let types: Vec<(&str, Type)> = vars
            .iter()
            .map(|&(v, t)| (v, Type::parse(t, false).unwrap()))
            .collect();
        assert_same_values(&e, &n, &types);
    }

    #[test]
    fn trivial_identities_fold_to_what_they_equal() {
        let vars = [("a", "i32x8"), ("b", "i32x8"), ("c", "u8x8")];
        let cases = [
            ("select(a < b, a + b, a + b)", "a + b"),
            ("saturating_add(a, b - b)", "a"),
            ("min(a, a) ^ (b ^ b)", "a"),
            ("(c - c) | max(c, c)", "c"),
            ("absd(c, c) + c", "c"),
            ("(a * (int32)1) >> (int32)0", "a"),
            ("rounding_halving_add(c, c)", "c"),
            ("saturating_sub(c, c) + halving_add(c, c)", "c"),
            ("(a / (int32)1) | (b * (int32)0)", "a"),
            ("select(a == b, c, c)", "c"),
        ];
        assert_rewrites_to(&vars, &cases, fold_trivial_identities);
        // Only rules that remove an operation take part: none builds one.
        let names: Vec<&str> = identity_rules()
            .rules
            .iter()
            .map(|r| r.decl.name.as_str())
            .collect();
        for name in ["select_same_arms", "sub_self", "add_zero", "min_redundant"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        assert!(!names.contains(&"div_pow2"), "{names:?}");
        // Operands that merely look alike are left alone.
        let alike = "select(a < b, a, b) - (b - a)";
        assert_rewrites_to(&vars, &[(alike, alike)], fold_trivial_identities);
    }

    #[test]
    fn selects_their_condition_decides_are_the_branch_they_take() {
        let vars = [("a", "u16"), ("b", "u16"), ("v", "i16"), ("w", "i32")];
        let types: Vec<(&str, Type)> = vars
            .iter()
            .map(|&(v, t)| (v, Type::parse(t, false).unwrap()))
            .collect();
        let decided = [
            // Where `a | b` is 0, `a` is 0 and the saturating add adds nothing.
            (
                "select((uint32(a) | uint32(b)) != (uint32)0, v, saturating_add(v, int16(a)))",
                "v",
            ),
            ("select(a == (uint16)0, v + int16(a), v)", "v"),
            // And where it is 0, `v` is that saturating add.
            (
                "select((uint32(a) | uint32(b)) == (uint32)0, v, saturating_add(v, int16(a)))",
                "saturating_add(v, int16(a))",
            ),
            ("select((uint16)3 != a, w, w * int32(a - (uint16)2))", "w"),
            (
                "select(!(a == (uint16)0) || b != (uint16)0, v, v - int16(a | b))",
                "v",
            ),
        ];
        assert_rewrites_to(&vars, &decided, fold_trivial_identities);
        for (text, _) in decided {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            assert_same_values(&e, &fold_trivial_identities(&e), &types);
        }
        // Conditions that decide nothing, or the other way round, are left alone.
        let undecided = [
            "select(a != (uint16)1, v, saturating_add(v, int16(a)))",
            "select(a < (uint16)1, v, saturating_add(v, int16(a)))",
            "select(a == (uint16)0, v, v + int16(b))",
        ];
        for text in undecided {
            assert_rewrites_to(&vars, &[(text, text)], fold_trivial_identities);
        }
    }

    #[test]
    fn a_select_on_a_value_compared_with_itself_is_one_arm() {
        let vars = [("a", "i16x8"), ("b", "u8x8"), ("c", "u8x8")];
        let cases = [
            ("select(a > a, b, c)", "c"),
            ("select(a != a, b, c)", "c"),
            ("select(a <= a, b, c)", "b"),
            ("select(a == a, b, c)", "b"),
        ];
        assert_rewrites_to(&vars, &cases, lift);
    }

    /// A sign extension into a wider unsigned type, clamped by or compared with a constant
    /// the narrow type holds, is clamped or compared in the narrow type.
    #[test]
    fn clamps_and_comparisons_of_extensions_move_to_the_narrow_type() {
        let vars = [("a", "i16x8"), ("b", "u8x8")];
        let cases = [
            (
                "min(uint32(a), (uint32)178)",
                "uint32(min(uint16(a), (uint16)178))",
            ),
            (
                "max(uint32(a), (uint32)29)",
                "uint32(int16(max(uint16(a), (uint16)29)))",
            ),
            ("uint32(a) == (uint32)0", "a == (int16)0"),
            ("(int32)7 != int32(b)", "b != (uint8)7"),
        ];
        assert_rewrites_to(&vars, &cases, lift);
        // A constant the narrow type does not hold (sign extension reaches no value
        // between 32767 and 2^32 - 32768) keeps the wide comparison.
        let far = "uint32(a) == (uint32)40000";
        assert_rewrites_to(&vars, &[(far, far)], lift);
    }

    /// An unsigned value wrapped to a narrower type is never above it saturated there: a
    /// select on that comparison is folded with the trivial identities, as clang folds it.
    /// A signed value decides nothing (a negative one saturates to zero).
    #[test]
    fn a_wrapped_narrowing_is_never_above_the_saturated_one() {
        let vars = [("a", "u16x8"), ("b", "i32x8"), ("c", "i32x8")];
        let cases = [
            ("select(uint8(a) <= saturating_cast<uint8>(a), b, c)", "b"),
            ("select(saturating_cast<uint8>(a) >= uint8(a), b, c)", "b"),
            ("select(uint8(a) > saturating_cast<uint8>(a), b, c)", "c"),
            ("select(saturating_cast<uint8>(a) < uint8(a), b, c)", "c"),
        ];
        assert_rewrites_to(&vars, &cases, fold_trivial_identities);
        let signed = [("s", "i16x8"), ("b", "i32x8"), ("c", "i32x8")];
        let undecided = "select(uint8(s) <= saturating_cast<uint8>(s), b, c)";
        assert_rewrites_to(&signed, &[(undecided, undecided)], fold_trivial_identities);
    }

    /// Asserts that `rewrite` turns each case's first expression into its second (over
    /// `vars`).
    fn assert_rewrites_to(
        vars: &[(&str, &str)],
        cases: &[(&str, &str)],
        rewrite: fn(&Expr) -> Expr,
    ) {
        for &(text, want) in cases {
            let e = crate::syntax::halide::parse_with_vars(text, vars);
            let want = crate::syntax::halide::parse_with_vars(want, vars);
            let got = rewrite(&e);
            assert_eq!(got, want, "{text}: got {got}, want {want}");
        }
    }

    #[test]
    fn offset_constants_leave_products_and_gather_exactly() {
        let vars = [("y", "u8x8"), ("v", "u8x8"), ("w", "i16x8")];
        let types: Vec<(&str, Type)> = vars
            .iter()
            .map(|&(v, t)| (v, Type::parse(t, false).unwrap()))
            .collect();
        for (text, adds) in [
            // One constant addition is left of three.
            (
                "(int32)298 * (int32(y) - (int32)16) + (int32)409 * (int32(v) - (int32)128) + (int32)128",
                1,
            ),
            // Wrapping in 16 bits, a constant on the left, a difference of sums.
            (
                "((int16)7 + w) * (int16)-3000 - ((w - (int16)5) + (int16)9)",
                1,
            ),
            ("int16(y) * (int16)2 + (int16)1", 1),
        ] {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            let f = fold_offset_constants(&e);
            let consts = crate::ir::visit::post_order(&f)
                .iter()
                .filter(|n| {
                    matches!(n.op(), crate::ir::Op::Add | crate::ir::Op::Sub)
                        && n.args().iter().any(|a| a.as_const().is_some())
                })
                .count();
            assert_eq!(consts, adds, "{text} became {f}");
            assert_same_values(&e, &f, &types);
        }
        // Chains of products and left shifts by constants become one product, wrapping.
        for (text, products) in [
            ("(int32(w) << (int32)4) * (int32)9", 1),
            ("((int16)3 * (w << (int16)15)) * (int16)5", 1),
            ("(int32(w) * (int32)100000) * (int32)100000", 1),
        ] {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            let f = fold_offset_constants(&e);
            let ops = crate::ir::visit::post_order(&f)
                .iter()
                .filter(|n| matches!(n.op(), crate::ir::Op::Mul | crate::ir::Op::Shl))
                .count();
            assert_eq!(ops, products, "{text} became {f}");
            assert_same_values(&e, &f, &types);
        }
        // Products of two variables and saturating arithmetic are left alone.
        for text in [
            "(w + (int16)1) * w",
            "saturating_add(w, (int16)3) + (int16)4",
        ] {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            let f = fold_offset_constants(&e);
            assert_same_values(&e, &f, &types);
            assert!(
                crate::ir::visit::post_order(&f).len() <= crate::ir::visit::post_order(&e).len()
            );
        }
    }

    #[test]
    fn wrapping_truncations_move_to_the_leaves_exactly() {
        let vars = [("a", "i8x8"), ("b", "u8x8")];
        assert_narrowed_below_32_bits_exactly(
            "int16(int32(a) * (int32)3 + (int32(b) << (int32)2) - select(a < (int8)0, int32(b), (int32)-7))",
            &vars,
        );
        // A truncation of a division stays where it is: its low bits need every bit.
        let d = crate::syntax::halide::parse_with_vars("int8(int32(a) / (int32)3)", &vars);
        assert_eq!(narrow_truncated_arithmetic(&d), d);
    }

    #[test]
    fn truncated_shifts_and_halving_adds_are_computed_in_twice_the_width() {
        let vars = [("a", "i16x8"), ("b", "u16x8")];
        for text in [
            "uint8(halving_add(int32(a) * (int32)4, int32(a) + int32(b)) | int32(b))",
            "int8((int32(a) * int32(b)) >> (int32)5)",
            "uint8(rounding_halving_add(int32(a) - int32(b), int32(b) << (int32)3))",
            "int8(halving_sub(uint32(b) * (uint32)3, uint32(a)))",
        ] {
            assert_narrowed_below_32_bits_exactly(text, &vars);
        }
        // Nine low bits of a shift by nine need more than twice eight bits: kept.
        let e = crate::syntax::halide::parse_with_vars("int8(int32(a) >> (int32)9)", &vars);
        assert_eq!(narrow_truncated_arithmetic(&e), e);
    }

    #[test]
    fn unsigned_sums_of_sign_extensions_are_computed_signed() {
        let (i8t, u8t) = (
            Type::parse("i8x8", false).unwrap(),
            Type::parse("u8x8", false).unwrap(),
        );
        let vars = [("a", "i8x8"), ("b", "u8x8")];
        let e = crate::syntax::halide::parse_with_vars(
            "((uint16(a) + uint16(b)) * (uint16)3) - (uint16(a) << (uint16)2)",
            &vars,
        );
        let n = wrapping_in_signed(&e).expect("a sign extension to u16");
        assert!(
            crate::ir::visit::any_node(&n, |x| x.ty().elem == crate::types::Elem::I16
                && matches!(x.op(), crate::ir::Op::Add)),
            "the sum is in i16: {n}"
        );
        assert_same_values(&e, &n, &[("a", i8t), ("b", u8t)]);
        let unsigned_only = crate::syntax::halide::parse_with_vars("uint16(b) + (uint16)1", &vars);
        assert!(wrapping_in_signed(&unsigned_only).is_none());
        // From a quarter of the width: no signed widening instruction takes it.
        let quarter = crate::syntax::halide::parse_with_vars("uint32(a) + (uint32)1", &vars);
        assert!(wrapping_in_signed(&quarter).is_none());
    }

    #[test]
    fn bounded_operations_are_computed_in_the_narrowest_type_holding_them() {
        let u8t = Type::parse("u8x8", false).unwrap();
        let vars = [("a", "u8x8"), ("b", "u8x8")];
        let e = crate::syntax::halide::parse_with_vars(
            "saturating_cast<int8>(saturating_add(int32(a) - int32(b), (int32(a) - (int32)76) * (int32)5))",
            &vars,
        );
        let n = narrow_truncated_arithmetic(&narrow_bounded_arithmetic(&e));
        assert!(
            !crate::ir::visit::any_node(&n, |x| x.ty().elem.bits() == 32),
            "every value fits 16 bits: {n}"
        );
        assert_same_values(&e, &n, &[("a", u8t), ("b", u8t)]);
        // A product that may not fit stays wide.
        let w = crate::syntax::halide::parse_with_vars("int32(a) * (int32)300 * int32(b)", &vars);
        let nw = narrow_bounded_arithmetic(&w);
        assert_eq!(nw.ty(), w.ty());
        assert_same_values(&w, &nw, &[("a", u8t), ("b", u8t)]);
        assert!(crate::ir::visit::any_node(&nw, |x| matches!(
            x.op(),
            crate::ir::Op::Mul
        ) && x.ty().elem.bits()
            == 32));
    }

    #[test]
    fn a_high_product_that_fits_its_type_is_the_product_shifted() {
        let (i16t, i8t, u16t) = (
            Type::parse("i16x8", false).unwrap(),
            Type::parse("i8x8", false).unwrap(),
            Type::parse("u16x8", false).unwrap(),
        );
        let vars = [("a", "i16x8"), ("b", "i8x8"), ("u", "u16x8")];
        let is_high_part = |x: &Expr| matches!(x.op(), crate::ir::Op::MulShiftRight);
        for text in [
            // fuzz_5_130: a half word by a negated byte, shifted by 31.
            "mul_shift_right(int32(a), int32(b) * (int32)-1, (uint32)31)",
            "mul_shift_right(int32(a), int32(a), (uint32)7)",
            "mul_shift_right(uint32(u), uint32(u), (uint32)0)",
        ] {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            assert!(crate::ir::visit::any_node(
                &narrow_bounded_arithmetic(&e),
                is_high_part
            ));
            let n = narrow_bounded_arithmetic_and_high_products(&e);
            assert!(!crate::ir::visit::any_node(&n, is_high_part), "{text}: {n}");
            assert_same_values(&e, &n, &[("a", i16t), ("b", i8t), ("u", u16t)]);
        }
        // A product that may leave the type keeps its saturating high part.
        for text in [
            "mul_shift_right(int32(a) * (int32)2, int32(a) * (int32)2, (uint32)31)",
            "mul_shift_right(int16(b), int16(b) * (int16)2, (uint16)8)",
        ] {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            let n = narrow_bounded_arithmetic_and_high_products(&e);
            assert!(crate::ir::visit::any_node(&n, is_high_part), "{text}: {n}");
            assert_same_values(&e, &n, &[("a", i16t), ("b", i8t), ("u", u16t)]);
        }
    }

    #[test]
    fn bounded_divisions_and_bitwise_operations_are_narrowed_exactly() {
        let (u8t, i8t) = (
            Type::parse("u8x8", false).unwrap(),
            Type::parse("i8x8", false).unwrap(),
        );
        let vars = [("a", "u8x8"), ("b", "u8x8"), ("c", "i8x8"), ("d", "i8x8")];
        for text in [
            // Unsigned, by a constant, and by a value that may be zero.
            "int32((uint32(a) / (uint32)7) ^ (uint32(b) >> (uint32)1))",
            "int32(uint32(a) / (uint32(b) + (uint32)1)) | int32(b)",
            // Signed, rounding down, with negative operands on both sides.
            "(int32(c) - int32(d)) / (int32)7",
            "int32(a) & ((int32(c) - int32(d)) / (int32)-3)",
            "(int32(c) * (int32)3) / (int32(d) - (int32)2)",
        ] {
            let e = crate::syntax::halide::parse_with_vars(text, &vars);
            let n = narrow_bounded_arithmetic(&e);
            assert!(
                !crate::ir::visit::any_node(&n, |x| matches!(
                    x.op(),
                    crate::ir::Op::Div
                        | crate::ir::Op::And
                        | crate::ir::Op::Or
                        | crate::ir::Op::Xor
                ) && x.ty().elem.bits() == 32),
                "{text}: every division and bitwise operation fits 16 bits: {n}"
            );
            assert_same_values(&e, &n, &[("a", u8t), ("b", u8t), ("c", i8t), ("d", i8t)]);
        }
    }

    #[test]
    fn sums_sharing_a_multiplier_are_factored_exactly() {
        let t = Type::parse("i32x8", false).unwrap();
        let decls = crate::syntax::elab::Decls::new()
            .var("a", t)
            .var("b", t)
            .var("c", t)
            .var("d", t);
        let e = crate::syntax::halide::parse_str("a*6 + b + 6*c + (d*15 + b*15)", &decls)
            .unwrap_or_else(|d| panic!("{d}"));
        let f = factor_common_multipliers(&e);
        assert_eq!(
            f.to_string(),
            "((((a + c) * x8(6)) + b) + ((d + b) * x8(15)))"
        );
        let mut rng = crate::util::rng::SplitMix64::new(3);
        for _ in 0..50 {
            let mut env = crate::interp::Env::new();
            for v in ["a", "b", "c", "d"] {
                let lanes = (0..8).map(|_| rng.lane(crate::types::Elem::I32)).collect();
                env.set(v, crate::interp::Value { ty: t, lanes });
            }
            assert_eq!(
                crate::interp::eval(&e, &env).unwrap(),
                crate::interp::eval(&f, &env).unwrap()
            );
        }
        // Nothing shared: unchanged.
        let g = crate::syntax::halide::parse_str("a*6 + b*7", &decls).unwrap();
        assert_eq!(factor_common_multipliers(&g), g);
    }
}
