//! Symbolic evaluation of the Sail model: an encoding's `decode64` clause runs its decode
//! function concretely (fields, `esize`, `datasize`, `unsigned`, ...), which calls the
//! execute function; that runs with the vector registers holding the intrinsic's operands
//! as symbols, and what it writes to the destination register is the result.
//!
//! Values are integers, booleans and bit strings known now (the decode side, loop indices),
//! or bit strings and exact integers computed from operand lanes ([`Bits`],
//! [`LaneExpr`]). A condition on data makes both branches run and their results merge into
//! lane-wise selects. The saturation flag (`FPSR.QC`) is not modelled: harrow's
//! descriptions are about the destination register.

use std::collections::HashMap;
use std::rc::Rc;

use super::sail::{Ex, Model, Pat, St, Ty};
use crate::isa::import::bits::{self, Bits, Seg, Src};
use crate::isa::import::lanes::{BinOp, CountOp, LaneExpr};
use crate::types::Elem;

/// Steps (statements and loop iterations) allowed in one evaluation.
const MAX_STEPS: usize = 1 << 16;
/// Nested calls allowed (helpers such as `Reduce` recurse).
const MAX_DEPTH: usize = 64;
/// Bits of a vector register.
pub const VREG_BITS: u32 = 128;
/// Bits of a general-purpose register.
pub const XREG_BITS: u32 = 64;
/// General-purpose register `n` is `X_BASE + n` among [`Eval::regs`].
pub const X_BASE: u32 = 1000;

/// A value.
#[derive(Clone, Debug)]
pub enum Val {
    Unit,
    Int(i128),
    Bool(bool),
    Str(String),
    /// An enumeration constant (`VBitOp_VBSL`).
    Enum(String),
    Bits(Bits),
    /// An exact integer, or a condition (0 or 1), computed from operand lanes.
    Num(Rc<LaneExpr>),
    Tuple(Vec<Val>),
    /// `Zeros()`, `Ones()` or `undefined` of a width the context decides.
    Fill(Fill),
}

/// What a [`Val::Fill`] fills with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fill {
    Zeros,
    Ones,
    Undef,
}

/// Why evaluation stopped early.
#[derive(Debug)]
pub enum Stop {
    Return(Val),
    /// `throw(Error_Undefined())` (`"Undefined"`) or `throw(Error_See(..))` (`"See"`).
    Throw(String),
    /// Something the evaluator does not follow.
    Fail(String),
}

type R<T> = Result<T, Stop>;

fn fail<T>(s: impl Into<String>) -> R<T> {
    Err(Stop::Fail(s.into()))
}

/// A function's variables: values and the declared widths of `bits(N)` variables.
#[derive(Clone, Default)]
struct Env {
    vals: HashMap<String, Val>,
    widths: HashMap<String, u32>,
}

/// One evaluation of one instruction.
pub struct Eval<'m> {
    model: &'m Model,
    /// The vector registers written or preset (the others are never read).
    pub regs: HashMap<u32, Bits>,
    /// The operands' element types (how a register lane read as a number is signed).
    elems: Vec<Elem>,
    /// Bits per chunk of a bitwise operation on whole registers.
    chunk: u32,
    steps: usize,
    depth: usize,
}

/// The constant a number is, if it is one.
fn konst(e: &LaneExpr) -> Option<i128> {
    match e {
        LaneExpr::Const(c) => Some(*c),
        _ => None,
    }
}

fn num_val(e: Rc<LaneExpr>) -> Val {
    match konst(&e) {
        Some(c) => Val::Int(c),
        None => Val::Num(e),
    }
}

fn bin(op: BinOp, a: Rc<LaneExpr>, b: Rc<LaneExpr>) -> Rc<LaneExpr> {
    match (konst(&a), konst(&b)) {
        (Some(x), Some(y)) => {
            if let Some(v) = fold(op, x, y) {
                return Rc::new(LaneExpr::Const(v));
            }
        }
        // Identities: the model adds zero rounding constants and shifts by zero.
        (Some(0), None) if matches!(op, BinOp::Add | BinOp::Or | BinOp::Xor) => return b,
        (None, Some(0))
            if matches!(
                op,
                BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr
            ) =>
        {
            return a;
        }
        (Some(1), None) if op == BinOp::Mul => return b,
        (None, Some(1)) if op == BinOp::Mul => return a,
        _ => {}
    }
    Rc::new(LaneExpr::Bin(op, a, b))
}

fn fold(op: BinOp, a: i128, b: i128) -> Option<i128> {
    Some(match op {
        BinOp::Add => a.checked_add(b)?,
        BinOp::Sub => a.checked_sub(b)?,
        BinOp::Mul => a.checked_mul(b)?,
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl if (0..100).contains(&b) => a.checked_mul(1i128 << b)?,
        BinOp::Shr if (0..127).contains(&b) => a >> b,
        BinOp::Min => a.min(b),
        BinOp::Max => a.max(b),
        BinOp::Eq => i128::from(a == b),
        BinOp::Ne => i128::from(a != b),
        BinOp::Lt => i128::from(a < b),
        BinOp::Le => i128::from(a <= b),
        BinOp::Gt => i128::from(a > b),
        BinOp::Ge => i128::from(a >= b),
        _ => return None,
    })
}

fn seg(src: Src, len: u32) -> Bits {
    Bits(vec![Seg { src, lo: 0, len }])
}

/// The bits of a constant.
fn word(v: i128, len: u32) -> Bits {
    if v == 0 {
        seg(Src::Zero, len)
    } else {
        seg(Src::Num(Rc::new(LaneExpr::Const(v))), len)
    }
}

fn fill_bits(f: Fill, len: u32) -> Bits {
    match f {
        Fill::Zeros => seg(Src::Zero, len),
        Fill::Ones => word(-1, len),
        Fill::Undef => seg(Src::Undef, len),
    }
}

impl<'m> Eval<'m> {
    /// An evaluation over `model` whose operands have the element types `elems`; bitwise
    /// operations on registers work `chunk` bits at a time.
    pub fn new(model: &'m Model, elems: Vec<Elem>, chunk: u32) -> Self {
        Eval {
            model,
            regs: HashMap::new(),
            elems,
            chunk,
            steps: 0,
            depth: 0,
        }
    }

    /// Decodes and executes the instruction `word`: the first `decode64` clause that
    /// matches and does not send elsewhere (`Error_See`) runs.
    pub fn execute(&mut self, word: u32) -> Result<(), String> {
        let mut seen = false;
        for c in self.model.clauses.iter().filter(|c| c.matches(word)) {
            seen = true;
            let mut env = Env::default();
            env.vals
                .insert("op_code".into(), Val::Bits(word_bits(word)));
            match self.expr(&c.body, &mut env) {
                Ok(_) | Err(Stop::Return(_)) => return Ok(()),
                Err(Stop::Throw(t)) if t == "See" => continue,
                Err(Stop::Throw(t)) => return Err(format!("the model says: {t}")),
                Err(Stop::Fail(f)) => return Err(f),
            }
        }
        Err(if seen {
            "every decoding of the encoding sends elsewhere".into()
        } else {
            format!("no decode64 clause of the model matches {word:#010x}")
        })
    }

    /// A number of `b`, signed as `signed` says or as its source declares.
    pub fn bits_num(&self, b: &Bits, signed: Option<bool>) -> Result<Rc<LaneExpr>, String> {
        if let Some(v) = const_bits(b) {
            let w = b.width();
            let s = signed.unwrap_or(false);
            let v = if s && w < 128 && v >> (w - 1) & 1 == 1 {
                v - (1i128 << w)
            } else {
                v
            };
            return Ok(Rc::new(LaneExpr::Const(v)));
        }
        match bits::bits_num(b, signed, &self.elems) {
            Err(_) if b.0.len() > 1 && b.width() <= 64 => self.assembled(b, signed),
            r => r,
        }
    }

    /// A number made of pieces (a lane the model wrote one byte at a time): each piece
    /// unsigned at its place, the highest signed if the number is.
    fn assembled(&self, b: &Bits, signed: Option<bool>) -> Result<Rc<LaneExpr>, String> {
        let mut sum: Option<Rc<LaneExpr>> = None;
        let mut at = 0u32;
        let width = b.width();
        let last = b.0.len() - 1;
        let mut wrap = None;
        for (k, s) in b.0.iter().enumerate() {
            let piece = Bits(vec![s.clone()]);
            let sign = k == last && signed == Some(true);
            let x = match (&s.src, Elem::from_bits(width, sign)) {
                // The top piece is the low bits of an operand's lane (a lane shifted left):
                // the whole lane, with what is shifted out wrapped away.
                (Src::Reg(op), Some(t)) if k == last && k > 0 && s.lo % width == 0 => {
                    wrap = Some(t);
                    Rc::new(LaneExpr::Input {
                        operand: *op,
                        lane: s.lo / width,
                        elem: t,
                    })
                }
                _ => bits::bits_num(&piece, Some(sign), &self.elems)?,
            };
            let x = bin(BinOp::Shl, x, Rc::new(LaneExpr::Const(i128::from(at))));
            sum = Some(match sum {
                None => x,
                Some(acc) => bin(BinOp::Add, acc, x),
            });
            at += s.len;
        }
        let sum = sum.ok_or("an empty bit string used as a number")?;
        Ok(match wrap {
            Some(t) => Rc::new(LaneExpr::Wrap(t, sum)),
            None => sum,
        })
    }

    fn num(&self, v: &Val, signed: Option<bool>) -> R<Rc<LaneExpr>> {
        match v {
            Val::Int(i) => Ok(Rc::new(LaneExpr::Const(*i))),
            Val::Bool(b) => Ok(Rc::new(LaneExpr::Const(i128::from(*b)))),
            Val::Num(e) => Ok(e.clone()),
            Val::Bits(b) => self.bits_num(b, signed).map_err(Stop::Fail),
            v => fail(format!("{v:?} used as a number")),
        }
    }

    fn int(&self, v: &Val) -> R<i128> {
        match v {
            Val::Int(i) => Ok(*i),
            Val::Bits(b) => match const_bits(b) {
                Some(v) => Ok(v),
                None => fail("a value computed from data where a number known now is needed"),
            },
            Val::Num(_) => fail("a value computed from data where a number known now is needed"),
            v => fail(format!("{v:?} used as an integer")),
        }
    }

    /// `v` as `len` bits.
    fn bits(&self, v: &Val, len: Option<u32>) -> R<Bits> {
        Ok(match (v, len) {
            (Val::Bits(b), None) => b.clone(),
            (Val::Bits(b), Some(l)) => b.sub(0, l),
            (Val::Fill(f), Some(l)) => fill_bits(*f, l),
            (Val::Int(i), Some(l)) => word(*i, l),
            (Val::Num(e), Some(l)) => seg(Src::Num(e.clone()), l),
            (Val::Bool(b), _) => word(i128::from(*b), 1),
            (v, _) => return fail(format!("{v:?} used as bits of unknown width")),
        })
    }

    fn tick(&mut self) -> R<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return fail("too many steps");
        }
        Ok(())
    }

    fn block(&mut self, sts: &[St], env: &mut Env) -> R<Val> {
        let mut last = Val::Unit;
        for s in sts {
            self.tick()?;
            last = Val::Unit;
            match s {
                St::Let(names, ty, e) => {
                    let v = self.expr(e, env)?;
                    let w = self.ty_width(ty.as_ref(), env)?;
                    if let [n] = names.as_slice() {
                        let v = self.shape(v, w)?;
                        env.vals.insert(n.clone(), v);
                    } else {
                        self.assign_tuple(names, v, env)?;
                    }
                }
                St::Decl(n, ty, e) => {
                    let v = self.expr(e, env)?;
                    let w = self.ty_width(Some(ty), env)?;
                    if let Some(w) = w {
                        env.widths.insert(n.clone(), w);
                    }
                    let v = self.shape(v, w)?;
                    env.vals.insert(n.clone(), v);
                }
                St::Assign(lhs, e) => {
                    let v = self.expr(e, env)?;
                    self.assign(lhs, v, env)?;
                }
                St::Expr(e) => last = self.expr(e, env)?,
            }
        }
        Ok(last)
    }

    fn ty_width(&mut self, ty: Option<&Ty>, env: &mut Env) -> R<Option<u32>> {
        match ty {
            Some(Ty::Bits(e)) => {
                let v = self.expr(e, env)?;
                Ok(Some(self.int(&v)? as u32))
            }
            _ => Ok(None),
        }
    }

    /// A value given a declared width: bits are cut or filled to it.
    fn shape(&self, v: Val, w: Option<u32>) -> R<Val> {
        Ok(match (v, w) {
            (Val::Bits(b), Some(w)) if b.width() != w => Val::Bits(b.sub(0, w)),
            (Val::Fill(f), Some(w)) => Val::Bits(fill_bits(f, w)),
            (v, _) => v,
        })
    }

    fn assign_tuple(&mut self, names: &[String], v: Val, env: &mut Env) -> R<()> {
        let Val::Tuple(vs) = v else {
            return fail("a tuple assigned from a value that is not one");
        };
        if vs.len() != names.len() {
            return fail("a tuple of the wrong length");
        }
        for (n, v) in names.iter().zip(vs) {
            let w = env.widths.get(n).copied();
            let v = self.shape(v, w)?;
            env.vals.insert(n.clone(), v);
        }
        Ok(())
    }

    fn assign(&mut self, lhs: &Ex, v: Val, env: &mut Env) -> R<()> {
        match lhs {
            Ex::Var(n) if matches!(n.as_str(), "FPSR" | "FPCR" | "__unconditional" | "SEE") => {
                Ok(())
            }
            Ex::Var(n) => {
                let w = env.widths.get(n).copied();
                let v = self.shape(v, w)?;
                env.vals.insert(n.clone(), v);
                Ok(())
            }
            Ex::Typed(e, _) => self.assign(e, v, env),
            Ex::Tuple(parts) => {
                let names = parts
                    .iter()
                    .map(|p| match p {
                        Ex::Var(n) => Ok(n.clone()),
                        _ => fail("a tuple pattern of something other than names"),
                    })
                    .collect::<R<Vec<_>>>()?;
                self.assign_tuple(&names, v, env)
            }
            Ex::Call(f, args) if f == "V" || f == "Vpart" => {
                let n = self.expr(&args[0], env)?;
                let n = self.int(&n)? as u32;
                let part = match args.get(1) {
                    Some(p) => {
                        let p = self.expr(p, env)?;
                        self.int(&p)?
                    }
                    None => 0,
                };
                self.write_reg(n, part, &v)
            }
            Ex::Call(f, args) if f == "X" => {
                let n = self.expr(&args[0], env)?;
                let n = self.int(&n)? as u32;
                self.write_reg(X_BASE + n, 0, &v)
            }
            Ex::Slice(x, hi, lo) => {
                let Ex::Var(n) = &**x else {
                    return fail("assignment to a slice of something other than a variable");
                };
                let (hi, lo) = (self.expr(hi, env)?, self.expr(lo, env)?);
                let (hi, lo) = (self.int(&hi)?, self.int(&lo)?);
                let piece = self.bits(&v, Some((hi - lo + 1) as u32))?;
                let cur = match env.vals.get(n) {
                    Some(c) => self.bits(c, env.widths.get(n).copied())?,
                    None => return fail(format!("`{n}` written before it is declared")),
                };
                env.vals
                    .insert(n.clone(), Val::Bits(cur.write(lo as u32, piece)));
                Ok(())
            }
            _ => fail(format!("assignment to {lhs:?}")),
        }
    }

    /// Writes `v` to register `n` (`part` 1: its upper 64 bits, keeping the lower).
    fn write_reg(&mut self, n: u32, part: i128, v: &Val) -> R<()> {
        let b = self.bits(v, None)?;
        let w = b.width();
        let reg_bits = if n >= X_BASE { XREG_BITS } else { VREG_BITS };
        let new = if part == 0 {
            let mut out = b.sub(0, w.min(reg_bits));
            if w < reg_bits {
                out.0.push(Seg {
                    src: Src::Zero,
                    lo: 0,
                    len: reg_bits - w,
                });
            }
            out
        } else {
            let cur = self
                .regs
                .get(&n)
                .cloned()
                .unwrap_or_else(|| seg(Src::Undef, VREG_BITS));
            cur.write(w, b).sub(0, VREG_BITS)
        };
        self.regs.insert(n, new);
        Ok(())
    }

    fn read_reg(&self, n: u32) -> R<Bits> {
        self.regs.get(&n).cloned().map_or_else(
            || fail(format!("reads register V{n}, which holds no operand")),
            Ok,
        )
    }

    fn truth(&self, v: &Val) -> R<Result<bool, Rc<LaneExpr>>> {
        match v {
            Val::Bool(b) => Ok(Ok(*b)),
            Val::Num(e) => Ok(match konst(e) {
                Some(c) => Ok(c != 0),
                None => Err(e.clone()),
            }),
            v => fail(format!("{v:?} used as a condition")),
        }
    }

    fn expr(&mut self, e: &Ex, env: &mut Env) -> R<Val> {
        Ok(match e {
            Ex::Int(i) => Val::Int(*i),
            Ex::Bits(v, w) => Val::Bits(word(*v as i128, *w)),
            Ex::Bool(b) => Val::Bool(*b),
            Ex::Str(s) => Val::Str(s.clone()),
            Ex::Var(n) => match env.vals.get(n) {
                Some(v) => v.clone(),
                None if n == "bitzero" => Val::Bits(word(0, 1)),
                None if n == "bitone" => Val::Bits(word(1, 1)),
                None if n.contains('_') && n.chars().next().is_some_and(char::is_uppercase) => {
                    Val::Enum(n.clone())
                }
                None => return fail(format!("reads `{n}`, which is not defined")),
            },
            Ex::Undefined(ty) => match self.ty_width(ty.as_ref(), env)? {
                Some(w) => Val::Bits(seg(Src::Undef, w)),
                None => Val::Fill(Fill::Undef),
            },
            Ex::Typed(e, ty) => {
                let v = self.expr(e, env)?;
                let w = self.ty_width(Some(ty), env)?;
                self.shape(v, w)?
            }
            Ex::Call(f, args) => self.call(f, args, env)?,
            Ex::Bin(op, a, b) => {
                let a = self.expr(a, env)?;
                // `&` and `|` of conditions known now do not evaluate the other side.
                if let (Val::Bool(x), "&" | "|") = (&a, *op)
                    && (*x == (*op == "|"))
                {
                    return Ok(Val::Bool(*x));
                }
                let b = self.expr(b, env)?;
                self.binary(op, a, b)?
            }
            Ex::Not(a) => {
                let a = self.expr(a, env)?;
                self.not(a)?
            }
            Ex::Neg(a) => {
                let a = self.expr(a, env)?;
                let n = self.num(&a, None)?;
                num_val(bin(BinOp::Sub, Rc::new(LaneExpr::Const(0)), n))
            }
            Ex::Slice(x, hi, lo) => {
                let x = self.expr(x, env)?;
                let (hi, lo) = (self.expr(hi, env)?, self.expr(lo, env)?);
                let (hi, lo) = (self.int(&hi)?, self.int(&lo)?);
                self.slice(&x, lo, hi - lo + 1)?
            }
            Ex::Index(x, i) => {
                let x = self.expr(x, env)?;
                let i = self.expr(i, env)?;
                let i = self.int(&i)?;
                self.slice(&x, i, 1)?
            }
            Ex::VecLit(parts) => {
                let mut out = Bits::default();
                for p in parts.iter().rev() {
                    let v = self.expr(p, env)?;
                    let b = self.bits(&v, None)?;
                    out.0.extend(b.0);
                }
                Val::Bits(out)
            }
            Ex::Tuple(parts) => Val::Tuple(
                parts
                    .iter()
                    .map(|p| self.expr(p, env))
                    .collect::<R<Vec<_>>>()?,
            ),
            Ex::If(c, a, b) => {
                let cv = self.expr(c, env)?;
                match self.truth(&cv)? {
                    Ok(true) => self.expr(a, env)?,
                    Ok(false) => match b {
                        Some(b) => self.expr(b, env)?,
                        None => Val::Unit,
                    },
                    Err(cond) => self.branch(&cond, a, b.as_deref(), env)?,
                }
            }
            Ex::Block(sts) => self.block(sts, env)?,
            Ex::Match(s, arms) => {
                let v = self.expr(s, env)?;
                for (p, body) in arms.iter() {
                    if self.matches(p, &v)? {
                        return self.expr(body, env);
                    }
                }
                return fail("no arm of a match applies");
            }
            Ex::Foreach {
                var,
                from,
                to,
                step,
                down,
                body,
            } => {
                let (f, t, s) = (
                    self.expr(from, env)?,
                    self.expr(to, env)?,
                    self.expr(step, env)?,
                );
                let (f, t, s) = (self.int(&f)?, self.int(&t)?, self.int(&s)?);
                if s <= 0 {
                    return fail("a loop step that is not positive");
                }
                let mut i = f;
                while if *down { i >= t } else { i <= t } {
                    self.tick()?;
                    env.vals.insert(var.clone(), Val::Int(i));
                    self.expr(body, env)?;
                    i = if *down { i - s } else { i + s };
                }
                Val::Unit
            }
            Ex::While(c, body) => {
                loop {
                    self.tick()?;
                    let cv = self.expr(c, env)?;
                    match self.truth(&cv)? {
                        Ok(true) => {
                            self.expr(body, env)?;
                        }
                        Ok(false) => break,
                        Err(_) => return fail("a loop that runs while a condition on data holds"),
                    }
                }
                Val::Unit
            }
            Ex::Return(e) => {
                let v = self.expr(e, env)?;
                return Err(Stop::Return(v));
            }
            Ex::Throw(e) => {
                let v = self.expr(e, env)?;
                let what = match v {
                    Val::Str(s) => s,
                    other => format!("{other:?}"),
                };
                return Err(Stop::Throw(what));
            }
            Ex::Assert => Val::Unit,
        })
    }

    /// Both arms of a condition on data, merged lane by lane.
    fn branch(&mut self, cond: &Rc<LaneExpr>, a: &Ex, b: Option<&Ex>, env: &mut Env) -> R<Val> {
        let regs = self.regs.clone();
        let mut then_env = env.clone();
        let va = self.expr(a, &mut then_env)?;
        let regs_a = std::mem::replace(&mut self.regs, regs.clone());
        let mut else_env = env.clone();
        let vb = match b {
            Some(b) => self.expr(b, &mut else_env)?,
            None => Val::Unit,
        };
        if !same_regs(&regs_a, &self.regs) {
            return fail("writes a register under a condition on data");
        }
        let mut merged = Env {
            vals: HashMap::new(),
            widths: then_env.widths.clone(),
        };
        for (name, tv) in then_env.vals {
            let ev = else_env.vals.remove(&name);
            let v = match ev {
                None => tv,
                Some(ev) => self.merge(cond, tv, ev)?,
            };
            merged.vals.insert(name, v);
        }
        merged.vals.extend(else_env.vals);
        *env = merged;
        self.merge(cond, va, vb)
    }

    fn merge(&self, cond: &Rc<LaneExpr>, a: Val, b: Val) -> R<Val> {
        Ok(match (a, b) {
            (Val::Unit, Val::Unit) => Val::Unit,
            (Val::Int(x), Val::Int(y)) if x == y => Val::Int(x),
            (Val::Bool(x), Val::Bool(y)) if x == y => Val::Bool(x),
            (Val::Bits(x), Val::Bits(y)) => {
                Val::Bits(bits::merge_bits(cond, &x, &y, &self.elems).map_err(Stop::Fail)?)
            }
            (Val::Num(x), Val::Num(y)) if Rc::ptr_eq(&x, &y) => Val::Num(x),
            (Val::Tuple(x), Val::Tuple(y)) if x.len() == y.len() => Val::Tuple(
                x.into_iter()
                    .zip(y)
                    .map(|(p, q)| self.merge(cond, p, q))
                    .collect::<R<Vec<_>>>()?,
            ),
            (Val::Enum(x), Val::Enum(y)) if x == y => Val::Enum(x),
            (Val::Str(x), Val::Str(y)) if x == y => Val::Str(x),
            (Val::Fill(x), Val::Fill(y)) if x == y => Val::Fill(x),
            // `if c then Ones() else Zeros()`: all ones is -1 at any width.
            (Val::Fill(x), Val::Fill(y)) if x != Fill::Undef && y != Fill::Undef => {
                let v = |f: Fill| Rc::new(LaneExpr::Const(if f == Fill::Ones { -1 } else { 0 }));
                Val::Num(Rc::new(LaneExpr::Select(cond.clone(), v(x), v(y))))
            }
            (a @ (Val::Int(_) | Val::Num(_) | Val::Bool(_)), b) => {
                let (p, q) = (self.num(&a, None)?, self.num(&b, None)?);
                Val::Num(Rc::new(LaneExpr::Select(cond.clone(), p, q)))
            }
            (a, b) => return fail(format!("merges {a:?} and {b:?} under a condition on data")),
        })
    }

    fn matches(&self, p: &Pat, v: &Val) -> R<bool> {
        Ok(match p {
            Pat::Wild => true,
            Pat::Name(n) => matches!(v, Val::Enum(e) if e == n),
            Pat::Int(i) => self.int(v)? == *i,
            Pat::Bits(fields) => {
                let x = self.int(v)? as u128;
                let mut at: u32 = fields.iter().map(|f| f.0).sum();
                fields.iter().all(|(w, f)| {
                    at -= w;
                    f.is_none_or(|f| (x >> at) & ((1u128 << w) - 1) == f)
                })
            }
        })
    }

    fn slice(&self, x: &Val, lo: i128, len: i128) -> R<Val> {
        if lo < 0 || len <= 0 {
            return fail("a slice of negative position or length");
        }
        Ok(match x {
            Val::Bits(b) => Val::Bits(b.sub(lo as u32, len as u32)),
            Val::Int(i) => Val::Bits(word(i >> lo, len as u32)),
            Val::Num(e) => {
                Val::Bits(seg(Src::Num(e.clone()), (lo + len) as u32).sub(lo as u32, len as u32))
            }
            v => return fail(format!("a slice of {v:?}")),
        })
    }

    fn not(&self, a: Val) -> R<Val> {
        Ok(match a {
            Val::Bool(b) => Val::Bool(!b),
            Val::Num(c) => Val::Num(bin(BinOp::Eq, c, Rc::new(LaneExpr::Const(0)))),
            Val::Bits(b) => Val::Bits(self.chunked(&b, None, |p, _| {
                let len = p.width();
                let t = Elem::from_bits(len, false).ok_or("not of a piece of odd width")?;
                let x = self.bits_num(&p, Some(false))?;
                Ok(match konst(&x) {
                    Some(c) => LaneExpr::Const(!c & ((1i128 << len) - 1)),
                    None => LaneExpr::Not(t, x),
                })
            })?),
            v => return fail(format!("not of {v:?}")),
        })
    }

    /// A bitwise operation on bit strings, `chunk` bits at a time (a whole register is not
    /// one number).
    fn chunked(
        &self,
        a: &Bits,
        b: Option<&Bits>,
        f: impl Fn(Bits, Option<Bits>) -> Result<LaneExpr, String>,
    ) -> R<Bits> {
        let w = a.width();
        // Whole registers (64 or 128 bits) go by result lanes; elements go whole.
        let chunk = if w >= 64 { self.chunk.min(w) } else { w };
        let mut out = Bits::default();
        let mut at = 0;
        while at < w {
            let len = chunk.min(w - at);
            let pa = a.sub(at, len);
            let pb = b.map(|b| b.sub(at, len));
            let e = f(pa, pb).map_err(Stop::Fail)?;
            out.0.push(Seg {
                src: Src::Num(Rc::new(e)),
                lo: 0,
                len,
            });
            at += len;
        }
        Ok(out)
    }

    fn binary(&self, op: &str, a: Val, b: Val) -> R<Val> {
        // Widths from the other side: `x == Zeros()`, `result + 1`.
        let (a, b) = match (&a, &b) {
            (Val::Fill(f), Val::Bits(y)) => (Val::Bits(fill_bits(*f, y.width())), b),
            (Val::Bits(x), Val::Fill(f)) => {
                let w = x.width();
                (a, Val::Bits(fill_bits(*f, w)))
            }
            _ => (a, b),
        };
        if op == "@" {
            let (hi, lo) = (self.bits(&a, None)?, self.bits(&b, None)?);
            let mut out = lo;
            out.0.extend(hi.0);
            return Ok(Val::Bits(out));
        }
        match (&a, &b) {
            (Val::Bool(x), Val::Bool(y)) => {
                return Ok(Val::Bool(match op {
                    "&" => *x && *y,
                    "|" => *x || *y,
                    "==" => x == y,
                    "!=" => x != y,
                    _ => return fail(format!("`{op}` of booleans")),
                }));
            }
            (Val::Enum(x), Val::Enum(y)) => {
                return Ok(Val::Bool(match op {
                    "==" => x == y,
                    "!=" => x != y,
                    _ => return fail(format!("`{op}` of enumeration constants")),
                }));
            }
            (Val::Int(x), Val::Int(y)) => return int_binary(op, *x, *y),
            _ => {}
        }
        let bits_width = match (&a, &b) {
            (Val::Bits(x), _) => Some(x.width()),
            (_, Val::Bits(y)) => Some(y.width()),
            _ => None,
        };
        let bop = match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "&" => BinOp::And,
            "|" => BinOp::Or,
            "^" if bits_width.is_some() => BinOp::Xor,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            _ => return fail(format!("`{op}` of values computed from data")),
        };
        let Some(w) = bits_width else {
            // Exact integers (and conditions, for `&` and `|`).
            let (x, y) = (self.num(&a, None)?, self.num(&b, None)?);
            return Ok(num_val(bin(bop, x, y)));
        };
        let (x, y) = (self.bits(&a, Some(w))?, self.bits(&b, Some(w))?);
        if let (Some(p), Some(q)) = (const_bits(&x), const_bits(&y))
            && let Some(v) = fold(bop, p, q)
        {
            return Ok(match bop {
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                    Val::Bool(v != 0)
                }
                _ => Val::Bits(word(v & mask(w), w)),
            });
        }
        match bop {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                // Modulo 2^w: the exact value, truncated wherever it is read.
                if w > 64 {
                    return fail(format!("{w}-bit arithmetic"));
                }
                let (p, q) = (
                    self.num(&Val::Bits(x), None)?,
                    self.num(&Val::Bits(y), None)?,
                );
                Ok(Val::Bits(seg(Src::Num(bin(bop, p, q)), w)))
            }
            BinOp::And | BinOp::Or | BinOp::Xor => {
                Ok(Val::Bits(self.chunked(&x, Some(&y), |p, q| {
                    let q = q.unwrap_or_default();
                    let (p, q) = (self.bits_num(&p, None)?, self.bits_num(&q, None)?);
                    Ok(LaneExpr::Bin(bop, p, q))
                })?))
            }
            _ => {
                if w > 64 {
                    return fail(format!("a comparison of {w}-bit values"));
                }
                let (p, q) = (
                    self.num(&Val::Bits(x), Some(false))?,
                    self.num(&Val::Bits(y), Some(false))?,
                );
                Ok(num_val(bin(bop, p, q)))
            }
        }
    }

    fn call(&mut self, f: &str, args: &[Ex], env: &mut Env) -> R<Val> {
        match f {
            "CheckFPAdvSIMDEnabled64" | "AArch64_CheckFPAdvSIMDEnabled" | "__PostDecode" => {
                return Ok(Val::Unit);
            }
            "Error_Undefined" => return Ok(Val::Str("Undefined".into())),
            "Error_See" => return Ok(Val::Str("See".into())),
            "Error_Implementation_Defined" => return Ok(Val::Str("ImplementationDefined".into())),
            "HasArchVersion" | "__IMPDEF_boolean" => {
                return fail(format!("depends on the implementation (`{f}`)"));
            }
            _ if f.starts_with("Have") && f.ends_with("Ext") => return Ok(Val::Bool(true)),
            _ => {}
        }
        let vals = args
            .iter()
            .map(|a| self.expr(a, env))
            .collect::<R<Vec<_>>>()?;
        if let Some(v) = self.builtin(f, &vals)? {
            return Ok(v);
        }
        let Some(func) = self.model.funcs.get(f).cloned() else {
            return fail(match self.model.unread.get(f) {
                Some(why) => format!("calls `{f}`, which the reader could not follow: {why}"),
                None => format!("calls `{f}`, which the model does not define here"),
            });
        };
        if func.params.len() != vals.len() {
            return fail(format!("calls `{f}` with {} arguments", vals.len()));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return fail("calls nest too deep");
        }
        let mut callee = Env::default();
        for (p, v) in func.params.iter().zip(vals) {
            if let (Val::Bits(b), false) = (&v, callee.vals.contains_key("N")) {
                // A helper's `'N` is the width of its (first) bit-vector argument.
                callee.vals.insert("N".into(), Val::Int(b.width() as i128));
            }
            let name = p.strip_suffix("__arg").unwrap_or(p).to_string();
            callee.vals.insert(name, v.clone());
            callee.vals.insert(p.clone(), v);
        }
        let out = match self.expr(&func.body, &mut callee) {
            Ok(v) | Err(Stop::Return(v)) => Ok(v),
            Err(e) => Err(e),
        };
        self.depth -= 1;
        out
    }

    /// The model's primitives and the AArch64 helpers its files do not define.
    fn builtin(&mut self, f: &str, a: &[Val]) -> R<Option<Val>> {
        let arity = |n: usize| -> R<()> {
            if a.len() == n {
                Ok(())
            } else {
                fail(format!("`{f}` with {} arguments", a.len()))
            }
        };
        Ok(Some(match f {
            "V" | "aget_V" => {
                arity(1)?;
                Val::Bits(self.read_reg(self.int(&a[0])? as u32)?)
            }
            "Vpart" | "aget_Vpart" => {
                arity(2)?;
                let r = self.read_reg(self.int(&a[0])? as u32)?;
                match self.int(&a[1])? {
                    0 => Val::Bits(r),
                    _ => Val::Bits(r.sub(64, 64)),
                }
            }
            "aset_V" => {
                arity(2)?;
                self.write_reg(self.int(&a[0])? as u32, 0, &a[1])?;
                Val::Unit
            }
            "X" | "aget_X" => {
                arity(1)?;
                Val::Bits(self.read_reg(X_BASE + self.int(&a[0])? as u32)?)
            }
            "aget_Elem" | "Elem" => {
                arity(3)?;
                let (e, size) = (self.index(&a[1])?, self.int(&a[2])?);
                self.slice(&a[0], e * size, size)?
            }
            "aset_Elem" => {
                arity(4)?;
                let (e, size) = (self.index(&a[1])?, self.int(&a[2])?);
                let cur = self.bits(&a[0], None)?;
                let v = self.bits(&a[3], Some(size as u32))?;
                Val::Bits(cur.write((e * size) as u32, v))
            }
            "slice" => {
                arity(3)?;
                let (lo, len) = (self.int(&a[1])?, self.int(&a[2])?);
                self.slice(&a[0], lo, len)?
            }
            "__GetSlice_int" => {
                arity(3)?;
                let (len, lo) = (self.int(&a[0])?, self.int(&a[2])?);
                self.slice(&a[1], lo, len)?
            }
            "__SetSlice_bits" => {
                arity(5)?;
                let (len, lo) = (self.int(&a[1])?, self.int(&a[3])?);
                let cur = self.bits(&a[2], None)?;
                let v = self.bits(&a[4], Some(len as u32))?;
                Val::Bits(cur.write(lo as u32, v))
            }
            "UInt" | "SInt" | "asl_Int" => {
                let signed = match f {
                    "UInt" => false,
                    "SInt" => true,
                    _ => {
                        arity(2)?;
                        match &a[1] {
                            Val::Bool(u) => !u,
                            _ => return fail("signedness decided by data"),
                        }
                    }
                };
                num_val(self.num(&a[0], Some(signed))?)
            }
            "ZeroExtend" | "SignExtend" => {
                arity(2)?;
                let n = self.int(&a[1])? as u32;
                let b = self.bits(&a[0], None)?;
                if f == "ZeroExtend" || const_bits(&b).is_some() && b.width() == n {
                    Val::Bits(b.sub(0, n))
                } else {
                    let x = self.num(&Val::Bits(b), Some(true))?;
                    Val::Bits(seg(Src::Num(x), n))
                }
            }
            "Zeros" | "Ones" => {
                let fill = if f == "Zeros" {
                    Fill::Zeros
                } else {
                    Fill::Ones
                };
                match a {
                    [] => Val::Fill(fill),
                    [n] => Val::Bits(fill_bits(fill, self.int(n)? as u32)),
                    _ => return fail(format!("`{f}` with {} arguments", a.len())),
                }
            }
            "replicate_bits" => {
                arity(2)?;
                let b = self.bits(&a[0], None)?;
                let mut out = Bits::default();
                for _ in 0..self.int(&a[1])? {
                    out.0.extend(b.0.iter().cloned());
                }
                Val::Bits(out)
            }
            "shl_int" | "shr_int" => {
                arity(2)?;
                let k = self.int(&a[1])?;
                let op = if f == "shl_int" {
                    BinOp::Shl
                } else {
                    BinOp::Shr
                };
                num_val(bin(op, self.num(&a[0], None)?, Rc::new(LaneExpr::Const(k))))
            }
            "SatQ" | "SignedSatQ" | "UnsignedSatQ" => {
                let (x, n, unsigned) = match f {
                    "SatQ" => {
                        arity(3)?;
                        let Val::Bool(u) = a[2] else {
                            return fail("signedness decided by data");
                        };
                        (&a[0], &a[1], u)
                    }
                    _ => {
                        arity(2)?;
                        (&a[0], &a[1], f == "UnsignedSatQ")
                    }
                };
                let n = self.int(n)? as u32;
                let t = Elem::from_bits(n, !unsigned).ok_or("a saturation of odd width");
                let t = t.map_err(|e| Stop::Fail(e.into()))?;
                let x = self.num(x, None)?;
                let v = Rc::new(LaneExpr::Saturate(t, x));
                // The flag only feeds FPSR.QC, which is not modelled.
                Val::Tuple(vec![Val::Bits(seg(Src::Num(v), n)), Val::Bool(false)])
            }
            "abs" => {
                arity(1)?;
                let x = self.num(&a[0], None)?;
                num_val(match konst(&x) {
                    Some(c) => Rc::new(LaneExpr::Const(c.abs())),
                    None => Rc::new(LaneExpr::Abs(x)),
                })
            }
            "min" | "max" => {
                arity(2)?;
                let op = if f == "min" { BinOp::Min } else { BinOp::Max };
                num_val(bin(op, self.num(&a[0], None)?, self.num(&a[1], None)?))
            }
            "negate" => {
                arity(1)?;
                num_val(bin(
                    BinOp::Sub,
                    Rc::new(LaneExpr::Const(0)),
                    self.num(&a[0], None)?,
                ))
            }
            "not" | "not_bool" => {
                arity(1)?;
                self.not(a[0].clone())?
            }
            "div" | "fdiv_int" | "mod" | "pow2" => {
                let x = self.int(&a[0])?;
                match (f, a.get(1)) {
                    ("pow2", _) => Val::Int(1i128 << x.clamp(0, 126)),
                    (_, Some(y)) => {
                        let y = self.int(y)?;
                        if y == 0 {
                            return fail("division by zero");
                        }
                        Val::Int(if f == "mod" {
                            x.rem_euclid(y)
                        } else {
                            x.div_euclid(y)
                        })
                    }
                    _ => return fail(format!("`{f}` with one argument")),
                }
            }
            "HighestSetBit" | "LowestSetBit" => {
                arity(1)?;
                let b = self.bits(&a[0], None)?;
                let v = const_bits(&b).ok_or_else(|| Stop::Fail("a set bit of data".into()))?;
                Val::Int(match (v, f) {
                    (0, _) => -1,
                    (v, "HighestSetBit") => 127 - v.leading_zeros() as i128,
                    (v, _) => v.trailing_zeros() as i128,
                })
            }
            "LSL" | "LSR" | "ROR" => {
                arity(2)?;
                let b = self.bits(&a[0], None)?;
                let w = b.width();
                let k = self.int(&a[1])?;
                if k < 0 {
                    return fail(format!("`{f}` by a negative amount"));
                }
                if k >= i128::from(w) && f != "ROR" {
                    // Every bit shifted out.
                    return Ok(Some(Val::Bits(seg(Src::Zero, w))));
                }
                let k = k.rem_euclid(i128::from(w.max(1))) as u32;
                let zeros = seg(Src::Zero, k);
                Val::Bits(match f {
                    "LSL" => zeros.write(k, b.sub(0, w - k)).sub(0, w),
                    "LSR" => b.sub(k, w - k).write(w - k, zeros).sub(0, w),
                    _ => b.sub(k, w - k).write(w - k, b.sub(0, k)).sub(0, w),
                })
            }
            "IsZero" | "IsOnes" => {
                arity(1)?;
                let b = self.bits(&a[0], None)?;
                let w = b.width();
                if w > 64 {
                    return fail(format!("`{f}` of {w} bits"));
                }
                let x = self.bits_num(&b, Some(false)).map_err(Stop::Fail)?;
                let want = if f == "IsZero" { 0 } else { mask(w) };
                num_val(bin(BinOp::Eq, x, Rc::new(LaneExpr::Const(want))))
            }
            "BitCount" | "CountLeadingZeroBits" | "CountLeadingSignBits" => {
                arity(1)?;
                let b = self.bits(&a[0], None)?;
                let w = b.width();
                let t = Elem::from_bits(w, false)
                    .ok_or_else(|| Stop::Fail(format!("`{f}` of {w} bits")))?;
                let x = self.bits_num(&b, Some(f == "CountLeadingSignBits"));
                let x = x.map_err(Stop::Fail)?;
                num_val(Rc::new(match f {
                    "BitCount" => LaneExpr::Count(CountOp::Ones, t, x),
                    "CountLeadingZeroBits" => LaneExpr::Count(CountOp::LeadingZeros, t, x),
                    // Arm's definition: the leading zeros of `x<N-1:1> EOR x<N-2:0>`, that
                    // is of `x ^ (x >> 1)` (arithmetic) less the sign bit itself.
                    _ => {
                        let half = bin(BinOp::Shr, x.clone(), Rc::new(LaneExpr::Const(1)));
                        let y = bin(BinOp::Xor, x, half);
                        let clz = Rc::new(LaneExpr::Count(CountOp::LeadingZeros, t, y));
                        LaneExpr::Bin(BinOp::Sub, clz, Rc::new(LaneExpr::Const(1)))
                    }
                }))
            }
            "length" | "__length" => {
                arity(1)?;
                Val::Int(i128::from(self.bits(&a[0], None)?.width()))
            }
            _ => return Ok(None),
        }))
    }

    /// An element index known now.
    fn index(&self, v: &Val) -> R<i128> {
        match v {
            Val::Num(_) => fail("an element chosen by data (a table lookup)"),
            v => self.int(v),
        }
    }
}

fn mask(w: u32) -> i128 {
    if w >= 127 { -1 } else { (1i128 << w) - 1 }
}

fn int_binary(op: &str, x: i128, y: i128) -> R<Val> {
    let v = match op {
        "+" => x.checked_add(y),
        "-" => x.checked_sub(y),
        "*" => x.checked_mul(y),
        "/" if y != 0 => Some(x.div_euclid(y)),
        "%" if y != 0 => Some(x.rem_euclid(y)),
        "^" if (0..120).contains(&y) => x.checked_pow(y as u32),
        "==" => return Ok(Val::Bool(x == y)),
        "!=" => return Ok(Val::Bool(x != y)),
        "<" => return Ok(Val::Bool(x < y)),
        "<=" => return Ok(Val::Bool(x <= y)),
        ">" => return Ok(Val::Bool(x > y)),
        ">=" => return Ok(Val::Bool(x >= y)),
        _ => None,
    };
    match v {
        Some(v) => Ok(Val::Int(v)),
        None => fail(format!("`{x} {op} {y}`")),
    }
}

/// The value of bits that are all known now (unsigned).
pub fn const_bits(b: &Bits) -> Option<i128> {
    let mut v: i128 = 0;
    let mut at = 0u32;
    for s in &b.0 {
        let piece = match &s.src {
            Src::Zero => 0,
            Src::Num(e) => match **e {
                LaneExpr::Const(c) => (c >> s.lo.min(126)) & mask(s.len),
                _ => return None,
            },
            _ => return None,
        };
        if at >= 127 {
            return None;
        }
        v |= piece << at;
        at += s.len;
    }
    Some(v)
}

fn word_bits(word: u32) -> Bits {
    seg(Src::Num(Rc::new(LaneExpr::Const(i128::from(word)))), 32)
}

fn same_regs(a: &HashMap<u32, Bits>, b: &HashMap<u32, Bits>) -> bool {
    a.len() == b.len()
        && a.iter().all(|(k, x)| {
            b.get(k)
                .is_some_and(|y| format!("{:?}", x.0) == format!("{:?}", y.0))
        })
}
