//! Natural C for one lane: each operation written as a C expression over scalars, with
//! signed arithmetic through unsigned types so that it wraps. The scalar baseline of a
//! kernel is written with it, and so are the bodies of the emitter's lane loops.

use std::collections::HashMap;
use std::fmt::Write;

use super::cform::c_operator;
use crate::ir::{Expr, Op};
use crate::types::Elem;

/// A C literal of type `elem` with the exact value `v`.
pub fn literal(elem: Elem, v: i128) -> String {
    match elem {
        Elem::I64 if v == i64::MIN as i128 => "INT64_MIN".into(),
        Elem::I64 | Elem::I32 => format!("(({}){v}LL)", elem.c_name()),
        _ if elem.is_internal() && i64::try_from(v).is_err() => {
            let b = v as u128;
            format!(
                "(({t})(((({t})0x{:x}ULL) << 64) | ({t})0x{:x}ULL))",
                (b >> 64) as u64,
                b as u64,
                t = elem.c_name()
            )
        }
        _ if elem.is_internal() => format!("(({}){v}LL)", elem.c_name()),
        _ => format!("(({}){v}ULL)", elem.c_name()),
    }
}

/// The value of a scalar constant expression (a literal, or a conversion of one, as an FPIR
/// expansion writes a shift amount): a shift by it is C's own shift, not the exact helper
/// (a 128-bit call, and an unoptimised one on Hexagon, where it dominated the baseline).
fn constant_value(e: &Expr) -> Option<i128> {
    if let Some(c) = e.as_const() {
        return Some(c);
    }
    if !e.ty().is_scalar() {
        return None;
    }
    let v = crate::interp::eval_closed(e)?;
    Some(crate::interp::lane::to_i128(v.lanes[0], e.ty().elem))
}

pub fn wide_unsigned(e: Elem) -> &'static str {
    match e.bits() {
        0..=32 => "uint32_t",
        33..=64 => "uint64_t",
        _ => "unsigned __int128",
    }
}

/// The natural C text of one operation whose operands are the C expressions `args`
/// (FPIR operations are expanded by the caller). Signed arithmetic goes through unsigned
/// types so that it wraps instead of being undefined.
pub fn op_text(e: &Expr, args: &[String]) -> String {
    let t = e.ty().elem;
    let ct = t.c_name();
    let a = |i: usize| args[i].clone();
    let ae = |i: usize| e.arg(i).ty().elem;
    let w = wide_unsigned(t);
    match e.op() {
        Op::Add if t == Elem::Bool => format!("({} ^ {})", a(0), a(1)),
        Op::Add | Op::Sub | Op::Mul => {
            let op = c_operator(e.op()).expect("arithmetic");
            format!("({ct})(({w}){} {op} ({w}){})", a(0), a(1))
        }
        Op::Div | Op::Mod
            if e.arg(1).as_const().is_some_and(|c| c > 0) && (!t.is_signed() || t.bits() <= 32) =>
        {
            let c = e.arg(1).as_const().expect("constant");
            let op = if matches!(e.op(), Op::Div) { "/" } else { "%" };
            if t.is_signed() {
                // Floor division: C truncates toward zero.
                if matches!(e.op(), Op::Div) {
                    format!(
                        "({ct})(({}) >= 0 ? (int64_t)({}) / {c} : ((int64_t)({}) - {}) / {c})",
                        a(0),
                        a(0),
                        a(0),
                        c - 1
                    )
                } else {
                    format!("({ct})((((int64_t)({}) % {c}) + {c}) % {c})", a(0))
                }
            } else {
                format!("({ct})({} {op} {c})", a(0))
            }
        }
        Op::Div | Op::Mod | Op::Shl | Op::Shr
            if !(matches!(e.op(), Op::Shl | Op::Shr)
                && constant_value(e.arg(1))
                    .is_some_and(|c| (0..t.bits() as i128).contains(&c))) =>
        {
            // The exact helpers work on canonical bits.
            let canon =
                |i: usize| format!("(hv_u128)({}){}", ae(i).to_unsigned().c_name(), args[i]);
            let sg = t.is_signed() as u8;
            let call = match e.op() {
                Op::Div => format!("hv_div({}, {}, {}, {sg})", canon(0), canon(1), t.bits()),
                Op::Mod => format!("hv_mod({}, {}, {}, {sg})", canon(0), canon(1), t.bits()),
                op => format!(
                    "hv_{}({}, {}, {}, {sg}, {}, {})",
                    if matches!(op, Op::Shl) { "shl" } else { "shr" },
                    canon(0),
                    canon(1),
                    t.bits(),
                    ae(1).bits(),
                    ae(1).is_signed() as u8
                ),
            };
            format!("({ct})({})({call})", t.to_unsigned().c_name())
        }
        Op::Shl => format!("({ct})(({w}){} << {})", a(0), a(1)),
        Op::Shr => format!("({ct})({} >> {})", a(0), a(1)),
        Op::Min => format!("({} < {} ? {} : {})", a(0), a(1), a(0), a(1)),
        Op::Max => format!("({} > {} ? {} : {})", a(0), a(1), a(0), a(1)),
        Op::And => format!("({ct})({} & {})", a(0), a(1)),
        Op::Or => format!("({ct})({} | {})", a(0), a(1)),
        Op::Xor => format!("({ct})({} ^ {})", a(0), a(1)),
        Op::Not if t == Elem::Bool => format!("({ct})!{}", a(0)),
        Op::Not => format!("({ct})~{}", a(0)),
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
            let op = c_operator(e.op()).expect("a comparison");
            format!("({ct})({} {op} {})", a(0), a(1))
        }
        Op::Select => format!("({} ? {} : {})", a(0), a(1), a(2)),
        Op::Cast if t == Elem::Bool => format!("({ct})({} != 0)", a(0)),
        Op::Cast | Op::Reinterpret => format!("({ct}){}", a(0)),
        Op::Popcount => format!(
            "({ct})__builtin_popcountll((uint64_t)({}){})",
            ae(0).to_unsigned().c_name(),
            a(0)
        ),
        Op::CountLeadingZeros => format!(
            "({ct})({} == 0 ? {} : __builtin_clzll((uint64_t)({}){}) - {})",
            a(0),
            t.bits(),
            ae(0).to_unsigned().c_name(),
            a(0),
            64 - t.bits()
        ),
        Op::CountTrailingZeros => format!(
            "({ct})({} == 0 ? {} : __builtin_ctzll((uint64_t){}))",
            a(0),
            t.bits(),
            a(0)
        ),
        op => unreachable!("`{op}` has no one-lane C form"),
    }
}

/// Statements computing the one-lane expression `e` in natural C, for a lane loop:
/// `leaves` gives the C text of the nodes already available; temporaries are named
/// `{prefix}N`. Returns the C expression of the result.
pub fn natural_c(
    e: &Expr,
    leaves: &HashMap<usize, String>,
    prefix: &str,
    memo: &mut HashMap<usize, (Expr, String)>,
    stmts: &mut String,
) -> String {
    if let Some(s) = leaves
        .get(&e.id())
        .or_else(|| memo.get(&e.id()).map(|(_, s)| s))
    {
        return s.clone();
    }
    let t = e.ty().elem;
    let text = if let Some(v) = e.as_const() {
        literal(t, v)
    } else if e.op().is_fpir() {
        let def = crate::fpir::definition(e.op(), e.ty(), e.args());
        natural_c(&def, leaves, prefix, memo, stmts)
    } else {
        let args: Vec<String> = e
            .args()
            .iter()
            .map(|a| natural_c(a, leaves, prefix, memo, stmts))
            .collect();
        let v = format!("{prefix}{}", memo.len());
        let _ = write!(stmts, "{} {v} = {}; ", t.c_name(), op_text(e, &args));
        v
    };
    // The entry holds its node: an FPIR operation's definition is built here and dropped,
    // and its nodes' addresses (their identities) would otherwise pass to later nodes.
    memo.insert(e.id(), (e.clone(), text.clone()));
    text
}
