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
    distributivity_lemmas(ctx, &m.products, &mut m.lemmas);
    let r = m.lemmas.iter().fold(r, |acc, l| ctx.and(acc, *l));
    (!m.used.is_empty()).then_some((r, m.used))
}

/// What one abstraction pass remembers about the terms it has seen.
#[derive(Default)]
struct Memo {
    rebuilt: HashMap<SExpr, SExpr>,
    widths: HashMap<SExpr, Option<u32>>,
    prints: HashMap<SExpr, u64>,
    ground: HashMap<SExpr, bool>,
    mentions: HashMap<SExpr, Vec<String>>,
    /// Facts about the uninterpreted products that real multiplication satisfies.
    lemmas: Vec<SExpr>,
    /// Products already given their lemmas.
    bounded: std::collections::HashSet<SExpr>,
    /// Every uninterpreted product made: `(product, left, right, width)`.
    products: Vec<(SExpr, SExpr, SExpr, u32)>,
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
                // A shifted operand comes out of the product: `a * (b << s)` is
                // `(a * b) << s` in modular arithmetic, so products of `b` and of `2b` meet.
                // Under an extension that holds only when the shift does not overflow, so
                // that case keeps the plain product.
                let shifted = [(1, 2), (2, 1)]
                    .into_iter()
                    .find_map(|(i, j)| Some((shifted_operand(ctx, new[i])?, new[j])));
                match shifted {
                    Some(((base, s, exact), other)) => {
                        let pulled = ctx.list(vec![
                            ctx.atom("bvshl"),
                            uf_mul(ctx, other, base, w, consts, m),
                            crate::verify::smt::konst(ctx, w, s as u128),
                        ]);
                        match exact {
                            None => pulled,
                            Some(cond) => {
                                let plain = uf_mul(ctx, new[1], new[2], w, consts, m);
                                ctx.ite(cond, pulled, plain)
                            }
                        }
                    }
                    None => uf_mul(ctx, new[1], new[2], w, consts, m),
                }
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

/// Products narrower than this are taken at this width (see [`uf_mul`]).
const WIDE: u32 = 64;

/// `e` (of `w` bits) as an extension of the narrowest value it extends: `(value, its
/// width, signed)`; a term that is no extension extends itself, read as signed.
fn peel(ctx: &Context, e: SExpr, w: u32) -> (SExpr, u32, bool) {
    let (mut cur, mut width, mut signed) = (e, w, true);
    let mut first = true;
    loop {
        let Some((kind, k, inner)) = extension(ctx, cur) else {
            return (cur, width, signed);
        };
        let zero = kind == "zero_extend";
        // A sign extension of a zero extension is a zero extension; a zero extension of a
        // sign extension is not an extension of the narrower value.
        if !first && !signed && !zero {
            return (cur, width, signed);
        }
        if !first && signed && zero {
            return (cur, width, signed);
        }
        signed = if first { !zero } else { signed && !zero };
        first = false;
        cur = inner;
        width -= k;
    }
}

/// `(kind, bits added, operand)` of an extension term.
fn extension(ctx: &Context, e: SExpr) -> Option<(&str, u32, SExpr)> {
    let items = ctx.get_list(e)?;
    if items.len() != 2 {
        return None;
    }
    let head = ctx.get_list(items[0])?;
    if head.len() != 3 || ctx.get_atom(head[0]) != Some("_") {
        return None;
    }
    let kind = ctx.get_atom(head[1])?;
    if !matches!(kind, "sign_extend" | "zero_extend") {
        return None;
    }
    Some((kind, ctx.get_u32(head[2])?, items[1]))
}

/// `mul<w>(x, y)` with its operands in a fixed order: multiplication commutes, so `b * a`
/// meets `a * b`. Operands are ordered first by the constants they mention, so `a * c0` and
/// `a * f(c0)` (one constant spelled two ways) put `a` on the same side.
///
/// A product of at most 64 bits is the low bits of the 64-bit product of its operands'
/// narrowest values, extended (`x * y` and the extensions of both to 64 bits agree modulo
/// `2^w`): so the same product built at different widths (`a * c` at 32 bits on one side,
/// at its exact 24 bits on the other) becomes one term.
fn uf_mul(
    ctx: &Context,
    x: SExpr,
    y: SExpr,
    w: u32,
    consts: &HashMap<String, u32>,
    m: &mut Memo,
) -> SExpr {
    if w < WIDE {
        let wide = |(v, n, signed): (SExpr, u32, bool)| {
            if n == WIDE {
                v
            } else {
                let kind = if signed { "sign_extend" } else { "zero_extend" };
                crate::verify::smt::app_idx(ctx, kind, &[WIDE - n], vec![v])
            }
        };
        let (px, py) = (peel(ctx, x, w), peel(ctx, y, w));
        m.used.insert(WIDE);
        let p = uf_mul(ctx, wide(px), wide(py), WIDE, consts, m);
        return crate::verify::smt::extract(ctx, w - 1, 0, p);
    }
    let kx = (
        mentions(ctx, x, consts, &mut m.mentions),
        fingerprint(ctx, x, &mut m.prints),
    );
    let ky = (
        mentions(ctx, y, consts, &mut m.mentions),
        fingerprint(ctx, y, &mut m.prints),
    );
    let (x, y) = if kx <= ky { (x, y) } else { (y, x) };
    let p = ctx.list(vec![ctx.atom(mul_name(w)), x, y]);
    if m.bounded.insert(p) {
        magnitude_lemmas(ctx, p, x, y, w, &mut m.lemmas);
        m.products.push((p, x, y, w));
    }
    p
}

/// The largest number of products sharing an operand that get distributivity lemmas (their
/// number grows with the cube of it).
const MAX_SHARED: usize = 6;

/// Negation and distributivity facts. For products `x * y` and `x * u` of one operand,
/// `u = -y` implies `x * u = -(x * y)`; for products `x * y`, `x * u` and `x * v`,
/// `y = (u << k) + v` implies `x * y = ((x * u) << k) + x * v` (modular multiplication
/// distributes over addition and commutes with shifts). An instruction pair that multiplies
/// by the two half words of an operand (vmpye then vmpyo on HVX) is proved against the full
/// product this way: with free products the solver cannot see that they add up, and
/// bit-blasting the real 64-bit products is beyond it. The antecedent is a linear fact about
/// the operands, so it costs the solver little; `k` is tried at the half-word and byte
/// splits.
fn distributivity_lemmas(
    ctx: &Context,
    products: &[(SExpr, SExpr, SExpr, u32)],
    out: &mut Vec<SExpr>,
) {
    use crate::verify::smt::{app, konst};
    // Products grouped by an operand they share (either position), in the order the
    // products were made, so the query (and so its cache key) is the same in every run.
    let mut index: HashMap<SExpr, usize> = HashMap::new();
    let mut groups: Vec<Vec<(SExpr, SExpr)>> = Vec::new();
    for &(p, x, y, _) in products {
        for (shared, other) in [(x, y), (y, x)] {
            let i = *index.entry(shared).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            if !groups[i].contains(&(p, other)) {
                groups[i].push((p, other));
            }
        }
    }
    let widths: HashMap<SExpr, u32> = products.iter().map(|&(p, _, _, w)| (p, w)).collect();
    let groups: Vec<_> = groups.into_iter().filter(|g| g.len() >= 2).collect();
    // Negation: `u = -y` implies `x * u = -(x * y)` (a product by a negated constant
    // against the subtraction of the product by the constant).
    for group in groups.iter().filter(|g| g.len() <= MAX_SHARED) {
        for &(py, y) in group {
            for &(pu, u) in group {
                if py != pu && widths[&py] == widths[&pu] {
                    let neg = |t: SExpr| app(ctx, "bvneg", vec![t]);
                    out.push(ctx.imp(ctx.eq(u, neg(y)), ctx.eq(pu, neg(py))));
                }
            }
        }
    }
    for group in groups
        .iter()
        .filter(|g| (3..=MAX_SHARED).contains(&g.len()))
    {
        for &(py, y) in group {
            let w = widths[&py];
            for &(pu, u) in group {
                for &(pv, v) in group {
                    if py == pu || py == pv || pu == pv {
                        continue;
                    }
                    for k in [8u32, 16, 32] {
                        if k >= w {
                            continue;
                        }
                        let shl = |t: SExpr| app(ctx, "bvshl", vec![t, konst(ctx, w, k as u128)]);
                        let sum = |a: SExpr, b: SExpr| app(ctx, "bvadd", vec![shl(a), b]);
                        out.push(ctx.imp(ctx.eq(y, sum(u, v)), ctx.eq(py, sum(pu, pv))));
                    }
                }
            }
        }
    }
}

/// The range of `e` when it extends a narrower value: `[-2^(n-1), 2^(n-1) - 1]` for a sign
/// extension of `n` bits, `[0, 2^n - 1]` for a zero extension; with its sign.
fn extension_range(ctx: &Context, e: SExpr, w: u32) -> Option<(i128, i128, bool)> {
    let items = ctx.get_list(e)?;
    let head = ctx.get_list(*items.first()?)?;
    let k = ctx.get_u32(*head.get(2)?)?;
    let n = w.checked_sub(k)?;
    if n == 0 || n > 64 {
        return None;
    }
    match ctx.get_atom(*head.get(1)?)? {
        "sign_extend" => Some((-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1, true)),
        "zero_extend" => Some((0, (1i128 << n) - 1, false)),
        _ => None,
    }
}

/// Range facts of a widening product `p = x * y` of extended operands: whenever `y` lies in
/// `[-2^k, 2^k - 1]` (or `[0, 2^k - 1]`), `p` lies between the corner products of that
/// range and `x`'s (and the same with the roles swapped). They hold for real
/// multiplication (such a product cannot overflow), so adding them keeps the abstraction
/// sound, and they give back the range a saturation or a doubling depends on (a product by
/// a value bounded to 15 bits does not overflow when doubled).
fn magnitude_lemmas(ctx: &Context, p: SExpr, x: SExpr, y: SExpr, w: u32, out: &mut Vec<SExpr>) {
    use crate::verify::smt::{konst_i, lt};
    let (Some(rx), Some(ry)) = (extension_range(ctx, x, w), extension_range(ctx, y, w)) else {
        return;
    };
    // Every corner product must be a signed w-bit value.
    let limit = 1i128 << (w - 1).min(126);
    let corners = |(al, ah): (i128, i128), (bl, bh): (i128, i128)| -> Option<(i128, i128)> {
        let c = [al * bl, al * bh, ah * bl, ah * bh];
        let (lo, hi) = (*c.iter().min()?, *c.iter().max()?);
        (-limit <= lo && hi < limit).then_some((lo, hi))
    };
    let within = |v: SExpr, (lo, hi): (i128, i128)| {
        ctx.and(
            ctx.not(lt(ctx, v, konst_i(ctx, w, lo), true)),
            ctx.not(lt(ctx, konst_i(ctx, w, hi), v, true)),
        )
    };
    for (a, (al, ah, signed), (bl, bh, _)) in [(y, ry, rx), (x, rx, ry)] {
        // `ah + 1` is the power of two the extension's range ends below.
        let bits = (ah + 1).trailing_zeros();
        for k in 0..bits {
            // A signed operand also gets the non-negative range: a masked or shifted
            // operand known to be non-negative keeps the product's range one-sided, which
            // a truncation of it (the high half of `a * (b & 65535)`) depends on.
            let nonneg = (0, (1i128 << k) - 1);
            let subs = if signed {
                vec![(-(1i128 << k), (1i128 << k) - 1), nonneg]
            } else {
                vec![nonneg]
            };
            for sub in subs {
                debug_assert!(al <= sub.0 && sub.1 <= ah);
                if let Some(r) = corners(sub, (bl, bh)) {
                    out.push(ctx.imp(within(a, sub), within(p, r)));
                }
            }
        }
    }
}

/// `e` as `base << s` (at `e`'s width): `(bvshl y s)` exactly, or an extension of one, which
/// equals the extension of `y` shifted only when the shift loses no bits: that condition
/// comes third.
fn shifted_operand(ctx: &Context, e: SExpr) -> Option<(SExpr, u32, Option<SExpr>)> {
    use crate::verify::smt::{app, app_idx, konst, literal};
    let items = ctx.get_list(e)?.to_vec();
    if items.len() == 3 && ctx.get_atom(items[0]) == Some("bvshl") {
        let s = literal(ctx, items[2])?;
        return (s > 0 && s < 128).then_some((items[1], s as u32, None));
    }
    if items.len() != 2 {
        return None;
    }
    let head = ctx.get_list(items[0])?.to_vec();
    let kind = ctx.get_atom(*head.get(1)?)?;
    if !matches!(kind, "sign_extend" | "zero_extend") || head.len() != 3 {
        return None;
    }
    let k = ctx.get_u32(head[2])?;
    let inner = ctx.get_list(items[1])?.to_vec();
    if inner.len() != 3 || ctx.get_atom(inner[0]) != Some("bvshl") {
        return None;
    }
    let s = literal(ctx, inner[2])?;
    if s == 0 || s >= 128 {
        return None;
    }
    let base = app_idx(ctx, kind, &[k], vec![inner[1]]);
    // The amount's literal names the narrow width; the extension adds `k` bits to it.
    let narrow_w: u32 = ctx
        .get_list(inner[2])?
        .get(2)
        .and_then(|n| ctx.get_u32(*n))?;
    let wide = app(ctx, "bvshl", vec![base, konst(ctx, narrow_w + k, s)]);
    Some((base, s as u32, Some(ctx.eq(e, wide))))
}

/// The declared constants a term mentions, sorted.
fn mentions(
    ctx: &Context,
    e: SExpr,
    consts: &HashMap<String, u32>,
    memo: &mut HashMap<SExpr, Vec<String>>,
) -> Vec<String> {
    if let Some(v) = memo.get(&e) {
        return v.clone();
    }
    let v = match ctx.get(e) {
        SExprData::Atom(a) if consts.contains_key(a) => vec![a.to_string()],
        SExprData::List(items) => {
            let mut all: Vec<String> = items
                .to_vec()
                .iter()
                .flat_map(|&i| mentions(ctx, i, consts, memo))
                .collect();
            all.sort();
            all.dedup();
            all
        }
        _ => Vec::new(),
    };
    memo.insert(e, v.clone());
    v
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
