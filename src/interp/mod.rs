//! The reference interpreter: the single definition of what every IR expression means.
//!
//! Everything else (rules, lowering, generated C, instruction descriptions) is checked
//! against [`eval`]. Semantics follow Halide's: two's-complement wrap-around, division that
//! leaves a non-negative remainder, `x / 0 == 0`, shifts whose negative amounts reverse
//! direction, saturating FPIR operations that clamp.

pub mod float;
pub mod fpir;
pub mod lane;

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use crate::ir::{Expr, Op, Sym};
use crate::types::{Elem, Type};
use crate::util::rng::SplitMix64;

/// A whole vector (or scalar) value: canonical lane bits plus the type.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Value {
    /// The type; `lanes.len() == ty.lanes`.
    pub ty: Type,
    /// Canonical bits of each lane (see [`lane`]).
    pub lanes: Vec<u128>,
}

impl Value {
    /// A value from exact lane values, wrapped into the element type.
    pub fn from_ints(elem: Elem, vals: &[i128]) -> Value {
        Value {
            ty: Type::vec(elem, vals.len() as u32),
            lanes: vals.iter().map(|&v| lane::from_i128(v, elem)).collect(),
        }
    }

    /// The lanes as exact integers.
    pub fn to_ints(&self) -> Vec<i128> {
        self.lanes
            .iter()
            .map(|&b| lane::to_i128(b, self.ty.elem))
            .collect()
    }

    /// Lane `i` as an exact integer.
    pub fn int(&self, i: usize) -> i128 {
        lane::to_i128(self.lanes[i], self.ty.elem)
    }

    /// A float vector (or scalar, from one value).
    pub fn from_floats(vals: &[f32]) -> Value {
        Value {
            ty: Type::vec(Elem::F32, vals.len() as u32),
            lanes: vals.iter().map(|&x| float::to_lane(x)).collect(),
        }
    }

    /// The lanes of a float value.
    pub fn to_floats(&self) -> Vec<f32> {
        self.lanes.iter().map(|&b| float::from_lane(b)).collect()
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [", self.ty)?;
        for (i, v) in self.to_ints().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if self.ty.elem == Elem::Bool {
                f.write_str(if *v != 0 { "true" } else { "false" })?;
            } else if self.ty.elem.is_float() {
                f.write_str(&float::text(float::from_lane(self.lanes[i])))?;
            } else {
                write!(f, "{v}")?;
            }
        }
        f.write_str("]")
    }
}

/// Contents of a buffer that loads read.
#[derive(Clone, Debug)]
pub enum Buffer {
    /// Concrete elements; index `min + i` holds `data[i]`; other indices are out of bounds.
    Data {
        /// Element type.
        elem: Elem,
        /// Index of the first element.
        min: i64,
        /// Canonical bits of the elements.
        data: Vec<u128>,
    },
    /// Every index holds a pseudo-random value derived from the seed and the index, drawn
    /// from the inclusive range when one is given (for symbolic buffers of Rake specs).
    Random {
        /// Element type.
        elem: Elem,
        /// Seed; the same seed always gives the same contents.
        seed: u64,
        /// Inclusive value range the contents must respect.
        range: Option<(i128, i128)>,
    },
}

impl Buffer {
    fn elem(&self) -> Elem {
        match self {
            Buffer::Data { elem, .. } | Buffer::Random { elem, .. } => *elem,
        }
    }

    /// The element at `index`, or `None` when out of bounds.
    pub fn get(&self, index: i64) -> Option<u128> {
        match self {
            Buffer::Data { min, data, .. } => {
                let off = index.checked_sub(*min)?;
                usize::try_from(off).ok().and_then(|o| data.get(o).copied())
            }
            Buffer::Random { elem, seed, range } => {
                let mut rng =
                    SplitMix64::new(seed ^ (index as u64).wrapping_mul(0x9e3779b97f4a7c15));
                Some(match range {
                    Some((lo, hi)) => lane::from_i128(rng.range_i128(*lo, *hi), *elem),
                    None => rng.lane(*elem),
                })
            }
        }
    }
}

/// What an expression is evaluated in: values of free variables and buffer contents.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Variable values by name.
    pub vars: HashMap<Sym, Value>,
    /// Buffer contents by name.
    pub buffers: HashMap<Sym, Buffer>,
}

impl Env {
    /// An empty environment.
    pub fn new() -> Env {
        Env::default()
    }

    /// Binds a variable.
    pub fn set(&mut self, name: impl Into<Sym>, v: Value) -> &mut Self {
        self.vars.insert(name.into(), v);
        self
    }

    /// Binds a buffer.
    pub fn set_buffer(&mut self, name: impl Into<Sym>, b: Buffer) -> &mut Self {
        self.buffers.insert(name.into(), b);
        self
    }
}

/// Why evaluation failed. Well-typed expressions only fail on missing inputs or
/// out-of-bounds loads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A free variable has no value in the environment.
    #[error("no value for variable `{0}`")]
    UnboundVar(Sym),
    /// A variable's value has the wrong type.
    #[error("variable `{name}` has type {expected} but its value is {found}")]
    VarType {
        /// Variable name.
        name: Sym,
        /// Type in the expression.
        expected: Type,
        /// Type of the supplied value.
        found: Type,
    },
    /// A buffer has no contents in the environment.
    #[error("no contents for buffer `{0}`")]
    UnboundBuffer(Sym),
    /// A buffer's contents have another element type than the load.
    #[error("buffer `{name}` holds {found} but is loaded as {expected}")]
    BufferType {
        /// Buffer name.
        name: Sym,
        /// Element type of the load.
        expected: Elem,
        /// Element type of the contents.
        found: Elem,
    },
    /// A load read outside a concrete buffer.
    #[error("load from `{0}` at index {1} is out of bounds")]
    OutOfBounds(Sym, i64),
}

/// An environment giving every free variable of `e` random lanes (a quarter of them edge
/// cases) and every buffer pseudo-random contents, honouring value ranges given for buffers.
pub fn random_env(e: &Expr, seed: u64, ranges: &[(Sym, i128, i128)]) -> Env {
    let mut rng = SplitMix64::new(seed);
    let mut env = Env::new();
    for (name, ty) in crate::ir::visit::free_vars(e) {
        let lanes = (0..ty.lanes).map(|_| rng.lane(ty.elem)).collect();
        env.set(name, Value { ty, lanes });
    }
    for (name, elem) in crate::ir::visit::buffers(e) {
        let range = ranges
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|(_, lo, hi)| (*lo, *hi));
        env.set_buffer(
            name,
            Buffer::Random {
                elem,
                seed: rng.next_u64(),
                range,
            },
        );
    }
    env
}

/// The value of a closed expression (no variables, loads or lets: literals and
/// operations on them), or `None` when `e` has inputs or does not evaluate.
pub fn eval_closed(e: &Expr) -> Option<Value> {
    let open = crate::ir::visit::any_node(e, |n| {
        matches!(n.op(), Op::Var(_) | Op::Load(..) | Op::Let(_))
    });
    if open {
        return None;
    }
    eval(e, &Env::new()).ok()
}

/// Evaluates `e` in `env`.
pub fn eval(e: &Expr, env: &Env) -> Result<Value, EvalError> {
    let mut ev = Evaluator {
        env,
        scopes: Vec::new(),
        memo: Default::default(),
    };
    let v = ev.eval(e)?;
    Ok(Rc::try_unwrap(v).unwrap_or_else(|rc| (*rc).clone()))
}

/// Evaluates many expressions in one environment, each distinct node once across all of
/// them: selection validates candidate after candidate over the same operands.
pub struct CachedEval {
    env: Env,
    memo: crate::util::idhash::IdMap<usize, Rc<Value>>,
    /// Every expression evaluated: node ids are addresses, and holding the roots keeps
    /// the memoized nodes (and so their ids) alive.
    roots: Vec<Expr>,
}

impl CachedEval {
    /// An evaluator over `env` with nothing evaluated yet.
    pub fn new(env: Env) -> Self {
        CachedEval {
            env,
            memo: Default::default(),
            roots: Vec::new(),
        }
    }

    /// The value of `e`, reusing every node value computed before.
    pub fn eval(&mut self, e: &Expr) -> Result<Rc<Value>, EvalError> {
        self.roots.push(e.clone());
        let mut ev = Evaluator {
            env: &self.env,
            scopes: Vec::new(),
            memo: std::mem::take(&mut self.memo),
        };
        let r = ev.eval(e);
        self.memo = ev.memo;
        r
    }
}

/// The name of an instruction's `i`-th operand ([`crate::ir::instr::param_name`]), made
/// once per thread for the first few.
fn param_sym(i: usize) -> Sym {
    thread_local! {
        static NAMES: Vec<Sym> =
            (0..8).map(|i| Sym::from(crate::ir::instr::param_name(i).as_str())).collect();
    }
    NAMES
        .with(|names| names.get(i).cloned())
        .unwrap_or_else(|| Sym::from(crate::ir::instr::param_name(i).as_str()))
}

struct Evaluator<'a> {
    env: &'a Env,
    /// Let-bound values, innermost last.
    scopes: Vec<(Sym, Rc<Value>)>,
    /// Values of nodes already evaluated; shared, so a DAG is never copied.
    memo: crate::util::idhash::IdMap<usize, Rc<Value>>,
}

impl Evaluator<'_> {
    fn lookup(&self, name: &Sym) -> Option<&Value> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| &**v)
            .or_else(|| self.env.vars.get(name))
    }

    fn eval(&mut self, e: &Expr) -> Result<Rc<Value>, EvalError> {
        if let Some(v) = self.memo.get(&e.id()) {
            return Ok(v.clone());
        }
        let v = self.eval_node(e)?;
        debug_assert_eq!(
            v.ty,
            e.ty(),
            "interpreter produced the wrong type for {e:?}"
        );
        self.memo.insert(e.id(), v.clone());
        Ok(v)
    }

    fn eval_node(&mut self, e: &Expr) -> Result<Rc<Value>, EvalError> {
        let ty = e.ty();
        let elem = ty.elem;
        if let Op::Let(name) = e.op() {
            let value = self.eval(e.arg(0))?;
            // The body sees a new binding; memoised results from outside may depend on an
            // outer binding of the same name, so the body gets its own memo table.
            let saved = std::mem::take(&mut self.memo);
            self.scopes.push((name.clone(), value));
            let r = self.eval(e.arg(1));
            self.scopes.pop();
            self.memo = saved;
            return r;
        }
        let args: Vec<Rc<Value>> = e
            .args()
            .iter()
            .map(|a| self.eval(a))
            .collect::<Result<_, _>>()?;
        if let Op::Instr(ins) = e.op() {
            // An instruction means its semantics with the operands bound (shared, not
            // copied: selection's checks evaluate instructions by the thousand).
            let empty = Env::new();
            let mut inner = Evaluator {
                env: &empty,
                scopes: args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (param_sym(i), a.clone()))
                    .collect(),
                memo: Default::default(),
            };
            return inner.eval(&ins.semantics);
        }
        let n = ty.lanes as usize;
        let lanes: Vec<u128> = match e.op() {
            Op::Const(bits) => vec![*bits],
            Op::Var(name) => {
                let v = self
                    .lookup(name)
                    .ok_or_else(|| EvalError::UnboundVar(name.clone()))?;
                if v.ty != ty {
                    return Err(EvalError::VarType {
                        name: name.clone(),
                        expected: ty,
                        found: v.ty,
                    });
                }
                v.lanes.clone()
            }
            Op::Load(name, _) => {
                let buf = self
                    .env
                    .buffers
                    .get(name)
                    .ok_or_else(|| EvalError::UnboundBuffer(name.clone()))?;
                if buf.elem() != elem {
                    return Err(EvalError::BufferType {
                        name: name.clone(),
                        expected: elem,
                        found: buf.elem(),
                    });
                }
                let idx = &args[0];
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let index = idx.int(i) as i64;
                    out.push(
                        buf.get(index)
                            .ok_or_else(|| EvalError::OutOfBounds(name.clone(), index))?,
                    );
                }
                out
            }
            Op::Ramp => {
                let (b, s) = (args[0].lanes[0], args[1].lanes[0]);
                (0..n as u128)
                    .map(|i| b.wrapping_add(s.wrapping_mul(i)) & elem.mask())
                    .collect()
            }
            Op::Broadcast => {
                let src = &args[0].lanes;
                (0..n).map(|i| src[i % src.len()]).collect()
            }
            Op::Cast => {
                let from = args[0].ty.elem;
                args[0]
                    .lanes
                    .iter()
                    .map(|&b| lane::cast(b, from, elem))
                    .collect()
            }
            Op::Reinterpret => reinterpret(&args[0], ty),
            Op::Add | Op::Sub | Op::Mul | Op::Div if elem.is_float() => {
                let op = match e.op() {
                    Op::Add => float::Binary::Add,
                    Op::Sub => float::Binary::Sub,
                    Op::Mul => float::Binary::Mul,
                    _ => float::Binary::Div,
                };
                zip2(&args, |a, b| {
                    float::to_lane(float::binary(op, float::from_lane(a), float::from_lane(b)))
                })
            }
            Op::FNeg | Op::Sqrt => {
                let f = if matches!(e.op(), Op::FNeg) {
                    float::neg
                } else {
                    float::sqrt
                };
                args[0]
                    .lanes
                    .iter()
                    .map(|&a| float::to_lane(f(float::from_lane(a))))
                    .collect()
            }
            Op::Fma => (0..n)
                .map(|i| {
                    let x = |k: usize| float::from_lane(args[k].lanes[i]);
                    float::to_lane(float::fma(x(0), x(1), x(2)))
                })
                .collect(),
            Op::Add => zip2(&args, |a, b| a.wrapping_add(b) & elem.mask()),
            Op::Sub => zip2(&args, |a, b| a.wrapping_sub(b) & elem.mask()),
            Op::Mul => zip2(&args, |a, b| a.wrapping_mul(b) & elem.mask()),
            Op::Div => zip2(&args, |a, b| lane::div(a, b, elem)),
            Op::Mod => zip2(&args, |a, b| lane::rem(a, b, elem)),
            Op::Min => zip2(
                &args,
                |a, b| {
                    if lane::cmp(a, b, elem).is_le() { a } else { b }
                },
            ),
            Op::Max => zip2(
                &args,
                |a, b| {
                    if lane::cmp(a, b, elem).is_ge() { a } else { b }
                },
            ),
            Op::And => zip2(&args, |a, b| a & b),
            Op::Or => zip2(&args, |a, b| a | b),
            Op::Xor => zip2(&args, |a, b| a ^ b),
            Op::Not => args[0].lanes.iter().map(|&a| !a & elem.mask()).collect(),
            Op::Shl | Op::Shr => {
                let be = args[1].ty.elem;
                let left = matches!(e.op(), Op::Shl);
                zip2(&args, |a, b| {
                    let amt = lane::shift_amount(b, be);
                    if left {
                        lane::shl(a, amt, elem)
                    } else {
                        lane::shr(a, amt, elem)
                    }
                })
            }
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                let ae = args[0].ty.elem;
                let op = e.op().clone();
                zip2(&args, |a, b| {
                    let o = lane::cmp(a, b, ae);
                    let r = match op {
                        Op::Eq => o.is_eq(),
                        Op::Ne => o.is_ne(),
                        Op::Lt => o.is_lt(),
                        Op::Le => o.is_le(),
                        Op::Gt => o.is_gt(),
                        _ => o.is_ge(),
                    };
                    r as u128
                })
            }
            Op::Select => (0..n)
                .map(|i| {
                    if args[0].lanes[i] != 0 {
                        args[1].lanes[i]
                    } else {
                        args[2].lanes[i]
                    }
                })
                .collect(),
            Op::Let(_) | Op::Instr(_) => unreachable!("handled above"),
            Op::Popcount => args[0].lanes.iter().map(|&a| lane::popcount(a)).collect(),
            Op::CountLeadingZeros => args[0].lanes.iter().map(|&a| lane::clz(a, elem)).collect(),
            Op::CountTrailingZeros => args[0].lanes.iter().map(|&a| lane::ctz(a, elem)).collect(),
            Op::Slice { start, stride } => (0..n)
                .map(|i| args[0].lanes[*start as usize + *stride as usize * i])
                .collect(),
            Op::Concat => args.iter().flat_map(|a| a.lanes.iter().copied()).collect(),
            Op::Interleave => {
                let k = args.len();
                (0..n).map(|i| args[i % k].lanes[i / k]).collect()
            }
            Op::Shuffle(idx) => {
                let all: Vec<u128> = args.iter().flat_map(|a| a.lanes.iter().copied()).collect();
                idx.iter().map(|&i| all[i as usize]).collect()
            }
            Op::ReduceAdd | Op::ReduceMin | Op::ReduceMax => {
                let src = &args[0].lanes;
                let k = src.len() / n;
                let op = e.op().clone();
                (0..n)
                    .map(|i| {
                        let group = &src[i * k..(i + 1) * k];
                        group[1..].iter().fold(group[0], |acc, &x| match op {
                            Op::ReduceAdd => acc.wrapping_add(x) & elem.mask(),
                            Op::ReduceMin => {
                                if lane::cmp(x, acc, elem).is_lt() {
                                    x
                                } else {
                                    acc
                                }
                            }
                            _ => {
                                if lane::cmp(x, acc, elem).is_gt() {
                                    x
                                } else {
                                    acc
                                }
                            }
                        })
                    })
                    .collect()
            }
            op => {
                debug_assert!(op.is_fpir());
                let mut ops: Vec<(u128, Elem)> = vec![(0, Elem::U8); args.len()];
                (0..n)
                    .map(|i| {
                        for (slot, a) in ops.iter_mut().zip(&args) {
                            *slot = (a.lanes[i], a.ty.elem);
                        }
                        fpir::eval_lane(op, elem, &ops)
                    })
                    .collect()
            }
        };
        Ok(Rc::new(Value { ty, lanes }))
    }
}

fn zip2(args: &[Rc<Value>], f: impl Fn(u128, u128) -> u128) -> Vec<u128> {
    args[0]
        .lanes
        .iter()
        .zip(&args[1].lanes)
        .map(|(&a, &b)| f(a, b))
        .collect()
}

/// Little-endian reinterpretation: lane 0 holds the lowest bits.
fn reinterpret(v: &Value, to: Type) -> Vec<u128> {
    let from_bits = v.ty.elem.bits() as usize;
    let to_bits = to.elem.bits() as usize;
    let total = from_bits * v.lanes.len();
    let get_bit = |i: usize| -> u128 { (v.lanes[i / from_bits] >> (i % from_bits)) & 1 };
    (0..to.lanes as usize)
        .map(|l| {
            let mut x = 0u128;
            for b in 0..to_bits {
                let i = l * to_bits + b;
                if i < total {
                    x |= get_bit(i) << b;
                }
            }
            x
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, mk, mk_typed};

    fn u8v(vals: &[i128]) -> Value {
        Value::from_ints(Elem::U8, vals)
    }

    #[test]
    fn rounding_halving_add_of_extremes() {
        let t = Type::vec(Elem::U8, 2);
        let e = mk(
            Op::RoundingHalvingAdd,
            vec![Expr::var("a", t), Expr::var("b", t)],
        );
        let mut env = Env::new();
        env.set("a", u8v(&[250, 0])).set("b", u8v(&[255, 1]));
        assert_eq!(eval(&e, &env).unwrap().to_ints(), vec![253, 1]);
    }

    #[test]
    fn reinterpret_is_little_endian() {
        let t = Type::vec(Elem::U8, 4);
        let e = mk_typed(
            Op::Reinterpret,
            Type::vec(Elem::U16, 2),
            vec![Expr::var("a", t)],
        );
        let mut env = Env::new();
        env.set("a", u8v(&[0x34, 0x12, 0xcd, 0xab]));
        assert_eq!(eval(&e, &env).unwrap().to_ints(), vec![0x1234, 0xabcd]);
    }

    #[test]
    fn lets_shadow_and_do_not_leak() {
        // let a = b + 1 in a * a, with the outer a unused inside.
        let t = Type::scalar(Elem::I32);
        let b = Expr::var("b", t);
        let one = Expr::int(Elem::I32, 1).unwrap();
        let a = Expr::var("a", t);
        let body = mk(Op::Mul, vec![a.clone(), a.clone()]);
        let l = mk(Op::Let("a".into()), vec![mk(Op::Add, vec![b, one]), body]);
        let whole = mk(Op::Add, vec![l, a]);
        let mut env = Env::new();
        env.set("a", Value::from_ints(Elem::I32, &[100]))
            .set("b", Value::from_ints(Elem::I32, &[2]));
        assert_eq!(eval(&whole, &env).unwrap().to_ints(), vec![109]);
    }

    #[test]
    fn loads_report_out_of_bounds() {
        let idx = mk_typed(
            Op::Ramp,
            Type::vec(Elem::I32, 4),
            vec![
                Expr::int(Elem::I32, 2).unwrap(),
                Expr::int(Elem::I32, 1).unwrap(),
            ],
        );
        let ld = mk_typed(
            Op::Load("buf".into(), None),
            Type::vec(Elem::U8, 4),
            vec![idx],
        );
        let mut env = Env::new();
        env.set_buffer(
            "buf",
            Buffer::Data {
                elem: Elem::U8,
                min: 0,
                data: vec![1, 2, 3, 4, 5],
            },
        );
        assert_eq!(
            eval(&ld, &env).unwrap_err(),
            EvalError::OutOfBounds("buf".into(), 5)
        );
    }
}
