//! Halide's simd_op_check expectations (`../shared/peer/halide-simd-op-check/*.txt`):
//! `<halide target>: N tasks` headers, then `  [instruction] w=LANES : EXPRESSION` lines.
//!
//! Expressions are scalar functions of the loop variable `x`, vectorized at `w` lanes; `y`
//! is a scalar `i32` unknown. Entries whose expression lost an inline reduction or a
//! function body when Halide printed it (`sum$3(x)`, `f12(x)`, `maximum(x)`, `reader(x, y)`)
//! and floating-point entries are outside the integer suite; [`classify`] says which.

use std::sync::Arc;

use super::elab::{Decls, ElabOptions};
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::types::{Elem, Type};

/// One expectation line.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The Halide target of the section the line is in.
    pub target: String,
    /// The instruction Halide expects, as printed between the brackets.
    pub instr: String,
    /// Vector width.
    pub width: u32,
    /// The expression text.
    pub expr: String,
    /// 1-based line number.
    pub line: usize,
    /// 1-based column where the expression starts.
    pub col: usize,
}

/// Why an entry is not part of the integer suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Skip {
    /// Uses floating-point values or types.
    Float,
    /// Calls a function whose body Halide did not print (an inline reduction or a Func).
    LostBody,
}

/// Reads all entries of a file; malformed lines are errors naming the line.
pub fn read(src: &Arc<Source>) -> Result<Vec<Entry>, Diag> {
    let mut out = Vec::new();
    let mut target = String::new();
    let mut offset = 0;
    for (i, line) in src.text.split('\n').enumerate() {
        let line_start = offset;
        offset += line.len() + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if !line.starts_with(' ') && trimmed.ends_with("tasks") {
            target = trimmed.split(':').next().unwrap_or("").to_string();
            continue;
        }
        let bad = || {
            Diag::new(
                src,
                line_start..line_start + line.len(),
                "expected `[instruction] w=LANES : EXPRESSION`",
            )
        };
        // An entry starts with its instruction in brackets.
        if !trimmed.starts_with('[') {
            return Err(bad());
        }
        let open = line.find('[').ok_or_else(bad)?;
        let close = open + line[open..].find("] w=").ok_or_else(bad)?;
        let rest = &line[close + 4..];
        let colon = rest.find(" : ").ok_or_else(bad)?;
        let width: u32 = rest[..colon].trim().parse().map_err(|_| bad())?;
        let expr_start = close + 4 + colon + 3;
        out.push(Entry {
            target: target.clone(),
            instr: line[open + 1..close].to_string(),
            width,
            expr: line[expr_start..].to_string(),
            line: i + 1,
            col: expr_start + 1,
        });
    }
    Ok(out)
}

/// Whether the entry belongs to the integer suite, and if not, why.
pub fn classify(e: &Entry) -> Option<Skip> {
    let t = &e.expr;
    if t.contains("float")
        || t.contains("_f16")
        || t.contains("_f32")
        || t.contains("_f64")
        || has_float_literal(t)
    {
        return Some(Skip::Float);
    }
    if calls_lost_body(t) {
        return Some(Skip::LostBody);
    }
    None
}

fn has_float_literal(t: &str) -> bool {
    let b = t.as_bytes();
    (1..b.len().saturating_sub(1))
        .any(|i| b[i] == b'.' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
}

/// Names Halide gives reductions and helper Funcs: `sum`, `sum$3`, `f12`, `maximum$2`, ...
fn calls_lost_body(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            if i < b.len() && b[i] == b'(' {
                let name = &t[start..i];
                let base = name.split('$').next().unwrap_or(name);
                let is_func = base.len() > 1
                    && base.starts_with('f')
                    && base[1..].bytes().all(|c| c.is_ascii_digit());
                if matches!(
                    base,
                    "sum" | "minimum" | "maximum" | "saturating_sum" | "reader" | "product"
                ) || is_func
                {
                    return true;
                }
            }
        } else {
            i += 1;
        }
    }
    false
}

/// The source text for one entry's expression, padded so diagnostics give the entry's
/// real `file:line:col`.
pub fn entry_source(file: &str, e: &Entry) -> Arc<Source> {
    let mut text = "\n".repeat(e.line - 1);
    text.push_str(&" ".repeat(e.col - 1));
    text.push_str(&e.expr);
    Source::new(file, text)
}

/// Parses and type-checks an entry's expression at its width: `x` is the lane variable and
/// `y` a scalar `i32`.
pub fn parse_entry(file: &str, e: &Entry) -> Result<Expr, Diag> {
    let src = entry_source(file, e);
    let decls = Decls::new().var("y", Type::scalar(Elem::I32));
    let opts = ElabOptions {
        lane_var: Some(("x".into(), e.width)),
        allow_internal: false,
        allow_float: false,
        rule: None,
        instrs: None,
    };
    let x = super::halide::parse_expr(&src, &decls, opts)?;
    // An entry that does not depend on `x` (`int8(y)`) is its value in every lane of the
    // `w`-wide vector Halide stores.
    Ok(if x.ty().is_scalar() && e.width > 1 {
        x.broadcast(e.width)
    } else {
        x
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_classifies() {
        let text = "x86-64-linux-avx2: 3 tasks\n  [paddsb] w=8 : (int8)saturating_cast(int16((int8)in_i8(x)) + (int16)3)\n  [addps] w=2 : ((float32)in_f32(x) + (float32)in_f32(x + 16))\n  [uadalp] w=8 : f12(x)\n";
        let src = Source::new("t.txt", text);
        let es = read(&src).unwrap();
        assert_eq!(es.len(), 3);
        assert_eq!(es[0].target, "x86-64-linux-avx2");
        assert_eq!(es[0].instr, "paddsb");
        assert_eq!(es[0].width, 8);
        assert_eq!(classify(&es[0]), None);
        assert_eq!(classify(&es[1]), Some(Skip::Float));
        assert_eq!(classify(&es[2]), Some(Skip::LostBody));
        let e = parse_entry("t.txt", &es[0]).unwrap();
        assert_eq!(e.ty(), Type::vec(Elem::I8, 8));
    }

    #[test]
    fn errors_point_into_the_file() {
        let text = "t: 1 tasks\n  [x] w=4 : (uint8)in_u8(x) + (uint16)3\n";
        let src = Source::new("t.txt", text);
        let es = read(&src).unwrap();
        let err = parse_entry("t.txt", &es[0]).unwrap_err();
        assert_eq!(err.location(), "t.txt:2:13");
    }
}
