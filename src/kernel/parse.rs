//! Reading `.hk` kernel files: declarations, then inlining and elaboration of the outputs
//! (`super::inline`).
//!
//! Definitions are inlined at each use with their arguments evaluated as affine indices;
//! reductions over constant domains of at most `inline::UNROLL_LIMIT` points are unrolled, others
//! become [`super::Reduction`] loops. Each distinct buffer read becomes a variable `@aK`, so the
//! body is ordinary harrow IR typed by `syntax::elab` like every other front end.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::inline::{Def, Env, Inliner, Rdom};
use super::{Affine, Bound, Input, Kernel, Param};
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::syntax::elab::Decls;
use crate::syntax::lexer::{Tok, lex};
use crate::syntax::parse::{Ast, Parser};
use crate::types::{Elem, Type};

/// Parses and elaborates a kernel file: its declarations, then the output's body with
/// definitions inlined, reductions unrolled or made loops, and buffer reads as variables.
pub fn parse(src: &Arc<Source>) -> Result<Kernel, Diag> {
    let d = declarations(src)?;
    kernel_of(src, d)
}

/// The declarations of a kernel file, in order, each name declared once.
struct Declarations {
    name: Option<String>,
    inputs: Vec<Input>,
    params: Vec<Param>,
    rdoms: HashMap<String, Rdom>,
    defs: HashMap<String, Def>,
    /// The outputs: name, variables, element type and body, in order.
    outputs: Vec<(String, Vec<String>, Elem, Ast)>,
    /// The `bench` extents and where they are written.
    bench: Option<(Vec<i64>, Range<usize>)>,
}

/// Reads every declaration line of a kernel file (the first phase of [`parse`]).
fn declarations(src: &Arc<Source>) -> Result<Declarations, Diag> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, &toks);
    p.set_skip_newlines(false);
    let mut name = None;
    let mut inputs: Vec<Input> = Vec::new();
    let mut params: Vec<Param> = Vec::new();
    let mut rdoms: HashMap<String, Rdom> = HashMap::new();
    let mut defs: HashMap<String, Def> = HashMap::new();
    let mut outputs: Vec<(String, Vec<String>, Elem, Ast)> = Vec::new();
    let mut names: HashMap<String, Range<usize>> = HashMap::new();
    let mut bench: Option<(Vec<i64>, Range<usize>)> = None;
    let mut declare = |n: &str, span: &Range<usize>| -> Result<(), Diag> {
        if let Some(prev) = names.get(n) {
            let (l, c) = src.line_col(prev.start);
            return Err(Diag::new(
                src,
                span.clone(),
                format!("`{n}` is already declared at {l}:{c}"),
            ));
        }
        if matches!(n, "sum" | "minimum" | "maximum") || n.starts_with('@') {
            return Err(Diag::new(src, span.clone(), format!("`{n}` is reserved")));
        }
        names.insert(n.to_string(), span.clone());
        Ok(())
    };
    loop {
        while matches!(p.peek().tok, Tok::Newline) {
            p.bump();
        }
        if p.at_eof() {
            break;
        }
        let (kw, kw_span) = p.ident()?;
        match kw.as_str() {
            "kernel" => {
                let (n, _) = p.ident()?;
                name = Some(n);
            }
            "input" => {
                let (n, span) = p.ident()?;
                declare(&n, &span)?;
                p.expect(":")?;
                let elem = elem_type(&mut p)?;
                p.expect("[")?;
                let t = p.bump();
                let dims = match t.tok {
                    Tok::Int(d @ 1..=3) => d as usize,
                    _ => return Err(p.error(&t, "expected the number of dimensions (1 to 3)")),
                };
                p.expect("]")?;
                inputs.push(Input {
                    name: n,
                    elem,
                    dims,
                });
            }
            "param" => {
                let (n, span) = p.ident()?;
                declare(&n, &span)?;
                params.push(param_decl(&mut p, src, n, span)?);
            }
            "rdom" => {
                let (n, span) = p.ident()?;
                declare(&n, &span)?;
                let dims = rdom_decl(&mut p, src, &mut params, &span)?;
                rdoms.insert(n, Rdom { dims, span });
            }
            "bench" => {
                let mut e = Vec::new();
                while !matches!(p.peek().tok, Tok::Newline | Tok::Eof) {
                    let v = int(&mut p)?;
                    if v <= 0 {
                        return Err(Diag::new(
                            src,
                            kw_span.clone(),
                            "bench extents must be positive",
                        ));
                    }
                    e.push(v);
                }
                bench = Some((e, kw_span.clone()));
            }
            "def" => {
                let (n, span) = p.ident()?;
                declare(&n, &span)?;
                let vars = var_list(&mut p)?;
                p.expect("=")?;
                let body = p.expr()?;
                defs.insert(n, Def { params: vars, body });
            }
            "output" => {
                let (n, span) = p.ident()?;
                declare(&n, &span)?;
                let vars = var_list(&mut p)?;
                if vars.len() > 3 {
                    return Err(Diag::new(src, span, "an output has 1 to 3 dimensions"));
                }
                p.expect(":")?;
                let elem = elem_type(&mut p)?;
                // Several outputs are computed in the same loops: same variables, and one
                // element type (the harness and the vector loops store them alike).
                if let Some((first, fvars, felem, _)) = outputs.first()
                    && (*fvars != vars || *felem != elem)
                {
                    return Err(Diag::new(
                        src,
                        span,
                        format!(
                            "every output of a kernel has the first one's variables and type: `{first}({})`: {felem}, but `{n}({})`: {elem}",
                            fvars.join(", "),
                            vars.join(", ")
                        ),
                    ));
                }
                p.expect("=")?;
                let body = p.expr()?;
                outputs.push((n, vars, elem, body));
            }
            _ => {
                return Err(Diag::new(
                    src,
                    kw_span,
                    format!(
                        "expected `kernel`, `input`, `param`, `rdom`, `def`, `output` or `bench`, found `{kw}`"
                    ),
                ));
            }
        }
        let t = p.peek().clone();
        if !matches!(t.tok, Tok::Newline | Tok::Eof) {
            return Err(p.error(&t, "expected the end of the line"));
        }
    }
    if outputs.is_empty() {
        return Err(Diag::new(
            src,
            src.text.len()..src.text.len(),
            "the kernel has no `output` line",
        ));
    }
    Ok(Declarations {
        name,
        inputs,
        params,
        rdoms,
        defs,
        outputs,
        bench,
    })
}

/// The kernel the declarations describe (the second phase of [`parse`]): the output's body
/// inlined and elaborated, its type checked, the bench extents settled.
fn kernel_of(src: &Arc<Source>, d: Declarations) -> Result<Kernel, Diag> {
    let Declarations {
        name,
        inputs,
        params,
        rdoms,
        defs,
        outputs,
        bench,
    } = d;
    let (out_name, out_vars, out_elem, _) = outputs[0].clone();
    let mut cx = Inliner {
        src,
        inputs: &inputs,
        params: &params,
        rdoms: &rdoms,
        defs: &defs,
        accesses: Vec::new(),
        reductions: Vec::new(),
        decls: Decls::new(),
        depth: 0,
        loop_vars: Vec::new(),
    };
    for prm in &params {
        cx.decls = std::mem::take(&mut cx.decls).var(&prm.name, Type::scalar(prm.elem));
    }
    let mut env = Env::default();
    for v in &out_vars {
        env.vars.insert(v.clone(), Affine::var(v));
    }
    // The outer output variables are loop counters: their values may be used (a
    // per-channel formula, `select(c == 0, ...)`); the innermost one is the vector position.
    for v in &out_vars[1..] {
        cx.loop_vars.push(v.clone());
        cx.decls = std::mem::take(&mut cx.decls).var(v, Type::INDEX);
    }
    // Every output with the same inliner: they share the accesses (one per distinct read).
    let mut bodies = Vec::new();
    for (name, _, _, body) in &outputs {
        let ast = cx.inline(body, &env)?;
        let e = cx.elab(&ast)?;
        if e.ty() != Type::scalar(out_elem) {
            return Err(Diag::new(
                src,
                body.span.clone(),
                format!(
                    "the output is declared {out_elem} but this expression is {}; add a cast",
                    e.ty()
                ),
            ));
        }
        bodies.push((name.clone(), e, body.span.clone()));
    }
    let (accesses, reductions) = (cx.accesses, cx.reductions);
    if bodies.len() > 1 && !reductions.is_empty() {
        return Err(Diag::new(
            src,
            bodies[1].2.clone(),
            "a kernel with several outputs cannot have a reduction that stays a loop (yet): \
             write one kernel per output",
        ));
    }
    let mut bodies = bodies.into_iter();
    let (_, e, span) = bodies.next().expect("one output at least");
    let more: Vec<(String, Expr, Range<usize>)> = bodies.collect();
    let bench_extents = match bench {
        Some((e, span)) => {
            if e.len() != out_vars.len() {
                return Err(Diag::new(
                    src,
                    span,
                    format!(
                        "`bench` needs {} extent(s), one per output dimension",
                        out_vars.len()
                    ),
                ));
            }
            e
        }
        None => match out_vars.len() {
            1 => vec![1920 * 1080],
            2 => vec![1920, 1080],
            _ => vec![64, 240, 135],
        },
    };
    let kernel = Kernel {
        bench_extents,
        name: name.unwrap_or_else(|| {
            std::path::Path::new(&src.name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "kernel".into())
        }),
        inputs,
        params,
        out_name,
        out_elem,
        out_vars,
        body: e,
        more_outputs: more
            .iter()
            .map(|(n, e, _)| (n.clone(), e.clone()))
            .collect(),
        accesses,
        reductions,
    };
    check_vectorizable(&kernel, &kernel.body, src, &span)?;
    for (_, e, span) in &more {
        check_vectorizable(&kernel, e, src, span)?;
    }
    Ok(kernel)
}

/// The rest of a `param NAME` line: `: type [= default] [in lo..hi]`.
fn param_decl(
    p: &mut Parser<'_>,
    src: &Arc<Source>,
    n: String,
    span: Range<usize>,
) -> Result<Param, Diag> {
    p.expect(":")?;
    let elem = elem_type(p)?;
    let full = (
        elem.min_value().max(i64::MIN as i128) as i64,
        elem.max_value().unwrap_or(1).min(i64::MAX as i128) as i64,
    );
    let mut default = None;
    let mut range = None;
    if p.eat("=") {
        default = Some(int(p)?);
    }
    if p.eat_ident("in") {
        let lo = int(p)?;
        p.expect(".")?;
        p.expect(".")?;
        let hi = int(p)?;
        if hi < lo {
            return Err(Diag::new(src, span, "the range is empty"));
        }
        range = Some((lo, hi));
    }
    let range = range.unwrap_or(full);
    for (what, v) in [("default", default), ("lower end", Some(range.0))] {
        if let Some(v) = v
            && (v < full.0 || v > full.1)
        {
            return Err(Diag::new(
                src,
                span.clone(),
                format!("the {what} {v} does not fit in {elem}"),
            ));
        }
    }
    Ok(Param {
        name: n,
        elem,
        default: default.unwrap_or(range.0.max(0).min(range.1)),
        range,
        is_extent: false,
    })
}

/// The rest of an `rdom NAME =` line: `lo..hi, ...` with constant or parameter bounds (a
/// parameter bound marks the parameter an extent).
fn rdom_decl(
    p: &mut Parser<'_>,
    src: &Arc<Source>,
    params: &mut [Param],
    span: &Range<usize>,
) -> Result<Vec<(i64, Bound)>, Diag> {
    p.expect("=")?;
    let mut dims = Vec::new();
    loop {
        let lo = int(p)?;
        p.expect(".")?;
        p.expect(".")?;
        let t = p.peek().clone();
        let hi = match &t.tok {
            Tok::Ident(pn) => {
                p.bump();
                let Some(pp) = params.iter_mut().find(|q| &q.name == pn) else {
                    return Err(p.error(&t, "expected a constant or a declared param"));
                };
                if !pp.elem.is_int() || pp.elem.bits() > 32 {
                    return Err(Diag::new(
                        src,
                        t.span.clone(),
                        "an extent parameter must be an integer of at most 32 bits",
                    ));
                }
                pp.is_extent = true;
                Bound::Param(pn.clone())
            }
            _ => {
                let hi = int(p)?;
                if hi < lo {
                    return Err(Diag::new(src, t.span, "the domain is empty"));
                }
                Bound::Const(hi)
            }
        };
        dims.push((lo, hi));
        if !p.eat(",") {
            break;
        }
    }
    if dims.len() > 3 {
        return Err(Diag::new(
            src,
            span.clone(),
            "a reduction domain has at most 3 dimensions",
        ));
    }
    Ok(dims)
}

/// The innermost output variable may only move along dimension 0 of a buffer, with a
/// small constant stride (dense, broadcast, or strided loads).
fn check_vectorizable(
    k: &Kernel,
    body: &Expr,
    src: &Arc<Source>,
    span: &Range<usize>,
) -> Result<(), Diag> {
    for e in std::iter::once(body).chain(k.reductions.iter().map(|r| &r.body)) {
        for n in crate::ir::visit::post_order(e) {
            let ok = n.ty().is_scalar()
                && !matches!(
                    n.op(),
                    crate::ir::Op::Load(..)
                        | crate::ir::Op::Ramp
                        | crate::ir::Op::Broadcast
                        | crate::ir::Op::Slice { .. }
                        | crate::ir::Op::Concat
                        | crate::ir::Op::Interleave
                        | crate::ir::Op::Shuffle(_)
                        | crate::ir::Op::ReduceAdd
                        | crate::ir::Op::ReduceMin
                        | crate::ir::Op::ReduceMax
                        | crate::ir::Op::Instr(_)
                );
            if !ok {
                return Err(Diag::new(
                    src,
                    span.clone(),
                    format!(
                        "`{}` works on whole vectors; kernel expressions are written per point",
                        n.op().name()
                    ),
                ));
            }
        }
    }
    let v = k.vec_var();
    for a in &k.accesses {
        let inp = &k.inputs[a.input];
        for (d, ix) in a.idx.iter().enumerate() {
            let c = ix.coef(v);
            if d > 0 && c != 0 {
                return Err(Diag::new(
                    src,
                    span.clone(),
                    format!(
                        "`{}` is read with the innermost output variable `{v}` in dimension {d} ({ix}); \
                         `{v}` may only index dimension 0 (the dense one)",
                        inp.name
                    ),
                ));
            }
            if d == 0 && !(0..=4).contains(&c) {
                return Err(Diag::new(
                    src,
                    span.clone(),
                    format!(
                        "`{}` is read at {ix}: the stride of `{v}` must be 0 to 4",
                        inp.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn elem_type(p: &mut Parser) -> Result<Elem, Diag> {
    let (t, span) = p.ident()?;
    match Elem::parse(&t, false) {
        Some(e) if e != Elem::Bool => Ok(e),
        _ => Err(Diag::new(
            p.src,
            span,
            format!("expected an integer element type (u8, i16, ...), found `{t}`"),
        )),
    }
}

fn int(p: &mut Parser) -> Result<i64, Diag> {
    let neg = p.eat("-");
    let t = p.bump();
    match t.tok {
        Tok::Int(v) if v <= i64::MAX as i128 => Ok(if neg { -(v as i64) } else { v as i64 }),
        _ => Err(p.error(&t, "expected an integer")),
    }
}

fn var_list(p: &mut Parser) -> Result<Vec<String>, Diag> {
    p.expect("(")?;
    let mut vars: Vec<String> = Vec::new();
    loop {
        let (v, span) = p.ident()?;
        if vars.contains(&v) {
            return Err(Diag::new(p.src, span, format!("`{v}` appears twice")));
        }
        vars.push(v);
        if !p.eat(",") {
            break;
        }
    }
    p.expect(")")?;
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(text: &str) -> Result<Kernel, String> {
        parse(&Source::new("t.hk", text)).map_err(|d| d.to_string())
    }

    #[test]
    fn definitions_inline_and_small_reductions_unroll() {
        let kern = k("input in: u8[2]\nrdom r = -1..2\n\
                      def row(x, y) = sum(r, u16(in(x + r, y)))\n\
                      output out(x, y): u16 = row(x, y - 1) + row(x, y + 1)\n")
        .unwrap();
        assert_eq!(kern.accesses.len(), 6);
        assert!(kern.reductions.is_empty());
        assert_eq!(kern.accesses[0].idx[0].to_string(), "(x + -1)");
        assert_eq!(kern.accesses[0].idx[1].to_string(), "(y + -1)");
    }

    #[test]
    fn parameter_extents_stay_loops() {
        let kern = k(
            "input a: u8[2]\ninput b: u8[2]\nparam n: i32 = 16 in 1..32\nrdom k = 0..n\n\
                      output c(x, y): u32 = sum(k, u32(a(k, y)) * u32(b(x, k)))\n",
        )
        .unwrap();
        assert_eq!(kern.reductions.len(), 1);
        assert_eq!(kern.reductions[0].dom[0].var, "k");
        assert!(kern.param("n").unwrap().is_extent);
    }

    #[test]
    fn errors_name_the_place() {
        let e = k("input in: u8[2]\noutput out(x, y): u8 = in(x, y) + in(x)\n").unwrap_err();
        assert!(e.contains("t.hk:2:"), "{e}");
        assert!(e.contains("1 index"), "{e}");
        let e = k("input in: u8[2]\noutput out(x, y): u16 = in(x, y)\n").unwrap_err();
        assert!(e.contains("declared u16"), "{e}");
        let e = k("input in: u8[2]\noutput out(x, y): u8 = in(y, x)\n").unwrap_err();
        assert!(e.contains("dimension 1"), "{e}");
        let e = k("input in: u8[1]\noutput out(x): u8 = in(x * x)\n").unwrap_err();
        assert!(e.contains("multiply two"), "{e}");
        let e = k("input in: u8[1]\noutput out(x): u8 = in(x) + x\n").unwrap_err();
        assert!(e.contains("vector position"), "{e}");
        let e = k("input in: u8[1]\nfoo\n").unwrap_err();
        assert!(e.contains("expected `kernel`"), "{e}");
        let e = k("input in: u8[1]\n").unwrap_err();
        assert!(e.contains("no `output`"), "{e}");
        let e = k("input in: u8[1]\noutput out(x): u8 = sum(q, in(x))\n").unwrap_err();
        assert!(e.contains("not a declared `rdom`"), "{e}");
    }

    #[test]
    fn outer_output_variables_are_values_and_the_vector_position_is_not() {
        let kern = k("input in: u8[3]\n\
                      def g(c) = select(c == 0, u8(3), u8(c + 2 * c))\n\
                      output out(x, y, c): u8 = in(x, y, c) + g(c) + u8(y - 1)\n")
        .unwrap();
        let vars: Vec<String> = crate::ir::visit::free_vars(&kern.body)
            .into_keys()
            .map(|n| n.to_string())
            .filter(|n| !n.starts_with('@'))
            .collect();
        assert_eq!(vars, ["c", "y"], "{:?}", kern.body);
        let e = k("input in: u8[2]\noutput out(x, y): u8 = in(x, y) + u8(x + y)\n").unwrap_err();
        assert!(
            e.contains("t.hk:2:") && e.contains("innermost output variable"),
            "{e}"
        );
    }
}
