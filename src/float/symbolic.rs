//! Symbolic evaluation of a float kernel's body: loops run to completion with their
//! integer indices known, and every `float` value becomes a node of the scalar [`Dag`], so
//! each element of each parameter ends as one expression of the parameters' entry values.
//!
//! Integer values (indices, loop counters, sizes) are computed exactly; control flow may
//! depend only on them. C's usual arithmetic conversions are followed where they matter to
//! the result: a `float` operation with a `double` constant is computed in double and
//! rounded on assignment, which gives the float operation's result only when the constant
//! is a float value and the double result is rounded before it is used again (double
//! rounding is innocuous for one `+ - * /` or `sqrt` at 53 bits); anything else is
//! rejected at its place rather than computed differently.

use std::collections::HashMap;
use std::sync::Arc;

use lang_c::ast::{
    BinaryOperator, BlockItem, Constant, Declaration, Expression, ForInitializer, Initializer,
    Statement, UnaryOperator,
};
use lang_c::span::{Node, Span};

use super::cfront::{self, BaseType, CFile, Param, err};
use super::dag::{BinOp, Dag, Node as DNode, NodeId, UnOp};
use crate::diag::{Diag, Source};

/// Statements executed before evaluation gives up (loops must end).
const MAX_STEPS: u64 = 4_000_000;
/// Distinct scalar nodes before evaluation gives up.
const MAX_NODES: usize = 2_000_000;
/// Longest chain of dependent operations (later phases walk chains recursively).
pub const MAX_DEPTH: u32 = 1024;

/// A kernel after symbolic evaluation.
#[derive(Debug, Clone)]
pub struct Evaluated {
    /// The function's name.
    pub name: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The scalar DAG.
    pub dag: Dag,
    /// For each parameter, the final value of each element (flattened).
    pub finals: Vec<Vec<NodeId>>,
    /// For each parameter, which elements the kernel wrote.
    pub written: Vec<Vec<bool>>,
}

/// The C type of a float value, as far as its meaning depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FTy {
    /// A `float`.
    Float,
    /// A `double` whose value is a float value (a float constant written as a double).
    DoubleExact,
    /// A `double` that equals the node's value once rounded to float: the result of one
    /// operation on float values, or a constant that is not a float value.
    DoubleRounds,
}

#[derive(Clone, Copy, Debug)]
enum Val {
    Int(i64),
    F(NodeId, FTy),
}

#[derive(Clone, Debug)]
enum Var {
    Int(Option<i64>),
    Float(Option<NodeId>),
    Array {
        dims: Vec<usize>,
        elems: Vec<Option<NodeId>>,
        /// The parameter it is, if it is one.
        param: Option<usize>,
        is_const: bool,
    },
}

enum Flow {
    Next,
    Break,
    Continue,
    Return,
}

struct Eval<'f> {
    file: &'f CFile,
    src: Arc<Source>,
    dag: Dag,
    scopes: Vec<HashMap<String, Var>>,
    written: Vec<Vec<bool>>,
    steps: u64,
    /// The macros being expanded.
    expanding: Vec<String>,
}

/// Evaluates the kernel `name` (or the only function) of `file`.
pub fn evaluate(file: &CFile, name: Option<&str>) -> Result<Evaluated, Diag> {
    let f = cfront::kernel_function(file, name)?;
    let mut ev = Eval {
        file,
        src: file.source.clone(),
        dag: Dag::default(),
        scopes: vec![HashMap::new()],
        written: Vec::new(),
        steps: 0,
        expanding: Vec::new(),
    };
    let params = cfront::params(&file.source, f, |e| ev.const_int(e))?;
    let mut scope = HashMap::new();
    for (i, p) in params.iter().enumerate() {
        let elems: Vec<Option<NodeId>> = (0..p.len())
            .map(|k| {
                Some(ev.dag.add(DNode::Input {
                    param: i as u16,
                    index: k as u32,
                }))
            })
            .collect();
        let var = if p.dims.is_empty() {
            Var::Float(elems[0])
        } else {
            Var::Array {
                dims: p.dims.clone(),
                elems,
                param: Some(i),
                is_const: p.is_const,
            }
        };
        scope.insert(p.name.clone(), var);
        ev.written.push(vec![false; p.len()]);
    }
    ev.scopes.push(scope);
    ev.stmt(&f.node.statement)?;
    let scope = ev.scopes.pop().unwrap_or_default();
    let mut finals = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let v = match scope.get(&p.name) {
            Some(Var::Array { elems, .. }) => elems.iter().map(|e| e.unwrap_or(0)).collect(),
            // A scalar parameter is the caller's copy: writing it changes nothing outside.
            _ => {
                ev.written[i] = vec![false];
                vec![ev.dag.add(DNode::Input {
                    param: i as u16,
                    index: 0,
                })]
            }
        };
        finals.push(v);
    }
    let name = cfront::declarator_name(&f.node.declarator.node)
        .unwrap_or("kernel")
        .to_string();
    if !ev.written.iter().flatten().any(|&w| w) {
        return Err(err(
            &ev.src,
            f.node.declarator.span,
            "the kernel writes no array",
        )
        .note("outputs are the elements of array parameters the kernel assigns"));
    }
    Ok(Evaluated {
        name,
        params,
        dag: ev.dag,
        finals,
        written: ev.written,
    })
}

impl Eval<'_> {
    fn e(&self, span: Span, msg: impl Into<String>) -> Diag {
        err(&self.src, span, msg)
    }

    fn step(&mut self, span: Span) -> Result<(), Diag> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.e(
                span,
                format!("evaluation ran past {MAX_STEPS} statements"),
            )
            .note("float kernels are fixed-size: every loop must end after a constant number of steps"));
        }
        if self.dag.len() > MAX_NODES {
            return Err(self.e(span, format!("more than {MAX_NODES} distinct float values")));
        }
        Ok(())
    }

    fn check_depth(&self, id: NodeId, span: Span) -> Result<(), Diag> {
        if self.dag.depth(id) > MAX_DEPTH {
            return Err(self
                .e(
                    span,
                    format!("a chain of more than {MAX_DEPTH} dependent float operations"),
                )
                .note("float kernels are small fixed-size computations"));
        }
        Ok(())
    }

    fn lookup(&mut self, name: &str) -> Option<&mut Var> {
        self.scopes.iter_mut().rev().find_map(|s| s.get_mut(name))
    }

    fn stmt(&mut self, s: &Node<Statement>) -> Result<Flow, Diag> {
        self.step(s.span)?;
        match &s.node {
            Statement::Compound(items) => {
                self.scopes.push(HashMap::new());
                let flow = self.block(items);
                self.scopes.pop();
                flow
            }
            Statement::Expression(None) => Ok(Flow::Next),
            Statement::Expression(Some(e)) => {
                self.expr(e)?;
                Ok(Flow::Next)
            }
            Statement::If(i) => {
                if self.cond(&i.node.condition)? {
                    self.stmt(&i.node.then_statement)
                } else if let Some(e) = &i.node.else_statement {
                    self.stmt(e)
                } else {
                    Ok(Flow::Next)
                }
            }
            Statement::For(f) => {
                self.scopes.push(HashMap::new());
                let r = self.for_loop(&f.node);
                self.scopes.pop();
                r
            }
            Statement::While(w) => {
                while self.cond(&w.node.expression)? {
                    match self.stmt(&w.node.statement)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Next | Flow::Continue => {}
                    }
                }
                Ok(Flow::Next)
            }
            Statement::DoWhile(w) => {
                loop {
                    match self.stmt(&w.node.statement)? {
                        Flow::Break => break,
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Next | Flow::Continue => {}
                    }
                    if !self.cond(&w.node.expression)? {
                        break;
                    }
                }
                Ok(Flow::Next)
            }
            Statement::Break => Ok(Flow::Break),
            Statement::Continue => Ok(Flow::Continue),
            Statement::Return(None) => Ok(Flow::Return),
            Statement::Return(Some(e)) => Err(self.e(e.span, "the kernel returns `void`")),
            _ => Err(self.e(s.span, "unsupported statement")
                .note("float kernels use blocks, declarations, expressions, if, for, while, do, break, continue and return")),
        }
    }

    fn block(&mut self, items: &[Node<BlockItem>]) -> Result<Flow, Diag> {
        for item in items {
            match &item.node {
                BlockItem::Declaration(d) => self.declaration(d)?,
                BlockItem::Statement(s) => match self.stmt(s)? {
                    Flow::Next => {}
                    other => return Ok(other),
                },
                BlockItem::StaticAssert(a) => {
                    return Err(self.e(a.span, "static assertions are not supported"));
                }
            }
        }
        Ok(Flow::Next)
    }

    fn for_loop(&mut self, f: &lang_c::ast::ForStatement) -> Result<Flow, Diag> {
        match &f.initializer.node {
            ForInitializer::Empty => {}
            ForInitializer::Expression(e) => {
                self.expr(e)?;
            }
            ForInitializer::Declaration(d) => self.declaration(d)?,
            ForInitializer::StaticAssert(a) => {
                return Err(self.e(a.span, "static assertions are not supported"));
            }
        }
        loop {
            if let Some(c) = &f.condition
                && !self.cond(c)?
            {
                break;
            }
            match self.stmt(&f.statement)? {
                Flow::Break => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Next | Flow::Continue => {}
            }
            if let Some(s) = &f.step {
                self.expr(s)?;
            }
            self.step(f.statement.span)?;
        }
        Ok(Flow::Next)
    }

    fn declaration(&mut self, d: &Node<Declaration>) -> Result<(), Diag> {
        let (ty, is_const) = cfront::base_type(&self.src, &d.node.specifiers, d.span)?;
        for init in &d.node.declarators {
            let decl = &init.node.declarator;
            let name = cfront::declarator_name(&decl.node)
                .ok_or_else(|| self.e(decl.span, "declarations need a name"))?
                .to_string();
            let src = self.src.clone();
            let dims = cfront::array_dims(&src, decl, |e| self.const_int(e))?;
            let var = match (ty, dims.is_empty()) {
                (BaseType::Void, _) => return Err(self.e(decl.span, "`void` variable")),
                (BaseType::Int, false) => {
                    return Err(self.e(decl.span, "integer arrays are not supported"));
                }
                (BaseType::Int, true) => Var::Int(match &init.node.initializer {
                    None => None,
                    Some(i) => Some(self.int_init(i)?),
                }),
                (BaseType::Float, true) => Var::Float(match &init.node.initializer {
                    None => None,
                    Some(i) => Some(self.float_init(i)?),
                }),
                (BaseType::Float, false) => {
                    let n: usize = dims.iter().product();
                    let elems = match &init.node.initializer {
                        None => vec![None; n],
                        Some(i) => self.array_init(i, n)?,
                    };
                    Var::Array {
                        dims,
                        elems,
                        param: None,
                        is_const,
                    }
                }
            };
            let scope = self.scopes.last_mut().expect("a scope is open");
            if scope.contains_key(&name) {
                return Err(self.e(decl.span, format!("`{name}` is already declared here")));
            }
            scope.insert(name, var);
        }
        Ok(())
    }

    fn int_init(&mut self, i: &Node<Initializer>) -> Result<i64, Diag> {
        match &i.node {
            Initializer::Expression(e) => self.int(e),
            Initializer::List(_) => Err(self.e(i.span, "an integer takes one value")),
        }
    }

    fn float_init(&mut self, i: &Node<Initializer>) -> Result<NodeId, Diag> {
        match &i.node {
            Initializer::Expression(e) => {
                let v = self.expr(e)?;
                self.float_node(v)
            }
            Initializer::List(_) => Err(self.e(i.span, "a float takes one value")),
        }
    }

    /// A brace list for an array of `n` elements, flattened (nested braces are read in
    /// order); the elements it does not give are zero, as in C.
    fn array_init(&mut self, i: &Node<Initializer>, n: usize) -> Result<Vec<Option<NodeId>>, Diag> {
        let Initializer::List(items) = &i.node else {
            return Err(self.e(i.span, "an array is initialized by a brace list"));
        };
        let mut flat = Vec::new();
        self.flatten_list(items, &mut flat)?;
        if flat.len() > n {
            return Err(self.e(i.span, format!("{} values for {n} elements", flat.len())));
        }
        let zero = self.dag.constant(0.0);
        flat.resize(n, zero);
        Ok(flat.into_iter().map(Some).collect())
    }

    fn flatten_list(
        &mut self,
        items: &[Node<lang_c::ast::InitializerListItem>],
        out: &mut Vec<NodeId>,
    ) -> Result<(), Diag> {
        for item in items {
            if let Some(d) = item.node.designation.first() {
                return Err(self.e(d.span, "designated initializers are not supported"));
            }
            match &item.node.initializer.node {
                Initializer::Expression(_) => out.push(self.float_init(&item.node.initializer)?),
                Initializer::List(inner) => self.flatten_list(inner, out)?,
            }
        }
        Ok(())
    }

    fn cond(&mut self, e: &Node<Expression>) -> Result<bool, Diag> {
        match self.expr(e)? {
            Val::Int(v) => Ok(v != 0),
            Val::F(..) => Err(self.e(e.span, "a condition on float values")
                .note("control flow may depend on integer indices only: the kernel is vectorized as straight-line code")),
        }
    }

    fn int(&mut self, e: &Node<Expression>) -> Result<i64, Diag> {
        match self.expr(e)? {
            Val::Int(v) => Ok(v),
            Val::F(..) => Err(self.e(e.span, "expected an integer")),
        }
    }

    /// An integer constant expression (array sizes): literals, `#define` names, arithmetic.
    fn const_int(&mut self, e: &Node<Expression>) -> Result<i64, Diag> {
        self.int(e)
    }

    /// A value as a float node, converted as C converts on assignment to `float`.
    fn float_node(&mut self, v: Val) -> Result<NodeId, Diag> {
        Ok(match v {
            Val::Int(i) => self.dag.constant(i as f32),
            Val::F(id, _) => id,
        })
    }

    fn expr(&mut self, e: &Node<Expression>) -> Result<Val, Diag> {
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

    fn identifier(&mut self, name: &str, span: Span) -> Result<Val, Diag> {
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

    fn double_constant(&mut self, v: f64) -> Val {
        let f = v as f32;
        let ty = if f as f64 == v || v.is_nan() {
            FTy::DoubleExact
        } else {
            FTy::DoubleRounds
        };
        Val::F(self.dag.constant(f), ty)
    }

    fn constant(&mut self, c: &Constant, span: Span) -> Result<Val, Diag> {
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

    fn float_operand(&self, v: Val, span: Span) -> Result<(NodeId, FTy), Diag> {
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
    fn float_bin(&mut self, op: BinOp, a: Val, b: Val, spans: (Span, Span)) -> Result<Val, Diag> {
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

    fn binary(
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

    fn arith(
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
    fn element(
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

    fn read_element(&mut self, name: &str, flat: usize, span: Span) -> Result<Val, Diag> {
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

    fn assign(&mut self, lhs: &Node<Expression>, v: Val) -> Result<(), Diag> {
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

    fn unary(&mut self, u: &lang_c::ast::UnaryOperatorExpression, span: Span) -> Result<Val, Diag> {
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

    fn call(&mut self, c: &lang_c::ast::CallExpression, span: Span) -> Result<Val, Diag> {
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

    fn cast(&mut self, c: &lang_c::ast::CastExpression, span: Span) -> Result<Val, Diag> {
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
