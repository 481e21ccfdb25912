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
//!
//! Statements and declarations are here; expressions in `expr.rs`.

mod expr;

use std::collections::HashMap;
use std::sync::Arc;

use lang_c::ast::{BlockItem, Declaration, Expression, ForInitializer, Initializer, Statement};
use lang_c::span::{Node, Span};

use super::cfront::{self, BaseType, CFile, Param, err};
use super::dag::{Dag, Node as DNode, NodeId};
use crate::diag::{Diag, Source};

/// Statements executed before evaluation gives up (loops must end).
const MAX_STEPS: u64 = 1_000_000;
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

impl Evaluated {
    /// The name of input element `index` of parameter `param` in [`Evaluated::to_ir`]'s
    /// expressions: `a_5` for `a`'s sixth element (row-major).
    pub fn input_name(&self, param: u16, index: u32) -> String {
        format!("{}_{index}", self.params[param as usize].name)
    }

    /// Every element the kernel writes, as `(param, index, expression)`: the kernel in
    /// harrow IR over scalar `f32` variables named by [`Evaluated::input_name`], for the
    /// reference interpreter and the printers.
    pub fn to_ir(&self) -> Vec<(usize, usize, crate::ir::Expr)> {
        let f32t = crate::types::Type::scalar(crate::types::Elem::F32);
        let mut at = Vec::new();
        let mut roots = Vec::new();
        for (p, finals) in self.finals.iter().enumerate() {
            for (i, &node) in finals.iter().enumerate() {
                if self.written[p][i] {
                    at.push((p, i));
                    roots.push(node);
                }
            }
        }
        let input = |p: u16, i: u32| crate::ir::Expr::var(self.input_name(p, i), f32t);
        let exprs = self.dag.to_ir(&roots, &input);
        at.into_iter()
            .zip(exprs)
            .map(|((p, i), e)| (p, i, e))
            .collect()
    }

    /// The interpreter's environment binding every input element of [`Evaluated::to_ir`]
    /// to `values` (flattened, by parameter).
    pub fn input_env(&self, values: &[Vec<f32>]) -> crate::interp::Env {
        let mut env = crate::interp::Env::new();
        for (p, vals) in values.iter().enumerate() {
            for (i, &x) in vals.iter().enumerate() {
                env.set(
                    self.input_name(p as u16, i as u32),
                    crate::interp::Value::from_floats(&[x]),
                );
            }
        }
        env
    }
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
    pub(super) fn e(&self, span: Span, msg: impl Into<String>) -> Diag {
        err(&self.src, span, msg)
    }

    pub(super) fn step(&mut self, span: Span) -> Result<(), Diag> {
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

    pub(super) fn check_depth(&self, id: NodeId, span: Span) -> Result<(), Diag> {
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

    pub(super) fn lookup(&mut self, name: &str) -> Option<&mut Var> {
        self.scopes.iter_mut().rev().find_map(|s| s.get_mut(name))
    }

    pub(super) fn stmt(&mut self, s: &Node<Statement>) -> Result<Flow, Diag> {
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

    pub(super) fn cond(&mut self, e: &Node<Expression>) -> Result<bool, Diag> {
        match self.expr(e)? {
            Val::Int(v) => Ok(v != 0),
            Val::F(..) => Err(self.e(e.span, "a condition on float values")
                .note("control flow may depend on integer indices only: the kernel is vectorized as straight-line code")),
        }
    }

    pub(super) fn int(&mut self, e: &Node<Expression>) -> Result<i64, Diag> {
        match self.expr(e)? {
            Val::Int(v) => Ok(v),
            Val::F(..) => Err(self.e(e.span, "expected an integer")),
        }
    }

    /// An integer constant expression (array sizes): literals, `#define` names, arithmetic.
    pub(super) fn const_int(&mut self, e: &Node<Expression>) -> Result<i64, Diag> {
        self.int(e)
    }

    /// A value as a float node, converted as C converts on assignment to `float`.
    pub(super) fn float_node(&mut self, v: Val) -> Result<NodeId, Diag> {
        Ok(match v {
            Val::Int(i) => self.dag.constant(i as f32),
            Val::F(id, _) => id,
        })
    }
}
