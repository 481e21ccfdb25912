//! Inlining and elaboration of a kernel's output bodies (the second phase of
//! [`super::parse::parse`]): definitions inlined at each use with their arguments as affine
//! indices, reductions unrolled or made loops, each distinct buffer read a variable `@aK`.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::{Access, Affine, Bound, DomainDim, Input, Param, ReduceKind, Reduction};
use crate::diag::{Diag, Source};
use crate::ir::Expr;
use crate::syntax::elab::{Decls, ElabOptions, Elaborator};
use crate::syntax::parse::{Ast, AstKind, Binary, Unary};
use crate::types::Type;

/// The largest magnitude of a constant or coefficient in an index: far beyond any stencil
/// or stride, and small enough that products of two stay exact and offsets fit the
/// generated code's 32-bit index arithmetic.
pub const MAX_INDEX_CONSTANT: i64 = 1 << 24;

/// Constant reduction domains with at most this many points are unrolled.
pub const UNROLL_LIMIT: i64 = 64;

/// A `def`: its parameters and body.
pub(super) struct Def {
    pub(super) params: Vec<String>,
    pub(super) body: Ast,
}

/// An `rdom`: per dimension its first value and bound, and where it is declared.
pub(super) struct Rdom {
    pub(super) dims: Vec<(i64, Bound)>,
    pub(super) span: Range<usize>,
}

/// Names in scope while inlining: definition parameters and domain variables, each an
/// affine index.
#[derive(Clone, Default)]
pub(super) struct Env {
    pub(super) vars: HashMap<String, Affine>,
}

/// The state of inlining a kernel's bodies: the declarations they may use, and the
/// accesses and loop reductions found so far (shared by every output of the kernel).
pub(super) struct Inliner<'a> {
    pub(super) src: &'a Arc<Source>,
    pub(super) inputs: &'a [Input],
    pub(super) params: &'a [Param],
    pub(super) rdoms: &'a HashMap<String, Rdom>,
    pub(super) defs: &'a HashMap<String, Def>,
    pub(super) accesses: Vec<Access>,
    pub(super) reductions: Vec<Reduction>,
    pub(super) decls: Decls,
    pub(super) depth: usize,
    /// Domain variables of the enclosing loop reductions.
    pub(super) loop_vars: Vec<String>,
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

    /// The IR of an inlined body, typed by the ordinary elaborator, `let`s inlined.
    pub(super) fn elab(&mut self, ast: &Ast) -> Result<Expr, Diag> {
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

    /// `ast` with definitions inlined, reductions unrolled or made loops, buffer reads
    /// made access variables, in the scope `env`.
    pub(super) fn inline(&mut self, ast: &Ast, env: &Env) -> Result<Ast, Diag> {
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
