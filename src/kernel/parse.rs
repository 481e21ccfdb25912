//! Reading `.hk` kernel files: declarations, then inlining and elaboration of the output.
//!
//! Definitions are inlined at each use with their arguments evaluated as affine indices;
//! reductions over constant domains of at most [`UNROLL_LIMIT`] points are unrolled, others
//! become [`Reduction`] loops. Each distinct buffer read becomes a variable `@aK`, so the
//! body is ordinary harrow IR typed by `syntax::elab` like every other front end.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::{Access, Affine, Bound, DomainDim, Input, Kernel, Param, ReduceKind, Reduction};
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::syntax::elab::{Decls, ElabOptions, Elaborator};
use crate::syntax::lexer::{Tok, lex};
use crate::syntax::parse::{Ast, AstKind, Binary, Parser, Unary};
use crate::types::{Elem, Type};

/// The largest magnitude of a constant or coefficient in an index: far beyond any stencil
/// or stride, and small enough that products of two stay exact and offsets fit the
/// generated code's 32-bit index arithmetic.
pub const MAX_INDEX_CONSTANT: i64 = 1 << 24;

/// Constant reduction domains with at most this many points are unrolled.
pub const UNROLL_LIMIT: i64 = 64;

struct Def {
    params: Vec<String>,
    body: Ast,
}

struct Rdom {
    dims: Vec<(i64, Bound)>,
    span: Range<usize>,
}

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

/// Names in scope while inlining: definition parameters and domain variables, each an
/// affine index.
#[derive(Clone, Default)]
struct Env {
    vars: HashMap<String, Affine>,
}

struct Inliner<'a> {
    src: &'a Arc<Source>,
    inputs: &'a [Input],
    params: &'a [Param],
    rdoms: &'a HashMap<String, Rdom>,
    defs: &'a HashMap<String, Def>,
    accesses: Vec<Access>,
    reductions: Vec<Reduction>,
    decls: Decls,
    depth: usize,
    /// Domain variables of the enclosing loop reductions.
    loop_vars: Vec<String>,
}

/// The value of an affine index over loop variables, as an expression: `c + k * v + ...`.
fn affine_value(a: &Affine, span: &Range<usize>) -> Ast {
    let mut e = node(AstKind::Int(a.c as i128), span);
    for (v, &k) in &a.terms {
        let var = node(AstKind::Name(v.clone()), span);
        let term = if k == 1 {
            var
        } else {
            let k = node(AstKind::Int(k as i128), span);
            node(
                AstKind::Binary(Binary::Mul, Box::new(k), Box::new(var)),
                span,
            )
        };
        e = if a.c == 0 && matches!(e.kind, AstKind::Int(0)) {
            term
        } else {
            node(
                AstKind::Binary(Binary::Add, Box::new(e), Box::new(term)),
                span,
            )
        };
    }
    e
}

fn node(kind: AstKind, span: &Range<usize>) -> Ast {
    Ast {
        kind,
        span: span.clone(),
    }
}

impl Inliner<'_> {
    fn err(&self, span: &Range<usize>, msg: impl Into<String>) -> Diag {
        Diag::new(self.src, span.clone(), msg)
    }

    fn elab(&mut self, ast: &Ast) -> Result<Expr, Diag> {
        let e = Elaborator::new(self.src, &self.decls, ElabOptions::default()).expr(ast)?;
        Ok(crate::ir::visit::inline_lets(&e))
    }

    /// The affine value of an index expression, with every constant and coefficient
    /// within [`MAX_INDEX_CONSTANT`] (so that no step of building it overflows, and the
    /// generated code's 32-bit index arithmetic holds it).
    fn index(&self, ast: &Ast, env: &Env) -> Result<Affine, Diag> {
        let a = self.index_unchecked(ast, env)?;
        let too_big = |v: i64| v.unsigned_abs() > MAX_INDEX_CONSTANT as u64;
        if too_big(a.c) || a.terms.values().any(|&k| too_big(k)) {
            return Err(self.err(
                &ast.span,
                format!(
                    "index `{a}` is out of range: constants and coefficients of an index must be within ±{MAX_INDEX_CONSTANT}"
                ),
            ));
        }
        Ok(a)
    }

    fn index_unchecked(&self, ast: &Ast, env: &Env) -> Result<Affine, Diag> {
        match &ast.kind {
            AstKind::Int(v) => i64::try_from(*v)
                .map(Affine::constant)
                .map_err(|_| self.err(&ast.span, "index out of range")),
            AstKind::Name(n) => env.vars.get(n).cloned().ok_or_else(|| {
                if self.params.iter().any(|p| &p.name == n) {
                    self.err(
                        &ast.span,
                        format!("parameter `{n}` cannot be used in an index; indices are loop variables plus constants"),
                    )
                } else {
                    self.err(&ast.span, format!("unknown index variable `{n}`"))
                }
            }),
            AstKind::Unary(Unary::Neg, a) => Ok(self.index(a, env)?.scale(-1)),
            AstKind::Binary(op @ (Binary::Add | Binary::Sub), a, b) => {
                let (x, y) = (self.index(a, env)?, self.index(b, env)?);
                Ok(x.add_scaled(&y, if *op == Binary::Add { 1 } else { -1 }))
            }
            AstKind::Binary(Binary::Mul, a, b) => {
                let (x, y) = (self.index(a, env)?, self.index(b, env)?);
                if x.terms.is_empty() {
                    Ok(y.scale(x.c))
                } else if y.terms.is_empty() {
                    Ok(x.scale(y.c))
                } else {
                    Err(self.err(&ast.span, "an index may not multiply two variables"))
                }
            }
            AstKind::Typed { e, .. } => self.index(e, env),
            _ => Err(self.err(
                &ast.span,
                "an index must be a loop variable times a constant plus a constant",
            )),
        }
    }

    fn inline(&mut self, ast: &Ast, env: &Env) -> Result<Ast, Diag> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(self.err(&ast.span, "definitions nest too deeply (recursion?)"));
        }
        let r = self.inline_inner(ast, env);
        self.depth -= 1;
        r
    }

    fn inline_inner(&mut self, ast: &Ast, env: &Env) -> Result<Ast, Diag> {
        let span = &ast.span;
        let kind = match &ast.kind {
            AstKind::Name(n) => {
                if let Some(a) = env.vars.get(n) {
                    if a.terms.is_empty() {
                        AstKind::Int(a.c as i128)
                    } else {
                        match a.terms.keys().find(|v| !self.loop_vars.contains(*v)) {
                            // Loop variables (the outer output variables, the variables of
                            // reductions that stay loops) have a value in every iteration.
                            None => affine_value(a, span).kind,
                            Some(v) => {
                                return Err(self.err(
                                    span,
                                    format!(
                                        "`{n}` (= {a}) depends on `{v}`, the innermost output variable, which is a vector position: it can only be used in an index, inside a buffer or definition call"
                                    ),
                                ));
                            }
                        }
                    }
                } else if self.defs.contains_key(n) || self.inputs.iter().any(|i| &i.name == n) {
                    return Err(self.err(span, format!("`{n}` needs its arguments: `{n}(...)`")));
                } else {
                    AstKind::Name(n.clone())
                }
            }
            AstKind::Call {
                name, args, angle, ..
            } => {
                if let Some(k) = self.inputs.iter().position(|i| &i.name == name) {
                    let inp = &self.inputs[k];
                    if args.len() != inp.dims {
                        return Err(self.err(
                            span,
                            format!(
                                "`{name}` has {} dimension(s) but is read with {} index(es)",
                                inp.dims,
                                args.len()
                            ),
                        ));
                    }
                    let idx = args
                        .iter()
                        .map(|a| self.index(a, env))
                        .collect::<Result<Vec<_>, _>>()?;
                    let acc = Access { input: k, idx };
                    let id = match self.accesses.iter().position(|a| *a == acc) {
                        Some(i) => i,
                        None => {
                            self.accesses.push(acc);
                            self.accesses.len() - 1
                        }
                    };
                    let v = format!("@a{id}");
                    self.decls = std::mem::take(&mut self.decls).var(&v, Type::scalar(inp.elem));
                    AstKind::Name(v)
                } else if let Some(d) = self.defs.get(name) {
                    if args.len() != d.params.len() {
                        return Err(self.err(
                            span,
                            format!(
                                "`{name}` takes {} argument(s), given {}",
                                d.params.len(),
                                args.len()
                            ),
                        ));
                    }
                    let mut inner = Env::default();
                    for (pn, a) in d.params.iter().zip(args) {
                        inner.vars.insert(pn.clone(), self.index(a, env)?);
                    }
                    let body = d.body.clone();
                    return self.inline(&body, &inner).map(|mut a| {
                        // Errors inside the definition point at the definition; the
                        // inlined tree keeps the call's span for type errors.
                        if !matches!(a.kind, AstKind::Name(_)) {
                            a.span = span.clone();
                        }
                        a
                    });
                } else if let Some(kind) = match name.as_str() {
                    "sum" => Some(ReduceKind::Sum),
                    "minimum" => Some(ReduceKind::Min),
                    "maximum" => Some(ReduceKind::Max),
                    _ => None,
                } {
                    return self.reduction(kind, args, span, env);
                } else {
                    let args = args
                        .iter()
                        .map(|a| self.inline(a, env))
                        .collect::<Result<Vec<_>, _>>()?;
                    AstKind::Call {
                        name: name.clone(),
                        name_span: span.clone(),
                        angle: angle.clone(),
                        args,
                    }
                }
            }
            AstKind::Index { name, .. } => {
                return Err(self.err(
                    span,
                    format!("read buffers with `{name}(x, y)`, not `{name}[...]`"),
                ));
            }
            AstKind::Typed { ty, ty_span, e } => AstKind::Typed {
                ty: ty.clone(),
                ty_span: ty_span.clone(),
                e: Box::new(self.inline(e, env)?),
            },
            AstKind::Unary(op, a) => AstKind::Unary(*op, Box::new(self.inline(a, env)?)),
            AstKind::Binary(op, a, b) => AstKind::Binary(
                *op,
                Box::new(self.inline(a, env)?),
                Box::new(self.inline(b, env)?),
            ),
            AstKind::Let { name, value, body } => {
                let mut inner = env.clone();
                inner.vars.remove(name);
                AstKind::Let {
                    name: name.clone(),
                    value: Box::new(self.inline(value, env)?),
                    body: Box::new(self.inline(body, &inner)?),
                }
            }
            AstKind::List(xs) => AstKind::List(
                xs.iter()
                    .map(|a| self.inline(a, env))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            k @ (AstKind::Int(_) | AstKind::Float(_) | AstKind::Bool(_)) => k.clone(),
        };
        Ok(node(kind, span))
    }

    fn reduction(
        &mut self,
        kind: ReduceKind,
        args: &[Ast],
        span: &Range<usize>,
        env: &Env,
    ) -> Result<Ast, Diag> {
        let usage = format!("expected `{}(DOMAIN, expression)`", kind.name());
        let [dom, body] = args else {
            return Err(self.err(span, usage));
        };
        let AstKind::Name(dn) = &dom.kind else {
            return Err(self.err(&dom.span, usage));
        };
        let Some(rd) = self.rdoms.get(dn) else {
            return Err(self.err(&dom.span, format!("`{dn}` is not a declared `rdom`")));
        };
        // A one-dimensional domain's variable is its name (`k`, also `k.x`); others have
        // `r.x`, `r.y`, `r.z`.
        let names: Vec<String> = if rd.dims.len() == 1 {
            vec![dn.clone()]
        } else {
            ["x", "y", "z"][..rd.dims.len()]
                .iter()
                .map(|s| format!("{dn}.{s}"))
                .collect()
        };
        let bind = |env: &mut Env, d: usize, a: Affine| {
            if rd.dims.len() == 1 {
                env.vars.insert(format!("{dn}.x"), a.clone());
            }
            env.vars.insert(names[d].clone(), a);
        };
        if env.vars.contains_key(&names[0]) || self.loop_vars.contains(&names[0]) {
            let (l, c) = self.src.line_col(rd.span.start);
            return Err(self.err(
                span,
                format!("`{dn}` (declared at {l}:{c}) is already being reduced over here"),
            ));
        }
        let points: Option<i64> = rd.dims.iter().try_fold(1i64, |n, (lo, hi)| match hi {
            Bound::Const(h) => Some(n.saturating_mul(h - lo)),
            Bound::Param(_) => None,
        });
        if let Some(n) = points
            && n <= UNROLL_LIMIT
        {
            if n == 0 {
                return Err(self.err(span, format!("the domain `{dn}` is empty")));
            }
            // Unroll: one copy of the body per point, innermost dimension fastest.
            let mut acc: Option<Ast> = None;
            let mut point = vec![0i64; rd.dims.len()];
            for i in 0..n {
                let mut rem = i;
                for (d, (lo, hi)) in rd.dims.iter().enumerate() {
                    let Bound::Const(h) = hi else { unreachable!() };
                    point[d] = lo + rem % (h - lo);
                    rem /= h - lo;
                }
                let mut inner = env.clone();
                for (d, v) in point.iter().enumerate() {
                    bind(&mut inner, d, Affine::constant(*v));
                }
                let b = self.inline(body, &inner)?;
                acc = Some(match acc {
                    None => b,
                    Some(a) => match kind {
                        ReduceKind::Sum => {
                            node(AstKind::Binary(Binary::Add, Box::new(a), Box::new(b)), span)
                        }
                        _ => node(
                            AstKind::Call {
                                name: if kind == ReduceKind::Min {
                                    "min"
                                } else {
                                    "max"
                                }
                                .into(),
                                name_span: span.clone(),
                                angle: None,
                                args: vec![a, b],
                            },
                            span,
                        ),
                    },
                });
            }
            return Ok(acc.expect("the domain has points"));
        }
        // A loop: the domain variables are loop variables of the body.
        let mut inner = env.clone();
        let dims: Vec<DomainDim> = rd
            .dims
            .iter()
            .enumerate()
            .map(|(d, (lo, hi))| DomainDim {
                var: names[d].clone(),
                lo: *lo,
                hi: hi.clone(),
            })
            .collect();
        let saved = self.loop_vars.len();
        for (i, d) in dims.iter().enumerate() {
            bind(&mut inner, i, Affine::var(&d.var));
            self.loop_vars.push(d.var.clone());
            self.decls = std::mem::take(&mut self.decls).var(&d.var, Type::INDEX);
        }
        let b = self.inline(body, &inner);
        self.loop_vars.truncate(saved);
        let b = self.elab(&b?)?;
        let id = self.reductions.len();
        let v = format!("@r{id}");
        self.decls = std::mem::take(&mut self.decls).var(&v, b.ty());
        self.reductions.push(Reduction {
            kind,
            dom: dims,
            body: b,
        });
        Ok(node(AstKind::Name(v), span))
    }
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
