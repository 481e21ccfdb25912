//! Elaboration: surface trees ([`Ast`]) to typed IR, reporting type errors at their spans.
//!
//! Typing follows Halide's front end:
//! - an integer literal has no type of its own; it takes its partner operand's type (see
//!   [`literal_type`]) and is `i32` when nothing else decides;
//! - `(T)e` is a typed constant when `e` is a literal, the result type of a call whose type
//!   is not implied by its operands (`saturating_cast`, `reinterpret`, loads), and otherwise
//!   a wrapping cast (an identity when the types already agree). A scalar `T` on a vector
//!   names only the element type, which is how simd_op_check prints vectorized expressions;
//! - a scalar combined with a vector is broadcast;
//! - when a lane variable is set (`x` at width `w`), `x` is `ramp(0, 1, w)`, so a scalar
//!   function of `x` becomes a `w`-lane vector expression and `in(x + 16)` a dense load.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::parse::{Ast, AstKind, Binary, Unary};
use crate::diag::{Diag, Source};
use crate::ir::{Expr, Op, Sym};
use crate::types::{Elem, Type};

/// Declared types of free variables and buffers.
#[derive(Clone, Debug, Default)]
pub struct Decls {
    /// Variable name to type.
    pub vars: HashMap<String, Type>,
    /// Buffer name to element type.
    pub buffers: HashMap<String, Elem>,
}

impl Decls {
    /// No declarations.
    pub fn new() -> Decls {
        Decls::default()
    }

    /// Declares a variable.
    pub fn var(mut self, name: &str, ty: Type) -> Decls {
        self.vars.insert(name.to_string(), ty);
        self
    }

    /// Declares a buffer.
    pub fn buffer(mut self, name: &str, elem: Elem) -> Decls {
        self.buffers.insert(name.to_string(), elem);
        self
    }
}

/// What a rule pattern may use beyond ordinary expressions (see `docs/rules.md`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RuleScope {
    /// Type variables and the element types they stand for in this instantiation.
    #[serde(serialize_with = "sorted_types")]
    pub types: HashMap<String, Elem>,
    /// Further names that stand for constants (the immediates of an instruction).
    pub consts: std::collections::BTreeSet<String>,
}

/// Writes the type variables in name order, so that a rule table's bytes do not depend on
/// the hash map's order.
fn sorted_types<S: serde::Serializer>(m: &HashMap<String, Elem>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&m.iter().collect::<std::collections::BTreeMap<_, _>>(), s)
}

impl RuleScope {
    /// The value of a type attribute such as `T.max`, `u8.bits` or `U.min`.
    pub fn attr(&self, name: &str) -> Option<i128> {
        let (ty, attr) = name.rsplit_once('.')?;
        let elem = match self.types.get(ty) {
            Some(e) => *e,
            None => Elem::parse(ty, false)?,
        };
        match attr {
            "bits" => Some(elem.bits() as i128),
            "max" => elem.max_value(),
            "min" => Some(elem.min_value()),
            "signed" => Some(elem.is_signed() as i128),
            _ => None,
        }
    }
}

/// True for constant wildcard names: `c0`, `c1`, ...
pub fn is_wildcard(name: &str) -> bool {
    name.len() > 1 && name.starts_with('c') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Functions allowed in constant expressions of rules.
pub const CONST_FUNCS: &[&str] = &["log2", "abs", "min", "max", "is_pow2"];

/// Options of one elaboration.
#[derive(Clone, Debug, Default)]
pub struct ElabOptions {
    /// The vectorized loop variable and the vector width (simd_op_check's `x` and `w=`).
    pub lane_var: Option<(String, u32)>,
    /// Accept the internal 128-bit types (only the FPIR definitions need them).
    pub allow_internal: bool,
    /// Elaborate a rule pattern: type variables, constant wildcards and computed constants.
    pub rule: Option<RuleScope>,
    /// Target instructions callable by their intrinsic names (target rule files).
    pub instrs: Option<std::sync::Arc<crate::ir::instr::InstrTable>>,
    /// Accept `f32` types and float literals (`harrow eval`). Off everywhere else: the
    /// integer pipeline (lifting, selection, verification) must never meet a float.
    pub allow_float: bool,
}

/// Where an integer literal appears, which decides its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LitRole {
    /// A partner of an operand of type `T` in a same-type operator: the literal is a `T`.
    Peer,
    /// The amount of a shift of a `T`: `T`, or its signed twin when the literal is negative.
    ShiftAmount,
    /// The shift of `mul_shift_right` on `T`: unsigned `T`.
    MulShift,
    /// The narrow operand of `widen_right_*` on `T`: half of `T`.
    WidenRight,
    /// The wide operand of `widen_right_*` whose narrow operand is a `T`: twice `T`.
    WidenLeft,
}

/// The type an integer literal gets in `role` next to an operand of type `partner`; with no
/// partner it is `i32`, as Halide prints its `int32` constants bare.
pub fn literal_type(role: LitRole, partner: Option<Type>, value: i128) -> Type {
    let Some(p) = partner else {
        return Type::INDEX;
    };
    let e = p.elem;
    let elem = match role {
        LitRole::Peer => e,
        LitRole::ShiftAmount if value < 0 && e.is_int() => e.with_signed(true),
        LitRole::ShiftAmount => e,
        LitRole::MulShift => e.to_unsigned(),
        LitRole::WidenRight => e.narrow().unwrap_or(e),
        LitRole::WidenLeft => e.widen().filter(|w| !w.is_internal()).unwrap_or(Elem::I32),
    };
    Type::scalar(elem)
}

/// An elaborated operand: a typed expression or a literal still waiting for its type.
#[derive(Clone, Debug)]
enum Val {
    E(Expr),
    Lit(i128, Range<usize>),
    /// In rule patterns: a constant wildcard or a computed constant, typed like a literal.
    Const(Ast),
}

/// Elaborates surface trees against declarations.
pub struct Elaborator<'a> {
    src: &'a Arc<Source>,
    decls: &'a Decls,
    opts: ElabOptions,
    scopes: Vec<(String, Type)>,
    /// Rule mode: each constant expression met, with the element type it got; the
    /// expression refers to entry `k` as the variable `$k`.
    pub consts: Vec<(Ast, Elem)>,
    /// Rule mode: how many written casts were dropped because they would change nothing
    /// in this instantiation.
    pub noop_casts: usize,
    /// Set when elaboration failed only because a 128-bit type would be needed.
    pub needs_internal: bool,
}

impl<'a> Elaborator<'a> {
    /// An elaborator for `src`.
    pub fn new(src: &'a Arc<Source>, decls: &'a Decls, opts: ElabOptions) -> Self {
        Elaborator {
            src,
            decls,
            opts,
            scopes: Vec::new(),
            consts: Vec::new(),
            noop_casts: 0,
            needs_internal: false,
        }
    }

    fn err(&self, span: &Range<usize>, msg: impl Into<String>) -> Diag {
        Diag::new(self.src, span.clone(), msg)
    }

    /// Elaborates a whole expression; a bare literal becomes an `i32` constant.
    pub fn expr(&mut self, ast: &Ast) -> Result<Expr, Diag> {
        let v = self.elab(ast)?;
        self.resolve(v, Type::INDEX)
    }

    fn build(
        &mut self,
        op: Op,
        ty: Option<Type>,
        args: Vec<Expr>,
        span: &Range<usize>,
    ) -> Result<Expr, Diag> {
        let e = Expr::build(op, ty, args).map_err(|e| self.err(span, e.0))?;
        if e.ty().elem.is_internal() && !self.opts.allow_internal {
            self.needs_internal = true;
            return Err(self.err(
                span,
                format!(
                    "this needs the 128-bit type {}, which harrow does not support in user code",
                    e.ty()
                ),
            ));
        }
        Ok(e)
    }

    /// Gives a literal the type `ty` (broadcast to its lanes); passes expressions through.
    fn resolve(&mut self, v: Val, ty: Type) -> Result<Expr, Diag> {
        match v {
            Val::E(e) => Ok(e),
            Val::Const(ast) => {
                if ty.elem == Elem::Bool {
                    return Err(self.err(&ast.span, "a constant here would be a bool"));
                }
                let k = self.consts.len();
                self.consts.push((ast, ty.elem));
                Ok(Expr::var(format!("${k}").as_str(), Type::scalar(ty.elem)).broadcast(ty.lanes))
            }
            Val::Lit(value, span) => {
                if ty.elem == Elem::Bool {
                    return Err(self.err(
                        &span,
                        "an integer literal cannot be a bool; use true or false",
                    ));
                }
                let c = Expr::int(ty.elem, value).map_err(|_| {
                    self.err(
                        &span,
                        format!("literal {value} does not fit in {}", ty.elem),
                    )
                })?;
                Ok(c.broadcast(ty.lanes))
            }
        }
    }

    /// Resolves a literal in `role` against a partner value, broadcasting scalars.
    fn resolve_against(&mut self, v: Val, role: LitRole, partner: &Val) -> Result<Expr, Diag> {
        match (&v, partner) {
            (Val::Lit(_, _) | Val::Const(_), Val::E(p)) => {
                let value = if let Val::Lit(x, _) = v { x } else { 0 };
                let t = literal_type(role, Some(p.ty()), value);
                self.resolve(v.clone(), t.with_lanes(p.ty().lanes))
            }
            (Val::Lit(..) | Val::Const(_), _) => self.resolve(v, Type::INDEX),
            (Val::E(e), _) => Ok(e.clone()),
        }
    }

    /// Two operands of a same-type operator: literals adopt the other side's type and a
    /// scalar is broadcast to the other side's lanes.
    fn unify(
        &mut self,
        a: Val,
        b: Val,
        what: &str,
        span: &Range<usize>,
    ) -> Result<(Expr, Expr), Diag> {
        let ea = self.resolve_against(a.clone(), LitRole::Peer, &b)?;
        let eb = self.resolve_against(b, LitRole::Peer, &Val::E(ea.clone()))?;
        let (ea, eb) = self.match_lanes(ea, eb, span)?;
        if ea.ty() != eb.ty() {
            return Err(self.err(
                span,
                format!(
                    "operands of {what} have different types: {} and {}",
                    ea.ty(),
                    eb.ty()
                ),
            ));
        }
        Ok((ea, eb))
    }

    /// Broadcasts a scalar to the lanes of a vector partner.
    fn match_lanes(&self, a: Expr, b: Expr, span: &Range<usize>) -> Result<(Expr, Expr), Diag> {
        let (la, lb) = (a.ty().lanes, b.ty().lanes);
        if la == lb {
            Ok((a, b))
        } else if la == 1 {
            Ok((a.broadcast(lb), b))
        } else if lb == 1 {
            let b = b.broadcast(la);
            Ok((a, b))
        } else {
            Err(self.err(span, format!("operands have {la} and {lb} lanes")))
        }
    }

    fn lookup(&self, name: &str) -> Option<Type> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .or_else(|| self.decls.vars.get(name).copied())
    }

    fn parse_type(&self, name: &str, span: &Range<usize>) -> Result<Type, Diag> {
        if let Some(rule) = &self.opts.rule {
            if let Some(e) = rule.types.get(name) {
                return Ok(Type::scalar(*e));
            }
            // `Tx16`: a vector of a type variable.
            if let Some((head, lanes)) = name.rsplit_once('x')
                && let Some(e) = rule.types.get(head)
                && let Ok(l) = lanes.parse::<u32>()
                && l > 0
            {
                return Ok(Type::vec(*e, l));
            }
        }
        if self.opts.allow_float
            && let Some(t) = Type::parse_float(name)
        {
            return Ok(t);
        }
        if name.starts_with("float")
            || name.starts_with("f32")
            || name.starts_with("f64")
            || name.starts_with("f16")
            || name.starts_with("bfloat")
        {
            return Err(self.err(span, format!("floating-point type `{name}` is not supported here"))
                .note("harrow compiles integer code; `harrow eval` evaluates f32 expressions, and `harrow float compile` vectorizes float kernels written in C"));
        }
        Type::parse(name, self.opts.allow_internal)
            .ok_or_else(|| self.err(span, format!("unknown type `{name}`")))
    }

    fn elab(&mut self, ast: &Ast) -> Result<Val, Diag> {
        let span = &ast.span;
        if let Some(rule) = &self.opts.rule
            && !matches!(ast.kind, AstKind::Int(_))
            && is_const_ast(ast, rule)
        {
            // `T.max` and other attributes are plain literals; anything computed (and every
            // wildcard) waits for a type like a literal and is evaluated when the rule fires.
            if let AstKind::Name(n) = &ast.kind
                && let Some(v) = rule.attr(n)
            {
                return Ok(Val::Lit(v, span.clone()));
            }
            if let AstKind::Unary(Unary::Neg, inner) = &ast.kind
                && let AstKind::Int(v) = inner.kind
            {
                return Ok(Val::Lit(-v, span.clone()));
            }
            return Ok(Val::Const(ast.clone()));
        }
        match &ast.kind {
            AstKind::Int(v) => Ok(Val::Lit(*v, span.clone())),
            AstKind::Float(s) if self.opts.allow_float => {
                let x: f32 = s
                    .trim_end_matches(['f', 'F'])
                    .parse()
                    .map_err(|_| self.err(span, format!("bad float literal `{s}`")))?;
                Ok(Val::E(Expr::bits(Elem::F32, x.to_bits() as u128)))
            }
            AstKind::Float(s) => Err(self
                .err(span, format!("floating-point literal `{s}` is not supported here"))
                .note("harrow compiles integer code; `harrow eval` evaluates f32 expressions, and `harrow float compile` vectorizes float kernels written in C")),
            AstKind::Bool(b) => Ok(Val::E(Expr::bits(Elem::Bool, *b as u128))),
            AstKind::Name(n) => {
                if let Some((lv, w)) = &self.opts.lane_var
                    && n == lv
                    && self.lookup(n).is_none()
                {
                    let zero = Expr::int(Elem::I32, 0).expect("fits");
                    let one = Expr::int(Elem::I32, 1).expect("fits");
                    return Ok(Val::E(self.build(
                        Op::Ramp,
                        Some(Type::vec(Elem::I32, *w)),
                        vec![zero, one],
                        span,
                    )?));
                }
                match self.lookup(n) {
                    Some(t) => Ok(Val::E(Expr::var(n.as_str(), t))),
                    None => Err(self
                        .err(span, format!("unknown variable `{n}`"))
                        .note(format!("declare its type, e.g. `--input {n}:u8x16` on the command line or `input {n}: u8x16` in a file"))),
                }
            }
            AstKind::Typed { ty, ty_span, e } => {
                let t = self.parse_type(ty, ty_span)?;
                match &e.kind {
                    AstKind::Call { .. } | AstKind::Index { .. } => self.call_or_index(e, Some(t)),
                    _ => {
                        let v = self.elab(e)?;
                        match v {
                            Val::Lit(..) | Val::Const(_) => Ok(Val::E(self.resolve(v, t)?)),
                            Val::E(x) => Ok(Val::E(self.cast_annot(x, t, span)?)),
                        }
                    }
                }
            }
            AstKind::Unary(op, inner) => {
                let v = self.elab(inner)?;
                match (op, v) {
                    (Unary::Neg, Val::Lit(x, _)) => Ok(Val::Lit(-x, span.clone())),
                    (Unary::Neg, Val::Const(_)) => Ok(Val::Const(ast.clone())),
                    (Unary::Neg, Val::E(e)) if e.ty().elem.is_float() => {
                        // `-1.5f` is the constant; `-x` flips the sign (`0 - x` would
                        // give +0 for x = 0).
                        if let Op::Const(b) = e.op() {
                            let x = crate::interp::float::from_lane(*b);
                            return Ok(Val::E(Expr::bits(
                                Elem::F32,
                                crate::interp::float::to_lane(-x),
                            )));
                        }
                        Ok(Val::E(self.build(Op::FNeg, None, vec![e], span)?))
                    }
                    (Unary::Neg, Val::E(e)) => {
                        if !e.ty().elem.is_int() {
                            return Err(self.err(span, "cannot negate a bool"));
                        }
                        let zero = Expr::splat(e.ty(), 0).expect("zero fits");
                        Ok(Val::E(self.build(Op::Sub, None, vec![zero, e], span)?))
                    }
                    (Unary::Not, v) => {
                        let e = match v {
                            Val::E(e) => e,
                            Val::Lit(..) | Val::Const(_) => {
                                return Err(self.err(span, "`!` needs a bool operand"));
                            }
                        };
                        if e.ty().elem != Elem::Bool {
                            return Err(self.err(
                                span,
                                format!(
                                    "`!` needs a bool operand, found {}; use `~` for bitwise not",
                                    e.ty()
                                ),
                            ));
                        }
                        Ok(Val::E(self.build(Op::Not, None, vec![e], span)?))
                    }
                    (Unary::BitNot, v) => {
                        let e = self.resolve(v, Type::INDEX)?;
                        Ok(Val::E(self.build(Op::Not, None, vec![e], span)?))
                    }
                }
            }
            AstKind::Binary(op, l, r) => {
                let a = self.elab(l)?;
                let b = self.elab(r)?;
                self.binary(*op, a, b, span)
            }
            AstKind::Let { name, value, body } => {
                let v = self.elab(value)?;
                let v = self.resolve(v, Type::INDEX)?;
                self.scopes.push((name.clone(), v.ty()));
                let b = self.elab(body);
                self.scopes.pop();
                let b = self.resolve(b?, Type::INDEX)?;
                let sym: Sym = name.as_str().into();
                Ok(Val::E(self.build(Op::Let(sym), None, vec![v, b], span)?))
            }
            AstKind::List(_) => {
                Err(self.err(span, "a list is only allowed as the indices of `shuffle`"))
            }
            AstKind::Call { .. } | AstKind::Index { .. } => self.call_or_index(ast, None),
        }
    }

    /// Applies a `(T)` annotation to a typed expression: the identity when it agrees,
    /// otherwise a wrapping cast. A scalar `T` on a vector names the element type only.
    fn cast_annot(&mut self, e: Expr, t: Type, span: &Range<usize>) -> Result<Expr, Diag> {
        let target = self.annot_target(&e, t, span)?;
        if target == e.ty() {
            return Ok(e);
        }
        self.build(Op::Cast, Some(target), vec![e], span)
    }

    fn annot_target(&self, e: &Expr, t: Type, span: &Range<usize>) -> Result<Type, Diag> {
        if t.lanes == e.ty().lanes {
            Ok(t)
        } else if t.lanes == 1 {
            Ok(t.with_lanes(e.ty().lanes))
        } else if e.ty().lanes == 1 {
            Ok(t)
        } else {
            Err(self.err(span, format!("cannot annotate {} as {t}", e.ty())))
        }
    }

    fn binary(&mut self, op: Binary, a: Val, b: Val, span: &Range<usize>) -> Result<Val, Diag> {
        let what = format!("`{}`", op.symbol());
        let ir = match op {
            Binary::Add => Op::Add,
            Binary::Sub => Op::Sub,
            Binary::Mul => Op::Mul,
            Binary::Div => Op::Div,
            Binary::Mod => Op::Mod,
            Binary::Lt => Op::Lt,
            Binary::Le => Op::Le,
            Binary::Gt => Op::Gt,
            Binary::Ge => Op::Ge,
            Binary::Eq => Op::Eq,
            Binary::Ne => Op::Ne,
            Binary::BitAnd => Op::And,
            Binary::BitOr => Op::Or,
            Binary::BitXor => Op::Xor,
            Binary::LogAnd | Binary::LogOr => {
                let (x, y) = self.unify(a, b, &what, span)?;
                if x.ty().elem != Elem::Bool {
                    return Err(self.err(span, format!("{what} needs bool operands, found {}; use `&`/`|` for bitwise operations", x.ty())));
                }
                let o = if op == Binary::LogAnd {
                    Op::And
                } else {
                    Op::Or
                };
                return Ok(Val::E(self.build(o, None, vec![x, y], span)?));
            }
            Binary::Shl | Binary::Shr => {
                let o = if op == Binary::Shl { Op::Shl } else { Op::Shr };
                return Ok(Val::E(self.shift(o, a, b, span)?));
            }
        };
        let (x, y) = self.unify(a, b, &what, span)?;
        Ok(Val::E(self.build(ir, None, vec![x, y], span)?))
    }

    fn shift(&mut self, op: Op, a: Val, b: Val, span: &Range<usize>) -> Result<Expr, Diag> {
        let x = self.resolve(a, Type::INDEX)?;
        let y = self.resolve_against(b, LitRole::ShiftAmount, &Val::E(x.clone()))?;
        let (x, y) = self.match_lanes(x, y, span)?;
        self.build(op, None, vec![x, y], span)
    }

    fn lit_list(&self, ast: &Ast) -> Result<i128, Diag> {
        match &ast.kind {
            AstKind::Int(v) => Ok(*v),
            AstKind::Unary(Unary::Neg, inner) => Ok(-self.lit_list(inner)?),
            _ => Err(self.err(&ast.span, "expected an integer constant")),
        }
    }

    fn lit_u32(&self, ast: &Ast, what: &str) -> Result<u32, Diag> {
        let v = self.lit_list(ast)?;
        u32::try_from(v).map_err(|_| {
            self.err(
                &ast.span,
                format!("{what} must be a non-negative integer, found {v}"),
            )
        })
    }

    fn arity(&self, name: &str, args: &[Ast], n: usize, span: &Range<usize>) -> Result<(), Diag> {
        if args.len() != n {
            return Err(self.err(
                span,
                format!(
                    "`{name}` takes {n} argument{}, found {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        Ok(())
    }

    fn call_or_index(&mut self, ast: &Ast, annot: Option<Type>) -> Result<Val, Diag> {
        let span = &ast.span;
        match &ast.kind {
            AstKind::Index { name, index, align } => {
                let idx = self.elab(index)?;
                let align = align.map(|(m, r)| crate::ir::Align {
                    modulus: m,
                    remainder: r,
                });
                Ok(Val::E(self.load(name, idx, annot, align, span)?))
            }
            AstKind::Call {
                name,
                name_span,
                angle,
                args,
            } => {
                let annot = match angle {
                    Some((t, s)) => Some(self.parse_type(t, s)?),
                    None => annot,
                };
                self.call(name, name_span, args, annot, span)
            }
            _ => unreachable!("only calls and indexing reach here"),
        }
    }

    fn load(
        &mut self,
        name: &str,
        idx: Val,
        annot: Option<Type>,
        align: Option<crate::ir::Align>,
        span: &Range<usize>,
    ) -> Result<Expr, Diag> {
        let mut idx = self.resolve(idx, Type::INDEX)?;
        if idx.ty().elem == Elem::Bool {
            return Err(self.err(
                span,
                format!(
                    "the index of `{name}` must be an integer, found {}",
                    idx.ty()
                ),
            ));
        }
        if idx.ty().elem != Elem::I32 {
            // Halide converts the arguments of a Func call to int32.
            idx = self.build(
                Op::Cast,
                Some(idx.ty().with_elem(Elem::I32)),
                vec![idx],
                span,
            )?;
        }
        let elem = match annot {
            Some(t) => {
                if t.lanes != 1 && t.lanes != idx.ty().lanes {
                    return Err(self.err(
                        span,
                        format!(
                            "a load of {t} needs {} index lanes, found {}",
                            t.lanes,
                            idx.ty().lanes
                        ),
                    ));
                }
                t.elem
            }
            None => match self.decls.buffers.get(name) {
                Some(e) => *e,
                None => buffer_elem_from_name(name).unwrap_or(Elem::I32),
            },
        };
        if let Some(declared) = self.decls.buffers.get(name)
            && *declared != elem
        {
            return Err(self.err(
                span,
                format!("buffer `{name}` holds {declared}, not {elem}"),
            ));
        }
        if self.opts.lane_var.is_none() {
            // Explicit IR: the index is kept exactly as written.
            let ty = Type::vec(elem, idx.ty().lanes);
            return self.build(Op::Load(name.into(), align), Some(ty), vec![idx], span);
        }
        let idx = canonical_index(&idx);
        if let Some(scalar) = as_broadcast_index(&idx) {
            // Every lane reads the same element: load it once and broadcast.
            let ld = self.build(
                Op::Load(name.into(), align),
                Some(Type::scalar(elem)),
                vec![scalar],
                span,
            )?;
            return Ok(ld.broadcast(idx.ty().lanes));
        }
        let ty = Type::vec(elem, idx.ty().lanes);
        self.build(Op::Load(name.into(), align), Some(ty), vec![idx], span)
    }

    /// A call of a target instruction by its intrinsic name: the instantiation whose
    /// operand types fit the arguments (literals take the operand's type; an immediate
    /// must be a constant in its range).
    fn intrinsic_call(
        &mut self,
        name: &str,
        cands: &[std::sync::Arc<crate::ir::instr::Instr>],
        args: &[Ast],
        span: &Range<usize>,
    ) -> Result<Expr, Diag> {
        let vals = args
            .iter()
            .map(|a| self.elab(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tried = Vec::new();
        'cand: for ins in cands {
            if ins.params.len() != vals.len() {
                tried.push(ins.clone());
                continue;
            }
            for (i, v) in vals.iter().enumerate() {
                let ok = match (v, ins.imm[i]) {
                    (Val::E(e), false) => e.ty() == ins.params[i],
                    (Val::Lit(x, _), true) => {
                        ins.imm_range[i].is_none_or(|(lo, hi)| *x >= lo && *x <= hi)
                    }
                    // A wildcard immediate: its range is the rule's business.
                    (Val::Const(_), true) => ins.imm_range[i].is_none_or(|(lo, hi)| lo != hi),
                    (Val::Lit(..) | Val::Const(_), false) => true,
                    (Val::E(e), true) => e.as_const().is_some() && e.ty().lanes == 1,
                };
                if !ok {
                    tried.push(ins.clone());
                    continue 'cand;
                }
            }
            let mut out = Vec::new();
            for (i, v) in vals.iter().enumerate() {
                let t = ins.params[i];
                let e = match v {
                    Val::E(e) if ins.imm[i] => {
                        let c = e.as_const().expect("checked");
                        Expr::int(t.elem, c).map_err(|_| {
                            self.err(&args[i].span, format!("immediate {c} does not fit in {t}"))
                        })?
                    }
                    _ => self.resolve(v.clone(), t)?,
                };
                out.push(e);
            }
            return self.build(Op::Instr(ins.clone()), None, out, span);
        }
        let shown: Vec<String> = vals
            .iter()
            .map(|v| match v {
                Val::E(e) => e.ty().to_string(),
                _ => "constant".to_string(),
            })
            .collect();
        let mut d = self.err(
            span,
            format!("no form of `{name}` takes ({})", shown.join(", ")),
        );
        for ins in tried.iter().take(8) {
            let ps: Vec<String> = ins
                .params
                .iter()
                .zip(&ins.imm_range)
                .map(|(t, r)| match r {
                    Some((lo, hi)) if lo == hi => format!("imm {lo}"),
                    Some((lo, hi)) => format!("imm {lo}..{hi}"),
                    None => t.to_string(),
                })
                .collect();
            d = d.note(format!(
                "{name}({}) -> {} ({})",
                ps.join(", "),
                ins.result,
                ins.location
            ));
        }
        Err(d)
    }

    /// A type name applied as a function: a cast (`uint16(x)`, `uint8x32(e)`).
    fn cast_call(
        &mut self,
        name: &str,
        name_span: &Range<usize>,
        args: &[Ast],
        annot: Option<Type>,
        span: &Range<usize>,
    ) -> Result<Val, Diag> {
        let t = self.parse_type(name, name_span)?;
        self.arity(name, args, 1, span)?;
        let v = self.elab(&args[0])?;
        let e = match v {
            // In a rule, `U(c0)` and `U(1)` are constants of type U.
            Val::Lit(..) | Val::Const(_) if self.opts.rule.is_some() => {
                return Ok(Val::E(self.resolve(v, t)?));
            }
            Val::Lit(..) | Val::Const(_) => self.resolve(v, Type::INDEX)?,
            Val::E(e) => e,
        };
        if self.opts.rule.is_some() && t.lanes == 1 && e.ty().elem == t.elem {
            // Rule patterns are elaborated for every instantiation; a cast to the type
            // the operand already has is no cast at all.
            self.noop_casts += 1;
            return Ok(Val::E(self.apply_annot(e, annot, span)?));
        }
        // A scalar type applied to a vector casts each lane (simd_op_check's `int16(v)`).
        let t = if t.lanes == 1 {
            t.with_lanes(e.ty().lanes)
        } else {
            t
        };
        let e = if e.ty().lanes == 1 && t.lanes > 1 {
            e.broadcast(t.lanes)
        } else {
            e
        };
        // Written casts are kept even when they change nothing, so printing gives back
        // exactly what was parsed.
        let c = self.build(Op::Cast, Some(t), vec![e], span)?;
        Ok(Val::E(self.apply_annot(c, annot, span)?))
    }

    /// `xN(e)`: `n` copies of e.
    fn broadcast_call(
        &mut self,
        name: &str,
        n: u32,
        args: &[Ast],
        annot: Option<Type>,
        span: &Range<usize>,
    ) -> Result<Val, Diag> {
        self.arity(name, args, 1, span)?;
        let v = self.elab(&args[0])?;
        let e = self.resolve(v, Type::INDEX)?;
        let lanes = e
            .ty()
            .lanes
            .checked_mul(n)
            .ok_or_else(|| self.err(span, "too many lanes"))?;
        let b = self.build(Op::Broadcast, Some(e.ty().with_lanes(lanes)), vec![e], span)?;
        Ok(Val::E(self.apply_annot(b, annot, span)?))
    }

    /// Halide's `clamp(x, lo, hi)`, which is `max(min(x, hi), lo)`.
    fn clamp_call(
        &mut self,
        name: &str,
        name_span: &Range<usize>,
        args: &[Ast],
        annot: Option<Type>,
        span: &Range<usize>,
    ) -> Result<Val, Diag> {
        self.arity(name, args, 3, span)?;
        let call = |n: &str, a: Vec<Ast>| Ast {
            kind: AstKind::Call {
                name: n.into(),
                name_span: name_span.clone(),
                angle: None,
                args: a,
            },
            span: span.clone(),
        };
        let inner = call("min", vec![args[0].clone(), args[2].clone()]);
        let outer = call("max", vec![inner, args[1].clone()]);
        let v = self.elab(&outer)?;
        match annot {
            Some(_) => {
                let e = self.resolve(v, Type::INDEX)?;
                Ok(Val::E(self.apply_annot(e, annot, span)?))
            }
            None => Ok(v),
        }
    }

    fn call(
        &mut self,
        name: &str,
        name_span: &Range<usize>,
        args: &[Ast],
        annot: Option<Type>,
        span: &Range<usize>,
    ) -> Result<Val, Diag> {
        // A type name used as a function is a cast: `uint16(x)`, `uint8x32(e)`.
        let is_type_var = self.opts.rule.as_ref().is_some_and(|r| {
            r.types.contains_key(name)
                || crate::types::type_var_of(name).is_some_and(|v| r.types.contains_key(v))
        });
        if is_type_var || looks_like_type_name(name) {
            return self.cast_call(name, name_span, args, annot, span);
        }
        // `xN(e)`: N copies of e.
        if let Some(n) = broadcast_count(name) {
            return self.broadcast_call(name, n, args, annot, span);
        }
        if let Some(table) = self.opts.instrs.clone()
            && let Some(cands) = table.get(name)
        {
            let e = self.intrinsic_call(name, cands, args, span)?;
            return Ok(Val::E(self.apply_annot(e, annot, span)?));
        }
        if name == "clamp" {
            return self.clamp_call(name, name_span, args, annot, span);
        }
        let e = match name {
            "cast" => {
                self.arity(name, args, 1, span)?;
                let t =
                    annot.ok_or_else(|| self.err(span, "`cast` needs a type: cast<uint8>(e)"))?;
                let v = self.elab(&args[0])?;
                let e = self.resolve(v, Type::INDEX)?;
                let target = self.annot_target(&e, t, span)?;
                return Ok(Val::E(self.build(Op::Cast, Some(target), vec![e], span)?));
            }
            "ramp" => {
                self.arity(name, args, 3, span)?;
                let lanes = self.lit_u32(&args[2], "the lane count of a ramp")?;
                if lanes == 0 {
                    return Err(self.err(&args[2].span, "a ramp needs at least one lane"));
                }
                let b = self.elab(&args[0])?;
                let s = self.elab(&args[1])?;
                let (b, s) = self.unify(b, s, "`ramp`", span)?;
                if lanes == 1 {
                    // A one-lane ramp is its base: every later phase treats it as the
                    // scalar it is (code generation has no C form for a lone ramp).
                    b
                } else {
                    let t = b.ty().with_lanes(lanes);
                    self.build(Op::Ramp, Some(t), vec![b, s], span)?
                }
            }
            "select" => {
                self.arity(name, args, 3, span)?;
                let c = self.elab(&args[0])?;
                let c = match c {
                    Val::E(c) if c.ty().elem == Elem::Bool => c,
                    Val::E(c) => {
                        return Err(self.err(
                            &args[0].span,
                            format!("select condition must be bool, found {}", c.ty()),
                        ));
                    }
                    Val::Lit(..) | Val::Const(_) => {
                        return Err(self.err(&args[0].span, "select condition must be bool"));
                    }
                };
                let a = self.elab(&args[1])?;
                let b = self.elab(&args[2])?;
                let (a, b) = self.unify(a, b, "`select`", span)?;
                let (c, a) = self.match_lanes(c, a, span)?;
                let (c, b) = self.match_lanes(c, b, span)?;
                let (a, b) = self.match_lanes(a, b, span)?;
                self.build(Op::Select, None, vec![c, a, b], span)?
            }
            "saturating_cast" => {
                self.arity(name, args, 1, span)?;
                let v = self.elab(&args[0])?;
                let e = self.resolve(v, Type::INDEX)?;
                let t = match annot {
                    Some(t) => self.annot_target(&e, t, span)?,
                    None => Type::vec(Elem::I32, e.ty().lanes),
                };
                let t = if t.lanes == 1 && e.ty().lanes > 1 {
                    t.with_lanes(e.ty().lanes)
                } else {
                    t
                };
                let e = if e.ty().lanes == 1 && t.lanes > 1 {
                    e.broadcast(t.lanes)
                } else {
                    e
                };
                return Ok(Val::E(self.build(
                    Op::SaturatingCast,
                    Some(t),
                    vec![e],
                    span,
                )?));
            }
            "reinterpret" => {
                self.arity(name, args, 1, span)?;
                let v = self.elab(&args[0])?;
                let e = self.resolve(v, Type::INDEX)?;
                // As Halide prints it, no `(T)` means int32.
                let t = annot.unwrap_or(Type::INDEX);
                let t = if t.lanes == 1 && e.ty().lanes > 1 {
                    let lanes = e.ty().total_bits() / t.elem.bits() as u64;
                    t.with_lanes(lanes as u32)
                } else {
                    t
                };
                return Ok(Val::E(self.build(
                    Op::Reinterpret,
                    Some(t),
                    vec![e],
                    span,
                )?));
            }
            "slice_vectors" => {
                self.arity(name, args, 4, span)?;
                let v = self.elab(&args[0])?;
                let v = self.resolve(v, Type::INDEX)?;
                let start = self.lit_u32(&args[1], "the start of a slice")?;
                let stride = self.lit_u32(&args[2], "the stride of a slice")?;
                let lanes = self.lit_u32(&args[3], "the lane count of a slice")?;
                if lanes == 0 {
                    return Err(self.err(&args[3].span, "a slice needs at least one lane"));
                }
                self.build(
                    Op::Slice { start, stride },
                    Some(v.ty().with_lanes(lanes)),
                    vec![v],
                    span,
                )?
            }
            "deinterleave_even" | "deinterleave_odd" => {
                self.arity(name, args, 1, span)?;
                let v = self.elab(&args[0])?;
                let v = self.resolve(v, Type::INDEX)?;
                let start = if name == "deinterleave_even" { 0 } else { 1 };
                let lanes = (v.ty().lanes - start).div_ceil(2);
                if lanes == 0 {
                    return Err(self.err(span, "nothing to deinterleave"));
                }
                self.build(
                    Op::Slice { start, stride: 2 },
                    Some(v.ty().with_lanes(lanes)),
                    vec![v],
                    span,
                )?
            }
            "shuffle" => {
                if args.len() < 2 {
                    return Err(self.err(span, "`shuffle` takes a list of indices and at least one vector: shuffle([0, 2], a)"));
                }
                let idx = match &args[0].kind {
                    AstKind::List(items) => items
                        .iter()
                        .map(|i| self.lit_u32(i, "a shuffle index"))
                        .collect::<Result<Vec<_>, _>>()?,
                    _ => {
                        return Err(self.err(
                            &args[0].span,
                            "the first argument of `shuffle` is a list of indices: [0, 2, ...]",
                        ));
                    }
                };
                let vs = args[1..]
                    .iter()
                    .map(|a| {
                        let v = self.elab(a)?;
                        self.resolve(v, Type::INDEX)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                self.build(Op::Shuffle(idx.into()), None, vs, span)?
            }
            "concat_vectors" | "interleave_vectors" => {
                if args.is_empty() {
                    return Err(self.err(span, format!("`{name}` needs at least one vector")));
                }
                let vs = args
                    .iter()
                    .map(|a| {
                        let v = self.elab(a)?;
                        self.resolve(v, Type::INDEX)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let op = if name == "concat_vectors" {
                    Op::Concat
                } else {
                    Op::Interleave
                };
                self.build(op, None, vs, span)?
            }
            "vector_reduce_add" | "vector_reduce_min" | "vector_reduce_max" => {
                // `vector_reduce_add(e)` takes its result type from `(T)`; an optional
                // second argument gives the reduction factor instead (Rake's form).
                if args.len() != 1 && args.len() != 2 {
                    return Err(self.err(
                        span,
                        format!("`{name}` takes a vector and optionally a reduction factor"),
                    ));
                }
                let v = self.elab(&args[0])?;
                let v = self.resolve(v, Type::INDEX)?;
                let t = match (args.get(1), annot) {
                    (Some(f), _) => {
                        let factor = self.lit_u32(f, "the factor of a reduction")?;
                        if factor == 0 || v.ty().lanes % factor != 0 {
                            return Err(self.err(
                                &f.span,
                                format!(
                                    "cannot reduce {} lanes by a factor of {factor}",
                                    v.ty().lanes
                                ),
                            ));
                        }
                        v.ty().with_lanes(v.ty().lanes / factor)
                    }
                    (None, Some(t)) => t,
                    (None, None) => Type::scalar(v.ty().elem),
                };
                let op = match name {
                    "vector_reduce_add" => Op::ReduceAdd,
                    "vector_reduce_min" => Op::ReduceMin,
                    _ => Op::ReduceMax,
                };
                return Ok(Val::E(self.build(op, Some(t), vec![v], span)?));
            }
            _ => {
                if let Some(op) = crate::ir::op::call_op(name) {
                    let e = self.op_call(op, name, args, span)?;
                    return Ok(Val::E(self.apply_annot(e, annot, span)?));
                }
                if self.decls.buffers.contains_key(name)
                    || annot.is_some()
                    || buffer_elem_from_name(name).is_some()
                {
                    self.arity(name, args, 1, span)?;
                    let idx = self.elab(&args[0])?;
                    return Ok(Val::E(self.load(name, idx, annot, None, span)?));
                }
                return Err(self.err(name_span, format!("unknown function `{name}`")));
            }
        };
        Ok(Val::E(self.apply_annot(e, annot, span)?))
    }

    fn apply_annot(
        &mut self,
        e: Expr,
        annot: Option<Type>,
        span: &Range<usize>,
    ) -> Result<Expr, Diag> {
        match annot {
            Some(t) => self.cast_annot(e, t, span),
            None => Ok(e),
        }
    }

    fn op_call(
        &mut self,
        op: Op,
        name: &str,
        args: &[Ast],
        span: &Range<usize>,
    ) -> Result<Expr, Diag> {
        let n = op.info().arity.expect("named calls have fixed arity");
        self.arity(name, args, n, span)?;
        let vals = args
            .iter()
            .map(|a| self.elab(a))
            .collect::<Result<Vec<_>, _>>()?;
        let what = format!("`{name}`");
        let exprs: Vec<Expr> = match op {
            Op::Shl
            | Op::Shr
            | Op::RoundingShl
            | Op::RoundingShr
            | Op::WideningShl
            | Op::WideningShr => {
                let x = self.resolve(vals[0].clone(), Type::INDEX)?;
                let y = self.resolve_against(
                    vals[1].clone(),
                    LitRole::ShiftAmount,
                    &Val::E(x.clone()),
                )?;
                let (x, y) = self.match_lanes(x, y, span)?;
                vec![x, y]
            }
            Op::WidenRightAdd | Op::WidenRightSub | Op::WidenRightMul => {
                // A literal wide operand takes twice the narrow operand's width.
                let x = self.resolve_against(vals[0].clone(), LitRole::WidenLeft, &vals[1])?;
                let y =
                    self.resolve_against(vals[1].clone(), LitRole::WidenRight, &Val::E(x.clone()))?;
                let (x, y) = self.match_lanes(x, y, span)?;
                vec![x, y]
            }
            Op::WideningMul => {
                let x = self.resolve_against(vals[0].clone(), LitRole::Peer, &vals[1])?;
                let y = self.resolve_against(vals[1].clone(), LitRole::Peer, &Val::E(x.clone()))?;
                let (x, y) = self.match_lanes(x, y, span)?;
                vec![x, y]
            }
            Op::MulShiftRight | Op::RoundingMulShiftRight => {
                let (x, y) = self.unify(vals[0].clone(), vals[1].clone(), &what, span)?;
                let q =
                    self.resolve_against(vals[2].clone(), LitRole::MulShift, &Val::E(x.clone()))?;
                let (x, q) = self.match_lanes(x, q, span)?;
                let (y, _) = self.match_lanes(y, q.clone(), span)?;
                vec![x, y, q]
            }
            _ if n == 2 => {
                let (x, y) = self.unify(vals[0].clone(), vals[1].clone(), &what, span)?;
                vec![x, y]
            }
            _ => vals
                .into_iter()
                .map(|v| self.resolve(v, Type::INDEX))
                .collect::<Result<_, _>>()?,
        };
        self.build(op, None, exprs, span)
    }
}

/// True if `ast` is a constant expression of a rule: literals, wildcards, type attributes
/// and arithmetic on them, with no pattern variables.
fn is_const_ast(ast: &Ast, rule: &RuleScope) -> bool {
    match &ast.kind {
        AstKind::Int(_) => true,
        AstKind::Name(n) => is_wildcard(n) || rule.attr(n).is_some() || rule.consts.contains(n),
        AstKind::Unary(Unary::Neg | Unary::BitNot, e) => is_const_ast(e, rule),
        AstKind::Binary(op, a, b) => {
            !matches!(
                op,
                Binary::Lt
                    | Binary::Le
                    | Binary::Gt
                    | Binary::Ge
                    | Binary::Eq
                    | Binary::Ne
                    | Binary::LogAnd
                    | Binary::LogOr
            ) && is_const_ast(a, rule)
                && is_const_ast(b, rule)
        }
        AstKind::Call {
            name,
            args,
            angle: None,
            ..
        } => {
            CONST_FUNCS.contains(&name.as_str())
                && name != "is_pow2"
                && args.iter().all(|a| is_const_ast(a, rule))
        }
        _ => false,
    }
}

/// True for names that spell a type (used as cast functions).
fn looks_like_type_name(name: &str) -> bool {
    super::parse::looks_like_type(name)
}

/// `x32` means 32 copies.
fn broadcast_count(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('x')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n > 0)
}

/// simd_op_check's convention: `in_u8`, `in_i16`, ... hold that element type.
pub fn buffer_elem_from_name(name: &str) -> Option<Elem> {
    let (_, suffix) = name.rsplit_once('_')?;
    let elem = match suffix {
        "u8" => Elem::U8,
        "i8" => Elem::I8,
        "u16" => Elem::U16,
        "i16" => Elem::I16,
        "u32" => Elem::U32,
        "i32" => Elem::I32,
        "u64" => Elem::U64,
        "i64" => Elem::I64,
        _ => return None,
    };
    Some(elem)
}

/// If every lane of a vector index is the same scalar, that scalar.
fn as_broadcast_index(idx: &Expr) -> Option<Expr> {
    if idx.ty().lanes > 1 && matches!(idx.op(), Op::Broadcast) && idx.arg(0).ty().lanes == 1 {
        Some(idx.arg(0).clone())
    } else {
        None
    }
}

/// Rewrites an index built from a lane ramp into `ramp(base, stride, lanes)` when it is
/// affine in the lane with a constant stride; anything else is left as is (a gather).
pub fn canonical_index(idx: &Expr) -> Expr {
    if idx.ty().lanes == 1 {
        return fold_i32(idx);
    }
    match affine(idx) {
        Some((base, 0)) => fold_i32(&base).broadcast(idx.ty().lanes),
        Some((base, stride)) => {
            let Ok(s) = Expr::int(Elem::I32, stride as i128) else {
                return idx.clone();
            };
            Expr::build(Op::Ramp, Some(idx.ty()), vec![fold_i32(&base), s])
                .unwrap_or_else(|_| idx.clone())
        }
        None => idx.clone(),
    }
}

/// `(base, stride)` such that lane `i` of `e` is `base + stride * i`.
fn affine(e: &Expr) -> Option<(Expr, i64)> {
    let add = |a: &Expr, b: &Expr| crate::ir::mk(Op::Add, vec![a.clone(), b.clone()]);
    match e.op() {
        Op::Ramp => {
            let s = e.arg(1).as_const()?;
            Some((e.arg(0).clone(), i64::try_from(s).ok()?))
        }
        Op::Broadcast if e.arg(0).ty().lanes == 1 => Some((e.arg(0).clone(), 0)),
        Op::Add => {
            let (b1, s1) = affine(e.arg(0))?;
            let (b2, s2) = affine(e.arg(1))?;
            Some((add(&b1, &b2), s1.checked_add(s2)?))
        }
        Op::Sub => {
            let (b1, s1) = affine(e.arg(0))?;
            let (b2, s2) = affine(e.arg(1))?;
            Some((crate::ir::mk(Op::Sub, vec![b1, b2]), s1.checked_sub(s2)?))
        }
        Op::Mul => {
            let (x, c) = if let Some(c) = e.arg(1).as_const() {
                (e.arg(0), c)
            } else {
                (e.arg(1), e.arg(0).as_const()?)
            };
            let (b, s) = affine(x)?;
            let c64 = i64::try_from(c).ok()?;
            let cexpr = Expr::int(Elem::I32, c).ok()?;
            Some((crate::ir::mk(Op::Mul, vec![b, cexpr]), s.checked_mul(c64)?))
        }
        _ => None,
    }
}

/// Folds constant `+ - *` in a scalar i32 index so printed indices stay readable.
fn fold_i32(e: &Expr) -> Expr {
    if e.ty() != Type::INDEX {
        return e.clone();
    }
    match e.op() {
        Op::Add | Op::Sub | Op::Mul => {
            let a = fold_i32(e.arg(0));
            let b = fold_i32(e.arg(1));
            match (a.as_const(), b.as_const()) {
                (Some(x), Some(y)) => {
                    let v = match e.op() {
                        Op::Add => x + y,
                        Op::Sub => x - y,
                        _ => x * y,
                    };
                    let wrapped = crate::interp::lane::to_i128(
                        crate::interp::lane::from_i128(v, Elem::I32),
                        Elem::I32,
                    );
                    Expr::int(Elem::I32, wrapped).expect("wrapped into range")
                }
                (_, Some(0)) if matches!(e.op(), Op::Add | Op::Sub) => a,
                (Some(0), _) if matches!(e.op(), Op::Add) => b,
                (_, Some(1)) if matches!(e.op(), Op::Mul) => a,
                (Some(1), _) if matches!(e.op(), Op::Mul) => b,
                _ => e.with_args(vec![a, b]).expect("same types"),
            }
        }
        _ => e.clone(),
    }
}
