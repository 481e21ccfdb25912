//! Generalizing a synthesized rule's constant into a range (Pitchfork's generalization of
//! constants into predicates): a rule found for `rounding_shift_right(a, 3)` as
//! `avg(0, a >> 2)` holds for every shift `c0` with `a >> (c0 - 1)`, within a range.
//!
//! The term's one distinct constant becomes the wildcard `c0`. Each constant of the
//! sequence is kept, or written as one of a few functions of `c0` that give its value at
//! the term's constant ([`TEMPLATES`]; `log2(c0)` with the condition `is_pow2(c0)`, over
//! the powers of two). The range starts as wide as the constants' types
//! and the immediates' ranges allow, and shrinks on each
//! counterexample the prover gives (to just past the failing value, then by halves), until
//! the rule is proved over a range wider than the one value or the attempts run out.

use std::collections::HashMap;

use crate::ir::{Expr, Op};
use crate::types::Type;

use super::Term;

/// Functions of `c0` a sequence's constant may be written as: the rule text and the value.
type Template = (&'static str, fn(i128) -> Option<i128>);

/// The forms tried, in this order. `log2(c0)` holds only for powers of two: a form using
/// it adds `is_pow2(c0)` to the rule's condition ([`POW2_FORM`]).
const TEMPLATES: [Template; 7] = [
    ("c0", |c| Some(c)),
    ("c0 - 1", |c| Some(c - 1)),
    ("c0 + 1", |c| Some(c + 1)),
    ("1 << c0", |c| (0..=62).contains(&c).then(|| 1i128 << c)),
    ("(1 << c0) - 1", |c| {
        (0..=62).contains(&c).then(|| (1i128 << c) - 1)
    }),
    ("1 << (c0 - 1)", |c| {
        (1..=63).contains(&c).then(|| 1i128 << (c - 1))
    }),
    (POW2_FORM, |c| is_pow2(c).then(|| c.trailing_zeros().into())),
];

/// The form defined on powers of two only.
const POW2_FORM: &str = "log2(c0)";

fn is_pow2(c: i128) -> bool {
    c > 0 && c & (c - 1) == 0
}

/// The values the forms give at `k`.
pub fn related_values(k: i128) -> Vec<i128> {
    TEMPLATES.iter().filter_map(|(_, f)| f(k)).collect()
}

/// Most forms of the sequence tried, and most proofs per form.
const MAX_FORMS: usize = 16;
const MAX_PROOFS: usize = 12;

/// A constant leaf of an expression: where it is, its value, and the values it may take
/// (its type's, or its immediate's range).
struct Leaf {
    id: usize,
    ty: Type,
    value: i128,
    range: (i128, i128),
}

/// Constant leaves of `e`, with the range each may take.
fn leaves(e: &Expr) -> Vec<Leaf> {
    let mut ranges: HashMap<usize, (i128, i128)> = HashMap::new();
    for n in crate::ir::visit::post_order(e) {
        for (i, a) in n.args().iter().enumerate() {
            if !matches!(a.op(), Op::Const(_)) {
                continue;
            }
            // A literal cast to a lane type takes that type's values; an immediate its
            // range.
            let r = match n.op() {
                Op::Cast => Some(elem_range(n.ty())),
                Op::Instr(ins) => ins.imm_range.get(i).copied().flatten(),
                _ => None,
            };
            if let Some(r) = r {
                ranges.insert(a.id(), r);
            }
        }
    }
    crate::ir::visit::post_order(e)
        .into_iter()
        .filter(|n| matches!(n.op(), Op::Const(_)) && n.ty().is_scalar())
        .filter_map(|n| {
            let value = n.as_const()?;
            let range = ranges
                .get(&n.id())
                .copied()
                .unwrap_or_else(|| elem_range(n.ty()));
            Some(Leaf {
                id: n.id(),
                ty: n.ty(),
                value,
                range,
            })
        })
        .collect()
}

fn elem_range(t: Type) -> (i128, i128) {
    (t.elem.min_value(), t.elem.max_value().unwrap_or(i128::MAX))
}

/// `e` printed with each leaf of `subst` written as its text.
fn print_with(e: &Expr, leaves: &[Leaf], subst: &[Option<&str>]) -> Option<String> {
    let mut names: HashMap<usize, (String, String)> = HashMap::new();
    for (k, (leaf, text)) in leaves.iter().zip(subst).enumerate() {
        if let Some(text) = text {
            // A bare wildcard is an `i32`; other lanes take it through a cast.
            let shown = if leaf.ty == Type::INDEX {
                if text.chars().all(|c| c.is_ascii_alphanumeric()) {
                    text.to_string()
                } else {
                    format!("({text})")
                }
            } else {
                format!("{}({text})", leaf.ty.halide_name())
            };
            names.insert(leaf.id, (format!("hv_synth_k{k}"), shown));
        }
    }
    let placed = crate::ir::visit::rebuild(e, |n, args| -> Result<Expr, ()> {
        match names.get(&n.id()) {
            Some((name, _)) => Ok(Expr::var(name.as_str(), n.ty())),
            None if args.is_empty() => Ok(n.clone()),
            None => n.with_args(args).map_err(|_| ()),
        }
    })
    .ok()?;
    let mut text = placed.to_string();
    // Longest names first, so `hv_synth_k1` does not replace part of `hv_synth_k10`.
    let mut all: Vec<&(String, String)> = names.values().collect();
    all.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
    for (name, shown) in all {
        text = text.replace(name.as_str(), shown);
    }
    Some(text)
}

/// The generalized rule for a proved `term => rhs`, when its constant generalizes to a
/// range wider than the one value: the rule text with its `if` range.
pub fn generalize(
    term: &Term,
    rhs: &Expr,
    header: &str,
    name: &str,
    prove: &super::Prover,
) -> Option<String> {
    let lhs_leaves = leaves(&term.expr);
    let k = lhs_leaves.first()?.value;
    if lhs_leaves.iter().any(|l| l.value != k) {
        return None;
    }
    let rhs_leaves = leaves(rhs);
    // Each constant of the sequence: kept, or one of the forms giving its value at `k`.
    let options: Vec<Vec<Option<Template>>> = rhs_leaves
        .iter()
        .map(|l| {
            let mut o: Vec<Option<Template>> = TEMPLATES
                .iter()
                .filter(|(_, f)| f(k) == Some(l.value))
                .map(|t| Some(*t))
                .collect();
            o.push(None);
            o
        })
        .collect();
    let params = super::rule_params(term);
    let lhs_text = print_with(&term.expr, &lhs_leaves, &vec![Some("c0"); lhs_leaves.len()])?;
    for form in forms(&options).into_iter().take(MAX_FORMS) {
        // A form that keeps every constant holds at `k` alone.
        if form.iter().all(Option::is_none) {
            continue;
        }
        let texts: Vec<Option<&str>> = form.iter().map(|t| t.map(|(s, _)| s)).collect();
        let rhs_text = print_with(rhs, &rhs_leaves, &texts)?;
        // Every constant written in `c0` stays within its type or immediate range.
        let fits = |c: i128| {
            lhs_leaves
                .iter()
                .all(|l| (l.range.0..=l.range.1).contains(&c))
                && rhs_leaves.iter().zip(&form).all(|(l, t)| match t {
                    Some((_, f)) => f(c).is_some_and(|v| (l.range.0..=l.range.1).contains(&v)),
                    None => true,
                })
        };
        if !fits(k) {
            continue;
        }
        let pow2 = texts.contains(&Some(POW2_FORM));
        let (ty_lo, ty_hi) = lhs_leaves[0].range;
        let (mut lo, mut hi) = if pow2 {
            pow2_edges(k, (ty_lo, ty_hi), &fits)
        } else {
            (edge(k, ty_lo, &fits), edge(k, ty_hi, &fits))
        };
        let guard = if pow2 { "is_pow2(c0) && " } else { "" };
        for attempt in 0..MAX_PROOFS {
            // A range of one value (one power of two) is the rule found.
            let one = if pow2 {
                // Another power of two in the range means one next to `k`.
                let below = k >= 2 && k / 2 >= lo;
                let above = k.checked_mul(2).is_some_and(|d| d <= hi);
                !(below || above)
            } else {
                lo == hi
            };
            if one {
                break;
            }
            let rule = format!(
                "{header}rule {name}({params}):\n    {lhs_text} => {rhs_text} if {guard}{lo} <= c0 && c0 <= {hi}\n"
            );
            match prove(&rule) {
                Ok(None) => return Some(rule),
                Ok(Some(cex)) => {
                    let Some(&(_, v)) = cex.constants.iter().find(|(n, _)| n == "c0") else {
                        break;
                    };
                    match shrink((lo, hi), k, v, attempt >= MAX_PROOFS / 2) {
                        Some(r) => (lo, hi) = r,
                        None => break,
                    }
                }
                Err(_) => break,
            }
        }
    }
    None
}

/// The last value from `k` towards `limit` at which `fits` holds, `fits(k)` being true.
/// The values that fit are an interval (each constant's range, read through a monotone
/// form), so a binary search finds its edge.
fn edge(k: i128, limit: i128, fits: &dyn Fn(i128) -> bool) -> i128 {
    let (mut good, mut bad) = (k, limit);
    if fits(limit) {
        return limit;
    }
    // `good` fits, `bad` does not; both move towards each other.
    while (bad - good).abs() > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    good
}

/// The powers of two either side of `k` (itself one) at which `fits` holds, as far as they
/// go without a gap and within `range`.
fn pow2_edges(k: i128, range: (i128, i128), fits: &dyn Fn(i128) -> bool) -> (i128, i128) {
    let (mut lo, mut hi) = (k, k);
    while lo > 1 && lo / 2 >= range.0 && fits(lo / 2) {
        lo /= 2;
    }
    while hi <= range.1 / 2 && fits(hi * 2) {
        hi *= 2;
    }
    (lo, hi)
}

/// The range `(lo, hi)` around `k` without the failing value `v`: cut just past `v`, or
/// with `halve` at least halfway towards `k` on `v`'s side, so that a range with many
/// failing values ends in a few proofs. `None` when `v` is `k` itself (the found rule
/// does not hold as written: nothing to shrink).
fn shrink((lo, hi): (i128, i128), k: i128, v: i128, halve: bool) -> Option<(i128, i128)> {
    if v < k {
        let cut = if halve {
            (v + 1).max(k - (k - lo) / 2)
        } else {
            v + 1
        };
        Some((cut.max(lo), hi))
    } else if v > k {
        let cut = if halve {
            (v - 1).min(k + (hi - k) / 2)
        } else {
            v - 1
        };
        Some((lo, cut.min(hi)))
    } else {
        None
    }
}

/// Every choice of one option per constant, the first options first.
fn forms(options: &[Vec<Option<Template>>]) -> Vec<Vec<Option<Template>>> {
    let mut out: Vec<Vec<Option<Template>>> = vec![vec![]];
    for o in options {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                o.iter().map(move |t| {
                    let mut p = prefix.clone();
                    p.push(*t);
                    p
                })
            })
            .take(MAX_FORMS * 4)
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Options;
    use super::*;

    #[test]
    fn a_counterexample_cuts_the_range_on_its_side_of_the_found_value() {
        assert_eq!(shrink((1, 256), 3, 200, false), Some((1, 199)));
        assert_eq!(shrink((1, 256), 3, 1, false), Some((2, 256)));
        // Halving: at least halfway towards the found value.
        assert_eq!(shrink((1, 257), 3, 250, true), Some((1, 130)));
        assert_eq!(shrink((1, 257), 3, 20, true), Some((1, 19)));
        assert_eq!(shrink((-100, 10), 0, -90, true), Some((-50, 10)));
        assert_eq!(shrink((1, 9), 3, 3, false), None);
        // The edges of what fits, from the found value.
        let fits = |c: i128| (0..=255).contains(&(c - 1));
        assert_eq!(edge(3, 65535, &fits), 256);
        assert_eq!(edge(3, 0, &fits), 1);
        assert_eq!(edge(3, 200, &fits), 200);
    }

    #[test]
    fn a_product_by_a_power_of_two_generalizes_to_every_power_of_two() {
        let backend = crate::targets::backend_from("arm-neon", crate::targets::RulesFrom::Hand)
            .expect("target builds");
        crate::verify::solver_available("z3").unwrap_or_else(|e| panic!("{e}"));
        let decls = crate::syntax::elab::Decls::new()
            .var("c", Type::parse("i16x8", false).expect("a type"));
        let expr = crate::syntax::halide::parse_str("c * i16(8)", &decls).expect("parses");
        let term = Term::new("mul", &expr);
        let opts = Options {
            max_instrs: 1,
            ..Default::default()
        };
        let r = super::super::synthesize(&term, &backend, &opts, 0);
        let super::super::Verdict::Found { rule, .. } = &r.verdict else {
            panic!("{:?}", r.verdict);
        };
        // `shl #3` found; every power of two an i16 holds, through `log2`.
        assert!(
            rule.contains("(c * x8(int16(c0))) => (int16x8)vshlq_n_s16(c, (log2(c0)))")
                && rule.contains("if is_pow2(c0) && 1 <= c0 && c0 <= 16384"),
            "{rule}"
        );
        assert_eq!(pow2_edges(8, (-32768, 32767), &|_| true), (1, 16384));
        assert_eq!(pow2_edges(8, (0, 255), &|c| c <= 32), (1, 32));
    }

    #[test]
    fn a_halving_add_of_a_constant_generalizes_to_every_constant_but_zero() {
        let backend = crate::targets::backend_from("x86-avx2", crate::targets::RulesFrom::Hand)
            .expect("target builds");
        crate::verify::solver_available("z3").unwrap_or_else(|e| panic!("{e}"));
        let decls = crate::syntax::elab::Decls::new()
            .var("d", Type::parse("u8x32", false).expect("a type"));
        let expr = crate::syntax::halide::parse_str("halving_add(d, u8(10))", &decls)
            .expect("the term parses");
        let term = Term::new("hadd", &expr);
        let opts = Options {
            max_instrs: 2,
            ..Default::default()
        };
        let r = super::super::synthesize(&term, &backend, &opts, 0);
        let super::super::Verdict::Found { rule, .. } = &r.verdict else {
            panic!("{:?}", r.verdict);
        };
        // `(d + k) >> 1` is `vpavgb(d, k - 1)`, for every `k - 1` a byte holds.
        assert!(
            rule.contains("halving_add(d, x32(uint8(c0)))")
                && rule.contains("_mm256_avg_epu8(d, x32(uint8(c0 - 1)))")
                && rule.contains("if 1 <= c0 && c0 <= 255"),
            "{rule}"
        );
        // The generalized rule is what was proved, and it loads as any rule file.
        assert_eq!(super::super::prove(rule, &backend, &opts), Ok(None));
    }
}
