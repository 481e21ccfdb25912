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

mod builtins;
mod ops;

use super::sail::{Ex, Model, Pat, St, Ty};
use crate::isa::import::bits::{self, Bits, Seg, Src};
use crate::isa::import::lanes::{BinOp, LaneExpr};
use crate::types::Elem;

/// Steps (statements and loop iterations) allowed in one evaluation.
const MAX_STEPS: usize = 1 << 16;
/// Nested calls allowed (helpers such as `Reduce` recurse).
const MAX_DEPTH: usize = 64;
/// Bits of a vector register.
pub const VREG_BITS: u32 = 128;
/// The largest bit position, width or register number evaluation takes (the model's are
/// at most a few thousand: a table of four registers is 512 bits).
const MAX_PLACE: i128 = 1 << 16;
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
            let v = if s && (1..127).contains(&w) && v >> (w - 1) & 1 == 1 {
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

    /// A bit position, width or register number known now, within [`MAX_PLACE`].
    fn place(&self, v: &Val) -> R<u32> {
        let i = self.int(v)?;
        if (0..=MAX_PLACE).contains(&i) {
            Ok(i as u32)
        } else {
            fail(format!(
                "a bit position, width or register {i} out of range"
            ))
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
                Ok(Some(self.place(&v)?))
            }
            _ => Ok(None),
        }
    }

    /// A value given a declared width: bits are cut or filled to it.
    fn shape(&self, v: Val, w: Option<u32>) -> R<Val> {
        Ok(match (v, w) {
            (Val::Bits(b), Some(w)) if b.width() != w => Val::Bits(b.sub(0, w)),
            (Val::Fill(f), Some(w)) => Val::Bits(fill_bits(f, w)),
            // A number kept for a `bits(w)` variable (a merge of `Ones()` and `Zeros()`) is
            // its bits: `~` of it is then bitwise.
            (v @ (Val::Int(_) | Val::Num(_)), Some(w)) => Val::Bits(self.bits(&v, Some(w))?),
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
            Ex::Call(f, args) if (f == "V" || f == "Vpart") && !args.is_empty() => {
                let n = self.expr(&args[0], env)?;
                let n = self.place(&n)?;
                let part = match args.get(1) {
                    Some(p) => {
                        let p = self.expr(p, env)?;
                        self.int(&p)?
                    }
                    None => 0,
                };
                self.write_reg(n, part, &v)
            }
            Ex::Call(f, args) if f == "X" && args.len() == 1 => {
                let n = self.expr(&args[0], env)?;
                let n = self.place(&n)?;
                self.write_reg(X_BASE + n, 0, &v)
            }
            Ex::Slice(x, hi, lo) => {
                let Ex::Var(n) = &**x else {
                    return fail("assignment to a slice of something other than a variable");
                };
                let (hi, lo) = (self.expr(hi, env)?, self.expr(lo, env)?);
                let (hi, lo) = (self.place(&hi)?, self.place(&lo)?);
                if hi < lo {
                    return fail("a slice whose high bit is below its low bit");
                }
                let piece = self.bits(&v, Some(hi - lo + 1))?;
                let cur = match env.vals.get(n) {
                    Some(c) => self.bits(c, env.widths.get(n).copied())?,
                    None => return fail(format!("`{n}` written before it is declared")),
                };
                env.vals.insert(n.clone(), Val::Bits(cur.write(lo, piece)));
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
            cur.write(64, b.sub(0, 64)).sub(0, VREG_BITS)
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
        // Leaving early from one arm only (a `return`, a `throw`) is control flow on data,
        // which a lane-wise merge cannot say.
        let arm = |this: &mut Self, e: &Ex, env: &mut Env| match this.expr(e, env) {
            Err(Stop::Return(_) | Stop::Throw(_)) => {
                fail("returns or throws under a condition on data")
            }
            r => r,
        };
        let regs = self.regs.clone();
        let mut then_env = env.clone();
        let va = arm(self, a, &mut then_env)?;
        let regs_a = std::mem::replace(&mut self.regs, regs.clone());
        let mut else_env = env.clone();
        let vb = match b {
            Some(b) => arm(self, b, &mut else_env)?,
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
                let total: u64 = fields.iter().map(|f| u64::from(f.0)).sum();
                if total > 127 {
                    return fail("a pattern wider than 127 bits");
                }
                let mut at = total as u32;
                fields.iter().all(|(w, f)| {
                    at -= w;
                    f.is_none_or(|f| (x >> at) & ((1u128 << w) - 1) == f)
                })
            }
        })
    }

    fn slice(&self, x: &Val, lo: i128, len: i128) -> R<Val> {
        if !(0..=MAX_PLACE).contains(&lo) || !(1..=MAX_PLACE).contains(&len) {
            return fail("a slice of a position or length out of range");
        }
        Ok(match x {
            Val::Bits(b) => Val::Bits(b.sub(lo as u32, len as u32)),
            Val::Int(i) => Val::Bits(word(i >> lo.min(127), len as u32)),
            Val::Num(e) => {
                Val::Bits(seg(Src::Num(e.clone()), (lo + len) as u32).sub(lo as u32, len as u32))
            }
            v => return fail(format!("a slice of {v:?}")),
        })
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
}

fn mask(w: u32) -> i128 {
    if w >= 127 { -1 } else { (1i128 << w) - 1 }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::import::lanes::{self, Operand};
    use crate::types::Type;

    /// A two-instruction model: a saturating add of bytes (signed or not by bit 1 of the
    /// encoding) and a compare whose lanes are all ones or all zeros.
    const MODEL: &str = "\
function op_sat (d, n, m, esize, elements, unsigned) = {
    let operand1 : bits(64) = V(n);
    let operand2 : bits(64) = V(m);
    result : bits(64) = undefined : bits(64);
    sat : bool = undefined : bool;
    foreach (e from 0 to (elements - 1) by 1 in inc) {
        let x = asl_Int(aget_Elem(operand1, e, esize), unsigned) + asl_Int(aget_Elem(operand2, e, esize), unsigned);
        __tc1 : bits('esize) = undefined : bits('esize);
        (__tc1, sat) = SatQ(x, esize, unsigned);
        result = aset_Elem(result, e, esize, __tc1);
        if sat then {
            FPSR = 0b1
        }
    };
    V(d) = result
}

function op_cmp (d, n, esize) = {
    let operand : bits(64) = V(n);
    result : bits(64) = undefined : bits(64);
    foreach (e from 0 to 7 by 1 in inc) {
        let t = SInt(aget_Elem(operand, e, esize)) > 0;
        result = aset_Elem(result, e, esize, if t then Ones() else Zeros())
    };
    V(d) = result
}

function clause decode64 ((0b0000 @ _ : bits(27) @ 0b0 as op_code) if SEE < 1) = {
    U : bits(1) = op_code[1 .. 1];
    op_sat(0, 1, 2, 8, 8, U == 0b1)
}

function clause decode64 ((0b0000 @ _ : bits(27) @ 0b1 as op_code) if SEE < 2) = {
    op_cmp(0, 1, 8)
}
";

    /// The semantics of `word` over operands `a` and `b` (bytes of `elem`) in V1 and V2.
    fn semantics(word: u32, elem: Elem, result: Type) -> Result<String, String> {
        let mut model = Model::default();
        super::super::sail::read_into(&mut model, MODEL);
        assert!(model.unread.is_empty(), "{:?}", model.unread);
        let mut ev = Eval::new(&model, vec![elem, elem], 8);
        for (k, reg) in [(0, 1), (1, 2)] {
            let mut b = seg(Src::Reg(k), 64);
            b.0.push(Seg {
                src: Src::Undef,
                lo: 0,
                len: 64,
            });
            ev.regs.insert(reg, b);
        }
        ev.execute(word)?;
        let dst = ev.regs[&0].clone();
        let lanes = (0..8)
            .map(|k| ev.bits_num(&dst.sub(k * 8, 8), Some(result.elem.is_signed())))
            .collect::<Result<Vec<_>, _>>()?;
        let ops: Vec<Operand> = ["a", "b"]
            .iter()
            .map(|n| Operand {
                name: n.to_string(),
                ty: Type::vec(elem, 8),
            })
            .collect();
        Ok(lanes::vectorize(&lanes, &ops, None, result)?.to_string())
    }

    #[test]
    fn decodes_by_the_encoding_and_evaluates_lane_by_lane() {
        let u8x8 = Type::vec(Elem::U8, 8);
        let i8x8 = Type::vec(Elem::I8, 8);
        // Bit 1 set: unsigned; clear: signed. The saturation flag is not part of the result.
        let unsigned = semantics(0b10, Elem::U8, u8x8).unwrap();
        assert!(
            unsigned.contains("saturating_cast") && unsigned.contains("uint16"),
            "{unsigned}"
        );
        let signed = semantics(0b00, Elem::I8, i8x8).unwrap();
        assert!(
            signed.contains("saturating_cast") && signed.contains("int16x8(a)"),
            "{signed}"
        );
        assert_ne!(signed, unsigned);
        // A condition on data selects all ones or all zeros per lane.
        let cmp = semantics(0b1, Elem::I8, u8x8).unwrap();
        assert!(cmp.contains("select") && cmp.contains("255"), "{cmp}");
    }

    #[test]
    fn hostile_models_are_refused_not_panicked_on() {
        let bodies = [
            "V() = 0x00",
            "result : bits(64) = Zeros(64); result = aset_Elem(result, negate(1), 8, 0x00); V(0) = result",
            "result : bits(64) = Zeros(64); result[0 .. 7] = 0x00; V(0) = result",
            "V(0) = X(negate(1))",
            "V(0) = replicate_bits(0b1, 4294967295)",
            "let y = UInt(); V(0) = 0x00",
            "let y = abs(negate(2 ^ 126) - 2 ^ 126); V(0) = 0x00",
            "if SInt(aget_Elem(V(1), 0, 8)) > 0 then { return(0x00) }; V(0) = 0x00",
            "match 0x000000000000000000000000000000000 { _ => V(0) = 0x00 }",
        ];
        for body in bodies {
            let text = format!(
                "function f (d) = {{ {body} }}\n\
                 function clause decode64 ((_ : bits(32) as op_code) if SEE < 1) = {{ f(0) }}\n"
            );
            let mut model = Model::default();
            super::super::sail::read_into(&mut model, &text);
            let mut ev = Eval::new(&model, vec![Elem::U8], 8);
            ev.regs.insert(1, seg(Src::Reg(0), 128));
            // Either the reader refuses the item or evaluation fails with a message.
            assert!(ev.execute(0).is_err(), "{body}");
        }
        // Bits far above a number are its sign, not a shift by 200 of an `i128`.
        let text = "function f (d) = { let x : bits(8) = __GetSlice_int(8, 5, 200); V(0) = x }\n\
                    function clause decode64 ((_ : bits(32) as op_code) if SEE < 1) = { f(0) }\n";
        let mut model = Model::default();
        super::super::sail::read_into(&mut model, text);
        let mut ev = Eval::new(&model, vec![], 8);
        ev.execute(0).unwrap();
        assert_eq!(const_bits(&ev.regs[&0].sub(0, 8)), Some(0));
    }

    #[test]
    fn an_encoding_no_clause_decodes_is_an_error() {
        let e = semantics(0xf000_0000, Elem::U8, Type::vec(Elem::U8, 8)).unwrap_err();
        assert!(e.contains("no decode64 clause"), "{e}");
    }
}
