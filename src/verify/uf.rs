//! Products as uninterpreted functions.
//!
//! A lowering rule often multiplies the same operand on both sides by two different
//! spellings of one constant (`a * i16(c0)` against an instruction that multiplies `a` by
//! a byte of a register holding `c0` four times). Bit-blasting two multipliers and proving
//! them equal is hard for a SAT solver; proving their operands equal is easy. Replacing every
//! product of non-literal operands by an uninterpreted function `mul<w>` (with its operands
//! in a fixed order, since multiplication commutes) asks exactly that: real multiplication is
//! one interpretation of the function, so a proof of the abstracted query proves the
//! original. A model of it proves nothing, and the exact query is asked instead.

use std::collections::{BTreeSet, HashMap};

use easy_smt::{Context, SExpr, SExprData};

/// The bit width of a bit-vector term (`None` for Booleans and what is not understood).
fn width(
    ctx: &Context,
    e: SExpr,
    consts: &HashMap<String, u32>,
    memo: &mut HashMap<SExpr, Option<u32>>,
) -> Option<u32> {
    if let Some(w) = memo.get(&e) {
        return *w;
    }
    let w = match ctx.get(e) {
        SExprData::Atom(a) => consts.get(a).copied(),
        SExprData::String(_) => None,
        SExprData::List(items) => {
            let items = items.to_vec();
            match ctx.get(items[0]) {
                SExprData::Atom("_") => {
                    // A literal `(_ bvN w)`.
                    items.get(2).and_then(|n| ctx.get_u32(*n))
                }
                SExprData::Atom(op) => match op {
                    "concat" => {
                        let a = width(ctx, items[1], consts, memo);
                        let b = width(ctx, items[2], consts, memo);
                        a.zip(b).map(|(x, y)| x + y)
                    }
                    "ite" => width(ctx, items[2], consts, memo),
                    _ if op.starts_with("bv") && !is_predicate(op) => {
                        width(ctx, items[1], consts, memo)
                    }
                    _ => None,
                },
                SExprData::List(head) => {
                    let head = head.to_vec();
                    let name = ctx.get_atom(head[1]).unwrap_or("");
                    let idx: Vec<u32> = head[2..].iter().filter_map(|n| ctx.get_u32(*n)).collect();
                    match (name, idx.as_slice()) {
                        ("extract", [hi, lo]) => Some(hi - lo + 1),
                        ("zero_extend" | "sign_extend", [k]) => {
                            width(ctx, items[1], consts, memo).map(|w| w + k)
                        }
                        ("repeat", [k]) => width(ctx, items[1], consts, memo).map(|w| w * k),
                        ("rotate_left" | "rotate_right", _) => width(ctx, items[1], consts, memo),
                        _ => None,
                    }
                }
                SExprData::String(_) => None,
            }
        }
    };
    memo.insert(e, w);
    w
}

fn is_predicate(op: &str) -> bool {
    matches!(
        op,
        "bvult" | "bvule" | "bvugt" | "bvuge" | "bvslt" | "bvsle" | "bvsgt" | "bvsge"
    )
}

/// True when a term mentions no declared constant (a literal, or arithmetic on literals):
/// products by those stay exact, as they are cheap shifts and adds.
fn is_ground(
    ctx: &Context,
    e: SExpr,
    consts: &HashMap<String, u32>,
    memo: &mut HashMap<SExpr, bool>,
) -> bool {
    if let Some(g) = memo.get(&e) {
        return *g;
    }
    let g = match ctx.get(e) {
        SExprData::Atom(a) => !consts.contains_key(a),
        SExprData::List(items) => items
            .to_vec()
            .iter()
            .all(|&i| is_ground(ctx, i, consts, memo)),
        SExprData::String(_) => true,
    };
    memo.insert(e, g);
    g
}

/// The name of the uninterpreted product at width `w`.
pub fn mul_name(w: u32) -> String {
    format!("mul{w}")
}

/// `e` with every product of two non-literal operands replaced by `mul<w>`, and the widths
/// used; `None` when nothing was replaced.
pub fn abstract_products(
    ctx: &Context,
    e: SExpr,
    consts: &HashMap<String, u32>,
) -> Option<(SExpr, BTreeSet<u32>)> {
    let mut m = Memo::default();
    let r = rebuild(ctx, e, consts, &mut m);
    (!m.used.is_empty()).then_some((r, m.used))
}

/// What one abstraction pass remembers about the terms it has seen.
#[derive(Default)]
struct Memo {
    rebuilt: HashMap<SExpr, SExpr>,
    widths: HashMap<SExpr, Option<u32>>,
    prints: HashMap<SExpr, u64>,
    ground: HashMap<SExpr, bool>,
    used: BTreeSet<u32>,
}

fn rebuild(ctx: &Context, e: SExpr, consts: &HashMap<String, u32>, m: &mut Memo) -> SExpr {
    if let Some(r) = m.rebuilt.get(&e) {
        return *r;
    }
    let r = match ctx.get(e) {
        SExprData::List(items) => {
            let items = items.to_vec();
            let new: Vec<SExpr> = items.iter().map(|&i| rebuild(ctx, i, consts, m)).collect();
            let is_mul = matches!(ctx.get(items[0]), SExprData::Atom("bvmul"));
            if is_mul
                && new.len() == 3
                && !is_ground(ctx, new[1], consts, &mut m.ground)
                && !is_ground(ctx, new[2], consts, &mut m.ground)
                && let Some(w) = width(ctx, items[1], consts, &mut m.widths)
            {
                m.used.insert(w);
                // Multiplication commutes: a fixed operand order lets `b * a` meet `a * b`.
                let (x, y) = if fingerprint(ctx, new[1], &mut m.prints)
                    <= fingerprint(ctx, new[2], &mut m.prints)
                {
                    (new[1], new[2])
                } else {
                    (new[2], new[1])
                };
                ctx.list(vec![ctx.atom(mul_name(w)), x, y])
            } else if new == items {
                e
            } else {
                ctx.list(new)
            }
        }
        _ => e,
    };
    m.rebuilt.insert(e, r);
    r
}

/// A structural hash of a term, the same in every run (terms are DAGs; printing them
/// would take time exponential in their sharing).
fn fingerprint(ctx: &Context, e: SExpr, memo: &mut HashMap<SExpr, u64>) -> u64 {
    use std::hash::{Hash, Hasher};
    if let Some(h) = memo.get(&e) {
        return *h;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match ctx.get(e) {
        SExprData::Atom(a) | SExprData::String(a) => a.hash(&mut h),
        SExprData::List(items) => {
            for &i in items.to_vec().iter() {
                fingerprint(ctx, i, memo).hash(&mut h);
            }
        }
    }
    let v = h.finish();
    memo.insert(e, v);
    v
}
