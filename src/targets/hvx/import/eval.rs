//! Symbolic evaluation of QEMU's HVX semantics (the C of [`super::c`]) into one exact lane
//! expression per result lane.
//!
//! Loop counters and other values that do not depend on the operands are computed; values
//! that do are [`LaneExpr`]s. C's own typing is followed exactly (integer promotion, the usual
//! arithmetic conversions, wrapping at the type's width), so what QEMU computes is what the
//! lanes say. Registers are stored byte-addressed: QEMU reads and writes one register through
//! several views (`VdV.h[i]` written a byte at a time, `VuV.uw[i]` read a half word at a
//! time), and a read is composed from whatever was written under it. Bit extractions of an
//! operand's lanes (`(VuV.w[i] >> 16) & 0xffff`) are recognized as reads of narrower lanes,
//! so that the vectorizer sees which lanes an instruction moves.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use super::c::{BinaryOp, CExpr, CStmt, CType, DeclType, UnaryOp, c_range};
use crate::isa::import::lanes::{BinOp, LaneExpr};
use crate::types::Elem;

/// Statements evaluated per instruction before giving up (a loop over 128 bytes with a
/// dozen statements takes a few thousand).
const MAX_STEPS: usize = 200_000;

/// A value range.
type Range = Option<(i128, i128)>;

/// A value: its expression, its C type and the range it takes.
#[derive(Clone, Debug)]
struct Int {
    e: Rc<LaneExpr>,
    t: CType,
    r: Range,
}

impl Int {
    fn konst(&self) -> Option<i128> {
        match *self.e {
            LaneExpr::Const(c) => Some(c),
            _ => None,
        }
    }
}

/// A register operand or result as the semantics name it (`VuV`, `VddV`, `RtV`).
#[derive(Clone, Debug)]
pub struct RegDecl {
    /// Its name in the semantics.
    pub name: String,
    /// Bytes: 128 (a vector), 256 (a pair) or 4 (a scalar).
    pub bytes: u32,
    /// The operand index it reads from, if it is an input.
    pub operand: Option<usize>,
    /// What it holds before the semantics run, where another instruction computed it:
    /// pieces as (byte offset, bits, signed, value).
    pub preset: Vec<(u32, u32, bool, Rc<LaneExpr>)>,
}

/// A piece of a register written by the semantics.
#[derive(Clone, Debug)]
struct Piece {
    bits: u32,
    signed: bool,
    value: Rc<LaneExpr>,
    r: Range,
}

impl Piece {
    /// The piece as a value of its own type.
    fn int(&self) -> Int {
        Int {
            e: self.value.clone(),
            t: CType {
                bits: self.bits,
                signed: self.signed,
            },
            r: self.r,
        }
    }
}

#[derive(Clone, Debug)]
struct Reg {
    bytes: u32,
    operand: Option<usize>,
    pieces: BTreeMap<u32, Piece>,
}

/// A value or a place in a register.
#[derive(Clone, Debug)]
enum Val {
    Int(Int),
    /// A whole register, or a part of it (`VddV.v[1]`): register, byte offset, bytes.
    Part(usize, u32, u32),
    /// `VddV.v`: the halves of a pair.
    Halves(usize),
    /// `VuV.h`: a lane view of a register part.
    View {
        reg: usize,
        off: u32,
        bytes: u32,
        bits: u32,
        signed: bool,
    },
    /// One lane: register, byte offset, width and signedness.
    Lane {
        reg: usize,
        off: u32,
        bits: u32,
        signed: bool,
    },
}

/// What evaluation has computed so far: locals by scope (innermost last) and registers.
#[derive(Clone, Debug)]
struct State {
    scopes: Vec<HashMap<Rc<str>, Int>>,
    regs: Vec<Reg>,
    /// Counts assignments, so that an expression whose value is used on some lanes only
    /// (an arm of `?:` on data, the right of `&&`) can be refused if it assigns.
    writes: u64,
}

impl State {
    fn local(&self, n: &str) -> Option<&Int> {
        self.scopes.iter().rev().find_map(|s| s.get(n))
    }

    /// Assigns an existing local in the innermost scope that declares it.
    fn set_local(&mut self, n: &Rc<str>, v: Int) {
        self.writes += 1;
        if let Some(s) = self.scopes.iter_mut().rev().find(|s| s.contains_key(n)) {
            s.insert(n.clone(), v);
        }
    }

    fn declare(&mut self, n: &Rc<str>, v: Int) {
        self.writes += 1;
        if let Some(s) = self.scopes.last_mut() {
            s.insert(n.clone(), v);
        }
    }
}

/// The evaluator of one instruction's semantics.
pub struct Eval {
    names: HashMap<String, usize>,
    state: State,
    steps: usize,
}

fn elem(bits: u32, signed: bool) -> Elem {
    Elem::from_bits(bits, signed).unwrap_or(Elem::U8)
}

fn fits(r: Range, t: (i128, i128)) -> bool {
    r.is_some_and(|(lo, hi)| t.0 <= lo && hi <= t.1)
}

fn konst(c: i128) -> Int {
    Int {
        e: Rc::new(LaneExpr::Const(c)),
        t: CType::INT,
        r: Some((c, c)),
    }
}

/// The bits `[lo, lo + w)` of `x` in two's complement, as a value in `[0, 2^w)`.
fn bits_of(x: i128, lo: u32, w: u32) -> i128 {
    (x >> lo.min(127)) & ((1i128 << w) - 1)
}

/// `e` reduced into `t`'s range, or `e` itself where its range already fits.
fn wrap(t: CType, v: &Int) -> Int {
    if fits(v.r, c_range(t)) {
        return Int { t, ..v.clone() };
    }
    // Reducing into a wider type first changes nothing the narrower reduction keeps.
    if let LaneExpr::Wrap(f, inner) = &*v.e
        && f.bits() >= t.bits
    {
        let inner = Int {
            e: inner.clone(),
            t: v.t,
            r: quick_range(inner, 8),
        };
        return wrap(t, &inner);
    }
    if let Some(c) = v.konst() {
        let (lo, _) = c_range(t);
        let m = bits_of(c, 0, t.bits);
        let c = if t.signed && m >= -lo {
            m - (1i128 << t.bits)
        } else {
            m
        };
        return Int {
            e: Rc::new(LaneExpr::Const(c)),
            t,
            r: Some((c, c)),
        };
    }
    Int {
        e: Rc::new(LaneExpr::Wrap(elem(t.bits, t.signed), v.e.clone())),
        t,
        r: Some(c_range(t)),
    }
}

/// The range of the bitwise result of values in `a` and `b`: within the smallest power of
/// two (signed) holding both.
fn bitwise_range(a: Range, b: Range) -> Range {
    let (a, b) = (a?, b?);
    let m = [a.0, a.1, b.0, b.1]
        .iter()
        .map(|v| if *v < 0 { !*v } else { *v })
        .max()
        .unwrap_or(0);
    let k = 128 - m.leading_zeros();
    if k >= 126 {
        return None;
    }
    if a.0 >= 0 && b.0 >= 0 {
        Some((0, (1i128 << k) - 1))
    } else {
        Some((-(1i128 << k), (1i128 << k) - 1))
    }
}

/// A range holding every value of `e`, looked for `depth` levels down (a full
/// [`LaneExpr::range`] walks the whole expression, and extractions ask at every level).
fn quick_range(e: &LaneExpr, depth: u32) -> Range {
    use LaneExpr as L;
    let elem_range = |t: Elem| {
        let (lo, hi) = c_range(CType {
            bits: t.bits(),
            signed: t.is_signed(),
        });
        Some((lo, hi))
    };
    match e {
        L::Input { elem, .. } => elem_range(*elem),
        L::Const(c) | L::Imm(c) => Some((*c, *c)),
        L::Wrap(t, _) | L::Saturate(t, _) | L::Not(t, _) => elem_range(*t),
        L::Count(_, t, _) => Some((0, i128::from(t.bits()))),
        _ if depth == 0 => None,
        L::Bin(op, a, b) => range_of(*op, quick_range(a, depth - 1), quick_range(b, depth - 1)),
        L::Neg(a) => quick_range(a, depth - 1).map(|(lo, hi)| (-hi, -lo)),
        L::Abs(a) => quick_range(a, depth - 1).map(|(lo, hi)| {
            if lo >= 0 {
                (lo, hi)
            } else {
                (0, lo.abs().max(hi.abs()))
            }
        }),
        L::Select(_, a, b) => {
            let (p, q) = (quick_range(a, depth - 1)?, quick_range(b, depth - 1)?);
            Some((p.0.min(q.0), p.1.max(q.1)))
        }
    }
}

/// The range of `op` applied to values in `a` and `b` (`b` constant `bc` for shifts).
fn range_of(op: BinOp, a: Range, b: Range) -> Range {
    use BinOp::*;
    let (al, ah) = a?;
    let (bl, bh) = b?;
    let lim = |x: i128| x.abs() < (1i128 << 120);
    let r = match op {
        Add => (al.checked_add(bl)?, ah.checked_add(bh)?),
        Sub => (al.checked_sub(bh)?, ah.checked_sub(bl)?),
        Mul => {
            let ps = [
                al.checked_mul(bl)?,
                al.checked_mul(bh)?,
                ah.checked_mul(bl)?,
                ah.checked_mul(bh)?,
            ];
            (*ps.iter().min()?, *ps.iter().max()?)
        }
        And => {
            if bl >= 0 && al >= 0 {
                (0, ah.min(bh))
            } else if bl >= 0 {
                (0, bh)
            } else if al >= 0 {
                (0, ah)
            } else {
                bitwise_range(a, b)?
            }
        }
        Or | Xor => bitwise_range(a, b)?,
        Shl => {
            if bl < 0 || bh > 100 {
                return None;
            }
            let f = |x: i128, s: i128| x.checked_mul(1i128 << s);
            let ps = [f(al, bl)?, f(al, bh)?, f(ah, bl)?, f(ah, bh)?];
            (*ps.iter().min()?, *ps.iter().max()?)
        }
        Shr => {
            if bl < 0 {
                return None;
            }
            let f = |x: i128, s: i128| x >> s.min(127);
            (f(al, bl).min(f(al, bh)), f(ah, bl).max(f(ah, bh)))
        }
        Min => (al.min(bl), ah.min(bh)),
        Max => (al.max(bl), ah.max(bh)),
        Eq | Ne | Lt | Le | Gt | Ge => (0, 1),
    };
    (lim(r.0) && lim(r.1)).then_some(r)
}

fn fold(op: BinOp, a: i128, b: i128) -> Option<i128> {
    use BinOp::*;
    Some(match op {
        Add => a.checked_add(b)?,
        Sub => a.checked_sub(b)?,
        Mul => a.checked_mul(b)?,
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        Shl => {
            if !(0..100).contains(&b) {
                return None;
            }
            a.checked_mul(1i128 << b)?
        }
        Shr => {
            if b < 0 {
                return None;
            }
            a >> b.min(127)
        }
        Min => a.min(b),
        Max => a.max(b),
        Eq => (a == b) as i128,
        Ne => (a != b) as i128,
        Lt => (a < b) as i128,
        Le => (a <= b) as i128,
        Gt => (a > b) as i128,
        Ge => (a >= b) as i128,
    })
}

/// Exact `op` of two values, folded and simplified where one side is a neutral constant.
fn bin(op: BinOp, a: &Int, b: &Int, t: CType) -> Int {
    use BinOp::*;
    if let (Some(x), Some(y)) = (a.konst(), b.konst())
        && let Some(v) = fold(op, x, y)
    {
        return Int {
            e: Rc::new(LaneExpr::Const(v)),
            t,
            r: Some((v, v)),
        };
    }
    let same = |v: &Int| Int { t, ..v.clone() };
    match (op, a.konst(), b.konst()) {
        (Add | Or | Xor, Some(0), _) => return same(b),
        (Add | Sub | Or | Xor | Shl | Shr, _, Some(0)) => return same(a),
        (Mul, Some(1), _) => return same(b),
        (Mul, _, Some(1)) => return same(a),
        (And | Mul, Some(0), _) | (And | Mul, _, Some(0)) => return konst(0).with_type(t),
        _ => {}
    }
    // The low bits of a value (`x & 0xffff`, `1 & (w >> k)`): an operand's lane of that
    // width, or a bit some earlier write put there, where it is one.
    if op == And {
        let (x, m) = match (a.konst(), b.konst()) {
            (_, Some(m)) => (a, m),
            (Some(m), _) => (b, m),
            _ => (a, -1),
        };
        if m > 0 && (m + 1).count_ones() == 1 && m < (1i128 << 64) {
            let k = (m + 1).trailing_zeros();
            return extract(x, 0, k).with_type(t);
        }
    }
    // An operand's lane shifted right by a multiple of a narrower lane: that narrower lane
    // (sign-extended as the operand's lanes are).
    if op == Shr
        && let Some(c) = b.konst()
        && let LaneExpr::Input {
            operand,
            lane,
            elem: ie,
        } = *a.e
        && (1..ie.bits() as i128).contains(&c)
    {
        let w = ie.bits() - c as u32;
        if matches!(w, 8 | 16 | 32) && (c as u32).is_multiple_of(w) {
            let e = elem(w, ie.is_signed());
            let (lo, hi) = c_range(CType {
                bits: w,
                signed: ie.is_signed(),
            });
            return Int {
                e: Rc::new(LaneExpr::Input {
                    operand,
                    lane: lane * (ie.bits() / w) + c as u32 / w,
                    elem: e,
                }),
                t,
                r: Some((lo, hi)),
            };
        }
    }
    // `x & m` where `m` keeps every bit `x` can have is `x`.
    // (A mask that clears a bit above them, as QEMU's bit setters do, included.)
    if op == And
        && let Some(m) = b.konst()
        && let Some((lo, hi)) = a.r
        && lo >= 0
        && hi < (1i128 << 100)
    {
        let k = 128 - hi.leading_zeros();
        if k == 0 || bits_of(m, 0, k) == (1i128 << k) - 1 {
            return same(a);
        }
    }
    let r = range_of(op, a.r, b.r);
    // A value that can take one value only is that constant (`x >> 8` of a byte).
    if let Some((lo, hi)) = r
        && lo == hi
    {
        return konst(lo).with_type(t);
    }
    Int {
        e: Rc::new(LaneExpr::Bin(op, a.e.clone(), b.e.clone())),
        t,
        r,
    }
}

impl Int {
    fn with_type(mut self, t: CType) -> Int {
        self.t = t;
        self
    }
}

/// The unsigned value of bits `[lo, lo + w)` of `v` (as two's complement), with the
/// extractions that name narrower lanes of an operand recognized.
fn extract(v: &Int, lo: u32, w: u32) -> Int {
    extract_in(v, lo, w, 0, &std::cell::Cell::new(EXTRACT_BUDGET))
}

/// Nodes one extraction may visit, and how deep: past them it stops simplifying (the value
/// stays exact). QEMU's deepest chains (32 predicate bits set one at a time, read back a
/// byte at a time) go about 150 deep; a hostile chain could take exponentially many nodes.
const EXTRACT_BUDGET: u32 = 1 << 16;
const EXTRACT_DEPTH: u32 = 256;

fn extract_in(v: &Int, lo: u32, w: u32, depth: u32, budget: &std::cell::Cell<u32>) -> Int {
    let t = CType {
        bits: w.clamp(8, 64).next_power_of_two(),
        signed: false,
    };
    let mask = (1i128 << w) - 1;
    let done = |e: LaneExpr| {
        let r = match e {
            LaneExpr::Const(c) => Some((c, c)),
            _ => Some((0, mask)),
        };
        Int {
            e: Rc::new(e),
            t,
            r,
        }
    };
    if let Some(c) = v.konst() {
        return done(LaneExpr::Const(bits_of(c, lo, w)));
    }
    if lo == 0 && fits(v.r, (0, mask)) {
        return Int { t, ..v.clone() };
    }
    // Bits above every value `v` takes are zero.
    if lo < 120 && fits(v.r, (0, (1i128 << lo) - 1)) {
        return done(LaneExpr::Const(0));
    }
    let sub = |x: &Rc<LaneExpr>, lo: u32| {
        let r = quick_range(x, 8);
        extract_in(&Int { e: x.clone(), t, r }, lo, w, depth + 1, budget)
    };
    let spent = budget.get() == 0 || depth > EXTRACT_DEPTH;
    budget.set(budget.get().saturating_sub(1));
    match &*v.e {
        _ if spent => {}
        LaneExpr::Input {
            operand,
            lane,
            elem: ie,
        } if lo + w <= ie.bits()
            && ie.bits().is_multiple_of(w)
            && lo.is_multiple_of(w)
            && matches!(w, 8 | 16 | 32) =>
        {
            return done(LaneExpr::Input {
                operand: *operand,
                lane: lane * (ie.bits() / w) + lo / w,
                elem: elem(w, false),
            });
        }
        LaneExpr::Wrap(e, x) if lo + w <= e.bits() => return sub(x, lo),
        LaneExpr::Bin(BinOp::And, x, m) | LaneExpr::Bin(BinOp::And, m, x)
            if matches!(**m, LaneExpr::Const(_)) =>
        {
            let LaneExpr::Const(m) = **m else {
                unreachable!()
            };
            let mm = bits_of(m, lo, w);
            if mm == mask {
                return sub(x, lo);
            }
            if mm == 0 {
                return done(LaneExpr::Const(0));
            }
            let inner = sub(x, lo);
            return bin(BinOp::And, &inner, &konst(mm), t);
        }
        LaneExpr::Bin(op @ (BinOp::And | BinOp::Or | BinOp::Xor), a, b) => {
            let (a, b) = (sub(a, lo), sub(b, lo));
            return bin(*op, &a, &b, t);
        }
        LaneExpr::Bin(BinOp::Shl, x, s) if matches!(**s, LaneExpr::Const(_)) => {
            let LaneExpr::Const(s) = **s else {
                unreachable!()
            };
            if (0..128).contains(&s) {
                let s = s as u32;
                if lo + w <= s {
                    return done(LaneExpr::Const(0));
                }
                if lo >= s {
                    return sub(x, lo - s);
                }
            }
        }
        LaneExpr::Bin(BinOp::Shr, x, s) if matches!(**s, LaneExpr::Const(_)) => {
            let LaneExpr::Const(s) = **s else {
                unreachable!()
            };
            if (0..64).contains(&s) {
                return sub(x, lo + s as u32);
            }
        }
        LaneExpr::Select(c, a, b) => {
            let (a, b) = (sub(a, lo), sub(b, lo));
            if let (Some(x), Some(y)) = (a.konst(), b.konst())
                && x == y
            {
                return done(LaneExpr::Const(x));
            }
            return Int {
                e: select(c, &a.e, &b.e),
                t,
                r: Some((0, mask)),
            };
        }
        _ => {}
    }
    let shifted = if lo == 0 {
        v.clone()
    } else {
        bin(BinOp::Shr, v, &konst(lo as i128), v.t)
    };
    if fits(shifted.r, (0, mask)) {
        return Int { t, ..shifted };
    }
    if matches!(w, 8 | 16 | 32 | 64) {
        return Int {
            e: Rc::new(LaneExpr::Wrap(elem(w, false), shifted.e)),
            t,
            r: Some((0, mask)),
        };
    }
    // Built directly: `bin` would send a mask back here.
    Int {
        e: Rc::new(LaneExpr::Bin(
            BinOp::And,
            shifted.e,
            Rc::new(LaneExpr::Const(mask)),
        )),
        t,
        r: Some((0, mask)),
    }
}

/// `v`'s bits read as a `bits`-wide value of the given signedness.
fn reinterpret(v: &Int, bits: u32, signed: bool) -> Int {
    let t = CType { bits, signed };
    let u = extract(v, 0, bits);
    wrap(t, &u)
}

fn promote(v: &Int) -> Int {
    if v.t.bits < 32 {
        wrap(CType::INT, v)
    } else {
        v.clone()
    }
}

/// C's usual arithmetic conversions of two promoted types.
fn common(a: CType, b: CType) -> CType {
    if a == b {
        return a;
    }
    if a.signed == b.signed {
        return if a.bits >= b.bits { a } else { b };
    }
    let (s, u) = if a.signed { (a, b) } else { (b, a) };
    if u.bits >= s.bits { u } else { s }
}

fn field(name: &str) -> Option<(u32, bool)> {
    Some(match name {
        "b" => (8, true),
        "ub" => (8, false),
        "h" => (16, true),
        "uh" => (16, false),
        "w" => (32, true),
        "uw" => (32, false),
        "d" => (64, true),
        "ud" => (64, false),
        _ => return None,
    })
}

impl Eval {
    /// An evaluator over these registers (operands and results).
    pub fn new(regs: &[RegDecl]) -> Eval {
        let mut names = HashMap::new();
        let mut rs = Vec::new();
        for (k, r) in regs.iter().enumerate() {
            names.insert(r.name.clone(), k);
            let pieces = r
                .preset
                .iter()
                .map(|(off, bits, signed, value)| {
                    let piece = Piece {
                        bits: *bits,
                        signed: *signed,
                        value: value.clone(),
                        r: quick_range(value, 8),
                    };
                    (*off, piece)
                })
                .collect();
            rs.push(Reg {
                bytes: r.bytes,
                operand: r.operand,
                pieces,
            });
        }
        Eval {
            names,
            state: State {
                scopes: vec![HashMap::new()],
                regs: rs,
                writes: 0,
            },
            steps: 0,
        }
    }

    /// Runs `body`.
    pub fn run(&mut self, body: &CStmt) -> Result<(), String> {
        self.stmt(body)
    }

    /// Lane `lane` of register `name` read as `elem`, after the semantics ran.
    pub fn lane(&self, name: &str, lane: u32, e: Elem) -> Result<Rc<LaneExpr>, String> {
        let reg = *self
            .names
            .get(name)
            .ok_or_else(|| format!("no register {name}"))?;
        let bytes = e.bits() / 8;
        Ok(self.read(reg, lane * bytes, e.bits(), e.is_signed())?.e)
    }

    /// Whether the semantics wrote register `name`.
    pub fn written(&self, name: &str) -> bool {
        self.names
            .get(name)
            .is_some_and(|r| !self.state.regs[*r].pieces.is_empty())
    }

    fn tick(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(format!("more than {MAX_STEPS} evaluation steps"));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &CStmt) -> Result<(), String> {
        self.tick()?;
        match s {
            CStmt::Empty => Ok(()),
            CStmt::Expr(e) => self.expr(e).map(|_| ()),
            CStmt::Block(b) => {
                self.state.scopes.push(HashMap::new());
                let r = b.iter().try_for_each(|s| self.stmt(s));
                self.state.scopes.pop();
                r
            }
            CStmt::Decl(t, names) => {
                let DeclType::Int(t) = t else {
                    return Err("a vector temporary".into());
                };
                for (n, init) in names {
                    let v = match init {
                        Some(e) => {
                            let v = self.int(e)?;
                            wrap(*t, &v)
                        }
                        None => konst(0).with_type(*t),
                    };
                    self.state.declare(n, v);
                }
                Ok(())
            }
            CStmt::If(c, a, b) => {
                let c = self.int(c)?;
                match c.konst() {
                    Some(0) => b.as_ref().map_or(Ok(()), |b| self.stmt(b)),
                    Some(_) => self.stmt(a),
                    None => self.branch(&c, a, b.as_deref()),
                }
            }
            CStmt::For(init, cond, step, body) => {
                // A counter declared in the loop's head is the loop's own.
                self.state.scopes.push(HashMap::new());
                let r = self.for_loop(init.as_deref(), cond.as_ref(), step.as_ref(), body);
                self.state.scopes.pop();
                r
            }
            CStmt::While(c, body) => {
                while self.concrete(c, "a loop condition")? != 0 {
                    self.tick()?;
                    self.stmt(body)?;
                }
                Ok(())
            }
            CStmt::DoWhile(body, c) => loop {
                self.tick()?;
                self.stmt(body)?;
                if self.concrete(c, "a loop condition")? == 0 {
                    return Ok(());
                }
            },
        }
    }

    fn for_loop(
        &mut self,
        init: Option<&CStmt>,
        cond: Option<&CExpr>,
        step: Option<&CExpr>,
        body: &CStmt,
    ) -> Result<(), String> {
        {
            if let Some(i) = init {
                self.stmt(i)?;
            }
            loop {
                self.tick()?;
                if let Some(c) = cond
                    && self.concrete(c, "a loop condition")? == 0
                {
                    break;
                }
                self.stmt(body)?;
                if let Some(s) = step {
                    self.expr(s)?;
                }
            }
            Ok(())
        }
    }

    /// Both branches of an `if` on data, merged lane by lane.
    fn branch(&mut self, c: &Int, a: &CStmt, b: Option<&CStmt>) -> Result<(), String> {
        let before = self.state.clone();
        self.stmt(a)?;
        let then = std::mem::replace(&mut self.state, before);
        if let Some(b) = b {
            self.stmt(b)?;
        }
        let els = std::mem::replace(&mut self.state, then.clone());
        let pick = |x: &Int, y: &Int| -> Int {
            if Rc::ptr_eq(&x.e, &y.e) {
                return x.clone();
            }
            let r = match (x.r, y.r) {
                (Some(p), Some(q)) => Some((p.0.min(q.0), p.1.max(q.1))),
                _ => None,
            };
            Int {
                e: select(&c.e, &x.e, &y.e),
                t: x.t,
                r,
            }
        };
        for (depth, scope) in then.scopes.iter().enumerate() {
            for (k, v) in scope {
                if let Some(w) = els.scopes.get(depth).and_then(|s| s.get(k)) {
                    let m = pick(v, w);
                    if let Some(s) = self.state.scopes.get_mut(depth) {
                        s.insert(k.clone(), m);
                    }
                }
            }
        }
        for (r, (x, y)) in then.regs.iter().zip(&els.regs).enumerate() {
            let offs: std::collections::BTreeSet<u32> =
                x.pieces.keys().chain(y.pieces.keys()).copied().collect();
            // Where the two sides cut the register differently, merge it byte by byte (a
            // piece-by-piece merge would leave pieces overlapping).
            let mut end = 0;
            let mut aligned = true;
            for off in &offs {
                let bits = |p: Option<&Piece>| p.map(|p| p.bits);
                let (bx, by) = (bits(x.pieces.get(off)), bits(y.pieces.get(off)));
                let b = bx.or(by).unwrap_or(8);
                if *off < end || (bx.is_some() && by.is_some() && bx != by) {
                    aligned = false;
                    break;
                }
                end = off + b / 8;
            }
            if !aligned {
                let mut bytes = std::collections::BTreeSet::new();
                for p in [x, y] {
                    for (o, piece) in &p.pieces {
                        bytes.extend(*o..o + piece.bits / 8);
                    }
                }
                let mut merged = BTreeMap::new();
                for b in bytes {
                    let v = pick(
                        &read_in(&then, r, b, 8, false)?,
                        &read_in(&els, r, b, 8, false)?,
                    );
                    let piece = Piece {
                        bits: 8,
                        signed: false,
                        value: v.e,
                        r: v.r,
                    };
                    merged.insert(b, piece);
                }
                self.state.regs[r].pieces = merged;
                continue;
            }
            for off in offs {
                let (p, q) = (x.pieces.get(&off), y.pieces.get(&off));
                let layout = |p: Option<&Piece>| p.map(|p| (p.bits, p.signed));
                let (bits, signed) = layout(p)
                    .or(layout(q))
                    .ok_or("a register written differently on two branches")?;
                if layout(p).is_some_and(|l| l != (bits, signed))
                    || layout(q).is_some_and(|l| l != (bits, signed))
                {
                    return Err("a register written differently on two branches".into());
                }
                let get = |st: &State, p: Option<&Piece>| -> Result<Int, String> {
                    match p {
                        Some(p) => Ok(Int {
                            e: p.value.clone(),
                            t: CType { bits, signed },
                            r: p.r,
                        }),
                        None => read_in(st, r, off, bits, signed),
                    }
                };
                let v = pick(&get(&then, p)?, &get(&els, q)?);
                self.state.regs[r].pieces.insert(
                    off,
                    Piece {
                        bits,
                        signed,
                        value: v.e,
                        r: v.r,
                    },
                );
            }
        }
        Ok(())
    }

    fn concrete(&mut self, e: &CExpr, what: &str) -> Result<i128, String> {
        self.int(e)?
            .konst()
            .ok_or_else(|| format!("{what} that depends on the operands"))
    }

    fn int(&mut self, e: &CExpr) -> Result<Int, String> {
        match self.expr(e)? {
            Val::Int(v) => Ok(v),
            Val::Lane {
                reg,
                off,
                bits,
                signed,
            } => self.read(reg, off, bits, signed),
            _ => Err("a whole register used as a number".into()),
        }
    }

    fn read(&self, reg: usize, off: u32, bits: u32, signed: bool) -> Result<Int, String> {
        read_in(&self.state, reg, off, bits, signed)
    }

    fn write(&mut self, reg: usize, off: u32, bits: u32, signed: bool, v: &Int) -> Int {
        self.state.writes += 1;
        let v = wrap(CType { bits, signed }, v);
        let bytes = bits / 8;
        let r = &mut self.state.regs[reg];
        // Pieces the write overlaps partly are split into bytes; those it covers go.
        let over: Vec<u32> = r
            .pieces
            .range(..off + bytes)
            .filter(|(o, p)| **o + p.bits / 8 > off)
            .map(|(o, _)| *o)
            .collect();
        for o in over {
            let Some(p) = r.pieces.remove(&o) else {
                continue;
            };
            let whole = p.int();
            for k in 0..p.bits / 8 {
                let at = o + k;
                if at >= off && at < off + bytes {
                    continue;
                }
                let b = extract(&whole, 8 * k, 8);
                r.pieces.insert(
                    at,
                    Piece {
                        bits: 8,
                        signed: false,
                        value: b.e,
                        r: b.r,
                    },
                );
            }
        }
        r.pieces.insert(
            off,
            Piece {
                bits,
                signed,
                value: v.e.clone(),
                r: v.r,
            },
        );
        v
    }

    fn assign(&mut self, place: &Val, v: &Int) -> Result<Int, String> {
        match place {
            Val::Lane {
                reg,
                off,
                bits,
                signed,
            } => Ok(self.write(*reg, *off, *bits, *signed, v)),
            _ => Err("an assignment to something not a lane or a local".into()),
        }
    }

    fn place(&mut self, e: &CExpr) -> Result<Place, String> {
        if let CExpr::Ident(n) = e
            && let Some(v) = self.state.local(n)
        {
            return Ok(Place::Local(n.clone(), v.t));
        }
        match self.expr(e)? {
            l @ Val::Lane { .. } => Ok(Place::Lane(l)),
            _ => Err("an assignment to something not a lane or a local".into()),
        }
    }

    fn get(&mut self, p: &Place) -> Result<Int, String> {
        match p {
            Place::Local(n, _) => self
                .state
                .local(n)
                .cloned()
                .ok_or_else(|| format!("`{n}` out of scope")),
            Place::Lane(l) => match l {
                Val::Lane {
                    reg,
                    off,
                    bits,
                    signed,
                } => self.read(*reg, *off, *bits, *signed),
                _ => Err("not a lane".into()),
            },
        }
    }

    fn set(&mut self, p: &Place, v: &Int) -> Result<Int, String> {
        match p {
            Place::Local(n, t) => {
                let v = wrap(*t, v);
                self.state.set_local(n, v.clone());
                Ok(v)
            }
            Place::Lane(l) => self.assign(l, v),
        }
    }

    fn expr(&mut self, e: &CExpr) -> Result<Val, String> {
        self.tick()?;
        Ok(match e {
            CExpr::Num(v, t) => Val::Int(Int {
                e: Rc::new(LaneExpr::Const(*v)),
                t: *t,
                r: Some((*v, *v)),
            }),
            CExpr::Ident(n) => {
                if let Some(v) = self.state.local(n) {
                    return Ok(Val::Int(v.clone()));
                }
                let reg = *self
                    .names
                    .get(&**n)
                    .ok_or_else(|| format!("the name `{n}`"))?;
                let r = &self.state.regs[reg];
                if r.bytes == 4 {
                    // A scalar register: its 32 bits as `int32_t`.
                    return Ok(Val::Int(self.read(reg, 0, 32, true)?));
                }
                Val::Part(reg, 0, r.bytes)
            }
            CExpr::Member(base, f) => match (self.expr(base)?, &**f) {
                (Val::Part(reg, _, 256), "v") => Val::Halves(reg),
                (Val::Part(reg, off, bytes), f) => {
                    let (bits, signed) =
                        field(f).ok_or_else(|| format!("the register view `.{f}`"))?;
                    Val::View {
                        reg,
                        off,
                        bytes,
                        bits,
                        signed,
                    }
                }
                _ => return Err(format!("the member `.{f}`")),
            },
            CExpr::Index(base, i) => {
                let b = self.expr(base)?;
                let i = self.concrete(i, "a lane index")?;
                match b {
                    Val::Halves(reg) if (0..2).contains(&i) => Val::Part(reg, 128 * i as u32, 128),
                    Val::View {
                        reg,
                        off,
                        bytes,
                        bits,
                        signed,
                    } => {
                        let at = i * (bits / 8) as i128;
                        if at < 0 || at + (bits / 8) as i128 > bytes as i128 {
                            return Err(format!("lane {i} past the end of a register"));
                        }
                        Val::Lane {
                            reg,
                            off: off + at as u32,
                            bits,
                            signed,
                        }
                    }
                    _ => return Err("an index into something not a register view".into()),
                }
            }
            CExpr::Call(f, args) => Val::Int(self.call(f, args)?),
            CExpr::Sizeof => return Err("`sizeof`".into()),
            CExpr::Unary(op, a) => {
                let a = promote(&self.int(a)?);
                Val::Int(match op {
                    UnaryOp::Plus => a,
                    UnaryOp::Neg => {
                        let n = match a.konst() {
                            Some(c) => konst(-c),
                            None => Int {
                                e: Rc::new(LaneExpr::Neg(a.e.clone())),
                                t: a.t,
                                r: a.r.map(|(lo, hi)| (-hi, -lo)),
                            },
                        };
                        wrap(a.t, &n)
                    }
                    UnaryOp::Not => match a.konst() {
                        Some(c) => wrap(a.t, &konst(!c)),
                        None => Int {
                            e: Rc::new(LaneExpr::Not(elem(a.t.bits, a.t.signed), a.e.clone())),
                            t: a.t,
                            r: Some(c_range(a.t)),
                        },
                    },
                    UnaryOp::LogNot => {
                        let z = konst(0).with_type(a.t);
                        bin(BinOp::Eq, &a, &z, CType::INT)
                    }
                })
            }
            CExpr::Binary(op @ (BinaryOp::LogAnd | BinaryOp::LogOr), a, b) => {
                // C evaluates the right only where the left does not decide.
                let a = self.int(a)?;
                let decided = match a.konst() {
                    Some(0) => *op == BinaryOp::LogAnd,
                    Some(_) => *op == BinaryOp::LogOr,
                    None => false,
                };
                if decided {
                    return Ok(Val::Int(konst((*op == BinaryOp::LogOr) as i128)));
                }
                let b = self.pure_int(b)?;
                Val::Int(arith(*op, &a, &b)?)
            }
            CExpr::Binary(op, a, b) => {
                let a = self.int(a)?;
                let b = self.int(b)?;
                Val::Int(arith(*op, &a, &b)?)
            }
            CExpr::Assign(op, target, value) => {
                let p = self.place(target)?;
                let v = self.int(value)?;
                let v = match op {
                    None => v,
                    Some(op) => {
                        let old = self.get(&p)?;
                        arith(*op, &old, &v)?
                    }
                };
                Val::Int(self.set(&p, &v)?)
            }
            CExpr::Cond(c, a, b) => {
                let c = self.int(c)?;
                match c.konst() {
                    Some(k) => {
                        let (taken, other) = if k == 0 { (b, a) } else { (a, b) };
                        let v = promote(&self.int(taken)?);
                        // The result has the type of both arms (C's usual conversions); the
                        // other arm is typed without being run where it has no effects.
                        let t = match pure(other).then(|| self.typed_only(other)) {
                            Some(Some(o)) => common(v.t, o),
                            _ => v.t,
                        };
                        return Ok(Val::Int(wrap(t, &v)));
                    }
                    None => {
                        let a = promote(&self.pure_int(a)?);
                        let b = promote(&self.pure_int(b)?);
                        let t = common(a.t, b.t);
                        let (a, b) = (wrap(t, &a), wrap(t, &b));
                        if let Some(v) = idiom(&c, &a, &b) {
                            return Ok(Val::Int(wrap(t, &v)));
                        }
                        let r = match (a.r, b.r) {
                            (Some(p), Some(q)) => Some((p.0.min(q.0), p.1.max(q.1))),
                            _ => None,
                        };
                        Val::Int(Int {
                            e: select(&c.e, &a.e, &b.e),
                            t,
                            r,
                        })
                    }
                }
            }
            CExpr::Cast(t, a) => {
                let a = self.int(a)?;
                Val::Int(wrap(*t, &a))
            }
            CExpr::Step {
                target,
                delta,
                post,
            } => {
                let p = self.place(target)?;
                let old = self.get(&p)?;
                let new = arith(BinaryOp::Add, &old, &konst(*delta as i128))?;
                let new = self.set(&p, &new)?;
                Val::Int(if *post { old } else { new })
            }
            CExpr::StmtExpr(body) => {
                let Some((last, init)) = body.split_last() else {
                    return Err("an empty statement expression".into());
                };
                self.state.scopes.push(HashMap::new());
                let v = init
                    .iter()
                    .try_for_each(|s| self.stmt(s))
                    .and_then(|_| match last {
                        CStmt::Expr(e) => self.int(e),
                        _ => Err("a statement expression without a value".into()),
                    });
                self.state.scopes.pop();
                Val::Int(v?)
            }
            CExpr::Comma(a, b) => {
                self.expr(a)?;
                return self.expr(b);
            }
        })
    }

    /// `e`'s value where it is used on some lanes only: refused if it assigns anything.
    fn pure_int(&mut self, e: &CExpr) -> Result<Int, String> {
        let before = self.state.writes;
        let v = self.int(e)?;
        if self.state.writes != before {
            return Err("an assignment inside a condition that depends on the operands".into());
        }
        Ok(v)
    }

    /// The promoted C type of `e` (which has no effects), or `None` if it cannot be
    /// evaluated (C types an arm it never runs; this evaluator finds types by evaluating).
    fn typed_only(&mut self, e: &CExpr) -> Option<CType> {
        let steps = self.steps;
        let t = self.int(e).ok().map(|v| promote(&v).t);
        self.steps = steps;
        t
    }

    /// QEMU's helper functions the expanded macros call.
    fn call(&mut self, f: &str, args: &[CExpr]) -> Result<Int, String> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.int(a)?);
        }
        let n = |k: usize, this: &Self| -> Result<u32, String> {
            let _ = this;
            vals.get(k)
                .and_then(Int::konst)
                .filter(|v| (0..=64).contains(v))
                .map(|v| v as u32)
                .ok_or_else(|| format!("`{f}` with a field that depends on the operands"))
        };
        match (f, vals.len()) {
            ("extract64" | "extract32" | "sextract64" | "sextract32", 3) => {
                let (start, len) = (n(1, self)?, n(2, self)?);
                let wide = if f.ends_with("64") { 64 } else { 32 };
                if len == 0 || start + len > wide {
                    return Err(format!("`{f}` of an empty or out-of-range field"));
                }
                let u = extract(&vals[0], start, len);
                let t = CType {
                    bits: wide,
                    signed: f.starts_with('s'),
                };
                if f.starts_with('s') {
                    // The field's top bit is its sign.
                    let sign = 1i128 << (len - 1);
                    let flipped = bin(BinOp::Xor, &u, &konst(sign), t);
                    let v = bin(BinOp::Sub, &flipped, &konst(sign), t);
                    return Ok(Int {
                        r: Some((-sign, sign - 1)),
                        ..v
                    });
                }
                Ok(wrap(t, &u))
            }
            _ => Err(format!("the call `{f}`")),
        }
    }
}

/// `c ? a : b` with the condition in its plainest form: a 0/1 select or a comparison with
/// zero is the value it tests (the arms swapped for `x == 0`), so that lanes QEMU computes
/// through different spellings of one test compare equal.
fn select(c: &Rc<LaneExpr>, a: &Rc<LaneExpr>, b: &Rc<LaneExpr>) -> Rc<LaneExpr> {
    let (mut c, mut a, mut b) = (c.clone(), a.clone(), b.clone());
    for _ in 0..16 {
        let next = match &*c {
            LaneExpr::Select(c2, t, f)
                if matches!(**f, LaneExpr::Const(0))
                    && matches!(**t, LaneExpr::Const(v) if v != 0) =>
            {
                c2.clone()
            }
            LaneExpr::Bin(BinOp::Ne, x, z) if matches!(**z, LaneExpr::Const(0)) => x.clone(),
            LaneExpr::Bin(BinOp::Eq, x, z) if matches!(**z, LaneExpr::Const(0)) => {
                std::mem::swap(&mut a, &mut b);
                x.clone()
            }
            _ => break,
        };
        c = next;
    }
    if let (LaneExpr::Const(x), LaneExpr::Const(y)) = (&*a, &*b)
        && x == y
    {
        return a;
    }
    Rc::new(LaneExpr::Select(c, a, b))
}

/// Whether `a` and `b` are the same expression (QEMU's macros repeat their arguments'
/// text, so one value is often built several times).
fn same(a: &Rc<LaneExpr>, b: &Rc<LaneExpr>, budget: &mut usize) -> bool {
    if Rc::ptr_eq(a, b) {
        return true;
    }
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    use LaneExpr as L;
    match (&**a, &**b) {
        (
            L::Input {
                operand: o1,
                lane: l1,
                elem: e1,
            },
            L::Input {
                operand: o2,
                lane: l2,
                elem: e2,
            },
        ) => o1 == o2 && l1 == l2 && e1 == e2,
        (L::Const(x), L::Const(y)) | (L::Imm(x), L::Imm(y)) => x == y,
        (L::Bin(o1, a1, b1), L::Bin(o2, a2, b2)) => {
            o1 == o2 && same(a1, a2, budget) && same(b1, b2, budget)
        }
        (L::Neg(x), L::Neg(y)) | (L::Abs(x), L::Abs(y)) => same(x, y, budget),
        (L::Not(e1, x), L::Not(e2, y))
        | (L::Wrap(e1, x), L::Wrap(e2, y))
        | (L::Saturate(e1, x), L::Saturate(e2, y)) => e1 == e2 && same(x, y, budget),
        (L::Count(o1, e1, x), L::Count(o2, e2, y)) => o1 == o2 && e1 == e2 && same(x, y, budget),
        (L::Select(c1, x1, y1), L::Select(c2, x2, y2)) => {
            same(c1, c2, budget) && same(x1, x2, budget) && same(y1, y2, budget)
        }
        _ => false,
    }
}

/// `c ? a : b` where it is one of QEMU's idioms: a minimum or maximum (`fMIN`, `fMAX`),
/// or a saturation (`fVSATN`, `fVSATUN`: the value if its low `N` bits, extended, give it
/// back, else the bound on its side).
fn idiom(c: &Int, a: &Int, b: &Int) -> Option<Int> {
    let mut budget = 10_000;
    let LaneExpr::Bin(op, x, y) = &*c.e else {
        return None;
    };
    let r = |o, p: &Rc<LaneExpr>, q: &Rc<LaneExpr>| {
        let (rp, rq) = (quick_range(p, 8), quick_range(q, 8));
        Int {
            e: Rc::new(LaneExpr::Bin(o, p.clone(), q.clone())),
            t: a.t,
            r: range_of(o, rp, rq),
        }
    };
    match op {
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let small_first = matches!(op, BinOp::Lt | BinOp::Le);
            if same(x, &a.e, &mut budget) && same(y, &b.e, &mut budget) {
                return Some(if small_first {
                    r(BinOp::Min, x, y)
                } else {
                    r(BinOp::Max, x, y)
                });
            }
            if same(x, &b.e, &mut budget) && same(y, &a.e, &mut budget) {
                return Some(if small_first {
                    r(BinOp::Max, x, y)
                } else {
                    r(BinOp::Min, x, y)
                });
            }
            None
        }
        BinOp::Eq => {
            // `extended(v) == v ? v : (v < 0 ? lo : hi)`.
            let v = &a.e;
            // The value may have been converted to a 64-bit type for the comparison; no value
            // that wraps there equals an `n`-bit extension.
            let (y, stripped) = match &**y {
                LaneExpr::Wrap(e, inner) if e.bits() == 64 => (inner, true),
                _ => (y, false),
            };
            if !same(y, v, &mut budget) {
                return None;
            }
            let LaneExpr::Select(c2, lo, hi) = &*b.e else {
                return None;
            };
            let LaneExpr::Bin(BinOp::Lt, v2, z) = &**c2 else {
                return None;
            };
            if !matches!(**z, LaneExpr::Const(0)) || !same(v2, v, &mut budget) {
                return None;
            }
            let (LaneExpr::Const(lo), LaneExpr::Const(hi)) = (&**lo, &**hi) else {
                return None;
            };
            let (signed, n) = if *lo == 0 && *hi > 0 && (hi + 1).count_ones() == 1 {
                (false, (hi + 1).trailing_zeros())
            } else if *lo < 0 && *hi == -lo - 1 && (-lo).count_ones() == 1 {
                (true, (-lo).trailing_zeros() + 1)
            } else {
                return None;
            };
            // A 64-bit extension of a value wrapped to 64 bits could equal it.
            if !matches!(n, 8 | 16 | 32 | 64) || (stripped && n == 64) {
                return None;
            }
            // The extension QEMU compares with must be of those `n` bits.
            let whole = Int {
                e: v.clone(),
                t: a.t,
                r: a.r,
            };
            let u = extract(&whole, 0, n);
            let wide = CType { bits: 64, signed };
            let ext = if signed {
                let sign = 1i128 << (n - 1);
                let f = bin(BinOp::Xor, &u, &konst(sign), wide);
                bin(BinOp::Sub, &f, &konst(sign), wide)
            } else {
                u
            };
            if !same(x, &ext.e, &mut budget) {
                return None;
            }
            let e = elem(n, signed);
            let (l, h) = c_range(CType { bits: n, signed });
            Some(Int {
                e: Rc::new(LaneExpr::Saturate(e, v.clone())),
                t: a.t,
                r: Some((l, h)),
            })
        }
        _ => None,
    }
}

/// Whether `e` has no effects: no assignment, increment or statement expression.
fn pure(e: &CExpr) -> bool {
    match e {
        CExpr::Num(..) | CExpr::Ident(_) | CExpr::Sizeof => true,
        CExpr::Member(a, _) | CExpr::Unary(_, a) | CExpr::Cast(_, a) => pure(a),
        CExpr::Index(a, b) | CExpr::Binary(_, a, b) | CExpr::Comma(a, b) => pure(a) && pure(b),
        CExpr::Call(_, args) => args.iter().all(pure),
        CExpr::Cond(c, a, b) => pure(c) && pure(a) && pure(b),
        CExpr::Assign(..) | CExpr::Step { .. } | CExpr::StmtExpr(_) => false,
    }
}

/// An assignable place.
enum Place {
    Local(Rc<str>, CType),
    Lane(Val),
}

/// `bits` at byte `off` of register `reg`, composed from what was written there, the
/// operand's own lanes under the rest, and zero for a result not yet written.
fn read_in(st: &State, reg: usize, off: u32, bits: u32, signed: bool) -> Result<Int, String> {
    let r = &st.regs[reg];
    let bytes = bits / 8;
    if off + bytes > r.bytes {
        return Err("a read past the end of a register".into());
    }
    let t = CType { bits, signed };
    if let Some(p) = r.pieces.get(&off)
        && p.bits == bits
    {
        let v = Int {
            e: p.value.clone(),
            t: CType {
                bits,
                signed: p.signed,
            },
            r: p.r,
        };
        return Ok(if p.signed == signed {
            v
        } else {
            reinterpret(&v, bits, signed)
        });
    }
    // A piece holding the whole read.
    if let Some((o, p)) = r.pieces.range(..=off).next_back()
        && o + p.bits / 8 >= off + bytes
    {
        let whole = p.int();
        let u = extract(&whole, 8 * (off - o), bits);
        return Ok(wrap(t, &u));
    }
    let touched = r
        .pieces
        .range(..off + bytes)
        .any(|(o, p)| o + p.bits / 8 > off);
    let base = |o: u32, b: u32, s: bool| -> Int {
        match r.operand {
            Some(operand) => {
                let e = elem(b, s);
                let (lo, hi) = c_range(CType { bits: b, signed: s });
                Int {
                    e: Rc::new(LaneExpr::Input {
                        operand,
                        lane: o / (b / 8),
                        elem: e,
                    }),
                    t: CType { bits: b, signed: s },
                    r: Some((lo, hi)),
                }
            }
            None => konst(0).with_type(CType { bits: b, signed: s }),
        }
    };
    if !touched {
        return Ok(base(off, bits, signed));
    }
    // Compose byte by byte.
    let wide = CType {
        bits: 64,
        signed: false,
    };
    let mut acc = konst(0).with_type(wide);
    for k in 0..bytes {
        let at = off + k;
        let byte = match r.pieces.range(..=at).next_back() {
            Some((o, p)) if o + p.bits / 8 > at => {
                let whole = p.int();
                extract(&whole, 8 * (at - o), 8)
            }
            _ => base(at, 8, false),
        };
        let shifted = bin(BinOp::Shl, &byte, &konst(8 * k as i128), wide);
        acc = bin(BinOp::Or, &acc, &shifted, wide);
    }
    Ok(reinterpret(&acc, bits, signed))
}

/// C's binary operator `op` on `a` and `b`, with C's conversions.
fn arith(op: BinaryOp, a: &Int, b: &Int) -> Result<Int, String> {
    use BinaryOp as B;
    let (pa, pb) = (promote(a), promote(b));
    match op {
        B::Shl | B::Shr => {
            let t = pa.t;
            if let Some(s) = pb.konst()
                && !(0..t.bits as i128).contains(&s)
            {
                return Err(format!("a shift by {s} of a {}-bit value", t.bits));
            }
            // C gives no meaning to a shift by a negative count or by the width or more.
            // QEMU shifts by such counts on branches not taken (`shamt > 0 ? 1 << (shamt -
            // 1) : 0`), and once where it counts on the host: `vrotr` by 0 shifts a word left
            // by 32, which x86 (and so qemu-hexagon) reads modulo 32. Counts are taken
            // modulo the width, as the host does: the hardware check compares with qemu.
            let mut pb = pb;
            if pb.r.is_none_or(|(lo, hi)| lo < 0 || hi >= t.bits as i128) {
                pb = bin(BinOp::And, &pb, &konst(t.bits as i128 - 1), pb.t);
            }
            if op == B::Shl {
                let v = bin(BinOp::Shl, &pa, &pb, t);
                return Ok(wrap(t, &v));
            }
            return Ok(bin(BinOp::Shr, &pa, &pb, t));
        }
        B::LogAnd | B::LogOr => {
            let z = konst(0);
            let x = bin(BinOp::Ne, &pa, &z.clone().with_type(pa.t), CType::INT);
            let y = bin(BinOp::Ne, &pb, &z.with_type(pb.t), CType::INT);
            let o = if op == B::LogAnd {
                BinOp::And
            } else {
                BinOp::Or
            };
            return Ok(bin(o, &x, &y, CType::INT));
        }
        _ => {}
    }
    let t = common(pa.t, pb.t);
    let (x, y) = (wrap(t, &pa), wrap(t, &pb));
    let (o, cmp) = match op {
        B::Add => (BinOp::Add, false),
        B::Sub => (BinOp::Sub, false),
        B::Mul => (BinOp::Mul, false),
        B::And => (BinOp::And, false),
        B::Or => (BinOp::Or, false),
        B::Xor => (BinOp::Xor, false),
        B::Lt => (BinOp::Lt, true),
        B::Le => (BinOp::Le, true),
        B::Gt => (BinOp::Gt, true),
        B::Ge => (BinOp::Ge, true),
        B::Eq => (BinOp::Eq, true),
        B::Ne => (BinOp::Ne, true),
        B::Div | B::Rem => {
            let (Some(p), Some(q)) = (x.konst(), y.konst()) else {
                return Err("a division of values that depend on the operands".into());
            };
            if q == 0 {
                return Err("a division by zero".into());
            }
            // C truncates toward zero.
            let v = if op == B::Div { p / q } else { p % q };
            return Ok(wrap(t, &konst(v)));
        }
        B::Shl | B::Shr | B::LogAnd | B::LogOr => unreachable!("handled above"),
    };
    if cmp {
        return Ok(bin(o, &x, &y, CType::INT));
    }
    let v = bin(o, &x, &y, t);
    Ok(wrap(t, &v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs() -> Vec<RegDecl> {
        vec![
            RegDecl {
                name: "VuV".into(),
                bytes: 128,
                operand: Some(0),
                preset: Vec::new(),
            },
            RegDecl {
                name: "VdV".into(),
                bytes: 128,
                operand: None,
                preset: Vec::new(),
            },
        ]
    }

    fn run(src: &str) -> Eval {
        let mut ev = Eval::new(&regs());
        ev.run(&super::super::c::parse_stmt(src).unwrap()).unwrap();
        ev
    }

    #[test]
    fn half_words_read_by_shifting_and_masking_are_lanes() {
        let ev = run(
            "{ int i; for (i = 0; i < 32; i++) { VdV.w[i] = ((int16_t)((VuV.w[i] >> 16) & 0xffff)); } }",
        );
        let l = ev.lane("VdV", 3, Elem::I32).unwrap();
        assert_eq!(format!("{l:?}").matches("Input").count(), 1, "{l:?}");
        assert!(format!("{l:?}").contains("lane: 7,"), "{l:?}");
    }

    #[test]
    fn bytes_written_into_half_words_read_back_as_bytes() {
        let ev = run(
            "{ int i; for (i = 0; i < 64; i++) { VdV.h[i] = (VdV.h[i] & ~(0x0ffLL << 8)) | (((uint64_t)(VuV.ub[2*i]) & 0x0ffLL) << 8); VdV.h[i] = (VdV.h[i] & ~(0x0ffLL << 0)) | (((uint64_t)(VuV.ub[2*i+1]) & 0x0ffLL) << 0); } }",
        );
        let l = ev.lane("VdV", 1, Elem::U8).unwrap();
        assert!(matches!(*l, LaneExpr::Input { lane: 0, .. }), "{l:?}");
        let l = ev.lane("VdV", 0, Elem::U8).unwrap();
        assert!(matches!(*l, LaneExpr::Input { lane: 1, .. }), "{l:?}");
    }

    /// `e`'s value when every input lane holds `input`.
    fn value(e: &LaneExpr, input: i128) -> i128 {
        use LaneExpr as L;
        match e {
            L::Input { elem: el, .. } => {
                let t = CType {
                    bits: el.bits(),
                    signed: el.is_signed(),
                };
                wrap(t, &konst(input)).konst().unwrap()
            }
            L::Const(c) | L::Imm(c) => *c,
            L::Bin(op, a, b) => fold(*op, value(a, input), value(b, input)).unwrap(),
            L::Neg(a) => -value(a, input),
            L::Abs(a) => value(a, input).abs(),
            L::Not(t, a) => wrap(
                CType {
                    bits: t.bits(),
                    signed: t.is_signed(),
                },
                &konst(!value(a, input)),
            )
            .konst()
            .unwrap(),
            L::Select(c, a, b) => {
                if value(c, input) != 0 {
                    value(a, input)
                } else {
                    value(b, input)
                }
            }
            L::Wrap(t, a) => wrap(
                CType {
                    bits: t.bits(),
                    signed: t.is_signed(),
                },
                &konst(value(a, input)),
            )
            .konst()
            .unwrap(),
            L::Saturate(t, a) => {
                let (lo, hi) = c_range(CType {
                    bits: t.bits(),
                    signed: t.is_signed(),
                });
                value(a, input).clamp(lo, hi)
            }
            L::Count(..) => unreachable!("the HVX evaluator makes no bit counts"),
        }
    }

    fn lane_value(src: &str, lane: u32, e: Elem, input: i128) -> i128 {
        value(&run(src).lane("VdV", lane, e).unwrap(), input)
    }

    #[test]
    fn c_conversions_are_followed() {
        // An unsigned byte promoted to int, minus one: -1 for zero, not 255.
        let src = "{ VdV.w[0] = VuV.ub[0] - 1; VdV.uw[1] = (uint8_t)(VuV.ub[0] - 1); }";
        assert_eq!(lane_value(src, 0, Elem::I32, 0), -1);
        assert_eq!(lane_value(src, 1, Elem::U32, 0), 255);
        assert_eq!(lane_value(src, 1, Elem::U32, 5), 4);
        // A constant `?:` has the type of both arms: `-1` meets `0u` as unsigned.
        let src = "{ VdV.ud[0] = (int64_t)(1 ? -1 : 0u); }";
        assert_eq!(lane_value(src, 0, Elem::U64, 0), 4294967295);
    }

    #[test]
    fn inner_declarations_shadow_and_outer_assignments_stay() {
        let src = "{ int t = 1; { int t = 2; t = 5; } VdV.w[0] = t; { t = 3; } VdV.w[1] = t; }";
        assert_eq!(lane_value(src, 0, Elem::I32, 0), 1);
        assert_eq!(lane_value(src, 1, Elem::I32, 0), 3);
    }

    #[test]
    fn branches_that_cut_a_register_differently_merge_byte_by_byte() {
        let src = "{ if (VuV.ub[0]) { VdV.w[0] = 0x01020304; } else { VdV.b[1] = 5; } }";
        assert_eq!(lane_value(src, 2, Elem::U8, 1), 2);
        assert_eq!(lane_value(src, 1, Elem::U8, 1), 3);
        assert_eq!(lane_value(src, 2, Elem::U8, 0), 0);
        assert_eq!(lane_value(src, 1, Elem::U8, 0), 5);
    }

    #[test]
    fn only_what_c_evaluates_is_evaluated() {
        // The right of `&&` is not run where the left decides (the shift would be refused).
        assert_eq!(
            lane_value("{ VdV.w[0] = 0 && (1 << 40); }", 0, Elem::I32, 0),
            0
        );
        assert_eq!(
            lane_value("{ VdV.w[0] = 1 || (1 << 40); }", 0, Elem::I32, 0),
            1
        );
        // An assignment in an arm chosen lane by lane is refused, not run on every lane.
        let mut ev = Eval::new(&regs());
        let body =
            super::super::c::parse_stmt("{ int x = 0; VdV.w[0] = VuV.ub[0] ? (x = 1) : (x = 2); }")
                .unwrap();
        assert!(ev.run(&body).unwrap_err().contains("assignment"));
    }
}
