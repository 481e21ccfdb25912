//! Expressions of the C subset: integer arithmetic computed, float arithmetic built as
//! DAG nodes with C's conversions, array elements read and written, the library calls
//! the subset has.

use lang_c::ast::{BinaryOperator, Constant, Expression, UnaryOperator};
use lang_c::span::{Node, Span};

use super::super::cfront::BaseType;
use super::super::dag::{BinOp, Node as DNode, NodeId, UnOp};
use super::{Eval, FTy, Val, Var};
use crate::diag::Diag;

impl Eval<'_> {
    pub(super) fn expr(&mut self, e: &Node<Expression>) -> Result<Val, Diag> {
        match &e.node {
            Expression::Identifier(id) => self.identifier(&id.node.name, id.span),
            Expression::Constant(c) => self.constant(&c.node, c.span),
            Expression::BinaryOperator(b) => self.binary(&b.node, e.span),
            Expression::UnaryOperator(u) => self.unary(&u.node, e.span),
            Expression::Call(c) => self.call(&c.node, e.span),
            Expression::Cast(c) => self.cast(&c.node, e.span),
            Expression::Conditional(c) => {
                if self.cond(&c.node.condition)? {
                    self.expr(&c.node.then_expression)
                } else {
                    self.expr(&c.node.else_expression)
                }
            }
            Expression::Comma(list) => {
                let mut last = Val::Int(0);
                for x in list.iter() {
                    last = self.expr(x)?;
                }
                Ok(last)
            }
            _ => Err(self.e(e.span, "unsupported expression")),
        }
    }

    pub(super) fn identifier(&mut self, name: &str, span: Span) -> Result<Val, Diag> {
        match self.lookup(name).cloned() {
            Some(Var::Int(Some(v))) => Ok(Val::Int(v)),
            Some(Var::Float(Some(id))) => Ok(Val::F(id, FTy::Float)),
            Some(Var::Int(None) | Var::Float(None)) => {
                Err(self.e(span, format!("`{name}` is read before it is given a value")))
            }
            Some(Var::Array { .. }) => Err(self.e(span, format!("`{name}` is an array: index it"))),
            None => match self.file.defines.get(name).cloned() {
                // A macro is its expression, evaluated where it is used (as the
                // preprocessor would substitute it); a macro naming itself is refused.
                Some(e) => {
                    if self.expanding.contains(&name.to_string()) {
                        return Err(self.e(span, format!("the macro `{name}` refers to itself")));
                    }
                    self.expanding.push(name.to_string());
                    let v = self.expr(&e);
                    self.expanding.pop();
                    v
                }
                None => Err(self.e(span, format!("`{name}` is not declared"))),
            },
        }
    }

    pub(super) fn double_constant(&mut self, v: f64) -> Val {
        let f = v as f32;
        let ty = if f as f64 == v || v.is_nan() {
            FTy::DoubleExact
        } else {
            FTy::DoubleRounds
        };
        Val::F(self.dag.constant(f), ty)
    }

    pub(super) fn constant(&mut self, c: &Constant, span: Span) -> Result<Val, Diag> {
        match c {
            Constant::Integer(i) => {
                let radix = match i.base {
                    lang_c::ast::IntegerBase::Decimal => 10,
                    lang_c::ast::IntegerBase::Octal => 8,
                    lang_c::ast::IntegerBase::Hexadecimal => 16,
                    lang_c::ast::IntegerBase::Binary => 2,
                };
                i64::from_str_radix(&i.number, radix)
                    .map(Val::Int)
                    .map_err(|_| self.e(span, "integer constant out of range"))
            }
            Constant::Float(f) => {
                if f.base != lang_c::ast::FloatBase::Decimal {
                    return Err(self.e(span, "hexadecimal float constants are not supported"));
                }
                match f.suffix.format {
                    lang_c::ast::FloatFormat::Float => f
                        .number
                        .parse::<f32>()
                        .map(|v| Val::F(self.dag.constant(v), FTy::Float))
                        .map_err(|_| self.e(span, "bad float constant")),
                    lang_c::ast::FloatFormat::Double => f
                        .number
                        .parse::<f64>()
                        .map(|v| self.double_constant(v))
                        .map_err(|_| self.e(span, "bad float constant")),
                    _ => Err(self.e(span, "only float and double constants are supported")),
                }
            }
            Constant::Character(_) => Err(self.e(span, "character constants are not supported")),
        }
    }

    pub(super) fn float_operand(&self, v: Val, span: Span) -> Result<(NodeId, FTy), Diag> {
        match v {
            Val::F(id, FTy::DoubleRounds) => {
                let _ = id;
                Err(self.e(span, "this operand is a double that is not a float value")
                    .note("C computes the operation in double, which harrow does not: write float constants (`0.1f`) or assign the double to a float first"))
            }
            Val::F(id, ty) => Ok((id, ty)),
            Val::Int(_) => unreachable!("integers are converted before"),
        }
    }

    /// `a op b` on float values; integers are converted to float first, as in C.
    pub(super) fn float_bin(
        &mut self,
        op: BinOp,
        a: Val,
        b: Val,
        spans: (Span, Span),
    ) -> Result<Val, Diag> {
        let conv = |ev: &mut Self, v: Val| match v {
            Val::Int(i) => Val::F(ev.dag.constant(i as f32), FTy::Float),
            v => v,
        };
        let (a, b) = (conv(self, a), conv(self, b));
        let (x, tx) = self.float_operand(a, spans.0)?;
        let (y, ty) = self.float_operand(b, spans.1)?;
        let id = self.dag.add(DNode::Bin(op, x, y));
        self.check_depth(id, spans.0)?;
        let t = if tx == FTy::Float && ty == FTy::Float {
            FTy::Float
        } else {
            FTy::DoubleRounds
        };
        Ok(Val::F(id, t))
    }

    pub(super) fn binary(
        &mut self,
        b: &lang_c::ast::BinaryOperatorExpression,
        span: Span,
    ) -> Result<Val, Diag> {
        use BinaryOperator as B;
        let op = b.operator.node.clone();
        match op {
            B::Index => {
                let (var, flat) = self.element(&b.lhs, &b.rhs, span)?;
                self.read_element(&var, flat, span)
            }
            B::Assign => {
                let v = self.expr(&b.rhs)?;
                self.assign(&b.lhs, v)?;
                Ok(v)
            }
            B::AssignPlus
            | B::AssignMinus
            | B::AssignMultiply
            | B::AssignDivide
            | B::AssignModulo => {
                let old = self.expr(&b.lhs)?;
                let rhs = self.expr(&b.rhs)?;
                let base = match op {
                    B::AssignPlus => B::Plus,
                    B::AssignMinus => B::Minus,
                    B::AssignMultiply => B::Multiply,
                    B::AssignDivide => B::Divide,
                    _ => B::Modulo,
                };
                let v = self.arith(base, old, rhs, (b.lhs.span, b.rhs.span), span)?;
                self.assign(&b.lhs, v)?;
                Ok(v)
            }
            B::LogicalAnd => {
                let l = self.cond(&b.lhs)?;
                Ok(Val::Int((l && self.cond(&b.rhs)?) as i64))
            }
            B::LogicalOr => {
                let l = self.cond(&b.lhs)?;
                Ok(Val::Int((l || self.cond(&b.rhs)?) as i64))
            }
            _ => {
                let l = self.expr(&b.lhs)?;
                let r = self.expr(&b.rhs)?;
                self.arith(op, l, r, (b.lhs.span, b.rhs.span), span)
            }
        }
    }

    pub(super) fn arith(
        &mut self,
        op: BinaryOperator,
        l: Val,
        r: Val,
        spans: (Span, Span),
        span: Span,
    ) -> Result<Val, Diag> {
        use BinaryOperator as B;
        if let (Val::Int(x), Val::Int(y)) = (l, r) {
            let v = match op {
                B::Plus => x.checked_add(y),
                B::Minus => x.checked_sub(y),
                B::Multiply => x.checked_mul(y),
                B::Divide => x.checked_div(y),
                B::Modulo => x.checked_rem(y),
                B::Less => Some((x < y) as i64),
                B::Greater => Some((x > y) as i64),
                B::LessOrEqual => Some((x <= y) as i64),
                B::GreaterOrEqual => Some((x >= y) as i64),
                B::Equals => Some((x == y) as i64),
                B::NotEquals => Some((x != y) as i64),
                B::ShiftLeft => (0..63).contains(&y).then(|| x << y),
                B::ShiftRight => (0..63).contains(&y).then(|| x >> y),
                B::BitwiseAnd => Some(x & y),
                B::BitwiseOr => Some(x | y),
                B::BitwiseXor => Some(x ^ y),
                _ => return Err(self.e(span, "unsupported operator")),
            };
            return v.map(Val::Int).ok_or_else(|| {
                self.e(
                    span,
                    "integer overflow, division by zero or shift out of range",
                )
            });
        }
        let fop = match op {
            B::Plus => BinOp::Add,
            B::Minus => BinOp::Sub,
            B::Multiply => BinOp::Mul,
            B::Divide => BinOp::Div,
            B::Less
            | B::Greater
            | B::LessOrEqual
            | B::GreaterOrEqual
            | B::Equals
            | B::NotEquals => {
                return Err(self
                    .e(span, "a comparison of float values")
                    .note("control flow may depend on integer indices only"));
            }
            _ => return Err(self.e(span, "unsupported operator on float values")),
        };
        self.float_bin(fop, l, r, spans)
    }

    /// The array variable and flat index of `base[index]` (a chain of subscripts).
    pub(super) fn element(
        &mut self,
        base: &Node<Expression>,
        index: &Node<Expression>,
        span: Span,
    ) -> Result<(String, usize), Diag> {
        let mut subs = vec![index];
        let mut b = base;
        while let Expression::BinaryOperator(inner) = &b.node
            && inner.node.operator.node == BinaryOperator::Index
        {
            subs.push(&inner.node.rhs);
            b = &inner.node.lhs;
        }
        subs.reverse();
        let Expression::Identifier(id) = &b.node else {
            return Err(self.e(b.span, "only named arrays can be indexed"));
        };
        let name = id.node.name.clone();
        let mut idx = Vec::new();
        for s in &subs {
            idx.push((self.int(s)?, s.span));
        }
        let Some(Var::Array { dims, .. }) = self.lookup(&name) else {
            return Err(self.e(b.span, format!("`{name}` is not an array")));
        };
        let dims = dims.clone();
        if idx.len() != dims.len() {
            return Err(self.e(
                span,
                format!(
                    "`{name}` has {} dimensions; {} indices given",
                    dims.len(),
                    idx.len()
                ),
            ));
        }
        let mut flat = 0usize;
        for ((i, s), &d) in idx.iter().zip(&dims) {
            if *i < 0 || *i as usize >= d {
                return Err(self.e(*s, format!("index {i} is outside 0..{d} of `{name}`")));
            }
            flat = flat * d + *i as usize;
        }
        Ok((name, flat))
    }

    pub(super) fn read_element(
        &mut self,
        name: &str,
        flat: usize,
        span: Span,
    ) -> Result<Val, Diag> {
        let Some(Var::Array { elems, .. }) = self.lookup(name) else {
            unreachable!("element() checked the array")
        };
        match elems[flat] {
            Some(id) => Ok(Val::F(id, FTy::Float)),
            None => Err(self.e(
                span,
                format!("element {flat} of `{name}` is read before it is written"),
            )),
        }
    }

    pub(super) fn assign(&mut self, lhs: &Node<Expression>, v: Val) -> Result<(), Diag> {
        match &lhs.node {
            Expression::Identifier(id) => {
                let name = id.node.name.clone();
                let span = id.span;
                let node = match v {
                    Val::F(id, _) => Some(id),
                    Val::Int(_) => None,
                };
                let converted = match v {
                    Val::Int(i) => Some(self.dag.constant(i as f32)),
                    _ => node,
                };
                match self.lookup(&name) {
                    Some(Var::Int(slot)) => match v {
                        Val::Int(i) => *slot = Some(i),
                        Val::F(..) => {
                            return Err(self.e(lhs.span, "a float value assigned to an integer")
                                .note("float-to-integer conversions would make control flow depend on data"));
                        }
                    },
                    Some(Var::Float(slot)) => *slot = converted,
                    Some(Var::Array { .. }) => {
                        return Err(self.e(
                            span,
                            format!("cannot assign to the array `{name}` as a whole"),
                        ));
                    }
                    None => return Err(self.e(span, format!("`{name}` is not declared"))),
                }
                Ok(())
            }
            Expression::BinaryOperator(b) if b.node.operator.node == BinaryOperator::Index => {
                let (name, flat) = self.element(&b.node.lhs, &b.node.rhs, lhs.span)?;
                let node = self.float_node(v)?;
                let Some(Var::Array {
                    elems,
                    param,
                    is_const,
                    ..
                }) = self.lookup(&name)
                else {
                    unreachable!("element() checked the array")
                };
                if *is_const {
                    return Err(self.e(lhs.span, format!("`{name}` is const")));
                }
                elems[flat] = Some(node);
                if let Some(p) = *param {
                    self.written[p][flat] = true;
                }
                Ok(())
            }
            _ => Err(self.e(lhs.span, "unsupported assignment target")),
        }
    }

    pub(super) fn unary(
        &mut self,
        u: &lang_c::ast::UnaryOperatorExpression,
        span: Span,
    ) -> Result<Val, Diag> {
        use UnaryOperator as U;
        match u.operator.node {
            U::PreIncrement | U::PostIncrement | U::PreDecrement | U::PostDecrement => {
                let old = match self.expr(&u.operand)? {
                    Val::Int(v) => v,
                    Val::F(..) => return Err(self.e(span, "++ and -- apply to integers only")),
                };
                let delta = if matches!(u.operator.node, U::PreIncrement | U::PostIncrement) {
                    1
                } else {
                    -1
                };
                let new = old
                    .checked_add(delta)
                    .ok_or_else(|| self.e(span, "integer overflow"))?;
                self.assign(&u.operand, Val::Int(new))?;
                Ok(Val::Int(
                    if matches!(u.operator.node, U::PreIncrement | U::PreDecrement) {
                        new
                    } else {
                        old
                    },
                ))
            }
            U::Minus => match self.expr(&u.operand)? {
                Val::Int(v) => v
                    .checked_neg()
                    .map(Val::Int)
                    .ok_or_else(|| self.e(span, "integer overflow")),
                Val::F(id, ty) => {
                    let n = self.dag.add(DNode::Un(UnOp::Neg, id));
                    self.check_depth(n, span)?;
                    Ok(Val::F(n, ty))
                }
            },
            U::Plus => self.expr(&u.operand),
            U::Negate => Ok(Val::Int((!self.cond(&u.operand)?) as i64)),
            U::Complement => match self.expr(&u.operand)? {
                Val::Int(v) => Ok(Val::Int(!v)),
                Val::F(..) => Err(self.e(span, "~ applies to integers")),
            },
            _ => Err(self.e(span, "pointers are not supported")),
        }
    }

    pub(super) fn call(
        &mut self,
        c: &lang_c::ast::CallExpression,
        span: Span,
    ) -> Result<Val, Diag> {
        let Expression::Identifier(f) = &c.callee.node else {
            return Err(self.e(c.callee.span, "only named functions can be called"));
        };
        let name = f.node.name.as_str();
        let arity = match name {
            "sqrtf" | "sqrt" => 1,
            "fmaf" => 3,
            _ => {
                return Err(self
                    .e(c.callee.span, format!("`{name}` is not supported"))
                    .note("float kernels may call sqrtf, sqrt and fmaf"));
            }
        };
        if c.arguments.len() != arity {
            return Err(self.e(span, format!("`{name}` takes {arity} arguments")));
        }
        let mut args = Vec::new();
        for a in &c.arguments {
            let v = self.expr(a)?;
            args.push((v, a.span));
        }
        match name {
            "sqrtf" => {
                // The argument is converted to float first: a double result rounds here.
                let x = self.float_node(args[0].0)?;
                let n = self.dag.add(DNode::Un(UnOp::Sqrt, x));
                self.check_depth(n, span)?;
                Ok(Val::F(n, FTy::Float))
            }
            "sqrt" => {
                let v = match args[0].0 {
                    Val::Int(i) => Val::F(self.dag.constant(i as f32), FTy::Float),
                    v => v,
                };
                let (x, _) = self.float_operand(v, args[0].1)?;
                let n = self.dag.add(DNode::Un(UnOp::Sqrt, x));
                self.check_depth(n, span)?;
                Ok(Val::F(n, FTy::DoubleRounds))
            }
            _ => {
                let mut ids = [0; 3];
                for (k, (v, _)) in args.iter().enumerate() {
                    ids[k] = self.float_node(*v)?;
                }
                let n = self.dag.add(DNode::Fma(ids[0], ids[1], ids[2]));
                self.check_depth(n, span)?;
                Ok(Val::F(n, FTy::Float))
            }
        }
    }

    pub(super) fn cast(
        &mut self,
        c: &lang_c::ast::CastExpression,
        span: Span,
    ) -> Result<Val, Diag> {
        let v = self.expr(&c.expression)?;
        let tn = &c.type_name.node;
        if tn.declarator.is_some() {
            return Err(self.e(span, "unsupported cast"));
        }
        let mut to = None;
        for s in &tn.specifiers {
            if let lang_c::ast::SpecifierQualifier::TypeSpecifier(t) = &s.node {
                to = Some(match t.node {
                    lang_c::ast::TypeSpecifier::Float => BaseType::Float,
                    lang_c::ast::TypeSpecifier::Int
                    | lang_c::ast::TypeSpecifier::Long
                    | lang_c::ast::TypeSpecifier::Unsigned => BaseType::Int,
                    _ => return Err(self.e(span, "unsupported cast")),
                });
            }
        }
        match (to, v) {
            (Some(BaseType::Float), v) => Ok(Val::F(self.float_node(v)?, FTy::Float)),
            (Some(BaseType::Int), Val::Int(i)) => Ok(Val::Int(i)),
            (Some(BaseType::Int), Val::F(..)) => {
                Err(self.e(span, "float-to-integer casts are not supported"))
            }
            _ => Err(self.e(span, "unsupported cast")),
        }
    }
}
